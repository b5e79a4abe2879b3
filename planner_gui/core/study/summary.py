"""What a study says: the Sobol indices of goodput (Sobol designs) and the best scenarios under constraints."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..fmt import clean
from .sobol import sobol_indices
from .spec import StudyError
from .store import StudyResults

__all__ = ["DEFAULT_WHERE", "Condition", "best_scenarios", "default_least", "parse_condition", "study_summary"]

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
