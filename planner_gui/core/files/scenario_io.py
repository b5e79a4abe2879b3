"""Scenario documents: versioned JSON read field by field and written back, atomic saves.

Every problem with a document raises :class:`ScenarioError` with one line that names the field and what is allowed,
e.g. ``gpus: must be a whole number from 1 to 10,000,000 (got 0)``. Each value is checked as it is read by
:mod:`.values`; what a whole scenario may run (its size, its spares and tiers against the job, the storage write) is
checked in :mod:`.checks`, which reading calls. The shipped presets are in :mod:`.presets`, the names of changed
scenarios in :mod:`.names`.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
from pathlib import Path
from typing import Any

from ..model.scenario import (
    CORRELATED_NAME,
    DEFAULT_DEPRECIATION_YEARS,
    MAX_LEVER_PRICE_USD,
    OPTIMAL,
    PLACEMENTS,
    SCOPES,
    Component,
    Scenario,
    Storage,
    Tiers,
    Training,
)
from ..model.spares import RECOVERY_MODES, Spares
from ..model.specs import LIMITS
from ..util.fmt import clean
from ..util.userfiles import FileRefused, bad_path, read_limited, write_atomic
from .checks import ScenarioError, check_size, check_spares, check_storage_write, check_tiers_fit
from .values import (
    WEIBULL_SCALE_HOURS,
    check_flag,
    check_keys,
    check_number,
    check_profile,
    check_text,
    check_weibull,
    describe,
    object_pairs,
    parse_int,
)

__all__ = [
    "FORMAT_VERSION",
    "LIMITS",
    "MAX_FILE_BYTES",
    "ScenarioError",
    "dumps",
    "load",
    "loads",
    "read_file",
    "save",
    "scenario_from_dict",
    "scenario_to_dict",
    "validate",
]

FORMAT_VERSION = 2
#: Versions read. Version 1 is version 2 without its optional parts (the sections ``training``, ``storage``,
#: ``rate_uncertainty``, ``rate_profile``, ``tiers`` and ``spares``, and a component's ``count``, ``exposure_gpu_hours``
#: and ``scope``).
READ_VERSIONS = (1, 2)
MAX_FILE_BYTES = 1_000_000
MAX_COMPONENTS = 200

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
#: A component's optional evidence in a version-2 document: both or neither (absent or null).
_EVIDENCE_FIELDS = ("count", "exposure_gpu_hours")
#: A component's optional failure scope in a version-2 document (absent or null: its default).
_SCOPE_FIELD = "scope"
#: Optional sections of a version-2 document: absent (or null) means off.
_OPTIONAL = (
    "training",
    "storage",
    "rate_uncertainty",
    "rate_profile",
    "new_cluster",
    "tiers",
    "spares",
    "lever_prices",
    "detect_by",
    "restart_per_log2_gpus_min",
    "slow_rate_per_gpu_hour",
    "slow_factor",
    "slow_detect_min",
    "save_fail_p",
    "restore_fail_p",
    "correlated_rate_per_day",
    "correlated_domains",
    "correlated_repair_hours",
    "weibull",
    "nvlink_gpus",
    "rack_spare_trays",
    "rack_move_min",
    "sdc_detect_hours",
    "retained_checkpoints",
    "bad_share",
    "bad_multiplier",
    "diagnosis_p",
    "repair_fail_p",
)
#: The silent-corruption keys (each optional; absent: 0, written only when above 0).
_SDC_KEYS = ("sdc_detect_hours", "retained_checkpoints")
#: The bad-node keys (each optional; absent: the default) and their defaults: written, all four, when one differs
#: from its default.
_BAD_DEFAULTS: dict[str, float] = {
    f.name: float(f.default)  # type: ignore[arg-type]
    for f in dataclasses.fields(Scenario)
    if f.name in ("bad_share", "bad_multiplier", "diagnosis_p", "repair_fail_p")
}
#: The rack keys (each optional; absent: 0, written only when above 0).
_RACK_KEYS = ("nvlink_gpus", "rack_spare_trays", "rack_move_min")
#: The failing-checkpoint keys (each optional; absent: 0, written only when above 0).
_FAIL_KEYS = ("save_fail_p", "restore_fail_p")
#: The fail-slow keys (each optional; absent: the default) and their defaults.
_SLOW_DEFAULTS: dict[str, float] = {
    f.name: float(f.default)  # type: ignore[arg-type]
    for f in dataclasses.fields(Scenario)
    if f.name.startswith("slow_")
}
#: The correlated-failure keys (each optional; absent: the default) and their defaults: written, all three, when
#: one differs from its default.
_CORRELATED_DEFAULTS: dict[str, float] = {
    f.name: f.default  # type: ignore[misc]
    for f in dataclasses.fields(Scenario)
    if f.name.startswith("correlated_")
}
#: The most levers a scenario may price (the most a lever may cost: model.MAX_LEVER_PRICE_USD).
MAX_LEVER_PRICES = 200
#: The ``tiers`` section: the recovery strategy (the persistent tier's interval and blocking stall are
#: ``checkpoint_interval_min`` and ``checkpoint_write_s``). Every key is required.
_TIERS_FIELDS = (
    "fast_enabled",
    "fast_interval_min",
    "fast_stall_s",
    "fast_restore_min",
    "fast_replicas",
    "fast_placement",
    "nodes_per_domain",
    "persistent_upload_min",
    "persistent_restore_min",
)
#: The ``spares`` section: spare nodes, repairs and the recovery mode (docs/spares.md). Every key is required;
#: ``spare_nodes`` null is unlimited, ``repair_sigma`` null exponential repairs, ``min_gpus`` null no shrinking,
#: ``repair_hours`` an object of mean repair hours by category (categories left out keep their defaults).
_SPARES_FIELDS = (
    "spare_nodes",
    "swap_min",
    "repair_hours",
    "repair_sigma",
    "min_gpus",
    "recovery_mode",
    "replica_gpus",
    "continue_stall_min",
    "max_replicas_lost",
)
#: The spares section's optional prices of the pool (docs/spares.md, "The pool's cost"): written only when set.
_SPARES_PRICE_FIELDS = ("node_price_usd", "depreciation_years", "rental_usd_per_node_hour")
_TRAINING_FIELDS = ("train_flops", "peak_tflops", "mfu", "compute_gpu_hours")
_STORAGE_FIELDS = ("checkpoint_gb_per_gpu", "storage_gb_s")


def _component(i: int, doc: Any, version: int) -> Component:
    where = f"components[{i}]"
    if not isinstance(doc, dict):
        raise ScenarioError(f"{where}: must be an object with keys {', '.join(_COMPONENT_FIELDS)}")
    check_keys(f"{where}.", doc, _COMPONENT_FIELDS, (*_EVIDENCE_FIELDS, _SCOPE_FIELD) if version >= 2 else ())
    count, exposure = (doc.get(k) for k in _EVIDENCE_FIELDS)
    scope = doc.get(_SCOPE_FIELD)
    if scope is not None and scope not in SCOPES:
        raise ScenarioError(f"{where}.scope: must be one of {', '.join(SCOPES)} or null (got {describe(scope)})")
    if (count is None) != (exposure is None):
        raise ScenarioError(
            f"{where}: give both count and exposure_gpu_hours (the evidence behind the rate), or neither"
        )
    return Component(
        check_text(f"{where}.name", doc["name"], 100),
        check_text(f"{where}.category", doc["category"], 100),
        float(check_number(f"{where}.rate_per_gpu_hour", doc["rate_per_gpu_hour"])),
        None if count is None else check_number(f"{where}.count", count),
        None if exposure is None else float(check_number(f"{where}.exposure_gpu_hours", exposure)),
        scope,
    )


def scenario_from_dict(doc: Any) -> Scenario:
    """Validate a decoded JSON document and build the :class:`Scenario`."""
    if not isinstance(doc, dict):
        raise ScenarioError("scenario: must be a JSON object")
    version = doc.get("format_version")
    if isinstance(version, bool) or not isinstance(version, (int, float)) or version not in READ_VERSIONS:
        shown = describe(version) if "format_version" in doc else "nothing"
        raise ScenarioError(f"format_version: must be 1 or {FORMAT_VERSION} (got {shown})")
    if version < 2:
        newer = next((k for k in doc if k in _OPTIONAL), None)
        if newer is not None:
            raise ScenarioError(f"{newer}: needs format_version {FORMAT_VERSION} (this file says {version:g})")
    check_keys("", doc, _FIELDS, _OPTIONAL if version >= 2 else ())
    comps = doc["components"]
    if not isinstance(comps, list) or not 1 <= len(comps) <= MAX_COMPONENTS:
        raise ScenarioError(f"components: must be a list of 1 to {MAX_COMPONENTS} components")
    components = tuple(_component(i, c, int(version)) for i, c in enumerate(comps))
    names = [c.name for c in components]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ScenarioError(f"components: name '{clean(dup, 40)}' appears more than once")
    interval = _interval("checkpoint_interval_min", doc["checkpoint_interval_min"])
    nums = {
        k: check_number(k, doc[k])
        for k in LIMITS
        if k in doc and k != "checkpoint_interval_min" and not (k in _OPTIONAL and doc[k] is None)
    }
    scenario = Scenario(
        name=check_text("name", doc["name"]),
        gpus=int(nums["gpus"]),
        gpus_per_node=int(nums["gpus_per_node"]),
        days=float(nums["days"]),
        components=components,
        planned_per_day=float(nums["planned_per_day"]),
        checkpoint_interval_min=interval,
        checkpoint_write_s=float(nums["checkpoint_write_s"]),
        detect_min=float(nums["detect_min"]),
        restart_min=float(nums["restart_min"]),
        restart_per_log2_gpus_min=float(nums.get("restart_per_log2_gpus_min", 0.0)),
        **{f: _number_or(nums.get(f), default) for f, default in _SLOW_DEFAULTS.items()},
        **{f: _number_or(nums.get(f), 0.0) for f in _FAIL_KEYS},
        correlated_rate_per_day=_number_or(nums.get("correlated_rate_per_day"), 0.0),
        correlated_domains=int(_number_or(nums.get("correlated_domains"), _CORRELATED_DEFAULTS["correlated_domains"])),
        correlated_repair_hours=_number_or(
            nums.get("correlated_repair_hours"), _CORRELATED_DEFAULTS["correlated_repair_hours"]
        ),
        nvlink_gpus=int(_number_or(nums.get("nvlink_gpus"), 0)),
        rack_spare_trays=int(_number_or(nums.get("rack_spare_trays"), 0)),
        rack_move_min=_number_or(nums.get("rack_move_min"), 0.0),
        sdc_detect_hours=_number_or(nums.get("sdc_detect_hours"), 0.0),
        retained_checkpoints=int(_number_or(nums.get("retained_checkpoints"), 0)),
        **{f: _number_or(nums.get(f), default) for f, default in _BAD_DEFAULTS.items()},
        trials=int(nums["trials"]),
        seed=int(nums["seed"]),
        gpu_hour_cost_usd=float(nums["gpu_hour_cost_usd"]),
        training=_training(doc.get("training")),
        storage=_storage(doc.get("storage")),
        rate_uncertainty=check_flag("rate_uncertainty", doc.get("rate_uncertainty")),
        rate_profile=check_profile(doc.get("rate_profile")),
        new_cluster=check_flag("new_cluster", doc.get("new_cluster")),
        tiers=_tiers(doc.get("tiers")),
        spares=_spares(doc.get("spares")),
        lever_prices=_lever_prices(doc.get("lever_prices")),
        detect_by=_detect_by(doc.get("detect_by"), components),
        weibull=(),  # (set below, with the rates it implies)
    )
    lives = check_weibull(doc.get("weibull"), components)
    if lives:
        scenario = scenario.with_weibull(lives)
    check_storage_write(scenario)
    check_tiers_fit(scenario)
    check_spares(scenario)
    check_size(scenario)
    return scenario


def _interval(field: str, value: Any) -> float | str:
    """A checkpoint interval: ``"optimal"``, or minutes within the limits; an error says both are allowed."""
    if value == OPTIMAL:
        return OPTIMAL
    if isinstance(value, str):
        raise ScenarioError(f"{field}: must be 'optimal' or a number of minutes (got '{clean(value, 40)}')")
    return float(check_number(field, value, or_else=f"'{OPTIMAL}'"))


def _detect_by(doc: Any, components: tuple[Component, ...]) -> tuple[tuple[str, float], ...]:
    """The optional ``detect_by``: minutes to notice a failure, by component or category name, as
    {"NCCL Watchdog Timeouts": 15, "GPU": 0.1} (docs/model.md 2.2)."""
    if doc is None:
        return ()
    names = [c.name for c in components]
    known = dict.fromkeys([*names, *(c.category for c in components), CORRELATED_NAME])
    if not isinstance(doc, dict) or len(doc) > len(known):
        raise ScenarioError(
            'detect_by: must be an object of minutes by component or category, as {"NCCL Watchdog Timeouts": 15}'
        )
    dups = getattr(doc, "duplicates", ())
    if dups:
        raise ScenarioError(f"detect_by.{clean(dups[0], 40)}: appears more than once (each key may appear once)")
    lo, hi = LIMITS["detect_min"][:2]
    out = []
    for name, minutes in doc.items():
        key = check_text("detect_by", name, 200)
        if key not in known:
            near = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6) or [
                k for k in known if k.lower() == key.lower()
            ]
            hint = (
                f"did you mean '{clean(near[0], 40)}'?" if near else f"e.g. '{clean(names[0], 40) if names else 'GPU'}'"
            )
            raise ScenarioError(
                f"detect_by.{clean(key, 40)}: no component or category of that name in the scenario ({hint})"
            )
        if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not lo <= minutes <= hi:
            raise ScenarioError(
                f"detect_by.{clean(key, 40)}: must be a number of minutes from {lo:g} to {hi:,g} (got "
                f"{describe(minutes)})"
            )
        out.append((key, float(minutes)))
    return tuple(out)


def _lever_prices(doc: Any) -> tuple[tuple[str, float], ...]:
    """The optional ``lever_prices``: dollars by lever name, as {"detection": 2000000}."""
    if doc is None:
        return ()
    if not isinstance(doc, dict) or len(doc) > MAX_LEVER_PRICES:
        raise ScenarioError(
            f'lever_prices: must be an object of at most {MAX_LEVER_PRICES} dollars by lever, as {{"detection": 2e6}}'
        )
    dups = getattr(doc, "duplicates", ())
    if dups:
        raise ScenarioError(f"lever_prices.{clean(dups[0], 40)}: appears more than once (each key may appear once)")
    out = []
    for name, usd in doc.items():
        lever = check_text("lever_prices", name, 100)
        if isinstance(usd, bool) or not isinstance(usd, (int, float)) or not 0 <= usd <= MAX_LEVER_PRICE_USD:
            raise ScenarioError(
                f"lever_prices.{clean(lever, 40)}: must be a number of dollars from 0 to 1e13 (got {describe(usd)})"
            )
        out.append((lever, float(usd)))
    return tuple(out)


def _training(doc: Any) -> Training | None:
    """The optional ``training`` section: FLOPs, peak and MFU, or GPU-hours of compute (exactly one)."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise ScenarioError(f"training: must be an object with keys {', '.join(_TRAINING_FIELDS)}")
    check_keys("training.", doc, _TRAINING_FIELDS)
    flops, hours = (
        None if doc[k] is None else float(check_number(f"training.{k}", doc[k]))
        for k in ("train_flops", "compute_gpu_hours")
    )
    if (flops is None) == (hours is None):
        raise ScenarioError("training: give exactly one of train_flops and compute_gpu_hours (the other null)")
    peak, mfu = (float(check_number(f"training.{k}", doc[k])) for k in ("peak_tflops", "mfu"))
    return Training(flops, peak, mfu, hours)


def _storage(doc: Any) -> Storage | None:
    """The optional ``storage`` section: checkpoint size per GPU and storage bandwidth (both numbers)."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise ScenarioError(f"storage: must be an object with keys {', '.join(_STORAGE_FIELDS)}")
    check_keys("storage.", doc, _STORAGE_FIELDS)
    size, speed = (float(check_number(f"storage.{k}", doc[k])) for k in _STORAGE_FIELDS)
    return Storage(size, speed)


def _tiers(doc: Any) -> Tiers | None:
    """The optional ``tiers`` section: the fast (in-memory) tier, the failure domains, and the persistent
    tier's background upload and restore."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise ScenarioError(f"tiers: must be an object with keys {', '.join(_TIERS_FIELDS)}")
    check_keys("tiers.", doc, _TIERS_FIELDS)
    enabled = doc["fast_enabled"]
    if not isinstance(enabled, bool):
        raise ScenarioError(f"tiers.fast_enabled: must be true or false (got {describe(enabled)})")
    interval = _interval("tiers.fast_interval_min", doc["fast_interval_min"])
    placement = doc["fast_placement"]
    if placement not in PLACEMENTS:
        raise ScenarioError(f"tiers.fast_placement: must be one of {', '.join(PLACEMENTS)} (got {describe(placement)})")
    nums = {k: check_number(f"tiers.{k}", doc[k]) for k in _TIERS_FIELDS if k in LIMITS and k != "fast_interval_min"}
    return Tiers(
        fast_enabled=enabled,
        fast_interval_min=interval,
        fast_stall_s=float(nums["fast_stall_s"]),
        fast_restore_min=float(nums["fast_restore_min"]),
        fast_replicas=int(nums["fast_replicas"]),
        fast_placement=placement,
        nodes_per_domain=int(nums["nodes_per_domain"]),
        persistent_upload_min=float(nums["persistent_upload_min"]),
        persistent_restore_min=float(nums["persistent_restore_min"]),
    )


def _spares(doc: Any) -> Spares | None:
    """The optional ``spares`` section: spare nodes, swap time, repair times, shrinking and the recovery mode."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise ScenarioError(f"spares: must be an object with keys {', '.join(_SPARES_FIELDS)}")
    check_keys("spares.", doc, _SPARES_FIELDS, _SPARES_PRICE_FIELDS)
    mode = doc["recovery_mode"]
    if mode not in RECOVERY_MODES:
        raise ScenarioError(f"spares.recovery_mode: must be one of {', '.join(RECOVERY_MODES)} (got {describe(mode)})")
    repairs = doc["repair_hours"]
    if not isinstance(repairs, dict):
        raise ScenarioError(
            f'spares.repair_hours: must be an object of hours by category, as {{"GPU": 48}} (got {describe(repairs)})'
        )
    dups = getattr(repairs, "duplicates", ())
    if dups:
        raise ScenarioError(
            f"spares.repair_hours.{clean(dups[0], 40)}: appears more than once (each key may appear once)"
        )
    hours = tuple((check_text("spares.repair_hours", cat, 100), _repair_hours(cat, v)) for cat, v in repairs.items())
    nullable = {
        k: None if doc[k] is None else check_number(f"spares.{k}", doc[k])
        for k in ("spare_nodes", "repair_sigma", "min_gpus")
    }
    nums = {k: check_number(f"spares.{k}", doc[k]) for k in ("swap_min", "replica_gpus", "continue_stall_min")}
    nums["max_replicas_lost"] = check_number("spares.max_replicas_lost", doc["max_replicas_lost"])
    return Spares(
        spare_nodes=None if nullable["spare_nodes"] is None else int(nullable["spare_nodes"]),
        swap_min=float(nums["swap_min"]),
        repair_hours=hours,
        repair_sigma=None if nullable["repair_sigma"] is None else float(nullable["repair_sigma"]),
        min_gpus=None if nullable["min_gpus"] is None else int(nullable["min_gpus"]),
        recovery_mode=mode,
        replica_gpus=int(nums["replica_gpus"]),
        continue_stall_min=float(nums["continue_stall_min"]),
        max_replicas_lost=int(nums["max_replicas_lost"]),
        **_spares_prices(doc),
    )


def _spares_prices(doc: dict[str, Any]) -> dict[str, Any]:
    """The spares section's optional prices of the pool (null or left out: none)."""
    out: dict[str, Any] = {}
    for k in _SPARES_PRICE_FIELDS:
        v = doc.get(k)
        if v is None:
            continue
        out[k] = float(check_number(f"spares.{k}", v))
    return out


def _repair_hours(category: str, value: Any) -> float:
    """One category's mean repair hours, checked against the ``repair_hours`` spec; errors name the category."""
    try:
        return float(check_number("repair_hours", value))
    except ScenarioError as exc:
        raise ScenarioError(
            f"spares.repair_hours.{clean(category, 40)}{str(exc).removeprefix('repair_hours')}"
        ) from None


def validate(scenario: Scenario) -> Scenario:
    """Re-check a scenario built in code (e.g. from command-line overrides)."""
    return scenario_from_dict(scenario_to_dict(scenario))


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    """The JSON document of a scenario (the inverse of :func:`scenario_from_dict`).

    A scenario without optional parts is written as version 1, which every release reads.
    """
    doc = {
        "format_version": FORMAT_VERSION if _has_optional_parts(scenario) else 1,
        "name": scenario.name,
        "gpus": scenario.gpus,
        "gpus_per_node": scenario.gpus_per_node,
        "days": scenario.days,
        "components": [_component_dict(c) for c in scenario.components],
        "planned_per_day": scenario.planned_per_day,
        "checkpoint_interval_min": scenario.checkpoint_interval_min,
        "checkpoint_write_s": scenario.checkpoint_write_s,
        "detect_min": scenario.detect_min,
        "restart_min": scenario.restart_min,
        "trials": scenario.trials,
        "seed": scenario.seed,
        "gpu_hour_cost_usd": scenario.gpu_hour_cost_usd,
    }
    if scenario.training is not None:
        t = scenario.training
        doc["training"] = {
            "train_flops": t.train_flops,
            "peak_tflops": t.peak_tflops,
            "mfu": t.mfu,
            "compute_gpu_hours": t.compute_gpu_hours,
        }
    if scenario.storage is not None:
        doc["storage"] = {
            "checkpoint_gb_per_gpu": scenario.storage.checkpoint_gb_per_gpu,
            "storage_gb_s": scenario.storage.storage_gb_s,
        }
    if scenario.rate_uncertainty:
        doc["rate_uncertainty"] = True
    if scenario.rate_profile is not None:
        doc["rate_profile"] = [[day, m] for day, m in scenario.rate_profile]
    if scenario.new_cluster:
        doc["new_cluster"] = True
    if scenario.tiers is not None:
        tiers = scenario.tiers
        doc["tiers"] = {k: getattr(tiers, k) for k in _TIERS_FIELDS}
    if scenario.spares is not None:
        sp = scenario.spares
        section = {k: dict(sp.repair_hours) if k == "repair_hours" else getattr(sp, k) for k in _SPARES_FIELDS}
        if sp.priced or sp.depreciation_years != DEFAULT_DEPRECIATION_YEARS:
            section |= {k: getattr(sp, k) for k in _SPARES_PRICE_FIELDS}
        doc["spares"] = section
    if scenario.lever_prices:
        doc["lever_prices"] = dict(scenario.lever_prices)
    if scenario.detect_by:
        doc["detect_by"] = dict(scenario.detect_by)
    if scenario.weibull:
        doc["weibull"] = _weibull_dict(scenario)
    if scenario.restart_per_log2_gpus_min:
        doc["restart_per_log2_gpus_min"] = scenario.restart_per_log2_gpus_min
    if _slow_changed(scenario):
        doc |= {f: getattr(scenario, f) for f in _SLOW_DEFAULTS}
    doc |= {f: getattr(scenario, f) for f in _FAIL_KEYS if getattr(scenario, f)}
    if _correlated_changed(scenario):
        doc |= {f: getattr(scenario, f) for f in _CORRELATED_DEFAULTS}
    doc |= {f: getattr(scenario, f) for f in _RACK_KEYS if getattr(scenario, f)}
    doc |= {f: getattr(scenario, f) for f in _SDC_KEYS if getattr(scenario, f)}
    if _bad_changed(scenario):
        doc |= {f: getattr(scenario, f) for f in _BAD_DEFAULTS}
    return doc


def _weibull_dict(scenario: Scenario) -> dict[str, dict[str, float]]:
    """The ``weibull`` key of a scenario: each entry's shape and, where its rate gives one, its scale."""
    comps = {c.name: c for c in scenario.components}
    out = {}
    for name, shape in scenario.weibull:
        if name not in comps:  # (a component since removed: its life goes with it)
            continue
        life = {"shape": shape}
        # The scale the rate gives, to 12 digits (what was typed reads back as typed); one the rate puts out of the
        # range a file may give is left out (the rate gives it again).
        scale = float(f"{scenario.weibull_scale_hours(comps[name]):.12g}")
        if WEIBULL_SCALE_HOURS[0] <= scale <= WEIBULL_SCALE_HOURS[1]:
            life["scale_hours"] = scale
        out[name] = life
    return out


def _number_or(value: float | int | None, default: float) -> float:
    """An optional key's number, or its default when absent."""
    return default if value is None else float(value)


def _slow_changed(scenario: Scenario) -> bool:
    """Whether a fail-slow input differs from its default (then all three are written)."""
    return any(getattr(scenario, f) != default for f, default in _SLOW_DEFAULTS.items())


def _bad_changed(scenario: Scenario) -> bool:
    """Whether a bad-node input differs from its default (then all four are written)."""
    return any(getattr(scenario, f) != d for f, d in _BAD_DEFAULTS.items())


def _correlated_changed(scenario: Scenario) -> bool:
    """Whether a correlated-failure input differs from its default (then all three are written)."""
    return any(getattr(scenario, f) != default for f, default in _CORRELATED_DEFAULTS.items())


def _has_optional_parts(scenario: Scenario) -> bool:
    """Whether the scenario needs format version 2: an optional section, or a component's evidence."""
    sections = (scenario.training, scenario.storage, scenario.rate_profile, scenario.tiers, scenario.spares)
    evidence = any(c.count is not None or c.scope is not None for c in scenario.components)
    return (
        any(x is not None for x in sections)
        or scenario.rate_uncertainty
        or scenario.new_cluster
        or evidence
        or bool(scenario.lever_prices)
        or bool(scenario.detect_by)
        or bool(scenario.weibull)
        or scenario.restart_per_log2_gpus_min != 0.0
        or _slow_changed(scenario)
        or any(getattr(scenario, f) for f in _FAIL_KEYS)
        or _correlated_changed(scenario)
        or any(getattr(scenario, f) for f in _RACK_KEYS)
        or any(getattr(scenario, f) for f in _SDC_KEYS)
        or _bad_changed(scenario)
    )


def _component_dict(c: Component) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": c.name, "category": c.category, "rate_per_gpu_hour": c.rate_per_gpu_hour}
    if c.count is not None and c.exposure_gpu_hours is not None:
        doc["count"], doc["exposure_gpu_hours"] = c.count, c.exposure_gpu_hours
    if c.scope is not None:
        doc["scope"] = c.scope
    return doc


def _reject_constant(name: str) -> Any:
    raise ScenarioError(f"scenario: {name} is not allowed in a scenario file (numbers must be finite)")


def loads(data: bytes | str) -> Scenario:
    """Parse and validate a scenario from JSON bytes or text.

    Every problem, whatever the input, raises a one-line :class:`ScenarioError`.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        if len(data) > MAX_FILE_BYTES:
            raise ScenarioError(f"scenario: file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}")
        try:
            text = data.decode("utf-8-sig")  # a byte-order mark (Windows editors write one) is fine
        except UnicodeDecodeError as exc:
            raise ScenarioError(f"scenario: not UTF-8 text (byte {exc.start})") from None
    elif isinstance(data, str):
        text = data.removeprefix("\ufeff")
        if len(text) > MAX_FILE_BYTES:
            raise ScenarioError(f"scenario: text is {len(text):,} characters; the limit is {MAX_FILE_BYTES:,}")
    else:
        raise ScenarioError(f"scenario: must be JSON text or bytes (got {type(data).__name__})")
    try:
        doc = json.loads(text, parse_constant=_reject_constant, parse_int=parse_int, object_pairs_hook=object_pairs)
        return scenario_from_dict(doc)
    except ScenarioError as exc:
        raise ScenarioError(clean(str(exc), 400)) from None
    except json.JSONDecodeError as exc:
        msg = exc.msg.removesuffix(" at")  # "Unterminated string starting at": the position follows
        raise ScenarioError(f"scenario: not valid JSON ({msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ScenarioError("scenario: JSON nested too deeply") from None
    except MemoryError:
        raise ScenarioError("scenario: too large to read into memory") from None
    except Exception as exc:
        raise ScenarioError(f"scenario: cannot be read ({clean(f'{type(exc).__name__}: {exc}', 120)})") from None


def dumps(scenario: Scenario) -> str:
    return json.dumps(scenario_to_dict(scenario), indent=2) + "\n"


def _show_path(path: Any) -> str:
    """A path for a one-line message."""
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return "scenario"
    return clean(text, 120) if text else "''"


def read_file(path: str | os.PathLike[str]) -> tuple[Path, bytes]:
    """The path and bytes of a regular file of at most ``MAX_FILE_BYTES`` (never blocks on a FIFO or a
    device); every failure is a one-line :class:`ScenarioError` naming the file."""
    why = bad_path(path)
    if why is not None:
        raise ScenarioError(f"{_show_path(path)}: cannot read ({why})")
    p = Path(os.fsdecode(os.fspath(path)))
    try:
        return p, read_limited(p, MAX_FILE_BYTES)
    except FileRefused as exc:
        raise ScenarioError(f"{clean(str(p), 120)}: {exc}") from None
    except OSError as exc:
        raise ScenarioError(f"{clean(str(p), 120)}: cannot read ({clean(exc.strerror or str(exc), 120)})") from None
    except (ValueError, MemoryError) as exc:
        raise ScenarioError(f"{clean(str(p), 120)}: cannot read ({clean(str(exc), 120)})") from None


def load(path: str | os.PathLike[str]) -> Scenario:
    """Read and validate a scenario file; every failure is a one-line :class:`ScenarioError`.

    Only regular files are read (a FIFO, a device or a directory is refused without blocking), and at
    most ``MAX_FILE_BYTES`` of them.
    """
    p, data = read_file(path)
    try:
        return loads(data)
    except ScenarioError as exc:
        raise ScenarioError(f"{clean(p.name, 80)}: {exc}") from None


def save(scenario: Scenario, path: str | os.PathLike[str]) -> None:
    """Save a scenario atomically (an interrupted save never leaves a half-written file). A scenario the
    loader would refuse (e.g. spares with a fast tier, built in the window) is not written: ScenarioError
    says why, so a file once saved always opens again."""
    text = dumps(validate(scenario))
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise ScenarioError(f"{_show_path(path)}: cannot write ({clean(exc.strerror or str(exc), 160)})") from None
