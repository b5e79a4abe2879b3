"""The left panel: every input of a scenario, with tooltips that cite each default's source."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from superqt import QCollapsible

from ..core import fmt
from ..core.model import DEFAULT_NOTES, OPTIMAL, Component, Scenario
from ..core.params import daly_minutes
from .widgets import ValueControl

__all__ = ["ControlsPanel"]

MULT_RANGE = (0.01, 100.0)


def _rate_text(rate: float) -> str:
    mtbf = fmt.duration_hours(1.0 / rate) if rate > 0 else "never"
    return f"{rate * 24_000:,.3g} per 1,000 GPU-days; one GPU: every {mtbf}"


class _ComponentRow(QWidget):
    """One component: a multiplier of its default rate, and the resulting rate in words."""

    edited = Signal(bool)
    dragFinished = Signal()

    def __init__(self, comp: Component) -> None:
        super().__init__()
        self.base = comp
        tip = (f"{comp.name} ({comp.category}): multiplier of its default rate, "
               f"{_rate_text(comp.rate_per_gpu_hour)}. {DEFAULT_NOTES['components']}")
        # The name gets a line of its own: some are long, and the slider needs the width.
        self.name = QLabel(comp.name)
        self.name.setToolTip(tip)
        self.control = ValueControl("", "x", slider_range=MULT_RANGE, value_range=(0.0, 1e4), decimals=3,
                                    value=1.0, tooltip=tip, label_width=8)
        self.info = QLabel()
        self.info.setStyleSheet("color: palette(mid); font-size: small;")
        self.info.setIndent(8)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 4)
        lay.setSpacing(0)
        lay.addWidget(self.name)
        lay.addWidget(self.control)
        lay.addWidget(self.info)
        self.control.edited.connect(lambda _v, drag: self.edited.emit(drag))
        self.control.dragFinished.connect(self.dragFinished)

    def show_rate(self, rate: float) -> None:
        self.info.setText(_rate_text(rate))


class ControlsPanel(QScrollArea):
    """All scenario inputs. ``changed(dragging)`` fires on every edit; ``dragFinished`` when a slider is let go."""

    changed = Signal(bool)
    dragFinished = Signal()

    def __init__(self, scenario: Scenario) -> None:
        super().__init__()
        self.setWidgetResizable(True)
        self.setMinimumWidth(420)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scenario = scenario
        self._loading = True  # no signals while building and while showing a scenario
        self.comp_rows: list[_ComponentRow] = []
        body = QWidget()
        self._layout = QVBoxLayout(body)
        self._build_cluster()
        self._build_rates(scenario)
        self._build_checkpointing()
        self._build_recovery()
        self._build_monte_carlo()
        self._layout.addStretch(1)
        self.setWidget(body)
        self.set_scenario(scenario)

    # -- construction -----------------------------------------------------------------
    def _group(self, title: str) -> QVBoxLayout:
        box = QGroupBox(title)
        lay = QVBoxLayout(box)
        self._layout.addWidget(box)
        return lay

    def _connect(self, control: ValueControl) -> ValueControl:
        control.edited.connect(lambda _v, drag: self._emit(drag))
        control.dragFinished.connect(self.dragFinished)
        return control

    def _build_cluster(self) -> None:
        lay = self._group("Cluster")
        self.gpus = self._connect(ValueControl(
            "GPUs", "", slider_range=(1024, 1_048_576), value_range=(1, 10_000_000), decimals=0,
            tooltip="GPUs in the training job. " + DEFAULT_NOTES["gpus"], object_name="gpuCountSlider"))
        lay.addWidget(self.gpus)
        marks = QHBoxLayout()
        marks.addWidget(QLabel("Jump to:"))
        for n, tip in ((16_384, "The Llama 3 405B cluster"), (100_000, "A 100,000-GPU cluster")):
            b = QPushButton(f"{n:,}")
            b.setToolTip(tip)
            b.setObjectName(f"gpuMark{n}")
            b.clicked.connect(lambda _=False, n=n: self._jump_gpus(n))
            marks.addWidget(b)
        marks.addStretch(1)
        lay.addLayout(marks)
        self.days = self._connect(ValueControl(
            "Run length", "days", slider_range=(1, 3650), value_range=(0.01, 3650), decimals=2,
            tooltip="Wall-clock window simulated. " + DEFAULT_NOTES["days"], object_name="daysSlider"))
        lay.addWidget(self.days)
        self.planned = self._connect(ValueControl(
            "Planned", "per day", slider_range=(0.01, 100), value_range=(0, 1000), decimals=3,
            tooltip="Planned interruptions per day: the job is drained first (no work lost) but each costs "
                    "the restart time. " + DEFAULT_NOTES["planned_per_day"], object_name="plannedSlider"))
        lay.addWidget(self.planned)

    def _build_rates(self, scenario: Scenario) -> None:
        lay = self._group("Failure rates")
        self.rate_summary = QLabel()
        self.rate_summary.setWordWrap(True)
        lay.addWidget(self.rate_summary)
        self.all_mult = self._connect(ValueControl(
            "All components", "x", slider_range=MULT_RANGE, value_range=(0.0, 1e4), decimals=3,
            tooltip="Multiplies every component's rate. " + DEFAULT_NOTES["components"],
            object_name="allRatesSlider", label_width=150))
        lay.addWidget(self.all_mult)
        reset = QPushButton("Reset rates to the scenario's")
        reset.setToolTip("Set every multiplier back to 1")
        reset.clicked.connect(self.reset_rates)
        lay.addWidget(reset)
        self._rates_layout = QVBoxLayout()
        lay.addLayout(self._rates_layout)
        self._rate_widgets: list[QWidget] = []
        self._build_component_rows(scenario)

    def _build_component_rows(self, scenario: Scenario) -> None:
        for w in self._rate_widgets:
            w.setParent(None)
            w.deleteLater()
        self._rate_widgets = []
        self.cat_mult: dict[str, ValueControl] = {}
        self.comp_rows: list[_ComponentRow] = []
        for cat in scenario.categories:
            comps = [c for c in scenario.components if c.category == cat]
            box = QCollapsible(f"{cat} ({len(comps)})")
            box.setObjectName(f"category:{cat}")
            cm = self._connect(ValueControl(
                f"All {cat}", "x", slider_range=MULT_RANGE, value_range=(0.0, 1e4), decimals=3,
                tooltip=f"Multiplies the rate of every {cat} component.", label_width=150))
            self.cat_mult[cat] = cm
            box.addWidget(cm)
            for comp in comps:
                row = _ComponentRow(comp)
                row.edited.connect(self._emit)
                row.dragFinished.connect(self.dragFinished)
                self.comp_rows.append(row)
                box.addWidget(row)
            self._rates_layout.addWidget(box)
            self._rate_widgets.append(box)

    def _build_checkpointing(self) -> None:
        lay = self._group("Checkpointing")
        self.use_optimal = QCheckBox("Use optimal interval (Daly)")
        self.use_optimal.setObjectName("useOptimalCheck")
        self.use_optimal.setToolTip(DEFAULT_NOTES["checkpoint_interval_min"])
        self.use_optimal.toggled.connect(self._optimal_toggled)
        lay.addWidget(self.use_optimal)
        self.interval = self._connect(ValueControl(
            "Interval", "min", slider_range=(1, 1440), value_range=(0.01, 525_600), decimals=2,
            tooltip="Compute time between checkpoints (1 minute to 24 hours on the slider). "
                    + DEFAULT_NOTES["checkpoint_interval_min"], object_name="checkpointIntervalSlider"))
        lay.addWidget(self.interval)
        self.write = self._connect(ValueControl(
            "Blocking write", "s", slider_range=(0.1, 1800), value_range=(0, 86_400), decimals=2,
            tooltip="Time training stalls to write each checkpoint (0 s to 30 min on the slider). "
                    + DEFAULT_NOTES["checkpoint_write_s"], object_name="checkpointWriteSlider"))
        lay.addWidget(self.write)

    def _build_recovery(self) -> None:
        lay = self._group("Recovery")
        self.detect = self._connect(ValueControl(
            "Detection", "min", slider_range=(0.1, 1440), value_range=(0, 10_080), decimals=2,
            tooltip="From an unplanned interruption to noticing it. " + DEFAULT_NOTES["detect_min"],
            object_name="detectSlider"))
        self.restart = self._connect(ValueControl(
            "Restart", "min", slider_range=(0.1, 1440), value_range=(0, 10_080), decimals=2,
            tooltip="Reschedule, initialise and load the checkpoint. " + DEFAULT_NOTES["restart_min"],
            object_name="restartSlider"))
        lay.addWidget(self.detect)
        lay.addWidget(self.restart)

    def _build_monte_carlo(self) -> None:
        lay = self._group("Monte Carlo")
        row = QHBoxLayout()
        self.trials = QSpinBox()
        self.trials.setRange(1, 100_000)
        self.trials.setGroupSeparatorShown(True)
        self.trials.setKeyboardTracking(False)
        self.trials.setToolTip(DEFAULT_NOTES["trials"])
        self.trials.setObjectName("trialsSpin")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2_147_483_647)
        self.seed.setKeyboardTracking(False)
        self.seed.setToolTip(DEFAULT_NOTES["seed"])
        self.seed.setObjectName("seedSpin")
        for label, w in (("Trials", self.trials), ("Seed", self.seed)):
            row.addWidget(QLabel(label))
            row.addWidget(w, 1)
            w.valueChanged.connect(lambda _v: self._emit(False))
        lay.addLayout(row)

    # -- behaviour ----------------------------------------------------------------------
    def _emit(self, dragging: bool) -> None:
        if self._loading:
            return
        self._show_rates()
        self._follow_optimal()
        self.changed.emit(dragging)

    def _jump_gpus(self, n: int) -> None:
        self.gpus.set_value(n)
        self._emit(False)

    def _optimal_toggled(self, on: bool) -> None:
        self.interval.setEnabled(not on)
        self._emit(False)

    def _follow_optimal(self) -> None:
        if self.use_optimal.isChecked():
            self.interval.set_value(daly_minutes(self.scenario()))

    def reset_rates(self) -> None:
        self._loading = True
        try:
            self.all_mult.set_value(1.0)
            for c in self.cat_mult.values():
                c.set_value(1.0)
            for r in self.comp_rows:
                r.control.set_value(1.0)
        finally:
            self._loading = False
        self._emit(False)

    def _rates(self) -> tuple[Component, ...]:
        everything = self.all_mult.value()
        return tuple(
            dataclasses.replace(
                r.base,
                rate_per_gpu_hour=r.base.rate_per_gpu_hour * r.control.value()
                * self.cat_mult[r.base.category].value() * everything,
            )
            for r in self.comp_rows
        )

    def _show_rates(self) -> None:
        comps = self._rates()
        for row, comp in zip(self.comp_rows, comps):
            row.show_rate(comp.rate_per_gpu_hour)
        total = sum(c.rate_per_gpu_hour for c in comps)
        mtbf = fmt.duration_hours(1 / total) if total > 0 else "never"
        self.rate_summary.setText(
            f"All components: {total * 24_000:,.3g} per 1,000 GPU-days; one GPU is interrupted every {mtbf}."
        )

    def scenario(self) -> Scenario:
        """The scenario the controls show."""
        interval = OPTIMAL if self.use_optimal.isChecked() else self.interval.value()
        return dataclasses.replace(
            self._scenario,
            gpus=int(round(self.gpus.value())),
            days=self.days.value(),
            components=self._rates(),
            planned_per_day=self.planned.value(),
            checkpoint_interval_min=interval,
            checkpoint_write_s=self.write.value(),
            detect_min=self.detect.value(),
            restart_min=self.restart.value(),
            trials=self.trials.value(),
            seed=self.seed.value() if self.seed.isEnabled() else self._scenario.seed,
        )

    def set_scenario(self, sc: Scenario) -> None:
        """Show ``sc``: its rates become the base of the multipliers (all reset to 1). Emits nothing."""
        self._loading = True
        try:
            if [(c.name, c.category) for c in sc.components] != [(r.base.name, r.base.category)
                                                               for r in self.comp_rows]:
                self._build_component_rows(sc)
            for row, comp in zip(self.comp_rows, sc.components):
                row.base = comp
                row.control.set_value(1.0)
            for c in self.cat_mult.values():
                c.set_value(1.0)
            self.all_mult.set_value(1.0)
            self._scenario = sc
            self.gpus.set_value(sc.gpus)
            self.days.set_value(sc.days)
            self.planned.set_value(sc.planned_per_day)
            self.write.set_value(sc.checkpoint_write_s)
            self.detect.set_value(sc.detect_min)
            self.restart.set_value(sc.restart_min)
            self.trials.setValue(min(sc.trials, self.trials.maximum()))
            # A seed beyond the spin box's range is kept as it is, read-only.
            self.seed.setEnabled(sc.seed <= self.seed.maximum())
            self.seed.setValue(min(sc.seed, self.seed.maximum()))
            self.use_optimal.setChecked(sc.uses_optimal_interval)
            self.interval.setEnabled(not sc.uses_optimal_interval)
            if sc.uses_optimal_interval:
                self.interval.set_value(daly_minutes(sc))
            else:
                self.interval.set_value(float(sc.checkpoint_interval_min))
            self._show_rates()
        finally:
            self._loading = False
