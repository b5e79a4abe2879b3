"""View > Repairs and Recovery Modes: the nodes in repair over the window (mean and 95th percentile over the
trials, beside the M/G/infinity law) for the scenario shown, and restart against continue across GPU counts.

Restart and continue are compared with the scenario's spares at every count, its pool scaled to the same
share of the job's nodes (unlimited stays unlimited). The comparison runs on a worker thread; the window
never waits for it, and closing the dialog stops it at its next check.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from ..core import fmt
from ..core.model import Scenario
from ..core.params import resolve
from ..core.results import SimulationResult, simulate
from ..core.spares import Spares
from ..core.spares.exact import p_no_spare, recommended_spares, repair_quantile
from ..core.spares.model import SparesParams, spares_params
from ..core.spares.run import SparesRun
from .background import Background
from .collector import collect_on_gui_thread
from .plot_items import PALETTE, CountAxis

__all__ = ["MODE_TRIALS", "SparesModesDialog", "mode_counts", "mode_scenario", "restart_vs_continue"]

#: Trials per GPU count and mode in the comparison (each count on the same seed: common random numbers).
MODE_TRIALS = 100


def mode_counts(sc: Scenario, points: int = 7) -> np.ndarray:
    """GPU counts for the comparison: from 2 replicas (continuing needs two; at least 1,024 GPUs) to 4 times the
    scenario's (at least 131,072), whole replicas (it covered 8k-125k around a 100,000-GPU scenario)."""
    sp = sc.spares or Spares()
    unit = max(sc.gpus_per_node, sp.replica_gpus)
    lo, hi = max(1024, 2 * unit), min(max(4 * sc.gpus, 131_072), 10_000_000)
    xs = np.geomspace(lo, hi, points)
    return np.unique(np.maximum(np.round(xs / unit), 1).astype(np.int64) * unit)


def mode_scenario(sc: Scenario, gpus: int, mode: str) -> Scenario:
    """The scenario at ``gpus`` GPUs in recovery ``mode``: a pool of the same service (the smallest in which at
    least the share of node-losing failures that find a spare in the scenario's pool find one, by the
    M/G/infinity law of the sizing view), the replica no larger than the job, the shrink floor no larger than
    the job. (A pool scaled by its share of the nodes is relatively roomier at small counts, where the nodes in
    repair fluctuate more, and its rounding made the restart curve wobble: 81, 77.5, 78.5 % at 8k, 13k, 20k.)"""
    sp = sc.spares or Spares()
    job = max(sc.gpus_per_node, gpus - gpus % sc.gpus_per_node)
    sp = dataclasses.replace(
        sp,
        recovery_mode=mode,
        replica_gpus=min(sp.replica_gpus, job),
        min_gpus=None if sp.min_gpus is None else min(sp.min_gpus, gpus),
    )
    out = sc.replace(gpus=int(gpus), spares=sp, trials=min(sc.trials, MODE_TRIALS))
    if sp.spare_nodes is not None:  # (the pool's law does not depend on the checkpoint interval given here)
        here = spares_params(sc, sc.spares or Spares(), 60.0)
        served = 1.0 - p_no_spare(here, sp.spare_nodes)
        there = spares_params(out, sp, 60.0)
        out = out.replace(spares=dataclasses.replace(sp, spare_nodes=recommended_spares(there, served)))
    return out


def restart_vs_continue(sc: Scenario, counts: np.ndarray, should_stop=None) -> dict[str, np.ndarray]:
    """Mean goodput and its standard error per count, in restart and in continue mode."""
    out: dict[str, np.ndarray] = {}
    for mode in ("restart", "continue"):
        means, sems = [], []
        for n in counts:
            res = simulate(mode_scenario(sc, int(n), mode), should_stop=should_stop)
            g = res.goodput
            means.append(float(g.mean()))
            sems.append(float(g.std(ddof=1) / math.sqrt(g.size)) if g.size > 1 else 0.0)
        out[mode], out[f"{mode}_sem"] = np.array(means), np.array(sems)
    return out


class SparesModesDialog(QDialog):
    """Nodes in repair over time, and restart against continue across GPU counts."""

    def __init__(self, scenario: Scenario, result: SimulationResult | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        collect_on_gui_thread()  # its worker thread must never run Qt destructors (see .collector)
        self.setWindowTitle("Repairs and Recovery Modes")
        self.setObjectName("sparesModesDialog")
        self.scenario = scenario
        self.comparison: dict[str, np.ndarray] | None = None
        self.counts: np.ndarray | None = None
        self._background = Background(self, self._finished)
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setObjectName("sparesModesPlots")
        self.repair_plot = self.plots.addPlot(row=0, col=0, title="Nodes in repair over the window")
        self.repair_plot.setLabel("bottom", "day")
        self.repair_plot.setLabel("left", "nodes")
        self.mode_plot = (
            self.plots.addPlot(  # x: log10(GPUs), labelled as counts (pyqtgraph's log axis ran them together)
                row=1, col=0, title="Restart vs continue across GPU counts", axisItems={"bottom": CountAxis("bottom")}
            )
        )
        self.mode_plot.setLabel("bottom", "GPUs")
        self.mode_plot.setLabel("left", "goodput (%)")
        # Legends where the curves are not: below the nodes in repair (flat lines well above 0), and at the bottom
        # left of goodput across GPU counts (the curves fall to the right).
        for plot, corner in ((self.repair_plot, (-10, -10)), (self.mode_plot, (10, -10))):
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.addLegend(offset=corner)
        dash = Qt.PenStyle.DashLine
        self.curves = {
            "mean": self.repair_plot.plot(name="mean (Monte Carlo)", pen=pg.mkPen(PALETTE[0], width=2)),
            "p95": self.repair_plot.plot(name="95th percentile", pen=pg.mkPen(PALETTE[1], width=2)),
            "mean_exact": self.repair_plot.plot(
                name="M/G/infinity mean", pen=pg.mkPen(PALETTE[0], width=1, style=dash)
            ),
            "p95_exact": self.repair_plot.plot(name="M/G/infinity p95", pen=pg.mkPen(PALETTE[1], width=1, style=dash)),
            "restart": self.mode_plot.plot(name="restart", pen=pg.mkPen(PALETTE[2], width=2), symbol="o"),
            "continue": self.mode_plot.plot(name="continue", pen=pg.mkPen(PALETTE[4], width=2), symbol="s"),
        }
        self.pool_line: pg.PlotDataItem | None = None
        self.note = QLabel()
        self.note.setObjectName("sparesModesNote")
        self.note.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.plots, 1)
        lay.addWidget(self.note)
        self.resize(900, 720)
        self._draw_repairs(result)
        self._start()

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
            text = "The scenario shown has no simulated pool (unlimited spares in restart mode): the lines are the "
            self.note.setText(text + "M/G/infinity law alone.")
            return
        over, grid = run.trials.repair_over_time, run.trials.repair_grid / 24.0
        self.curves["mean"].setData(grid, over.mean(axis=0))
        self.curves["p95"].setData(grid, np.percentile(over, 95, axis=0))
        self.note.setText(
            f"{over.shape[0]:,} trials of the scenario shown; restart vs continue: {MODE_TRIALS} trials per point, "
            "the spare pool at the same share of nodes at every count."
        )

    def _start(self) -> None:
        sc = self.scenario
        counts = mode_counts(sc)
        # The job sees the inputs and a stop flag only, never this dialog (see .background).
        self._background.run(lambda stop: (counts, restart_vs_continue(sc, counts, should_stop=stop)))

    def _finished(self, req: int, result: object) -> None:
        if req != self._background.request:
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
        self.curves["restart"].setData(np.log10(counts.astype(float)), 100 * comp["restart"])
        self.curves["continue"].setData(np.log10(counts.astype(float)), 100 * comp["continue"])

    def done(self, code: int) -> None:
        self._background.shutdown()
        super().done(code)
