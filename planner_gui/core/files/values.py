"""One value of a scenario file, checked as it is read: numbers within their limits (:data:`..model.specs.LIMITS`),
texts, the keys of an object, true/false sections, node lives and rate profiles. Every problem raises a one-line
:class:`.checks.ScenarioError` that names the field, what is allowed and what was there, e.g.
``gpus: must be a whole number from 1 to 10,000,000 (got 0)``. :mod:`.scenario_io` reads a whole document with
them; the command line and the study files check the values they take the same way."""

from __future__ import annotations

import difflib
import json
import math
from typing import Any

from ..model.scenario import WEIBULL_SHAPES, Component, Profile
from ..model.specs import LIMITS, MAX_PROFILE_PIECES
from ..util.fmt import clean
from ..util.fmt import number as fmt_number
from .checks import ScenarioError

__all__ = [
    "MAX_INT_DIGITS",
    "NAME_MAX_LEN",
    "WEIBULL_SCALE_HOURS",
    "HugeInt",
    "check_flag",
    "check_keys",
    "check_name",
    "check_number",
    "check_profile",
    "check_text",
    "check_weibull",
    "describe",
    "object_pairs",
    "parse_int",
    "weibull_doc",
]

#: Longest scenario name (component names and categories: 100).
NAME_MAX_LEN = 200

#: Digits in an integer literal beyond which a document is refused outright (Python refuses to convert
#: more than 4,300, and no field needs more than 19).
MAX_INT_DIGITS = 100


def check_number(field: str, value: Any, *, or_else: str | None = None) -> float | int:
    """Validate one numeric field against :data:`LIMITS`; return it as int or float. ``or_else`` names what the
    field takes besides a number (``'optimal'``), for the message."""
    key = field.rsplit(".", 1)[-1]
    lo, hi, integer = LIMITS[key]
    kind = "a whole number" if integer else "a number"
    besides = f"{or_else} or " if or_else else ""
    allowed = f"must be {besides}{kind} from {fmt_number(lo)} to {fmt_number(hi)}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ScenarioError(f"{field}: {allowed} (got {describe(value)})")
    if isinstance(value, float) and not math.isfinite(value):
        raise ScenarioError(f"{field}: {allowed} (got {value})")
    if integer and isinstance(value, float):
        if not value.is_integer():
            raise ScenarioError(f"{field}: {allowed} (got {value})")
        value = int(value)
    if not lo <= value <= hi:
        raise ScenarioError(f"{field}: {allowed} (got {describe(value)})")
    number: float | int = value
    return number


def describe(value: Any) -> str:
    """A short, one-line description of a JSON value for an error message."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        return f"text '{clean(value, 40)}'"
    if isinstance(value, (int, float)):
        return fmt_number(value)  # 20,000,000; 1e+300, not the digits of a float's noise
    if isinstance(value, list):
        return f"a list of {len(value):,} items"
    if isinstance(value, dict):
        return f"an object of {len(value):,} keys"
    if isinstance(value, HugeInt):
        return f"a whole number of {value.digits:,} digits"
    return type(value).__name__


def check_text(field: str, value: Any, max_len: int = NAME_MAX_LEN) -> str:
    allowed = f"must be a non-empty text of at most {max_len} characters"
    if not isinstance(value, str) or not value.strip() or len(value) > max_len:
        got = f"{len(value):,} characters" if isinstance(value, str) and value.strip() else describe(value)
        raise ScenarioError(f"{field}: {allowed} (got {got})")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise ScenarioError(f"{field}: {allowed}, in valid Unicode (got an unpaired surrogate in '{clean(value, 40)}')")
    return value


def check_name(value: Any, field: str = "name") -> str:
    """Validate a scenario name as a file's ``name`` is validated; return it."""
    return check_text(field, value)


class _Object(dict):  # type: ignore[type-arg]
    """A decoded JSON object that remembers the keys it held more than once."""

    duplicates: tuple[str, ...] = ()


def object_pairs(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        obj.duplicates = tuple(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return obj


def check_keys(where: str, doc: dict[str, Any], allowed: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    dups = getattr(doc, "duplicates", ())
    if dups:
        raise ScenarioError(f"{where}{clean(dups[0], 40)}: appears more than once (each key may appear once)")
    unknown = [k for k in doc if k not in allowed and k not in optional]
    if unknown:
        raise ScenarioError(
            f"{where}{clean(unknown[0], 40)}: unknown key (allowed: {', '.join((*allowed, *optional))})"
        )
    missing = [k for k in allowed if k not in doc]
    if len(missing) == 1:
        raise ScenarioError(f"{where}{missing[0]}: missing")
    if missing:  # all of them at once (up to a few): a section written by hand may lack several
        more = f" and {len(missing) - 6} more" if len(missing) > 6 else ""
        raise ScenarioError(f"{where}{missing[0]}: missing, with {', '.join(missing[1:6])}{more} (each is needed)")


def check_weibull(doc: Any, components: tuple[Component, ...]) -> tuple[tuple[str, float, float | None], ...]:
    """The optional ``weibull``: node lives by component name, as {"Faulty GPU": {"shape": 0.7, "scale_hours":
    200000}} (docs/model.md, "Node lives"); without ``scale_hours`` the component's rate gives the scale."""
    if doc is None:
        return ()
    names = [c.name for c in components]
    example = '{"Faulty GPU": {"shape": 0.7, "scale_hours": 200000}}'
    if not isinstance(doc, dict) or len(doc) > len(names):
        raise ScenarioError(f"weibull: must be an object of node lives by component, as {example}")
    dups = getattr(doc, "duplicates", ())
    if dups:
        raise ScenarioError(f"weibull.{clean(dups[0], 40)}: appears more than once (each key may appear once)")
    out: list[tuple[str, float, float | None]] = []
    for name, life in doc.items():
        key = check_text("weibull", name, 200)
        if key not in names:
            near = difflib.get_close_matches(key, names, n=1, cutoff=0.5) or [
                n for n in names if key.lower() in n.lower()
            ]
            hint = f"did you mean '{clean(near[0], 40)}'?" if near else f"e.g. '{clean(names[0], 40)}'"
            raise ScenarioError(f"weibull.{clean(key, 40)}: no component of that name in the scenario ({hint})")
        where = f"weibull.{clean(key, 40)}"
        if not isinstance(life, dict):
            raise ScenarioError(
                f"{where}: must be an object with shape and, optionally, scale_hours (got {describe(life)})"
            )
        check_keys(f"{where}.", life, ("shape",), ("scale_hours",))
        out.append((key, _weibull_number(f"{where}.shape", life["shape"], WEIBULL_SHAPES), _scale(where, life)))
    return tuple(out)


def weibull_doc(entries: tuple[tuple[str, float, float | None], ...]) -> dict[str, dict[str, float]]:
    """Node lives as typed (:func:`.inputs.parse_weibull`: name, shape, scale or None) as the ``weibull`` key
    :func:`check_weibull` reads."""
    return {n: {"shape": k} | ({} if v is None else {"scale_hours": v}) for n, k, v in entries}


#: The scale of a node life (hours): from an hour to a hundred million years.
WEIBULL_SCALE_HOURS = (1.0, 1e12)


def _scale(where: str, life: dict[str, Any]) -> float | None:
    value = life.get("scale_hours")
    return None if value is None else _weibull_number(f"{where}.scale_hours", value, WEIBULL_SCALE_HOURS)


def _weibull_number(field: str, value: Any, bounds: tuple[float, float]) -> float:
    lo, hi = bounds
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise ScenarioError(f"{field}: must be a number from {lo:g} to {hi:,g} (got {describe(value)})")
    return float(value)


def check_flag(field: str, value: Any) -> bool:
    """An optional true/false section (absent or null: false)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    raise ScenarioError(f"{field}: must be true or false (got {describe(value)})")


def check_profile(doc: Any, field: str = "rate_profile") -> Profile | None:
    """Validate a rate profile: a list of ``[day, multiplier]`` pairs, the first at day 0, days increasing
    (absent or null: none). Return it as a tuple of pairs."""
    if doc is None:
        return None
    shape = f"must be a list of 1 to {MAX_PROFILE_PIECES:,} [day, multiplier] pairs, the first at day 0"
    if not isinstance(doc, list) or not 1 <= len(doc) <= MAX_PROFILE_PIECES:
        raise ScenarioError(f"{field}: {shape} (got {describe(doc)})")
    pairs: list[tuple[float, float]] = []
    for i, pair in enumerate(doc):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ScenarioError(f"{field}[{i}]: must be a [day, multiplier] pair (got {describe(pair)})")
        day = float(check_number(f"{field}[{i}].day", pair[0]))
        mult = float(check_number(f"{field}[{i}].multiplier", pair[1]))
        if i == 0 and day != 0:
            raise ScenarioError(f"{field}[0]: the profile must start at day 0 (got day {day:g})")
        if pairs and day <= pairs[-1][0]:
            raise ScenarioError(f"{field}[{i}]: days must increase (got day {day:g} after day {pairs[-1][0]:g})")
        pairs.append((day, mult))
    return tuple(pairs)


class HugeInt:
    """An integer literal too long to convert (Python refuses above 4,300 digits); every field refuses it."""

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))


def parse_int(text: str) -> int | HugeInt:
    return HugeInt(text) if len(text) > MAX_INT_DIGITS else int(text)
