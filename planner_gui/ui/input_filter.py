"""The inputs panel's filter: a word shows the inputs whose words match it and hides the rest.

The panel is several screens long; typing "swap", "detection" or "HBM" leaves the rows (and the groups they are
in) whose visible words contain it. A group whose title matches shows whole. A folding group (a failure-rate
category) that holds a match shows whole and opens. Only what the filter hid is shown again when the word
changes or is cleared, so rows the panel hides for its own reasons (a setting that does not apply) stay hidden.
The panel applies the word again whenever it follows new inputs, since it rebuilds some rows (the components of
another scenario, the scope of each cause, the repair times by category).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QLayout,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid
from superqt import QCollapsible

__all__ = ["InputFilter", "words_of"]


def words_of(widget: QWidget) -> str:
    """Every word a person sees on ``widget`` and inside it (labels, buttons, group titles, list choices), in
    lower case."""
    parts: list[str] = []

    def add(w: QWidget) -> None:
        if isinstance(w, (QLabel, QAbstractButton)):
            parts.append(w.text())
        elif isinstance(w, QGroupBox):
            parts.append(w.title())
        elif isinstance(w, QCollapsible):
            parts.append(w.text())
        elif isinstance(w, QComboBox):
            parts.extend(w.itemText(i) for i in range(w.count()))

    add(widget)
    for child in widget.findChildren(QWidget):
        add(child)
    return " ".join(parts).replace("&", "").lower()


def _items(layout: QLayout) -> list[tuple[QWidget | None, QLayout | None]]:
    """Each item of ``layout``: its widget, or its layout."""
    out: list[tuple[QWidget | None, QLayout | None]] = []
    for i in range(layout.count()):
        item = layout.itemAt(i)
        if item is not None:
            out.append((item.widget(), item.layout()))
    return out


def _widgets(layout: QLayout) -> list[QWidget]:
    """Every widget in ``layout`` and the layouts inside it."""
    out: list[QWidget] = []
    for widget, inner in _items(layout):
        if widget is not None:
            out.append(widget)
        elif inner is not None:
            out.extend(_widgets(inner))
    return out


def _rows(layout: QLayout | None) -> list[list[QWidget]]:
    """The rows of a layout, in order: a widget; or the widgets of a row laid out side by side (a label beside
    its box), which show and hide together. A column nested in the layout gives its own rows."""
    if layout is None:
        return []
    if isinstance(layout, QGridLayout):  # a table of label and box: a row of the grid is a row
        by_row: dict[int, list[QWidget]] = {}
        for i in range(layout.count()):
            item = layout.itemAt(i)
            widget = item.widget() if item is not None else None
            if widget is not None:
                position: Any = layout.getItemPosition(i)  # (row, column, rows spanned, columns spanned)
                by_row.setdefault(int(position[0]), []).append(widget)
        return [by_row[r] for r in sorted(by_row)]
    rows: list[list[QWidget]] = []
    for widget, inner in _items(layout):
        if widget is not None:
            rows.append([widget])
        elif isinstance(inner, (QVBoxLayout, QGridLayout)):
            rows.extend(_rows(inner))
        elif inner is not None:
            row = _widgets(inner)
            if row:
                rows.append(row)
    return rows


def _is_container(w: QWidget) -> bool:
    """A box of rows (a group, a folding group, a plain widget holding a layout), not a row of its own."""
    return isinstance(w, (QGroupBox, QCollapsible)) or (type(w) is QWidget and w.layout() is not None)


def _title(w: QWidget) -> str:
    if isinstance(w, QGroupBox):
        return w.title().lower()
    if isinstance(w, QCollapsible):
        return w.text().lower()
    return ""


class InputFilter:
    """Filters the groups of an inputs panel (``groups``: its top-level boxes, in order)."""

    def __init__(self, groups: Iterable[QWidget], keep: Iterable[QWidget] = ()) -> None:
        self.groups = list(groups)
        self.keep = set(keep)  # never hidden (the filter's own box)
        self._hidden: list[QWidget] = []
        self.matches = 0
        self.shown = False  # whether anything matches (a note, if no input does)

    def apply(self, text: str) -> int:
        """Show what matches ``text`` (every word of it, in any order); returns how many inputs match (notes that
        match are shown, not counted; 0 for an empty text, which shows everything the filter had hidden)."""
        for w in self._hidden:
            # The panel may have rebuilt rows since (another scenario's components): a row taken out of it (no
            # parent: shown, it would be a window of its own) or deleted stays as it is.
            if isValid(w) and w.parentWidget() is not None:
                w.setVisible(True)
        self._hidden = []
        words = text.lower().split()
        self.matches, self.shown = 0, False
        if not words:
            return 0
        for group in self.groups:
            if group in self.keep or group.isHidden():
                continue
            inputs, shown = self._filter(group, words)
            if shown:
                self.matches += inputs
                self.shown = True
            else:
                self._hide(group)
        return self.matches

    def _filter(self, box: QWidget, words: list[str]) -> tuple[int, bool]:
        """Hide the rows of ``box`` that do not match. Returns how many inputs match (a box whose title matches:
        1, whole; a note that matches is shown but is no input) and whether anything in it does."""
        title = _title(box)
        if title and all(word in title for word in words):
            return 1, True
        content = box.content() if isinstance(box, QCollapsible) else box
        inputs, shown = 0, False
        for row in _rows(content.layout()):
            row = [w for w in row if not w.isHidden()]
            if not row:
                continue
            if len(row) == 1 and _is_container(row[0]):  # a box in the box: its rows
                inner, inner_shown = self._filter(row[0], words)
                if inner_shown:
                    inputs += inner
                    shown = True
                    if isinstance(row[0], QCollapsible) and not row[0].isExpanded():
                        row[0].expand(animate=False)
                else:
                    self._hide(row[0])
            elif all(any(word in words_of(w) for w in row) for word in words):
                shown = True
                inputs += 0 if all(isinstance(w, QLabel) for w in row) else 1  # a note: shown, not counted
            else:
                for w in row:
                    self._hide(w)
        return inputs, shown

    def _hide(self, w: QWidget) -> None:
        if w in self.keep:
            return
        w.setVisible(False)
        self._hidden.append(w)
