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

from ..util.fmt import clean, compact
from ..util.fmt import count as _count
from .sobol import sobol_indices
from .spec import Input, StudyError
from .store import StudyResults, Texts

__all__ = [
    "DEFAULT_WHERE",
    "NO_INPUT",
    "Condition",
    "Heatmap",
    "best_scenarios",
    "cells",
    "default_least",
    "drawable_outputs",
    "first_axes",
    "heatmap",
    "parse_condition",
    "prepare",
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
    "!=": operator.ne,
}
_CONDITION = re.compile(r"\s*(?P<col>.+?)\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<value>[^<>=!]+?)\s*")


@dataclass(frozen=True)
class Condition:
    column: str
    op: str
    value: float | str  # a string for a text column (``==`` and ``!=`` only)
    #: For ``==`` and ``!=`` on a number: half a unit of the last digit typed (0.9895: 0.00005), so that a value
    #: read off a table, which shows it rounded, matches the value it shows.
    tolerance: float = 0.0

    def __str__(self) -> str:
        value = self.value if isinstance(self.value, str) else f"{self.value:g}"
        return f"{self.column} {self.op} {value}"


def parse_condition(text: str, results: StudyResults) -> Condition:
    """``COLUMN>=VALUE`` (or ``<=``, ``>``, ``<``, ``==``, ``!=``) over a numeric column of the results, or
    ``COLUMN==TEXT`` / ``COLUMN!=TEXT`` over a text column (an input with text levels, e.g.
    ``tiers.fast_placement==same-domain``)."""
    m = _CONDITION.fullmatch(text)
    if m is None:
        raise StudyError(f"--where: must be COLUMN>=VALUE, e.g. goodput.mean>=0.9 (got '{clean(text, 60)}')")
    col = m.group("col")
    if col in results.columns and results.meta["columns"].get(col) == "text":
        op = m.group("op")
        if op not in ("==", "!="):
            raise StudyError(f"--where: '{clean(col, 60)}' is text; compare it with == or != (got {op})")
        value = m.group("value")
        levels = sorted({str(v) for v in _texts(results, col).levels if v is not None and str(v) != ""})
        if value not in levels:
            raise StudyError(
                f"--where: '{clean(col, 60)}' is never '{clean(value, 40)}' (it takes: {clean(', '.join(levels), 200)})"
            )
        return Condition(col, op, value)
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
    op = m.group("op")
    return Condition(col, op, value, _half_unit(m.group("value")) if op in ("==", "!=") else 0.0)


def _half_unit(typed: str) -> float:
    """Half a unit of the last digit of a number as typed: '0.9895' -> 5e-05, '12' -> 0.5, '1.5e3' -> 50."""
    mantissa, _, exponent = typed.strip().lower().replace("_", "").partition("e")
    decimals = len(mantissa.partition(".")[2])
    try:
        shift = int(exponent) if exponent else 0
    except ValueError:
        shift = 0
    return 0.5 * 10.0 ** (shift - decimals)


def _numeric(results: StudyResults, column: str, flag: str) -> np.ndarray:
    values = results.numeric(column) if column in results.columns else None
    if values is None:
        numeric = [c for c, k in results.meta["columns"].items() if k != "text"]
        if column in results.columns:
            raise StudyError(
                f"{flag}: '{clean(column, 60)}' is text, not a number "
                f"(numeric columns: {clean(', '.join(numeric), 240)})"
            )
        raise StudyError(f"{flag}: no numeric column '{clean(column, 60)}' (columns: {clean(', '.join(numeric), 240)})")
    return values


def _texts(results: StudyResults, column: str) -> Texts:
    """A text column as codes into its texts (as read back; a column built in memory is coded here)."""
    values = results.columns[column]
    return values if isinstance(values, Texts) else Texts.of(values)


def default_least(results: StudyResults) -> str:
    """The cost to minimise: the total cost with the spare pool's (``total_cost_usd``) where the results have it;
    else (results written before it) the cost to train when the scenarios have one, else of lost GPU-hours."""
    total = results.numeric("total_cost_usd") if "total_cost_usd" in results.columns else None
    if total is not None and np.isfinite(total).any():
        return "total_cost_usd"
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
        if isinstance(c.value, str):
            texts = _texts(results, c.column)
            hit = np.isin(texts.codes, [i for i, v in enumerate(texts.levels) if v is not None and str(v) == c.value])
            ok &= hit if c.op == "==" else ~hit
            continue
        v = _numeric(results, c.column, "--where")
        if c.op in ("==", "!="):
            near = np.abs(v - float(c.value)) < c.tolerance if c.tolerance > 0 else v == c.value
            ok &= np.isfinite(v) & (near if c.op == "==" else ~near)
        else:
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
    g = _numeric(results, output, "output")
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


#: "Up" when the study has a single input: the heatmap is one row.
NO_INPUT = "(none)"


def _value_label(v: float, integer: bool) -> str:
    if integer and float(v).is_integer():
        return _count(v) if abs(v) < 10_000 else compact(v).replace(" ", "")
    return compact(v).replace(" ", "") if abs(v) >= 1e4 else f"{v:.3g}"


def cells(res: StudyResults, name: str) -> tuple[np.ndarray, list[str], list[tuple[float, str]]]:
    """Each scenario's cell along input ``name``, the cells' names, and the axis ticks (computed once per
    results read: see :func:`_cells`)."""
    return res.once(("cells", name), lambda: _cells(res, name))  # type: ignore[no-any-return]


def drawable_outputs(res: StudyResults) -> list[str]:
    """The outputs a heatmap can show: those with a finite value in some row."""
    return res.once(  # type: ignore[no-any-return]
        "drawable", lambda: [c for c in res.outputs if np.isfinite(_numeric(res, c, "output")).any()]
    )


def prepare(res: StudyResults, output: str | None = None) -> None:
    """Compute what every heatmap of ``res`` needs (each input's cells, the outputs drawable), and the first one
    shown (``output`` over the first two inputs), so that, done where the file was read, choosing inputs and
    outputs afterwards costs milliseconds."""
    for name in res.inputs:
        cells(res, name)
    drawable = drawable_outputs(res)
    if res.inputs and output in drawable:
        heatmap(res, *first_axes(res), output)


def first_axes(res: StudyResults) -> tuple[str, str]:
    """The inputs a heatmap of ``res`` is first shown over: across and up."""
    return res.inputs[0], res.inputs[1] if len(res.inputs) > 1 else NO_INPUT


def _cells(res: StudyResults, name: str) -> tuple[np.ndarray, list[str], list[tuple[float, str]]]:
    """Each scenario's cell along input ``name``, the cells' names, and the axis ticks.

    The cells come from the study's description, not from the rows read, so a partial and a complete run
    of one study have the same cells: a value per level (or grid point) when there are at most
    :data:`MAX_LEVELS`, else :data:`HEAT_BINS` equal bins of the declared range (in the logarithm for a
    log range), ticked at their edges (both ends included).
    """
    n = res.rows
    if name == NO_INPUT:
        return np.zeros(n, dtype=int), [""], []
    spec = res.input_spec(name)
    numeric = res.numeric(name)
    if numeric is None:  # text: its levels in the study file's order, then any other value found
        column = res.columns[name]
        if not isinstance(column, Texts):
            column = Texts.of(column)
        found = [str(v) for v in column.levels]
        levels = [v if isinstance(v, str) else json.dumps(v) for v in spec.get("levels", [])]
        levels += sorted(set(found) - set(levels))
        pos = {v: k for k, v in enumerate(levels)}
        labels = [clean(v, 20) for v in levels]
        idx = np.array([pos[v] for v in found], dtype=int)[column.codes] if found else np.zeros(n, dtype=int)
        return idx, labels, [(k + 0.5, t) for k, t in enumerate(labels)]
    integer = res.meta["columns"].get(name) == "int" or bool(spec.get("integer"))
    declared: list[float] = []
    if "levels" in spec:
        declared = [float(v) for v in spec["levels"]]
    elif spec.get("points") is not None and res.design == "grid":
        inp = Input(
            tuple(spec["path"]),
            lo=spec["min"],
            hi=spec["max"],
            log=spec.get("scale") == "log",
            points=int(spec["points"]),
            integer=bool(spec.get("integer")),
        )
        declared = [float(v) for v in inp.grid_values()]
    found = numeric[np.isfinite(numeric)]
    if "min" not in spec and not declared:
        declared = np.unique(found).tolist()
    if declared:
        values = np.unique(np.concatenate([np.asarray(declared, dtype=float), found]))
        if values.size <= MAX_LEVELS:
            labels = [_value_label(float(v), integer) for v in values]
            idx = np.searchsorted(values, numeric).clip(0, values.size - 1)
            return idx, labels, [(k + 0.5, t) for k, t in enumerate(labels)]
    lo, hi = (float(spec["min"]), float(spec["max"])) if "min" in spec else (float(found.min()), float(found.max()))
    log = spec.get("scale") == "log" and lo > 0
    edges = np.geomspace(lo, hi, HEAT_BINS + 1) if log else np.linspace(lo, hi, HEAT_BINS + 1)
    edges[0], edges[-1] = lo, hi
    idx = np.clip(np.searchsorted(edges, numeric, side="right") - 1, 0, HEAT_BINS - 1)
    ends = [_value_label(float(e), integer) for e in edges]
    labels = [f"{a} to {b}" for a, b in itertools.pairwise(ends)]
    return idx, labels, [(float(k), e) for k, e in enumerate(ends) if k % 2 == 0]


def heatmap(res: StudyResults, x: str, y: str, output: str = "goodput.mean") -> Heatmap:
    """The mean of ``output`` over the scenarios in each cell of inputs ``x`` and ``y`` (NaN: none); ``y`` may be
    :data:`NO_INPUT` (one row). Computed once per results read and choice."""
    for name in (x, y):
        if name not in res.inputs and name != NO_INPUT:
            raise StudyError(f"'{clean(name, 60)}' is not an input of the study (inputs: {', '.join(res.inputs)})")
    return res.once(("heatmap", x, y, output), lambda: _heatmap(res, x, y, output))  # type: ignore[no-any-return]


def _heatmap(res: StudyResults, x: str, y: str, output: str) -> Heatmap:
    out = _numeric(res, output, "output")
    xi, xl, xt = cells(res, x)
    yi, yl, yt = cells(res, y)
    ok = np.isfinite(out)
    shape = (len(yl), len(xl))
    flat = (yi * shape[1] + xi)[ok]
    sums = np.bincount(flat, weights=out[ok], minlength=shape[0] * shape[1]).reshape(shape)
    counts = np.bincount(flat, minlength=shape[0] * shape[1]).reshape(shape).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return Heatmap(x, y, output, values, counts, xl, yl, xt, yt)
