"""The "Spares and repairs" group of the controls: the spare pool, swap time, repair times per category,
shrinking, the recovery mode and the replica size (docs/spares.md).

Each control writes exactly its field of the scenario's :class:`~planner_gui.core.model.spares.Spares` (a scenario
without a spares section gets the defaults, which change no number, with that one field set). Unlimited
spares, no swap time and restart mode are today's model.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QGroupBox, QHBoxLayout, QLabel, QVBoxLayout

from ..core.analysis.results import SimulationResult
from ..core.model.spares import DEFAULT_REPAIR_HOURS, RECOVERY_MODES, Spares, node_categories, repair_hours_of
from ..core.model.specs import SPECS
from ..core.session.inputs import Inputs
from ..core.util import fmt
from .theme import mark_secondary
from .widgets import Collapsible, ComboBox, RowsInTurns, SpinBox, ValueControl, spec_control

__all__ = ["DEFAULT_POOL", "SparesBox", "model_text", "spares_cost_text", "spares_hours_text"]

#: The pool a finite pool starts with: BLOOM's share (4 of 52 nodes, 7.7 %) would be far more than the 99 %
#: pool at scale, so the box starts from 1 % of the job's nodes, at least 1.
DEFAULT_POOL = 0.01
#: About how long a category's repair-time row takes to build.
REPAIR_MS = 0.35
#: What the price and the rent start at when first turned on: an H100 node of 8 GPUs bought, and rented by the
#: hour (estimates with no single source; set your own).
DEFAULT_NODE_PRICE = 300_000.0
DEFAULT_NODE_RENT = 20.0


class SparesBox(QGroupBox):
    """Spare nodes (or unlimited), swap time, repair times per category, lognormal sigma, shrinking, and the
    recovery mode with its replica size, stall and the most replicas a failure may take out."""

    dragFinished = Signal()

    def __init__(self, inputs: Inputs, rows: RowsInTurns | None = None) -> None:
        super().__init__("Spares and repairs")
        self.setObjectName("sparesBox")
        self.inputs = inputs
        lay = QVBoxLayout(self)
        self.finite = QCheckBox("Finite spare pool")
        self.finite.setObjectName("sparesFiniteCheck")
        self.finite.setToolTip(
            "Off: unlimited spares, a failed node is replaced at once and for free (today's model). On: the job "
            "owns this many spare nodes; with too few it waits for repairs (or shrinks)."
        )
        self.finite.toggled.connect(self._finite_toggled)
        lay.addWidget(self.finite)
        self.pool = spec_control("spare_nodes", "spareNodesSlider")
        self._pool_step = self.pool.spin.singleStep()
        self.pool.edited.connect(self._pool_edited)
        self.swap = spec_control("swap_min", "swapSlider")
        self.swap.edited.connect(lambda v: self._set(swap_min=float(v)))
        self.mode = ComboBox()
        self.mode.setObjectName("recoveryModeCombo")
        self.mode.addItems(list(RECOVERY_MODES))
        self.mode.setToolTip(
            "restart: every failure restarts the job from its checkpoint (today). continue: the job is "
            "data-parallel replicas; a failure inside one stalls the others briefly and takes that replica out "
            "until it is back, losing no work (Meta's FT-HSDP)."
        )
        self.mode.currentTextChanged.connect(lambda t: self._set(recovery_mode=t))
        row = QHBoxLayout()
        row.addWidget(QLabel("Recovery"))
        row.addWidget(self.mode, 1)
        self.replica = spec_control("replica_gpus", "replicaGpusSlider")
        self.replica.edited.connect(self._replica_edited)
        self.stall = spec_control("continue_stall_min", "continueStallSlider")
        self.stall.edited.connect(lambda v: self._set(continue_stall_min=float(v)))
        self.lost = SpinBox()
        self.lost.setObjectName("maxReplicasLostSpin")
        self.lost.setRange(0, int(SPECS["max_replicas_lost"].hi))
        self.lost.setKeyboardTracking(False)
        self.lost.setToolTip(SPECS["max_replicas_lost"].help)
        self.lost.valueChanged.connect(lambda v: self._set(max_replicas_lost=int(v)))
        lost_row = QHBoxLayout()
        lost_row.addWidget(QLabel("Replicas lost at most"))
        lost_row.addWidget(self.lost, 1)
        self.shrink = QCheckBox("Shrink instead of waiting")
        self.shrink.setObjectName("sparesShrinkCheck")
        self.shrink.setToolTip(SPECS["min_gpus"].help)
        self.shrink.toggled.connect(self._shrink_toggled)
        self.min_gpus = ValueControl(
            SPECS["min_gpus"].label,
            SPECS["min_gpus"].unit,
            slider_range=(8, 1_048_576),
            value_range=(SPECS["min_gpus"].lo, SPECS["min_gpus"].hi),
            decimals=0,
            object_name="shrinkToSlider",
            tooltip=SPECS["min_gpus"].help,
        )
        self.min_gpus.edited.connect(lambda v: self._set(min_gpus=round(v)))
        self.lognormal = QCheckBox("Lognormal repair times")
        self.lognormal.setObjectName("lognormalRepairsCheck")
        self.lognormal.setToolTip(
            "Off: exponential repair times (the default). On: lognormal with the sigma below (0: every repair "
            "lasts its mean), as --repair-sigma on the command line."
        )
        self.lognormal.toggled.connect(self._lognormal_toggled)
        self.sigma = spec_control(
            "repair_sigma",
            "repairSigmaSlider",
            slider=(0.05, 4.0),
            decimals=2,
            tooltip=SPECS["repair_sigma"].help + " 0: every repair lasts its mean.",
        )
        self.sigma.edited.connect(lambda v: self._set(repair_sigma=float(v)))
        # The pool's price (docs/spares.md, "The pool's cost"): bought (a node's price written off over years) and
        # rented (a node-hour's rent); neither: its GPU-hours at the price per GPU-hour, as before.
        self.cost = Collapsible("Cost of the pool")
        self.cost.setObjectName("poolCost")
        self.bought = QCheckBox("Bought: a node's price, written off")
        self.bought.setObjectName("poolBoughtCheck")
        self.bought.setToolTip(
            "On: the pool costs each node's price over the years below, for every hour it is held (an H100 node of "
            f"8 GPUs, about ${fmt.compact(DEFAULT_NODE_PRICE)}: an estimate, set yours). Off: priced as its GPU-hours."
        )
        self.bought.toggled.connect(lambda on: self._price_toggled("node_price_usd", DEFAULT_NODE_PRICE, on))
        self.price = spec_control("node_price_usd", "spareNodePriceSlider")
        self.price.edited.connect(lambda v: self._set(node_price_usd=float(v)))
        self.years = spec_control("depreciation_years", "depreciationSlider")
        self.years.edited.connect(lambda v: self._set(depreciation_years=float(v)))
        self.rented = QCheckBox("Rented: a node-hour's rent")
        self.rented.setObjectName("poolRentedCheck")
        self.rented.setToolTip("On: the pool pays each node's rent per hour (with a price too, both).")
        self.rented.toggled.connect(lambda on: self._price_toggled("rental_usd_per_node_hour", DEFAULT_NODE_RENT, on))
        self.rent = spec_control("rental_usd_per_node_hour", "spareNodeRentSlider")
        self.rent.edited.connect(lambda v: self._set(rental_usd_per_node_hour=float(v)))
        for w in (self.bought, self.price, self.years, self.rented, self.rent):
            self.cost.addWidget(w)
        self.repairs = Collapsible("Repair times")
        self.repairs.setObjectName("repairTimes")
        self.repair: dict[str, ValueControl] = {}
        for w in (self.pool, self.swap):
            lay.addWidget(w)
        lay.addLayout(row)
        for w in (self.replica, self.stall):
            lay.addWidget(w)
        lay.addLayout(lost_row)
        lay.addWidget(self.shrink)
        lay.addWidget(self.min_gpus)
        lay.addWidget(self.repairs)
        lay.addWidget(self.cost)
        self.repairs.addWidget(self.lognormal)
        self.repairs.addWidget(self.sigma)
        self.note = QLabel()
        self.note.setObjectName("sparesNote")
        self.note.setWordWrap(True)
        mark_secondary(self.note)
        lay.addWidget(self.note)
        for control in (self.pool, self.swap, self.replica, self.stall, self.min_gpus, self.sigma, *self._prices):
            control.dragFinished.connect(self.dragFinished)
        self._categories: tuple[str, ...] = ()
        self.rows = rows if rows is not None else RowsInTurns(self)
        self.follow()

    @property
    def _prices(self) -> tuple[ValueControl, ...]:
        return (self.price, self.years, self.rent)

    @property
    def controls(self) -> tuple[ValueControl, ...]:
        return (
            self.pool,
            self.swap,
            self.replica,
            self.stall,
            self.min_gpus,
            self.sigma,
            *self._prices,
            *self.repair.values(),
        )

    @property
    def spares(self) -> Spares:
        return self.inputs.scenario.spares or Spares()

    # -- edits -----------------------------------------------------------------------------
    def _set(self, **fields: Any) -> None:
        new = dataclasses.replace(self.spares, **fields)
        # Shrinking needs a finite pool and applies in restart mode (the one table refuses it otherwise): leaving
        # either turns it off with it.
        if new.min_gpus is not None and (new.spare_nodes is None or new.recovery_mode == "continue"):
            new = dataclasses.replace(new, min_gpus=None)
        if new != self.inputs.scenario.spares:
            self.inputs.update(spares=new)

    def _pool_edited(self, v: float) -> None:
        """The pool as set; on racks, in whole racks (the nearest, the box showing it)."""
        sc = self.inputs.scenario
        pool = round(v)
        if sc.uses_nvlink:
            q = sc.trays_per_rack
            pool = round(v / q) * q
            if pool != v:
                self.pool.set_value(pool)
        self._set(spare_nodes=pool)

    def _finite_toggled(self, on: bool) -> None:
        if on == (self.spares.spare_nodes is not None):
            return
        sc = self.inputs.scenario
        nodes = max(1, -(-sc.gpus // sc.gpus_per_node))
        pool = max(1, round(DEFAULT_POOL * nodes))
        if sc.uses_nvlink:  # (the pool holds whole racks: 1 % of the job's racks, at least one)
            pool = max(1, round(DEFAULT_POOL * sc.racks)) * sc.trays_per_rack
        self._set(spare_nodes=pool if on else None)

    def _price_toggled(self, field: str, default: float, on: bool) -> None:
        if on == (getattr(self.spares, field) is not None):
            return
        self._set(**{field: default if on else None})

    def _shrink_toggled(self, on: bool) -> None:
        if on == (self.spares.min_gpus is not None):
            return
        sc = self.inputs.scenario
        self._set(min_gpus=max(1, sc.gpus // 2) if on else None)

    def _lognormal_toggled(self, on: bool) -> None:
        if on == (self.spares.repair_sigma is not None):
            return
        self._set(repair_sigma=1.0 if on else None)

    def _replica_edited(self, v: float) -> None:
        gpn = self.inputs.scenario.gpus_per_node
        self._set(replica_gpus=max(gpn, round(v / gpn) * gpn))

    def _repair_edited(self, category: str, hours: float) -> None:
        pairs = dict(self.spares.repair_hours)
        pairs[category] = float(hours)
        self._set(repair_hours=tuple(pairs.items()))

    # -- following the inputs -----------------------------------------------------------------
    def _build_repairs(self, categories: tuple[str, ...]) -> None:
        """A repair time for each category, a batch a turn once there are many (:class:`.widgets.RowsInTurns`)."""
        for control in self.repair.values():
            self.repairs.removeWidget(control)
            control.deleteLater()
        self.repair = {}
        self._categories = categories
        self.rows.start("repairs", categories, self._build_repair, lambda _cat: REPAIR_MS)

    def _build_repair(self, cat: str) -> None:
        spec = SPECS["repair_hours"]
        assert spec.slider is not None
        why = DEFAULT_REPAIR_HOURS.get(cat, (0.0, "No published repair time: a planner input."))[1]
        control = ValueControl(
            fmt.clean(cat, 30),
            spec.unit,
            slider_range=spec.slider,
            value_range=(spec.lo, spec.hi),
            decimals=1,
            object_name=f"repairSlider:{cat}",
            tooltip=f"{spec.help} {why}",
        )
        control.edited.connect(lambda v, cat=cat: self._repair_edited(cat, v))
        control.dragFinished.connect(self.dragFinished)
        control.set_value(repair_hours_of(cat, self.spares))
        control.setEnabled(self.spares.spare_nodes is not None or self.inputs.scenario.rack_repairs_matter)
        self.repair[cat] = control
        self.repairs.addWidget(control)

    def follow(self) -> None:
        """Show what the inputs hold."""
        sc = self.inputs.scenario
        sp = self.spares
        cats = node_categories(sc)
        if cats != self._categories:
            self._build_repairs(cats)
        for w, on in (
            (self.finite, sp.spare_nodes is not None),
            (self.shrink, sp.min_gpus is not None),
            (self.lognormal, sp.repair_sigma is not None),
        ):
            w.blockSignals(True)
            w.setChecked(on)
            w.blockSignals(False)
        self.mode.blockSignals(True)
        self.mode.setCurrentText(sp.recovery_mode)
        self.mode.blockSignals(False)
        self.lost.blockSignals(True)
        self.lost.setValue(sp.max_replicas_lost)
        self.lost.blockSignals(False)
        if sp.spare_nodes is not None:
            self.pool.set_value(sp.spare_nodes)
        self.pool.setEnabled(sp.spare_nodes is not None)
        self.swap.set_value(sp.swap_min)
        cont = sp.recovery_mode == "continue"
        self.replica.set_value(sp.replica_gpus)
        self.stall.set_value(sp.continue_stall_min)
        for control in (self.replica, self.stall, self.lost):
            control.setEnabled(cont)
        if sp.min_gpus is not None:
            self.min_gpus.set_value(sp.min_gpus)
        # Shrinking is restart mode's answer to a short pool; continue mode runs on the replicas it has.
        self.shrink.setEnabled(not cont)
        self.min_gpus.setEnabled(sp.min_gpus is not None and not cont)
        self.shrink.setToolTip(
            "Applies in restart mode: in continue mode the job runs on the replicas it has."
            if cont
            else SPECS["min_gpus"].help
        )
        if sp.repair_sigma is not None:
            self.sigma.set_value(sp.repair_sigma)
        self.sigma.setEnabled(sp.repair_sigma is not None)
        for cat, control in self.repair.items():
            control.set_value(repair_hours_of(cat, sp))
        # Repair times matter only to a finite pool (with unlimited spares a lost node is replaced at once), or to
        # racks with warm spare trays (a spare is busy while its tray is repaired): turning the pool off turns them
        # off with it, as it does shrinking.
        finite = sp.spare_nodes is not None
        repairs = finite or sc.rack_repairs_matter
        for control in self.repair.values():
            control.setEnabled(repairs)
        self.lognormal.setEnabled(repairs)
        self.sigma.setEnabled(repairs and sp.repair_sigma is not None)
        # On racks the pool holds whole racks: its box steps a rack at a time.
        steps = QAbstractSpinBox.StepType
        self.pool.spin.setStepType(steps.DefaultStepType if sc.uses_nvlink else steps.AdaptiveDecimalStepType)
        self.pool.spin.setSingleStep(sc.trays_per_rack if sc.uses_nvlink else self._pool_step)
        for check, control, value in (
            (self.bought, self.price, sp.node_price_usd),
            (self.rented, self.rent, sp.rental_usd_per_node_hour),
        ):
            check.blockSignals(True)
            check.setChecked(value is not None)
            check.blockSignals(False)
            check.setEnabled(finite)  # (an unlimited pool costs nothing)
            if value is not None:
                control.set_value(value)
            control.setEnabled(finite and value is not None)
        self.years.set_value(sp.depreciation_years)
        self.years.setEnabled(finite and sp.node_price_usd is not None)
        nodes = max(1, -(-sc.gpus // sc.gpus_per_node))
        self.note.setText(model_text(sp, nodes))


def model_text(sp: Spares, nodes: int) -> str:
    """Which model the group puts on, in one line: today's, or what the pool, the swap and the mode add."""
    if sp.is_todays:
        return "Model: today's (unlimited spares, no swap, restart); repair times change nothing."
    if sp.spare_nodes is None:
        pool = f"unlimited spares over {nodes:,} nodes"
    else:
        pool = f"{sp.spare_nodes:,} spares ({fmt.percent(sp.spare_nodes / nodes, 2)} of {nodes:,} nodes)"
    swap = f", a {fmt.duration_min(sp.swap_min)} swap after each failure that loses a node" if sp.swap_min else ""
    text = f"Model on: {pool}{swap}; {sp.recovery_mode}."
    if sp.spare_nodes is not None and sp.priced:
        text += f" The pool is priced at {sp.pool_basis()}."
    if sp.spare_nodes is None:
        text += " Repair times change nothing without a finite pool (on racks with warm spare trays, they do)."
    return text


def spares_hours_text(res: SimulationResult) -> str | None:
    """The hours spares add, for the summary (None without spares)."""
    run = res.spares_run
    if run is None:
        return None
    hours = res.hours_per_trial()
    names = {"waiting_for_spares": "waiting for spares", "reduced_throughput": "reduced throughput"}
    parts = [f"{names[k]} {hours[k].mean():,.1f} h" for k in res.hours_keys if k in names]
    parts.append(f"no spare {fmt.percent(run.trials.p_no_spare(), 1)}")
    return "; ".join(parts)


def spares_cost_text(res: SimulationResult, price: float) -> str | None:
    """The spare pool's GPU-hours and cost, for the summary (None without a finite pool)."""
    run = res.spares_run
    if run is None or run.idle_gpu_hours is None:
        return None
    as_gpu_hours = f"spare pool {fmt.compact(run.idle_gpu_hours)} GPU-h, {fmt.money(run.idle_gpu_hours * price)}"
    if not run.spares.priced:
        return as_gpu_hours
    sc = run.scenario
    priced = run.spares.pool_cost_per_hour(sc.gpus_per_node, price) * sc.hours
    return f"spare pool {fmt.money(priced)} as priced ({as_gpu_hours.removeprefix('spare pool ')} as GPU-hours)"
