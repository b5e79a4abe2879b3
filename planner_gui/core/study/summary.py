"""What a study says: the Sobol indices of goodput (Sobol designs) and the best scenarios under constraints."""

from __future__ import annotations

import itertools
import json
import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..fmt import clean, compact
from .sobol import sobol_indices
from .spec import StudyError
from .store import StudyResults

__all__ = [
    "DEFAULT_WHERE",
    "Condition",
    "Heatmap",
    "best_scenarios",
    "default_least",
    "heatmap",
    "parse_condition",
    "study_summary",
]

#: The default constraint: goodput of at least 90 %.
DEFAULT_WHERE = "goodput.mean>=0.9"
_OPS: dict[str, Callable[[Any, Any], Any]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
_CONDITION = re.compile(r"\s*(?P<col>.+?)\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>[^<>=]+?)\s*")


@dataclass(frozen=True)
class Condition:
    column: str
    op: str
    value: float

    def __str__(self) -> str:
        return f"{self.column} {self.op} {self.value:g}"


def parse_condition(text: str, results: StudyResults) -> Condition:
    """``COLUMN>=VALUE`` (or ``<=``, ``>``, ``<``, ``==``) over a numeric column of the results."""
    m = _CONDITION.fullmatch(text)
    if m is None:
        raise StudyError(f"--where: must be COLUMN>=VALUE, e.g. goodput.mean>=0.9 (got '{clean(text, 60)}')")
    col = m.group("col")
    _numeric(results, col, "--where")
    try:
        value = float(m.group("value").replace("_", ""))
    except ValueError:
        raise StudyError(f"--where: '{clean(m.group('value'), 40)}' is not a number") from None
    if not math.isfinite(value):
        raise StudyError(f"--where: the value must be finite (got {value})")
    if col.startswith("goodput") and value > 1:
        raise StudyError(
            f"--where: goodput is a share from 0 to 1 (got {value:g}; for {value:g} %, write {value / 100:g})"
        )
    return Condition(col, m.group("op"), value)


def _numeric(results: StudyResults, column: str, flag: str) -> np.ndarray:
    values = results.numeric(column) if column in results.columns else None
    if values is None:
        numeric = [c for c, k in results.meta["columns"].items() if k != "text"]
        raise StudyError(f"{flag}: no numeric column '{clean(column, 60)}' (columns: {clean(', '.join(numeric), 240)})")
    return values


def default_least(results: StudyResults) -> str:
    """The cost to minimise: the cost to train when the scenarios have one, else the cost of lost GPU-hours."""
    ttt = results.numeric("time_to_train.cost_usd")
    return "time_to_train.cost_usd" if ttt is not None and np.isfinite(ttt).any() else "lost_cost_usd"


def best_scenarios(
    results: StudyResults, where: Sequence[Condition], least: str, top: int
) -> tuple[list[dict[str, Any]], int]:
    """The ``top`` scenarios meeting every condition, least ``least`` first; and how many meet them."""
    cost = _numeric(results, least, "--least")
    ok = np.isfinite(cost)
    if not ok.any():
        why = " (the scenarios have no training section)" if least.startswith("time_to_train") else ""
        raise StudyError(f"--least: '{clean(least, 60)}' is empty in every scenario{why}; choose another column")
    for c in where:
        v = _numeric(results, c.column, "--where")
        ok &= np.isfinite(v) & _OPS[c.op](v, c.value)
    idx = np.flatnonzero(ok)
    idx = idx[np.lexsort((results.columns["index"][idx], cost[idx]))][:top]
    shown = ["index", "seed", *results.inputs]
    shown += [c for c in dict.fromkeys(["goodput.mean", *(c.column for c in where), least]) if c not in shown]
    rows = [{c: _cell(results.columns[c][i]) for c in shown} for i in idx]
    return rows, int(ok.sum())


def _cell(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def study_summary(
    results: StudyResults, where: Sequence[Condition], least: str, top: int, output: str = "goodput.mean"
) -> dict[str, Any]:
    """The summary that ``planner-gui study --summary`` prints (``--json``: this object)."""
    g = results.numeric(output)
    assert g is not None
    finite = g[np.isfinite(g)]
    sobol: dict[str, Any] | None = None
    note = None
    try:
        sobol = sobol_indices(results, output).to_dict()
    except StudyError as exc:
        note = str(exc)
    rows, meeting = best_scenarios(results, where, least, top)
    return {
        "study": results.name,
        "design": results.design,
        "scenarios": results.total,
        "done": results.rows,
        "trials": results.meta["study"]["trials"],
        "inputs": results.inputs,
        "output": output,
        "range": {
            "min": float(finite.min()) if finite.size else None,
            "mean": float(finite.mean()) if finite.size else None,
            "max": float(finite.max()) if finite.size else None,
        },
        "sobol": sobol,
        "sobol_note": note,
        "best": {"where": [str(c) for c in where], "least": least, "meeting": meeting, "scenarios": rows},
    }


#: An input with at most this many distinct values gets one heatmap cell per value; more are binned.
MAX_LEVELS = 12
#: Bins of an input with more distinct values (a Latin hypercube or Sobol range).
HEAT_BINS = 10


#: Axis ticks: (position, label).
Ticks = list[tuple[float, str]]


@dataclass(frozen=True)
class Heatmap:
    """The mean of ``output`` over the scenarios in each cell of two inputs' values (NaN: no scenario).

    ``values[j, i]`` is the cell of ``x`` bin ``i`` and ``y`` bin ``j``; ``x_labels``/``y_labels`` name the
    bins (a value, or a bin's range), ``counts`` how many scenarios each cell averages.
    """

    x: str
    y: str
    output: str
    values: np.ndarray
    counts: np.ndarray
    x_labels: list[str]
    y_labels: list[str]
    x_ticks: Ticks
    y_ticks: Ticks


def _label(v: Any) -> str:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return f"{int(v):,}" if abs(int(v)) < 10_000 else compact(float(v)).replace(" ", "")
    if isinstance(v, float):
        return compact(v).replace(" ", "") if abs(v) >= 1e4 else f"{v:.3g}"
    return clean(str(v), 20)


def _bins(results: StudyResults, name: str) -> tuple[np.ndarray, list[str], Ticks]:
    """Each scenario's bin of input ``name``, the bins' labels, and the axis ticks: a value at the middle
    of its cell, or a binned range's edges at the cells' borders."""
    column = results.columns[name]
    numeric = results.numeric(name)
    spec = results.input_spec(name) if name in results.inputs else {}
    if numeric is None:  # text: its levels in the study file's order
        levels = [str(v) if isinstance(v, str) else json_text(v) for v in spec.get("levels", [])]
        levels += sorted(set(column) - set(levels))
        pos = {v: k for k, v in enumerate(levels)}
        labels = [clean(v, 20) for v in levels]
        return np.array([pos[v] for v in column]), labels, [(k + 0.5, t) for k, t in enumerate(labels)]
    distinct = np.unique(numeric[np.isfinite(numeric)])
    if distinct.size <= MAX_LEVELS:
        labels = [_label(v.item()) for v in distinct]
        return np.searchsorted(distinct, numeric), labels, [(k + 0.5, t) for k, t in enumerate(labels)]
    lo, hi = float(distinct[0]), float(distinct[-1])
    log = spec.get("scale") == "log" and lo > 0
    edges = np.geomspace(lo, hi, HEAT_BINS + 1) if log else np.linspace(lo, hi, HEAT_BINS + 1)
    idx = np.clip(np.searchsorted(edges, numeric, side="right") - 1, 0, HEAT_BINS - 1)
    labels = [f"{_label(float(a))}-{_label(float(b))}" for a, b in itertools.pairwise(edges)]
    return idx, labels, [(float(k), _label(float(e))) for k, e in enumerate(edges) if k % 2 == 0]


def json_text(v: Any) -> str:
    return json.dumps(v)


def heatmap(results: StudyResults, x: str, y: str, output: str = "goodput.mean") -> Heatmap:
    """The heatmap of ``output`` over inputs ``x`` and ``y`` (each averaged over the other inputs)."""
    for name in (x, y):
        if name not in results.inputs:
            raise StudyError(f"'{clean(name, 60)}' is not an input of the study (inputs: {', '.join(results.inputs)})")
    out = _numeric(results, output, "output")
    xi, xl, xt = _bins(results, x)
    yi, yl, yt = _bins(results, y)
    ok = np.isfinite(out)
    sums = np.zeros((len(yl), len(xl)))
    counts = np.zeros((len(yl), len(xl)), dtype=np.int64)
    np.add.at(sums, (yi[ok], xi[ok]), out[ok])
    np.add.at(counts, (yi[ok], xi[ok]), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return Heatmap(x, y, output, values, counts, xl, yl, xt, yt)
