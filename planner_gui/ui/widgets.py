"""Small input widgets: a log-scale slider paired with an exact spin box."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractAnimation, QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QIcon, QKeyEvent, QKeySequence, QPalette, QValidator, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QWidget,
)
from superqt import QCollapsible

from ..core.model.specs import SPECS
from ..core.util import fmt

__all__ = [
    "Collapsible",
    "ComboBox",
    "DoubleSpinBox",
    "LogSlider",
    "SpinBox",
    "ValueControl",
    "nice_gpu_count",
    "sig_text",
    "significant",
    "spec_control",
]


if TYPE_CHECKING:  # the mixin calls QWidget methods: to the type checker it is one, at run time a mixin
    _WidgetBase = QWidget
else:
    _WidgetBase = object


class _WheelOnlyWhenFocused(_WidgetBase):
    """In a panel that scrolls, the mouse wheel never changes a value: it scrolls the panel, as a user
    scrolling past the control expects, focused or not (a box clicked a moment ago and then scrolled past
    once lost 5.00 -> 4.70 to three notches); the keys, typing and dragging edit it. Elsewhere the wheel
    changes the value once the control has the focus (a click or Tab)."""

    def _init_wheel(self) -> None:
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.hasFocus() and not _in_scroll_area(self):
            super().wheelEvent(event)
        else:
            event.ignore()  # passed on to the scroll area


def _in_scroll_area(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            return True
        parent = parent.parentWidget()
    return False


#: The arrows of a group that folds: pointing right while folded, down while open (superqt's own folded one
#: points up, which reads as "open, fold upwards").
FOLDED_ARROW, OPEN_ARROW = "\u25b6", "\u25bc"


#: The arrows drawn once per font size and colour (superqt paints two pixmaps for every group).
_ARROWS: dict[tuple[int, int], tuple[QIcon, QIcon]] = {}


class Collapsible(QCollapsible):
    """A group that folds, with the usual arrows (:data:`FOLDED_ARROW`, :data:`OPEN_ARROW`).

    While folded its content is hidden, not only squeezed to no height as superqt's is: Qt then neither lays out
    nor styles what nobody sees (a scenario with 180 categories of causes built its folded rows' layouts on
    every opening, about 5 ms a row). Every row exists, folded or not, and keeps its name."""

    def __init__(self, title: str = "", parent: QWidget | None = None) -> None:
        key = (QApplication.font().pointSize(), QApplication.palette().color(QPalette.ColorRole.WindowText).rgba())
        arrows: tuple[QIcon | str, QIcon | str] = _ARROWS.get(key, (OPEN_ARROW, FOLDED_ARROW))
        super().__init__(title, parent, expandedIcon=arrows[0], collapsedIcon=arrows[1])
        _ARROWS.setdefault(key, (self.expandedIcon(), self.collapsedIcon()))
        self.content().setVisible(False)
        self.toggled.connect(self._folded)
        self._animation.finished.connect(self._settled)

    def _folded(self, expanded: bool) -> None:
        if expanded:
            self.content().setVisible(True)
        elif self._animation.state() != QAbstractAnimation.State.Running:
            self.content().setVisible(False)

    def _settled(self) -> None:
        """The fold's animation ended: folded, the content is hidden."""
        if not self.isExpanded():
            self.content().setVisible(False)


#: A number still being typed (``1e``, ``-``, ``54,`` on its way to 54,000), in the command line's notation.
_TYPING = re.compile(r"[+-]?[\d,]*\.?\d*([eE][+-]?\d*)?")
#: Longer entries are no number (as on the command line).
_MAX_CHARS = 100


class _TypedNumbers(_WidgetBase):
    """Spin boxes that take a number as typed, as the command line reads it. Qt's own validator drops a
    keystroke that makes the text invalid or out of range, and takes any comma for a thousands separator, so
    ``1e5`` became 15, 123456 in a box up to 10,000 became 1234 and "54,5" days became 545, silently. Here
    scientific notation is a number; thousands separators only in groups of three ("54,5" is no number: the
    value stays); a number out of range or with more decimals than the box shows is kept while typing and, when
    entered, brought to the nearest value the box can show; an empty or unfinished entry leaves the value."""

    def _core(self, text: str) -> str:
        """``text`` without the box's prefix and suffix."""
        box = _spin(self)
        core = text.strip()
        if box.prefix() and core.startswith(box.prefix()):
            core = core[len(box.prefix()) :]
        if box.suffix() and core.endswith(box.suffix()):
            core = core[: -len(box.suffix())]
        return core.strip()

    def _notation(self, text: str) -> str:
        """``text`` without prefix and suffix, in the command line's notation (the locale's separators mapped to
        "," and ".")."""
        loc = _spin(self).locale()
        mapping: dict[str, str | int | None] = {loc.groupSeparator(): ",", loc.decimalPoint(): "."}
        return self._core(text).translate(str.maketrans(mapping))

    def _number(self, text: str) -> float | None:
        """The number ``text`` holds as the command line reads it (:func:`..core.util.fmt.read_number`: "54,5" is
        none); None if it holds none, or one still being typed."""
        notation = self._notation(text)
        value = fmt.read_number(notation) if len(notation) <= _MAX_CHARS else None
        return None if value is None else float(value)

    def _shown(self, value: float) -> float:
        """``value`` in range and as the box shows it (its decimals; a whole number in a whole-number box)."""
        box = _spin(self)
        value = max(min(value, box.maximum()), box.minimum())
        return round(value) if isinstance(box, QSpinBox) else round(value, box.decimals())

    def validate(self, text: str, pos: int, /) -> tuple[QValidator.State, str, int]:
        box = _spin(self)
        if box.specialValueText() and text == box.specialValueText():
            return QValidator.State.Acceptable, text, pos
        value = self._number(text)
        if value is not None:
            ok = self._shown(value) == value
            return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate), text, pos
        if _TYPING.fullmatch(self._notation(text)):
            return QValidator.State.Intermediate, text, pos
        return QValidator.State.Invalid, text, pos

    def fixup(self, text: str, /) -> str:
        """An entry that is not a value as typed: the nearest one the box can show (the value as it was if the
        entry holds no number)."""
        box = _spin(self)
        value = self._number(text)
        return box.textFromValue(box.value() if value is None else self._shown(value))  # type: ignore[arg-type]

    def _from_text(self, text: str) -> float:
        value = self._number(text)
        return _spin(self).value() if value is None else self._shown(value)

    def event(self, event: QEvent) -> bool:
        """Ctrl+Z / Ctrl+Shift+Z in a box whose entry is committed go to Edit > Undo / Redo, which take the edit
        back: the box's own text undo would only restore what was typed, leaving the scenario as it is (the menu
        offered "Undo ..." while the key did nothing). While an entry is being typed they edit the text."""
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and (event.matches(QKeySequence.StandardKey.Undo) or event.matches(QKeySequence.StandardKey.Redo))
            and self._from_text(_spin(self).text()) == _spin(self).value()
        ):
            event.ignore()  # not overridden: the window's shortcut runs
            return False
        return bool(super().event(event))


def _spin(widget: object) -> QSpinBox | QDoubleSpinBox:
    """``widget`` as the spin box it is (for the mixin's type checks)."""
    assert isinstance(widget, (QSpinBox, QDoubleSpinBox))
    return widget


class SpinBox(_TypedNumbers, _WheelOnlyWhenFocused, QSpinBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_wheel()

    def valueFromText(self, text: str) -> int:
        return int(self._from_text(text))


class DoubleSpinBox(_TypedNumbers, _WheelOnlyWhenFocused, QDoubleSpinBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_wheel()

    def valueFromText(self, text: str) -> float:
        return self._from_text(text)


class ComboBox(_WheelOnlyWhenFocused, QComboBox):
    """A drop-down list the wheel changes only once it has the focus (scrolling past it scrolls the panel)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_wheel()


_STEPS = 1000


def significant(value: float, digits: int = 3) -> float:
    """``value`` rounded to ``digits`` significant digits (what a slider position should mean)."""
    if value <= 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(value)))


def sig_text(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits and thousands separators: 0.217, 1,230, 4.1e-09."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    if decimals > 6:
        return f"{value:.{digits - 1}e}"
    return f"{value:,.{max(decimals, 0)}f}"


#: GPU counts a dragged GPU slider snaps to when it passes near them: powers of two and round sizes.
_GPU_LANDMARKS = tuple(sorted({1024 * 2**k for k in range(11)} | {10_000, 50_000, 100_000, 200_000, 500_000}))


def nice_gpu_count(value: float) -> float:
    """A dragged GPU count: a landmark within 1.5% (16,384, 100,000, ...), else two significant digits."""
    for mark in _GPU_LANDMARKS:
        if abs(math.log(value / mark)) < 0.015:
            return float(mark)
    return significant(value, 2)


class LogSlider(_WheelOnlyWhenFocused, QSlider):
    """A horizontal slider whose integer positions map to a log scale from ``lo`` to ``hi``."""

    def __init__(self, lo: float, hi: float, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self._init_wheel()
        if not 0 < lo < hi:
            raise ValueError("a log slider needs 0 < lo < hi")
        self._lo, self._hi = math.log(lo), math.log(hi)
        self.setRange(0, _STEPS)
        self.setSingleStep(5)
        self.setPageStep(50)

    def to_value(self, position: int) -> float:
        return math.exp(self._lo + (self._hi - self._lo) * position / _STEPS)

    def to_position(self, value: float) -> int:
        if not value > 0:
            return 0
        f = (math.log(value) - self._lo) / (self._hi - self._lo)
        return round(min(max(f, 0.0), 1.0) * _STEPS)


class ValueControl(QWidget):
    """A label and an exact spin box on one line, a log slider under them.

    The slider covers the usual range on a log scale, and its positions snap to round values
    (``snap``); the spin box takes any allowed value exactly (including 0 where allowed).
    ``edited`` carries the new value; ``slider.isSliderDown()`` says whether it is being dragged.
    """

    edited = Signal(float)
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
        snap: Callable[[float], float] = significant,
    ) -> None:
        super().__init__()
        self._snap = snap
        self.slider = LogSlider(*slider_range)
        if object_name:
            self.slider.setObjectName(object_name)
        self.slider.setAccessibleName(label)
        self.spin = DoubleSpinBox()
        self.spin.setDecimals(decimals)
        self.spin.setRange(*value_range)
        self.spin.setKeyboardTracking(False)
        self.spin.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        self.spin.setGroupSeparatorShown(True)
        self.spin.setMinimumWidth(104)
        self.spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.spin.setAccessibleName(label)
        self.label = QLabel(label)
        self.label.setWordWrap(True)
        self.unit = QLabel(unit)
        self.unit.setMinimumWidth(44)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(0)
        grid.addWidget(self.label, 0, 0)
        grid.addWidget(self.spin, 0, 1)
        grid.addWidget(self.unit, 0, 2)
        grid.addWidget(self.slider, 1, 0, 1, 3)
        grid.setColumnStretch(0, 1)
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
            if not self.slider.isSliderDown():  # never pull the handle from under the hand
                self.slider.setValue(self.slider.to_position(value))
        finally:
            self._syncing = False

    def setEnabled(self, enabled: bool) -> None:
        self.slider.setEnabled(enabled)
        self.spin.setEnabled(enabled)

    def _from_slider(self, position: int) -> None:
        if self._syncing:
            return
        value = min(max(self._snap(self.slider.to_value(position)), self.spin.minimum()), self.spin.maximum())
        self._syncing = True
        try:
            self.spin.setValue(value)
        finally:
            self._syncing = False
        self._value = float(self.spin.value())  # a slider position means the value shown
        self.edited.emit(self._value)

    def _from_spin(self, value: float) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            self.slider.setValue(self.slider.to_position(value))
        finally:
            self._syncing = False
        self._value = float(value)
        self.edited.emit(self._value)


def spec_control(
    field: str,
    object_name: str,
    *,
    label: str | None = None,
    unit: str | None = None,
    factor: float = 1.0,
    slider: tuple[float, float] | None = None,
    decimals: int | None = None,
    tooltip: str | None = None,
    **kwargs: Any,
) -> ValueControl:
    """A :class:`ValueControl` for an input of the spec table (:data:`planner_gui.core.model.specs.SPECS`): its
    label, unit, limits, slider range, decimals and help, each replaceable. The control shows the input times
    ``factor`` (e.g. 100 for a share shown in %), so its limits are the spec's times ``factor``."""
    spec = SPECS[field]
    span = slider if slider is not None else spec.slider
    assert span is not None, f"{field} has no slider range"
    return ValueControl(
        spec.label if label is None else label,
        spec.unit if unit is None else unit,
        slider_range=span,
        value_range=(spec.lo * factor, spec.hi * factor),
        decimals=spec.decimals if decimals is None else decimals,
        object_name=object_name,
        tooltip=f"{spec.help} {spec.note}".strip() if tooltip is None else tooltip,
        **kwargs,
    )


def in_turns(owner: QObject, steps: Sequence[Callable[[], None]]) -> None:
    """Run ``steps`` one per turn of the event loop, in order, while ``owner`` lives.

    A window with several plots builds them this way: pyqtgraph's PlotItem takes 15-25 ms to build (its context
    menus, axes and labels) and as long to paint the first time, so a dialog of three plots built at once held
    the event loop 60-110 ms. Building a plot in one step and putting it on screen in the next keeps every turn
    under 50 ms (``benchmarks/bench_stalls.py --case opening``); between turns the window paints and answers.
    (A timer of 1 ms, not 0: Qt runs a 0 ms single shot as a posted event, in the same pass as the paint that the
    step before asked for and before any timer, so two steps and a paint ran as one stall.)"""
    todo = list(steps)

    def run_next() -> None:
        if todo:
            todo.pop(0)()
        if todo:
            QTimer.singleShot(1, owner, run_next)

    if todo:
        QTimer.singleShot(1, owner, run_next)


class RowsInTurns:
    """Rows of an inputs panel (a component's rate, a category's repair time, a cause's scope) built a batch a turn
    of the event loop once there are many: an incident log may give 180 causes in 180 categories, and a row takes
    0.2-1.5 ms to build, so building them all at once held the window over half a second.

    A build (:meth:`start`) whose rows cost up to :attr:`AT_ONCE_MS` is made at once (every preset's); a larger one
    joins a queue that builds :attr:`TURN_MS` of rows a turn, one turn after another (a 1 ms timer, as
    :func:`in_turns`), across every build of the panel that shares this object. A new build of a key replaces
    one of it still queued; ``ready`` says whether nothing is queued."""

    AT_ONCE_MS, TURN_MS = 30.0, 15.0

    def __init__(self, owner: QObject) -> None:
        self.owner = owner
        self._queue: dict[str, tuple[list[tuple[Any, float]], Callable[[Any], None], Callable[[], None] | None]] = {}
        self._running = False

    @property
    def ready(self) -> bool:
        return not self._queue

    def start(
        self,
        key: str,
        items: Sequence[Any],
        build: Callable[[Any], None],
        cost_ms: Callable[[Any], float],
        done: Callable[[], None] | None = None,
    ) -> None:
        """Build ``build(item)`` for each of ``items`` (``cost_ms(item)``: about how long it takes), then ``done``."""
        self._queue.pop(key, None)
        costed = [(item, cost_ms(item)) for item in items]
        if sum(cost for _, cost in costed) <= self.AT_ONCE_MS:
            for item, _ in costed:
                build(item)
            if done is not None:
                done()
            return
        self._queue[key] = (costed, build, done)
        if not self._running:
            self._running = True
            QTimer.singleShot(1, self.owner, self._turn)

    def _turn(self) -> None:
        spent = 0.0
        while self._queue and spent < self.TURN_MS:
            key = next(iter(self._queue))
            todo, build, done = self._queue[key]
            while todo and spent < self.TURN_MS:
                item, cost = todo.pop(0)
                build(item)
                spent += cost
            if not todo:
                del self._queue[key]
                if done is not None:
                    done()
        if self._queue:
            QTimer.singleShot(1, self.owner, self._turn)
        else:
            self._running = False
