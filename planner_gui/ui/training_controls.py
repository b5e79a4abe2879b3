"""The "Training run" group of the controls: the work a run must do, for its time to train and cost.

Off, the scenario has no training section (the window alone is simulated). On, the work is given either as
the training compute (FLOPs, with the GPU's peak and the achieved MFU) or directly as GPU-hours of pure
compute; each control writes exactly its field of :class:`~planner_gui.core.model.scenario.Training` to the
window's :class:`~planner_gui.core.session.inputs.Inputs` and follows what it holds.
"""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QGroupBox, QHBoxLayout, QLabel, QVBoxLayout

from ..core.model.scenario import Training
from ..core.session.inputs import Inputs
from ..core.util import fmt
from .theme import mark_secondary
from .widgets import ComboBox, ValueControl, spec_control

__all__ = ["FLOPS_UNIT", "GPU_HOURS_UNIT", "TrainingBox"]

#: The compute box shows FLOPs in units of 10^24 (Llama 3 405B: 38), GPU-hours in millions.
FLOPS_UNIT = 1e24
GPU_HOURS_UNIT = 1e6
_FROM_FLOPS, _FROM_HOURS = 0, 1


class TrainingBox(QGroupBox):
    """Whether to estimate the time to train, and the work: compute x peak x MFU, or GPU-hours."""

    dragFinished = Signal()

    def __init__(self, inputs: Inputs) -> None:
        super().__init__("Training run")
        self.inputs = inputs
        lay = QVBoxLayout(self)
        self.enabled = QCheckBox("Estimate the time and cost to train")
        self.enabled.setObjectName("trainingCheck")
        self.enabled.setToolTip(
            "Simulate the time to do the run's work with failures (days, p05-p95) and its cost; the Planning "
            "tab shows days and cost against the GPU count. Off: only the window is simulated."
        )
        self.enabled.toggled.connect(self._toggled)
        lay.addWidget(self.enabled)
        row = QHBoxLayout()
        row.addWidget(QLabel("Work given as"))
        self.mode = ComboBox()
        self.mode.setObjectName("trainingModeCombo")
        self.mode.addItems(["training compute (FLOPs)", "GPU-hours of compute"])
        self.mode.setToolTip("The training compute with the GPU's peak and MFU, or the GPU-hours of pure compute.")
        self.mode.currentIndexChanged.connect(self._mode_changed)
        row.addWidget(self.mode, 1)
        lay.addLayout(row)
        self.flops = spec_control(
            "train_flops",
            "trainFlopsSlider",
            unit="x1e24 FLOPs",
            factor=1 / FLOPS_UNIT,
            slider=(0.1, 10_000.0),
            decimals=3,
        )
        self.peak = spec_control("peak_tflops", "peakTflopsSlider", slider=(10.0, 10_000.0), decimals=0)
        self.mfu = spec_control("mfu", "mfuSlider", unit="%", factor=100.0, slider=(5.0, 100.0), decimals=1)
        self.hours = spec_control(
            "compute_gpu_hours",
            "computeGpuHoursSlider",
            unit="M GPU-h",
            factor=1 / GPU_HOURS_UNIT,
            slider=(0.01, 10_000.0),
            decimals=3,
        )
        self.flops.edited.connect(lambda v: self._set(train_flops=v * FLOPS_UNIT))
        self.peak.edited.connect(lambda v: self._set(peak_tflops=v))
        self.mfu.edited.connect(lambda v: self._set(mfu=v / 100.0))
        self.hours.edited.connect(lambda v: self._set(compute_gpu_hours=v * GPU_HOURS_UNIT))
        for control in (self.flops, self.peak, self.mfu, self.hours):
            control.dragFinished.connect(self.dragFinished)
            lay.addWidget(control)
        self.work = QLabel()
        self.work.setObjectName("trainingWork")
        self.work.setWordWrap(True)
        mark_secondary(self.work)
        lay.addWidget(self.work)
        self.follow()

    @property
    def controls(self) -> tuple[ValueControl, ...]:
        return (self.flops, self.peak, self.mfu, self.hours)

    # -- writing -----------------------------------------------------------------------------
    def _toggled(self, on: bool) -> None:
        if on == (self.inputs.scenario.training is not None):
            return
        if not on:
            self.inputs.update(training=None)
        elif self.mode.currentIndex() == _FROM_HOURS:
            self.inputs.update(training=Training(train_flops=None, compute_gpu_hours=Training().gpu_hours))
        else:
            self.inputs.update(training=Training())

    def _mode_changed(self, index: int) -> None:
        t = self.inputs.scenario.training
        if t is None:
            self._show(None)
            return
        from_hours = t.compute_gpu_hours is not None
        if index == _FROM_HOURS and not from_hours:  # the same work, now given as GPU-hours
            self.inputs.update(training=dataclasses.replace(t, train_flops=None, compute_gpu_hours=t.gpu_hours))
        elif index == _FROM_FLOPS and from_hours:  # the same work, as FLOPs at this peak and MFU
            flops = t.gpu_hours * t.peak_tflops * 1e12 * t.mfu * 3600.0
            self.inputs.update(training=dataclasses.replace(t, train_flops=flops, compute_gpu_hours=None))

    def _set(self, **fields: float) -> None:
        t = self.inputs.scenario.training
        if t is not None:
            self.inputs.update(training=dataclasses.replace(t, **fields))

    # -- following ---------------------------------------------------------------------------
    def follow(self) -> None:
        """Show what the inputs hold."""
        self._show(self.inputs.scenario.training)

    def _show(self, t: Training | None) -> None:
        on = t is not None
        from_hours = t is not None and t.compute_gpu_hours is not None
        for w in (self.enabled, self.mode):
            w.blockSignals(True)
        self.enabled.setChecked(on)
        if on:
            self.mode.setCurrentIndex(_FROM_HOURS if from_hours else _FROM_FLOPS)
        for w in (self.enabled, self.mode):
            w.blockSignals(False)
        self.mode.setEnabled(on)
        shown = Training() if t is None else t
        if shown.train_flops is not None:
            self.flops.set_value(shown.train_flops / FLOPS_UNIT)
        self.peak.set_value(shown.peak_tflops)
        self.mfu.set_value(100.0 * shown.mfu)
        self.hours.set_value(shown.gpu_hours / GPU_HOURS_UNIT)
        for control in (self.flops, self.peak, self.mfu):
            control.setVisible(not from_hours)
            control.setEnabled(on)
        self.hours.setVisible(from_hours)
        self.hours.setEnabled(on)
        if t is None:
            self.work.setText("Off: the planner simulates the window alone.")
            return
        gpus = self.inputs.scenario.gpus
        self.work.setText(
            f"{fmt.compact(t.gpu_hours)} GPU-hours of pure compute: {t.gpu_hours / gpus / 24:,.1f} days on "
            f"{gpus:,} GPUs at 100 % goodput."
        )
