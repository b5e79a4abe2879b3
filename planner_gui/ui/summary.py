"""The summary strip above the plots: the numbers a planner reads first, and how they differ from the
pinned baseline."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ..core.analysis.results import summarize
from ..core.model.scenario import DEFAULT_NOTES
from ..core.model.specs import SPECS
from ..core.session.plan import PlanResult, ShowsMain
from ..core.util import fmt
from .rates_view import SHARES_TIP, variance_text
from .spares_controls import spares_cost_text, spares_hours_text
from .theme import mark_secondary
from .widgets import DoubleSpinBox

__all__ = ["SummaryStrip"]


#: A number and the scale or unit after it ("2.31 M", "8 nodes"): kept on one line in a narrow box.
_UNIT_AFTER_NUMBER = re.compile(r"(\d) ([kMBGT]\b|GPU-h\b|nodes?\b|spares?\b)")


def _near(interval_min: float, best_min: float) -> bool:
    """Whether an interval is the best one as shown (within 5 %): a fixed interval far from it is never "at the
    best interval", even where the goodput barely depends on it (at millions of GPUs both are near 0 %)."""
    return abs(interval_min - best_min) <= 0.05 * best_min


class _Block(QFrame):
    def __init__(self, title: str, name: str, tooltip: str) -> None:
        super().__init__()
        self.setFrameShape(QFrame.Shape.StyledPanel)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.setSpacing(0)
        self.head = QLabel(title)
        mark_secondary(self.head)
        self.value = QLabel("...")
        self.value.setObjectName(name)
        font = self.value.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.value.setFont(font)
        self.detail = QLabel("")
        self.detail.setObjectName(name + "Detail")
        self.versus = QLabel("")
        self.versus.setObjectName(name + "VsBaseline")
        mark_secondary(self.versus)
        for label in (self.value, self.detail, self.versus):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.versus.setVisible(False)
        lay.addWidget(self.head)
        lay.addWidget(self.value)
        lay.addWidget(self.detail)
        lay.addWidget(self.versus)
        self.extra = QHBoxLayout()
        lay.addLayout(self.extra)
        lay.addStretch(1)
        self.setToolTip(tooltip)

    def set_versus(self, text: str | None) -> None:
        self.versus.setText(text or "")
        self.versus.setVisible(bool(text))


def _signed(v: float, digits: int = 1) -> str:
    return f"{v:+,.{digits}f}"


class SummaryStrip(QWidget):
    """Interruptions, time between them, goodput, the checkpoint interval against its optimum, and
    GPU-hours not spent training with their cost. The price box edits the scenario's price."""

    def __init__(self, price_changed) -> None:
        super().__init__()
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._columns = 0
        self.interruptions = _Block(
            "Unplanned interruptions",
            "summaryInterruptions",
            "Monte Carlo mean over trials, with the 5th-95th percentile range.",
        )
        self.every = _Block(
            "Time between interruptions",
            "summaryEvery",
            "Mean time between unplanned interruptions of the whole job: the window over their expected count "
            "(1 / total rate at constant, known rates).",
        )
        self.goodput = _Block(
            "Goodput",
            "summaryGoodput",
            "Compute time never rolled back / wall-clock window (Meta's 'effective training "
            "time'): Monte Carlo mean, 5th-95th percentile, and the exact expectation.",
        )
        self.interval = _Block(
            "Checkpoint interval",
            "summaryInterval",
            "The interval in use against the optimum: the exact model's (which also counts "
            "planned interruptions and restarts), Young's (1974) and Daly's (2006). The "
            "points available are the exact goodput at the exact optimum minus at the "
            "interval in use.",
        )
        self.lost = _Block(
            "GPU-hours not spent training",
            "summaryLost",
            "GPUs x (window - useful compute), and its cost at the price per GPU-hour. "
            + DEFAULT_NOTES["gpu_hour_cost_usd"],
        )
        self.price = DoubleSpinBox()
        self.price.setObjectName("priceSpin")
        self.price.setRange(SPECS["gpu_hour_cost_usd"].lo, SPECS["gpu_hour_cost_usd"].hi)
        self.price.setDecimals(2)
        self.price.setPrefix("$")
        self.price.setSuffix(" / GPU-h")
        self.price.setKeyboardTracking(False)
        self.price.setToolTip("Price per GPU-hour. " + DEFAULT_NOTES["gpu_hour_cost_usd"])
        self.price.setAccessibleName("Price per GPU-hour")
        self.lost.extra.addWidget(self.price)
        self.price.valueChanged.connect(price_changed)
        self.train = _Block(
            "Time to train",
            "summaryTimeToTrain",
            "With a training run (controls, Training run): the simulated wall-clock days to do the run's work "
            "with failures (mean, 5th-95th percentile), the ideal days at 100 % goodput, and the cost of the "
            "GPU-hours used at the price per GPU-hour.",
        )
        self.train.setVisible(False)
        self.blocks = (self.interruptions, self.every, self.goodput, self.interval, self.lost, self.train)
        self._last: ShowsMain | None = None
        self._baseline: PlanResult | None = None
        self._arrange(5)

    def _shown_blocks(self) -> list[_Block]:
        return [b for b in self.blocks if b is not self.train or self._last_has_training()]

    def _last_has_training(self) -> bool:
        return self._last is not None and self._last.main.time_to_train is not None

    def _arrange(self, columns: int) -> None:
        """One row of the blocks shown if ``columns`` hold them, else rows of three."""
        shown = self._shown_blocks()
        columns = len(shown) if columns >= len(shown) else 3
        if columns == self._columns and self._grid.count() == len(shown):
            return
        self._columns = columns
        for b in self.blocks:
            self._grid.removeWidget(b)
        for i, b in enumerate(shown):
            self._grid.addWidget(b, i // columns, i % columns)
        self.train.setVisible(self.train in shown)
        for c in range(6):
            self._grid.setColumnStretch(c, 1 if c < columns else 0)

    def _room(self) -> int:
        """How many blocks fit across: about 180 pixels each."""
        return max(3, self.width() // 180)

    def resizeEvent(self, event) -> None:
        self._arrange(max(3, event.size().width() // 180))
        super().resizeEvent(event)

    def set_price(self, usd: float) -> None:
        """Show the scenario's price (without reporting it back as an edit)."""
        if self.price.value() != usd:
            self.price.blockSignals(True)
            self.price.setValue(usd)
            self.price.blockSignals(False)
        if self._last is not None:
            self._show_cost()

    def set_baseline(self, res: PlanResult | None) -> None:
        self._baseline = res
        if self._last is not None:
            self._show_versus()

    def show_result(self, res: ShowsMain) -> None:
        self._last = res
        m = res.main
        sc = m.scenario
        it = summarize(m.trials.unplanned)
        self.interruptions.value.setText(fmt.count(it.mean, 1 if it.mean < 10 else 0))  # 0.5, not 1
        self.interruptions.detail.setText(
            f"p05-p95 {fmt.count(it.p05)}-{fmt.count(it.p95)}; planned {m.trials.planned.mean():,.1f}"
        )
        varying = sc.rate_profile is not None or sc.rate_uncertainty or sc.nodes_vary
        # The window over the expected count: with a profile, rate uncertainty or a new cluster's node lives, their
        # average over the run.
        n = m.expected.unplanned
        gap = sc.hours / n if n > 0 else float("inf")
        self.every.value.setText(fmt.every(gap))
        self.every.detail.setText(  # with rates that vary, one GPU's on the same footing as the job's
            f"one GPU: {fmt.every(gap * sc.gpus if varying else sc.gpu_mtbf_hours)}"
            + ("\non average over the window" if varying else "")
        )
        g = summarize(m.goodput)
        self.goodput.value.setText(fmt.percent(g.mean))
        self.goodput.detail.setText(
            f"p05-p95 {fmt.percent(g.p05)}-{fmt.percent(g.p95)}; "
            f"exact {fmt.exact_percent(m.expected.goodput, why=m.no_closed_form)}"
        )
        spares = spares_hours_text(m)
        if spares is not None:
            self.goodput.detail.setText(f"{self.goodput.detail.text()}\n{spares}")
        shares = variance_text(m.to_json_dict()) if sc.rate_uncertainty else None
        if shares is not None:  # with rate uncertainty: how much of the spread the rates cause, and chance
            self.interruptions.detail.setText(f"{self.interruptions.detail.text()}\n{shares[0]}")
            self.goodput.detail.setText(f"{self.goodput.detail.text()}\n{shares[1]}")
        for block in (self.interruptions, self.goodput):
            block.detail.setToolTip(SHARES_TIP if shares is not None else "")
        if m.tier_plan is not None:
            self._show_tier_intervals(res)
            self._show_cost()
            self._show_versus()
            self._arrange(self._room())
            return
        opt = m.optimal
        how = "Daly" if sc.uses_optimal_interval else "fixed"
        at_best, now = m.goodput_at_optimum(), m.expected.goodput
        gain = 100 * (at_best - now) if at_best is not None and now is not None else 0.0
        self.interval.value.setText(f"{fmt.duration_min(m.interval_min)} ({how})")
        restarts = ""
        if m.spares_run is not None:  # no closed form: the Monte Carlo curve over intervals shows the best
            best = "best: see the interval plot (no closed form with spares)"
            if sc.spares is not None and sc.spares.recovery_mode == "continue":
                restarts = " (of the failures that restart)"
        elif at_best is None or now is None:
            best = f"best: see the interval plot (no closed form with {m.no_closed_form})"
        elif gain < 0.05 and _near(m.interval_min, opt.exact):
            best = f"at the best interval ({fmt.duration_min(opt.exact)})"
        else:
            best = f"best {fmt.duration_min(opt.exact)}: +{gain:.1f} points available"
        self.interval.detail.setText(
            f"{best}\nYoung {fmt.duration_min(opt.young)}, Daly {fmt.duration_min(opt.daly)}{restarts}"
        )
        self._show_cost()
        self._show_versus()
        self._arrange(self._room())

    def _show_tier_intervals(self, res: ShowsMain) -> None:
        """Each tier's interval in use and its optimum, and the restores from each tier (docs/tiers.md)."""
        m = res.main
        tp = m.tier_plan
        assert tp is not None
        restores = m.restores()
        fixed = "optimal" if m.scenario.uses_optimal_interval else "fixed"
        persistent = f"persistent {fmt.duration_min(tp.persistent_min)} ({fixed})"
        if tp.persistent_unneeded and m.scenario.uses_optimal_interval:
            persistent = (
                f"persistent {fmt.duration_min(tp.persistent_min)} (daily by policy: never needed by this model)"
            )
        at_best, now = m.goodput_at_optimum(), m.expected.goodput
        if at_best is None or now is None:
            best = "best: no closed form (Monte Carlo only)"
            if tp.fast_optimum_is_formulas:
                best = (
                    "best: no closed form; the fast optimum is the fast tier's formula's, without the upload "
                    "cadence (see the interval plot)"
                )
            if tp.persistent_optimum_is_formulas and not tp.persistent_unneeded:
                best += "; the persistent optimum is Young's rule for its own stall"
        else:
            gain = 100 * (at_best - now)
            near = _near(tp.persistent_min, tp.optimal.persistent_min) and (
                tp.fast_min is None or _near(tp.fast_min, tp.optimal.fast_min)
            )
            best = "at the best intervals" if gain < 0.05 and near else f"best intervals: +{gain:.1f} points available"
        best += "."
        restored = f"restores: memory {fmt.count(restores['fast'], 1)}, storage {fmt.count(restores['persistent'], 1)}"
        if restores.get("failed"):
            restored += f" ({fmt.count(restores['failed'], 1)} after a restore from memory failed)"
        yd = tp.fast_young_daly()
        if tp.fast_min is None or yd is None:
            self.interval.value.setText(persistent)
            self.interval.detail.setText(
                f"fast tier off; optimum {fmt.duration_min(tp.optimal.persistent_min)}; {best}\n{restored}"
            )
            return
        fast_how = "optimal" if tp.tiers.fast_interval_min == "optimal" else "fixed"
        self.interval.value.setText(f"fast {fmt.duration_min(tp.fast_min)} ({fast_how})")
        self.interval.detail.setText(
            f"{persistent}: {fmt.each(tp.k, 'snapshot')}\nfast optimum {fmt.duration_min(tp.optimal.fast_min)}, Young "
            f"{fmt.duration_min(yd[0])}, Daly {fmt.duration_min(yd[1])}; {best}\n{restored}"
        )

    def _show_cost(self) -> None:
        if self._last is None:
            return
        lost = float(self._last.main.lost_gpu_hours().mean())
        self.lost.value.setText(f"{fmt.compact(lost)} GPU-h")
        text = f"costs {fmt.money(lost * self.price.value())}"
        pool = spares_cost_text(self._last.main, self.price.value())
        if pool is not None:
            text += f"\n{pool}"
        sc = self._last.main.scenario
        if sc.warm_spare_gpus:  # (the racks' warm spare trays, held out of the job the whole window)
            warm = sc.warm_spare_gpus * sc.hours
            text += f"\nwarm spares {fmt.compact(warm)} GPU-h, {fmt.money(warm * self.price.value())}"
        self.lost.detail.setText(_UNIT_AFTER_NUMBER.sub("\\1\u00a0\\2", text))  # "$2.31 M" never splits
        self._show_time_to_train()

    def _show_time_to_train(self) -> None:
        t = self._last.main.time_to_train if self._last is not None else None
        if t is None:
            return
        d = summarize(t.hours / 24.0)
        price = self.price.value()
        used = float(t.gpu_hours().mean())
        if d.p05 >= 1.0:
            self.train.value.setText(f"{d.mean:,.1f} days")
            spread = f"p05-p95 {d.p05:,.1f}-{d.p95:,.1f}; ideal {t.work_hours / 24:,.1f}"
        else:  # under a day: hours or minutes, not "0.0 days"
            self.train.value.setText(fmt.duration_hours(d.mean * 24.0))
            spread = (
                f"p05-p95 {fmt.duration_hours(d.p05 * 24.0)}-{fmt.duration_hours(d.p95 * 24.0)}; "
                f"ideal {fmt.duration_hours(t.work_hours)}"
            )
        self.train.detail.setText(
            f"{spread}\n"
            f"costs {fmt.money(used * price)}, of which lost {fmt.money((used - t.compute_gpu_hours) * price)}"
        )

    def _show_versus(self) -> None:
        b, r = self._baseline, self._last
        if b is None or r is None:
            for block in self.blocks:
                block.set_versus(None)
            return
        name = fmt.clean(b.main.scenario.name, 30)
        d_int = float(r.main.trials.unplanned.mean() - b.main.trials.unplanned.mean())
        d_gp = 100 * float(r.main.goodput.mean() - b.main.goodput.mean())
        d_lost = float(r.main.lost_gpu_hours().mean() - b.main.lost_gpu_hours().mean())
        self.interruptions.set_versus(f"vs baseline: {_signed(d_int)}")
        self.goodput.set_versus(f"vs baseline: {_signed(d_gp, 2)} points")
        self.lost.set_versus(f"vs baseline: {'+' if d_lost >= 0 else '-'}{fmt.compact(abs(d_lost))} GPU-h")
        self.every.set_versus(f"baseline: {name}")
        self.interval.set_versus(f"baseline: {fmt.duration_min(b.main.interval_min)}")
        tr, tb = r.main.time_to_train, b.main.time_to_train
        if tr is not None and tb is not None:
            d_days = float(tr.hours.mean() - tb.hours.mean()) / 24.0
            self.train.set_versus(f"vs baseline: {_signed(d_days)} days")
        else:
            self.train.set_versus(None)
