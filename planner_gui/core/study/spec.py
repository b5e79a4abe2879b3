"""Study files: a TOML document naming a base scenario, the inputs to vary and the design.

Inputs are *paths* into a scenario's file form (:func:`..files.scenario_io.scenario_to_dict`), so every field a
scenario file holds can be varied, including sections added after this module was written::

    gpus                                   a top-level field
    tiers.fast_interval_min                a field of a section
    components.Faulty GPU.rate_per_gpu_hour   a field of the component of that name
    multiplier.GPU                         multiplies the rates of every component of category GPU
    multiplier                             multiplies every component's rate

Every problem raises :class:`StudyError` with one line that names the key at fault.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files.presets import load_preset, preset_names
from ..files.scenario_io import FORMAT_VERSION, ScenarioError, load, read_file, scenario_from_dict, scenario_to_dict
from ..util.fmt import clean

__all__ = [
    "DESIGNS",
    "MAX_SCENARIOS",
    "MULTIPLIER",
    "Input",
    "Path_",
    "StudyError",
    "StudySpec",
    "apply_values",
    "input_of",
    "parse_spec",
    "read_text",
    "show_path",
]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: The designs a study may use.
DESIGNS = ("grid", "lhs", "sobol")
#: The most scenarios one study may hold.
MAX_SCENARIOS = 1_000_000
#: The most inputs one study may vary.
MAX_INPUTS = 50
#: The largest study file read.
MAX_SPEC_BYTES = 1_000_000
#: The path head of a rate multiplier (``multiplier`` alone: every component; ``multiplier.CAT``: one category).
MULTIPLIER = "multiplier"
#: Keys of a range (a table with any of them is a range, not a section of the scenario).
_RANGE_KEYS = ("min", "max", "scale", "points")
_STUDY_KEYS = ("name", "preset", "scenario", "design", "samples", "trials", "seed")

#: A path into the scenario's file form, one part per level (``("components", "Faulty GPU", "rate_per_gpu_hour")``).
Path_ = tuple[str, ...]


class StudyError(ValueError):
    """A study file or results file is invalid; ``str(err)`` is one line for the user."""


#: The command that installs what studies need beyond the base install (Sobol designs, Parquet, Dask).
STUDY_EXTRA = "pip install 'planner-gui[study]'"


def missing_package(exc: ImportError) -> str:
    """Which package an import found missing, and how to install it: "the Python package pyarrow, which this
    installation lacks (pip install 'planner-gui[study]' brings it)"."""
    name = (exc.name or "a package").split(".")[0]
    return f"the Python package {name}, which this installation lacks ({STUDY_EXTRA} brings it)"


def show_path(path: Path_) -> str:
    """A path as the user writes it and as the results name its column: parts joined by dots."""
    return ".".join(path)


@dataclass(frozen=True)
class Input:
    """One varied input: a range (``lo`` to ``hi``, linear or log) or a list of levels."""

    path: Path_
    levels: tuple[Any, ...] | None = None
    lo: float = 0.0
    hi: float = 0.0
    log: bool = False
    points: int | None = None
    integer: bool = False

    @property
    def name(self) -> str:
        return show_path(self.path)

    @functools.cached_property
    def numeric(self) -> bool:
        """Whether every value is a number (a range, or levels that are all numbers). (Computed once: it is
        asked for each value of an input that may have a million levels.)"""
        return self.levels is None or all(_is_number(v) for v in self.levels)

    def grid_values(self) -> tuple[Any, ...]:
        """The values a full grid takes: the levels, or ``points`` values spread over the range."""
        if self.levels is not None:
            return self.levels
        assert self.points is not None
        if self.points == 1:
            return (self.value_at(0.0),)
        return tuple(self.value_at(i / (self.points - 1)) for i in range(self.points))  # ends: exactly min, max

    def value_at(self, u: float) -> Any:
        """The value at ``u`` in [0, 1] of the unit interval: a point of the range (ends included), or for
        levels, level ``floor(u * k)`` of ``k`` (each level takes an equal share)."""
        if self.levels is not None:
            k = len(self.levels)
            return self.levels[min(k - 1, max(0, math.floor(u * k)))]
        if u <= 0.0 or u >= 1.0:  # the ends are the range's own min and max, not a rounded power of 10
            v = self.lo if u <= 0.0 else self.hi
        elif self.log:
            v = 10.0 ** (math.log10(self.lo) + u * (math.log10(self.hi) - math.log10(self.lo)))
        else:
            v = self.lo + u * (self.hi - self.lo)
        v = min(self.hi, max(self.lo, v))
        return round(v) if self.integer else v

    def to_dict(self) -> dict[str, Any]:
        if self.levels is not None:
            return {"name": self.name, "path": list(self.path), "levels": list(self.levels)}
        d: dict[str, Any] = {"name": self.name, "path": list(self.path), "min": self.lo, "max": self.hi}
        d |= {"scale": "log" if self.log else "linear", "integer": self.integer}
        if self.points is not None:
            d["points"] = self.points
        return d


@dataclass(frozen=True)
class StudySpec:
    """A study: the base scenario's file form (after ``[set]``), the inputs and the design."""

    name: str
    base: dict[str, Any]
    inputs: tuple[Input, ...]
    design: str = "grid"
    samples: int | None = None
    trials: int = 1000
    seed: int = 0
    text: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Everything that decides the study's scenarios (what its fingerprint covers)."""
        return {
            "name": self.name,
            "design": self.design,
            "samples": self.samples,
            "trials": self.trials,
            "seed": self.seed,
            "inputs": [i.to_dict() for i in self.inputs],
            "base": self.base,
        }


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _where(path: Path_) -> str:
    return clean(show_path(path), 80)


# -- reading ------------------------------------------------------------------------------------------


def read_text(path: str | Path) -> tuple[Path, str]:
    """A study file's path and text (its size and encoding checked; :func:`.files.read_spec` parses and checks it)."""
    try:
        p, data = read_file(path)
    except ScenarioError as exc:
        raise StudyError(str(exc)) from None
    if len(data) > MAX_SPEC_BYTES:
        raise StudyError(f"{clean(str(p), 120)}: file is {len(data):,} bytes; the limit is {MAX_SPEC_BYTES:,}")
    try:
        return p, data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise StudyError(f"{clean(p.name, 80)}: not UTF-8 text (byte {exc.start})") from None


def parse_spec(text: str, folder: Path | None = None, default_name: str = "study") -> StudySpec:
    """Parse a study from TOML text (:func:`.files.loads_spec` also checks its design); ``folder`` resolves a
    relative base scenario file."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"not valid TOML ({clean(str(exc), 160)})") from None
    except RecursionError:
        raise StudyError("not valid TOML (nested too deeply)") from None
    except ValueError as exc:  # (Python refuses to read a whole number of more than 4,300 digits)
        if "digits" not in str(exc):
            raise StudyError(f"not valid TOML ({clean(str(exc), 160)})") from None
        raise StudyError(
            f"a whole number of more than {sys.get_int_max_str_digits():,} digits; no field takes one"
        ) from None
    unknown = [k for k in doc if k not in ("study", "set", "vary")]
    if unknown:
        key = unknown[0]
        if not isinstance(doc[key], dict):  # a key before any table: the study's keys go under [study]
            where = " (it belongs under [study])" if key in _STUDY_KEYS else ""
            raise StudyError(
                f"{clean(key, 40)}: a key outside any table{where}; the file holds [study], [set] and [vary] tables"
            )
        raise StudyError(f"[{clean(key, 40)}]: unknown table (allowed: [study], [set], [vary])")
    study = _table(doc, "study")
    bad = [k for k in study if k not in _STUDY_KEYS]
    if bad:
        raise StudyError(f"study.{clean(bad[0], 40)}: unknown key (allowed: {', '.join(_STUDY_KEYS)})")
    base_doc = _base(study, folder)
    set_paths = []
    for path, value in _flatten_set(_table(doc, "set")):
        _set(base_doc, path, value, "set")
        set_paths.append(path)
    base_doc["format_version"] = FORMAT_VERSION
    try:
        base_sc = scenario_from_dict(base_doc)
    except ScenarioError as exc:
        raise StudyError(f"base scenario after [set]: {exc}") from None
    design = study.get("design", "grid")
    if design not in DESIGNS:
        raise StudyError(f"study.design: must be one of {', '.join(DESIGNS)} (got {_show(design)})")
    trials = _whole(study, "trials", base_sc.trials, 1, 100_000)
    seed = _whole(study, "seed", base_sc.seed, 0, 2**63 - 1)
    name = study.get("name", default_name)
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise StudyError(f"study.name: must be a non-empty text of at most 200 characters (got {_show(name)})")
    base_doc = scenario_to_dict(base_sc)
    base_doc["format_version"] = FORMAT_VERSION
    vary = _table(doc, "vary")
    if not vary:
        raise StudyError("[vary]: name at least one input to vary, e.g. gpus = [16384, 100000]")
    inputs = tuple(_input(path, v, base_doc, design) for path, v in _flatten_vary(vary, ()))
    if len(inputs) > MAX_INPUTS:
        raise StudyError(f"[vary]: at most {MAX_INPUTS} inputs (got {len(inputs)})")
    names = [i.name for i in inputs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise StudyError(f"vary.{clean(dup, 80)}: given more than once")
    # a field of a section may be given under [set] to complete the section that [vary] then varies
    both = next(
        (i.name for i in inputs if i.path in set_paths and (len(i.path) == 1 or i.path[0] == "components")), None
    )
    if both is not None:
        raise StudyError(f"vary.{clean(both, 80)}: also under [set]; give it in one of them")
    for inp in inputs:
        ignored = _SET_BY_SECTION.get(inp.path)
        if ignored is not None and base_doc.get(ignored[0]) is not None:
            raise StudyError(f"vary.{clean(inp.name, 80)}: {ignored[1]}")
    samples = _samples(study, design, len(inputs), inputs)
    return StudySpec(name, base_doc, inputs, design, samples, trials, seed, text)


#: Fields that a section of the scenario sets in their place when it is there: varying one would change nothing.
_SET_BY_SECTION: dict[Path_, tuple[str, str]] = {
    ("checkpoint_write_s",): (
        "storage",
        "the scenario's storage section sets the blocking write (GPUs x checkpoint_gb_per_gpu / storage_gb_s), so "
        "this input would change nothing; vary storage.storage_gb_s or storage.checkpoint_gb_per_gpu instead",
    ),
}


def _table(doc: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise StudyError(f"{key}: must be a table ([{key}])")
    return value


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f"'{clean(value, 40)}'"
    try:
        return clean(json.dumps(value, default=str), 60)
    except (TypeError, ValueError):
        return type(value).__name__


def _whole(study: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    v = study.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise StudyError(f"study.{key}: must be a whole number from {lo:,} to {hi:,} (got {_show(v)})")
    return v


def _base(study: Mapping[str, Any], folder: Path | None) -> dict[str, Any]:
    """The base scenario's file form: ``preset`` or ``scenario`` (a file), or the default preset."""
    if "preset" in study and "scenario" in study:
        raise StudyError("study: give preset or scenario, not both")
    try:
        if "scenario" in study:
            f = study["scenario"]
            if not isinstance(f, str) or not f:
                raise StudyError(f"study.scenario: must be a scenario file name (got {_show(f)})")
            p = Path(f)
            if not p.is_absolute() and folder is not None:
                p = folder / p
            sc = load(p)
        else:
            name = study.get("preset", preset_names()[0])
            if not isinstance(name, str):
                raise StudyError(f"study.preset: must be a preset name (got {_show(name)})")
            sc = load_preset(name)
    except ScenarioError as exc:
        raise StudyError(f"study.{'scenario' if 'scenario' in study else 'preset'}: {exc}") from None
    return scenario_to_dict(sc)


def _samples(study: Mapping[str, Any], design: str, d: int, inputs: tuple[Input, ...]) -> int | None:
    n = study.get("samples")
    if design == "grid":
        if n is not None:
            raise StudyError("study.samples: a grid takes every combination of its values; samples is for lhs or sobol")
        missing = [i.name for i in inputs if i.levels is None and i.points is None]
        if missing:
            raise StudyError(f"vary.{clean(missing[0], 80)}: a grid needs points = N in a range (or a list of values)")
        return None
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SCENARIOS:
        what = (
            "base samples N (a power of 2; the design has N x (inputs + 2) scenarios)"
            if design == "sobol"
            else "scenarios"
        )
        limit = (
            f"at most {1 << int(math.log2(MAX_SCENARIOS // (d + 2))):,} with {d} input{'s' if d != 1 else ''}, as a "
            f"study holds at most {MAX_SCENARIOS:,} scenarios"
            if design == "sobol"
            else f"at most {MAX_SCENARIOS:,}, the most scenarios a study holds"
        )
        got = "none given" if n is None else f"got {_show(n)}"
        raise StudyError(f"study.samples: must be a whole number of {what}, {limit} ({got})")
    if design == "sobol":
        if n < 2 or n & (n - 1):
            raise StudyError(f"study.samples: a Sobol design needs a power of 2 (2, 4, ..., 1024, ...; got {n:,})")
        if d < 2:
            raise StudyError("[vary]: a Sobol design needs at least 2 inputs (indices are shares among inputs)")
        if n * (d + 2) > MAX_SCENARIOS:
            largest = 1 << int(math.log2(MAX_SCENARIOS // (d + 2)))
            raise StudyError(
                f"study.samples: {n:,} base samples x ({d} inputs + 2) = {n * (d + 2):,} scenarios, over the limit of "
                f"{MAX_SCENARIOS:,} scenarios in a study; the most with {d} inputs is samples = {largest:,}"
            )
    with_points = [i.name for i in inputs if i.points is not None]
    if with_points:
        raise StudyError(f"vary.{clean(with_points[0], 80)}: points is for a grid; {design} samples the range")
    return n


# -- paths into the scenario's file form -----------------------------------------------------------------


def _flatten_set(tree: Mapping[str, Any]) -> list[tuple[Path_, Any]]:
    """``[set]`` as (path, value) pairs. A table is a section (its keys are paths below it); a quoted
    dotted key (``"components.Faulty GPU.rate_per_gpu_hour" = 1e-6``) is split on its dots."""
    out: list[tuple[Path_, Any]] = []
    for k, v in tree.items():
        path = _split_key(k) if not isinstance(v, dict) else _split_key(k, table=True)
        if isinstance(v, dict):
            out.extend((path + sub, val) for sub, val in _flatten_set_below(v, path))
        else:
            out.append((path, v))
    return out


def _flatten_set_below(tree: Mapping[str, Any], prefix: Path_) -> list[tuple[Path_, Any]]:
    out: list[tuple[Path_, Any]] = []
    for k, v in tree.items():
        sub = _below(prefix, k, isinstance(v, dict))
        if isinstance(v, dict):
            out.extend((sub + s, val) for s, val in _flatten_set_below(v, prefix + sub))
        else:
            out.append((sub, v))
    return out


def _flatten_vary(tree: Mapping[str, Any], prefix: Path_) -> list[tuple[Path_, Any]]:
    """``[vary]`` as (path, spec) pairs; a table with ``min``/``max``/``scale``/``points`` is a range, any
    other table a section whose keys are paths below it."""
    out: list[tuple[Path_, Any]] = []
    for k, v in tree.items():
        section = isinstance(v, dict) and not any(r in v for r in _RANGE_KEYS)
        path = prefix + _below(prefix, k, section)
        if isinstance(v, dict) and not v:
            raise StudyError(f"vary.{_where(path)}: empty range; give min and max or a list")
        if section:
            out.extend(_flatten_vary(v, path))
        else:
            out.append((path, v))
    return out


def _split_key(key: str, table: bool = False) -> Path_:
    return _below((), key, table)


#: The most parts a path into the scenario may have (the deepest field is ``components.NAME.FIELD``).
MAX_PATH_PARTS = 6


def _below(prefix: Path_, key: str, table: bool) -> Path_:
    """The path parts that ``key`` adds below ``prefix``. A dotted key is split on its dots, except a
    component's name (everything between ``components.`` and the last dot, or the whole key of a table
    under ``components``) and a multiplier's category (the rest of the key)."""
    if len(prefix) >= MAX_PATH_PARTS or (
        key.count(".") >= MAX_PATH_PARTS
        and not (prefix and prefix[0] in ("components", MULTIPLIER))
        and not key.startswith(("components.", f"{MULTIPLIER}."))
    ):
        shown = clean(".".join((*prefix[:3], key))[:60], 60)
        raise StudyError(
            f"{shown}...: nested deeper than any field of a scenario (a path has at most {MAX_PATH_PARTS} parts)"
        )
    if prefix == ("components",):
        if table:
            return (key,)
        name, dot, rest = key.rpartition(".")
        return (name, rest) if dot else (key,)
    if prefix and prefix[0] in ("components", MULTIPLIER):
        return (key,)
    head, dot, rest = key.partition(".")
    if not dot:
        return (key,)
    return (head, *_below((*prefix, head), rest, table))


def _component(doc: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    for c in doc["components"]:
        if c.get("name") == name:
            return c  # type: ignore[no-any-return]
    names = ", ".join(clean(c.get("name", "?"), 30) for c in doc["components"][:6])
    more = ", ..." if len(doc["components"]) > 6 else ""
    raise StudyError(f"{where}: no component named '{clean(name, 40)}' (components: {names}{more})")


def _categories(doc: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(str(c.get("category")) for c in doc["components"]))


def _set(doc: dict[str, Any], path: Path_, value: Any, table: str, *, must_exist: bool = False) -> None:
    """Set ``path`` of a scenario document to ``value`` (a multiplier scales rates instead)."""
    where = f"{table}.{_where(path)}"
    if path[0] == MULTIPLIER:
        _multiply(doc, path, value, where)
        return
    if path[0] == "components":
        if len(path) != 3:
            raise StudyError(
                f"{where}: a component's field is components.NAME.FIELD, e.g. components.Faulty GPU.rate_per_gpu_hour"
            )
        comp = _component(doc, path[1], where)
        comp[path[2]] = value
        return
    node = doc
    for i, part in enumerate(path[:-1]):
        nxt = node.get(part)
        if nxt is None and not must_exist:
            nxt = node[part] = {}
        if not isinstance(nxt, dict):
            if nxt is None:
                section = show_path(path[: i + 1])
                raise StudyError(
                    f"{where}: the base scenario has no '{clean(section, 40)}' section; add it under [set] "
                    "or in the base scenario"
                )
            raise StudyError(f"{where}: '{clean(show_path(path[: i + 1]), 40)}' is not a section of the scenario")
        node = nxt
    node[path[-1]] = value


def _multiply(doc: dict[str, Any], path: Path_, value: Any, where: str) -> None:
    if len(path) > 2:
        raise StudyError(f"{where}: a multiplier is 'multiplier' (every component) or 'multiplier.CATEGORY'")
    if not _is_number(value) or value < 0:
        raise StudyError(f"{where}: a rate multiplier must be a number, 0 or more (got {_show(value)})")
    cats = _categories(doc)
    if len(path) == 2 and path[1] not in cats:
        raise StudyError(
            f"{where}: no component of category '{clean(path[1], 40)}' (categories: {clean(', '.join(cats), 160)})"
        )
    for c in doc["components"]:
        if len(path) == 1 or c.get("category") == path[1]:
            rate = c["rate_per_gpu_hour"]
            c["rate_per_gpu_hour"] = rate * value if _is_number(rate) else rate


def apply_values(base: dict[str, Any], inputs: tuple[Input, ...], values: tuple[Any, ...]) -> dict[str, Any]:
    """The base document with each input set to its value (fields first, then multipliers)."""
    doc: dict[str, Any] = json.loads(json.dumps(base))
    pairs = sorted(zip(inputs, values), key=lambda iv: iv[0].path[0] == MULTIPLIER)
    for inp, v in pairs:
        _set(doc, inp.path, v, "vary", must_exist=True)
    # A node life's shape varied alone keeps the component's rate, as everywhere else (the tornado, the flags): the
    # scale the base wrote for its own shape goes, and the rate gives the scale at each shape.
    paths = {inp.path for inp in inputs}
    for name, life in (doc.get("weibull") or {}).items():
        shape_alone = ("weibull", name, "shape") in paths and ("weibull", name, "scale_hours") not in paths
        if shape_alone and isinstance(life, dict):
            life.pop("scale_hours", None)
    return doc


def _base_value(doc: dict[str, Any], path: Path_) -> Any:
    """The base's value at ``path`` (None where the base leaves an optional field out), or 1.0 for a
    multiplier; a section or component that is not there is an error. A field the scenario does not have
    is refused by the scenario's own validation (with the keys it allows)."""
    probe = json.loads(json.dumps(doc))
    if path[0] == MULTIPLIER:
        _multiply(probe, path, 1.0, f"vary.{_where(path)}")
        return 1.0
    _set(probe, path, None, "vary", must_exist=True)  # raises when a section or component is not there
    if path[0] == "components":
        return _component(doc, path[1], "vary").get(path[2])
    node: Any = doc
    for part in path[:-1]:
        node = node[part]
    return node.get(path[-1])


def input_of(key: str, spec: Any, base: dict[str, Any]) -> Input:
    """One input to vary, as a study's ``[vary]`` takes it: ``key`` a scenario field by its dotted path
    (``gpus``, ``spares.spare_nodes``, ``multiplier.GPU``, ...), ``spec`` a list of values or a range
    (``{"min": ..., "max": ..., "scale": "log", "points": ...}``), checked against the scenario file ``base``
    (StudyError in one line)."""
    return _input(_split_key(key), spec, base, "grid")


def _input(path: Path_, spec: Any, base: dict[str, Any], design: str) -> Input:
    where = f"vary.{_where(path)}"
    if path[0] in ("format_version", "name"):
        raise StudyError(f"{where}: cannot be varied (every scenario of a study is named by its index)")
    if path == ("trials",):
        raise StudyError(f"{where}: every scenario of a study runs study.trials trials; set that instead")
    base_value = _base_value(base, path)
    if isinstance(spec, list):
        if not spec:
            raise StudyError(f"{where}: give at least one value")
        if len(spec) > MAX_SCENARIOS:
            raise StudyError(f"{where}: at most {MAX_SCENARIOS:,} values")
        for v in spec:
            if isinstance(v, float) and not math.isfinite(v):
                raise StudyError(f"{where}: values must be finite (got {v})")
        if len({json.dumps(v, sort_keys=True, default=str) for v in spec}) != len(spec):
            raise StudyError(f"{where}: a value appears more than once")
        inp = Input(path, levels=tuple(spec))
    elif isinstance(spec, dict):
        bad = [k for k in spec if k not in _RANGE_KEYS]
        if bad:
            raise StudyError(f"{where}.{clean(bad[0], 30)}: unknown key (a range has min, max, scale, points)")
        if "min" not in spec or "max" not in spec:
            raise StudyError(f"{where}: a range needs min and max")
        lo, hi = spec["min"], spec["max"]
        if not _is_number(lo) or not _is_number(hi) or not lo < hi:
            raise StudyError(f"{where}: a range needs numbers min < max (got min {_show(lo)}, max {_show(hi)})")
        scale = spec.get("scale", "linear")
        if scale not in ("linear", "log"):
            raise StudyError(f"{where}.scale: must be 'linear' or 'log' (got {_show(scale)})")
        if scale == "log" and lo <= 0:
            raise StudyError(f"{where}: a log range needs min > 0 (got {_show(lo)})")
        points = spec.get("points")
        if points is not None and (
            isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= 10_000
        ):
            raise StudyError(
                f"{where}.points: must be a whole number from 2 to 10,000 (got {_show(points)}; one value for every "
                "scenario belongs under [set])"
            )
        integer = isinstance(base_value, int) and not isinstance(base_value, bool)
        if integer and not (float(lo).is_integer() and float(hi).is_integer()):
            raise StudyError(f"{where}: this field takes whole numbers; give whole min and max")
        inp = Input(path, lo=float(lo), hi=float(hi), log=scale == "log", points=points, integer=integer)
        if points is not None and integer:
            distinct = len(set(inp.grid_values()))
            if distinct < points:
                raise StudyError(
                    f"{where}: points = {points:,} of whole numbers from {lo:,.0f} to {hi:,.0f} give only {distinct:,} "
                    f"different values; use points = {distinct:,} or a list"
                )
    else:
        raise StudyError(
            f"{where}: give a list of values, e.g. [1, 5, 30], or a range, e.g. {{ min = 1, max = 30 }} "
            f"(got {_show(spec)}; a value for every scenario belongs under [set])"
        )
    for v in inp.levels if inp.levels is not None else (inp.value_at(0.0), inp.value_at(1.0)):
        doc = apply_values(base, (inp,), (v,))
        try:
            scenario_from_dict(doc)
        except ScenarioError as exc:
            raise StudyError(f"{where}: {_show(v)} gives an invalid scenario: {exc}") from None
    return inp
