"""The computations a view of the window asks the compute process for, besides the plan (:mod:`.plan`).

A :class:`Job` names one of :data:`JOBS` and its arguments (plain, picklable values: scenarios, spares,
numbers); the compute process (:mod:`.server`) runs it as it runs a plan request: the newest request wins, a
newer one stops it at its next check, its progress and its failure are sent back the same way. So a view's
Monte Carlo never runs on the window's interpreter, where it would hold the lock the window paints with.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.modes import mode_counts, restart_vs_continue
from ..analysis.sizing import SizingResult, sizing, sizing_counts
from ..model.scenario import Scenario
from ..model.spares import Spares
from ..util import fmt

__all__ = [
    "JOBS",
    "STUDY_OUTPUT",
    "Job",
    "incident_fit",
    "optimize_batch",
    "run_job",
    "strategies",
    "study_load",
    "unsure",
]

#: The output a study window opens on, and whose Sobol indices it shows.
STUDY_OUTPUT = "goodput.mean"

StopCheck = Callable[[], bool]
Progress = Callable[[float], None]


@dataclass(frozen=True)
class Job:
    """A request for ``JOBS[kind](*args)``; ``generation`` as a plan request's."""

    kind: str
    args: tuple[Any, ...]
    generation: int = 0


def spares_sizing(
    sc: Scenario, spares: Spares, points: int, *, should_stop: StopCheck, progress: Progress
) -> SizingResult:
    """Spare-Pool Sizing: every pool size from none to well past the one that covers 99.9 % of failures."""
    return sizing(sc, spares, sizing_counts(sc, spares, points), progress=progress, should_stop=should_stop)


def spares_modes(
    sc: Scenario, *, should_stop: StopCheck, progress: Progress
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Repairs and Recovery Modes: restart against continue across GPU counts, with the counts."""
    counts = mode_counts(sc)
    return counts, restart_vs_continue(sc, counts, should_stop=should_stop, progress=progress)


def study_load(path: str, *, should_stop: StopCheck, progress: Progress) -> tuple[Any, Any, str | None]:
    """File > Open Study Results: the results (checked, each input's heatmap cells computed), their Sobol indices
    of :data:`STUDY_OUTPUT` or why there are none, and None; or (None, None, the one line why it cannot be
    shown)."""
    from ..study.sobol import sobol_indices
    from ..study.spec import StudyError
    from ..study.store import read_results
    from ..study.summary import prepare

    name = fmt.clean(Path(path).name, 80)
    try:
        res = read_results(path)
    except StudyError as exc:
        return None, None, str(exc)
    if res.rows == 0:
        return None, None, res.note or f"{name}: no scenario has finished yet"
    try:
        prepare(res, STUDY_OUTPUT)  # every heatmap's cells and the first heatmap, here: the window only draws
        try:
            sobol: Any = sobol_indices(res, STUDY_OUTPUT)
        except StudyError as exc:
            sobol = f"No Sobol indices: {exc}"
    except Exception as exc:  # (a file the checks let through: said in one line, never a traceback)
        return None, None, f"{name}: cannot show these results ({type(exc).__name__}: {exc})"
    return res, sobol, None


def strategies(sc: Scenario, gpus: tuple[int, ...], *, should_stop: StopCheck, progress: Progress) -> dict[str, Any]:
    """Recovery Strategies: the comparison ``planner-gui strategies --json`` prints for ``sc`` at ``gpus``, as that
    JSON reads back (lists, None for what has no number)."""
    from ..analysis.strategies import comparable, compare_strategies

    doc = compare_strategies(comparable(sc), gpus, progress=progress, should_stop=should_stop)
    back: dict[str, Any] = json.loads(json.dumps(doc, allow_nan=False))
    return back


def incident_fit(
    path: str, gpus: int, start: Any, end: Any, prior: Any, *, should_stop: StopCheck, progress: Progress
) -> tuple[str, Any]:
    """File > Import Incident Log: ``("fit", the fit)`` of the log at ``path`` over ``gpus`` GPUs, or, with no GPUs
    typed yet (``gpus`` 0), ``("read", ...)``: the log read with the largest cluster it may come from, to say at
    once whether it can be used (never a fit to use). A log that cannot be used fails with its one line."""
    from ..incidents import fit_log
    from ..model.specs import LIMITS

    fit = fit_log(path, gpus if gpus > 0 else int(LIMITS["gpus"][1]), start, end, prior)
    return ("fit" if gpus > 0 else "read"), fit


def unsure(sc: Scenario, *, should_stop: StopCheck, progress: Progress) -> Any:
    """The Planning tab's "What is unsure": the tornado of ``sc`` (:func:`.tornado.tornado`; paired Monte Carlo where
    no closed form ranks the ends)."""
    from ..analysis.tornado import tornado

    return tornado(sc, progress=progress, should_stop=should_stop)


def optimize_batch(
    base: Scenario, vary: Any, goal: Any, batch: Any, points: int, *, should_stop: StopCheck, progress: Progress
) -> Any:
    """The Planning tab's "Cheapest setup": one batch of a goal-seek search (:func:`..decisions.optimize.evaluate`),
    the window driving the search (:class:`..decisions.optimize.Searcher`) a batch at a time."""
    from ..decisions.optimize import evaluate

    return evaluate(base, vary, goal, batch, points, should_stop)


#: Every job a view may ask for, by name.
JOBS: dict[str, Callable[..., Any]] = {
    "incident_fit": incident_fit,
    "optimize_batch": optimize_batch,
    "spares_sizing": spares_sizing,
    "spares_modes": spares_modes,
    "strategies": strategies,
    "study_load": study_load,
    "unsure": unsure,
}


def run_job(job: Job, should_stop: StopCheck, progress: Progress) -> Any:
    """Run ``job`` (ValueError for a kind that is not one of :data:`JOBS`)."""
    fn = JOBS.get(job.kind)
    if fn is None:
        raise ValueError(f"no such computation: {job.kind!r}")
    return fn(*job.args, should_stop=should_stop, progress=progress)
