"""The "Recovery tiers" group of the controls: the in-memory (fast) tier, its replicas and their placement,
the failure domains, the persistent tier's background upload and restore, and each component's failure scope
(docs/tiers.md).

The persistent tier's interval and blocking write are the Checkpointing group's. Each control here writes
exactly its field of :class:`~planner_gui.core.model.scenario.Tiers` (or one component's ``scope``) through the
window's :class:`~planner_gui.core.session.inputs.Inputs` and follows what it holds.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from ..core.model.scenario import OPTIMAL, SCOPES, Component, Scenario, Tiers
from ..core.model.specs import SPECS
from ..core.model.tiers import DEFAULT_SCOPES, restore_caveat, restoring_tier, scope_of
from ..core.session.inputs import Inputs
from ..core.sim.tiers_run import plan_tiers
from ..core.util import fmt
from .theme import mark_secondary
from .widgets import Collapsible, ComboBox, RowsInTurns, SpinBox, ValueControl, spec_control

__all__ = ["PLACEMENT_TEXT", "TiersBox"]

#: The placement combo's items: what it shows for each ``fast_placement``.
#: About how long a cause's scope row takes to build.
SCOPE_MS = 0.2
PLACEMENT_TEXT = {"other-domain": "another domain", "same-domain": "the same domain"}
#: Labels of the controls (kept short: the panel is narrow).
_LABELS = {
    "fast_interval_min": "Fast interval",
    "fast_stall_s": "Fast stall",
    "fast_restore_min": "Fast restore",
    "persistent_upload_min": "Upload (background)",
    "persistent_restore_min": "Persistent restore",
}


def _default_scope_text(name: str, category: str) -> str:
    if name in DEFAULT_SCOPES:
        scope, reason = DEFAULT_SCOPES[name]
        return f"Default: {scope}. {reason}"
    return f"Default for the {category} category. "


class TiersBox(QGroupBox):
    """The recovery strategy's inputs and each component's failure scope."""

    dragFinished = Signal()

    def __init__(self, inputs: Inputs, rows: RowsInTurns | None = None) -> None:
        super().__init__("Recovery tiers")
        self.setObjectName("tiersBox")
        self.inputs = inputs
        lay = QVBoxLayout(self)
        self.fast = QCheckBox("Fast tier (host memory)")
        self.fast.setObjectName("fastTierCheck")
        self.fast.setToolTip(
            "Snapshot into host memory, replicated to peer nodes, and restore from there when the failure "
            "leaves a copy (docs/tiers.md). Off: every failure restores from the persistent tier (the "
            "Checkpointing group's), as in today's model."
        )
        self.fast.toggled.connect(lambda on: self.inputs.set_tiers(fast_enabled=bool(on)))
        lay.addWidget(self.fast)
        self.fast_optimal = QCheckBox("Optimal fast interval")
        self.fast_optimal.setObjectName("fastOptimalCheck")
        self.fast_optimal.setToolTip(
            "The fast interval that maximises the exact goodput at the total unplanned rate, the fast stall and "
            "the fast restore (Young's and Daly's are in the summary). Off: a fixed interval."
        )
        self.fast_optimal.toggled.connect(self.inputs.set_use_optimal_fast)
        lay.addWidget(self.fast_optimal)
        self.values: dict[str, ValueControl] = {}
        for field, name in (
            ("fast_interval_min", "fastIntervalSlider"),
            ("fast_stall_s", "fastStallSlider"),
            ("fast_restore_min", "fastRestoreSlider"),
        ):
            lay.addWidget(self._value(field, name))
        grid = QGridLayout()
        grid.setContentsMargins(0, 2, 0, 2)
        self.replicas = self._spin("fast_replicas", "fastReplicasSpin")
        self.placement = ComboBox()
        self.placement.setObjectName("fastPlacementCombo")
        for key, text in PLACEMENT_TEXT.items():
            self.placement.addItem(text, key)
        self.placement.setToolTip(
            "Where each node's replicas live: in another failure domain (a domain failure leaves a copy), or in "
            "the node's own domain (a domain failure restores from the persistent tier)."
        )
        self.placement.currentIndexChanged.connect(
            lambda i: self.inputs.set_tiers(fast_placement=self.placement.itemData(i))
        )
        self.domain = self._spin("nodes_per_domain", "nodesPerDomainSpin")
        self._domain_tip = self.domain.toolTip()
        captions: tuple[tuple[str, QWidget], ...] = (
            ("Replicas", self.replicas),
            ("Replicas in", self.placement),
            ("Nodes per domain", self.domain),
        )
        for row, (text, widget) in enumerate(captions):
            caption = QLabel(text)
            caption.setToolTip(widget.toolTip())
            grid.addWidget(caption, row, 0)
            grid.addWidget(widget, row, 1)
        grid.setColumnStretch(1, 1)
        lay.addLayout(grid)
        persistent = QLabel("Persistent tier (interval and blocking write: Checkpointing)")
        persistent.setWordWrap(True)
        lay.addWidget(persistent)
        for field, name in (
            ("persistent_upload_min", "persistentUploadSlider"),
            ("persistent_restore_min", "persistentRestoreSlider"),
        ):
            lay.addWidget(self._value(field, name))
        self.info = QLabel()
        self.info.setObjectName("tiersInfo")
        self.info.setWordWrap(True)
        mark_secondary(self.info)
        lay.addWidget(self.info)
        self.scopes = Collapsible("Failure scope of each cause")
        self.scopes.setObjectName("scopeTable")
        self._scope_body: QWidget | None = None
        lay.addWidget(self.scopes)
        self.scope_combos: dict[str, QComboBox] = {}
        self._scope_keys: list[tuple[str, str]] = []
        self.rows = rows if rows is not None else RowsInTurns(self)
        self.follow()

    # -- construction ----------------------------------------------------------------------------
    def _value(self, field: str, object_name: str) -> ValueControl:
        spec = SPECS[field]
        control = spec_control(field, object_name, label=_LABELS[field], tooltip=f"{spec.label}: {spec.help}")
        control.edited.connect(lambda v: self.inputs.set_tiers(**{field: float(v)}))
        control.dragFinished.connect(self.dragFinished)
        self.values[field] = control
        return control

    def _spin(self, field: str, object_name: str) -> SpinBox:
        spec = SPECS[field]
        w = SpinBox()
        w.setObjectName(object_name)
        w.setRange(int(spec.lo), int(min(spec.hi, 2_147_483_647)))
        w.setKeyboardTracking(False)
        w.setGroupSeparatorShown(True)
        w.setToolTip(spec.help)
        w.setAccessibleName(spec.label)
        w.valueChanged.connect(lambda v: self.inputs.set_tiers(**{field: int(v)}))
        return w

    def _build_scopes(self, sc: Scenario) -> None:
        """A scope for each cause, a batch a turn once there are many (:class:`.widgets.RowsInTurns`)."""
        if self._scope_body is not None:
            self.scopes.removeWidget(self._scope_body)
            self._scope_body.deleteLater()
        body = QWidget()
        grid = QGridLayout(body)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setColumnStretch(0, 1)
        self.scope_combos = {}
        self._scope_body = body
        self.scopes.addWidget(body)
        self._scope_keys = [(c.name, c.category) for c in sc.components]
        self.rows.start(
            "scopes", list(enumerate(sc.components)), lambda item: self._build_scope(grid, *item), lambda _: SCOPE_MS
        )

    def _build_scope(self, grid: QGridLayout, row: int, c: Component) -> None:
        label = QLabel(fmt.clean(c.name, 40))
        label.setMinimumWidth(40)
        label.setToolTip(fmt.clean(c.name))
        combo = ComboBox()
        combo.setObjectName(f"scopeCombo:{c.name}")
        combo.addItems(list(SCOPES))
        combo.setAccessibleName(f"{fmt.clean(c.name)} scope")
        combo.setToolTip(
            f"{fmt.clean(c.name)}: what one failure loses. process: the job only (host memory survives); "
            "node: one server with its memory; domain: every node of one failure domain. "
            + _default_scope_text(c.name, fmt.clean(c.category))
        )
        current = next((x for x in self.inputs.scenario.components if x.name == c.name), c)
        combo.setCurrentText(scope_of(current))
        combo.currentTextChanged.connect(lambda text, name=c.name: self.inputs.set_scope(name, text))
        grid.addWidget(label, row, 0)
        grid.addWidget(combo, row, 1)
        self.scope_combos[c.name] = combo

    # -- following the inputs ----------------------------------------------------------------------
    @property
    def controls(self) -> tuple[ValueControl, ...]:
        return tuple(self.values.values())

    def follow(self) -> None:
        """Show what the inputs hold."""
        sc = self.inputs.scenario
        t = sc.tiers if sc.tiers is not None else Tiers()
        on = t.fast_enabled
        widgets = (self.fast, self.fast_optimal, self.replicas, self.placement, self.domain)
        for w in widgets:
            w.blockSignals(True)
        try:
            self.fast.setChecked(on)
            self.fast_optimal.setChecked(t.fast_interval_min == OPTIMAL)
            self.replicas.setValue(min(t.fast_replicas, self.replicas.maximum()))
            self.placement.setCurrentIndex(max(self.placement.findData(t.fast_placement), 0))
            self.domain.setValue(min(t.nodes_per_domain, self.domain.maximum()))
        finally:
            for w in widgets:
                w.blockSignals(False)
        fast = self.inputs.fast_interval_minutes() if on else None
        if fast is None:  # off, or 'optimal' for a strategy that cannot be: the interval as set, else as shown
            shown = self.values["fast_interval_min"].value()
            fast = shown if t.fast_interval_min == OPTIMAL else float(t.fast_interval_min)
        self.values["fast_interval_min"].set_value(fast)
        for field in ("fast_stall_s", "fast_restore_min", "persistent_upload_min", "persistent_restore_min"):
            self.values[field].set_value(getattr(t, field))
        for control in (self.fast_optimal, self.replicas, self.placement, *self.values.values()):
            control.setEnabled(on)
        # A domain's size matters to the fast tier (where replicas survive) and to a finite pool (the nodes a
        # domain failure sends to repair): shown wherever it applies, greyed only where neither is on. On racks the
        # rack is the failure domain (docs/model.md, "Racks"): the box is not used.
        self.domain.setEnabled((on or sc.uses_spares) and not sc.uses_nvlink)
        self.domain.setToolTip(
            f"On racks the failure domain is the rack: {sc.job_trays_per_rack:,} nodes of the job."
            if sc.uses_nvlink
            else self._domain_tip
        )
        self.values["fast_interval_min"].setEnabled(on and t.fast_interval_min != OPTIMAL)
        for field in ("persistent_upload_min", "persistent_restore_min"):
            self.values[field].setEnabled(True)
        if [(c.name, c.category) for c in sc.components] != self._scope_keys:
            self._build_scopes(sc)
        for c in sc.components:
            combo = self.scope_combos.get(c.name)
            if combo is None:  # built in a later turn, with the scope in force then
                continue
            combo.blockSignals(True)
            combo.setCurrentText(scope_of(c))
            combo.blockSignals(False)
        self.info.setText(self._info(sc, t))

    @staticmethod
    def _point_stall(sc: Scenario) -> str:
        """What a persistent checkpoint blocks for, with the fast tier on."""
        if sc.write_s == 0:
            return "A persistent checkpoint blocks no longer than a fast one (Checkpointing write 0 s)."
        return (
            "A persistent checkpoint blocks the fast stall plus the Checkpointing write "
            f"({fmt.duration_min(sc.write_s / 60.0)})."
        )

    def _info(self, sc: Scenario, t: Tiers) -> str:
        """In words: the intervals in use and how many failures restore from each tier."""
        if not t.fast_enabled:
            return (
                f"Fast tier off: every failure restores from storage, at the Checkpointing interval "
                f"({fmt.duration_min(self.inputs.interval_minutes())}). Scopes matter only with the fast tier on."
            )
        try:
            plan = plan_tiers(sc.replace(tiers=t))
        except (ValueError, ZeroDivisionError, OverflowError) as exc:  # shown, not raised: the window refuses it
            return f"Cannot plan: {fmt.clean(str(exc), 200)}"
        assert plan.fast_min is not None  # the fast tier is on
        fast_components = sum(1 for c in sc.components if restoring_tier(scope_of(c), t) == "fast")
        per = plan.params
        total = per.lam_fast + per.lam_persistent
        share = f"{100 * per.lam_fast / total:.0f} %" if total > 0 else "none"
        every = "every fast snapshot" if plan.k == 1 else f"every {plan.k:,} fast snapshots"
        if plan.persistent_unneeded:
            every = f"daily by policy (never needed by this model's failures): every {plan.k:,} fast snapshots"
        uploads = "" if plan.upload_every == 1 else f"; uploads start at one point in {plan.upload_every}"
        return (
            f"In use: fast {fmt.duration_min(plan.fast_min)}; persistent {every} "
            f"({fmt.duration_min(plan.persistent_min)}){uploads}. {self._point_stall(sc)} "
            f"{fast_components} of {len(sc.components)} causes ({share} of failures) can restore from memory"
            + ("" if per.lam_persistent == 0 else " (not those during a restore from storage)")
            + "."
            + ("" if (caveat := restore_caveat(sc, t)) is None else f" Note: {caveat[0].upper()}{caveat[1:]}.")
        )
