"""Recovery strategies side by side (View > Recovery Strategies): what each step from a blocking persistent
checkpoint to in-memory snapshots with replicas in another failure domain buys, at the scenario's scale and
across GPU counts (:func:`planner_gui.core.analysis.strategies.compare_strategies`, as ``planner-gui
strategies`` prints it).

The comparison follows the scenario being edited: every change of a computed input starts a new one. It is
computed in a compute process of the dialog's own (:class:`.jobs.JobRunner`, the job
:func:`planner_gui.core.session.jobs.strategies`: the numbers ``planner-gui strategies --json`` prints): the window
never waits for it, the newest request wins, and a process that dies is replaced.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QGraphicsOpacityEffect,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.analysis.results import HOURS_LABELS
from ..core.analysis.strategies import SCALE_GPUS, SCALE_TRIALS, STRATEGIES, comparable, distinct_notes
from ..core.files.scenario_io import ScenarioError
from ..core.model.scenario import Scenario
from ..core.model.specs import labelled
from ..core.session.inputs import COMPUTED_FIELDS, Inputs
from ..core.sim.run import ALL_HOURS_KEYS
from ..core.util import fmt
from .jobs import JobFailed, JobRunner
from .plot_items import PALETTE, CountAxis, PercentAxis, grid, pen, plot_item, plots_in_turns
from .plots import HOURS_COLORS

__all__ = ["SCALE_TRIALS", "WINDOW_GPUS", "WINDOW_TRIALS", "StrategiesDialog"]

#: Trials of each strategy at the scenario's scale in the window (the command line uses the scenario's);
#: across GPU counts, :data:`SCALE_TRIALS` a point (or the scenario's, if fewer), as on the command line.
WINDOW_TRIALS = 500
#: GPU counts of the comparison across scales: the command line's.
WINDOW_GPUS = SCALE_GPUS
#: Each strategy's colour.
STRATEGY_COLORS = (PALETTE[8], PALETTE[1], PALETTE[0], PALETTE[4], PALETTE[6])
#: Each strategy's marker, its size and its line. Strategies can coincide (rows 1 and 2 without upload time, 3 and
#: 4 without replicas): the later one is drawn over the earlier with a smaller marker and a dashed line, so both
#: stay in sight.
STRATEGY_MARKS = (
    ("o", 10, Qt.PenStyle.SolidLine),
    ("s", 6, Qt.PenStyle.DashLine),
    ("t", 11, Qt.PenStyle.SolidLine),
    ("d", 7, Qt.PenStyle.DashLine),
    ("star", 10, Qt.PenStyle.SolidLine),
)
#: The table's columns.
COLUMNS = (
    "Goodput",
    "Exact",
    "Stalls",
    "Lost work",
    "Recovery",
    "Planned",
    "Waiting",
    "Reduced",
    "Slow nodes",
    "Corruption",
    "From memory",
    "From storage",
    "Fast interval",
    "Persistent",
)
_HOURS_COLUMNS = ALL_HOURS_KEYS[1:]  # (every hour but useful compute, which the goodput column gives)
#: Where the time goes, in the bars: every hour of the window (the strategies keep the scenario's pool: rows 1-4
#: can wait for spares; continue mode runs on fewer replicas).
_BAR_KEYS = ALL_HOURS_KEYS


def _share(hours: float, window: float) -> str:
    """Hours as a share of the window, 2 decimals; a rounding error below them is 0 ("-0.00 %" was shown)."""
    pct = 100.0 * hours / window if window > 0 else 0.0
    return f"{0.0 if abs(pct) < 0.005 else pct:.2f} %"


class StrategiesDialog(QDialog):
    """The strategies of the scenario being edited: a table, where the time goes, and goodput against GPU
    count."""

    #: A comparison is drawn, table and plots.
    computed = Signal()

    def __init__(self, inputs: Inputs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Recovery Strategies")
        self.setObjectName("strategiesDialog")
        self.inputs = inputs
        self.comparison: dict[str, Any] | None = None
        self._jobs = JobRunner(self, self._finished, self._progress)
        self._asked: Scenario | None = None  # the scenario of the newest request
        self._timer = QTimer(self, singleShot=True, interval=300)
        self._timer.timeout.connect(self._start)
        inputs.changed.connect(self._inputs_changed)

        self.status = QLabel("computing...")
        self.status.setObjectName("strategiesStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(len(STRATEGIES), len(COLUMNS))
        self.table.setObjectName("strategiesTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setVerticalHeaderLabels(list(STRATEGIES))
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setToolTip(
            "Each strategy at the scenario's scale: goodput (Monte Carlo mean +- standard error), the exact "
            "expectation where a closed form exists ('none': both tiers restore), the window's hours by where "
            "they went (% of the window: checkpoint stalls, lost work, detection + restart + restore, planned "
            "restarts, waiting for spares, throughput lost while replicas are out), the mean restores from host "
            "memory and from storage, and the fast and persistent intervals in use. Every strategy keeps the "
            "scenario's spare pool, swap and repairs (the note above says what it keeps)."
        )

        # The plots are built a turn of the event loop at a time once the dialog is up (widgets.in_turns: both at
        # once held the window about 60 ms); a comparison that comes first is drawn on them when they are.
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setObjectName("strategiesPlots")
        self.ready = False
        self._pending: tuple[dict[str, Any], Scenario] | None = None
        plots_in_turns(self, self.plots, (self._build_time, self._build_gpus), self._built)

        self._fit_table()
        lay = QVBoxLayout(self)
        lay.addWidget(self.status)
        lay.addWidget(self.table)
        lay.addWidget(self.plots, 1)
        self.plots.setVisible(False)  # until there is a comparison to draw: no empty axes, no legend of nothing
        self._fade = QGraphicsOpacityEffect(self.plots)
        self.plots.setGraphicsEffect(self._fade)
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        width, height = (1260, 780) if screen is None else (min(1260, screen.width()), min(780, screen.height() - 40))
        self.resize(width, height)  # (within a 1366x768 screen, its title bar included)
        self._start()

    # -- plots -------------------------------------------------------------------------------------------
    def _build_time(self) -> pg.PlotItem:
        self.plot_time = plot_item("Where the time goes (% of the window)")
        self.plot_time.invertY(True)
        self.plot_time.getAxis("left").setTicks([[(i, f"{i + 1}") for i in range(len(STRATEGIES))]])
        self.plot_time.setLabel("left", "strategy (table row)")
        self.plot_time.setLabel("bottom", "% of the window, mean over trials")
        self.plot_time.getAxis("bottom").enableAutoSIPrefix(False)
        # Two rows of four at most: seven in one row ran past a narrow window's edge.
        self.time_legend = self.plot_time.addLegend(offset=(10, 2), labelTextSize="8pt", colCount=4)
        self.time_bars: dict[str, pg.BarGraphItem] = {}
        for key in _BAR_KEYS:
            bars = pg.BarGraphItem(x0=[0.0], y=[0.0], height=0.6, width=[0.0], brush=pg.mkBrush(HOURS_COLORS[key]))
            self.plot_time.addItem(bars)
            self.time_bars[key] = bars
        return self.plot_time

    def _build_gpus(self) -> pg.PlotItem:
        self.plot_gpus = plot_item("Goodput against GPU count", bottom=CountAxis("bottom"), left=PercentAxis("left"))
        self.plot_gpus.setLabel("bottom", "GPUs")
        self.plot_gpus.setLabel("left", "goodput (%)")
        grid(self.plot_gpus)
        self.gpus_legend = self.plot_gpus.addLegend(offset=(10, -10), labelTextSize="8pt")  # curves fall right
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.errors: dict[str, pg.ErrorBarItem] = {}
        for name, color, (symbol, size, style) in zip(STRATEGIES, STRATEGY_COLORS, STRATEGY_MARKS, strict=True):
            curve = self.plot_gpus.plot(
                name=name, pen=pen(color, 2, style), symbol=symbol, symbolSize=size, symbolBrush=color, symbolPen=None
            )
            err = pg.ErrorBarItem(x=np.zeros(1), y=np.zeros(1), height=np.zeros(1), beam=0.05, pen=pen(color, 1))
            self.plot_gpus.addItem(err)
            self.curves[name], self.errors[name] = curve, err
        self.here = pg.InfiniteLine(angle=90, pen=pen(PALETTE[2], 1, Qt.PenStyle.DashLine), label="this scenario")
        self.here.label.setPosition(0.08)
        self.plot_gpus.addItem(self.here, ignoreBounds=True)
        return self.plot_gpus

    def _built(self) -> None:
        self.ready = True
        if self._pending is not None:
            self._draw_plots(*self._pending)
            self.computed.emit()

    # -- computation -------------------------------------------------------------------------------
    def _inputs_changed(self, changed: frozenset) -> None:
        if changed & COMPUTED_FIELDS:
            self._computing()
            self._timer.start()

    def _computing(self) -> None:
        """Say so, and grey out the numbers of the inputs before, until the new ones are drawn."""
        shown = self.comparison is not None
        self.status.setText(
            "computing for the new inputs; the numbers below are for the inputs before" if shown else "computing..."
        )
        self._fresh(not shown)

    def _fresh(self, fresh: bool) -> None:
        """Show the table and plots as current, or greyed out (numbers of the inputs before)."""
        self.table.setEnabled(fresh)
        self._fade.setOpacity(1.0 if fresh else 0.35)

    def _start(self) -> None:
        sc = self.inputs.scenario.replace(trials=min(self.inputs.scenario.trials, WINDOW_TRIALS))
        try:  # (checked here: a strategy that cannot be built is named in its row by compare_strategies)
            comparable(sc)
        except (ScenarioError, ValueError) as exc:
            self._jobs.cancel()
            self._asked = None
            self._cannot(f"Cannot compare strategies: {fmt.clean(str(exc), 300)}")
            return
        self._computing()
        self._asked = sc
        self._jobs.run("strategies", sc, tuple(WINDOW_GPUS))

    def _progress(self, fraction: float) -> None:
        if self._asked is not None and self._jobs.busy:
            shown = self.comparison is not None
            what = "computing for the new inputs" if shown else "computing"
            after = "; the numbers below are for the inputs before" if shown else ""
            self.status.setText(f"{what} ({fmt.percent(fraction)} done){after}")

    def _finished(self, request: int, value: object) -> None:
        if request != self._jobs.request or self._asked is None:
            return
        sc, self._asked = self._asked, None
        if isinstance(value, JobFailed):
            retry = "; change an input to try again" if self._jobs.gave_up else ""
            self._cannot(f"Cannot compare strategies: {fmt.clean(str(value), 300)}{retry}")
            return
        assert isinstance(value, dict)
        self.comparison = value
        self._draw(value, sc)

    # -- drawing -----------------------------------------------------------------------------------
    def _cannot(self, text: str) -> None:
        """Say why there is no comparison, and show none: the table, bars and curves of other inputs go,
        with the legends that named them."""
        self.status.setText(text)
        self._fresh(True)
        self.comparison = None
        self.table.clearContents()
        self.plots.setVisible(False)
        self._pending = None
        if not self.ready:
            return
        for bars in self.time_bars.values():
            bars.setOpts(x0=[], y=[], width=[], height=0.6)
        for name in self.curves:
            self.curves[name].setData([], [])
            self.errors[name].setData(x=np.zeros(0), y=np.zeros(0), height=np.zeros(0))
        self.time_legend.setVisible(False)
        self.gpus_legend.setVisible(False)
        self.here.setVisible(False)

    def _draw(self, r: dict[str, Any], sc: Scenario) -> None:
        self._fresh(True)
        rows = r["at_scale"]
        window = sc.hours
        # The slow nodes' column where nodes run slow (elsewhere it would be a column of zeros).
        self.table.setColumnHidden(COLUMNS.index("Slow nodes"), not sc.uses_slow)
        self.table.setColumnHidden(COLUMNS.index("Corruption"), not sc.uses_sdc)
        for i, row in enumerate(rows):
            self.table.verticalHeaderItem(i).setText(f"{i + 1}. {row['strategy']}")
            if row["error"] is not None:
                self._cannot_row(i, row["error"])
                continue
            hours = row["hours"]
            exact = row["goodput_expected"]
            cells = [
                f"{100 * row['goodput']:.2f} % +- {100 * row['goodput_sem']:.2f}",
                "none" if exact is None else f"{100 * exact:.2f} %",
                *(_share(hours.get(k, 0.0), window) for k in _HOURS_COLUMNS),
                f"{row['restores']['fast']:,.1f}",
                f"{row['restores']['persistent']:,.1f}",
                "off" if row["fast_interval_min"] is None else fmt.duration_min(row["fast_interval_min"]),
                fmt.duration_min(row["persistent_interval_min"]),
            ]
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self._fit_table()
        self._pending = (r, sc)
        if self.ready:
            self._draw_plots(r, sc)
        built = [row for row in rows if row["error"] is None]
        best = max(built, key=lambda row: row["goodput"]) if built else None
        missing = " ".join(
            f"Strategy {i + 1} cannot be built here: {fmt.clean(labelled(row['error']), 200)}."
            for i, row in enumerate(rows)
            if row["error"] is not None
        )
        notes = "".join(f"Note: {n}. " for n in distinct_notes(rows))
        self.status.setText(  # what cannot be built first: the rest is the same every time
            (f"{missing} " if missing else "")
            + notes
            + f"{fmt.clean(sc.name, 80)}, {sc.gpus:,} GPUs: each strategy from the scenario's own numbers "
            f"({'its tiers section' if sc.tiers is not None else 'the published defaults of the fast tier'}), "
            f"at its own optimal intervals where the scenario says 'optimal'; each keeps the scenario's "
            f"{fmt.clean(str(r.get('kept', '')), 200)}. "
            + (f"Best: {best['strategy']}, {100 * best['goodput']:.1f} %. " if best is not None else "")
            + f"{min(sc.trials, WINDOW_TRIALS):,} trials each at this scale, "
            f"{min(sc.trials, SCALE_TRIALS)} per GPU count below (the bars: 95 % intervals), as 'planner-gui "
            f"strategies --trials {min(sc.trials, WINDOW_TRIALS)}' computes them."
        )
        if self.ready:
            self.computed.emit()

    def _draw_plots(self, r: dict[str, Any], sc: Scenario) -> None:
        """The bars and curves of a comparison (once the plots are built)."""
        self.plots.setVisible(True)
        self.time_legend.setVisible(True)
        self.gpus_legend.setVisible(True)
        self.here.setVisible(True)
        rows = r["at_scale"]
        window = sc.hours
        left = np.zeros(len(rows))
        self.time_legend.clear()  # it names the parts drawn (waiting only with a pool, reduced only continuing)
        for key in _BAR_KEYS:
            width = np.array([0.0 if row["error"] else 100 * row["hours"].get(key, 0.0) / window for row in rows])
            width = np.maximum(width, 0.0)  # (a rounding error below 0 is none)
            self.time_bars[key].setOpts(x0=left.copy(), y=np.arange(len(rows)), width=width, height=0.6)
            if width.sum() > 0:
                label = HOURS_LABELS[key] if key != "recovery" else "detect + restart + restore"
                self.time_legend.addItem(self.time_bars[key], label)
            left += width
        self.plot_time.setXRange(0, 100, padding=0.01)
        legend_rows = math.ceil(len(self.time_legend.items) / 4)
        self.plot_time.setYRange(-0.6 - 0.8 * legend_rows, len(rows) - 0.5, padding=0.02)  # the legend above the bars
        across = r["across_gpus"]
        x = np.log10(np.asarray(across["gpus"], dtype=float))
        lo, hi = math.inf, -math.inf
        self.gpus_legend.clear()  # it names the strategies drawn, in order
        for name in STRATEGIES:  # a count where the strategy cannot be built (null) is left out
            g = 100 * np.array(across[name]["goodput"], dtype=float)
            s = 100 * np.array(across[name]["goodput_sem"], dtype=float)
            ok = np.isfinite(g)
            if ok.any():
                self.gpus_legend.addItem(self.curves[name], name)
            self.curves[name].setData(x[ok], g[ok])
            self.errors[name].setData(x=x[ok], y=g[ok], height=2 * 1.96 * s[ok])
            if ok.any():
                lo, hi = min(lo, float(np.min(g[ok] - 2 * s[ok]))), max(hi, float(np.max(g[ok] + 2 * s[ok])))
        if not math.isfinite(lo):
            lo, hi = 0.0, 100.0
        self.here.setValue(math.log10(sc.gpus))
        self.plot_gpus.setXRange(float(x.min()) - 0.1, float(max(x.max(), math.log10(sc.gpus))) + 0.1, padding=0)
        self.plot_gpus.setYRange(max(lo - 2, 0.0), hi + 3, padding=0)  # (a marker at 99.3 % clears the top)

    def _cannot_row(self, i: int, why: str) -> None:
        """Row ``i``: the strategy cannot be built at this scenario; the reason in its first cell and tooltip."""
        for j in range(self.table.columnCount()):
            item = QTableWidgetItem("cannot be built here" if j == 0 else "-")
            item.setToolTip(fmt.clean(why, 300))
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(i, j, item)

    def _fit_table(self) -> None:
        """Tall enough for every row (and the scroll bar a narrow dialog needs)."""
        t = self.table
        t.resizeRowsToContents()
        t.resizeColumnsToContents()
        rows = sum(t.rowHeight(i) for i in range(t.rowCount()))
        t.setFixedHeight(
            t.horizontalHeader().height() + rows + 2 * t.frameWidth() + t.horizontalScrollBar().sizeHint().height()
        )

    def done(self, code: int) -> None:
        self._timer.stop()
        self.inputs.changed.disconnect(self._inputs_changed)
        self._jobs.shutdown()  # its compute process stops
        super().done(code)
