"""Spare-pool sizing window (View > Spare-Pool Sizing): goodput, the chance a failure finds no spare and the
total cost (the job's lost GPU-hours plus the pool's GPU-hours, at the scenario's price) against the number
of spare nodes, with the cheapest pool and the pool where 99 % of failures find a spare marked.

The controls edit one :class:`~planner_gui.core.model.spares.Spares`; every change starts a computation in the
dialog's compute process (:mod:`.jobs`; the window never waits for it; a newer request supersedes an older one).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from ..core.analysis.sizing import SizingResult, check_spares_fit
from ..core.model.scenario import Scenario
from ..core.model.spares import DEFAULT_REPAIR_HOURS, RECOVERY_MODES, Spares, repair_hours_of, spares_params
from ..core.model.specs import labelled
from ..core.theory.params import resolve
from ..core.theory.spares import repair_quantile
from ..core.util import fmt
from .collector import collect_on_gui_thread
from .jobs import JobRunner
from .plot_items import grid, plot_item, plots_in_turns
from .widgets import DoubleSpinBox, SpinBox

__all__ = ["SparesDialog"]

#: Trials per spare count in the window (the command line uses the scenario's).
WINDOW_TRIALS = 200
#: Spare counts tried.
WINDOW_POINTS = 15
REPAIR_CATEGORIES = ("GPU", "Host", "Network", "Unplanned Maintenance")


def opened_for(what: str, sc: Scenario) -> str:
    """A spares window's title: what it shows, and for which scenario (the one it was opened on; it does not
    follow later changes of the main window)."""
    return f"{what}: {sc.gpus:,} GPUs, {sc.days:g} days (the scenario when opened)"


class SparesDialog(QDialog):
    """The sizing plots for one scenario and the spares controls."""

    def __init__(self, scenario: Scenario, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        collect_on_gui_thread()  # its compute link's threads must never run Qt destructors (see .collector)
        self.setWindowTitle(opened_for("Spare-Pool Sizing", scenario))
        self.setObjectName("sparesDialog")
        self.scenario = scenario
        # Start from the scenario's own spares (the pool size is what the dialog varies).
        self.spares = scenario.spares or Spares()
        self.sizing_result: SizingResult | None = None
        self._jobs = JobRunner(self, self._finished, self._progress)
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self._start)

        form = QFormLayout()
        self.controls: dict[str, QWidget] = {}

        def spin(name: str, label: str, lo: float, hi: float, value: float, step: float, decimals: int = 1) -> None:
            w = DoubleSpinBox()
            w.setObjectName(name)
            w.setRange(lo, hi)
            w.setDecimals(decimals)
            w.setSingleStep(step)
            w.setValue(value)
            w.valueChanged.connect(self._changed)
            form.addRow(label, w)
            self.controls[name] = w

        spin("swap_min", "Swap time (min)", 0, 100_000, self.spares.swap_min, 1)
        for cat in REPAIR_CATEGORIES:
            spin(f"repair:{cat}", f"{cat} repair (h)", 0, 100_000, repair_hours_of(cat, self.spares), 1)
            self.controls[f"repair:{cat}"].setToolTip(DEFAULT_REPAIR_HOURS[cat][1])
        law = QComboBox()
        law.setObjectName("repair_law")
        law.addItems(["exponential", "lognormal"])
        law.setCurrentText("exponential" if self.spares.repair_sigma is None else "lognormal")
        law.setToolTip("Exponential repair times, or lognormal with the sigma below (0: every repair lasts its mean).")
        law.currentTextChanged.connect(self._changed)
        form.addRow("Repair times", law)
        self.controls["repair_law"] = law
        spin("repair_sigma", "Repair sigma (lognormal)", 0, 4, self.spares.repair_sigma or 1.0, 0.1, 2)
        mode = QComboBox()
        mode.setObjectName("recovery_mode")
        mode.addItems(list(RECOVERY_MODES))
        mode.setCurrentText(self.spares.recovery_mode)
        mode.currentTextChanged.connect(self._changed)
        form.addRow("Recovery mode", mode)
        self.controls["recovery_mode"] = mode
        rep = SpinBox()
        rep.setObjectName("replica_gpus")
        rep.setRange(scenario.gpus_per_node, max(scenario.gpus_per_node, scenario.gpus))
        rep.setSingleStep(scenario.gpus_per_node)
        rep.setValue(min(self.spares.replica_gpus, max(scenario.gpus_per_node, scenario.gpus)))
        rep.valueChanged.connect(self._changed)
        form.addRow("Replica GPUs (continue)", rep)
        self.controls["replica_gpus"] = rep
        spin("continue_stall_min", "Continue stall (min)", 0, 10_000, self.spares.continue_stall_min, 0.5)
        shrink = SpinBox()
        shrink.setObjectName("min_gpus")
        shrink.setRange(0, scenario.gpus)
        shrink.setSpecialValueText("no shrinking")
        shrink.setValue(self.spares.min_gpus or 0)
        shrink.valueChanged.connect(self._changed)
        form.addRow("Shrink to GPUs", shrink)
        self.controls["min_gpus"] = shrink

        self.summary = QLabel("computing...")
        self.summary.setObjectName("sparesSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.summary)
        left.addStretch(1)

        # The plots are built a turn of the event loop at a time once the dialog is up (widgets.in_turns): all
        # three at once held the window 60-110 ms. A result that comes first is drawn when they are (``ready``).
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setObjectName("sparesPlots")
        self.ready = False
        self._pending: SizingResult | None = None
        self._blank = False  # inputs that cannot be computed came before the plots
        self.legends: list[pg.LegendItem] = []
        self._y_set: dict[int, tuple[float, ...]] = {}  # the y range each plot was given room for its legend in
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.marks: dict[str, pg.ScatterPlotItem] = {}
        plots_in_turns(self, self.plots, (self._build_goodput, self._build_nospare, self._build_cost), self._built)

        row = QHBoxLayout(self)
        side = QWidget()
        side.setLayout(left)
        side.setMaximumWidth(340)
        row.addWidget(side)
        row.addWidget(self.plots, 1)
        self.resize(1100, 720)
        self._start()

    # -- plots -------------------------------------------------------------------------------------
    def _plot(self, title: str, unit: str) -> pg.PlotItem:
        plot = plot_item(title)
        plot.setLabel("bottom", "spare nodes")
        plot.setLabel("left", unit)
        grid(plot)
        self.legends.append(plot.addLegend(offset=(-10, 10)))
        plot.vb.sigResized.connect(lambda _vb, p=plot: self._room_for_legend(p, resized=True))
        return plot

    def _room_for_legend(self, plot: pg.PlotItem, resized: bool = False) -> None:
        """Set ``plot``'s y range so that its legend (top right) sits above every curve and marker: the band it
        takes, its height and a margin in pixels, is kept clear above the highest point. (A rising goodput curve
        and a falling cost curve ran under their legends, and the cost legend's star sample, on the curve, read as
        a second cheapest pool.)"""
        legend = plot.legend
        if resized and tuple(plot.vb.viewRange()[1]) != self._y_set.get(id(plot)):
            return  # (the planner zoomed or panned: a resize keeps their view)
        points = [(x, y) for item in plot.listDataItems() if (xy := item.getData())[0] is not None for x, y in zip(*xy)]
        points = [(float(x), float(y)) for x, y in points if np.isfinite(x) and np.isfinite(y)]
        height = plot.vb.height()
        if legend is None or not legend.isVisible() or not points or height <= 0:
            return
        ys = [y for _, y in points]
        lo, hi = min(0.0, min(ys)), max(ys)
        hi = hi if hi > lo else lo + 1.0
        pad = 0.03 * (hi - lo)  # (a curve at 0 stays off the axis)
        plot.setYRange(lo - pad, hi + pad, padding=0)
        corner = plot.vb.mapSceneToView(legend.sceneBoundingRect().bottomLeft())
        margin = 8.0 * (hi - lo + 2 * pad) / height  # (8 pixels)
        if any(x >= corner.x() and y >= corner.y() - margin for x, y in points):  # under the legend: room above
            band = min(0.8, (legend.boundingRect().height() + 18.0) / height)  # (its offset and a margin)
            plot.setYRange(lo - pad, (hi + pad - band * (lo - pad)) / (1.0 - band), padding=0)
        self._y_set[id(plot)] = tuple(plot.vb.viewRange()[1])

    def _build_goodput(self) -> pg.PlotItem:
        self.plot_goodput = self._plot("Goodput", "%")
        self.curves["goodput"] = self.plot_goodput.plot(name="goodput (Monte Carlo)", pen=pg.mkPen("#1f77b4", width=2))
        return self.plot_goodput

    def _build_nospare(self) -> pg.PlotItem:
        self.plot_nospare = self._plot("Failures that find no spare", "%")
        self.curves["nospare"] = self.plot_nospare.plot(name="Monte Carlo", pen=pg.mkPen("#d62728", width=2))
        self.curves["nospare_exact"] = self.plot_nospare.plot(
            name="M/G/infinity", pen=pg.mkPen("#555555", width=1, style=Qt.PenStyle.DashLine)
        )
        return self.plot_nospare

    def _build_cost(self) -> pg.PlotItem:
        self.plot_cost = self._plot("Total cost: lost GPU-hours + spare pool", "$M")
        self.curves["cost"] = self.plot_cost.plot(name="total cost", pen=pg.mkPen("#2ca02c", width=2))
        self.curves["pool_cost"] = self.plot_cost.plot(
            name="spare pool alone", pen=pg.mkPen("#9467bd", width=1, style=Qt.PenStyle.DashLine)
        )
        # A pool with a price of its own (bought or rented) beside what its GPU-hours would cost at the price per
        # GPU-hour (today's way to cost it): named only when drawn.
        self.curves["pool_gpu_hours"] = pg.PlotDataItem(pen=pg.mkPen("#9467bd", width=1, style=Qt.PenStyle.DotLine))
        self.plot_cost.addItem(self.curves["pool_gpu_hours"])
        self.marks = {
            # Not the cost curve's green: on the curve a green dot could not be told from it, in the legend
            # neither (the legend's sample sat on a line of the same colour).
            "cheapest": pg.ScatterPlotItem(
                name="cheapest pool", symbol="star", size=15, brush=pg.mkBrush("#ffbf00"), pen=pg.mkPen("#3d2e00")
            ),
            "target": pg.ScatterPlotItem(name="99% find a spare", symbol="t", size=12, brush=pg.mkBrush("#ff7f0e")),
        }
        self.plot_cost.addItem(self.marks["cheapest"])
        self.plot_cost.addItem(self.marks["target"])
        # Four entries in one column reached down to the flat end of the cost curve, and the legend's marker
        # samples sat among the real markers: two columns keep the legend above the curve.
        self.legends[2].setColumnCount(2)
        return self.plot_cost

    def _built(self) -> None:
        self.ready = True
        if self._pending is not None:
            self._show(self._pending)
        elif self._blank:
            self._clear()

    # -- inputs ------------------------------------------------------------------------------------
    def _read(self) -> Spares:
        c = self.controls
        lognormal = c["repair_law"].currentText() == "lognormal"  # type: ignore[attr-defined]
        sigma = c["repair_sigma"].value()  # type: ignore[attr-defined]
        shrink = c["min_gpus"].value()  # type: ignore[attr-defined]
        return dataclasses.replace(
            self.spares,
            swap_min=float(c["swap_min"].value()),  # type: ignore[attr-defined]
            repair_hours=self._repairs(),
            repair_sigma=float(sigma) if lognormal else None,
            recovery_mode=c["recovery_mode"].currentText(),  # type: ignore[attr-defined]
            replica_gpus=int(c["replica_gpus"].value()),  # type: ignore[attr-defined]
            continue_stall_min=float(c["continue_stall_min"].value()),  # type: ignore[attr-defined]
            min_gpus=None if shrink == 0 else int(shrink),
        )

    def _repairs(self) -> tuple[tuple[str, float], ...]:
        """The repair times that differ from the defaults (the defaults are not written out), and the
        scenario's own for categories the dialog has no box for."""
        out = [(c, h) for c, h in self.spares.repair_hours if c not in REPAIR_CATEGORIES]
        for cat in REPAIR_CATEGORIES:
            hours = float(self.controls[f"repair:{cat}"].value())  # type: ignore[attr-defined]
            if hours != DEFAULT_REPAIR_HOURS[cat][0]:
                out.append((cat, hours))
        return tuple(out)

    def _changed(self, *_: object) -> None:
        self.spares = self._read()
        self._follow_mode()
        self.summary.setText("computing...")
        self._timer.start()

    # -- computation -------------------------------------------------------------------------------
    def _start(self) -> None:
        sc, sp = self.scenario.replace(trials=min(self.scenario.trials, WINDOW_TRIALS)), self.spares
        self._follow_mode()
        try:
            check_spares_fit(sc, sp)
        except ValueError as exc:
            self._jobs.cancel()
            self._clear()
            self.summary.setText(f"Cannot compute: {labelled(str(exc))}")
            return
        self._jobs.run("spares_sizing", sc, sp, WINDOW_POINTS)  # in its compute process (see .jobs)

    def _progress(self, fraction: float) -> None:
        """How far the sizing has got (a large cluster's takes minutes on a busy machine)."""
        if self._jobs.busy:
            self.summary.setText(f"computing ({fmt.percent(fraction)} done)...")

    def _finished(self, req: int, result: object) -> None:
        if req != self._jobs.request:
            return  # superseded
        if isinstance(result, Exception):
            if type(result).__name__ != "Cancelled":
                self._clear()
                self.summary.setText(f"Cannot compute: {labelled(str(result))}")
                QMessageBox.warning(self, "Spare-pool sizing", f"Cannot compute: {labelled(str(result))}")
            return
        assert isinstance(result, SizingResult)
        self._show(result)

    def _show(self, result: SizingResult) -> None:
        """Draw a result (once the plots are built; ``sizing_result`` is the one drawn)."""
        self._pending, self._blank = result, False
        if self.ready:
            self.sizing_result = result
            self._draw(result)

    def _clear(self) -> None:
        """No curves (and no legend naming them) for inputs that cannot be computed: old curves would show
        other inputs."""
        self.sizing_result = None
        self._pending, self._blank = None, True
        if not self.ready:
            return
        for curve in self.curves.values():
            curve.setData([], [])
        for mark in self.marks.values():
            mark.setData([], [])
        for legend in self.legends:
            legend.setVisible(False)

    def _follow_mode(self) -> None:
        """Shrinking applies in restart mode only; sigma to lognormal repairs only."""
        self.controls["min_gpus"].setEnabled(self.spares.recovery_mode == "restart")
        self.controls["repair_sigma"].setEnabled(self.spares.repair_sigma is not None)

    def _draw(self, r: SizingResult) -> None:
        for legend in self.legends:
            legend.setVisible(True)
        x = r.spare_nodes.astype(float)
        self.curves["goodput"].setData(x, 100 * r.goodput)
        self.curves["nospare"].setData(x, 100 * r.p_no_spare)
        self.curves["nospare_exact"].setData(x, 100 * r.p_no_spare_expected)
        # The legend names the M/G/infinity line only where it is drawn (no closed form with a burn-in, say).
        exact = bool(np.isfinite(r.p_no_spare_expected).any())
        legend, curve = self.legends[1], self.curves["nospare_exact"]
        named = any(sample.item is curve for sample, _ in legend.items)
        if exact and not named:
            legend.addItem(curve, "M/G/infinity")
        elif not exact and named:
            legend.removeItem(curve)
        self.curves["cost"].setData(x, r.total_cost_usd / 1e6)
        self.curves["pool_cost"].setData(x, r.pool_cost_usd / 1e6)
        priced = self.spares.priced
        idle = self.curves["pool_gpu_hours"]
        idle.setData(x, r.spare_gpu_hours * self.scenario.gpu_hour_cost_usd / 1e6) if priced else idle.setData([], [])
        idle.setVisible(priced)
        named = any(sample.item is idle for sample, _ in self.legends[2].items)
        if priced and not named:
            self.legends[2].addItem(idle, "pool as GPU-hours at the price")
        elif not priced and named:
            self.legends[2].removeItem(idle)
        i = int(np.flatnonzero(r.spare_nodes == r.cheapest)[0])
        self.marks["cheapest"].setData([x[i]], [r.total_cost_usd[i] / 1e6])
        if r.meets_target is not None:
            j = int(np.flatnonzero(r.spare_nodes == r.meets_target)[0])
            self.marks["target"].setData([x[j]], [r.total_cost_usd[j] / 1e6])
        else:
            self.marks["target"].setData([], [])
        _, interval = resolve(self.scenario)
        p = spares_params(self.scenario, self.spares, interval)
        # The pool where 99 % find a spare, as the marker shows it: M/G/infinity where it holds, else the simulated
        # failures' (the closed form at the base rates said 86 nodes beside a marker at 169 in a burn-in).
        rec = r.recommended
        how = "M/G/infinity" if exact else "Monte Carlo: the simulated failures' needs"
        base = " at the scenario's base rates" if not exact else ""
        in_repair = (
            "Nodes in repair: no closed form (warm spare trays cover some failures; the moves of racks are no "
            "Poisson stream).\n"
            if self.scenario.uses_nvlink and self.scenario.rack_spare_trays
            else f"Nodes in repair (M/G/infinity{base}): mean {p.mean_nodes_in_repair:,.1f}, p95 "
            f"{repair_quantile(p, 0.95):,.0f} of {p.job_nodes:,} job nodes.\n"
        )
        self.summary.setText(
            f"For {self.scenario.gpus:,} GPUs over {self.scenario.days:g} days, the scenario as it was when this "
            "opened; the inputs here are this window's what-ifs (the main window's stay as they are).\n"
            + in_repair
            + f"Pool where 99% of failures find a spare ({how}): {rec:,} nodes "
            f"({100 * rec / p.job_nodes:.2f}% of the job)"
            + (
                f"; the smallest pool tried that does, marked: {r.meets_target:,}.\n"
                if r.meets_target is not None and r.meets_target != rec
                else ".\n"
            )
            + f"Cheapest pool tried: {r.cheapest:,} nodes, total ${r.total_cost_usd[i] / 1e6:,.1f}M "
            f"(goodput {100 * r.goodput[i]:.1f}%).\n"
            + (
                "In continue mode the job never waits: a replica lacking nodes stays out until repaired nodes "
                "reach it, so a pool below the nodes usually in repair shows as reduced throughput.\n"
                if self.spares.recovery_mode == "continue"
                else "Without shrinking, a job waits whenever more nodes are in repair than there are spares, so a "
                "pool below the nodes usually in repair leaves it waiting most of the time.\n"
            )
            + f"{WINDOW_TRIALS if self.scenario.trials >= WINDOW_TRIALS else self.scenario.trials} trials per count; "
            "'planner-gui sweep --over spares' runs the scenario's."
        )
        for plot in (self.plot_goodput, self.plot_nospare, self.plot_cost):
            plot.enableAutoRange(axis="x")
            self._room_for_legend(plot)

    def done(self, code: int) -> None:
        self._jobs.shutdown()  # its compute process stops
        super().done(code)

    def closeEvent(self, event: QCloseEvent) -> None:  # (closed before it was shown: done() is not called)
        self._jobs.shutdown()
        super().closeEvent(event)
