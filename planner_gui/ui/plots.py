"""The six result plots. Every plot item is created once; updates only call ``setData``/``setOpts``.

Each plot's legend names only what it draws; every plot shows the values under the mouse. The grid
reflows (three plots across on wide screens, two otherwise) and the components plot shows as many
named rows as its height can hold, the rest summed in one row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QGridLayout, QWidget

from ..core.analysis.results import (
    ALL_HOURS_KEYS,
    HOURS_KEYS,
    SDC_HOURS_KEY,
    SLOW_HOURS_KEY,
    SPARES_HOURS_KEYS,
    hours_label,
)
from ..core.analysis.sweep import GUIDE_GPUS, SweepResult, at_gpus
from ..core.model.scenario import CORRELATED_NAME, Scenario
from ..core.session.plan import MainPart, PlanResult, ShowsMain
from ..core.theory.profiles import expected_by_component
from ..core.util import fmt
from .plot_items import (
    PALETTE,
    Axis,
    Band,
    CountAxis,
    DurationAxis,
    Hover,
    MarkedLine,
    PercentAxis,
    brush,
    nearest,
    pen,
)
from .theme import secondary_color

__all__ = ["BASELINE_COLOR", "CATEGORY_COLORS", "PIN_COLORS", "PLOT_NAMES", "PlotsPanel"]

CATEGORY_COLORS = {
    "GPU": PALETTE[2],
    "Dependency": PALETTE[0],
    "Network": PALETTE[1],
    "Unplanned Maintenance": PALETTE[6],
    "Host": PALETTE[3],
    "Unknown": PALETTE[9],
    CORRELATED_NAME: PALETTE[8],
}
#: Every row the time breakdown may show: today's five, with spares the two they add, with slow nodes theirs, with
#: silent corruption found late its rollbacks.
HOURS_COLORS = {
    "useful": PALETTE[4],
    "checkpoint": PALETTE[0],
    "lost_work": PALETTE[2],
    "recovery": PALETTE[1],
    "planned_restart": PALETTE[6],
    "waiting_for_spares": PALETTE[5],
    "reduced_throughput": PALETTE[3],
    "slow": PALETTE[7],
    SDC_HOURS_KEY: PALETTE[8],
}
#: A plot narrower than this cuts its title and axis labels.
MIN_PLOT_WIDTH = 240
BASELINE_COLOR = PALETTE[8]
#: Colours of pinned scenarios, in the order they were pinned (none is a colour of the current results).
PIN_COLORS = (BASELINE_COLOR, PALETTE[6], PALETTE[5], PALETTE[7], PALETTE[3], PALETTE[9])


@dataclass
class _Pinned:
    """A pinned scenario: its label, results, colour, and its overlay item on each plot."""

    label: str
    result: PlanResult
    color: str
    items: dict[str, Any]


#: objectName -> title, in layout order.
PLOT_NAMES = {
    "interruptionsVsGpusPlot": "Interruptions vs GPUs",
    "goodputVsGpusPlot": "Goodput vs GPUs",
    "goodputVsIntervalPlot": "Goodput vs checkpoint interval",
    "componentsPlot": "By component",
    "goodputHistogramPlot": "Goodput over trials",
    "timeBreakdownPlot": "Where the time goes",
}
#: The steps of drawing a result (:meth:`PlotsPanel.render_steps`) that its main run alone decides.
MAIN_STEPS = ("components", "histogram", "breakdown")
#: A goodput axis spans at least this many percentage points (a flat curve is not blown up into noise).
MIN_PERCENT_SPAN = 2.0


def _log_count(v: np.ndarray) -> np.ndarray:
    """log10 of counts; a count of zero has no place on a log axis and is not drawn (NaN)."""
    v = np.asarray(v, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(v > 0, np.log10(np.where(v > 0, v, 1.0)), np.nan)


def _histogram(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bin edges and counts of per-trial goodput in percent (about 1.5 sqrt(n) bins, 10 to 80),
    over at least 0.2 points and never outside 0-100."""
    lo, hi = float(values.min()), float(values.max())
    bins = int(np.clip(np.sqrt(values.size) * 1.5, 10, 80))
    if hi - lo < 0.2:  # (nearly) one value: ten bins of 0.02 points around it, the data in a visible bar
        mid = min(max((lo + hi) / 2, 0.1), 99.9)
        lo, hi, bins = mid - 0.1, mid + 0.1, 10
    counts, edges = np.histogram(values, bins=bins, range=(lo, hi))
    return edges, counts


def _same_sweep(a: SweepResult, b: SweepResult | None) -> bool:
    """Whether two sweeps hold the same numbers (a sweep that came from the compute process's cache is
    a new object with the same values)."""
    if b is None:
        return False
    if a is b:
        return True
    return all(np.array_equal(getattr(a, c), getattr(b, c)) for c in ("x", *SweepResult.COLUMNS))


def _mean_hours(res: ShowsMain, keys: Sequence[str] = ALL_HOURS_KEYS) -> np.ndarray:
    """Mean hours by ``keys`` (0 for those that do not apply to the result)."""
    hours = res.main.hours_per_trial()
    return np.array([float(hours[k].mean()) if k in hours else 0.0 for k in keys])


def _breakdown_axis_limit(width: int) -> int:
    """The widest the time breakdown's row labels may make its axis, for a plot ``width`` pixels wide."""
    return int(min(0.48 * width, 260))


def _show_entry(legend: pg.LegendItem, item: pg.PlotDataItem, visible: bool) -> None:
    """Show or hide ``item``'s legend entry (its sample and label)."""
    for sample, label in legend.items:
        if sample.item is item:
            sample.setVisible(visible)
            label.setVisible(visible)


def _percent_range(*arrays: np.ndarray) -> tuple[float, float]:
    """A goodput axis range (percent) around the data: within 0-100, at least MIN_PERCENT_SPAN wide."""
    vals = np.concatenate([np.ravel(a) for a in arrays])
    vals = vals[np.isfinite(vals)]  # an exact curve is NaN where the model has no closed form (spares)
    if not vals.size:
        return 0.0, 100.0
    lo, hi = float(np.min(vals)), float(np.max(vals))
    pad = max((hi - lo) * 0.05, (MIN_PERCENT_SPAN - (hi - lo)) / 2, 0.0)
    lo, hi = lo - pad, hi + pad
    if lo < 0:
        lo, hi = 0.0, max(hi - lo, MIN_PERCENT_SPAN)
    if hi > 100:
        lo, hi = min(lo - (hi - 100), 100 - MIN_PERCENT_SPAN), 100.0
    lo, hi = _outward(lo, hi)
    return max(lo, 0.0), min(hi, 100.0)


def _outward(lo: float, hi: float, parts: int = 20) -> tuple[float, float]:
    """``lo`` and ``hi`` moved out to whole steps of about ``1/parts`` of their span (1, 2 or 5 times a
    power of ten). A range set so holds still while a slider moves the data a little, and its axis (the
    dearest part of a plot's repaint, with its grid the more so) is not drawn again."""
    if not hi > lo:
        return lo, hi
    raw = (hi - lo) / parts
    decade = 10.0 ** math.floor(math.log10(raw))
    step = next(m * decade for m in (1, 2, 5, 10) if m * decade >= raw)
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


def chain(*steps: Callable[[], None]) -> Callable[[], None]:
    """One step that runs ``steps`` in order."""

    def run() -> None:
        for step in steps:
            step()

    return run


def _set_text(item: pg.TextItem, text: str) -> None:
    """Set a text item's text, unless it shows that text already (setting it lays the text out again)."""
    if item.textItem.toPlainText() != text:
        item.setText(text)


@lru_cache(maxsize=64)
def _brush(color: str) -> pg.QtGui.QBrush:
    return pg.mkBrush(color)


def category_color(category: str, index: int = 0) -> str:
    return CATEGORY_COLORS.get(category, PALETTE[(index + 4) % len(PALETTE)])


class PlotsPanel(QWidget):
    """The result plots in a grid that reflows with the panel's shape."""

    def __init__(self) -> None:
        super().__init__()
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(4)
        self._columns = 0
        self.widgets: dict[str, pg.PlotWidget] = {}
        self.legends: dict[str, pg.LegendItem] = {}
        self.hovers: dict[str, Hover] = {}
        self.text_color = secondary_color()
        for name, title in PLOT_NAMES.items():
            kinds = {"bottom": Axis, "left": Axis}
            if name in ("interruptionsVsGpusPlot", "goodputVsGpusPlot"):
                kinds["bottom"] = CountAxis
            if name == "interruptionsVsGpusPlot":
                kinds["left"] = CountAxis
            if name in ("goodputVsGpusPlot", "goodputVsIntervalPlot"):
                kinds["left"] = PercentAxis
            if name == "goodputVsIntervalPlot":
                kinds["bottom"] = DurationAxis
            if name == "goodputHistogramPlot":
                kinds["bottom"] = PercentAxis
            axes = {side: kind(side) for side, kind in kinds.items()}
            w = pg.PlotWidget(axisItems=axes)
            w.setObjectName(name)
            w.setMinimumSize(MIN_PLOT_WIDTH, 170)
            w.setTitle(title)
            if name in ("goodputVsGpusPlot", "goodputVsIntervalPlot"):
                w.showGrid(x=False, y=True, alpha=0.15)
            self.widgets[name] = w
        self._arrange(2)
        self.pinned: list[_Pinned] = []
        self.result: PlanResult | None = None  # the newest whole result drawn
        self.main_shown: ShowsMain | None = None  # the newest main run the components, histogram and breakdown show
        self._drawn_gpus: SweepResult | None = None  # the GPU sweep the GPU plots show
        self._comp_axis: tuple[list, int] = ([], 0)  # the components plot's names and their width
        self._comp_rows = 0
        self._guide_lines: list[MarkedLine] = []
        self._build_gpu_plots()
        self._build_interval_plot()
        self._build_components_plot()
        self._build_histogram()
        self._build_breakdown()

    def plot(self, name: str) -> pg.PlotItem:
        return self.widgets[name].getPlotItem()

    # -- layout -------------------------------------------------------------------------------
    def _arrange(self, columns: int) -> None:
        if columns == self._columns:
            return
        self._columns = columns
        for w in self.widgets.values():
            self._grid.removeWidget(w)
        for i, w in enumerate(self.widgets.values()):
            self._grid.addWidget(w, i // columns, i % columns)
        for c in range(3):
            self._grid.setColumnStretch(c, 1 if c < columns else 0)
        for r in range(3):
            self._grid.setRowStretch(r, 1 if r < 6 // columns else 0)

    def resizeEvent(self, event) -> None:
        # Three across when the panel is wide for its height, so each plot stays near 3:2, and wide enough
        # for three plots of their minimum width (titles and axes are cut below it).
        w, h = event.size().width(), event.size().height()
        self._arrange(3 if w > 1.55 * h and w >= 3 * (MIN_PLOT_WIDTH + 10) else 2)
        super().resizeEvent(event)

    def _components_resized(self) -> None:
        """More or fewer rows fit, or the names have more or less room: lay the bars out again."""
        if self.main_shown is not None:
            self._show_components(self.main_shown)

    def _breakdown_resized(self) -> None:
        if self.main_shown is not None:
            self._show_breakdown(self.main_shown)

    # -- construction ----------------------------------------------------------------------
    def _legend(self, name: str, offset: tuple[int, int]) -> pg.LegendItem:
        # No background: a legend must not hide the data under it (and it can be dragged aside).
        legend = self.plot(name).addLegend(offset=offset, labelTextSize="8pt", labelTextColor=self.text_color)
        self.legends[name] = legend
        return legend

    def _hover(self, name: str, describe: Callable[[float, float], str], line: bool = True) -> None:
        self.hovers[name] = Hover(self.widgets[name], describe, line)

    def _guides(self, p: pg.PlotItem) -> None:
        for n in GUIDE_GPUS:
            guide = MarkedLine(p, pen(self.text_color, 1, Qt.PenStyle.DotLine), self.text_color, 0.96)
            guide.set(math.log10(n), f"{n:,}")
            self._guide_lines.append(guide)

    def _exact_curve(self, p: pg.PlotItem, legend: pg.LegendItem) -> pg.PlotDataItem:
        item = p.plot(pen=pen(self.text_color, 1.5, Qt.PenStyle.DashLine))
        legend.addItem(item, "exact expectation")
        # Without a closed form (spares: NaN everywhere) neither the curve nor its legend entry is shown.
        item.sigPlotChanged.connect(lambda it: _show_entry(legend, it, bool(np.isfinite(it.getData()[1]).any())))
        return item

    def _marker(self, p: pg.PlotItem) -> pg.ScatterPlotItem:
        """The current scenario's point (the Monte Carlo mean at its GPU count); the readout names it."""
        item = pg.ScatterPlotItem(size=11, brush=pg.mkBrush(PALETTE[2]), pen=pg.mkPen("w", width=1))
        p.addItem(item)
        return item

    def _build_gpu_plots(self) -> None:
        p1 = self.plot("interruptionsVsGpusPlot")
        p1.setLabel("bottom", "GPUs")
        p1.setLabel("left", "interruptions in the window")
        self._guides(p1)
        legend = self._legend("interruptionsVsGpusPlot", (-5, -5))  # the curve rises: bottom right is free
        self.int_band = Band(p1, PALETTE[0], legend)
        self.int_exact = self._exact_curve(p1, legend)
        self.int_marker = self._marker(p1)
        self._hover("interruptionsVsGpusPlot", self._describe_interruptions)

        p2 = self.plot("goodputVsGpusPlot")
        p2.setLabel("bottom", "GPUs")
        p2.setLabel("left", "goodput (%)")
        self._guides(p2)
        self.target = pg.InfiniteLine(
            90,
            angle=0,
            pen=pen(PALETTE[4], 1, Qt.PenStyle.DashLine),
            label="90% target",
            labelOpts={"position": 0.04, "color": PALETTE[4], "anchors": [(0, 0), (0, 0)]},
        )
        p2.addItem(self.target, ignoreBounds=True)
        legend = self._legend("goodputVsGpusPlot", (10, -5))
        self.gp_band = Band(p2, PALETTE[0], legend)
        self.gp_exact = self._exact_curve(p2, legend)
        self.gp_marker = self._marker(p2)
        p2.setYRange(0, 100, padding=0.03)
        self._hover("goodputVsGpusPlot", self._describe_goodput_gpus)

    def _build_interval_plot(self) -> None:
        p3 = self.plot("goodputVsIntervalPlot")
        p3.setLabel("bottom", "checkpoint interval")
        p3.setLabel("left", "goodput (%)")
        legend = self._legend("goodputVsIntervalPlot", (10, -5))
        self.iv_band = Band(p3, PALETTE[0], legend)
        self.iv_exact = self._exact_curve(p3, legend)
        self.iv_lines = {}
        for key, color, style, height in (
            ("current", PALETTE[2], Qt.PenStyle.SolidLine, 0.93),
            ("Young", PALETTE[1], Qt.PenStyle.DashLine, 0.8),
            ("Daly", PALETTE[6], Qt.PenStyle.DashLine, 0.67),
        ):
            self.iv_lines[key] = MarkedLine(p3, pen(color, 2 if key == "current" else 1, style), color, height)
        self._hover("goodputVsIntervalPlot", self._describe_interval)

    def _build_components_plot(self) -> None:
        p4 = self.plot("componentsPlot")
        p4.setLabel("bottom", "bar: exact; dot: simulated", **{"font-size": "8pt"})
        p4.getAxis("bottom").enableAutoSIPrefix(False)
        p4.invertY(True)
        self.comp_bars = pg.BarGraphItem(x0=[0], y=[0], height=0.7, width=[0])
        self.comp_spread = pg.ErrorBarItem(
            x=np.zeros(1), y=np.zeros(1), left=0, right=0, beam=0.25, pen=pen(self.text_color, 1)
        )
        self.comp_mc = pg.ScatterPlotItem(size=6, brush=pg.mkBrush(pg.getConfigOption("foreground")), pen=None)
        for item in (self.comp_bars, self.comp_spread, self.comp_mc):
            p4.addItem(item)
        self._legend("componentsPlot", (-5, -5))  # for the baseline, when one is pinned
        self._comp_rows_shown: list[tuple[str, float, float, float, float, str]] = []
        self._hover("componentsPlot", self._describe_component, line=False)
        p4.getViewBox().sigResized.connect(self._components_resized)

    def _build_histogram(self) -> None:
        p5 = self.plot("goodputHistogramPlot")
        p5.setLabel("bottom", "goodput (%)")
        p5.setLabel("left", "trials")
        legend = self._legend("goodputHistogramPlot", (5, 5))
        self.hist = p5.plot(stepMode="center", fillLevel=0, brush=brush(PALETTE[0], 120), pen=pen(PALETTE[0], 1))
        legend.addItem(self.hist, "trials (Monte Carlo)")
        self.hist_exact = p5.plot(pen=pen(self.text_color, 1.5, Qt.PenStyle.DashLine))
        legend.addItem(self.hist_exact, "exact expectation")
        self._hist_legend = legend
        self._hist_top = 1.0
        p5.getViewBox().sigResized.connect(lambda *_: self._fit_histogram_legend())
        self._hover("goodputHistogramPlot", self._describe_histogram)

    def _build_breakdown(self) -> None:
        p6 = self.plot("timeBreakdownPlot")
        p6.setLabel("bottom", "hours (mean over trials)")
        p6.invertY(True)
        self._set_breakdown_rows(HOURS_KEYS)
        p6.getAxis("bottom").enableAutoSIPrefix(False)
        n = len(HOURS_KEYS)
        brushes = [pg.mkBrush(HOURS_COLORS[k]) for k in HOURS_KEYS]
        self.time_bars = pg.BarGraphItem(x0=[0] * n, y=list(range(n)), height=0.7, width=[0] * n, brushes=brushes)
        p6.addItem(self.time_bars)
        self._legend("timeBreakdownPlot", (-5, -5))  # for pinned scenarios (bottom right is free)
        self.time_labels = [
            pg.TextItem(anchor=(0, 0.5), color=pg.getConfigOption("foreground")) for _ in ALL_HOURS_KEYS
        ]
        for t in self.time_labels:
            p6.addItem(t, ignoreBounds=True)
        self._hover("timeBreakdownPlot", self._describe_breakdown, line=False)
        p6.getViewBox().sigResized.connect(self._breakdown_resized)

    # -- updates -----------------------------------------------------------------------------
    def show_result(self, res: PlanResult) -> None:
        """Draw ``res`` into the existing items, all at once."""
        for _, step in self.render_steps(res):
            step()

    def render_steps(self, res: PlanResult | MainPart) -> list[tuple[str, Callable[[], None]]]:
        """The updates for ``res``, one plot (the two GPU plots together) per step, each with its name
        (:data:`MAIN_STEPS` first: those a main run alone decides, all a :class:`MainPart` has).

        The window runs them in separate turns of the event loop, so input and timers are handled
        between them. Each step only changes items whose data changed; Qt repaints what changed once,
        after the step. (Holding a plot's repaints with ``setUpdatesEnabled`` would repaint all of it,
        axes and legends included, even where nothing changed.)
        """
        steps: list[tuple[str, Callable[[], None]]] = [
            ("components", partial(self._render, res, self._show_components, ["componentsPlot"], main=True)),
            ("histogram", partial(self._render, res, self._show_histogram, ["goodputHistogramPlot"], main=True)),
            ("breakdown", partial(self._render, res, self._show_breakdown, ["timeBreakdownPlot"], main=True)),
        ]
        if isinstance(res, PlanResult):
            gpu_plots = ["interruptionsVsGpusPlot", "goodputVsGpusPlot"]
            steps += [
                ("gpus", partial(self._render, res, self._show_gpus, gpu_plots)),
                ("interval", partial(self._render, res, self._show_interval, ["goodputVsIntervalPlot"])),
            ]
        return steps

    def _render(
        self, res: PlanResult | MainPart, show: Callable[[Any], None], names: list[str], main: bool = False
    ) -> None:
        """Draw the plots ``names`` from ``res`` with ``show``; ``main``: a step its main run alone decides."""
        if isinstance(res, PlanResult):
            self.result = res
        if main:
            self.main_shown = res
        for name in names:  # their values are about to be stale
            self.hovers[name].hide()
        show(res)

    def _set_range(
        self, name: str, x: tuple[float, float] | None = None, y: tuple[float, float] | None = None, padding=0.0
    ) -> None:
        """Set a plot's view range (as ``setXRange``/``setYRange``), unless it shows that range already: an
        unchanged range then costs no signals, and its axis is not drawn again."""
        vb = self.plot(name).getViewBox()
        current, auto = vb.viewRange(), vb.state["autoRange"]
        for k, span in enumerate((x, y)):
            if span is None:
                continue
            lo, hi = span
            pad = (hi - lo) * padding
            tol = 1e-9 * max(hi - lo, 1e-300)
            if auto[k] is False and abs(current[k][0] - (lo - pad)) <= tol and abs(current[k][1] - (hi + pad)) <= tol:
                continue
            (vb.setXRange if k == 0 else vb.setYRange)(lo, hi, padding=padding)

    def _show_gpus(self, res: PlanResult) -> None:
        main, g = res.main, res.by_gpus
        sc = main.scenario
        lx = np.log10(g.x)
        if not _same_sweep(g, self._drawn_gpus):  # the GPU slider reuses the sweep: only the marker moves
            self._drawn_gpus = g
            self.int_band.set(
                lx, _log_count(g.interruptions_p05), _log_count(g.interruptions_mean), _log_count(g.interruptions_p95)
            )
            self.int_exact.setData(lx, _log_count(g.interruptions_expected))
            self.gp_band.set(lx, 100 * g.goodput_p05, 100 * g.goodput_mean, 100 * g.goodput_p95)
            self.gp_exact.setData(lx, 100 * g.goodput_expected)
        y = float(_log_count(np.array([main.trials.unplanned.mean()]))[0])
        # No interruptions: no place on the log axis (a NaN spot would break the item's bounds).
        self.int_marker.setData(*(([math.log10(sc.gpus)], [y]) if math.isfinite(y) else ([], [])))
        self.gp_marker.setData([math.log10(sc.gpus)], [100 * float(main.goodput.mean())])
        span = (float(lx[0]), float(max(lx[-1], math.log10(sc.gpus))))
        for name in ("interruptionsVsGpusPlot", "goodputVsGpusPlot"):
            self._set_range(name, x=span, padding=0.05)  # room for the end labels (1k, 1M) in a narrow plot
        counts = _log_count(
            np.concatenate(
                [g.interruptions_p05, g.interruptions_p95, g.interruptions_expected, [main.trials.unplanned.mean()]]
            )
        )
        if np.isfinite(counts).any():
            self._set_range(
                "interruptionsVsGpusPlot", y=(float(np.nanmin(counts)), float(np.nanmax(counts))), padding=0.08
            )

    def _show_interval(self, res: PlanResult) -> None:
        iv, main = res.by_interval, res.main
        self.iv_band.set(np.log10(iv.x), 100 * iv.goodput_p05, 100 * iv.goodput_mean, 100 * iv.goodput_p95)
        fine, exact = res.exact_curve
        self.iv_exact.setData(np.log10(fine), 100 * exact)
        opt = main.optimal
        marks = (("current", main.interval_min), ("Young", opt.young), ("Daly", opt.daly))
        tp = main.tier_plan
        fast_yd = tp.fast_young_daly() if tp is not None else None
        if tp is not None and tp.fast_min is not None and fast_yd is not None:  # the sweep varies the fast interval
            marks = (("current", tp.fast_min), ("Young", fast_yd[0]), ("Daly", fast_yd[1]))
            # Short (the plot may be 330 px). Along the sweep the persistent interval keeps its minutes (whole fast
            # intervals of them), or is every fast snapshot.
            every = "= persistent" if tp.k == 1 else f"persistent {fmt.duration_min(tp.persistent_min)}"
            self.plot("goodputVsIntervalPlot").setLabel("bottom", f"fast interval ({every})")
        else:
            self.plot("goodputVsIntervalPlot").setLabel("bottom", "checkpoint interval")
        for key, minutes in marks:
            self.iv_lines[key].set(math.log10(minutes), f"{key} {fmt.duration_min(minutes)}")
        name = "goodputVsIntervalPlot"
        self._set_range(name, x=(float(np.log10(fine[0])), float(np.log10(fine[-1]))), padding=0.02)
        base = [100 * b.result.by_interval.goodput_mean for b in self.pinned]
        self._set_range(name, y=_percent_range(100 * iv.goodput_p05, 100 * iv.goodput_p95, 100 * exact, *base))

    def _component_rows(self) -> int:
        """How many bar rows the components plot's height holds at the axis font's line height."""
        vb = self.plot("componentsPlot").getViewBox()
        line = QFontMetrics(self.plot("componentsPlot").getAxis("left").style.get("tickFont") or self.font()).height()
        return max(3, int(vb.height() // (line * 1.15)))

    def _show_components(self, res: ShowsMain) -> None:
        """Bars: each component's exact expected count (with the rate profile, at the posterior mean with
        rate uncertainty); dots and whiskers: the Monte Carlo mean and
        p05-p95. As many of the largest as fit by name, the rest summed in one row."""
        comps = res.main.scenario.failure_components  # (the correlated events, when on, last)
        by = res.main.trials.by_component
        expected = expected_by_component(res.main.scenario)  # with the profile and the posterior mean
        order = list(np.argsort(-expected, kind="stable"))
        self._comp_rows = fit = self._component_rows()
        named, rest = (order, []) if len(order) <= fit else (order[: fit - 1], order[fit - 1 :])
        cats = list(dict.fromkeys(c.category for c in comps))
        columns = [by[:, i] for i in named] + ([by[:, rest].sum(axis=1)] if rest else [])
        counts = np.column_stack(columns).astype(float)  # trials x rows
        means = counts.mean(axis=0)
        lo, hi = np.percentile(counts, [5, 95], axis=0)
        rows = [
            (
                fmt.clean(comps[i].name, 60),
                float(expected[i]),
                float(means[k]),
                float(lo[k]),
                float(hi[k]),
                fmt.clean(comps[i].category, 40),
                category_color(comps[i].category, cats.index(comps[i].category)),
            )
            for k, i in enumerate(named)
        ]
        if rest:
            k = len(named)
            rows.append(
                (
                    f"{len(rest)} others",
                    float(expected[rest].sum()),
                    float(means[k]),
                    float(lo[k]),
                    float(hi[k]),
                    "",
                    PALETTE[9],
                )
            )
        self._comp_rows_shown = [r[:6] for r in rows]
        y = np.arange(len(rows))
        self.comp_bars.setOpts(
            x0=np.zeros(len(rows)),
            y=y,
            width=[r[1] for r in rows],
            brushes=[_brush(r[6]) for r in rows],
            height=0.7,
        )
        self.comp_spread.setData(x=means, y=y, left=means - lo, right=hi - means)
        self.comp_mc.setData(means, y)
        self._align_baseline_components()
        name = "componentsPlot"
        axis = self.plot(name).getAxis("left")
        width = int(min(0.42 * self.widgets[name].width(), 190))
        metrics = QFontMetrics(axis.style.get("tickFont") or self.font())
        ticks = [[(k, metrics.elidedText(r[0], Qt.TextElideMode.ElideRight, width - 12)) for k, r in enumerate(rows)]]
        if (ticks, width) != self._comp_axis:  # the same names at the same width: no new layout
            self._comp_axis = (ticks, width)
            axis.setTicks(ticks)
            axis.setWidth(width)
        base = max((float(np.max(b.items["componentsPlot"].opts["width"])) for b in self.pinned), default=0.0)
        right = max(float(max(r[1] for r in rows)), float(hi.max()), base, 1e-9) * 1.05
        self._set_range(name, x=(0.0, right), y=(-0.6, len(rows) - 0.4))

    def _show_histogram(self, res: ShowsMain) -> None:
        edges, counts = _histogram(100 * res.main.goodput)
        self.hist.setData(edges, counts)
        exact = 100 * (res.main.expected.goodput if res.main.expected.goodput is not None else math.nan)
        self.hist_exact.setData([exact, exact], [0, max(float(counts.max()), 1.0) * 1.05])
        # No closed form (two tiers restoring): no line, so no legend entry either.
        listed = any(sample.item is self.hist_exact for sample, _ in self._hist_legend.items)
        if math.isfinite(exact) and not listed:
            self._hist_legend.addItem(self.hist_exact, "exact expectation")
        elif not math.isfinite(exact) and listed:
            self._hist_legend.removeItem(self.hist_exact)
        lo, hi = float(edges[0]), float(edges[-1])
        for b in self.pinned:  # the pinned scenarios' trials stay in view
            base_edges, base_counts = _histogram(100 * b.result.main.goodput)
            lo, hi = min(lo, float(base_edges[0])), max(hi, float(base_edges[-1]))
            counts = np.concatenate([counts, base_counts])
        pad = (hi - lo) * 0.05
        lo, hi = _outward(min(lo, exact) - pad, max(hi, exact) + pad)
        self._set_range("goodputHistogramPlot", x=(max(lo, 0.0), min(hi, 100.0)))
        self._hist_top = max(float(counts.max()), 1.0)  # (the pinned scenarios' bars included)
        self._fit_histogram_legend()

    def _fit_histogram_legend(self) -> None:
        """Put the histogram's legend in the upper corner over the lower bars, and room above them for it: with
        every trial at one end (0 % at ten million GPUs) a bar rose into a legend in that corner, and in a small
        plot the legend was taller than the room left above the peak."""
        vb = self.plot("goodputHistogramPlot").getViewBox()
        edges, counts = self.hist.xData, self.hist.yData
        if edges is None or counts is None or not len(counts):
            return
        w, h = float(vb.width()), float(vb.height())
        box = self._hist_legend.boundingRect()
        frac_w = min((box.width() + 10.0) / w, 1.0) if w > 0 else 0.5
        frac_h = min((box.height() + 10.0) / h, 0.7) if h > 0 else 0.3
        (x_lo, x_hi), _ = vb.viewRange()
        reach = frac_w * (x_hi - x_lo)

        def under(a: float, b: float) -> float:
            sel = (edges[1:] > a) & (edges[:-1] < b)
            return float(counts[sel].max()) if sel.any() else 0.0

        left, right = under(x_lo, x_lo + reach), under(x_hi - reach, x_hi)
        on_right = right < left
        corner = (1, 0) if on_right else (0, 0)
        self._hist_legend.anchor(itemPos=corner, parentPos=corner, offset=(-5, 5) if on_right else (5, 5))
        top = max(self._hist_top * 1.2, min(left, right) / (1.0 - frac_h) * 1.05)
        self._set_range("goodputHistogramPlot", y=_outward(0.0, top, 10))

    def _set_breakdown_rows(self, keys: tuple[str, ...], scenario: Scenario | None = None) -> None:
        """Label the time breakdown's rows, one per hours key of ``keys`` (for ``scenario``'s model).

        The labels keep the axis to at most about half the plot's width (:func:`_breakdown_axis_limit`; elided
        beyond it, and the hover names the row in full): a long one ("detection + restart + swap + stalls") made
        the plot wider than its column in the three-across layout, and the column ran past the window's edge
        with every plot in it.
        """
        name = "timeBreakdownPlot"
        labels = [hours_label(k, scenario) for k in keys]
        axis = self.plot(name).getAxis("left")
        limit = _breakdown_axis_limit(self.widgets[name].width())
        metrics = QFontMetrics(axis.style.get("tickFont") or self.font())
        if max(metrics.horizontalAdvance(t) for t in labels) + 16 <= limit:
            shown, width = labels, None  # the axis sizes itself to them
        else:
            shown = [metrics.elidedText(t, Qt.TextElideMode.ElideRight, limit - 16) for t in labels]
            width = limit
        axis.setTicks([list(enumerate(shown))])
        axis.setWidth(width)
        # The plot back to its widget's width (it stays as wide as its widest labels made it until the widget is
        # resized), and its view box's width now: the bar labels are placed by it.
        view = self.widgets[name]
        view.centralWidget.setGeometry(view.range)
        self.plot(name).layout.activate()
        self._breakdown_shown = keys
        self._breakdown_labels = labels
        self._breakdown_width = limit

    def _breakdown_keys(self, res: ShowsMain) -> tuple[str, ...]:
        """The rows to show: today's five, the two of spares when this result or a pinned one has spares, the slow
        nodes' when one has fail-slow nodes, and the corruption rollbacks' when one finds silent corruption late."""
        shown = [res.main, *(p.result.main for p in self.pinned)]
        spares = SPARES_HOURS_KEYS if any(r.spares_run is not None for r in shown) else ()
        slow = (SLOW_HOURS_KEY,) if any(r.slow_hours is not None for r in shown) else ()
        sdc = (SDC_HOURS_KEY,) if any(r.sdc_hours is not None for r in shown) else ()
        return (*HOURS_KEYS, *spares, *slow, *sdc)

    def _show_breakdown(self, res: ShowsMain) -> None:
        keys = self._breakdown_keys(res)
        n = len(keys)
        labels = [hours_label(k, res.main.scenario) for k in keys]
        limit = _breakdown_axis_limit(self.widgets["timeBreakdownPlot"].width())
        if keys != self._breakdown_shown or labels != self._breakdown_labels or limit != self._breakdown_width:
            self._set_breakdown_rows(keys, res.main.scenario)
        vals = _mean_hours(res, keys)
        for b in self.pinned:  # each pinned scenario's hours in the rows shown
            b.items["timeBreakdownPlot"].setOpts(
                x0=np.zeros(n), y=list(range(n)), width=_mean_hours(b.result, keys), height=0.7
            )
        self.time_bars.setOpts(
            x0=np.zeros(n), y=list(range(n)), width=vals, brushes=[pg.mkBrush(HOURS_COLORS[k]) for k in keys]
        )
        total = res.main.scenario.hours
        texts = [f" {fmt.count(v, 1)} h ({fmt.percent(v / total)}) " for v in vals]
        for i, t in enumerate(self.time_labels):
            t.setVisible(i < n)
        for t, text in zip(self.time_labels, texts):
            _set_text(t, text)
        # Scale to the losses so they stay readable, with room for each label after its bar; a bar
        # longer than that (useful compute, mostly) runs off the edge with its label inside it.
        view = max(self.plot("timeBreakdownPlot").getViewBox().width(), 50.0)
        room = [max(view - t.boundingRect().width() - 6, 0.25 * view) for t in self.time_labels]
        right = max([v * view / r for v, r in zip(vals[1:], room[1:])] + [1e-6])
        if vals[0] * view / room[0] <= 1.6 * right:
            right = max(right, vals[0] * view / room[0])
        right = _outward(0.0, right)[1]
        for i, (t, v, text) in enumerate(zip(self.time_labels, vals, texts)):
            inside = v * view / room[i] > right
            _set_text(t, text.rstrip() + " -> " if v > right else text)
            t.setAnchor((1, 0.5) if inside else (0, 0.5))
            t.setPos(min(v, right), i)
        self._set_range("timeBreakdownPlot", x=(0.0, right), y=(-0.6, n - 0.4))

    # -- values under the mouse --------------------------------------------------------------------
    def _sweep_point(self, x: float, gpus: bool) -> tuple | None:
        if self.result is None:
            return None
        s = self.result.by_gpus if gpus else self.result.by_interval
        i = nearest(np.log10(s.x), x)
        return s, i

    def _describe_interruptions(self, x: float, y: float) -> str:
        hit = self._sweep_point(x, True)
        if hit is None:
            return ""
        s, i = hit
        return (
            f"{fmt.count(s.x[i])} GPUs: {fmt.count(s.interruptions_mean[i], 1)} interruptions\n"
            f"p05-p95 {fmt.count(s.interruptions_p05[i])}-{fmt.count(s.interruptions_p95[i])} over "
            f"{fmt.count(s.trials[i])} trials; exact {fmt.count(s.interruptions_expected[i], 1)}"
        )

    def _describe_goodput_gpus(self, x: float, y: float) -> str:
        hit = self._sweep_point(x, True)
        if hit is None:
            return ""
        s, i = hit
        exact = s.goodput_expected[i]
        text = (
            f"{fmt.count(s.x[i])} GPUs: goodput {fmt.percent(s.goodput_mean[i])}\n"
            f"p05-p95 {fmt.percent(s.goodput_p05[i])}-{fmt.percent(s.goodput_p95[i])} over "
            f"{fmt.count(s.trials[i])} trials; "
            + (f"exact {fmt.percent(exact, 2)}" if np.isfinite(exact) else "no closed form")
        )
        sp = None if self.result is None else self.result.main.scenario.spares
        if sp is not None and not sp.is_todays and self.result is not None:
            if sp.spare_nodes is None:
                text += "\nunlimited spares at every size, as set"
            else:  # a finite pool keeps its share of the job's nodes (sweep.at_gpus)
                set_at = self.result.main.scenario.gpus
                there = at_gpus(self.result.main.scenario, int(s.x[i])).spares
                assert there is not None
                text += (
                    f"\n{fmt.plural(there.spare_nodes or 0, 'spare node')} here: the pool keeps its share of the nodes "
                    f"({fmt.plural(sp.spare_nodes, 'node')} at the {fmt.count(set_at)} GPUs set)"
                )
        return text

    def _describe_interval(self, x: float, y: float) -> str:
        hit = self._sweep_point(x, False)
        if hit is None:
            return ""
        s, i = hit
        assert self.result is not None  # a sweep point was found in it
        fine, exact = self.result.exact_curve
        j = nearest(np.log10(fine), x)
        return (
            f"every {fmt.duration_min(s.x[i])}: goodput {fmt.percent(s.goodput_mean[i])} "
            f"(p05-p95 {fmt.percent(s.goodput_p05[i])}-{fmt.percent(s.goodput_p95[i])} over "
            f"{fmt.count(s.trials[i])} trials)\n"
            f"exact at {fmt.duration_min(fine[j])}: "
            + (fmt.percent(exact[j], 2) if math.isfinite(exact[j]) else "none (no closed form)")
        )

    def _describe_component(self, x: float, y: float) -> str:
        k = round(y)
        if not 0 <= k < len(self._comp_rows_shown):
            return ""
        name, expected, mean, p05, p95, category = self._comp_rows_shown[k]
        return (
            f"{name}{f' ({category})' if category else ''}: expected {fmt.count(expected, 1)}\n"
            f"Monte Carlo {fmt.count(mean, 1)} (p05-p95 {fmt.count(p05)}-{fmt.count(p95)})"
        )

    def _describe_histogram(self, x: float, y: float) -> str:
        edges, counts = self.hist.xData, self.hist.yData
        if edges is None or not len(counts) or not edges[0] <= x < edges[-1]:
            return ""
        i = min(int(np.searchsorted(edges, x, side="right")) - 1, len(counts) - 1)
        return f"goodput {edges[i]:.2f}-{edges[i + 1]:.2f}%: {int(counts[i]):,} trials"

    def _describe_breakdown(self, x: float, y: float) -> str:
        k = round(y)
        keys = self._breakdown_shown
        shown = self.main_shown
        if shown is None or not 0 <= k < len(keys):
            return ""
        vals = _mean_hours(shown, keys)
        total = shown.main.scenario.hours
        label = hours_label(keys[k], shown.main.scenario)
        return f"{label}: {fmt.count(vals[k], 1)} h ({fmt.percent(vals[k] / total, 2)})"

    # -- pinned scenarios -----------------------------------------------------------------
    @property
    def baseline(self) -> PlanResult | None:
        """The first pinned scenario's results (the one the summary compares with), or None."""
        return self.pinned[0].result if self.pinned else None

    def set_baseline(self, res: PlanResult | None) -> None:
        """Pin ``res`` alone (None: unpin everything)."""
        self.set_pinned([] if res is None else [(res.main.scenario.name, res)])

    def set_pinned(self, pins: Sequence[tuple[str, PlanResult]]) -> None:
        """Overlay each pinned result on every plot in its own colour (:data:`PIN_COLORS`, in order), with a
        legend entry naming it. They are drawn once, here; only their component bars follow the current
        results' rows."""
        for b in self.pinned:
            for name, item in b.items.items():
                legend = self.legends.get(name)
                if legend is not None:
                    legend.removeItem(item)
                self.plot(name).removeItem(item)
        self.pinned = []
        for i, (label, res) in enumerate(pins):
            color = PIN_COLORS[i % len(PIN_COLORS)]
            line = pen(color, 2, Qt.PenStyle.DotLine)
            outline = pen(color, 1.5, Qt.PenStyle.DashLine)
            g, iv = res.by_gpus, res.by_interval
            items: dict[str, pg.GraphicsObject] = {
                "interruptionsVsGpusPlot": pg.PlotDataItem(np.log10(g.x), _log_count(g.interruptions_mean), pen=line),
                "goodputVsGpusPlot": pg.PlotDataItem(np.log10(g.x), 100 * g.goodput_mean, pen=line),
                "goodputVsIntervalPlot": pg.PlotDataItem(np.log10(iv.x), 100 * iv.goodput_mean, pen=line),
                "componentsPlot": pg.BarGraphItem(
                    x0=[0], y=[0], height=0.7, width=[0], brush=pg.mkBrush(None), pen=outline
                ),
                "goodputHistogramPlot": pg.PlotDataItem(
                    *_histogram(100 * res.main.goodput), stepMode="center", pen=line
                ),
                "timeBreakdownPlot": pg.BarGraphItem(
                    x0=np.zeros(len(ALL_HOURS_KEYS)),
                    y=list(range(len(ALL_HOURS_KEYS))),
                    height=0.7,
                    width=_mean_hours(res),
                    brush=pg.mkBrush(None),
                    pen=outline,
                ),
            }
            text = f"pinned {i + 1}: {fmt.clean(label, 24)}"
            for name, item in items.items():
                self.plot(name).addItem(item)
                legend = self.legends.get(name)
                if legend is not None:
                    legend.addItem(item, text)
            self.pinned.append(_Pinned(label, res, color, items))
        self._align_baseline_components()
        if self.result is not None:  # ranges that make room for the pinned scenarios
            self._show_interval(self.result)
        if self.main_shown is not None:
            self._show_histogram(self.main_shown)
            self._show_components(self.main_shown)
            self._show_breakdown(self.main_shown)

    def _align_baseline_components(self) -> None:
        """Each pinned scenario's expected counts in the rows of the current bars (its "others" row sums
        the rest)."""
        if not self._comp_rows_shown:
            return
        named = [r[0] for r in self._comp_rows_shown]
        for b in self.pinned:
            sc = b.result.main.scenario
            base = {fmt.clean(c.name, 60): c.rate_per_gpu_hour * sc.gpus * sc.hours for c in sc.components}
            widths = [base.pop(n, 0.0) for n in named]
            if named and named[-1].endswith(" others") and named[-1] not in base:
                widths[-1] = sum(base.values())
            b.items["componentsPlot"].setOpts(
                x0=np.zeros(len(named)), y=np.arange(len(named)), width=widths, height=0.7
            )

    def curve_data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The data of the main item of a plot (for tests and exports)."""
        item = {
            "interruptionsVsGpusPlot": self.int_band.mean,
            "goodputVsGpusPlot": self.gp_band.mean,
            "goodputVsIntervalPlot": self.iv_band.mean,
            "goodputHistogramPlot": self.hist,
        }.get(name)
        if item is not None:
            x, y = item.getData()
            return np.asarray(x), np.asarray(y)
        bars = self.comp_bars if name == "componentsPlot" else self.time_bars
        return np.asarray(bars.opts["y"]), np.asarray(bars.opts["width"])

    def component_bars(self) -> dict[str, float]:
        """The components plot's rows: name (as shown, or "N others") -> bar length."""
        return {r[0]: r[1] for r in self._comp_rows_shown}
