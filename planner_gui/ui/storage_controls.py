"""The "Checkpoint storage" group of the controls: the blocking write from checkpoint size and bandwidth.

Off, the blocking write is the Checkpointing group's own value. On, the scenario has a storage section and
the write is ``GPUs x checkpoint per GPU / storage bandwidth`` (every GPU writes its share at once through one
shared bandwidth), so it grows with the GPU count; a warning says when storage cannot keep up with the
checkpoint interval. Each control writes exactly its field of :class:`~planner_gui.core.model.scenario.Storage`.
"""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QVBoxLayout

from ..core.model.scenario import Storage
from ..core.model.specs import SPECS
from ..core.session.inputs import Inputs
from ..core.util import fmt
from .theme import mark_secondary
from .widgets import ValueControl, spec_control

__all__ = ["DEFAULT_STORAGE_GB_S", "StorageBox"]

#: Bandwidth a new storage section starts with: Llama 3's sustained 2 TB/s.
DEFAULT_STORAGE_GB_S = 2_000.0


class StorageBox(QGroupBox):
    """Whether the blocking write comes from checkpoint size and storage bandwidth, and those two."""

    dragFinished = Signal()

    def __init__(self, inputs: Inputs) -> None:
        super().__init__("Checkpoint storage")
        self.inputs = inputs
        lay = QVBoxLayout(self)
        self.enabled = QCheckBox("Write time from size and bandwidth")
        self.enabled.setObjectName("storageCheck")
        self.enabled.setToolTip(
            "Set the blocking write as GPUs x checkpoint per GPU / storage bandwidth, so it grows with the GPU "
            "count. Turning it on keeps today's write: the size per GPU starts at what the current write and "
            f"{DEFAULT_STORAGE_GB_S:,.0f} GB/s imply."
        )
        self.enabled.toggled.connect(self._toggled)
        lay.addWidget(self.enabled)
        self.per_gpu = spec_control(
            "checkpoint_gb_per_gpu", "checkpointGbPerGpuSlider", slider=(0.001, 100.0), decimals=3
        )
        self.bandwidth = spec_control("storage_gb_s", "storageGbPerSecondSlider", slider=(10.0, 100_000.0), decimals=1)
        self.per_gpu.edited.connect(lambda v: self._set(checkpoint_gb_per_gpu=v))
        self.bandwidth.edited.connect(lambda v: self._set(storage_gb_s=v))
        for control in self.controls:
            control.dragFinished.connect(self.dragFinished)
            lay.addWidget(control)
        self.write = QLabel()
        self.write.setObjectName("storageWrite")
        self.write.setWordWrap(True)
        mark_secondary(self.write)
        lay.addWidget(self.write)
        self.warning = QLabel()
        self.warning.setObjectName("storageWarning")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color: #a4262c;")
        lay.addWidget(self.warning)
        self.follow()

    @property
    def controls(self) -> tuple[ValueControl, ...]:
        return (self.per_gpu, self.bandwidth)

    def _toggled(self, on: bool) -> None:
        sc = self.inputs.scenario
        if on == (sc.storage is not None):
            return
        if on:  # today's write, from the default bandwidth
            per_gpu = sc.checkpoint_write_s * DEFAULT_STORAGE_GB_S / sc.gpus
            lo, hi = SPECS["checkpoint_gb_per_gpu"].lo, SPECS["checkpoint_gb_per_gpu"].hi
            self.inputs.update(storage=Storage(min(max(per_gpu, lo), hi), DEFAULT_STORAGE_GB_S))
        else:
            self.inputs.update(storage=None)

    def _set(self, **fields: float) -> None:
        st = self.inputs.scenario.storage
        if st is not None:
            self.inputs.update(storage=dataclasses.replace(st, **fields))

    def follow(self) -> None:
        """Show what the inputs hold."""
        sc = self.inputs.scenario
        st = sc.storage
        self.enabled.blockSignals(True)
        self.enabled.setChecked(st is not None)
        self.enabled.blockSignals(False)
        for control in self.controls:
            control.setEnabled(st is not None)
        if st is None:
            self.write.setText("Off: the blocking write is the Checkpointing group's.")
            self.warning.setVisible(False)
            return
        self.per_gpu.set_value(st.checkpoint_gb_per_gpu)
        self.bandwidth.set_value(st.storage_gb_s)
        self.write.setText(
            f"Blocking write {fmt.duration_hours(sc.write_s / 3600.0)}: {sc.gpus:,} GPUs x "
            f"{st.checkpoint_gb_per_gpu:g} GB / {st.storage_gb_s:,g} GB/s."
        )
        warning = sc.storage_warning(self.inputs.interval_minutes())
        self.warning.setText(f"Storage cannot keep up: {warning.split(': ', 1)[1]}." if warning else "")
        self.warning.setVisible(warning is not None)
