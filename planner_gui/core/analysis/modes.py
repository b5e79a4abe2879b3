"""Restart against continue across GPU counts: the scenario's spares at every count, its pool of the same
service (the share of node-losing failures that find a spare), each count on the same seed (common random
numbers). Shown by View > Repairs and Recovery Modes (computed in the compute process: :mod:`..session.jobs`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from ..model.scenario import Scenario
from ..model.spares import Spares, spares_params
from ..theory.spares import p_no_spare, recommended_spares
from ..util.progress import progress_part
from .results import simulate

__all__ = ["MODE_TRIALS", "mode_counts", "mode_scenario", "restart_vs_continue"]

#: Trials per GPU count and mode in the comparison (each count on the same seed: common random numbers).
MODE_TRIALS = 100


def mode_counts(sc: Scenario, points: int = 7) -> np.ndarray:
    """GPU counts for the comparison: from 2 replicas (continuing needs two; at least 1,024 GPUs) to 4 times the
    scenario's (at least 131,072), whole replicas (it covered 8k-125k around a 100,000-GPU scenario)."""
    sp = sc.spares or Spares()
    unit = max(sc.gpus_per_node, sp.replica_gpus)
    lo, hi = max(1024, 2 * unit), min(max(4 * sc.gpus, 131_072), 10_000_000)
    xs = np.geomspace(lo, hi, points)
    return np.unique(np.maximum(np.round(xs / unit), 1).astype(np.int64) * unit)


def mode_scenario(sc: Scenario, gpus: int, mode: str) -> Scenario:
    """The scenario at ``gpus`` GPUs in recovery ``mode``: a pool of the same service (the smallest in which at
    least the share of node-losing failures that find a spare in the scenario's pool find one, by the
    M/G/infinity law of the sizing view), the replica no larger than the job, the shrink floor no larger than
    the job. (A pool scaled by its share of the nodes is relatively roomier at small counts, where the nodes in
    repair fluctuate more, and its rounding made the restart curve wobble: 81, 77.5, 78.5 % at 8k, 13k, 20k.)"""
    sp = sc.spares or Spares()
    job = max(sc.gpus_per_node, gpus - gpus % sc.gpus_per_node)
    sp = dataclasses.replace(
        sp,
        recovery_mode=mode,
        replica_gpus=min(sp.replica_gpus, job),
        min_gpus=None if sp.min_gpus is None else min(sp.min_gpus, gpus),
    )
    out = sc.replace(gpus=int(gpus), spares=sp, trials=min(sc.trials, MODE_TRIALS))
    if sp.spare_nodes is not None:  # (the pool's law does not depend on the checkpoint interval given here)
        here = spares_params(sc, sc.spares or Spares(), 60.0)
        served = 1.0 - p_no_spare(here, sp.spare_nodes)
        there = spares_params(out, sp, 60.0)
        out = out.replace(spares=dataclasses.replace(sp, spare_nodes=recommended_spares(there, served)))
    return out


def restart_vs_continue(
    sc: Scenario,
    counts: np.ndarray,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, np.ndarray]:
    """Mean goodput and its standard error per count, in restart and in continue mode (``progress``: each run an
    equal part of the whole)."""
    out: dict[str, np.ndarray] = {}
    runs = 2 * len(counts)
    for m, mode in enumerate(("restart", "continue")):
        means, sems = [], []
        for i, n in enumerate(counts):
            done = m * len(counts) + i
            part = progress_part(progress, done / runs, (done + 1) / runs)
            res = simulate(mode_scenario(sc, int(n), mode), should_stop=should_stop, progress=part)
            g = res.goodput
            means.append(float(g.mean()))
            sems.append(float(g.std(ddof=1) / math.sqrt(g.size)) if g.size > 1 else 0.0)
        out[mode], out[f"{mode}_sem"] = np.array(means), np.array(sems)
    return out
