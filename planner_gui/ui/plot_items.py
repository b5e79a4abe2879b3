"""Building blocks of the result plots: axes for people, a band with its legend, a hover readout."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPixmap, QTransform

from ..core.util import fmt
from .widgets import in_turns

__all__ = [
    "PALETTE",
    "Axis",
    "Band",
    "BandSample",
    "CountAxis",
    "DurationAxis",
    "Hover",
    "MarkedLine",
    "PercentAxis",
    "ViewBox",
    "axes",
    "brush",
    "grid",
    "in_turns",
    "nearest",
    "pen",
    "plot_item",
    "plots_in_turns",
]

# Tableau 10: distinguishable in light and dark themes.
PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]


def pen(color: str | QColor, width: float = 2.0, style=Qt.PenStyle.SolidLine, alpha: int = 255) -> pg.QtGui.QPen:
    c = QColor(color)
    c.setAlpha(alpha)
    p = pg.mkPen(c, width=width)
    p.setStyle(style)
    p.setCosmetic(True)
    return p


def brush(color: str | QColor, alpha: int = 255) -> pg.QtGui.QBrush:
    c = QColor(color)
    c.setAlpha(alpha)
    return pg.mkBrush(c)


class Axis(pg.AxisItem):
    """An axis that draws itself on screen from a pixmap while it does not change.

    pyqtgraph records an axis (ticks, labels, grid lines) as a QPicture and replays it at every repaint
    of its plot, even when only a curve moved; replaying the text is the dearest part of such a
    repaint. On screen this replays the picture into a pixmap once, and then draws the pixmap until
    pyqtgraph records a new picture. Exports (drawn without a widget) and scaled or rotated painters
    get the picture itself, so SVG stays vector text.
    """

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self._pixmap: QPixmap | None = None
        self._pixmap_of: tuple[object, QRectF, float] | None = None  # (picture, rect, pixel ratio)

    def paint(self, p, opt, widget) -> None:
        if widget is None or p.worldTransform().type().value > QTransform.TransformationType.TxTranslate.value:
            super().paint(p, opt, widget)
            return
        rect = self.boundingRect()
        ratio = widget.devicePixelRatioF()
        of = self._pixmap_of
        if self.picture is None or of is None or of[0] is not self.picture or of[1] != rect or of[2] != ratio:
            size = QSize(math.ceil(rect.width() * ratio), math.ceil(rect.height() * ratio))
            if size.isEmpty():
                return
            pixmap = QPixmap(size)
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(pixmap)
            try:
                painter.setRenderHints(p.renderHints())
                painter.translate(-rect.topLeft())
                super().paint(painter, opt, widget)  # records the picture if needed, and replays it here
            finally:
                painter.end()
            self._pixmap, self._pixmap_of = pixmap, (self.picture, rect, ratio)
        assert self._pixmap is not None
        p.drawPixmap(rect.topLeft(), self._pixmap)


def grid(plot: pg.PlotItem, alpha: float = 0.25) -> None:
    """Grid lines across ``plot`` at its axes' major and minor ticks, not at pyqtgraph's finest third level, whose
    lines doubled the time to redraw an axis (a spares dialog's three plots took 56 ms to repaint new results)."""
    plot.showGrid(x=True, y=True, alpha=alpha)
    for side in ("left", "bottom"):
        plot.getAxis(side).setStyle(maxTickLevel=1)


class ViewBox(pg.ViewBox):
    """pyqtgraph's ViewBox with its context menu built the first time it is asked for (building it at once was
    a quarter of the time a plot takes to build, for a menu most plots never show)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs["enableMenu"] = False
        super().__init__(*args, **kwargs)
        self.state["enableMenu"] = True  # (enabled, not built)

    def _built_menu(self) -> None:
        if getattr(self, "menu", None) is None and self.menuEnabled():
            from pyqtgraph.graphicsItems.ViewBox.ViewBoxMenu import ViewBoxMenu

            self.menu = ViewBoxMenu(self)
            self.updateViewLists()

    def getMenu(self, ev: object) -> object:
        self._built_menu()
        return super().getMenu(ev)

    def getContextMenus(self, event: object) -> list[object]:
        self._built_menu()
        return list(super().getContextMenus(event))


def plot_item(title: str | None = None, **special: Axis) -> pg.PlotItem:
    """A plot for a layout: :func:`axes` (``special`` as there) and a :class:`ViewBox` whose menu is built when
    first shown."""
    return pg.PlotItem(title=title, axisItems=axes(**special), viewBox=ViewBox())


def plots_in_turns(
    owner: QObject,
    layout: pg.GraphicsLayoutWidget,
    builders: Sequence[Callable[[], pg.PlotItem]],
    done: Callable[[], None],
) -> None:
    """A column of plots for ``layout``, by :func:`in_turns`: each built (``builders[i]``, row ``i``) in one turn and
    put in the layout in the next; then ``done``."""
    made: list[pg.PlotItem] = []

    def build(make: Callable[[], pg.PlotItem]) -> Callable[[], None]:
        return lambda: made.append(make())

    def place(row: int) -> Callable[[], None]:
        return lambda: layout.addItem(made[row], row=row, col=0)

    steps: list[Callable[[], None]] = []
    for row, make in enumerate(builders):
        steps += [build(make), place(row)]
    steps.append(done)
    in_turns(owner, steps)


def axes(**special: Axis) -> dict[str, pg.AxisItem]:
    """A plot's bottom and left axes (``axisItems``): :class:`Axis` unless given (``bottom=CountAxis("bottom")``).
    pyqtgraph's own replay their grid lines and labels at every repaint: with a grid on every tick level, a
    repaint of the two spares dialogs' plots took 30-50 ms, against 3 ms with these."""
    return {"bottom": special.get("bottom") or Axis("bottom"), "left": special.get("left") or Axis("left")}


class CountAxis(Axis):
    """An axis of log10(count) positions labelled with counts: 1k, 16k, 1M (a decade per tick)."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal, maxVal, size):
        lo, hi = math.floor(minVal), math.ceil(maxVal)
        majors = [float(v) for v in range(lo, hi + 1)]
        if len(majors) > 8:
            majors = majors[:: math.ceil(len(majors) / 8)]
        steps = [math.log10(m) + v for v in range(lo, hi + 1) for m in (2, 5)]  # the 2x and 5x of each decade
        inside = [v for v in majors if minVal <= v <= maxVal]
        if len(inside) <= 2:  # a range of a decade or so: 2x and 5x are labelled too, or the counts cannot be read
            return [(1.0, sorted(inside + [v for v in steps if minVal <= v <= maxVal])), (0.3, [])]
        return [(1.0, majors), (0.3, steps if len(majors) <= 3 else [])]

    def tickStrings(self, values, scale, spacing):
        return [fmt.compact(10.0**v).replace(" ", "") for v in values]


#: Pixels a duration tick label needs beside the next ("10 min", "1.5 d").
_LABEL_PX = 48


#: Round durations (minutes) a narrow interval axis may label: 1, 2, 5, 10, 15, 20, 30, 45 s; 1-45 min; 1-12 h;
#: 1-200 d; 1-10 y.
_NICE_DURATIONS = tuple(
    sorted(
        {v / 60 for v in (1, 2, 3, 5, 10, 15, 20, 30, 45)}
        | {float(v) for v in (1, 2, 3, 5, 10, 15, 20, 30, 45)}
        | {60.0 * v for v in (1, 2, 3, 6, 12)}
        | {1440.0 * v for v in (1, 2, 5, 10, 20, 50, 100, 200)}
        | {525_600.0 * v for v in (1, 2, 5, 10)}
    )
)


def _spaced(values: list[float], px_per_unit: float, min_px: float) -> list[float]:
    """The values (ascending) kept from the first on, each at least ``min_px`` pixels after the last kept."""
    kept: list[float] = []
    for v in values:
        if not kept or (v - kept[-1]) * px_per_unit >= min_px:
            kept.append(v)
    return kept


class DurationAxis(Axis):
    """An axis of log10(minutes) positions labelled with durations: 1 s, 1 min, 1 h, 1 d. Only the major
    ticks carry labels, and those are at least :data:`_LABEL_PX` apart (at 10,000,000 GPUs "50 s" and
    "1 min" once overlapped)."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)
        self._labelled: list[float] = []

    def tickValues(self, minVal, maxVal, size):
        majors = [math.log10(m) for m in fmt.DURATION_TICKS if minVal <= math.log10(m) <= maxVal]
        minors = [
            math.log10(m * k) for m in fmt.DURATION_TICKS[:-1] for k in (2, 5) if minVal <= math.log10(m * k) <= maxVal
        ]
        px_per_unit = size / (maxVal - minVal) if maxVal > minVal else 0.0
        if len(majors) < 2:  # a narrow range: round durations, as many as fit side by side
            nice = [math.log10(m) for m in _NICE_DURATIONS if minVal <= math.log10(m) <= maxVal]
            majors = _spaced(nice, px_per_unit, _LABEL_PX)
            if len(majors) < 2:  # narrower still: plain decades, labelled as durations too
                levels = super().tickValues(minVal, maxVal, size)
                self._labelled = list(levels[0][1]) if levels else []
                return [levels[0]] if levels else []
            self._labelled = majors
            return [(1.0, majors), (0.3, [v for v in nice if v not in majors])]
        room = max(2, int(size // _LABEL_PX))  # labels that fit side by side; the others become minor ticks
        if len(majors) > room:
            step = math.ceil(len(majors) / room)
            minors += [v for i, v in enumerate(majors) if i % step]
            majors = majors[::step]
        self._labelled = majors
        return [(1.0, majors), (0.3, minors)]

    def tickStrings(self, values, scale, spacing):
        labelled = self._labelled
        chosen = [v for v in values if any(abs(v - m) < 1e-9 for m in labelled)]
        for digits in (2, 3, 4):  # plain decades close together need more digits to read apart
            texts = {v: fmt.short_duration(10.0**v, digits) for v in chosen}
            if len(set(texts.values())) == len(texts):
                break
        return [texts.get(v, "") for v in values]


class PercentAxis(Axis):
    """Goodput in percent; never scientific notation or SI prefixes."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values, scale, spacing):
        digits = max(0, min(3, -math.floor(math.log10(spacing)))) if spacing > 0 else 0
        return [f"{v:.{digits}f}" for v in values]


class Band:
    """A Monte Carlo mean curve over a filled p05-p95 band, with one legend entry for both.

    The band's edges are plain curves (a ``PlotDataItem`` without a pen would never pass its data on
    to its curve, and the fill would stay empty).
    """

    def __init__(self, plot: pg.PlotItem, color: str, legend: pg.LegendItem | None) -> None:
        self.lo = pg.PlotCurveItem(pen=pen(color, 1, alpha=0), connect="finite")
        self.hi = pg.PlotCurveItem(pen=pen(color, 1, alpha=0), connect="finite")
        plot.addItem(self.lo)
        plot.addItem(self.hi)
        self.fill_brush = brush(color, 70)
        self.fill = pg.FillBetweenItem(self.lo, self.hi, brush=self.fill_brush)
        plot.addItem(self.fill)
        self.mean = plot.plot(pen=pen(color), antialias=True)
        if legend is not None:
            legend.addItem(BandSample(self), "Monte Carlo mean, p05-p95")

    def set_band_visible(self, on: bool) -> None:
        for item in (self.lo, self.hi, self.fill):
            item.setVisible(on)

    def set(self, x, lo, mean, hi) -> None:
        self.lo.setData(x, lo)
        self.hi.setData(x, hi)
        self.mean.setData(x, mean)


class BandSample(pg.ItemSample):
    """The legend's sample of a :class:`Band`: the band's fill with its mean line across; a click shows
    or hides both."""

    def __init__(self, band: Band) -> None:
        super().__init__(band.mean)
        self.band = band

    def paint(self, p, *args) -> None:
        p.setPen(pg.mkPen(None))
        p.setBrush(self.band.fill_brush)
        p.drawRect(QRectF(0, 4, 20, 12))
        p.setPen(self.band.mean.opts["pen"])
        p.drawLine(QPointF(0, 10), QPointF(20, 10))

    def mouseClickEvent(self, event) -> None:
        super().mouseClickEvent(event)
        self.band.set_band_visible(self.item.isVisible())


class MarkedLine:
    """A vertical line with a label that stays inside the plot: beside the line, at a fixed height."""

    def __init__(self, plot: pg.PlotItem, line_pen, color, height: float) -> None:
        self.vb, self.height = plot.getViewBox(), height
        self.line = pg.InfiniteLine(0, angle=90, pen=line_pen)
        self.text = pg.TextItem(color=color, anchor=(0, 0.5))  # no background: it must not hide the curve
        plot.addItem(self.line, ignoreBounds=True)
        plot.addItem(self.text, ignoreBounds=True)
        self.vb.sigRangeChanged.connect(self.place)

    def set(self, x: float, label: str) -> None:
        if x == self.line.value() and label == self.text.textItem.toPlainText():
            return  # nothing moved: no new text layout, no repaint
        self.line.setValue(x)
        self.text.setText(label)
        self.place()

    def place(self, *_args) -> None:
        (_, x1), (y0, y1) = self.vb.viewRange()
        x = self.line.value()
        width = self.text.boundingRect().width() * (self.vb.viewPixelSize()[0] or 0.0)
        self.text.setAnchor((1, 0.5) if x + width > x1 else (0, 0.5))  # flip to the left at the right edge
        self.text.setPos(x, y0 + self.height * (y1 - y0))


class Hover(QObject):
    """The values under the mouse: a readout beside the pointer and, for curves, a vertical line.

    ``describe(x, y)`` (view coordinates) returns the text, or "" for nothing there. The readout sits
    on the side of the pointer with more room, so it is never cut by the plot's edge; it goes away
    when the pointer leaves the plot and when new results are drawn (its values would be stale).
    """

    def __init__(self, widget: pg.PlotWidget, describe: Callable[[float, float], str], line: bool = True) -> None:
        super().__init__(widget)
        self.plot, self.describe = widget.getPlotItem(), describe
        self.text = pg.TextItem(
            color=pg.getConfigOption("foreground"),
            fill=brush(pg.getConfigOption("background"), 225),
            border=pen("#808080", 1),
        )
        self.text.setZValue(100)
        self.text.isReadout = True  # exports leave readouts out
        self.plot.addItem(self.text, ignoreBounds=True)
        self.line = pg.InfiniteLine(angle=90, pen=pen("#808080", 1, Qt.PenStyle.DotLine)) if line else None
        if self.line is not None:
            self.line.isReadout = True
            self.plot.addItem(self.line, ignoreBounds=True)
        self.hide()
        self._proxy = pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=self._moved)
        widget.viewport().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Leave:
            self.hide()
        return False

    def hide(self) -> None:
        self.text.setVisible(False)
        if self.line is not None:
            self.line.setVisible(False)

    def _moved(self, event) -> None:
        pos = event[0]
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            self.hide()
            return
        p = vb.mapSceneToView(pos)
        self.show_at(p.x(), p.y())

    def show_at(self, x: float, y: float) -> str:
        """Show the readout for view point (x, y), as if the pointer were there; returns its text."""
        text = self.describe(x, y)
        if not text:
            self.hide()
            return ""
        vb = self.plot.getViewBox()
        at = vb.mapViewToScene(QPointF(x, y))
        area = vb.sceneBoundingRect()
        centre = area.center()
        self.text.setText(text)
        # Towards the middle of the plot from the pointer (right and below it in the top-left quarter), then moved
        # in as far as it must to stay inside the plot: a readout wider than half a narrow plot is never cut.
        size = self.text.textItem.boundingRect()  # in pixels: the readout is not scaled with the view
        left = at.x() if at.x() < centre.x() else at.x() - size.width()
        top = at.y() if at.y() < centre.y() else at.y() - size.height()
        left = max(area.left(), min(left, area.right() - size.width()))
        top = max(area.top(), min(top, area.bottom() - size.height()))
        self.text.setAnchor((0, 0))
        self.text.setPos(vb.mapSceneToView(QPointF(left, top)))
        self.text.setVisible(True)
        if self.line is not None:
            self.line.setValue(x)
            self.line.setVisible(True)
        return text


def nearest(xs: np.ndarray, x: float) -> int:
    """Index of the point of ``xs`` nearest to ``x``."""
    return int(np.argmin(np.abs(np.asarray(xs) - x)))
