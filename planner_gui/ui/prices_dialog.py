"""The Planning tab's "Prices..." dialog: what each lever would cost to buy, so that "which change buys the most"
also says the dollars each saves per dollar paid.

One row per lever of the scenario shown (:func:`~planner_gui.core.analysis.sensitivity.levers`), with the change it
stands for and its price in dollars; an empty price leaves the lever unpriced. The prices are the scenario's
``lever_prices`` (saved in its file, undone with Edit > Undo like any input); a price the dialog does not show
(a lever the scenario no longer has) is kept. A malformed price is said in the dialog, in one line, and OK waits.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.analysis.sensitivity import Lever, parse_prices
from ..core.util import fmt
from .theme import mark_secondary

__all__ = ["LeverPricesDialog"]

Prices = tuple[tuple[str, float], ...]


def _shown(usd: float) -> str:
    """A price as typed back: "2000000", "1500.5"."""
    return f"{usd:.15g}" if usd < 1e15 else f"{usd:g}"


class LeverPricesDialog(QDialog):
    """A table of the levers and their prices; :meth:`prices` after OK."""

    def __init__(self, levers: Sequence[Lever], prices: Prices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("leverPricesDialog")
        self.setWindowTitle("What Each Change Would Cost")
        self.levers = list(levers)
        self._kept = tuple((n, p) for n, p in prices if n not in {lv.name for lv in self.levers})
        given = dict(prices)
        lay = QVBoxLayout(self)
        intro = QLabel(
            "The price of each change in dollars (a faster detection system, more restart engineering, an in-memory "
            "tier...). A priced change's bar says the dollars it saves per dollar paid. Leave a price empty to "
            "leave the change unpriced."
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.table = QTableWidget(len(self.levers), 3)
        self.table.setObjectName("leverPricesTable")
        self.table.setHorizontalHeaderLabels(["Lever", "Change", "Price ($)"])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        for i, lv in enumerate(self.levers):
            for j, text in enumerate((lv.name, lv.change)):
                item = QTableWidgetItem(text)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(i, j, item)
            price = given.get(lv.name)
            self.table.setItem(i, 2, QTableWidgetItem("" if price is None else _shown(price)))
        self.table.setMinimumWidth(520)
        lay.addWidget(self.table, 1)
        self.error = QLabel()
        self.error.setObjectName("leverPricesError")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        lay.addWidget(self.error)
        note = QLabel("Prices change no simulation: the bars follow at once.")
        mark_secondary(note)
        lay.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self._prices: Prices = tuple(prices)
        self.resize(640, 420)

    def _read(self) -> Prices:
        """The table's prices (ValueError in one line for a malformed one), then those for levers not shown."""
        specs = []
        for i, lv in enumerate(self.levers):
            item = self.table.item(i, 2)
            text = "" if item is None else item.text().strip()
            if text:
                specs.append(f"{lv.name}={text}")
        try:
            read = parse_prices(specs)
        except ValueError as exc:
            raise ValueError(str(exc).replace("--price ", "", 1)) from None
        return (*read, *self._kept)

    def accept(self) -> None:
        try:
            self._prices = self._read()
        except ValueError as exc:
            self.error.setText(fmt.clean(str(exc), 200))
            self.error.setVisible(True)
            return
        super().accept()

    def prices(self) -> Prices:
        """The prices after OK: (lever, dollars) pairs, the table's first."""
        return self._prices
