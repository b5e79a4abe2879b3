"""A small SVG plotter for the report: axes with readable ticks, bands, lines, markers, bars and a legend.

Every figure is self-contained SVG text (well-formed XML; no scripts, fonts or links to fetch), sized by
its ``viewBox`` so that it scales to the printable width. The legend sits below the plot, so it never
hides data, and names only what is drawn: every drawn series carries ``data-series`` and a class
saying what it is (``band``, ``line``, ``marker``, ``bar``, ``dot``, ``tick``), and every legend entry
the same ``data-series`` and the kinds it stands for (``data-kinds``), which lets tests check one
against the other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

from ..core.util import fmt

__all__ = [
    "FONT",
    "WIDTH",
    "BarChart",
    "LegendEntry",
    "Scale",
    "XYPlot",
    "count_ticks",
    "duration_ticks",
    "linear_ticks",
    "text_width",
]

#: The fonts the figures ask for (DejaVu Sans is wide; the layout assumes it, narrower fonts fit too).
FONT = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"
#: Width of every figure in SVG units; the page scales it to the printable width (about 180 mm).
WIDTH = 720
TITLE_SIZE = 15
TICK_SIZE = 11
LABEL_SIZE = 12
LEGEND_SIZE = 11
NOTE_SIZE = 10.5
AXIS_COLOR = "#000"
GRID_COLOR = "#d9d9d9"
#: Average advance of a character in DejaVu Sans, in ems (a little generous: layouts never clip).
CHAR_EM = 0.62

Ticks = list[tuple[float, str]]


def text_width(text: str, size: float) -> float:
    """An upper estimate of the width of ``text`` at font ``size`` (SVG units)."""
    return len(text) * size * CHAR_EM


def esc(text: str) -> str:
    """Text for SVG (XML) content or attributes."""
    return escape(text, quote=True)


def _n(v: float) -> str:
    """A coordinate: one decimal, no '-0.0'."""
    s = f"{v:.1f}"
    return "0.0" if s == "-0.0" else s


# -- ticks -------------------------------------------------------------------------------------------


def _short_count(v: float) -> str:
    """1k, 16k, 1M, 0.5: a count for a tick label."""
    return fmt.compact(v).replace(" ", "")


def count_ticks(lo: float, hi: float) -> tuple[Ticks, list[float]]:
    """Labelled and minor ticks for a log axis of counts from ``lo`` to ``hi`` (both > 0): every decade
    (1k, 10k, 100k, 1M), with 2 and 5 times each labelled too when fewer than three decades show."""
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    inside = lambda v: lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)
    majors = [10.0**k for k in range(k0, k1 + 1) if inside(10.0**k)]
    if len(majors) < 3:
        majors = sorted(m * 10.0**k for k in range(k0, k1 + 1) for m in (1, 2, 5) if inside(m * 10.0**k))
    if len(majors) < 3:
        majors = sorted(m * 10.0**k for k in range(k0, k1 + 1) for m in range(1, 10) if inside(m * 10.0**k))
    if len(majors) > 8:
        step = math.ceil(len(majors) / 8)
        majors = majors[::step]
    decades = k1 - k0
    mults = range(2, 10) if decades <= 6 else ()
    minors = [m * 10.0**k for k in range(k0, k1 + 1) for m in mults if inside(m * 10.0**k)]
    minors = [v for v in minors if all(abs(math.log10(v / M)) > 1e-6 for M in majors)]
    return [(v, _short_count(v)) for v in majors], minors


def duration_ticks(lo: float, hi: float) -> tuple[Ticks, list[float]]:
    """Ticks for a log axis of durations in minutes: 1 s, 10 s, 1 min, 10 min, 1 h, 10 h, 1 d, ..."""
    inside = lambda v: lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)
    majors = [m for m in fmt.DURATION_TICKS if inside(m)]
    if len(majors) < 2:  # a narrow span: plain decades and their halves, labelled as durations
        k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        majors = sorted(m * 10.0**k for k in range(k0, k1 + 1) for m in (1, 2, 5) if inside(m * 10.0**k))
    minors = [m * k for m in (*fmt.DURATION_TICKS, 1e-3, 1e-2, 1e-1) for k in (2, 5) if inside(m * k)]
    minors = [v for v in minors if all(abs(math.log10(v / M)) > 1e-6 for M in majors)]
    return [(v, fmt.short_duration(v)) for v in majors], sorted(set(minors))


def linear_ticks(lo: float, hi: float, target: int = 6, suffix: str = "", money: bool = False) -> Ticks:
    """Round ticks from ``lo`` to ``hi``: steps of 1, 2, 2.5 or 5 times a power of ten, about ``target``."""
    span = hi - lo
    if not (span > 0 and math.isfinite(span)):
        return [(lo, f"{lo:g}{suffix}")]
    # The smallest step of 1, 2, 2.5 or 5 times a power of ten that makes at most target + 1 ticks.
    power0 = 10.0 ** math.floor(math.log10(span / max(target - 1, 1)))
    steps = sorted(m * power0 * f for f in (0.1, 1.0, 10.0) for m in (1, 2, 2.5, 5))
    count = lambda st: math.floor(hi / st + 1e-9) - math.ceil(lo / st - 1e-9) + 1
    step = next((st for st in steps if count(st) <= target + 1), steps[-1])
    power = 10.0 ** math.floor(math.log10(step) + 1e-9)
    first = math.ceil(lo / step - 1e-9) * step
    digits = max(0, -math.floor(math.log10(step) + 1e-9) + (1 if abs(step / power - 2.5) < 1e-9 else 0))
    values = []
    v = first
    while v <= hi + step * 1e-9:
        values.append(0.0 if abs(v) < step * 1e-9 else v)
        v = first + len(values) * step
    if money:
        return [(v, f"{'-' if v < 0 else ''}${_short_count(abs(v))}") for v in values]
    if max(abs(lo), abs(hi)) >= 1e4 and digits == 0:
        return [(v, _short_count(v) + suffix) for v in values]
    return [(v, f"{v:,.{digits}f}{suffix}") for v in values]


# -- scales ---------------------------------------------------------------------------------------------


class Scale:
    """Data values to SVG units along one axis, linear or log10."""

    def __init__(self, lo: float, hi: float, start: float, end: float, log: bool = False) -> None:
        if log and not (lo > 0 and hi > 0):
            raise ValueError("a log axis needs positive bounds")
        self.lo, self.hi, self.start, self.end, self.log = lo, hi, start, end, log
        self._d0 = math.log10(lo) if log else lo
        self._d1 = math.log10(hi) if log else hi
        if self._d1 == self._d0:
            self._d1 = self._d0 + 1.0

    def contains(self, v: float) -> bool:
        return math.isfinite(v) and (not self.log or v > 0) and self.lo * (1 - 1e-9) <= v <= self.hi * (1 + 1e-9)

    def __call__(self, v: float) -> float:
        """The position of ``v``, clamped to the axis (a value below a log axis's floor sits on it)."""
        if self.log:
            d = math.log10(v) if v > 0 else -math.inf
        else:
            d = v
        f = (d - self._d0) / (self._d1 - self._d0)
        f = min(max(f, 0.0), 1.0)
        return self.start + f * (self.end - self.start)


# -- legend ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LegendEntry:
    """One legend entry: what it stands for (``series``, matched by the drawn items' ``data-series``),
    the kinds of item it stands for, its label and how its sample is drawn."""

    series: str
    kinds: tuple[str, ...]
    label: str
    color: str = "#000"
    dash: str | None = None
    marker: str = "circle"
    fill: str | None = None


def _marker(shape: str, x: float, y: float, size: float, color: str, attrs: str) -> str:
    r = size / 2
    stroke = 'stroke="#fff" stroke-width="1.2"'
    if shape == "diamond":
        pts = f"{_n(x)},{_n(y - r * 1.3)} {_n(x + r * 1.3)},{_n(y)} {_n(x)},{_n(y + r * 1.3)} {_n(x - r * 1.3)},{_n(y)}"
        return f'<polygon {attrs} points="{pts}" fill="{color}" {stroke}/>'
    if shape == "square":
        return (
            f'<rect {attrs} x="{_n(x - r)}" y="{_n(y - r)}" width="{_n(2 * r)}" height="{_n(2 * r)}" '
            f'fill="{color}" {stroke}/>'
        )
    if shape == "triangle":
        pts = f"{_n(x)},{_n(y - r * 1.3)} {_n(x + r * 1.2)},{_n(y + r)} {_n(x - r * 1.2)},{_n(y + r)}"
        return f'<polygon {attrs} points="{pts}" fill="{color}" {stroke}/>'
    return f'<circle {attrs} cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}" fill="{color}" {stroke}/>'


def _seg(x1: float, y1: float, x2: float, y2: float, attrs: str = f'stroke="{AXIS_COLOR}"') -> str:
    """A straight line segment."""
    return f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" {attrs}/>'


def _dash_attr(dash: str | None) -> str:
    return f' stroke-dasharray="{dash}"' if dash else ""


def _sample(e: LegendEntry, x: float, y: float) -> str:
    """The legend sample of ``e``: 28 units wide, centred on ``y``."""
    parts = []
    if "band" in e.kinds:
        parts.append(
            f'<rect x="{_n(x)}" y="{_n(y - 6)}" width="28" height="12" fill="{e.fill or e.color}" fill-opacity="0.25"/>'
        )
    if "bar" in e.kinds:
        parts.append(f'<rect x="{_n(x + 2)}" y="{_n(y - 6)}" width="24" height="12" fill="{e.fill or e.color}"/>')
    if "line" in e.kinds:
        parts.append(
            f'<line x1="{_n(x)}" y1="{_n(y)}" x2="{_n(x + 28)}" y2="{_n(y)}" stroke="{e.color}" '
            f'stroke-width="2"{_dash_attr(e.dash)}/>'
        )
    if "tick" in e.kinds or "rule" in e.kinds:
        parts.append(
            f'<line x1="{_n(x + 14)}" y1="{_n(y - 7)}" x2="{_n(x + 14)}" y2="{_n(y + 7)}" stroke="{e.color}" '
            'stroke-width="2"/>'
        )
    if "dot" in e.kinds:
        parts.append(
            _seg(x + 4, y, x + 24, y, f'stroke="{e.color}" stroke-width="1.2"')
            + _seg(x + 4, y - 4, x + 4, y + 4, f'stroke="{e.color}"')
            + _seg(x + 24, y - 4, x + 24, y + 4, f'stroke="{e.color}"')
            + f'<circle cx="{_n(x + 14)}" cy="{_n(y)}" r="3.2" fill="{e.color}"/>'
        )
    if "marker" in e.kinds:
        parts.append(_marker(e.marker, x + 14, y, 10, e.color, ""))
    return "".join(parts)


def _legend(entries: Sequence[LegendEntry], left: float, top: float, width: float) -> tuple[str, float]:
    """The legend laid out in rows from ``top`` within ``width``; returns its SVG and its height."""
    if not entries:
        return "", 0.0
    row_h, gap = 18.0, 18.0
    x, y = left, top + row_h / 2
    out = ['<g class="legend">']
    for e in entries:
        w = 28 + 6 + text_width(e.label, LEGEND_SIZE)
        if x > left and x + w > left + width:
            x, y = left, y + row_h
        out.append(
            f'<g class="legend-entry" data-series="{esc(e.series)}" data-kinds="{" ".join(e.kinds)}">'
            f"{_sample(e, x, y)}"
            f'<text x="{_n(x + 34)}" y="{_n(y + 4)}" font-size="{LEGEND_SIZE}">{esc(e.label)}</text></g>'
        )
        x += w + gap
    out.append("</g>")
    return "".join(out), y + row_h / 2 - top


def _svg(key: str, title: str, desc: str, height: float, body: Sequence[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="chart-{key}" viewBox="0 0 {WIDTH} {_n(height)}" '
        f'width="{WIDTH}" height="{_n(height)}" role="img" font-family="{FONT}" fill="#000">'
        f"<title>{esc(title)}</title><desc>{esc(desc)}</desc>"
        f'<rect class="background" x="0" y="0" width="{WIDTH}" height="{_n(height)}" fill="#fff"/>'
        f'<text class="chart-title" x="{WIDTH / 2:.1f}" y="20" font-size="{TITLE_SIZE}" font-weight="bold" '
        f'text-anchor="middle">{esc(title)}</text>' + "".join(body) + "</svg>"
    )


def _halo(attrs: str, text: str) -> str:
    """Text with a white outline, legible over lines and bands."""
    return (
        f'<text {attrs} stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke">{esc(text)}</text>'
    )


# -- x-y plots ------------------------------------------------------------------------------------------


class XYPlot:
    """A plot of curves: x and y axes (linear or log), bands, lines, markers, vertical lines with labels,
    guides labelled above the plot, and a legend below it."""

    def __init__(
        self,
        key: str,
        title: str,
        desc: str,
        x: tuple[float, float],
        y: tuple[float, float],
        x_ticks: tuple[Ticks, list[float]],
        y_ticks: tuple[Ticks, list[float]],
        x_title: str,
        y_title: str,
        *,
        x_log: bool = False,
        y_log: bool = False,
        plot_height: float = 250.0,
        guides: bool = False,
        grid: bool = True,
    ) -> None:
        self.key, self.title, self.desc = key, title, desc
        y_label_w = max((text_width(lbl, TICK_SIZE) for _, lbl in y_ticks[0]), default=20.0)
        x_labels = [lbl for _, lbl in x_ticks[0]]
        self.left = max(56.0, y_label_w + 36.0)
        self.right = WIDTH - max(22.0, text_width(x_labels[-1], TICK_SIZE) / 2 + 6 if x_labels else 22.0)
        self.top = 34.0 + (18.0 if guides else 0.0)
        self.bottom = self.top + plot_height
        self.xs = Scale(*x, self.left, self.right, x_log)
        self.ys = Scale(*y, self.bottom, self.top, y_log)
        self.x_ticks, self.y_ticks = x_ticks, y_ticks
        self.x_title, self.y_title = x_title, y_title
        self.grid = grid
        self.under: list[str] = []  # bands and annotations, drawn first
        self.items: list[str] = []
        self.over: list[str] = []  # labels, drawn last
        self.legend: list[LegendEntry] = []
        # What labels must keep clear of: the data drawn (pixel x, lowest and highest pixel y at each x)
        # and the boxes of markers and labels placed so far.
        self._shapes: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._boxes: list[tuple[float, float, float, float]] = []
        # Annotation labels to place once everything is drawn: (candidate positions, text, colour).
        self._labels: list[tuple[list[tuple[float, float, str]], str, str]] = []

    # data
    def band(self, series: str, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, color: str) -> bool:
        """A filled band between ``lo`` and ``hi`` (a value off a log axis sits on its floor); whether
        anything was drawn."""
        keep = [
            i
            for i, a in enumerate(x)
            if self.xs.contains(float(a)) and math.isfinite(float(lo[i])) and math.isfinite(float(hi[i]))
        ]
        if len(keep) < 2:
            return False
        px = [self.xs(float(x[i])) for i in keep]
        top = [self.ys(float(hi[i])) for i in keep]
        bottom = [self.ys(float(lo[i])) for i in keep]
        pts = [*zip(px, top), *reversed(list(zip(px, bottom)))]
        d = "M" + " L".join(f"{_n(a)} {_n(b)}" for a, b in pts) + " Z"
        self.under.append(
            f'<path class="band" data-series="{esc(series)}" d="{d}" fill="{color}" fill-opacity="0.25" stroke="none"/>'
        )
        self._shapes.append((np.array(px), np.minimum(top, bottom), np.maximum(top, bottom)))
        return True

    def line(
        self, series: str, x: np.ndarray, y: np.ndarray, color: str, width: float = 2.0, dash: str | None = None
    ) -> bool:
        """A curve; points off the axes (a zero count on a log axis) leave a gap. Whether anything was drawn."""
        runs: list[list[tuple[float, float]]] = [[]]
        for a, b in zip(x, y):
            ok = self.xs.contains(float(a)) and math.isfinite(b) and (not self.ys.log or b > 0)
            if ok:
                runs[-1].append((self.xs(float(a)), self.ys(float(b))))
            elif runs[-1]:
                runs.append([])
        runs = [r for r in runs if len(r) > 1]  # a lone point draws nothing
        if not runs:
            return False
        d = " ".join("M" + " L".join(f"{_n(a)} {_n(b)}" for a, b in r) for r in runs)
        self.items.append(
            f'<path class="line" data-series="{esc(series)}" d="{d}" fill="none" stroke="{color}" '
            f'stroke-width="{width:g}" stroke-linejoin="round"{_dash_attr(dash)}/>'
        )
        for r in runs:
            px, py = np.array([a for a, _ in r]), np.array([b for _, b in r])
            self._shapes.append((px, py - width, py + width))
        return True

    def marker(self, series: str, x: float, y: float, color: str, shape: str = "circle") -> bool:
        """A marker at one point; False (and nothing drawn) when the point has no place on the axes."""
        if not (self.xs.contains(x) and math.isfinite(y) and (not self.ys.log or y > 0)):
            return False
        attrs = f'class="marker" data-series="{esc(series)}"'
        px, py = self.xs(x), self.ys(y)
        self.over.append(_marker(shape, px, py, 11, color, attrs))
        self._boxes.append((px - 7, py - 7, px + 7, py + 7))
        return True

    # -- label placement: beside what it labels, clear of the data and of other labels
    def _free(self, box: tuple[float, float, float, float]) -> bool:
        x0, y0, x1, y1 = box
        if x0 < self.left + 2 or x1 > self.right - 2 or y0 < self.top + 2 or y1 > self.bottom - 2:
            return False
        for bx0, by0, bx1, by1 in self._boxes:
            if x0 < bx1 and bx0 < x1 and y0 < by1 and by0 < y1:
                return False
        for px, lo, hi in self._shapes:
            if px[-1] < x0 or px[0] > x1:
                continue
            inside = (px >= x0) & (px <= x1)
            ys_lo = list(lo[inside]) + [float(np.interp(v, px, lo)) for v in (x0, x1) if px[0] <= v <= px[-1]]
            ys_hi = list(hi[inside]) + [float(np.interp(v, px, hi)) for v in (x0, x1) if px[0] <= v <= px[-1]]
            if ys_lo and min(ys_lo) - 2 < y1 and y0 < max(ys_hi) + 2:
                return False
        return True

    def _place(self, candidates: Sequence[tuple[float, float, str]], w: float) -> tuple[float, float, str]:
        """The first candidate (x, baseline y, anchor) whose text box is free; else the first."""
        for tx, ty, anchor in candidates:
            x0 = tx if anchor == "start" else tx - w
            box = (x0, ty - NOTE_SIZE * 0.85, x0 + w, ty + NOTE_SIZE * 0.3)
            if self._free(box):
                self._boxes.append(box)
                return tx, ty, anchor
        tx, ty, anchor = candidates[0]
        x0 = tx if anchor == "start" else tx - w
        self._boxes.append((x0, ty - NOTE_SIZE * 0.85, x0 + w, ty + NOTE_SIZE * 0.3))
        return tx, ty, anchor

    # annotations (not series: labelled where they are drawn)
    def vline(
        self, x: float, label: str, color: str, height: float, dash: str | None = None, width: float = 1.5
    ) -> None:
        """A vertical line with ``label`` beside it, near ``height`` (0 bottom, 1 top) where the data and
        other labels leave room, to the right of the line or else to its left."""
        px = self.xs(x)
        self.under.append(
            f'<line class="annotation" x1="{_n(px)}" y1="{_n(self.top)}" x2="{_n(px)}" y2="{_n(self.bottom)}" '
            f'stroke="{color}" stroke-width="{width:g}"{_dash_attr(dash)}/>'
        )
        self._shapes.append(
            (np.array([px - 1.5, px + 1.5]), np.array([self.top, self.top]), np.array([self.bottom, self.bottom]))
        )
        span = self.bottom - self.top
        heights = [height, *sorted(np.linspace(0.94, 0.06, 23), key=lambda h: abs(h - height))]
        # Beside its own line, the right side first; placed once every line and curve is drawn.
        cands = [
            (px + side * 5, self.bottom - h * span + 4, "start" if side > 0 else "end")
            for side in (1, -1)
            for h in heights
        ]
        self._labels.append((cands, label, color))

    def guide(self, x: float, label: str) -> None:
        """A dotted vertical guide, labelled above the plot."""
        if not self.xs.contains(x):
            return
        px = self.xs(x)
        self.under.append(
            f'<line class="guide" x1="{_n(px)}" y1="{_n(self.top)}" x2="{_n(px)}" y2="{_n(self.bottom)}" '
            'stroke="#555" stroke-width="1" stroke-dasharray="2 3"/>'
        )
        w = text_width(label, NOTE_SIZE)
        tx = min(max(px, w / 2 + 2), WIDTH - w / 2 - 2)
        self.over.append(
            f'<text class="guide-label" x="{_n(tx)}" y="{_n(self.top - 6)}" font-size="{NOTE_SIZE}" '
            f'text-anchor="middle" fill="#333">{esc(label)}</text>'
        )

    def hline(self, y: float, label: str, color: str, dash: str | None = "6 4") -> None:
        """A horizontal reference line, labelled at one end, below or above it, where the data leave room."""
        if not self.ys.contains(y):
            return
        py = self.ys(y)
        self.under.append(
            f'<line class="annotation" x1="{_n(self.left)}" y1="{_n(py)}" x2="{_n(self.right)}" y2="{_n(py)}" '
            f'stroke="{color}" stroke-width="1.2"{_dash_attr(dash)}/>'
        )
        cands = [
            (self.left + 6, py + 14, "start"),
            (self.left + 6, py - 5, "start"),
            (self.right - 6, py + 14, "end"),
            (self.right - 6, py - 5, "end"),
        ]
        self._labels.append((cands, label, color))

    def _place_labels(self) -> list[str]:
        """The labels of the annotations, each where it is free of the data, the lines and the labels
        placed before it."""
        out = []
        for cands, label, color in self._labels:
            tx, ty, anchor = self._place(cands, text_width(label, NOTE_SIZE))
            out.append(
                _halo(
                    f'class="annotation-label" x="{_n(tx)}" y="{_n(ty)}" font-size="{NOTE_SIZE}" '
                    f'text-anchor="{anchor}" fill="{color}"',
                    label,
                )
            )
        return out

    def _axes(self) -> tuple[list[str], list[str]]:
        """The ticks and grid (drawn under the data), and the frame and axis titles (over it)."""
        out: list[str] = []
        for v in self.y_ticks[1]:
            py = self.ys(v)
            out.append(_seg(self.left - 3, py, self.left, py))
        for v, label in self.y_ticks[0]:
            py = self.ys(v)
            if self.grid:
                out.append(
                    f'<line class="grid" x1="{_n(self.left)}" y1="{_n(py)}" x2="{_n(self.right)}" y2="{_n(py)}" '
                    f'stroke="{GRID_COLOR}" stroke-width="0.8"/>'
                )
            out.append(
                _seg(self.left - 5, py, self.left, py)
                + f'<text class="tick-label" x="{_n(self.left - 8)}" y="{_n(py + 4)}" font-size="{TICK_SIZE}" '
                f'text-anchor="end">{esc(label)}</text>'
            )
        for v in self.x_ticks[1]:
            px = self.xs(v)
            out.append(
                f'<line x1="{_n(px)}" y1="{_n(self.bottom)}" x2="{_n(px)}" y2="{_n(self.bottom + 3)}" '
                f'stroke="{AXIS_COLOR}"/>'
            )
        for v, label in self.x_ticks[0]:
            px = self.xs(v)
            out.append(
                f'<line x1="{_n(px)}" y1="{_n(self.bottom)}" x2="{_n(px)}" y2="{_n(self.bottom + 5)}" '
                f'stroke="{AXIS_COLOR}"/>'
                f'<text class="tick-label" x="{_n(px)}" y="{_n(self.bottom + 18)}" font-size="{TICK_SIZE}" '
                f'text-anchor="middle">{esc(label)}</text>'
            )
        top: list[str] = []
        top.append(
            f'<rect class="frame" x="{_n(self.left)}" y="{_n(self.top)}" width="{_n(self.right - self.left)}" '
            f'height="{_n(self.bottom - self.top)}" fill="none" stroke="{AXIS_COLOR}" stroke-width="1"/>'
        )
        mid_x = (self.left + self.right) / 2
        top.append(
            f'<text class="axis-title" x="{_n(mid_x)}" y="{_n(self.bottom + 36)}" font-size="{LABEL_SIZE}" '
            f'text-anchor="middle">{esc(self.x_title)}</text>'
        )
        mid_y = (self.top + self.bottom) / 2
        top.append(
            f'<text class="axis-title" x="14" y="{_n(mid_y)}" font-size="{LABEL_SIZE}" text-anchor="middle" '
            f'transform="rotate(-90 14 {_n(mid_y)})">{esc(self.y_title)}</text>'
        )
        return out, top

    def to_svg(self) -> str:
        legend, legend_h = _legend(self.legend, self.left, self.bottom + 48, WIDTH - self.left - 10)
        height = self.bottom + 48 + legend_h + 8
        below, above = self._axes()
        body = [*below, *self.under, *self.items, *above, *self.over, *self._place_labels(), legend]
        return _svg(self.key, self.title, self.desc, height, body)


# -- bar charts -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    value_text: str = ""


class BarChart:
    """Horizontal bars, one row per named item (labels at the left, optional values at the right), over a
    linear x axis; dots with whiskers and ticks can sit on the bars; a legend below."""

    ROW = 21.0

    def __init__(
        self,
        key: str,
        title: str,
        desc: str,
        rows: Sequence[Row],
        x: tuple[float, float],
        x_title: str,
        *,
        money: bool = False,
        suffix: str = "",
    ) -> None:
        self.key, self.title, self.desc, self.rows = key, title, desc, list(rows)
        self.x_ticks = linear_ticks(*x, suffix=suffix, money=money)
        lo = min(x[0], self.x_ticks[0][0])
        hi = max(x[1], self.x_ticks[-1][0])
        label_w = max((text_width(r.label, TICK_SIZE) for r in rows), default=0.0)
        value_w = max((text_width(r.value_text, TICK_SIZE) for r in rows), default=0.0)
        self.left = max(label_w + 16.0, 60.0)
        tick_room = text_width(self.x_ticks[-1][1], TICK_SIZE) / 2 + 6
        self.right = WIDTH - max(value_w + 14.0 if value_w else 0.0, tick_room, 16.0)
        self.top = 34.0
        self.bottom = self.top + self.ROW * len(rows) + 8
        self.xs = Scale(lo, hi, self.left, self.right)
        self.x_title = x_title
        self.items: list[str] = []
        self.legend: list[LegendEntry] = []
        self.notes: list[str] = []

    def y(self, i: int) -> float:
        return self.top + 4 + self.ROW * (i + 0.5)

    def bar(self, series: str, i: int, value: float, color: str, cut: bool = False) -> None:
        """A bar from 0 to ``value`` in row ``i``; ``cut`` draws a break near its end (it runs off the scale)."""
        x0, x1 = self.xs(0.0), self.xs(value)
        if value != 0 and abs(x1 - x0) < 1.0:  # a tiny change still shows which way it goes
            x1 = x0 + (1.0 if value > 0 else -1.0)
        a, b = min(x0, x1), max(x0, x1)
        h = self.ROW * 0.62
        self.items.append(
            f'<rect class="bar" data-series="{esc(series)}" x="{_n(a)}" y="{_n(self.y(i) - h / 2)}" '
            f'width="{_n(max(b - a, 0.0))}" height="{_n(h)}" fill="{color}"/>'
        )
        if cut:
            bx, y0, y1 = b - 14, self.y(i) + h / 2 + 2, self.y(i) - h / 2 - 2
            self.items.append(
                f'<path class="break" d="M{_n(bx - 3)} {_n(y0)} L{_n(bx + 3)} {_n(y1)} M{_n(bx + 2)} {_n(y0)} '
                f'L{_n(bx + 8)} {_n(y1)}" stroke="#fff" stroke-width="2.5" fill="none"/>'
            )

    def span(self, series: str, i: int, a: float, b: float, color: str) -> None:
        """A bar from ``a`` to ``b`` in row ``i`` (a tornado's half: from the scenario's value to one end's)."""
        x0, x1 = self.xs(a), self.xs(b)
        if b != a and abs(x1 - x0) < 1.0:  # a tiny difference still shows which way it goes
            x1 = x0 + (1.0 if x1 > x0 else -1.0)
        lo, hi = min(x0, x1), max(x0, x1)
        h = self.ROW * 0.62
        self.items.append(
            f'<rect class="bar" data-series="{esc(series)}" x="{_n(lo)}" y="{_n(self.y(i) - h / 2)}" '
            f'width="{_n(max(hi - lo, 0.0))}" height="{_n(h)}" fill="{color}"/>'
        )

    def rule(self, series: str, value: float, color: str = "#000") -> None:
        """A vertical line at ``value`` across every row."""
        x = self.xs(value)
        self.items.append(
            f'<line class="rule" data-series="{esc(series)}" x1="{_n(x)}" y1="{_n(self.top)}" x2="{_n(x)}" '
            f'y2="{_n(self.bottom)}" stroke="{color}" stroke-width="1.5"/>'
        )

    def dot(self, series: str, i: int, mean: float, lo: float, hi: float, color: str = "#000") -> None:
        """A dot at ``mean`` with whiskers from ``lo`` to ``hi`` in row ``i``."""
        y, a, b, m = self.y(i), self.xs(lo), self.xs(hi), self.xs(mean)
        self.items.append(
            f'<g class="dot" data-series="{esc(series)}">'
            f'<line x1="{_n(a)}" y1="{_n(y)}" x2="{_n(b)}" y2="{_n(y)}" stroke="{color}" stroke-width="1.2"/>'
            f'<line x1="{_n(a)}" y1="{_n(y - 4)}" x2="{_n(a)}" y2="{_n(y + 4)}" stroke="{color}"/>'
            f'<line x1="{_n(b)}" y1="{_n(y - 4)}" x2="{_n(b)}" y2="{_n(y + 4)}" stroke="{color}"/>'
            f'<circle cx="{_n(m)}" cy="{_n(y)}" r="3.2" fill="{color}"/></g>'
        )

    def tick(self, series: str, i: int, value: float, color: str = "#000") -> None:
        """A short vertical mark at ``value`` in row ``i``."""
        x, y = self.xs(value), self.y(i)
        self.items.append(
            f'<line class="tick" data-series="{esc(series)}" x1="{_n(x)}" y1="{_n(y - 8)}" x2="{_n(x)}" '
            f'y2="{_n(y + 8)}" stroke="{color}" stroke-width="2"/>'
        )

    def to_svg(self) -> str:
        out = []
        for v, label in self.x_ticks:
            px = self.xs(v)
            out.append(
                f'<line class="grid" x1="{_n(px)}" y1="{_n(self.top)}" x2="{_n(px)}" y2="{_n(self.bottom)}" '
                f'stroke="{GRID_COLOR}" stroke-width="0.8"/>'
                f'<line x1="{_n(px)}" y1="{_n(self.bottom)}" x2="{_n(px)}" y2="{_n(self.bottom + 5)}" '
                f'stroke="{AXIS_COLOR}"/>'
                f'<text class="tick-label" x="{_n(px)}" y="{_n(self.bottom + 18)}" font-size="{TICK_SIZE}" '
                f'text-anchor="middle">{esc(label)}</text>'
            )
        for i, r in enumerate(self.rows):
            out.append(
                f'<text class="row-label" x="{_n(self.left - 8)}" y="{_n(self.y(i) + 4)}" font-size="{TICK_SIZE}" '
                f'text-anchor="end">{esc(r.label)}</text>'
            )
            if r.value_text:
                out.append(
                    f'<text class="value-label" x="{_n(self.right + 8)}" y="{_n(self.y(i) + 4)}" '
                    f'font-size="{TICK_SIZE}">{esc(r.value_text)}</text>'
                )
        out.extend(self.items)
        zero = self.xs(0.0)
        out.append(
            f'<line x1="{_n(zero)}" y1="{_n(self.top)}" x2="{_n(zero)}" y2="{_n(self.bottom)}" stroke="{AXIS_COLOR}"/>'
            f'<line x1="{_n(self.left)}" y1="{_n(self.bottom)}" x2="{_n(self.right)}" y2="{_n(self.bottom)}" '
            f'stroke="{AXIS_COLOR}"/>'
            f'<text class="axis-title" x="{_n((self.left + self.right) / 2)}" y="{_n(self.bottom + 36)}" '
            f'font-size="{LABEL_SIZE}" text-anchor="middle">{esc(self.x_title)}</text>'
        )
        legend, legend_h = _legend(self.legend, self.left, self.bottom + 48, WIDTH - self.left - 10)
        height = self.bottom + (48 + legend_h if legend_h else 44) + 8
        return _svg(self.key, self.title, self.desc, height, [*out, legend])
