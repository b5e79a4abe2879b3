"""What the window shows for one scenario, computed without Qt: a main run and two sweeps.

The window runs :func:`compute_plan` in a separate process (:mod:`.server`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .model import Scenario
from .params import optimal_intervals, resolve
from .results import SimulationResult, simulate
from .specs import GPU_RANGE, MAX_INTERVAL_MIN, MIN_INTERVAL_MIN
from .sweep import SweepResult, expected_goodput_vs_interval, gpu_counts, interval_points, sweep_gpus, sweep_interval

__all__ = ["FULL", "PREVIEW", "GpuSweepCache", "PlanRequest", "PlanResult", "Quality", "compute_plan"]


@dataclass(frozen=True)
class Quality:
    """How much Monte Carlo to spend: a quick preview while dragging, the full run when the hand stops."""

    name: str
    max_trials: int | None  # main run; None = the scenario's own trial count
    interval_points: int
    interval_trials: int
    gpu_points: int
    gpu_trials: int


PREVIEW = Quality("preview", 200, 21, 100, 21, 40)
FULL = Quality("full", None, 21, 150, 41, 100)
#: Points of the exact goodput-vs-interval curve; 8 per step of the 21-point sweep, so they include its points.
EXACT_CURVE_POINTS = 161
#: Interruptions simulated per GPU-sweep point at most (trials are halved for large clusters).
GPU_SWEEP_EVENTS = 100_000


@dataclass(frozen=True)
class PlanRequest:
    scenario: Scenario
    quality: Quality = FULL
    generation: int = 0


@dataclass
class PlanResult:
    """Everything the plots show for one scenario."""

    request: PlanRequest
    main: SimulationResult
    by_interval: SweepResult
    by_gpus: SweepResult
    exact_curve: tuple[np.ndarray, np.ndarray]  # (interval minutes, exact goodput), finer than the sweep
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


def interval_range(sc: Scenario) -> tuple[float, float]:
    """The span of checkpoint intervals (minutes) the window plots: whole decades around the current
    interval and the optima, at least 30 times either side, within the allowed intervals.

    Whole decades keep the axis still while a slider moves, until an optimum crosses one.
    """
    opt = optimal_intervals(sc)
    _, current = resolve(sc, opt)
    values = (current, opt.young, opt.daly, opt.exact)
    lo = 10.0 ** math.floor(math.log10(min(values) / 30.0))
    hi = 10.0 ** math.ceil(math.log10(max(values) * 30.0))
    return max(lo, MIN_INTERVAL_MIN), min(hi, MAX_INTERVAL_MIN)


def _gpu_sweep_counts(sc: Scenario, q: Quality) -> np.ndarray:
    """The GPU counts of the sweep: 1,024 to 1,048,576, or further to cover the current size."""
    return gpu_counts(q.gpu_points, GPU_RANGE[0], max(sc.gpus, GPU_RANGE[1]))


#: What a GPU sweep is cached under (see :func:`_gpu_sweep_key`).
SweepKey = tuple[Scenario, int, int, int]
StopCheck = Callable[[], bool] | None
Progress = Callable[[float], None] | None


def _gpu_sweep_key(sc: Scenario, q: Quality) -> SweepKey:
    # The GPU sweep does not depend on the current GPU count (only on the range it must cover), nor on
    # the scenario's name or price.
    neutral = sc.replace(gpus=1, name="", gpu_hour_cost_usd=0.0)
    return (neutral, q.gpu_points, q.gpu_trials, max(sc.gpus, GPU_RANGE[1]))


class GpuSweepCache:
    def __init__(self) -> None:
        self._items: dict[SweepKey, SweepResult] = {}

    def get(self, key: SweepKey) -> SweepResult | None:
        return self._items.get(key)

    def put(self, key: SweepKey, value: SweepResult) -> None:
        if len(self._items) > 16:
            self._items.clear()
        self._items[key] = value


def _gpu_sweep(
    sc: Scenario, q: Quality, trials: int, should_stop: StopCheck, progress: Progress
) -> tuple[SweepResult, float]:
    t0 = time.perf_counter()
    res = sweep_gpus(
        sc.replace(trials=min(trials, q.gpu_trials)),
        _gpu_sweep_counts(sc, q),
        should_stop=should_stop,
        progress=progress,
        max_events_per_point=GPU_SWEEP_EVENTS,
    )
    return res, time.perf_counter() - t0


def compute_plan(
    req: PlanRequest, should_stop: StopCheck = None, progress: Progress = None, cache: GpuSweepCache | None = None
) -> PlanResult:
    """Run the main simulation and both sweeps for a request, in the calling thread.

    (Running the GPU sweep in a second thread was measured: the engine's many short numpy calls contend
    for the GIL, so it saved little and took the core the GUI thread paints with.)
    """
    t0 = time.perf_counter()
    q, sc = req.quality, req.scenario
    trials = sc.trials if q.max_trials is None else min(sc.trials, q.max_trials)
    timings: dict[str, float] = {}

    def step(weight0: float, weight1: float) -> Callable[[float], None]:
        def report(f: float) -> None:
            if progress is not None:
                progress(weight0 + (weight1 - weight0) * f)

        return report

    key = _gpu_sweep_key(sc, q)
    by_gpus = cache.get(key) if cache is not None else None
    main = simulate(sc.replace(trials=trials), should_stop=should_stop, progress=step(0.0, 0.5))
    timings["main"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    span = interval_range(sc)
    by_interval = sweep_interval(
        sc.replace(trials=min(trials, q.interval_trials)),
        interval_points(q.interval_points, *span),
        should_stop=should_stop,
        progress=step(0.5, 0.7),
    )
    fine = interval_points(EXACT_CURVE_POINTS, *span)
    exact_curve = (fine, expected_goodput_vs_interval(sc, fine))
    timings["interval"] = time.perf_counter() - t1
    if by_gpus is None:
        by_gpus, timings["gpus"] = _gpu_sweep(sc, q, trials, should_stop, step(0.7, 1.0))
        if cache is not None:
            cache.put(key, by_gpus)
    return PlanResult(req, main, by_interval, by_gpus, exact_curve, time.perf_counter() - t0, timings)
