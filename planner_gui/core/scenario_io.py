"""Scenario documents: versioned JSON, strict validation, atomic saves, presets.

Every problem with a document raises :class:`ScenarioError` with one line
that names the field and what is allowed, e.g.
``gpus: must be a whole number from 1 to 10,000,000 (got 0)``.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from .engine import MAX_TOTAL_EVENTS
from .model import OPTIMAL, Component, Scenario
from .params import MAX_INTERVAL_MIN, MIN_INTERVAL_MIN

__all__ = [
    "ScenarioError",
    "FORMAT_VERSION",
    "MAX_FILE_BYTES",
    "LIMITS",
    "scenario_to_dict",
    "scenario_from_dict",
    "loads",
    "dumps",
    "load",
    "save",
    "preset_names",
    "load_preset",
    "check_size",
]

FORMAT_VERSION = 1
MAX_FILE_BYTES = 1_000_000
MAX_COMPONENTS = 200

#: (low, high, integer) for each numeric field; bounds are inclusive unless noted in ``_OPEN_LOW``.
LIMITS: dict[str, tuple[float, float, bool]] = {
    "gpus": (1, 10_000_000, True),
    "gpus_per_node": (1, 1024, True),
    "days": (0.01, 3650, False),
    "planned_per_day": (0, 1000, False),
    "checkpoint_interval_min": (MIN_INTERVAL_MIN, MAX_INTERVAL_MIN, False),
    "checkpoint_write_s": (0, 86_400, False),
    "detect_min": (0, 10_080, False),
    "restart_min": (0, 10_080, False),
    "trials": (1, 100_000, True),
    "seed": (0, 2**63 - 1, True),
    "gpu_hour_cost_usd": (0, 10_000, False),
    "rate_per_gpu_hour": (0, 1.0, False),
}
_FIELDS = (
    "format_version",
    "name",
    "gpus",
    "gpus_per_node",
    "days",
    "components",
    "planned_per_day",
    "checkpoint_interval_min",
    "checkpoint_write_s",
    "detect_min",
    "restart_min",
    "trials",
    "seed",
    "gpu_hour_cost_usd",
)
_COMPONENT_FIELDS = ("name", "category", "rate_per_gpu_hour")


class ScenarioError(ValueError):
    """A scenario document or value is invalid; ``str(err)`` is one line for the user."""


def _fmt_bound(v: float) -> str:
    return f"{int(v):,}" if float(v).is_integer() else f"{v:g}"


def check_number(field: str, value: Any) -> float | int:
    """Validate one numeric field against :data:`LIMITS`; return it as int or float."""
    key = field.rsplit(".", 1)[-1]
    lo, hi, integer = LIMITS[key]
    kind = "a whole number" if integer else "a number"
    allowed = f"must be {kind} from {_fmt_bound(lo)} to {_fmt_bound(hi)}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ScenarioError(f"{field}: {allowed} (got {type(value).__name__} {json.dumps(value)[:40]})")
    if isinstance(value, float) and not math.isfinite(value):
        raise ScenarioError(f"{field}: {allowed} (got {value})")
    if integer and isinstance(value, float):
        if not value.is_integer():
            raise ScenarioError(f"{field}: {allowed} (got {value})")
        value = int(value)
    if not lo <= value <= hi:
        raise ScenarioError(f"{field}: {allowed} (got {value:g})" if isinstance(value, float)
                            else f"{field}: {allowed} (got {value})")
    return value


def _check_str(field: str, value: Any, max_len: int = 200) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > max_len:
        raise ScenarioError(f"{field}: must be a non-empty text of at most {max_len} characters")
    return value


def _check_keys(where: str, doc: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = [k for k in doc if k not in allowed]
    if unknown:
        raise ScenarioError(f"{where}{unknown[0]}: unknown key (allowed: {', '.join(allowed)})")
    missing = [k for k in allowed if k not in doc]
    if missing:
        raise ScenarioError(f"{where}{missing[0]}: missing")


def _component(i: int, doc: Any) -> Component:
    where = f"components[{i}]"
    if not isinstance(doc, dict):
        raise ScenarioError(f"{where}: must be an object with keys {', '.join(_COMPONENT_FIELDS)}")
    _check_keys(f"{where}.", doc, _COMPONENT_FIELDS)
    return Component(
        _check_str(f"{where}.name", doc["name"], 100),
        _check_str(f"{where}.category", doc["category"], 100),
        float(check_number(f"{where}.rate_per_gpu_hour", doc["rate_per_gpu_hour"])),
    )


def check_size(scenario: Scenario) -> None:
    """Refuse a scenario whose simulation would be unreasonably large."""
    events = (scenario.failure_rate_per_hour + scenario.planned_per_day / 24.0) * scenario.hours * scenario.trials
    if events > MAX_TOTAL_EVENTS:
        raise ScenarioError(
            f"trials: about {events:.3g} interruptions to simulate, over the limit of {MAX_TOTAL_EVENTS:.3g}; "
            "use fewer trials, days or GPUs"
        )


def scenario_from_dict(doc: Any) -> Scenario:
    """Validate a decoded JSON document and build the :class:`Scenario`."""
    if not isinstance(doc, dict):
        raise ScenarioError("scenario: must be a JSON object")
    _check_keys("", doc, _FIELDS)
    if doc["format_version"] != FORMAT_VERSION or isinstance(doc["format_version"], bool):
        raise ScenarioError(f"format_version: must be {FORMAT_VERSION} (got {json.dumps(doc['format_version'])[:40]})")
    comps = doc["components"]
    if not isinstance(comps, list) or not 1 <= len(comps) <= MAX_COMPONENTS:
        raise ScenarioError(f"components: must be a list of 1 to {MAX_COMPONENTS} components")
    components = tuple(_component(i, c) for i, c in enumerate(comps))
    names = [c.name for c in components]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ScenarioError(f"components: name {dup!r} appears more than once")
    interval = doc["checkpoint_interval_min"]
    if interval != OPTIMAL:
        if isinstance(interval, str):
            raise ScenarioError(f"checkpoint_interval_min: must be 'optimal' or a number of minutes (got {interval!r})")
        interval = float(check_number("checkpoint_interval_min", interval))
    nums = {k: check_number(k, doc[k]) for k in LIMITS if k in doc and k != "checkpoint_interval_min"}
    scenario = Scenario(
        name=_check_str("name", doc["name"]),
        gpus=int(nums["gpus"]),
        gpus_per_node=int(nums["gpus_per_node"]),
        days=float(nums["days"]),
        components=components,
        planned_per_day=float(nums["planned_per_day"]),
        checkpoint_interval_min=interval,
        checkpoint_write_s=float(nums["checkpoint_write_s"]),
        detect_min=float(nums["detect_min"]),
        restart_min=float(nums["restart_min"]),
        trials=int(nums["trials"]),
        seed=int(nums["seed"]),
        gpu_hour_cost_usd=float(nums["gpu_hour_cost_usd"]),
    )
    check_size(scenario)
    return scenario


def validate(scenario: Scenario) -> Scenario:
    """Re-check a scenario built in code (e.g. from command-line overrides)."""
    return scenario_from_dict(scenario_to_dict(scenario))


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    """The JSON document of a scenario (the inverse of :func:`scenario_from_dict`)."""
    return {
        "format_version": FORMAT_VERSION,
        "name": scenario.name,
        "gpus": scenario.gpus,
        "gpus_per_node": scenario.gpus_per_node,
        "days": scenario.days,
        "components": [
            {"name": c.name, "category": c.category, "rate_per_gpu_hour": c.rate_per_gpu_hour}
            for c in scenario.components
        ],
        "planned_per_day": scenario.planned_per_day,
        "checkpoint_interval_min": scenario.checkpoint_interval_min,
        "checkpoint_write_s": scenario.checkpoint_write_s,
        "detect_min": scenario.detect_min,
        "restart_min": scenario.restart_min,
        "trials": scenario.trials,
        "seed": scenario.seed,
        "gpu_hour_cost_usd": scenario.gpu_hour_cost_usd,
    }


def _reject_constant(name: str) -> Any:
    raise ScenarioError(f"scenario: {name} is not allowed in a scenario file (numbers must be finite)")


def loads(data: bytes | str) -> Scenario:
    """Parse and validate a scenario from JSON bytes or text."""
    if isinstance(data, bytes):
        if len(data) > MAX_FILE_BYTES:
            raise ScenarioError(f"scenario: file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ScenarioError(f"scenario: not UTF-8 text (byte {exc.start})") from None
    else:
        text = data
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"scenario: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ScenarioError("scenario: JSON nested too deeply") from None
    return scenario_from_dict(doc)


def dumps(scenario: Scenario) -> str:
    return json.dumps(scenario_to_dict(scenario), indent=2) + "\n"


def load(path: str | os.PathLike[str]) -> Scenario:
    """Read and validate a scenario file; every failure is a one-line :class:`ScenarioError`."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ScenarioError(f"{p.name}: file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
        data = p.read_bytes()
    except ScenarioError:
        raise
    except IsADirectoryError:
        raise ScenarioError(f"{p}: is a directory, not a scenario file") from None
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read ({exc.strerror or exc})") from None
    try:
        return loads(data)
    except ScenarioError as exc:
        raise ScenarioError(f"{p.name}: {exc}") from None


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write text to a temporary file beside ``path``, flush it to disk, then rename it over ``path``."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save(scenario: Scenario, path: str | os.PathLike[str]) -> None:
    """Save a scenario atomically (an interrupted save never leaves a half-written file)."""
    try:
        write_atomic(path, dumps(scenario))
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _preset_dir() -> Any:
    return resources.files("planner_gui.core").joinpath("data/presets")


def preset_names() -> list[str]:
    """Names of the shipped presets, e.g. ``llama3-405b``."""
    return sorted(f.name[:-5] for f in _preset_dir().iterdir() if f.name.endswith(".json"))


def load_preset(name: str) -> Scenario:
    """Load a shipped preset by name."""
    if name not in preset_names():
        raise ScenarioError(f"preset: unknown preset {name!r} (available: {', '.join(preset_names())})")
    return loads(_preset_dir().joinpath(f"{name}.json").read_bytes())
