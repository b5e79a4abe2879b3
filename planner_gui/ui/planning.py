"""The Planning tab: days and cost to train against GPU count, which change buys the most, and the
pinned scenarios side by side.

Everything here is drawn from what the compute process returns (:class:`~planner_gui.core.session.plan.PlanResult`:
the cost curve with its Monte Carlo) and from the pinned results. The sensitivity bars are exact
expectations (a few closed-form evaluations, about 2 ms), so they are computed here and follow the
improvement factor at once.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.analysis.compare import comparison, show_value
from ..core.analysis.sensitivity import (
    DEFAULT_FACTOR,
    Effect,
    cost_words,
    has_closed_form,
    levers,
    per_dollar,
    sensitivity,
)
from ..core.analysis.training import CostCurve, TimeToTrain
from ..core.session.plan import SENSITIVITY_TRIALS, PlanResult
from ..core.util import fmt
from .goal_view import GoalView
from .plot_items import PALETTE, Axis, CountAxis, Hover, axes, brush, nearest, pen
from .prices_dialog import LeverPricesDialog
from .theme import mark_secondary, secondary_color
from .tornado_view import TornadoView
from .widgets import DoubleSpinBox

__all__ = ["PLANNING_PLOTS", "PlanningPanel"]

#: objectName -> title of the Planning tab's plots.
PLANNING_PLOTS = {
    "daysVsGpusPlot": "Days to train vs GPUs",
    "costVsGpusPlot": "Cost to train vs GPUs",
    "sensitivityPlot": "Which change buys the most",
    "tornadoPlot": "What is unsure",
    "frontPlot": "Days to train against cost",
}


def _money(v: float) -> str:
    return f"{'-' if v < 0 else ''}${fmt.compact(abs(v))}"


class PlanningPanel(QWidget):
    """Days and cost vs GPU count (with a training compute), the sensitivity bars, the comparison table."""

    #: The factor changed where only a full run can rank the levers (paired Monte Carlo): its new value.
    factorChanged = Signal(float)
    #: The planner priced the levers (the Prices dialog): the new ``lever_prices``, (lever, dollars) pairs.
    pricesEdited = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.text_color = secondary_color()
        self.widgets: dict[str, pg.PlotWidget] = {}
        self.hovers: dict[str, Hover] = {}
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(4)
        for i, (name, title) in enumerate(PLANNING_PLOTS.items()):
            if name in ("tornadoPlot", "frontPlot"):  # (their own views')
                continue
            special: dict[str, Axis] = {}
            if name != "sensitivityPlot":
                special["bottom"] = CountAxis("bottom")
            if name == "daysVsGpusPlot":
                special["left"] = CountAxis("left")
            w = pg.PlotWidget(axisItems=axes(**special))
            w.setObjectName(name)
            w.setTitle(title)
            w.setMinimumSize(240, 170)
            self.widgets[name] = w
            if name != "sensitivityPlot":
                grid.addWidget(w, 0, i)
        sens = QWidget()
        sens_lay = QVBoxLayout(sens)
        sens_lay.setContentsMargins(0, 0, 0, 0)
        sens_lay.setSpacing(2)
        row = QHBoxLayout()
        row.addWidget(QLabel("Improve each lever by a factor of"))
        self.factor = DoubleSpinBox()
        self.factor.setObjectName("sensitivityFactorSpin")
        self.factor.setRange(0.01, 0.99)
        self.factor.setSingleStep(0.05)
        self.factor.setDecimals(2)
        self.factor.setValue(DEFAULT_FACTOR)
        self.factor.setKeyboardTracking(False)
        self.factor.setToolTip(
            "Each lever's time or rate is multiplied by this factor (0.5: halved); the GPU count lever takes "
            "that share of the GPUs. Bars: goodput points gained, from the exact expectations."
        )
        self.factor.valueChanged.connect(self._factor_changed)
        row.addWidget(self.factor)
        row.addStretch(1)
        self.prices_button = QPushButton("Prices...")
        self.prices_button.setObjectName("leverPricesButton")
        self.prices_button.setToolTip(
            "What each change would cost to buy: a priced bar says the dollars it saves per dollar paid"
        )
        self.prices_button.clicked.connect(self._edit_prices)
        row.addWidget(self.prices_button)
        sens_lay.addLayout(row)
        self.sensitivity_note = QLabel()
        self.sensitivity_note.setObjectName("sensitivityNote")
        self.sensitivity_note.setWordWrap(True)
        self.sensitivity_note.setVisible(False)
        sens_lay.addWidget(self.sensitivity_note)
        sens_lay.addWidget(self.widgets["sensitivityPlot"], 1)
        self.tornado = TornadoView()
        self.widgets["tornadoPlot"] = self.tornado.widget
        # Which change buys the most, and what is unsure, one at a time in the room below the curves.
        self.questions = QTabWidget()
        self.questions.setObjectName("planningQuestions")
        self.questions.setDocumentMode(True)
        self.questions.addTab(sens, "Which change buys the most")
        self.questions.addTab(self.tornado, "What is unsure")
        self.goal = GoalView()
        self.widgets["frontPlot"] = self.goal.widget
        self.goal_page = QScrollArea()  # (its fields and table need more room than the bars: narrow windows scroll)
        self.goal_page.setWidgetResizable(True)
        self.goal_page.setFrameShape(QFrame.Shape.NoFrame)
        self.goal_page.setWidget(self.goal)
        self.questions.addTab(self.goal_page, "Cheapest setup")
        self.questions.currentChanged.connect(lambda _i: self._show_tornado())
        grid.addWidget(self.questions, 1, 0)
        self.note = QLabel()
        self.note.setObjectName("planningNote")
        self.note.setWordWrap(True)
        mark_secondary(self.note)
        self.table = QTableWidget()
        self.table.setObjectName("comparisonTable")
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(0, 0, 0, 0)
        heading = QLabel("Pinned scenarios side by side (View > Pin Scenario adds the current one)")
        heading.setWordWrap(True)
        lay.addWidget(heading)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.note)
        grid.addWidget(side, 1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        # The questions below (levers, the tornado, the goal seek with its table) need more height than the curves.
        grid.setRowStretch(0, 2)
        grid.setRowStretch(1, 3)
        self._build_cost_plots()
        self._build_sensitivity()
        for w in self.widgets.values():  # never narrower than the plot's title and axes need
            need = w.getPlotItem().effectiveSizeHint(Qt.SizeHint.MinimumSize).width()
            w.setMinimumWidth(max(w.minimumWidth(), math.ceil(need) + 2))
        self.result: PlanResult | None = None
        self.price = 0.0
        self.lever_prices: tuple[tuple[str, float], ...] = ()
        self.effects: list[Effect] = []

    def plot(self, name: str) -> pg.PlotItem:
        return self.widgets[name].getPlotItem()

    # -- construction ------------------------------------------------------------------------------
    def _build_cost_plots(self) -> None:
        self.empty: dict[str, pg.TextItem] = {}
        self.curves: dict[str, tuple[pg.PlotDataItem, pg.ErrorBarItem, pg.ScatterPlotItem, pg.ScatterPlotItem]] = {}
        for name, label in (("daysVsGpusPlot", "days"), ("costVsGpusPlot", "cost ($ M)")):
            p = self.plot(name)
            p.setLabel("bottom", "GPUs")
            p.setLabel("left", label)
            p.getAxis("left").enableAutoSIPrefix(False)
            p.showGrid(x=False, y=True, alpha=0.15)
            legend = p.addLegend(offset=(-5, 5), labelTextSize="8pt", labelTextColor=self.text_color)
            line = p.plot(pen=pen(PALETTE[0]), antialias=True)
            legend.addItem(line, "expected (exact goodput)")
            spread = pg.ErrorBarItem(x=np.zeros(1), y=np.zeros(1), top=0, bottom=0, beam=0.05, pen=pen(PALETTE[1], 1.5))
            dots = pg.ScatterPlotItem(size=7, brush=pg.mkBrush(PALETTE[1]), pen=None)
            p.addItem(spread)
            p.addItem(dots)
            legend.addItem(dots, "Monte Carlo mean, p05-p95")
            current = pg.ScatterPlotItem(size=11, brush=pg.mkBrush(PALETTE[2]), pen=pg.mkPen("w", width=1))
            p.addItem(current)
            legend.addItem(current, "current GPU count")
            self.curves[name] = (line, spread, dots, current)
            empty = pg.TextItem(
                "Turn on Training run (left)\nto see days and cost to train",
                anchor=(0.5, 0.5),
                color=self.text_color,
            )
            empty.setPos(4.5, 0.5)
            empty.setVisible(False)
            p.addItem(empty, ignoreBounds=True)
            self.empty[name] = empty
            self.hovers[name] = Hover(self.widgets[name], partial(self._describe_cost, name))

    def _build_sensitivity(self) -> None:
        p = self.plot("sensitivityPlot")
        p.invertY(True)
        p.setLabel("bottom", "goodput points gained")
        p.getAxis("bottom").enableAutoSIPrefix(False)
        self.bars = pg.BarGraphItem(x0=[0], y=[0], height=0.7, width=[0], brush=brush(PALETTE[4]))
        p.addItem(self.bars)
        self.bar_labels: list[pg.TextItem] = []
        self.hovers["sensitivityPlot"] = Hover(self.widgets["sensitivityPlot"], self._describe_effect, line=False)

    # -- updates -----------------------------------------------------------------------------------
    def show_result(self, res: PlanResult) -> None:
        """Draw the cost curve and the sensitivity of ``res`` (either may be absent)."""
        self.result = res
        for hover in self.hovers.values():
            hover.hide()
        self._show_cost(res.cost_curve, res.main.scenario.gpus, res.main.time_to_train)
        self._show_effects(self._effects(self.factor.value()))
        self._show_tornado()

    def _show_tornado(self) -> None:
        """The tornado of the scenario shown, when its tab is (it costs a few closed-form evaluations per input, or
        waits to be asked for paired Monte Carlo); the goal seek's scenario, when its tab is."""
        if self.result is None:
            return
        if self.questions.currentWidget() is self.tornado:
            self.tornado.show_scenario(self._scenario())
        elif self.questions.currentWidget() is self.goal_page:
            t = self.result.main.time_to_train
            self.goal.show_scenario(self._scenario(), None if t is None else float(t.hours.mean()) / 24.0)

    def _effects(self, factor: float) -> list[Effect]:
        """The levers' effects: from the exact expectations where the model has them (at once, as the factor or the
        price moves); else those the full run ranked by paired Monte Carlo, at the factor it was asked for (a new
        factor asks for a new run: ``factorChanged``)."""
        sc = self._scenario()
        if has_closed_form(sc):
            self.sensitivity_note.setVisible(False)
            return sensitivity(sc, factor)
        res = self.result
        if res is not None and res.effects is not None and res.request.factor == factor:
            trials = min(sc.trials, SENSITIVITY_TRIALS)
            self.sensitivity_note.setText(
                f"No closed form here: paired Monte Carlo ({trials:,} trials, the same draws with and without each "
                "change), each bar ± one standard error in its hover."
            )
            self.sensitivity_note.setVisible(True)
            prices = dict(self.lever_prices)  # (priced after the run: prices are not simulated)
            return [dataclasses.replace(e, price_usd=prices.get(e.lever)) for e in res.effects]
        self.sensitivity_note.setText(
            "No closed form here: the levers are ranked by paired Monte Carlo with the full run (computing...)."
        )
        self.sensitivity_note.setVisible(True)
        return []

    def _factor_changed(self, factor: float) -> None:
        if self.result is None:
            return
        if not has_closed_form(self._scenario()) and self.result.request.factor != factor:
            self.factorChanged.emit(factor)  # a paired Monte Carlo at the new factor: the window asks for it
        self._show_effects(self._effects(factor))

    def set_price(self, usd: float) -> None:
        """The price per GPU-hour changed (it is not computed): costs and savings follow at once."""
        self.price = usd
        if self.result is not None:
            self.show_result(self.result)

    def set_lever_prices(self, prices: tuple[tuple[str, float], ...]) -> None:
        """The levers' prices changed (they are not computed): the bars' dollars per dollar follow at once."""
        self.lever_prices = tuple(prices)
        if self.result is not None:
            self._show_effects(self._effects(self.factor.value()))

    def _edit_prices(self) -> None:
        """The Prices dialog, for the levers of the scenario shown; OK says the new prices (``pricesEdited``)."""
        if self.result is None:
            return
        dialog = LeverPricesDialog(levers(self._scenario(), self.factor.value()), self.lever_prices, self)
        if dialog.exec() and dialog.prices() != self.lever_prices:  # (1: accepted)
            self.pricesEdited.emit(dialog.prices())

    def _scenario(self) -> Any:
        """The result's scenario at the prices shown."""
        assert self.result is not None
        return self.result.main.scenario.replace(gpu_hour_cost_usd=self.price, lever_prices=self.lever_prices)

    def _show_cost(self, curve: CostCurve | None, gpus: int, current: TimeToTrain | None) -> None:
        for name in ("daysVsGpusPlot", "costVsGpusPlot"):
            for item in self.curves[name]:
                item.setVisible(curve is not None)
            self.empty[name].setVisible(curve is None)
            self.plot(name).legend.setVisible(curve is not None)  # nothing it names is drawn without a curve
            for side in ("left", "bottom"):  # without a curve, ticks would only number an empty frame
                self.plot(name).showAxis(side, curve is not None)
        if curve is None:
            self.note.setText("")
            for name in self.empty:
                self.plot(name).setXRange(3, 6, padding=0)
                self.plot(name).setYRange(0, 1, padding=0)
            return
        for name in ("daysVsGpusPlot", "costVsGpusPlot"):
            label = self.plot(name).legend.getLabel(self.curves[name][0])
            if label is not None and label.text != curve.line_name:
                label.setText(curve.line_name)
        lx = np.log10(curve.gpus)
        finite = np.isfinite(curve.days) & (curve.days > 0)
        used = curve.days * 24.0 * curve.gpus  # GPU-hours used at each count
        self._draw_cost(
            "daysVsGpusPlot",
            lx,
            curve.days,
            finite,
            [(t.gpus, t.hours / 24.0) for t in curve.mc],
            None if current is None else (gpus, current.hours / 24.0),
            log=True,
        )
        self._draw_cost(
            "costVsGpusPlot",
            lx,
            used * self.price / 1e6,
            finite,
            [(t.gpus, t.gpu_hours() * self.price / 1e6) for t in curve.mc],
            None if current is None else (gpus, current.gpu_hours() * self.price / 1e6),
            log=False,
        )
        dots = "; dots and whiskers: simulated time to train, mean and p05-p95." if curve.mc else "."
        if not finite.any():
            self.note.setText(f"The training run finishes at none of these GPU counts. Lines: {curve.expected_from}.")
            return
        best = int(np.argmin(np.where(finite, curve.days, np.inf)))
        cheapest = int(np.argmin(np.where(finite, used, np.inf)))
        sp = self.result.main.scenario.spares if self.result is not None else None
        pool = (
            f" A spare pool keeps its share of the nodes at each count ({fmt.plural(sp.spare_nodes, 'node')} at "
            f"{fmt.count(gpus)} GPUs)."
            if sp is not None and sp.spare_nodes is not None
            else ""
        )
        self.note.setText(
            f"Fewest days at {fmt.count(curve.gpus[best])} GPUs ({curve.days[best]:,.1f} days); beyond it, adding "
            f"GPUs slows the run. Least cost at {fmt.count(curve.gpus[cheapest])} GPUs "
            f"({_money(used[cheapest] * self.price)}). Lines: {curve.expected_from}{dots}{pool}"
        )

    def _draw_cost(
        self,
        name: str,
        lx: np.ndarray,
        y: np.ndarray,
        finite: np.ndarray,
        mc: Sequence[tuple[int, np.ndarray]],
        current: tuple[int, np.ndarray] | None,
        *,
        log: bool,
    ) -> None:
        """One plot: the expected curve, the Monte Carlo points with their p05-p95, the current count.
        With ``log``, values are drawn as log10 (the axis labels them as values)."""
        f = np.log10 if log else (lambda v: np.asarray(v, dtype=float))
        line, spread, dots, marker = self.curves[name]
        line.setData(lx[finite], f(y[finite]))
        mc_x = np.log10([n for n, _ in mc]) if mc else np.zeros(0)
        means = np.array([float(v.mean()) for _, v in mc])
        lo = np.array([float(np.percentile(v, 5)) for _, v in mc])
        hi = np.array([float(np.percentile(v, 95)) for _, v in mc])
        if mc:
            spread.setData(x=mc_x, y=f(means), top=f(hi) - f(means), bottom=f(means) - f(lo))
        else:
            spread.setData(x=np.zeros(0), y=np.zeros(0), top=np.zeros(0), bottom=np.zeros(0))
        dots.setData(mc_x, f(means) if mc else np.zeros(0))
        if current is not None:
            marker.setData([math.log10(current[0])], [float(f(np.array([current[1].mean()]))[0])])
        else:
            marker.setData([], [])
        p = self.plot(name)
        shown = np.concatenate([y[finite], hi, [] if current is None else [float(current[1].mean())]])
        p.setXRange(float(lx[0]), float(lx[-1]), padding=0.02)
        if shown.size and log:
            low, high = float(np.min(shown)), float(np.max(shown))
            p.setYRange(math.log10(low) - 0.05, math.log10(high) + 0.05, padding=0)
        elif shown.size:
            p.setYRange(0, float(np.max(shown)) * 1.05, padding=0)

    def _show_effects(self, effects: list[Effect]) -> None:
        self.effects = effects
        p = self.plot("sensitivityPlot")
        for t in self.bar_labels:
            p.removeItem(t)
        self.bar_labels = []
        points = np.array([100 * e.goodput_delta for e in effects]) if effects else np.zeros(0)
        self.bars.setOpts(x0=np.minimum(points, 0), y=np.arange(len(effects)), width=np.abs(points), height=0.7)
        p.getAxis("left").setTicks([[(i, e.change) for i, e in enumerate(effects)]])
        for i, e in enumerate(effects):
            days = "" if e.days_delta is None else f", {_signed_days(e.days_delta)}"
            # A priced lever shows what it returns per dollar in place of its dollars (in its readout, both).
            money = fmt.signed_money(e.cost_delta_usd) if e.price_usd is None else per_dollar(e, short=True)
            label = pg.TextItem(
                f" {fmt.signed(100 * e.goodput_delta)}{days}, {money}",
                anchor=(0, 0.5),
                color=pg.getConfigOption("foreground"),
            )
            label.setPos(max(points[i], 0.0), i)
            p.addItem(label, ignoreBounds=True)
            self.bar_labels.append(label)
        right = float(points.max()) if points.size else 1.0
        # Room on the right for the labels: about as wide as the longest bar for a label of 25 characters, in
        # proportion for longer ones (a priced lever's "$1.47 saved per $").
        longest = max((len(t.toPlainText()) for t in self.bar_labels), default=25)
        room = 1.0 + 1.8 * max(longest, 25) / 25
        p.setXRange(min(float(points.min()), 0.0) if points.size else 0.0, max(right, 1e-6) * room, padding=0)
        p.setYRange(-0.6, max(len(effects), 1) - 0.4, padding=0)

    def show_comparison(self, results: Sequence[PlanResult], labels: Sequence[str]) -> None:
        """The current scenario (first in ``results``) and the pinned ones side by side: the pinned first, in the
        order pinned, the current last, so each difference is against the first pinned (as the summary's "vs
        baseline")."""
        if len(results) >= 2:
            results, labels = [*results[1:], results[0]], [*labels[1:], labels[0]]
        if len(results) < 2:
            self.table.clear()
            self.table.setRowCount(1)
            self.table.setColumnCount(1)
            self.table.setItem(
                0,
                0,
                QTableWidgetItem("Pin scenarios (View > Pin Scenario, Ctrl+B) to compare them with the current one."),
            )
            self.table.horizontalHeader().setVisible(False)
            self.table.verticalHeader().setVisible(False)
            return
        self.table.horizontalHeader().setVisible(True)
        self.table.verticalHeader().setVisible(True)
        doc = comparison(list(labels), [r.main.scenario for r in results], [r.main.to_json_dict() for r in results])
        rows = [(r["input"], r["values"]) for r in doc["inputs"]]
        for r in doc["outputs"]:
            values = [show_value(v, r["unit"]) for v in r["values"]]
            values = [values[0]] + [
                f"{v} ({show_value(d, r['unit'], True)})" for v, d in zip(values[1:], r["differences"][1:])
            ]
            rows.append((r["output"], values))
        self.table.clear()
        self.table.setColumnCount(len(labels))
        self.table.setRowCount(len(rows))
        # Names wrap (up to 4 lines of 28 characters) rather than being cut until they look alike.
        self.table.setHorizontalHeaderLabels(["\n".join(textwrap.wrap(fmt.clean(n, 112), 28)) for n in labels])
        for j, n in enumerate(labels):
            header = self.table.horizontalHeaderItem(j)
            if header is not None:
                header.setToolTip(fmt.clean(n, 200))
        self.table.setVerticalHeaderLabels([label for label, _ in rows])
        for i, (_, values) in enumerate(rows):
            for j, v in enumerate(values):
                item = QTableWidgetItem(fmt.clean(str(v), 60))
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)

    # -- readouts ---------------------------------------------------------------------------------------
    def _describe_cost(self, name: str, x: float, y: float = 0.0) -> str:
        res = self.result
        if res is None or res.cost_curve is None:
            return ""
        c = res.cost_curve
        i = nearest(np.log10(c.gpus), x)
        per_day = 24.0 * float(c.gpus[i]) * self.price
        return (
            f"{fmt.count(c.gpus[i])} GPUs: {c.days[i]:,.1f} days (ideal {c.ideal_days[i]:,.1f}), "
            f"{_money(c.days[i] * per_day)}\ngoodput {fmt.percent(c.goodput[i])}; goodput lost costs "
            f"{_money((c.days[i] - c.ideal_days[i]) * per_day)}"
        )

    def _describe_effect(self, x: float, y: float) -> str:
        k = round(y)
        if not 0 <= k < len(self.effects):
            return ""
        e = self.effects[k]
        se = "" if e.goodput_delta_se is None else f" ± {100 * e.goodput_delta_se:.2g}"
        days = "" if e.days_delta is None else f"; time to train {_signed_days(e.days_delta)}"
        what = cost_words(self._scenario()) if self.result is not None else "cost"
        cost = f"{what} {fmt.signed_money(e.cost_delta_usd)}"
        paid = "" if e.price_usd is None else f"; {per_dollar(e)}"
        return f"{e.change}: goodput {fmt.signed(100 * e.goodput_delta)}{se} points{days}; {cost}{paid}"


def _signed_days(days: float) -> str:
    """A change in days to train, signed, in days or (under a day) hours: "+11.2 d", "-3.5 h", "0 h"."""
    if abs(days) >= 1.0:
        return f"{days:+,.1f} d"
    hours = days * 24.0
    if round(hours, 1) == 0:
        return "0 h"
    return f"{hours:+.1f} h"
