"""Small input widgets: a log-scale slider paired with an exact spin box."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractSpinBox, QDoubleSpinBox, QHBoxLayout, QLabel, QSlider, QWidget

__all__ = ["LogSlider", "ValueControl"]

_STEPS = 1000


class LogSlider(QSlider):
    """A horizontal slider whose integer positions map to a log scale from ``lo`` to ``hi``."""

    def __init__(self, lo: float, hi: float, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        if not 0 < lo < hi:
            raise ValueError("a log slider needs 0 < lo < hi")
        self._lo, self._hi = math.log(lo), math.log(hi)
        self.setRange(0, _STEPS)
        self.setSingleStep(5)
        self.setPageStep(50)

    def to_value(self, position: int) -> float:
        return math.exp(self._lo + (self._hi - self._lo) * position / _STEPS)

    def to_position(self, value: float) -> int:
        if value <= 0:
            return 0
        f = (math.log(value) - self._lo) / (self._hi - self._lo)
        return int(round(min(max(f, 0.0), 1.0) * _STEPS))

    def logValue(self) -> float:  # noqa: N802 - Qt naming
        return self.to_value(self.value())

    def setLogValue(self, value: float) -> None:  # noqa: N802
        self.setValue(self.to_position(value))


class ValueControl(QWidget):
    """Label, log slider, spin box and unit on one row.

    The slider covers the usual range on a log scale; the spin box takes any allowed value exactly
    (including 0 where allowed). ``edited`` carries the new value and whether the slider is being dragged.
    """

    edited = Signal(float, bool)
    dragFinished = Signal()

    def __init__(
        self,
        label: str,
        unit: str,
        *,
        slider_range: tuple[float, float],
        value_range: tuple[float, float],
        decimals: int = 2,
        value: float = 1.0,
        tooltip: str = "",
        object_name: str = "",
        label_width: int = 110,
    ) -> None:
        super().__init__()
        self.slider = LogSlider(*slider_range)
        if object_name:
            self.slider.setObjectName(object_name)
        self.spin = QDoubleSpinBox()
        self.spin.setDecimals(decimals)
        self.spin.setRange(*value_range)
        self.spin.setKeyboardTracking(False)
        self.spin.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        self.spin.setGroupSeparatorShown(True)
        self.spin.setMinimumWidth(96)
        self.spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.label = QLabel(label)
        self.label.setMinimumWidth(label_width)
        self.unit = QLabel(unit)
        self.unit.setMinimumWidth(34)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label)
        row.addWidget(self.slider, 1)
        row.addWidget(self.spin)
        row.addWidget(self.unit)
        for w in (self, self.label, self.slider, self.spin):
            w.setToolTip(tooltip)
        self._syncing = False
        self._value = float(value)
        self.set_value(value)
        self.slider.valueChanged.connect(self._from_slider)
        self.slider.sliderReleased.connect(self.dragFinished)
        self.spin.valueChanged.connect(self._from_spin)

    def value(self) -> float:
        """The exact value: what was set or typed, not the spin box's rounded display."""
        return self._value

    def set_value(self, value: float) -> None:
        """Show ``value`` without emitting ``edited``."""
        self._value = float(value)
        self._syncing = True
        try:
            self.spin.setValue(value)
            self.slider.setLogValue(value)
        finally:
            self._syncing = False

    def setEnabled(self, enabled: bool) -> None:  # noqa: N802
        self.slider.setEnabled(enabled)
        self.spin.setEnabled(enabled)

    def _from_slider(self, position: int) -> None:
        if self._syncing:
            return
        value = self.slider.to_value(position)
        self._syncing = True
        try:
            self.spin.setValue(value)
        finally:
            self._syncing = False
        self._value = float(self.spin.value())  # a slider position means the value shown, rounded
        self.edited.emit(self._value, self.slider.isSliderDown())

    def _from_spin(self, value: float) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            self.slider.setLogValue(value)
        finally:
            self._syncing = False
        self._value = float(value)
        self.edited.emit(self._value, False)
