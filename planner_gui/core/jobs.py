"""The computations a view of the window asks the compute process for, besides the plan (:mod:`.plan`).

A :class:`Job` names one of :data:`JOBS` and its arguments (plain, picklable values: scenarios, spares,
numbers); the compute process (:mod:`.server`) runs it as it runs a plan request: the newest request wins, a
newer one stops it at its next check, its progress and its failure are sent back the same way. So a view's
Monte Carlo never runs on the window's interpreter, where it would hold the lock the window paints with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .model import Scenario
from .spares.model import Spares
from .spares.modes import mode_counts, restart_vs_continue
from .spares.run import SizingResult, sizing, sizing_counts

__all__ = ["JOBS", "Job", "run_job"]

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
    return counts, restart_vs_continue(sc, counts, should_stop=should_stop)


#: Every job a view may ask for, by name.
JOBS: dict[str, Callable[..., Any]] = {"spares_sizing": spares_sizing, "spares_modes": spares_modes}


def run_job(job: Job, should_stop: StopCheck, progress: Progress) -> Any:
    """Run ``job`` (ValueError for a kind that is not one of :data:`JOBS`)."""
    fn = JOBS.get(job.kind)
    if fn is None:
        raise ValueError(f"no such computation: {job.kind!r}")
    return fn(*job.args, should_stop=should_stop, progress=progress)
