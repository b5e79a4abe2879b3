"""View > Repairs and Recovery Modes: the nodes in repair over the window (mean and 95th percentile over the
trials, beside the M/G/infinity law) for the scenario shown, and restart against continue across GPU counts.

Restart and continue are compared with the scenario's spares at every count, its pool scaled to the same
share of the job's nodes (unlimited stays unlimited): :mod:`planner_gui.core.analysis.modes`. The comparison
runs in a compute process of its own (:mod:`.jobs`); the window never waits for it, and closing the dialog
stops it.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from ..core.analysis.modes import MODE_TRIALS
from ..core.analysis.results import SimulationResult
from ..core.analysis.spares_result import SparesRun
from ..core.model.scenario import Scenario
from ..core.model.spares import Spares, SparesParams, spares_params
from ..core.theory.params import resolve
from ..core.theory.spares import repair_quantile
from ..core.util import fmt
from .collector import collect_on_gui_thread
from .jobs import JobRunner
from .plot_items import PALETTE, CountAxis, grid, plot_item, plots_in_turns
from .spares_view import opened_for

__all__ = ["SparesModesDialog"]


#: The title of the plot of restart against continue (while it computes, with how far it has got).
MODES_TITLE = "Restart vs continue across GPU counts"


class SparesModesDialog(QDialog):
    """Nodes in repair over time, and restart against continue across GPU counts."""

    def __init__(self, scenario: Scenario, result: SimulationResult | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        collect_on_gui_thread()  # its compute link's threads must never run Qt destructors (see .collector)
        self.setWindowTitle(opened_for("Repairs and Recovery Modes", scenario))
        self.setObjectName("sparesModesDialog")
        self.scenario = scenario
        self.comparison: dict[str, np.ndarray] | None = None
        self.counts: np.ndarray | None = None
        self._jobs = JobRunner(self, self._finished, self._progress)
        # The plots are built a turn of the event loop at a time once the dialog is up (widgets.in_turns: both at
        # once held the window about 60 ms); what comes before they are is drawn on them when they are.
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setObjectName("sparesModesPlots")
        self.ready = False
        self.curves: dict[str, pg.PlotDataItem] = {}
        plots_in_turns(self, self.plots, (self._build_repairs, self._build_modes), lambda: self._built(result))
        self.pool_line: pg.PlotDataItem | None = None
        self.note = QLabel()
        self.note.setObjectName("sparesModesNote")
        self.note.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.plots, 1)
        lay.addWidget(self.note)
        self.resize(900, 720)
        self._start()

    # -- plots ---------------------------------------------------------------------------------------
    def _build_repairs(self) -> pg.PlotItem:
        self.repair_plot = plot_item("Nodes in repair over the window")
        self.repair_plot.setLabel("bottom", "day")
        self.repair_plot.setLabel("left", "nodes")
        # Legends where the curves are not: below the nodes in repair (flat lines well above 0).
        grid(self.repair_plot)
        self.repair_plot.addLegend(offset=(-10, -10))
        dash = Qt.PenStyle.DashLine
        self.curves["mean"] = self.repair_plot.plot(name="mean (Monte Carlo)", pen=pg.mkPen(PALETTE[0], width=2))
        self.curves["p95"] = self.repair_plot.plot(name="95th percentile", pen=pg.mkPen(PALETTE[1], width=2))
        self.curves["mean_exact"] = self.repair_plot.plot(
            name="M/G/infinity mean", pen=pg.mkPen(PALETTE[0], width=1, style=dash)
        )
        self.curves["p95_exact"] = self.repair_plot.plot(
            name="M/G/infinity p95", pen=pg.mkPen(PALETTE[1], width=1, style=dash)
        )
        return self.repair_plot

    def _build_modes(self) -> pg.PlotItem:
        # x: log10(GPUs), labelled as counts (pyqtgraph's log axis ran them together)
        self.mode_plot = plot_item(MODES_TITLE, bottom=CountAxis("bottom"))
        self.mode_plot.setLabel("bottom", "GPUs")
        self.mode_plot.setLabel("left", "goodput (%)")
        # The legend at the bottom left of goodput across GPU counts (the curves fall to the right).
        grid(self.mode_plot)
        self.mode_plot.addLegend(offset=(10, -10))
        self.curves["restart"] = self.mode_plot.plot(name="restart", pen=pg.mkPen(PALETTE[2], width=2), symbol="o")
        self.curves["continue"] = self.mode_plot.plot(name="continue", pen=pg.mkPen(PALETTE[4], width=2), symbol="s")
        return self.mode_plot

    def _built(self, result: SimulationResult | None) -> None:
        self.ready = True
        self._draw_repairs(result)
        if self.comparison is not None and self.counts is not None:
            self._draw_modes(self.counts, self.comparison)

    def _draw_repairs(self, result: SimulationResult | None) -> None:
        sc = self.scenario
        run = None if result is None else result.spares_run
        _, interval = resolve(sc)
        try:
            p = spares_params(sc, sc.spares or Spares(), interval)
        except ValueError as exc:  # inputs the spares model refuses: say why, draw nothing
            self.note.setText(f"Cannot show the nodes in repair: spares.{fmt.clean(str(exc), 300)}")
            return
        days = np.linspace(0.0, sc.days, 2)
        self._draw_repair_lines(run, p, days)
        # Nodes from 0: the lines sit high and the legend below them covers none.
        ys = [y for c in self.repair_plot.listDataItems() if (y := c.getData()[1]) is not None and len(y)]
        self.repair_plot.setYRange(0.0, 1.08 * max((float(np.nanmax(y)) for y in ys), default=1.0), padding=0)

    def _draw_repair_lines(self, run: SparesRun | None, p: SparesParams, days: np.ndarray) -> None:
        sc = self.scenario
        if sc.uses_nvlink and sc.rack_spare_trays:  # (warm spares cover some failures: no M/G/infinity)
            self.curves["mean_exact"].setData([], [])
            self.curves["p95_exact"].setData([], [])
        else:
            self.curves["mean_exact"].setData(days, np.full(2, p.mean_nodes_in_repair))
            self.curves["p95_exact"].setData(days, np.full(2, repair_quantile(p, 0.95)))
        sp = sc.spares
        if sp is not None and sp.spare_nodes is not None:
            self.pool_line = self.repair_plot.plot(
                days, np.full(2, float(sp.spare_nodes)), name="spare nodes", pen=pg.mkPen(PALETTE[8], width=1.5)
            )
        if run is None or run.trials.repair_over_time is None or run.trials.repair_grid is None:
            self.curves["mean"].setData([], [])
            self.curves["p95"].setData([], [])
            legend = self.repair_plot.legend
            if legend is not None:  # (a legend names only what is drawn)
                for key in ("mean", "p95"):
                    legend.removeItem(self.curves[key])
            if sc.uses_spares:  # a pool is simulated, but the main window's results were not there yet
                text = (
                    "The main window's results for this scenario were not ready when this opened (open it again once "
                    "they are): the lines are the "
                )
            else:
                text = "The scenario shown has no simulated pool (unlimited spares in restart mode): the lines are the "
            self.note.setText(text + "M/G/infinity law alone.")
            return
        over, grid = run.trials.repair_over_time, run.trials.repair_grid / 24.0
        self.curves["mean"].setData(grid, over.mean(axis=0))
        self.curves["p95"].setData(grid, np.percentile(over, 95, axis=0))
        self.note.setText(
            f"{over.shape[0]:,} trials of the scenario as it was when this opened ({sc.gpus:,} GPUs); restart vs "
            f"continue: {MODE_TRIALS} trials per point, "
            "the spare pool at the same share of nodes at every count."
        )

    def _start(self) -> None:
        self._jobs.run("spares_modes", self.scenario)  # in its compute process (see .jobs)

    def _finished(self, req: int, result: object) -> None:
        if req != self._jobs.request:
            return
        if isinstance(result, Exception):
            if type(result).__name__ != "Cancelled":
                before = self.note.text() + " " if self.note.text().startswith("Cannot") else ""
                self.note.setText(f"{before}Cannot compare restart and continue: {fmt.clean(str(result), 300)}")
            return
        assert isinstance(result, tuple)
        counts: np.ndarray = result[0]
        comp: dict[str, np.ndarray] = result[1]
        self.comparison = comp
        self.counts = counts
        if self.ready:
            self._draw_modes(counts, comp)

    def _progress(self, fraction: float) -> None:
        """How far restart against continue has got (a run per mode and count), in its plot's title."""
        if self.ready and self.comparison is None and self._jobs.busy:
            self.mode_plot.setTitle(f"{MODES_TITLE} (computing, {fmt.percent(fraction)} done)")

    def _draw_modes(self, counts: np.ndarray, comp: dict[str, np.ndarray]) -> None:
        self.mode_plot.setTitle(MODES_TITLE)
        self.curves["restart"].setData(np.log10(counts.astype(float)), 100 * comp["restart"])
        self.curves["continue"].setData(np.log10(counts.astype(float)), 100 * comp["continue"])

    def done(self, code: int) -> None:
        self._jobs.shutdown()  # its compute process stops
        super().done(code)

    def closeEvent(self, event: QCloseEvent) -> None:  # (closed before it was shown: done() is not called)
        self._jobs.shutdown()
        super().closeEvent(event)
