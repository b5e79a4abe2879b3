"""The Planning tab's "Cheapest setup": goal seek in the window (:mod:`planner_gui.core.decisions.optimize`).

The planner gives a deadline, the share of runs that must meet it, an optional budget, and the inputs the
search may set (each a list of values or a range ``LO:HI`` / ``LO:HI:log``). The search itself
(:class:`~planner_gui.core.decisions.optimize.Searcher`) runs here, a batch of setups at a time, each batch
simulated in a compute process of this view's own (:class:`.jobs.JobRunner`): the front is drawn as it grows, and
Stop keeps the best found so far. The result names the chosen setup (or says no setup meets the goal and gives the
fastest) and the runners-up with what separates them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.decisions.optimize import OptimizeError, Search, Searcher, Vary, differs, shown
from ..core.model.scenario import Scenario
from ..core.util import fmt
from .jobs import JobFailed, JobRunner
from .plot_items import PALETTE, Hover, axes, brush, pen
from .theme import mark_secondary
from .widgets import DoubleSpinBox

__all__ = ["GoalView", "parse_values"]

#: Setups simulated per job: enough to step together, few enough that Stop comes soon and the front grows visibly.
BATCH = 4


def parse_values(key: str, text: str) -> Vary:
    """A row of the inputs table: ``V1, V2, ...`` (numbers, true/false, words) or ``LO:HI`` / ``LO:HI:log``.
    ValueError in words."""
    t = text.strip()
    if not key.strip():
        raise ValueError("name the input of each row (e.g. gpus, spares.spare_nodes)")
    if not t:
        raise ValueError(f"{key}: give its values (e.g. 1, 2, 3) or a range (e.g. 1:30:log)")
    if ":" in t:
        parts = [p.strip() for p in t.split(":")]
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "log"):
            raise ValueError(f"{key}: a range is LO:HI or LO:HI:log (got '{t[:40]}')")
        try:
            lo, hi = float(parts[0]), float(parts[1])
        except ValueError:
            raise ValueError(f"{key}: a range's ends must be numbers (got '{t[:40]}')") from None
        return Vary(key.strip(), lo=lo, hi=hi, log=len(parts) == 3)
    values: list[Any] = []
    for v in (x.strip() for x in t.split(",")):
        if not v:
            raise ValueError(f"{key}: an empty value (separate values by commas)")
        if v.lower() in ("true", "false"):
            values.append(v.lower() == "true")
            continue
        try:
            f = float(v.replace("_", ""))
            values.append(int(f) if f.is_integer() and "." not in v and "e" not in v.lower() else f)
        except ValueError:
            values.append(v)
    return Vary(key.strip(), values=tuple(values))


def _default_rows(sc: Scenario) -> list[tuple[str, str]]:
    """What a planner would search first: the GPU count around the scenario's, and its spare pool's size."""
    gpn = sc.gpus_per_node
    counts = sorted({max(gpn, round(sc.gpus * f / gpn) * gpn) for f in (0.5, 0.75, 1.0, 1.5, 2.0)})
    rows = [("gpus", ", ".join(str(c) for c in counts))]
    sp = sc.spares
    if sp is not None and sp.spare_nodes is not None:
        n = sp.spare_nodes
        pools = sorted({max(0, round(n * f)) for f in (0.5, 1.0, 1.5, 2.0)})
        rows.append(("spares.spare_nodes", ", ".join(str(p) for p in pools)))
    return rows


class GoalView(QWidget):
    """The goal, the inputs to search, Search and Stop, the front's plot and what was found."""

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        goal = QGridLayout()
        goal.setContentsMargins(0, 0, 0, 0)
        goal.addWidget(QLabel("Train within"), 0, 0)
        self.deadline = DoubleSpinBox()
        self.deadline.setObjectName("goalDeadlineSpin")
        self.deadline.setRange(0.1, 10_000.0)
        self.deadline.setDecimals(1)
        self.deadline.setSuffix(" days")
        self.deadline.setToolTip("The time to train the setup must meet (days from its first step to the end)")
        goal.addWidget(self.deadline, 0, 1)
        goal.addWidget(QLabel("in"), 0, 2)
        self.quantile = DoubleSpinBox()
        self.quantile.setObjectName("goalQuantileSpin")
        self.quantile.setRange(1.0, 99.0)
        self.quantile.setDecimals(0)
        self.quantile.setValue(90.0)
        self.quantile.setSuffix(" % of runs")
        self.quantile.setToolTip("The share of runs that must finish within the deadline (90 %: the run's p90)")
        goal.addWidget(self.quantile, 0, 3)
        goal.addWidget(QLabel("Budget"), 1, 0)
        self.budget = DoubleSpinBox()
        self.budget.setObjectName("goalBudgetSpin")
        self.budget.setRange(0.0, 1e7)
        self.budget.setDecimals(1)
        self.budget.setPrefix("$")
        self.budget.setSuffix(" M")
        self.budget.setSpecialValueText("none")
        self.budget.setToolTip("The most the setup may cost in all (GPU-hours and the spare pool's); none: no limit")
        goal.addWidget(self.budget, 1, 1)
        goal.setColumnStretch(4, 1)
        lay.addLayout(goal)
        self.table = QTableWidget(0, 2)
        self.table.setObjectName("goalInputsTable")
        self.table.setHorizontalHeaderLabels(["input (path)", "values: a, b, c or lo:hi[:log]"])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setMaximumHeight(84)
        self.table.setToolTip(
            "The inputs the search may set, by their paths as in study files (gpus, spares.spare_nodes, "
            "spares.replica_gpus, tiers.fast_interval_min, tiers.fast_placement, checkpoint_interval_min, ...)"
        )
        lay.addWidget(self.table)
        self.add_row = QPushButton("Add")
        self.add_row.setObjectName("goalAddInput")
        self.add_row.setToolTip("Add a row: an input the search may set")
        self.add_row.clicked.connect(lambda: self._add("", ""))
        self.remove_row = QPushButton("Remove")
        self.remove_row.setObjectName("goalRemoveInput")
        self.remove_row.setToolTip("Remove the selected rows (or the last)")
        self.remove_row.clicked.connect(self._remove)
        self.search_button = QPushButton("Search")
        self.search_button.setObjectName("goalSearchButton")
        self.search_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("goalStopButton")
        self.stop_button.setEnabled(False)
        self.stop_button.setToolTip("Stop the search: the best setup found so far is the result")
        self.stop_button.clicked.connect(self.stop)
        goal.addWidget(self.search_button, 0, 5)
        goal.addWidget(self.stop_button, 0, 6)
        goal.addWidget(self.add_row, 1, 5)
        goal.addWidget(self.remove_row, 1, 6)
        self.note = QLabel()
        self.note.setObjectName("goalNote")
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        mark_secondary(self.note)
        lay.addWidget(self.note)
        self.widget = pg.PlotWidget(axisItems=axes())
        self.widget.setObjectName("frontPlot")
        # (no title: the tab names it, and a small window's height is better spent on the plot)
        self.widget.setToolTip(
            "Each setup simulated: its days to train at the quantile against its cost in all. The front: the setups "
            "no other is both faster and cheaper than. The star: the cheapest that meets the deadline (and budget)."
        )
        self.widget.setMinimumSize(240, 140)
        # Its height is what is left (a plot's own hint of 480 would make the tab scroll at any window size).
        self.widget.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        lay.addWidget(self.widget, 1)
        p = self.widget.getPlotItem()
        p.getAxis("left").enableAutoSIPrefix(False)
        p.getAxis("bottom").enableAutoSIPrefix(False)
        p.setLabel("left", "cost in all ($ M)")
        self.all = pg.ScatterPlotItem(size=6, brush=brush("#9a9a9a", 170), pen=None)
        self.front = pg.PlotDataItem(pen=pen(PALETTE[0]), symbol="o", symbolSize=7, symbolBrush=brush(PALETTE[0]))
        self.chosen = pg.ScatterPlotItem(size=16, symbol="star", brush=brush("#ffbf00"), pen=pg.mkPen("#3d2e00"))
        for item in (self.all, self.front, self.chosen):
            p.addItem(item)
        self.line = pg.InfiniteLine(angle=90, pen=pen(PALETTE[2], 1.5, Qt.PenStyle.DashLine), label="deadline")
        p.addItem(self.line, ignoreBounds=True)
        # Bottom left: the front falls from the top left (fast, dear) to the bottom right (slow, cheap).
        # One row at the top, in a band the ranges leave empty above the setups (the front falls to the right).
        self.legend = p.addLegend(offset=(-5, 5), labelTextSize="8pt", colCount=3)
        self.legend.setBrush(brush(pg.getConfigOption("background"), 215))
        self.legend.addItem(self.all, "setups simulated")
        self.legend.addItem(self.front, "the front")
        self.legend.addItem(self.chosen, "chosen")
        self.hover = Hover(self.widget, self._describe, line=False)
        self.scenario: Scenario | None = None  # the scenario on screen
        self.searcher: Searcher | None = None
        self.searched: Scenario | None = None  # the scenario the search runs (or ran) on
        self.result: Search | None = None
        self._batch: list[tuple[Any, ...]] | None = None
        self._stopping = False
        self._runner: JobRunner | None = None
        self._draw(None)

    # -- the scenario on screen ---------------------------------------------------------------------------
    def show_scenario(self, sc: Scenario, days: float | None) -> None:
        """A new scenario on screen (``days``: its mean time to train, the deadline's first value)."""
        first = self.scenario is None
        self.scenario = sc
        if first or self.table.rowCount() == 0:
            for key, values in _default_rows(sc):
                self._add(key, values)
        if first and days is not None and math.isfinite(days):
            self.deadline.setValue(max(0.1, round(days, 1)))
        elif first:
            self.deadline.setValue(30.0)
        self.search_button.setEnabled(sc.training is not None and self.searcher is None)
        if self.searcher is None:
            self._say()

    def _say(self) -> None:
        """The note when no search runs: how to start, or what the last one found (and whether for other inputs)."""
        sc = self.scenario
        if sc is not None and sc.training is None:
            self.note.setText("Turn on Training run (left) to search for the cheapest setup that trains in time.")
        elif self.result is None:
            self.note.setText(
                "Give the deadline and the inputs the search may set, then Search: every setup is simulated from "
                "the scenario's seed, and the front grows as they come."
            )
        else:
            stale = "" if self.searched == sc else " (Found for the inputs before your last change: search again.)"
            self.note.setText(result_text(self.result) + stale)

    # -- the inputs table -------------------------------------------------------------------------------------
    def _add(self, key: str, values: str) -> None:
        r = self.table.rowCount()
        self.table.insertRow(r)
        self.table.setItem(r, 0, QTableWidgetItem(key))
        self.table.setItem(r, 1, QTableWidgetItem(values))

    def _remove(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True) or [self.table.rowCount() - 1]
        for r in rows:
            if r >= 0:
                self.table.removeRow(r)

    def vary(self) -> list[Vary]:
        """The rows of the inputs table (ValueError in words)."""
        out = []
        for r in range(self.table.rowCount()):
            key = (self.table.item(r, 0) or QTableWidgetItem("")).text()
            text = (self.table.item(r, 1) or QTableWidgetItem("")).text()
            if not key.strip() and not text.strip():
                continue
            out.append(parse_values(key, text))
        return out

    # -- searching --------------------------------------------------------------------------------------------
    def start(self) -> None:
        sc = self.scenario
        if sc is None or self.searcher is not None:
            return
        budget = self.budget.value() * 1e6 if self.budget.value() > 0 else None
        try:
            vary = self.vary()
            self.searcher = Searcher(sc, vary, self.deadline.value(), self.quantile.value() / 100.0, budget)
        except (ValueError, OptimizeError) as exc:
            self.note.setText(f"Cannot search: {fmt.clean(str(exc), 240)}")
            return
        self.searched, self.result, self._stopping = sc, None, False
        if self._runner is None:
            self._runner = JobRunner(self, self._done)
        self.search_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self._draw(None)
        self._next()

    def stop(self) -> None:
        """Stop after nothing more: what the search found so far is the result."""
        if self.searcher is None:
            return
        self._stopping = True
        self._finish(stopped=True)

    def _next(self) -> None:
        s = self.searcher
        if s is None or self._stopping:
            return
        batch = s.next_batch(BATCH)
        if batch is None:
            self._finish(stopped=False)
            return
        self._batch = batch
        assert self._runner is not None and self.searched is not None
        self.note.setText(f"Searching: {len(s.seen):,} setups simulated of about {s.planned:,}...")
        self._runner.run("optimize_batch", self.searched, s.vary, s.goal, batch, s.points)

    def _done(self, request: int, value: object) -> None:
        s, batch = self.searcher, self._batch
        if s is None or batch is None or self._stopping:
            return
        if isinstance(value, JobFailed):
            self.note.setText(f"The search stopped: {fmt.clean(str(value), 240)}")
            self._finish(stopped=True)
            return
        assert isinstance(value, list)
        s.add(batch, value)
        self._batch = None
        self._draw(s.result())
        self._next()

    def _finish(self, *, stopped: bool) -> None:
        s = self.searcher
        if s is None:
            return
        self.result = s.result(stopped=stopped)
        self.searcher, self._batch = None, None
        self.stop_button.setEnabled(False)
        self.search_button.setEnabled(self.scenario is not None and self.scenario.training is not None)
        self._draw(self.result)
        self._say()

    # -- drawing ----------------------------------------------------------------------------------------------
    def _draw(self, res: Search | None) -> None:
        self.hover.hide()
        p = self.widget.getPlotItem()
        ok = [] if res is None else [x for x in res.setups if x.error is None and math.isfinite(x.days_quantile)]
        drawn = bool(ok)
        for item in (self.all, self.front, self.chosen, self.line):
            item.setVisible(drawn)
        self.legend.setVisible(drawn)
        for side in ("left", "bottom"):
            p.showAxis(side, drawn)
        if not drawn or res is None:
            return
        q = f"p{100 * res.quantile:g}"
        p.setLabel("bottom", f"days to train at {q}")
        self.all.setData([x.days_quantile for x in ok], [x.cost_usd / 1e6 for x in ok])
        self.front.setData([x.days_quantile for x in res.front], [x.cost_usd / 1e6 for x in res.front])
        c = res.chosen
        self.legend.removeItem(self.chosen)
        if c is not None and res.meets:
            self.chosen.setData([c.days_quantile], [c.cost_usd / 1e6])
            self.legend.addItem(self.chosen, "chosen")  # (listed only when drawn)
        else:
            self.chosen.setData([], [])
            self.chosen.setVisible(False)
        self.line.setValue(res.deadline_days)
        # The view holds the front, the deadline and the setups near them; a setup far beyond (thousands of days, a
        # pool that barely runs) would squash the front into a corner (the plot's A button shows everything).
        front_x = [x.days_quantile for x in res.front] or [x.days_quantile for x in ok]
        front_y = [x.cost_usd / 1e6 for x in res.front] or [x.cost_usd / 1e6 for x in ok]
        near = [x for x in ok if x.days_quantile <= 1.5 * max(front_x) and x.cost_usd / 1e6 <= 1.5 * max(front_y)]
        xs = np.array([x.days_quantile for x in near] + front_x + [res.deadline_days])
        ys = np.array([x.cost_usd / 1e6 for x in near] + front_y)
        lo, hi = float(ys.min()), float(ys.max())
        span = (hi - lo) or max(abs(hi) * 0.05, 1e-6)
        p.setXRange(float(xs.min()) * 0.95, float(xs.max()) * 1.05, padding=0)
        p.setYRange(lo - 0.05 * span, hi + 0.35 * span, padding=0)  # (the band above: the legend's)

    def _describe(self, x: float, y: float) -> str:
        res = self.result if self.result is not None else (None if self.searcher is None else self.searcher.result())
        if res is None:
            return ""
        ok = [s for s in res.setups if s.error is None and math.isfinite(s.days_quantile)]
        if not ok:
            return ""
        vb = self.widget.getPlotItem().getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        near = min(
            ok, key=lambda s: ((s.days_quantile - x) / (x1 - x0)) ** 2 + ((s.cost_usd / 1e6 - y) / (y1 - y0)) ** 2
        )
        days = f"{near.days_quantile:,.1f} days at p{100 * res.quantile:g}"
        return f"{near.inputs_text()}\n{days}, ${fmt.compact(near.cost_usd)}"


def result_text(r: Search) -> str:
    """What the search found, in words: the chosen setup or why none, and the runners-up."""
    q = f"p{100 * r.quantile:g}"
    head = f"{fmt.plural(r.evaluated, 'setup')} simulated{' (stopped: the best so far)' if r.stopped else ''}. "
    edges = "" if not r.edges_text() else " " + r.edges_text()
    if r.chosen is None:
        return head + r.verdict()
    c = r.chosen
    if not r.meets:
        return (
            head
            + f"{r.verdict()}: {c.inputs_text()}, {c.days_quantile:,.1f} days at {q}, ${fmt.compact(c.cost_usd)}."
            + edges
        )
    text = head + f"Chosen: {c.inputs_text()}, {c.days_quantile:,.1f} days at {q}, ${fmt.compact(c.cost_usd)} in all."
    for s in r.runners_up:
        what = "; ".join(f"{k} {shown(a)} -> {shown(b)}" for k, (a, b) in differs(c, s).items())
        text += f" Runner-up: {what}, +${fmt.compact(s.cost_usd - c.cost_usd)}."
    return text + edges
