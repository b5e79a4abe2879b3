"""Rate profiles from files: CSV lines of ``day,multiplier``, or JSON.

A CSV file holds one piece per line, ``day,multiplier`` (days from the window's start, the first 0);
blank lines and lines starting with ``#`` are skipped, and a first line that is not numbers is a header.
A JSON file holds the list of ``[day, multiplier]`` pairs, or an object with such a ``rate_profile``
(a scenario file's). Files are read as scenario files are (:func:`.scenario_io.read_file`), and every
problem is one :class:`.scenario_io.ScenarioError` line naming the file and the line.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ..model.scenario import Profile
from ..util.fmt import clean
from .scenario_io import ScenarioError, read_file
from .values import check_profile

__all__ = ["load_profile", "parse_profile"]

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_FIELD = re.compile(r"rate_profile\[(\d+)\]")


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Read a rate profile file (see the module docstring)."""
    p, data = read_file(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{clean(p.name, 80)}: not UTF-8 text (byte {exc.start})") from None
    try:
        return parse_profile(text)
    except ScenarioError as exc:
        raise ScenarioError(f"{clean(p.name, 80)}: {exc}") from None


def parse_profile(text: str) -> Profile:
    """A rate profile from the text of a CSV or JSON file."""
    if text.lstrip().startswith(("[", "{")):
        return _from_json(text)
    return _from_csv(text)


def _reject(name: str) -> Any:
    raise ScenarioError(f"{name} is not allowed (numbers must be finite)")


def _from_json(text: str) -> Profile:
    try:
        doc = json.loads(text, parse_constant=_reject)
    except ScenarioError:
        raise
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:
        raise ScenarioError(f"cannot be read ({clean(str(exc), 80)})") from None
    if isinstance(doc, dict):
        if "rate_profile" not in doc:
            raise ScenarioError("a JSON object must hold a rate_profile: a list of [day, multiplier] pairs")
        doc = doc["rate_profile"]
    profile = check_profile(doc)
    if profile is None:
        raise ScenarioError("rate_profile: is null; give a list of [day, multiplier] pairs")
    return profile


def _from_csv(text: str) -> Profile:
    pairs: list[list[float]] = []
    lines: list[int] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if not pairs and not lines and not any(_NUMBER.fullmatch(f) for f in fields):
            lines.append(0)  # a header: only before the first piece, and only once
            continue
        if len(fields) != 2:
            raise ScenarioError(f"line {number}: must be day,multiplier (got {len(fields)} fields)")
        bad = next((f for f in fields if not _NUMBER.fullmatch(f)), None)
        if bad is not None:
            raise ScenarioError(f"line {number}: '{clean(bad, 40)}' is not a number")
        pairs.append([float(fields[0]), float(fields[1])])
        lines.append(number)
    lines = [n for n in lines if n]
    if not pairs:
        raise ScenarioError("no day,multiplier lines")
    try:
        profile = check_profile(pairs)
    except ScenarioError as exc:
        message = str(exc)
        m = _FIELD.match(message)
        if m is not None:  # name the line of the file, not the index of the list
            message = f"line {lines[int(m.group(1))]}" + message[m.end() :].replace(".day:", ": day").replace(
                ".multiplier:", ": multiplier"
            )
        raise ScenarioError(message) from None
    assert profile is not None
    return profile
