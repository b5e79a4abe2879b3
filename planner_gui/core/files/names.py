"""The name of a changed scenario: ``"<name>, edited: <what changed>"``, one description of the changes however
often it is changed (the command line's flags and the window's edits both name what they change)."""

from __future__ import annotations

import re

from .values import NAME_MAX_LEN

__all__ = ["edited_name"]

_EDITED = ", edited: "

_EDITED_MARK = " (edited)"

_FLAG_GROUP = re.compile(r"(--[A-Za-z0-9][A-Za-z0-9-]*)((?:\s+(?!--[A-Za-z])\S+)*)")


def _flag_groups(text: str) -> dict[str, str] | None:
    """``"--gpus 100,000 --days 10"`` as ``{"--gpus": "100,000", "--days": "10"}``; None if it is not that."""
    text = text.strip()
    groups: dict[str, str] = {}
    pos = 0
    for m in _FLAG_GROUP.finditer(text):
        if text[pos : m.start()].strip():
            return None
        groups.pop(m.group(1), None)
        groups[m.group(1)] = m.group(2).strip()
        pos = m.end()
    if not groups or text[pos:].strip():
        return None
    return groups


def _shorten(text: str, max_len: int) -> str:
    return text if len(text) <= max_len else text[: max(0, max_len - 3)].rstrip() + "..."


def edited_name(name: str, what: str) -> str:
    """The name of a scenario ``name`` changed by ``what``: ``"<name>, edited: <what>"``.

    Editing an edited name replaces its description of the edit rather than adding another one; when
    both descriptions are command-line flags (``--gpus 100,000 --days 10``), they are merged, a later
    value of a flag replacing the earlier one. A plain " (edited)" mark is replaced too. The result fits
    the :data:`NAME_MAX_LEN` limit: the description is shortened first, then the original name. An
    empty ``what`` returns ``name`` unchanged.
    """
    base, sep, before = name.rpartition(_EDITED)
    if not sep:
        base, before = name, ""
    if base.endswith(_EDITED_MARK):  # the window's mark of an edited preset: this description replaces it
        base = base[: -len(_EDITED_MARK)]
    what = " ".join(what.split())
    if not what:
        return name
    if before:
        old, new = _flag_groups(before), _flag_groups(what)
        if old is not None and new is not None:
            merged = {**old, **new}
            for flag in new:  # a flag set again moves to the end, as the latest edit
                merged[flag] = merged.pop(flag)
            what = " ".join(f"{flag} {value}".strip() for flag, value in merged.items())
    base = base.rstrip() or "Scenario"
    room = NAME_MAX_LEN - len(_EDITED)
    what = _shorten(what, max(40, room - len(base)))
    base = _shorten(base, room - len(what))
    return f"{base}{_EDITED}{what}"
