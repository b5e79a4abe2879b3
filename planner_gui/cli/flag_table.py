"""The one shape of every group of flags that set fields: a table of :class:`Flag` rows, one per flag. The parser
is built from the table, and so are the maps the commands read (which flag set a field, so that a message names the
flag the user typed; which flags were given; what changed the scenario's name)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Flag", "add_flags", "field_flags"]


@dataclass(frozen=True)
class Flag:
    """A flag that sets one field (of the scenario, or of one of its sections)."""

    field: str
    names: tuple[str, ...]  # the flag, then its aliases
    help: str
    parse: Callable[[str], Any] | None = None  # argparse's ``type``: text -> value, or a usage error
    metavar: str | None = None
    choices: Sequence[str] | None = None
    action: str | type[argparse.Action] | None = None
    #: Whether it changes what the scenario describes, and so its name (trials and seed change only how the Monte
    #: Carlo estimates it).
    named: bool = True

    @property
    def flag(self) -> str:
        return self.names[0]

    @property
    def dest(self) -> str:
        """Where argparse puts its value: the flag's name, not an alias's."""
        return self.flag[2:].replace("-", "_")

    def add_to(self, parser: argparse._ActionsContainer) -> None:
        options: dict[str, Any] = {"dest": self.dest, "help": self.help}
        for key, option in (("parse", "type"), ("metavar", "metavar"), ("choices", "choices"), ("action", "action")):
            value = getattr(self, key)
            if value is not None:
                options[option] = value
        parser.add_argument(*self.names, **options)


def add_flags(parser: argparse._ActionsContainer, table: Iterable[Flag]) -> None:
    """Add the table's flags to ``parser`` (or one of its groups), in the table's order."""
    for row in table:
        row.add_to(parser)


def field_flags(table: Iterable[Flag]) -> dict[str, str]:
    """Field -> the flag that sets it."""
    return {row.field: row.flag for row in table}
