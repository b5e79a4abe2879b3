"""The left panel: every input of a scenario, with tooltips that cite each default's source.

The controls hold no state of their own: each writes to the window's :class:`~planner_gui.core.session.inputs.Inputs`
and shows what it holds, so a control can never show one thing while the scenario says another.
Component rows are keyed by the component's name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ..core.files.scenario_io import ScenarioError, validate
from ..core.files.values import NAME_MAX_LEN, check_weibull, weibull_doc
from ..core.model.scenario import DEFAULT_NOTES, SDC_NAME, Scenario, llama3_components
from ..core.model.spares import (
    correlated_caveats,
    correlated_nodes,
    correlated_nodes_text,
    correlated_then,
    spare_racks,
)
from ..core.model.specs import SPECS
from ..core.session.inputs import Inputs, detect_by_entry, parse_detect_by, parse_weibull, weibull_entry
from ..core.sim.capabilities import bad_misfit, racks_misfit
from ..core.theory.bad_nodes import bad_exact
from ..core.theory.profiles import bad_window, expected_by_component
from ..core.util import fmt
from .input_filter import InputFilter
from .rates_panel import RatesFromDataPanel
from .spares_controls import SparesBox
from .storage_controls import StorageBox
from .theme import mark_secondary
from .tiers_controls import TiersBox
from .training_controls import TrainingBox
from .widgets import Collapsible, RowsInTurns, SpinBox, ValueControl, nice_gpu_count, sig_text, spec_control

__all__ = ["MULT_RANGE", "ControlsPanel"]

MULT_RANGE = (0.01, 100.0)
#: About how long a category's folding group with its multiplier, and a component's row, take to build.
CATEGORY_MS, COMPONENT_MS = 0.5, 1.0
MULT_VALUES = (0.0, 10_000.0)


@lru_cache(maxsize=1)
def _llama3_names() -> frozenset[str]:
    return frozenset(c.name for c in llama3_components())


def rate_text(rate: float) -> str:
    """A rate per GPU-hour for people: per 1,000 GPU-days and as one GPU's mean time between."""
    mtbf = fmt.duration_hours(1.0 / rate) if rate > 0 else "never"
    return f"{sig_text(rate * 24_000)} per 1,000 GPU-days; one GPU: every {mtbf}"


def _slow_note(sc: Scenario) -> str:
    """What the Fail-slow nodes group's inputs mean at the current size, in words."""
    if not sc.uses_slow:
        return "Off: no node runs slow (set a rate to model stragglers)"
    return (
        f"A node turns slow {sc.slow_every_text()} at {sc.gpus:,} GPUs; the job runs at "
        f"{fmt.percent(sc.slow_factor, 0)} of its speed for {fmt.duration_min(sc.slow_detect_min)} each time, "
        "then restarts without it"
    )


def _sdc_note(sc: Scenario, persistent_min: Callable[[], float]) -> str:
    """What the Silent data corruption group's inputs mean, in words: how many corruptions the window sees, how late
    they are found, and about how many find no clean checkpoint kept."""
    comp = sc.sdc_component
    if comp is None:
        return f"No component is named {SDC_NAME}: nothing here is found late (add one to the rates to model it)"
    count = float(expected_by_component(sc)[sc.failure_components.index(comp)])
    seen = f"{count:,.1f} silent corruptions expected in the window ({fmt.clean(comp.name, 40)})"
    if not sc.uses_sdc:
        kept = "; the checkpoints kept matter only when they are found late" if sc.retained_checkpoints else ""
        return f"Off: {seen}, each found at once like any failure{kept}"
    interval = persistent_min() if sc.retained_checkpoints > 0 else 0.0  # (the share needs it: ask only then)
    share = sc.sdc_unkept_share(interval)
    unkept = (
        f"; about {fmt.percent(share, 0)} of them come {sc.retained_checkpoints:,} saves or more after they start "
        "(were the job never down), find no clean checkpoint kept and start the run over (keep "
        f"{sc.sdc_kept_for(0.05, interval):,} for 5 % or less)"
        if sc.retained_checkpoints > 0
        else "; every checkpoint kept: each rolls back to the last clean one"
    )
    return (
        f"{seen}, each found {fmt.duration_hours(sc.sdc_detect_hours)} after it starts on average; checkpoints "
        f"taken since are poisoned{unkept}"
    )


def _bad_note(sc: Scenario) -> str:
    """What the Bad nodes group's inputs mean, in words: how many nodes are bad at the start, how many of their failures
    the window sees beyond a good node's, how many are still bad at its end, and how many pulls take a healthy node."""
    if not sc.uses_bad:
        return "Off: every node fails at its components' rates (the other inputs here apply to bad nodes only)"
    misfit = bad_misfit(sc)
    if misfit is not None:
        why = misfit.split(": ", 1)[1]  # (the line without the key it names)
        return why[:1].upper() + why[1:]
    e = bad_window(sc)
    about = "" if bad_exact(sc) else "about "
    start = round(sc.bad_share * sc.job_nodes)
    wrong = (
        f"; {fmt.percent(1.0 - sc.diagnosis_p, 0)} of pulls take a healthy node, while one is left, and leave the "
        "failed one"
        if sc.diagnosis_p < 1.0
        else ""
    )
    return (
        f"{fmt.count(start)} of the {fmt.count(sc.job_nodes)} nodes bad at the start, failing "
        f"{sc.bad_multiplier:g}x as often: {about}{fmt.count(float(e.extra[0]), 1)} more failures in the window than "
        f"good nodes would have, {about}{fmt.count(float(e.bad[0]), 1)} still bad at its end{wrong}"
    )


def _fail_note(sc: Scenario) -> str:
    """What the Checkpoints that fail group's inputs mean, in words."""
    if sc.save_fail_p <= 0 and sc.restore_fail_p <= 0:
        return "Off: every save and every restore succeeds"
    parts = []
    if sc.save_fail_p > 0:
        parts.append(f"{100.0 * sc.save_fail_p:.3g}% of saves fail: the job keeps the checkpoint before each")
    if sc.restore_fail_p > 0 and sc.fast_tier_on:
        parts.append(
            f"{100.0 * sc.restore_fail_p:.3g}% of restores from memory fail: the job then restores from storage"
        )
    elif sc.restore_fail_p > 0:
        parts.append("failed restores from memory: unused, the in-memory tier is off")
    return "; ".join(parts)


def _correlated_note(sc: Scenario) -> str:
    """What the Correlated failures group's inputs mean at the current size, in words."""
    if not sc.uses_correlated:
        return "Off: failures come one cause at a time (set a rate for power feeds, PDU rows, cooling loops)"
    gpus = min(correlated_nodes(sc) * sc.gpus_per_node, sc.gpus)
    return (
        f"One every {fmt.duration_hours(24.0 / sc.correlated_rate_per_day)} at every GPU count, taking "
        f"{correlated_nodes_text(sc)} ({gpus:,} GPUs) for {fmt.duration_hours(sc.correlated_repair_hours)} on "
        f"average; {correlated_then(sc)}{correlated_caveats(sc)}"
    )


def _racks_note(sc: Scenario) -> str:
    """What the Racks group's inputs mean at the current size, in words (or why they do not fit)."""
    why = racks_misfit(sc)
    if why is not None:
        return "Does not fit: " + why.split(": ", 1)[1]
    if not sc.uses_nvlink:
        unused = f"; the {fmt.plural(sc.rack_spare_trays, 'warm spare tray')} are unused" if sc.rack_spare_trays else ""
        return (
            "Off: each node stands alone (72 GPUs for GB200 NVL72 racks, with 4 GPUs per node: a failed tray then "
            f"stops its whole rack's part of the job){unused}"
        )
    pool = spare_racks(sc)
    moves = "moves to a spare rack" + (
        " (unlimited)" if pool is None else f" ({fmt.plural(pool, 'spare rack')} in the pool)"
    )
    covered = (
        f"a failed tray is swapped for a warm spare of its rack while one is free, else the rack {moves}"
        if sc.rack_spare_trays
        else f"a failed tray's rack {moves}"
    )
    warm = sc.racks * sc.rack_spare_trays * sc.gpus_per_node
    held = f"; {warm:,} GPUs held as warm spares" if warm else ""
    move = f"; {sc.rack_move_text()}" if sc.rack_move_text() else ""
    return f"{sc.rack_text()} ({sc.racks * sc.nvlink_gpus:,} GPUs in racks{held}); {covered}{move}"


def _lives_note(sc: Scenario) -> str:
    """What the Node lives group's inputs mean at the current size, in words: each life, and how a new node's hazard
    compares with the long-run rate at a day and at the window's end."""
    comps = {c.name: c for c in sc.components}
    lives = [(comps[n], k) for n, k in sc.weibull if n in comps and k != 1.0]
    if not lives:
        where = "a new cluster: no node in repair at the start" if sc.new_cluster else "a long run's steady state"
        return (
            "Exponential: every node's hazard is constant (name a component with a Weibull shape below 1 for infant "
            f"mortality, above 1 for wear-out); {where}"
        )
    parts = []
    for c, k in lives:
        if c.rate_per_gpu_hour <= 0:
            parts.append(f"{fmt.clean(c.name, 40)}: rate 0, never fails")
            continue
        eta, mean = sc.weibull_scale_hours(c), sc.weibull_mean_life_hours(c)

        def ratio(age: float, k: float = k, eta: float = eta, mean: float = mean) -> str:
            r = k / eta * (age / eta) ** (k - 1.0) * mean  # a node's hazard at that age over 1 / mean life
            return f"{r:.2g} times" if r >= 1.0 else f"{100.0 * r:.2g}%"

        first = ratio(24.0)
        later = min(sc.hours, mean)  # (a node seldom lives much past its mean life)
        parts.append(
            f"{fmt.clean(c.name, 40)}: shape {fmt.number(k)}, scale {fmt.duration_hours(eta)} (mean "
            f"{fmt.duration_hours(mean)}) per node; a new node's hazard is {first}{'' if 'times' in first else ' of'} "
            f"the long-run rate at a day, {ratio(later)} at {fmt.duration_hours(later)}"
            + (" (its mean life)" if later < sc.hours else "")
        )
    where = (
        "a new cluster: every node new and none in repair at the start"
        if sc.new_cluster
        else "nodes in their steady state, where the lives change little but the count's spread (tick New cluster "
        "for a burn-in)"
    )
    return "; ".join(parts) + f". {where[0].upper()}{where[1:]}"


def _shown_name(name: str) -> str:
    """A scenario's name as its field shows it: control and format characters (a right-to-left override that
    would show the rest of it backwards, a line break) as escapes, as the title bar shows them."""
    return fmt.clean(name, NAME_MAX_LEN * 8)


class _ComponentRow(QWidget):
    """One component: its rate as a multiple of its reference rate, and the rate in words."""

    def __init__(self, inputs: Inputs, name: str, category: str) -> None:
        super().__init__()
        self.inputs, self.name = inputs, name
        reference = inputs.reference_rate(name)
        self.control = ValueControl(
            fmt.clean(name, 60),
            "x Ref.",
            slider_range=MULT_RANGE,
            value_range=MULT_VALUES,
            decimals=3,
            object_name=f"componentSlider:{name}",
            tooltip=f"{fmt.clean(name)} ({fmt.clean(category)}): its rate as a multiple of the reference rate "
            f"(x1 = {rate_text(reference)}). The reference is the Llama 3 rate for a Llama 3 cause, "
            f"else the rate in the scenario as opened. {DEFAULT_NOTES['components']}",
        )
        self.control.setObjectName(f"component:{name}")
        self.info = QLabel()
        self.info.setIndent(8)
        self.info.setWordWrap(True)
        mark_secondary(self.info)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 4)
        lay.setSpacing(0)
        lay.addWidget(self.control)
        lay.addWidget(self.info)
        self.control.edited.connect(lambda v: inputs.set_multiplier(name, v))
        if reference == 0:  # nothing to multiply: the rate stays as it is
            self.control.setEnabled(False)

    def refresh(self) -> None:
        self.control.set_value(self.inputs.multiplier(self.name))
        rate = next(c.rate_per_gpu_hour for c in self.inputs.scenario.components if c.name == self.name)
        self.info.setText(rate_text(rate))


class ControlsPanel(QScrollArea):
    """All scenario inputs. ``dragFinished`` fires when a slider is let go; ``dragging`` says if one is held."""

    dragFinished = Signal()

    def __init__(self, inputs: Inputs) -> None:
        super().__init__()
        self.inputs = inputs
        self.rows = RowsInTurns(self)  # the rows of components, repair times and scopes, built in turns if many
        self.setWidgetResizable(True)
        self.setMinimumWidth(330)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.values: dict[str, ValueControl] = {}  # scenario field -> its control
        self._shown_factor: dict[str, float] = {}  # scenario field -> what its control shows per unit of it
        self.comp_rows: dict[str, _ComponentRow] = {}
        self.cat_mult: dict[str, ValueControl] = {}
        body = QWidget()
        self._layout = QVBoxLayout(body)
        self._build_filter()
        self._build_name()
        self._build_cluster()
        self._build_rates()
        self.rates_from_data = RatesFromDataPanel(inputs)
        self._layout.addWidget(self.rates_from_data)
        self._build_checkpointing()
        self.storage = StorageBox(inputs)
        self.storage.dragFinished.connect(self.dragFinished)
        self._layout.addWidget(self.storage)
        self.tiers = TiersBox(inputs, self.rows)
        self.tiers.dragFinished.connect(self.dragFinished)
        self._layout.addWidget(self.tiers)
        self.spares = SparesBox(inputs, self.rows)
        self.spares.dragFinished.connect(self.dragFinished)
        self._layout.addWidget(self.spares)
        self._build_recovery()
        self._build_slow()
        self._build_failing()
        self._build_sdc()
        self._build_bad()
        self._build_correlated()
        self._build_lives()
        self._build_racks()
        self.training = TrainingBox(inputs)
        self.training.dragFinished.connect(self.dragFinished)
        self._layout.addWidget(self.training)
        self._build_monte_carlo()
        self._layout.addStretch(1)
        self.setWidget(body)
        items = [self._layout.itemAt(i) for i in range(self._layout.count())]
        groups = [w for w in (item.widget() for item in items if item is not None) if w is not None]
        self._filter = InputFilter(groups, keep=[self.filter_box])
        inputs.changed.connect(self._follow)
        self._follow(frozenset({"*"}))

    # -- construction -----------------------------------------------------------------
    def _group(self, title: str) -> QVBoxLayout:
        box = QGroupBox(title)
        lay = QVBoxLayout(box)
        self._layout.addWidget(box)
        return lay

    def _value(self, lay: QVBoxLayout, field: str, object_name: str, **kwargs: Any) -> ValueControl:
        """A control bound to a scenario field: label, unit, ranges and tooltip from its :data:`SPECS` entry."""
        spec = SPECS[field]
        control = spec_control(field, object_name, **kwargs)
        convert = int if spec.integer else float
        factor = float(kwargs.get("factor", 1.0))  # the control shows the input times this
        self._shown_factor[field] = factor
        control.edited.connect(
            lambda v: self.inputs.update(**{field: convert(round(v) if spec.integer else v / factor)})
        )
        control.dragFinished.connect(self.dragFinished)
        self.values[field] = control
        lay.addWidget(control)
        return control

    def _build_filter(self) -> None:
        """A box that keeps the inputs matching a word (the panel is several screens long)."""
        self.filter_box = QWidget()
        lay = QVBoxLayout(self.filter_box)
        lay.setContentsMargins(0, 0, 0, 0)
        self.filter = QLineEdit()
        self.filter.setObjectName("inputsFilter")
        self.filter.setPlaceholderText("Filter inputs: a word (swap, detection, HBM, replica...)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter_changed)
        self.filter_note = QLabel("")
        self.filter_note.setObjectName("inputsFilterNote")
        self.filter_note.setVisible(False)
        mark_secondary(self.filter_note)
        lay.addWidget(self.filter)
        lay.addWidget(self.filter_note)
        self._layout.addWidget(self.filter_box)

    def _filter_changed(self, text: str) -> None:
        found = self._filter.apply(text)
        words = " ".join(text.split())
        if not words:
            self.filter_note.setVisible(False)
            return
        shown = fmt.clean(words, 40)
        matches = "1 input matches" if found == 1 else f"{found} inputs match"
        if found:
            self.filter_note.setText(f"{matches} '{shown}'")
        elif self._filter.shown:
            self.filter_note.setText(f"No input matches '{shown}': only the notes shown")
        else:
            self.filter_note.setText(f"No input matches '{shown}'")
        self.filter_note.setVisible(True)

    def _build_name(self) -> None:
        lay = self._group("Scenario")
        self.name = QLineEdit()
        self.name.setObjectName("scenarioName")
        self.name.setMaxLength(NAME_MAX_LEN)
        self.name.setToolTip(
            "The scenario's name: shown in the title, reports, exports and the baseline legend. "
            "An edited preset is named from its GPUs and days ('100,000 GPUs, 54 days (edited from Llama 3 405B)'), "
            "and the name follows them until you type one."
        )
        self.name.editingFinished.connect(self._name_edited)
        lay.addWidget(self.name)

    def _name_edited(self) -> None:
        text = self.name.text().strip()
        if text == _shown_name(self.inputs.scenario.name):
            return  # (the name as shown: control and format characters as escapes, not edited)
        if text:
            self.inputs.update(name=text)
        else:  # a scenario needs a name: an empty box shows the name again
            self.name.setText(_shown_name(self.inputs.scenario.name))

    def _build_cluster(self) -> None:
        lay = self._group("Cluster")
        self._value(lay, "gpus", "gpuCountSlider", snap=nice_gpu_count)
        marks = QHBoxLayout()
        marks.addWidget(QLabel("Jump to:"))
        for n, tip in ((16_384, "The Llama 3 405B cluster"), (100_000, "A 100,000-GPU cluster")):
            b = QPushButton(f"{n:,}")
            b.setToolTip(tip)
            b.setObjectName(f"gpuMark{n}")
            b.clicked.connect(lambda _=False, n=n: self.inputs.update(gpus=n))
            marks.addWidget(b)
        marks.addStretch(1)
        lay.addLayout(marks)
        self._value(lay, "days", "daysSlider")
        self._value(lay, "planned_per_day", "plannedSlider")

    def _build_rates(self) -> None:
        lay = self._group("Failure rates")
        self.rate_summary = QLabel()
        self.rate_summary.setWordWrap(True)
        self.rate_summary.setObjectName("rateSummary")
        lay.addWidget(self.rate_summary)
        self.all_mult = ValueControl(
            "All components",
            "x Ref.",
            slider_range=MULT_RANGE,
            value_range=MULT_VALUES,
            decimals=3,
            object_name="allRatesSlider",
            tooltip="The total rate as a multiple of the reference total (Llama 3's rates for Llama 3 causes); "
            "moving it scales every component, keeping the mix. " + DEFAULT_NOTES["components"],
        )
        self.all_mult.edited.connect(self.inputs.set_total_multiplier)
        self.all_mult.dragFinished.connect(self.dragFinished)
        lay.addWidget(self.all_mult)
        reset = QPushButton("Reset rates to the reference")
        reset.setObjectName("resetRatesButton")
        reset.setToolTip("Every component back to its reference rate (x1)")
        reset.clicked.connect(self.inputs.reset_rates)
        lay.addWidget(reset)
        self._rates_layout = QVBoxLayout()
        lay.addLayout(self._rates_layout)
        self._rate_boxes: list[QWidget] = []
        self._row_keys: list[tuple[str, str]] = []

    def _build_component_rows(self, sc: Scenario) -> None:
        """The rows of ``sc``'s components, folded by category, a batch a turn once there are many
        (:class:`.widgets.RowsInTurns`); the filter applies to them once all are there."""
        for w in self._rate_boxes:
            w.setParent(None)
            w.deleteLater()
        self._rate_boxes, self.comp_rows, self.cat_mult = [], {}, {}
        self._row_keys = [(c.name, c.category) for c in sc.components]
        count = Counter(c.category for c in sc.components)
        self.rows.start(
            "components",
            sc.categories,
            self._build_category,
            lambda cat: CATEGORY_MS + COMPONENT_MS * count[cat],
            done=self._refilter,
        )

    def _refilter(self) -> None:
        if self.filter.text().strip():
            self._filter_changed(self.filter.text())

    @property
    def rows_ready(self) -> bool:
        """Whether every row of the scenario's components, repair times and scopes is built."""
        return self.rows.ready

    def _build_category(self, cat: str) -> None:
        """One category's folding group: its multiplier and its components' rows, showing the inputs' values."""
        comps = [c for c in self.inputs.scenario.components if c.category == cat]
        box = Collapsible(f"{fmt.clean(cat, 40)} ({len(comps)})")
        box.setObjectName(f"category:{cat}")
        cm = ValueControl(
            f"All {fmt.clean(cat, 40)}",
            "x Ref.",
            slider_range=MULT_RANGE,
            value_range=MULT_VALUES,
            decimals=3,
            object_name=f"categorySlider:{cat}",
            tooltip=f"The {fmt.clean(cat)} components' total rate as a multiple of their reference total; "
            "moving it scales each of them, keeping their mix.",
        )
        cm.edited.connect(lambda v, cat=cat: self.inputs.set_category_multiplier(cat, v))
        cm.dragFinished.connect(self.dragFinished)
        cm.set_value(self.inputs.category_multiplier(cat))
        self.cat_mult[cat] = cm
        box.addWidget(cm)
        for comp in comps:
            row = _ComponentRow(self.inputs, comp.name, cat)
            row.control.dragFinished.connect(self.dragFinished)
            row.refresh()
            self.comp_rows[comp.name] = row
            box.addWidget(row)
        self._rates_layout.addWidget(box)
        self._rate_boxes.append(box)

    def _build_checkpointing(self) -> None:
        lay = self._group("Checkpointing")
        self.use_optimal = QCheckBox("Use the optimal interval (Daly)")
        self.use_optimal.setObjectName("useOptimalCheck")
        self.use_optimal.setToolTip(DEFAULT_NOTES["checkpoint_interval_min"])
        self.use_optimal.toggled.connect(self.inputs.set_use_optimal)
        lay.addWidget(self.use_optimal)
        self.interval = self._value(lay, "checkpoint_interval_min", "checkpointIntervalSlider")
        self._value(lay, "checkpoint_write_s", "checkpointWriteSlider")

    def _build_recovery(self) -> None:
        lay = self._group("Recovery")
        self._value(lay, "detect_min", "detectSlider")
        # Detection by cause: a watchdog's timeout for hangs, seconds for errors the driver sees.
        self.detect_by, self.detect_by_error = self._entry_box(
            lay,
            "Detection by cause (min)",
            "detectBy",
            "by cause, e.g. NCCL Watchdog Timeouts=15; GPU=0.1",
            "detect_by",
            self._detect_by_entered,
        )
        self._value(lay, "restart_min", "restartSlider")
        self._value(lay, "restart_per_log2_gpus_min", "restartGrowthSlider")
        # The restart in use at the job's size (what the engines take), and how it grows.
        self.restart_note = self._note(lay, "restartInUseNote")

    def _detect_by_entered(self) -> None:
        """Detection by cause as typed: set when the scenario takes it, else the reason under the box (the text
        stays as typed, to be corrected)."""
        sc = self.inputs.scenario
        try:
            pairs = parse_detect_by(self.detect_by.text())
            validate(sc.replace(detect_by=pairs))
        except (ValueError, ScenarioError) as exc:
            self.detect_by_error.setText(str(exc).replace("detect_by.", "", 1))
            self.detect_by_error.setVisible(True)
            return
        self.detect_by_error.setVisible(False)
        self.inputs.update(detect_by=pairs)

    def _build_slow(self) -> None:
        lay = self._group("Fail-slow nodes")
        # Shown per 1,000 GPU-days, as the window gives every rate (the file and the flag: per GPU-hour).
        self._value(
            lay,
            "slow_rate_per_gpu_hour",
            "slowRateSlider",
            factor=24_000.0,
            unit="per 1,000 GPU-days",
            slider=(0.0002, 2.0),
            decimals=5,
        )
        self._value(lay, "slow_factor", "slowFactorSlider")
        self._value(lay, "slow_detect_min", "slowDetectSlider")
        self.slow_note = self._note(lay, "slowNote")

    def _build_failing(self) -> None:
        lay = self._group("Checkpoints that fail")
        self._value(lay, "save_fail_p", "saveFailSlider")
        self._value(lay, "restore_fail_p", "restoreFailSlider")
        self.fail_note = self._note(lay, "failNote")

    def _build_sdc(self) -> None:
        lay = self._group("Silent data corruption")
        self._value(lay, "sdc_detect_hours", "sdcDetectSlider")
        self._value(lay, "retained_checkpoints", "retainedCheckpointsSlider")
        self.sdc_note = self._note(lay, "sdcNote")

    def _build_bad(self) -> None:
        lay = self._group("Bad nodes")
        self._value(lay, "bad_share", "badShareSlider")
        self._value(lay, "bad_multiplier", "badMultiplierSlider")
        self._value(lay, "diagnosis_p", "diagnosisSlider")
        self._value(lay, "repair_fail_p", "repairFailSlider")
        self.bad_note = self._note(lay, "badNote")

    def _build_correlated(self) -> None:
        lay = self._group("Correlated failures")
        self._value(lay, "correlated_rate_per_day", "correlatedRateSlider")
        self._value(lay, "correlated_domains", "correlatedDomainsSlider")
        self._value(lay, "correlated_repair_hours", "correlatedRepairSlider")
        self.correlated_note = self._note(lay, "correlatedNote")

    def _build_lives(self) -> None:
        lay = self._group("Node lives")
        self.weibull, self.weibull_error = self._entry_box(
            lay,
            "Weibull lives",
            "weibull",
            "e.g. Faulty GPU=0.7,200000 (shape, scale h); GPU HBM3 Memory=2",
            "weibull",
            self._weibull_entered,
        )
        self.new_cluster = QCheckBox("New cluster")
        self.new_cluster.setObjectName("newClusterCheck")
        self.new_cluster.setToolTip(DEFAULT_NOTES["new_cluster"])
        self.new_cluster.toggled.connect(lambda on: self.inputs.update(new_cluster=bool(on)))
        lay.addWidget(self.new_cluster)
        self.lives_note = self._note(lay, "livesNote")

    def _build_racks(self) -> None:
        lay = self._group("Racks (NVLink domains)")
        self._value(lay, "nvlink_gpus", "nvlinkGpusSlider")
        self._value(lay, "rack_spare_trays", "rackSpareTraysSlider")
        self._value(lay, "rack_move_min", "rackMoveSlider")
        self._value(lay, "gpus_per_node", "gpusPerNodeSlider")
        self.racks_note = self._note(lay, "racksNote")

    @staticmethod
    def _entry_box(
        lay: QVBoxLayout, label: str, name: str, placeholder: str, note: str, entered: Callable[[], None]
    ) -> tuple[QLineEdit, QLabel]:
        """A text box of entries by cause (``NAME=...; NAME=...``) on one row with its label (the filter shows them
        together), objects ``{name}Edit`` and ``{name}Error``, and under it the reason an entry was refused
        (hidden until then); ``entered`` reads it when editing finishes."""
        box = QLineEdit()
        box.setObjectName(f"{name}Edit")
        box.setPlaceholderText(placeholder)
        box.setToolTip(DEFAULT_NOTES[note])
        box.setAccessibleName(label)
        box.editingFinished.connect(entered)
        error = QLabel("")
        error.setObjectName(f"{name}Error")
        error.setWordWrap(True)
        error.setVisible(False)
        row = QHBoxLayout()
        row.addWidget(QLabel(label))
        row.addWidget(box, 1)
        lay.addLayout(row)
        lay.addWidget(error)
        return box, error

    def _weibull_entered(self) -> None:
        """Node lives as typed: set when the scenario takes them, else the reason under the box (the text stays as
        typed, to be corrected). The text shown for the lives in force changes nothing."""
        sc = self.inputs.scenario
        text = self.weibull.text()
        if text.strip() == weibull_entry(sc):
            self.weibull_error.setVisible(False)
            return
        try:
            entries = parse_weibull(text)
            check_weibull(weibull_doc(entries), sc.components)
        except (ValueError, ScenarioError) as exc:
            self.weibull_error.setText(str(exc).replace("weibull.", "", 1))
            self.weibull_error.setVisible(True)
            return
        self.weibull_error.setVisible(False)
        # Entries removed from the box go back to exponential lives (their rates stay).
        new = sc.replace(weibull=()).with_weibull(entries)
        self.inputs.update(weibull=new.weibull, components=new.components)

    @staticmethod
    def _note(lay: QVBoxLayout, object_name: str) -> QLabel:
        """A group's note of what its inputs mean as set (secondary text, wrapped), under its controls."""
        note = QLabel("")
        note.setObjectName(object_name)
        note.setWordWrap(True)
        mark_secondary(note)
        lay.addWidget(note)
        return note

    def _build_monte_carlo(self) -> None:
        lay = self._group("Monte Carlo")
        row = QHBoxLayout()
        self.trials = SpinBox()
        self.trials.setRange(int(SPECS["trials"].lo), int(SPECS["trials"].hi))
        self.trials.setGroupSeparatorShown(True)
        self.trials.setKeyboardTracking(False)
        self.trials.setToolTip(DEFAULT_NOTES["trials"])
        self.trials.setObjectName("trialsSpin")
        self.seed = SpinBox()
        self.seed.setRange(0, 2_147_483_647)  # a spin box holds 32 bits; a larger seed stays as it is
        self.seed.setKeyboardTracking(False)
        self.seed.setToolTip(DEFAULT_NOTES["seed"] + " A seed above 2,147,483,647 (from a file) is kept, read-only.")
        self.seed.setObjectName("seedSpin")
        for label, w, field in (("Trials", self.trials, "trials"), ("Seed", self.seed, "seed")):
            row.addWidget(QLabel(label))
            row.addWidget(w, 1)
            w.valueChanged.connect(lambda v, field=field: self.inputs.update(**{field: int(v)}))
        lay.addLayout(row)

    # -- following the inputs ------------------------------------------------------------
    @property
    def dragging(self) -> bool:
        """Whether any slider is held down."""
        controls = [
            *self.values.values(),
            self.all_mult,
            *self.cat_mult.values(),
            *(r.control for r in self.comp_rows.values()),
            *self.training.controls,
            *self.storage.controls,
            *self.tiers.controls,
            *self.spares.controls,
        ]
        return any(c.slider.isSliderDown() for c in controls)

    def _follow(self, changed: frozenset) -> None:
        """Show what the inputs hold (every field on a reload, else those that changed)."""
        sc = self.inputs.scenario
        everything = "*" in changed or len(changed) > 3
        shown = _shown_name(sc.name)
        if ("name" in changed or everything) and self.name.text() != shown:
            self.name.setMaxLength(max(NAME_MAX_LEN, len(shown)))  # (escapes make a name longer than it is)
            self.name.setText(shown)
            self.name.setCursorPosition(0)
        for field, control in self.values.items():
            if field != "checkpoint_interval_min" and (everything or field in changed):
                control.set_value(getattr(sc, field) * self._shown_factor.get(field, 1.0))
        if everything or {"restart_min", "restart_per_log2_gpus_min", "gpus"} & changed:
            every = "" if sc.restart_per_log2_gpus_min else " at every size"
            self.restart_note.setText(f"Restart in use: {sc.restart_text()}{every}")
        if everything or "detect_by" in changed:  # (an entry, an undo, a file: the box shows what is in force)
            self.detect_by.setText(detect_by_entry(sc.detect_by))
            self.detect_by_error.setVisible(False)
        if everything or {"slow_rate_per_gpu_hour", "slow_factor", "slow_detect_min", "gpus"} & changed:
            self.slow_note.setText(_slow_note(sc))
        if everything or {"save_fail_p", "restore_fail_p", "tiers"} & changed:
            self.fail_note.setText(_fail_note(sc))
        # (its counts follow the rates, the size, the days and the pool)
        self.bad_note.setText(_bad_note(sc))
        # (its count follows the component's rate, the size, the days and a profile; its share the cadence)
        self.sdc_note.setText(_sdc_note(sc, self.inputs.interval_minutes))
        # (the nodes an event takes: the size and the domains; what it does and what moves it: the pool, the profile)
        correlated = {"correlated_rate_per_day", "correlated_domains", "correlated_repair_hours"}
        if everything or (correlated | {"gpus", "gpus_per_node", "tiers", "spares", "rate_profile"}) & changed:
            self.correlated_note.setText(_correlated_note(sc))
        racks = {"nvlink_gpus", "rack_spare_trays", "rack_move_min", "gpus_per_node", "gpus", "spares", "components"}
        if everything or racks & changed:
            self.racks_note.setText(_racks_note(sc))
        # (a life's scale follows its rate at this size; the box shows the lives in force)
        if everything or {"weibull", "components", "gpus", "gpus_per_node", "days", "new_cluster"} & changed:
            if not self.weibull.hasFocus() or everything or "weibull" in changed:
                self.weibull.setText(weibull_entry(sc))
                self.weibull_error.setVisible(False)
            self.new_cluster.blockSignals(True)
            self.new_cluster.setChecked(sc.new_cluster)
            self.new_cluster.blockSignals(False)
            self.lives_note.setText(_lives_note(sc))
        # With a storage section the write comes from it: the box shows the write in use, read-only. With the
        # fast tier on it is the persistent tier's own stall at each persistent point (docs/tiers.md).
        write = self.values["checkpoint_write_s"]
        write.set_value(sc.write_s)
        write.setEnabled(sc.storage is None)
        self.storage.follow()
        self.tiers.follow()
        if everything or {"spares", "gpus", "gpus_per_node", "components", "nvlink_gpus", "rack_spare_trays"} & changed:
            self.spares.follow()
        # The interval follows Daly's optimum while 'optimal' is on, so it depends on most inputs.
        self.interval.set_value(self.inputs.interval_minutes())
        self.interval.setEnabled(not sc.uses_optimal_interval)
        self.use_optimal.blockSignals(True)
        # Without tiers 'optimal' is Daly's interval; with them, the tier model's optimum (docs/tiers.md).
        self.use_optimal.setText(f"Use the optimal interval ({'tier model' if sc.uses_tiers else 'Daly'})")
        self.use_optimal.setChecked(sc.uses_optimal_interval)
        self.use_optimal.blockSignals(False)
        if everything or {"trials", "seed"} & changed:
            self._show_monte_carlo(sc)
        if everything or {"training", "gpus"} & changed:
            self.training.follow()
        if everything or "components" in changed:
            self._show_rates(sc)
        if self.filter.text().strip() and (everything or {"components", "tiers", "spares"} & changed):
            # Rows rebuilt for these inputs are filtered too, once their layouts have shown them (new rows of a
            # shown panel are shown by a queued call: filtered now, they would read as hidden by the panel).
            QTimer.singleShot(0, self, lambda: self._filter_changed(self.filter.text()))

    def _show_monte_carlo(self, sc: Scenario) -> None:
        for w, v in ((self.trials, sc.trials), (self.seed, sc.seed)):
            w.blockSignals(True)
            w.setValue(min(v, w.maximum()))
            w.blockSignals(False)
        self.seed.setEnabled(sc.seed <= self.seed.maximum())

    def _show_rates(self, sc: Scenario) -> None:
        if [(c.name, c.category) for c in sc.components] != self._row_keys:
            self._build_component_rows(sc)
        for row in self.comp_rows.values():
            row.refresh()
        for cat, control in self.cat_mult.items():
            control.set_value(self.inputs.category_multiplier(cat))
        self.all_mult.set_value(self.inputs.total_multiplier())
        total = sc.rate_per_gpu_hour
        how = (
            f"one GPU is interrupted every {fmt.duration_hours(1 / total)}"
            if total > 0
            else "no GPU is ever interrupted"
        )
        own = any(n not in _llama3_names() for n in self.comp_rows)
        self.rate_summary.setText(
            f"All components: {sig_text(total * 24_000)} per 1,000 GPU-days; {how}. Multipliers are against "
            f"reference rates: Llama 3's{', or as opened for other components' if own else ''}."
        )
