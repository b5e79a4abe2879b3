"""Designs: which values each scenario of a study takes, and its seed.

- ``grid``: every combination of the inputs' values (the first input changes slowest).
- ``lhs``: ``samples`` points of a Latin hypercube over the inputs' unit cube (scipy.stats.qmc).
- ``sobol``: Saltelli's design for Sobol indices (SALib), ``samples x (inputs + 2)`` points.

A point ``u`` of the unit cube becomes values by :meth:`.spec.Input.value_at` (a log range is uniform in
its logarithm; a list of levels gives each level an equal share). Every scenario's seed comes from the
study's seed and the scenario's index alone (:func:`scenario_seed`), so a scenario gives the same numbers
whichever process or machine runs it, and run alone with ``planner-gui run``.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
from typing import Any

import numpy as np

from ..files.scenario_io import ScenarioError
from ..util.fmt import clean
from .spec import MAX_SCENARIOS, StudyError, StudySpec, apply_values, missing_package
from .worker import check_scenario

__all__ = [
    "VALIDATE_ALL_UP_TO",
    "check_design",
    "corners",
    "design_size",
    "scenario_doc",
    "scenario_seed",
    "unit_points",
    "values_of",
]

#: Studies up to this size have every scenario validated before any runs; larger ones a sample of them
#: (the rest are validated where they run, and a bad one stops the study with its index).
VALIDATE_ALL_UP_TO = 20_000


def design_size(spec: StudySpec) -> int:
    """The number of scenarios of the study."""
    if spec.design == "grid":
        return math.prod(len(i.grid_values()) for i in spec.inputs)
    assert spec.samples is not None
    if spec.design == "sobol":
        return spec.samples * (len(spec.inputs) + 2)
    return spec.samples


def scenario_seed(study_seed: int, index: int) -> int:
    """The seed of scenario ``index``: 63 bits from numpy's SeedSequence of (study seed, index)."""
    a, b = np.random.SeedSequence([study_seed, index]).generate_state(2, dtype=np.uint32)
    return int((int(a) << 31) ^ int(b)) & (2**63 - 1)


@functools.lru_cache(maxsize=4)
def _unit_cache(design: str, samples: int, d: int, seed: int) -> np.ndarray:
    if design == "lhs":
        from scipy.stats import qmc

        gen = np.random.default_rng(seed)
        params = inspect.signature(qmc.LatinHypercube).parameters
        engine = qmc.LatinHypercube(d, **({"rng": gen} if "rng" in params else {"seed": gen}))
        pts: np.ndarray = engine.random(samples)
        return pts
    from SALib.sample import sobol as saltelli

    problem = {"num_vars": d, "names": [f"x{i}" for i in range(d)], "bounds": [[0.0, 1.0]] * d}
    sobol_pts: np.ndarray = saltelli.sample(problem, samples, calc_second_order=False, seed=seed)
    return sobol_pts


def unit_points(spec: StudySpec) -> np.ndarray:
    """The design's points in the unit cube, one row per scenario (lhs and sobol designs)."""
    assert spec.design in ("lhs", "sobol") and spec.samples is not None
    try:
        return _unit_cache(spec.design, spec.samples, len(spec.inputs), spec.seed)
    except ImportError as exc:
        raise StudyError(f"study.design: the {spec.design} design needs {missing_package(exc)}") from None


def values_of(spec: StudySpec, index: int) -> tuple[Any, ...]:
    """The inputs' values in scenario ``index``."""
    if spec.design == "grid":
        levels = [i.grid_values() for i in spec.inputs]
        out = []
        for lv in reversed(levels):
            index, k = divmod(index, len(lv))
            out.append(lv[k])
        return tuple(reversed(out))
    u = unit_points(spec)[index]
    return tuple(inp.value_at(float(x)) for inp, x in zip(spec.inputs, u))


def scenario_doc(spec: StudySpec, index: int, values: tuple[Any, ...] | None = None) -> dict[str, Any]:
    """The scenario file of scenario ``index``: the base with the inputs' values, the study's trials, and
    the scenario's own seed (unless the study varies the seed)."""
    if values is None:
        values = values_of(spec, index)
    doc = apply_values(spec.base, spec.inputs, values)
    doc["trials"] = spec.trials
    if not any(i.path == ("seed",) for i in spec.inputs):
        doc["seed"] = scenario_seed(spec.seed, index)
    doc["name"] = f"{clean(spec.name, 150)} #{index}"
    return doc


def check_design(spec: StudySpec) -> None:
    """Refuse a study that is too large or holds an invalid scenario (one line naming its index)."""
    total = design_size(spec)
    if total > MAX_SCENARIOS:
        raise StudyError(f"the design has {total:,} scenarios, over the limit of {MAX_SCENARIOS:,}; vary fewer values")
    if total == 0:
        raise StudyError("the design has no scenarios")
    indices: Any = range(total)
    if total > VALIDATE_ALL_UP_TO:
        rng = np.random.default_rng(0)
        sample = rng.choice(total, VALIDATE_ALL_UP_TO, replace=False).tolist()
        indices = sorted({0, total - 1, *corners(spec), *sample})
    for index in indices:
        values = values_of(spec, index)
        try:
            check_scenario(scenario_doc(spec, index, values))
        except ScenarioError as exc:
            shown = ", ".join(f"{i.name}={_short(v)}" for i, v in itertools.islice(zip(spec.inputs, values), 6))
            more = ", ..." if len(spec.inputs) > 6 else ""
            raise StudyError(f"scenario {index:,} ({clean(shown, 200)}{more}) cannot run: {exc}") from None


#: Inputs whose every combination of extremes is a corner checked (beyond: each input's extremes alone, and
#: all inputs high or low together).
CORNER_INPUTS = 8


def _patterns(d: int) -> np.ndarray:
    """Sign patterns of the corners: every one for a few inputs, else all high, all low and each input's
    extremes with the others high or low."""
    if d <= CORNER_INPUTS:
        return np.array(list(itertools.product((-1.0, 1.0), repeat=d)))
    rows = [np.ones(d), -np.ones(d)]
    for j in range(d):
        for base in (1.0, -1.0):
            r = np.full(d, base)
            r[j] = -base
            rows.append(r)
    return np.array(rows)


def corners(spec: StudySpec) -> list[int]:
    """The scenarios of the design nearest each corner of its inputs' ranges (where a scenario is largest or
    smallest, for inputs that make it so), so that a large design, checked on a sample, has its extremes
    checked too."""
    d = len(spec.inputs)
    pats = _patterns(d)
    if spec.design == "grid":
        sizes = [len(i.grid_values()) for i in spec.inputs]
        out = []
        for pat in pats:
            index = 0
            for k, (n, sign) in enumerate(zip(sizes, pat)):
                inp = spec.inputs[k]
                vals = inp.grid_values()
                if inp.numeric:
                    order = sorted(range(n), key=lambda m: vals[m])
                    pick = order[-1] if sign > 0 else order[0]
                else:
                    pick = n - 1 if sign > 0 else 0
                index = index * n + pick
            out.append(index)
        return sorted(set(out))
    u = unit_points(spec)
    best = np.full(len(pats), -np.inf)
    where = np.zeros(len(pats), dtype=np.int64)
    centred = pats.T  # (d, patterns)
    for start in range(0, len(u), 65_536):
        score = (u[start : start + 65_536] - 0.5) @ centred
        k = score.argmax(axis=0)
        top = score[k, np.arange(len(pats))]
        better = top > best
        best[better] = top[better]
        where[better] = start + k[better]
    return sorted(set(where.tolist()))


def _short(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
