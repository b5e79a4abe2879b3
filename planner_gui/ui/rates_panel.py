"""Rates from data, in the input panel: rate uncertainty on or off, and how the rates change over the run.

Like every control, these write to the window's :class:`~planner_gui.core.session.inputs.Inputs` and show what it
holds. The scenario keeps only a rate profile (a list of ``(day, multiplier)`` pairs); "burn-in" is a way
to make one (:func:`~planner_gui.core.theory.profiles.burn_in_profile` of a shape and a characteristic life over
the run's days), so the panel remembers the shape and life it used. While the profile in the scenario is
the one they made, the panel shows it as a burn-in and remakes it when the run's length changes (the
burn-in covers the window, as ``--burn-in`` on the command line does after ``--days``); any other profile
(opened from a file, typed in the table) is shown as the table of multipliers by day.
"""

from __future__ import annotations

import math
import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.files.profile_io import load_profile
from ..core.files.scenario_io import ScenarioError
from ..core.files.values import check_profile
from ..core.model.scenario import DEFAULT_NOTES, Profile, Scenario
from ..core.model.specs import LIMITS, SPECS
from ..core.session.inputs import Inputs
from ..core.theory.profiles import burn_in_profile, mean_multiplier, pieces
from ..core.theory.rates import evidence_of
from ..core.util import fmt
from .theme import mark_secondary
from .widgets import ComboBox, DoubleSpinBox

__all__ = ["MODES", "RatesFromDataPanel", "profile_summary"]

#: The ways the rates can run over the window, as the mode box names them.
MODES = ("Constant", "Burn-in of a new cluster", "Multipliers by day")
CONSTANT, BURN_IN, TABLE = range(3)
#: Where the burn-in's boxes start (the example of docs/cli.md and ``--burn-in``).
DEFAULT_BURN_IN = (0.7, 30.0)
#: Shown in place of a summary when the table does not hold a valid profile.
ERROR_STYLE = "color: #b00020;"


def _first_day(days: float) -> str:
    return "day 1" if days >= 1.0 else "the window"


def profile_summary(sc: Scenario) -> str:
    """The scenario's rates over its run in words: the multiplier at the start, at the end and on average."""
    if sc.rate_profile is None:
        return "Rates stay as set all through the run."
    p = pieces(sc.rate_profile, sc.days)
    mean = p.integral() / p.hours
    day1 = mean_multiplier(sc.rate_profile, min(sc.days, 1.0))
    return (
        f"x{p.multipliers[0]:.3g} at the start (x{day1:.3g} over {_first_day(sc.days)}), "
        f"x{p.multipliers[-1]:.3g} by day {sc.days:g}, "
        f"x{mean:.3g} on average over the run ({len(p)} piece{'' if len(p) == 1 else 's'})."
    )


def _evidence_text(sc: Scenario) -> str:
    """Which components' rates are drawn (those with evidence) and which stay as they are."""
    with_evidence = sum(evidence_of(c) is not None for c in sc.components)
    kept = len(sc.components) - with_evidence
    text = (
        f"Each trial draws the rates of {with_evidence} of {len(sc.components)} components from their "
        "posteriors given their evidence"
    )
    return text + (f"; {kept} without evidence keep their rate." if kept else ".")


class RatesFromDataPanel(QGroupBox):
    """Rate uncertainty and the rates over the run (constant, a burn-in, or multipliers by day)."""

    def __init__(self, inputs: Inputs) -> None:
        super().__init__("Rates from data")
        self.setObjectName("ratesFromData")
        self.inputs = inputs
        self._burn: tuple[float, float, float, Profile] | None = None  # shape, life, days, the profile made
        self._days = inputs.scenario.days
        self._showing = False
        lay = QVBoxLayout(self)

        self.uncertainty = QCheckBox("Include rate uncertainty")
        self.uncertainty.setObjectName("rateUncertaintyCheck")
        self.uncertainty.setToolTip(
            DEFAULT_NOTES["rate_uncertainty"] + " The ranges then show both the uncertain rates and chance; the "
            "summary says how much of the spread each causes."
        )
        self.uncertainty.toggled.connect(lambda on: self.inputs.update(rate_uncertainty=bool(on)))
        lay.addWidget(self.uncertainty)
        self.evidence = QLabel()
        self.evidence.setObjectName("rateEvidence")
        self.evidence.setWordWrap(True)
        self.evidence.setIndent(8)
        mark_secondary(self.evidence)
        lay.addWidget(self.evidence)

        row = QHBoxLayout()
        row.addWidget(QLabel("Rates over the run"))
        self.mode = ComboBox()
        self.mode.setObjectName("rateProfileMode")
        self.mode.addItems(MODES)
        self.mode.setToolTip(
            DEFAULT_NOTES["rate_profile"] + " Burn-in: a new cluster's nodes fail more often while young. "
            "Multipliers by day: a table of your own (or a CSV/JSON file)."
        )
        self.mode.activated.connect(self._mode_chosen)
        row.addWidget(self.mode, 1)
        lay.addLayout(row)

        self.burn_box = QWidget()
        grid = QGridLayout(self.burn_box)
        grid.setContentsMargins(0, 0, 0, 0)
        self.shape = self._spin("burn_in_shape", "burnInShapeSpin", DEFAULT_BURN_IN[0], 0.05)
        self.life = self._spin("burn_in_life_days", "burnInLifeSpin", DEFAULT_BURN_IN[1], 1.0)
        for r, (field, spin) in enumerate((("burn_in_shape", self.shape), ("burn_in_life_days", self.life))):
            spec = SPECS[field]
            grid.addWidget(QLabel(spec.label), r, 0)
            grid.addWidget(spin, r, 1)
            grid.addWidget(QLabel(spec.unit), r, 2)
        grid.setColumnStretch(0, 1)
        lay.addWidget(self.burn_box)

        self.table_box = QWidget()
        tl = QVBoxLayout(self.table_box)
        tl.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, 2)
        self.table.setObjectName("rateProfileTable")
        self.table.setHorizontalHeaderLabels(["From day", "Multiplier"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setMinimumHeight(110)
        self.table.setMaximumHeight(190)
        self.table.setToolTip(
            "Each row: from that day of the run (0: its start), every unplanned rate is multiplied by the "
            "multiplier, until the next row's day; the last row holds to the end. The first row is day 0."
        )
        self.table.itemChanged.connect(self._table_edited)
        tl.addWidget(self.table)
        buttons = QHBoxLayout()
        for text, name, slot, tip in (
            ("Add row", "addProfileRow", self._add_row, "A row after the last, 7 days later, multiplier 1"),
            ("Remove row", "removeProfileRow", self._remove_row, "Remove the selected row (or the last)"),
            ("Load...", "loadProfileButton", self._load, "Read a profile: CSV of day,multiplier lines or JSON pairs"),
        ):
            b = QPushButton(text)
            b.setObjectName(name)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            buttons.addWidget(b)
        tl.addLayout(buttons)
        lay.addWidget(self.table_box)

        self.summary = QLabel()
        self.summary.setObjectName("rateProfileSummary")
        self.summary.setWordWrap(True)
        self.summary.setIndent(8)
        lay.addWidget(self.summary)
        self.error = ""
        inputs.changed.connect(self._follow)
        self._follow(frozenset({"*"}))

    def _spin(self, field: str, name: str, value: float, step: float) -> DoubleSpinBox:
        spec = SPECS[field]
        spin = DoubleSpinBox()
        spin.setObjectName(name)
        spin.setRange(spec.lo, spec.hi)
        spin.setDecimals(max(spec.decimals, 2 if field == "burn_in_shape" else 3))
        spin.setSingleStep(step)
        spin.setKeyboardTracking(False)
        spin.setValue(value)
        spin.setToolTip(spec.help)
        spin.setAccessibleName(spec.label)
        spin.valueChanged.connect(self._burn_in_edited)
        return spin

    # -- writing ---------------------------------------------------------------------------------
    def _mode_chosen(self, index: int) -> None:
        self.error = ""
        if index == CONSTANT:
            self.inputs.update(rate_profile=None)
        elif index == BURN_IN:
            self._apply_burn_in()
        else:  # the profile in force becomes the table's, or one row of x1 to start from
            profile = self.inputs.scenario.rate_profile
            self._burn = None
            if profile is None:
                self.inputs.update(rate_profile=((0.0, 1.0),))
        self._show(self.inputs.scenario)

    def _burn_in_edited(self, _value: float) -> None:
        if not self._showing and self.mode.currentIndex() == BURN_IN:
            self._apply_burn_in()

    def _apply_burn_in(self, shape: float | None = None, life: float | None = None, days: float | None = None) -> None:
        """Make the burn-in's profile (by default for the boxes' shape and life, over the run's days) and use it."""
        shape = self.shape.value() if shape is None else shape
        life = self.life.value() if life is None else life
        days = self.inputs.scenario.days if days is None else days
        profile = burn_in_profile(shape, life, days)
        top, most = max(m for _, m in profile), LIMITS["multiplier"][1]
        if top > most:
            self.error = (
                f"Not applied: a shape of {shape:g} and a life of {life:g} days make the rate {top:.3g} times the "
                f"burnt-in rate at first, over the limit of {most:,g}; use a larger shape or a shorter life."
            )
            self._show(self.inputs.scenario)
            return
        self.error = ""
        self._burn = (shape, life, days, profile)
        self.inputs.update(rate_profile=profile, new_cluster=True)  # a burn-in is a new cluster's (as --burn-in)
        self._show(self.inputs.scenario)

    def _rows(self) -> list[list[str | float]]:
        """The table's cells: the exact value a cell was filled with while its text is unchanged (the text
        shows 6 digits), else the text typed."""
        out: list[list[str | float]] = []
        for r in range(self.table.rowCount()):
            row: list[str | float] = []
            for c in range(2):
                cell = self.table.item(r, c)
                text = cell.text().strip() if cell is not None else ""
                exact = cell.data(Qt.ItemDataRole.UserRole) if cell is not None else None
                row.append(exact if isinstance(exact, float) and text == _cell_text(exact) else text)
            out.append(row)
        return out

    def _table_edited(self, _item: QTableWidgetItem) -> None:
        if self._showing:
            return
        self._apply_table()

    def _apply_table(self) -> None:
        """Use the table's profile if it is valid; else say what is wrong and keep the one in force."""
        try:
            pairs = []
            for i, (day, mult) in enumerate(self._rows()):
                pairs.append([_number(day, f"row {i + 1}: the day"), _number(mult, f"row {i + 1}: the multiplier")])
            profile = check_profile(pairs, "profile")
        except ScenarioError as exc:
            text = re.sub(r"profile\[(\d+)\]", lambda m: f"row {int(m.group(1)) + 1}", str(exc))
            text = text.replace(".day:", ": the day").replace(".multiplier:", ": the multiplier")
            self.error = f"Not applied: {fmt.clean(text, 200)}"
            self._show_summary(self.inputs.scenario)
            return
        self.error = ""
        self._burn = None
        self.inputs.update(rate_profile=profile)
        self._show_summary(self.inputs.scenario)

    def _add_row(self) -> None:
        rows = self._rows()
        try:
            last = float(rows[-1][0]) if rows else -7.0
        except ValueError:
            last = -7.0
        last = last if math.isfinite(last) else -7.0
        self._showing = True
        r = self.table.rowCount()
        self.table.insertRow(r)
        self.table.setItem(r, 0, _cell(last + 7.0))
        self.table.setItem(r, 1, _cell(1.0))
        self._showing = False
        self._apply_table()

    def _remove_row(self) -> None:
        if self.table.rowCount() <= 1:
            return
        selected = self.table.selectionModel().selectedRows()
        self.table.removeRow(selected[0].row() if selected else self.table.rowCount() - 1)
        self._apply_table()

    def _load(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Load a rate profile", "", "Rate profiles (*.csv *.json *.txt);;All files (*)"
        )
        if path:
            self.load_file(path)

    def load_file(self, path: str) -> None:
        """Use the profile in ``path`` (CSV or JSON); a bad file is named in the panel, the profile kept."""
        try:
            profile = load_profile(path)
        except ScenarioError as exc:
            self.error = f"Not loaded: {fmt.clean(str(exc), 200)}"
            self._show_summary(self.inputs.scenario)
            return
        self.error = ""
        self._burn = None
        self.inputs.update(rate_profile=profile)
        self._show(self.inputs.scenario)

    # -- following the inputs -------------------------------------------------------------------------
    def _follow(self, changed: frozenset) -> None:
        sc = self.inputs.scenario
        old_days, self._days = self._days, sc.days
        if "days" in changed and self._burn is not None and sc.days != old_days:
            shape, life, days, made = self._burn
            if sc.rate_profile == made and days == old_days:  # the burn-in covers the window: remake it
                self._apply_burn_in(shape, life, sc.days)
                return
        if {"*", "rate_profile", "rate_uncertainty", "days", "components"} & changed or len(changed) > 3:
            if "rate_profile" in changed and self.error and not self._showing:
                self.error = ""  # a profile from elsewhere (a file, a preset) replaces a table being fixed
            self._show(sc)

    def _mode_of(self, sc: Scenario) -> int:
        if sc.rate_profile is None:
            return CONSTANT
        if self._burn is not None and sc.rate_profile == self._burn[3]:
            return BURN_IN
        return TABLE

    def _show(self, sc: Scenario) -> None:
        self._showing = True
        try:
            self.uncertainty.setChecked(sc.rate_uncertainty)
            self.evidence.setText(_evidence_text(sc) if sc.rate_uncertainty else "")
            self.evidence.setVisible(sc.rate_uncertainty)
            mode = self._mode_of(sc)
            if self.mode.currentIndex() == BURN_IN and self.error and mode != BURN_IN:
                mode = BURN_IN  # a burn-in that could not be applied: keep its boxes in view to fix it
            self.mode.setCurrentIndex(mode)
            if mode == BURN_IN and self._burn is not None:
                self.shape.setValue(self._burn[0])
                self.life.setValue(self._burn[1])
            self.burn_box.setVisible(mode == BURN_IN)
            self.table_box.setVisible(mode == TABLE)
            if mode == TABLE and not self.error:
                self._fill_table(sc.rate_profile or ((0.0, 1.0),))
        finally:
            self._showing = False
        self._show_summary(sc)

    def _fill_table(self, profile: Profile) -> None:
        self.table.setRowCount(len(profile))
        for r, (day, mult) in enumerate(profile):
            self.table.setItem(r, 0, _cell(day))
            self.table.setItem(r, 1, _cell(mult))

    def _show_summary(self, sc: Scenario) -> None:
        if self.error:
            self.summary.setText(self.error)
            self.summary.setStyleSheet(ERROR_STYLE)
        else:
            self.summary.setText(profile_summary(sc))
            self.summary.setStyleSheet("")


def _cell_text(value: float) -> str:
    return f"{value:.6g}"


def _cell(value: float) -> QTableWidgetItem:
    """A cell showing ``value`` to 6 digits and keeping it exactly."""
    item = QTableWidgetItem(_cell_text(value))
    item.setData(Qt.ItemDataRole.UserRole, float(value))
    return item


def _number(text: str | float, what: str) -> float:
    if isinstance(text, float):
        return text
    try:
        value = float(text)
    except ValueError:
        raise ScenarioError(f"{what}: must be a number (got '{fmt.clean(text, 20)}')") from None
    if not math.isfinite(value):
        raise ScenarioError(f"{what}: must be a finite number (got '{fmt.clean(text, 20)}')")
    return value
