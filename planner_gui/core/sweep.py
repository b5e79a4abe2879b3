"""Sweeps for plots: the same results over GPU count or checkpoint interval.

Every point of a sweep uses the same seed and the same :class:`.engine.Layout`,
so the points share their random numbers (common random numbers): a curve is
smooth, and moving one input does not make other curves jitter.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .engine import Layout, RawTrials, plan_layout, simulate_intervals, simulate_trials
from .exact import time_fractions
from .model import Scenario
from .params import Params, resolve
from .results import expected_for, summarize

__all__ = ["SweepResult", "gpu_counts", "interval_points", "sweep_gpus", "sweep_interval", "GUIDE_GPUS"]

#: GPU counts every GPU sweep includes: the Llama 3 cluster and a 100k cluster.
GUIDE_GPUS = (16_384, 100_000)


@dataclass(frozen=True)
class SweepResult:
    """Per-point summaries of a sweep; every array has one entry per value of ``x``."""

    variable: str  # "gpus" or "checkpoint_interval_min"
    x: np.ndarray
    interruptions_mean: np.ndarray
    interruptions_p05: np.ndarray
    interruptions_p95: np.ndarray
    interruptions_expected: np.ndarray
    goodput_mean: np.ndarray
    goodput_sem: np.ndarray
    goodput_p05: np.ndarray
    goodput_p95: np.ndarray
    goodput_expected: np.ndarray

    COLUMNS = (
        "interruptions_mean",
        "interruptions_p05",
        "interruptions_p95",
        "interruptions_expected",
        "goodput_mean",
        "goodput_sem",
        "goodput_p05",
        "goodput_p95",
        "goodput_expected",
    )

    def to_csv(self) -> str:
        """The sweep as CSV text, one row per point."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow([self.variable, *self.COLUMNS])
        for i, x in enumerate(self.x):
            w.writerow([_fmt(x), *(_fmt(getattr(self, c)[i]) for c in self.COLUMNS)])
        return out.getvalue()


def _fmt(v: float) -> str:
    return repr(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


def gpu_counts(points: int = 41, lo: int = 1024, hi: int = 1_048_576) -> np.ndarray:
    """``points`` log-spaced GPU counts from ``lo`` to ``hi``, with 16,384 and 100,000 in place of their nearest."""
    if points < 2:
        raise ValueError("a sweep needs at least 2 points")
    xs = np.unique(np.round(np.geomspace(lo, hi, points)).astype(np.int64))
    for guide in GUIDE_GPUS:
        if lo <= guide <= hi and guide not in xs:
            xs[np.argmin(np.abs(np.log(xs) - np.log(guide)))] = guide
    return np.unique(xs)


def interval_points(points: int = 41, lo_min: float = 1.0, hi_min: float = 1440.0) -> np.ndarray:
    """Log-spaced checkpoint intervals in minutes (1 minute to 24 hours by default)."""
    return np.geomspace(lo_min, hi_min, points)


def _summaries(raws: Sequence[RawTrials], params: Sequence[Params], x: np.ndarray, variable: str) -> SweepResult:
    cols: dict[str, list[float]] = {c: [] for c in SweepResult.COLUMNS}
    for raw, p in zip(raws, params):
        n, g = summarize(raw.unplanned), summarize(raw.useful / p.hours)
        values = {"interruptions_mean": n.mean, "interruptions_p05": n.p05, "interruptions_p95": n.p95,
                  "interruptions_expected": p.lam * p.hours, "goodput_mean": g.mean, "goodput_sem": g.sem,
                  "goodput_p05": g.p05, "goodput_p95": g.p95, "goodput_expected": expected_for(p).goodput}
        for k, v in values.items():
            cols[k].append(v)
    return SweepResult(variable, np.asarray(x, dtype=float), **{k: np.asarray(v) for k, v in cols.items()})


def sweep_gpus(
    scenario: Scenario,
    counts: Sequence[int] | np.ndarray | None = None,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    max_events_per_point: float | None = None,
) -> SweepResult:
    """The scenario at each GPU count (default :func:`gpu_counts`), everything else fixed.

    With ``checkpoint_interval_min = 'optimal'`` each point uses its own optimum.

    ``max_events_per_point`` caps the simulated interruptions per point by halving the trials (down to
    1/8 of ``scenario.trials``) where trials are long: a big cluster's trial holds so many interruptions
    that its goodput varies little, so fewer trials give about the same precision. Trials are halved in
    whole steps so that runs of points keep common random numbers.
    """
    xs = gpu_counts() if counts is None else np.asarray(counts, dtype=np.int64)
    params = [resolve(scenario.replace(gpus=int(n)))[0] for n in xs]
    trials = []
    for p in params:
        t = scenario.trials
        events = (p.lam + p.mu) * p.hours
        while max_events_per_point and t * events > max_events_per_point and t > max(1, scenario.trials // 8):
            t = max(1, t // 2)
        trials.append(t)
    layouts = {t: plan_layout(max((p.lam + p.mu) * p.hours for p, tt in zip(params, trials) if tt == t), t,
                              min_rows=min(t, 128)) for t in set(trials)}
    raws = []
    for i, (p, t) in enumerate(zip(params, trials)):
        sc = scenario if t == scenario.trials else scenario.replace(trials=t)
        raws.append(simulate_trials(sc, p, layout=layouts[t], should_stop=should_stop, components=False))
        if progress is not None:
            progress((i + 1) / len(params))
    return _summaries(raws, params, xs, "gpus")


def sweep_interval(
    scenario: Scenario,
    intervals_min: Sequence[float] | np.ndarray | None = None,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SweepResult:
    """The scenario at each checkpoint interval (minutes; default :func:`interval_points`)."""
    xs = interval_points() if intervals_min is None else np.asarray(intervals_min, dtype=float)
    base, _ = resolve(scenario)
    raws = simulate_intervals(scenario, base, xs / 60.0, progress=progress, should_stop=should_stop,
                              components=False)
    params = [replace(base, tau=float(t) / 60.0) for t in xs]
    return _summaries(raws, params, xs, "checkpoint_interval_min")


def expected_goodput_vs_interval(scenario: Scenario, intervals_min: np.ndarray) -> np.ndarray:
    """The exact goodput at each checkpoint interval (minutes), on as fine a grid as wanted."""
    p, _ = resolve(scenario)
    return time_fractions(p.lam, p.mu, np.asarray(intervals_min) / 60.0, p.c, p.r_unplanned, p.r_planned).useful
