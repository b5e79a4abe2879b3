"""The six result plots. Every plot item is created once; updates only call ``setData``/``setOpts``."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGridLayout, QWidget

from ..core import fmt
from ..core.results import HOURS_KEYS
from ..core.sweep import GUIDE_GPUS
from .compute import PlanResult

__all__ = ["PlotsPanel", "CATEGORY_COLORS", "PLOT_NAMES"]

# Tableau 10: distinguishable in light and dark themes.
_PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
            "#bab0ac"]
CATEGORY_COLORS = {"GPU": _PALETTE[2], "Dependency": _PALETTE[0], "Network": _PALETTE[1],
                   "Unplanned Maintenance": _PALETTE[6], "Host": _PALETTE[3], "Unknown": _PALETTE[9]}
HOURS_LABELS = {"useful": "useful compute", "checkpoint": "checkpoint writes", "lost_work": "lost work",
                "recovery": "detection + restart", "planned_restart": "planned restarts"}
HOURS_COLORS = {"useful": _PALETTE[4], "checkpoint": _PALETTE[0], "lost_work": _PALETTE[2],
                "recovery": _PALETTE[1], "planned_restart": _PALETTE[6]}
#: objectName -> title, in layout order.
PLOT_NAMES = {
    "interruptionsVsGpusPlot": "Unplanned interruptions vs GPU count",
    "goodputVsGpusPlot": "Goodput vs GPU count",
    "goodputVsIntervalPlot": "Goodput vs checkpoint interval",
    "componentsPlot": "By component (current scenario)",
    "goodputHistogramPlot": "Goodput over trials (current scenario)",
    "timeBreakdownPlot": "Where the time goes (current scenario)",
}


def _log_count(v: np.ndarray) -> np.ndarray:
    """log10 of counts, with zero shown at 0.1 so a log axis can hold it."""
    return np.log10(np.maximum(np.asarray(v, dtype=float), 0.1))


PLOT_ORDER = list(PLOT_NAMES)


def _histogram(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bin edges and counts for a step plot of per-trial values (about 1.5 sqrt(n) bins, 10 to 80)."""
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-9:
        lo, hi = lo - 0.05, hi + 0.05
    counts, edges = np.histogram(values, bins=int(np.clip(np.sqrt(values.size) * 1.5, 10, 80)), range=(lo, hi))
    return edges, counts


def _mean_hours(res: PlanResult) -> np.ndarray:
    hours = res.main.hours_per_trial()
    return np.array([float(hours[k].mean()) for k in HOURS_KEYS])


def category_color(category: str, index: int = 0) -> str:
    return CATEGORY_COLORS.get(category, _PALETTE[(index + 4) % len(_PALETTE)])


class HumanAxis(pg.AxisItem):
    """Tick labels for people: 1 k, 16 k, 1 M.

    With ``log10=True`` the items are plotted at log10 of their values (this module does the transform
    itself, so bands, markers and lines all share one coordinate system) and ticks show the values.
    """

    def __init__(self, orientation: str, log10: bool = False) -> None:
        super().__init__(orientation)
        self.log10 = log10
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 - pyqtgraph API
        if not self.log10:
            return super().tickValues(minVal, maxVal, size)
        lo, hi = math.floor(minVal), math.ceil(maxVal)
        majors = [float(v) for v in range(lo, hi + 1)]
        minors = [math.log10(m) + v for v in range(lo, hi + 1) for m in (2, 5)]
        if len(majors) <= 3:
            return [(1.0, majors), (0.3, minors)]
        return [(1.0, majors), (0.3, [])]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph API
        if self.log10:
            return [fmt.compact(10.0 ** v).replace(" ", "") for v in values]
        if spacing >= 1:
            return [f"{v:,.0f}" for v in values]
        return super().tickStrings(values, scale, spacing)


def _pen(color: str, width: float = 2.0, style=Qt.PenStyle.SolidLine, alpha: int = 255) -> pg.QtGui.QPen:
    c = QColor(color)
    c.setAlpha(alpha)
    pen = pg.mkPen(c, width=width)
    pen.setStyle(style)
    pen.setCosmetic(True)
    return pen


def _brush(color: str, alpha: int) -> pg.QtGui.QBrush:
    c = QColor(color)
    c.setAlpha(alpha)
    return pg.mkBrush(c)


class _Band:
    """Mean curve with a p05-p95 band, plus a faint baseline copy."""

    def __init__(self, plot: pg.PlotItem, color: str, name: str) -> None:
        self.lo = plot.plot(pen=None)
        self.hi = plot.plot(pen=None)
        self.fill = pg.FillBetweenItem(self.lo, self.hi, brush=_brush(color, 60))
        plot.addItem(self.fill)
        self.mean = plot.plot(pen=_pen(color), name=name, antialias=True)
        self.base = plot.plot(pen=_pen(color, 1.5, Qt.PenStyle.DashDotLine, 110))
        self.base.setVisible(False)

    def set(self, x, lo, mean, hi) -> None:
        self.lo.setData(x, lo)
        self.hi.setData(x, hi)
        self.mean.setData(x, mean)


class PlotsPanel(QWidget):
    """A 3 x 2 grid of the result plots."""

    def __init__(self) -> None:
        super().__init__()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(4)
        self.widgets: dict[str, pg.PlotWidget] = {}
        for i, (name, title) in enumerate(PLOT_NAMES.items()):
            log_x = name in ("interruptionsVsGpusPlot", "goodputVsGpusPlot", "goodputVsIntervalPlot")
            axes = {"bottom": HumanAxis("bottom", log10=log_x),
                    "left": HumanAxis("left", log10=name == "interruptionsVsGpusPlot")}
            if name in ("componentsPlot", "timeBreakdownPlot"):
                axes["left"] = pg.AxisItem("left")
            w = pg.PlotWidget(axisItems=axes)
            w.setObjectName(name)
            w.setMinimumSize(280, 200)
            w.setTitle(title)
            # Grids are costly to repaint in software (alpha-blended lines across the whole plot): only
            # the goodput plots get one, horizontal, to read percentages off.
            if name in ("goodputVsGpusPlot", "goodputVsIntervalPlot"):
                w.showGrid(x=False, y=True, alpha=0.15)
            w.getPlotItem().setMenuEnabled(True)
            self.widgets[name] = w
            grid.addWidget(w, i // 2, i % 2)
        self._build_gpu_plots()
        self._build_interval_plot()
        self._build_components_plot()
        self._build_histogram()
        self._build_breakdown()
        self.baseline: PlanResult | None = None
        self._comp_order: list[str] = []

    def plot(self, name: str) -> pg.PlotItem:
        return self.widgets[name].getPlotItem()

    # -- construction ----------------------------------------------------------------
    def _guides(self, p: pg.PlotItem) -> None:
        for n in GUIDE_GPUS:
            line = pg.InfiniteLine(math.log10(n), angle=90, pen=_pen("#888888", 1, Qt.PenStyle.DotLine),
                                   label=f"{n:,}", labelOpts={"position": 0.92, "color": "#888888"})
            p.addItem(line, ignoreBounds=True)

    def _build_gpu_plots(self) -> None:
        p1 = self.plot("interruptionsVsGpusPlot")
        p1.setLabel("bottom", "GPUs")
        p1.setLabel("left", "interruptions in the window")
        self._guides(p1)
        self.int_band = _Band(p1, _PALETTE[0], "Monte Carlo mean (p05-p95 band)")
        self.int_marker = pg.ScatterPlotItem(size=11, brush=pg.mkBrush(_PALETTE[2]), pen=pg.mkPen("w", width=1))
        p1.addItem(self.int_marker)

        p2 = self.plot("goodputVsGpusPlot")
        p2.setLabel("bottom", "GPUs")
        p2.setLabel("left", "goodput", units="%")
        p2.getAxis("left").enableAutoSIPrefix(False)
        self._guides(p2)
        self.target = pg.InfiniteLine(90, angle=0, pen=_pen(_PALETTE[4], 1, Qt.PenStyle.DashLine),
                                      label="90% target", labelOpts={"position": 0.1, "color": _PALETTE[4]})
        p2.addItem(self.target, ignoreBounds=True)
        p2.addLegend(offset=(-10, 30), labelTextSize="8pt")
        self.gp_band = _Band(p2, _PALETTE[0], "Monte Carlo mean (p05-p95 band)")
        self.gp_exact = p2.plot(pen=_pen("#888888", 1.5, Qt.PenStyle.DashLine), name="exact expectation")
        self.gp_marker = pg.ScatterPlotItem(size=11, brush=pg.mkBrush(_PALETTE[2]), pen=pg.mkPen("w", width=1))
        p2.addItem(self.gp_marker)

    def _build_interval_plot(self) -> None:
        p3 = self.plot("goodputVsIntervalPlot")
        p3.setLabel("bottom", "checkpoint interval", units="min")
        p3.getAxis("bottom").enableAutoSIPrefix(False)
        p3.setLabel("left", "goodput", units="%")
        p3.getAxis("left").enableAutoSIPrefix(False)
        p3.addLegend(offset=(-10, -40), labelTextSize="8pt")
        self.iv_band = _Band(p3, _PALETTE[0], "Monte Carlo mean (p05-p95 band)")
        self.iv_exact = p3.plot(pen=_pen("#888888", 1.5, Qt.PenStyle.DashLine), name="exact expectation")
        self.iv_current = pg.InfiniteLine(0, angle=90, pen=_pen(_PALETTE[2], 2),
                                          label="current", labelOpts={"position": 0.1, "color": _PALETTE[2]})
        self.iv_young = pg.InfiniteLine(0, angle=90, pen=_pen(_PALETTE[1], 1, Qt.PenStyle.DashLine),
                                        label="Young", labelOpts={"position": 0.85, "color": _PALETTE[1]})
        self.iv_daly = pg.InfiniteLine(0, angle=90, pen=_pen(_PALETTE[6], 1, Qt.PenStyle.DashLine),
                                       label="Daly", labelOpts={"position": 0.7, "color": _PALETTE[6]})
        for line in (self.iv_current, self.iv_young, self.iv_daly):
            p3.addItem(line, ignoreBounds=True)

    def _build_components_plot(self) -> None:
        p4 = self.plot("componentsPlot")
        p4.setLabel("bottom", "interruptions in the window (mean over trials)")
        p4.invertY(True)
        self.comp_bars = pg.BarGraphItem(x0=[0], y=[0], height=0.7, width=[0])
        self.comp_base = pg.BarGraphItem(x0=[0], y=[0], height=0.7, width=[0], brush=pg.mkBrush(None),
                                         pen=_pen("#888888", 1, Qt.PenStyle.DashLine))
        self.comp_base.setVisible(False)
        p4.addItem(self.comp_bars)
        p4.addItem(self.comp_base)

    def _build_histogram(self) -> None:
        p5 = self.plot("goodputHistogramPlot")
        p5.setLabel("bottom", "goodput", units="%")
        p5.getAxis("bottom").enableAutoSIPrefix(False)
        p5.setLabel("left", "trials")
        self.hist = p5.plot(stepMode="center", fillLevel=0, brush=_brush(_PALETTE[0], 120), pen=_pen(_PALETTE[0], 1))
        self.hist_base = p5.plot(stepMode="center", pen=_pen("#888888", 1.5, Qt.PenStyle.DashLine))
        self.hist_base.setVisible(False)
        self.hist_exact = pg.InfiniteLine(0, angle=90, pen=_pen("#888888", 1.5, Qt.PenStyle.DashLine),
                                          label="exact", labelOpts={"position": 0.9, "color": "#888888"})
        p5.addItem(self.hist_exact, ignoreBounds=True)

    def _build_breakdown(self) -> None:
        p6 = self.plot("timeBreakdownPlot")
        p6.setLabel("bottom", "hours of the window (mean over trials)")
        p6.invertY(True)
        ticks = [(i, HOURS_LABELS[k]) for i, k in enumerate(HOURS_KEYS)]
        p6.getAxis("left").setTicks([ticks])
        brushes = [pg.mkBrush(HOURS_COLORS[k]) for k in HOURS_KEYS]
        self.time_bars = pg.BarGraphItem(x0=[0] * 5, y=list(range(5)), height=0.7, width=[0] * 5, brushes=brushes)
        self.time_base = pg.BarGraphItem(x0=[0] * 5, y=list(range(5)), height=0.7, width=[0] * 5,
                                         brush=pg.mkBrush(None), pen=_pen("#888888", 1, Qt.PenStyle.DashLine))
        self.time_base.setVisible(False)
        p6.addItem(self.time_bars)
        p6.addItem(self.time_base)
        fg = pg.getConfigOption("foreground")
        self.time_labels = [pg.TextItem(anchor=(0, 0.5), color=fg) for _ in HOURS_KEYS]
        for t in self.time_labels:
            p6.addItem(t, ignoreBounds=True)

    # -- updates -------------------------------------------------------------------------
    def show_result(self, res: PlanResult) -> None:
        """Draw ``res`` into the existing items, all at once."""
        for step in self.render_steps(res):
            step()

    def render_steps(self, res: PlanResult) -> list:
        """The updates for ``res`` in two steps: the top three plots, then the rest.

        The window runs them in separate turns of the event loop. Each step holds back repaints until
        its plots are all updated, so they are repainted together once (otherwise each plot's scene
        triggers a repaint of its own); and repainting half the plots at a time keeps the event loop
        from stalling on a repaint of all six.
        """
        def top() -> None:
            self._show_gpus(res)
            self._show_interval(res)

        def bottom() -> None:
            self._show_components(res)
            self._show_histogram(res)
            self._show_breakdown(res)

        return [self._batched(top, PLOT_ORDER[:3]), self._batched(bottom, PLOT_ORDER[3:])]

    def _batched(self, update, names) -> callable:
        def run() -> None:
            widgets = [self.widgets[n] for n in names]
            for w in widgets:
                w.setUpdatesEnabled(False)
            try:
                update()
            finally:
                for w in widgets:
                    w.setUpdatesEnabled(True)

        return run

    def _show_gpus(self, res: PlanResult) -> None:
        main, g = res.main, res.by_gpus
        sc = main.scenario
        lx = np.log10(g.x)
        self.int_band.set(lx, _log_count(g.interruptions_p05), _log_count(g.interruptions_mean),
                          _log_count(g.interruptions_p95))
        self.int_marker.setData([math.log10(sc.gpus)], [_log_count(np.array([main.trials.unplanned.mean()]))[0]])
        self.gp_band.set(lx, 100 * g.goodput_p05, 100 * g.goodput_mean, 100 * g.goodput_p95)
        self.gp_exact.setData(lx, 100 * g.goodput_expected)
        self.gp_marker.setData([math.log10(sc.gpus)], [100 * float(main.goodput.mean())])
        span = (float(lx[0]), float(max(lx[-1], math.log10(sc.gpus))))
        for name in ("interruptionsVsGpusPlot", "goodputVsGpusPlot"):
            self.plot(name).setXRange(*span, padding=0.02)

    def _show_interval(self, res: PlanResult) -> None:
        iv, main = res.by_interval, res.main
        self.iv_band.set(np.log10(iv.x), 100 * iv.goodput_p05, 100 * iv.goodput_mean, 100 * iv.goodput_p95)
        fine, exact = res.exact_curve
        self.iv_exact.setData(np.log10(fine), 100 * exact)
        self.iv_current.setValue(math.log10(main.interval_min))
        self.iv_young.setValue(math.log10(main.optimal.young))
        self.iv_daly.setValue(math.log10(main.optimal.daly))
        self.plot("goodputVsIntervalPlot").setXRange(float(np.log10(fine[0])), float(np.log10(fine[-1])), padding=0.02)

    def _show_components(self, res: PlanResult) -> None:
        comps = res.main.scenario.components
        means = res.main.trials.by_component.mean(axis=0)
        order = np.argsort(-means, kind="stable")
        cats = list(dict.fromkeys(c.category for c in comps))
        brushes = [pg.mkBrush(category_color(comps[i].category, cats.index(comps[i].category))) for i in order]
        self.comp_bars.setOpts(x0=np.zeros(len(order)), y=np.arange(len(order)), width=means[order],
                               brushes=brushes, height=0.7)
        self._comp_order = [comps[i].name for i in order]
        self._align_baseline_components()
        ticks = [(k, f"{comps[i].name} ({comps[i].category})") for k, i in enumerate(order)]
        p4 = self.plot("componentsPlot")
        p4.getAxis("left").setTicks([ticks])
        p4.setXRange(0, max(float(means.max()), 1e-9) * 1.08, padding=0)
        p4.setYRange(-0.6, len(order) - 0.4, padding=0)

    def _show_histogram(self, res: PlanResult) -> None:
        edges, counts = _histogram(100 * res.main.goodput)
        self.hist.setData(edges, counts)
        self.hist_exact.setValue(100 * res.main.expected.goodput)

    def _show_breakdown(self, res: PlanResult) -> None:
        vals = _mean_hours(res)
        self.time_bars.setOpts(x0=np.zeros(5), width=vals)
        total = res.main.scenario.hours
        # Scale to the losses so they stay readable; a longer bar runs off the edge, its label says so.
        right = max(1.6 * float(vals[1:].max()), 1e-6)
        if vals[0] < right:
            right = max(right, 1.6 * vals[0])
        for t, v, key in zip(self.time_labels, vals, HOURS_KEYS):
            beyond = v > right / 1.6
            t.setText(f" {fmt.count(v, 1)} h ({fmt.percent(v / total)}){' ->' if v > right else ''}")
            t.setAnchor((1, 0.5) if beyond else (0, 0.5))
            t.setPos(min(v, right), HOURS_KEYS.index(key))
        p6 = self.plot("timeBreakdownPlot")
        p6.setXRange(0, right, padding=0)
        p6.setYRange(-0.6, len(HOURS_KEYS) - 0.4, padding=0)

    # -- baseline overlay --------------------------------------------------------------------
    def set_baseline(self, res: PlanResult | None) -> None:
        """Pin ``res`` as a faint overlay on every plot (None removes it). It is drawn once, here; only
        its component bars follow the current results' order."""
        self.baseline = b = res
        items = (self.int_band.base, self.gp_band.base, self.iv_band.base, self.comp_base, self.hist_base,
                 self.time_base)
        for item in items:
            item.setVisible(b is not None)
        if b is None:
            return
        g, iv = b.by_gpus, b.by_interval
        self.int_band.base.setData(np.log10(g.x), _log_count(g.interruptions_mean))
        self.gp_band.base.setData(np.log10(g.x), 100 * g.goodput_mean)
        self.iv_band.base.setData(np.log10(iv.x), 100 * iv.goodput_mean)
        self._align_baseline_components()
        self.hist_base.setData(*_histogram(100 * b.main.goodput))
        self.time_base.setOpts(x0=np.zeros(5), width=_mean_hours(b))

    def _align_baseline_components(self) -> None:
        """Put the baseline's component bars in the rows of the current results' sorted bars."""
        b = self.baseline
        if b is None:
            return
        names = self._comp_order or [c.name for c in b.main.scenario.components]
        base_means = dict(zip((c.name for c in b.main.scenario.components), b.main.trials.by_component.mean(axis=0)))
        widths = np.array([base_means.get(n, 0.0) for n in names])
        self.comp_base.setOpts(x0=np.zeros(len(names)), y=np.arange(len(names)), width=widths, height=0.7)

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
