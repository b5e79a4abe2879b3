"""What the window shows for one scenario, computed without Qt: a main run and two sweeps.

The window runs :func:`compute_plan` in a separate process (:mod:`.server`).

A preview (the quick results shown while a slider moves) fits each of its three parts to a time budget,
by the cost model of :mod:`.sweep`: fewer trials first, and where even a few trials of the whole window
would take too long, a part of the window, scaled up to the whole (see :func:`_fit`); on the general engine,
where the start of a window does not stand for all of it (a profile, a pool, rates that vary), the window cut
into stretches stepped side by side (docs/model.md 2.9). So a preview takes about the same few tens of
milliseconds at most sizes; the full run always simulates what was asked.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..analysis.results import SimulationResult, check_general_training, simulate_scenarios, stretch_hours_to_train
from ..analysis.sensitivity import DEFAULT_FACTOR, Effect, has_closed_form, paired_sensitivity
from ..analysis.sweep import (
    SweepResult,
    at_gpus,
    expected_goodput_vs_interval,
    gpu_counts,
    interval_points,
    point_trials,
    run_cost,
    sweep_cost,
    sweep_gpus,
    sweep_interval,
)
from ..analysis.training import CostCurve, TimeToTrain, cost_curve, work_hours
from ..files.scenario_io import ScenarioError, validate
from ..model.scenario import Scenario
from ..model.spares import restart_scenario
from ..model.specs import GPU_RANGE, MAX_INTERVAL_MIN, MIN_INTERVAL_MIN
from ..sim.capabilities import train_engine, window_engine
from ..sim.engine import Cancelled, RawTrials
from ..sim.run import MAX_SEGMENTS
from ..sim.setup import prepare
from ..sim.tiers_run import plan_tiers
from ..theory.params import optimal_intervals, resolve
from ..util.progress import progress_part

__all__ = [
    "FULL",
    "PREVIEW",
    "GpuSweepCache",
    "MainPart",
    "PlanRequest",
    "PlanResult",
    "Quality",
    "ShowsMain",
    "compute_plan",
]


@dataclass(frozen=True)
class Quality:
    """How much Monte Carlo to spend: a quick preview while dragging, the full run when the hand stops."""

    name: str
    max_trials: int | None  # main run; None = the scenario's own trial count
    interval_points: int
    interval_trials: int
    gpu_points: int
    gpu_trials: int
    #: Seconds each part (main run, interval sweep, GPU sweep) may take by the cost model of :mod:`.sweep`
    #: (see :func:`_fit`); None: no limit, the part simulates what was asked.
    budget_s: float | None = None
    #: Interruptions simulated per GPU-sweep point at most (trials are halved for large clusters).
    gpu_events_per_point: int = 100_000


#: A preview's parts take about 5-10 ms each on the reference machine (2 shared cores) at any size: with
#: the fixed costs of 11 + 11 points, about 20-30 ms for the whole preview.
PREVIEW = Quality("preview", 200, 11, 50, 11, 20, budget_s=0.006, gpu_events_per_point=25_000)
FULL = Quality("full", None, 21, 150, 41, 100)
#: Points of the exact goodput-vs-interval curve: 8 per step of the 21-point sweep (16 per step of the
#: 11-point one), so they include its points.
EXACT_CURVE_POINTS = 161
#: Interruptions simulated per GPU-sweep point at most in the full run.
GPU_SWEEP_EVENTS = FULL.gpu_events_per_point
#: GPU counts where the full run simulates the time to train for the days-and-cost plot, and its trials there
#: (without a closed form: the general engine, :func:`_general_cost_curve`, simulates it at every count, with
#: :data:`CURVE_TRAIN_TRIALS` trials, and shows these counts' spread).
COST_MC_POINTS = 6
COST_MC_TRIALS = 200
CURVE_TRAIN_TRIALS = 50
#: A preview keeps at least this many trials (its p05-p95 range needs a few) before it shortens the window.
MIN_PREVIEW_TRIALS = 8
#: A preview's stretches of a window on the general engine (docs/model.md 2.9) are at least this many hours long.
MIN_SEGMENT_HOURS = 4.0
#: Trials of the full run's paired Monte Carlo sensitivity (where no closed form ranks the levers).
SENSITIVITY_TRIALS = 100


@dataclass(frozen=True)
class PlanRequest:
    scenario: Scenario
    quality: Quality = FULL
    generation: int = 0
    #: The sensitivity's factor (for scenarios ranked by paired Monte Carlo, computed with the full run).
    factor: float = DEFAULT_FACTOR


@dataclass
class PlanResult:
    """Everything the plots show for one scenario.

    ``timings`` holds the seconds each part took in the compute process (``main``, ``interval``,
    ``exact``, and ``gpus`` unless the GPU sweep came from the cache). ``stamps`` holds
    ``time.perf_counter()`` readings on the way to the window (``sent`` by the compute process just
    before pickling, ``received`` and ``unpickled`` by the window's reader thread, ``delivered`` on the
    GUI thread); the clock is the machine's monotonic clock, the same in both processes.
    ``window_fraction`` is the part of the window a preview's main run simulated (1.0: all of it), ``segments``
    the stretches it was cut into (1: none; docs/model.md 2.9).
    """

    request: PlanRequest
    main: SimulationResult
    by_interval: SweepResult
    by_gpus: SweepResult
    exact_curve: tuple[np.ndarray, np.ndarray]  # (interval minutes, exact goodput), finer than the sweep
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    stamps: dict[str, float] = field(default_factory=dict)
    window_fraction: float = 1.0
    segments: int = 1
    from_cache: bool = False
    #: Days and cost to train against GPU count, when the scenario has a training section.
    cost_curve: CostCurve | None = None
    #: The levers' effects where no closed form ranks them (paired Monte Carlo at the request's factor, in the full
    #: run: :data:`SENSITIVITY_TRIALS` trials); None where the exact model does (the window ranks them itself).
    effects: list[Effect] | None = None


@dataclass
class MainPart:
    """A request's main run, sent ahead of the rest of its result (:func:`compute_plan`'s ``on_main``): the window
    draws what it alone decides (the headline numbers, the components, the histogram, the time breakdown) while the
    sweeps are computed. ``stamps`` as :attr:`PlanResult.stamps`."""

    request: PlanRequest
    main: SimulationResult
    stamps: dict[str, float] = field(default_factory=dict)


class ShowsMain(Protocol):
    """What draws a request's main run alone takes: a :class:`MainPart` or a whole :class:`PlanResult`."""

    @property
    def request(self) -> PlanRequest: ...

    @property
    def main(self) -> SimulationResult: ...


def interval_range(sc: Scenario) -> tuple[float, float]:
    """The span of checkpoint intervals (minutes) the window plots: whole decades around the current
    interval and the optima, at least 30 times either side, within the allowed intervals. With the fast
    tier on, the interval is the fast tier's (the one the interval sweep varies).

    Whole decades keep the axis still while a slider moves, until an optimum crosses one.
    """
    base = restart_scenario(sc)  # in continue mode the optimum counts only the failures that restart
    opt = optimal_intervals(base)
    _, current = resolve(base, opt)
    values: tuple[float, ...] = (current, opt.young, opt.daly, opt.exact)
    if sc.uses_tiers:  # the sweep varies the fast interval when the fast tier is on (sweep.sweep_interval)
        tp = plan_tiers(base)
        if tp.fast_min is not None:
            values = (tp.fast_min, tp.optimal.fast_min, *(tp.fast_young_daly() or ()))
        else:
            values = (tp.persistent_min, tp.optimal.persistent_min, opt.young, opt.daly)
    lo = 10.0 ** math.floor(math.log10(min(values) / 30.0))
    hi = 10.0 ** math.ceil(math.log10(max(values) * 30.0))
    return max(lo, MIN_INTERVAL_MIN), min(hi, MAX_INTERVAL_MIN)


def _sweep_points(sc: Scenario, q: Quality, points: int) -> int:
    """Points of a sweep: as the quality asks, but about half as many in a preview on the general engine (it steps
    every interruption and repair: a preview could not keep to its time otherwise; the full run refines)."""
    return (points + 1) // 2 if q.budget_s is not None and window_engine(sc).key == "general" else points


def _gpu_sweep_counts(sc: Scenario, q: Quality) -> np.ndarray:
    """The GPU counts of the sweep: 1,024 to 1,048,576, or further to cover the current size."""
    return gpu_counts(_sweep_points(sc, q, q.gpu_points), GPU_RANGE[0], max(sc.gpus, GPU_RANGE[1]))


#: What a GPU sweep is cached under (see :func:`_gpu_sweep_key`).
SweepKey = tuple[Scenario, int, int, int]
StopCheck = Callable[[], bool] | None
Progress = Callable[[float], None] | None


def _gpu_sweep_key(sc: Scenario, q: Quality) -> SweepKey:
    # The GPU sweep does not depend on the current GPU count (only on the range it must cover), nor on
    # the scenario's name or price.
    neutral = sc.simulated().replace(gpus=1)
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


def _fit(
    sc: Scenario, trials: int, cost: Callable[[Scenario], float], budget_s: float | None, points: int = 1
) -> tuple[Scenario, float, int]:
    """The scenario one part of a request simulates, the fraction of the window it covers, and the stretches it
    is cut into (``points``: the runs the part steps together, a sweep's points).

    Without a budget: ``trials`` trials of the whole window, uncut. With one: fewer trials (down to
    :data:`MIN_PREVIEW_TRIALS`) until the estimated ``cost`` fits, and if it still does not, a shorter window
    (the cost grows about in proportion to the window) or, where the window's start does not stand for all of
    it, on the general engine, the window in stretches stepped side by side (:func:`_segments`).
    """
    s = sc.replace(trials=trials)
    if budget_s is None:
        return s, 1.0, 1
    c = cost(s)
    if c > budget_s and trials > MIN_PREVIEW_TRIALS:
        fewer = sc.replace(trials=max(MIN_PREVIEW_TRIALS, int(trials * budget_s / c)))
        c_fewer = cost(fewer)
        # Where the window must be shortened anyway, keep the trials if they cost little more (an engine that
        # steps all trials at once pays per step, not per trial): more trial-hours for about the same time.
        keep = c_fewer > budget_s and _scales_with_window(sc) and trials / c > 2.0 * fewer.trials / c_fewer
        if not keep:
            s, c = fewer, c_fewer
    if c <= budget_s:
        return s, 1.0, 1
    if not _scales_with_window(sc):
        return s, 1.0, _segments(s, s.trials * points)
    fraction = budget_s / c
    return s.replace(days=s.days * fraction), fraction, 1


#: The columns (trials x stretches, over a part's runs) a preview's stretches aim at: past about a thousand, a
#: step's cost grows with its columns as much as fewer steps save (measured on h100-100k-plan: the main run
#: fastest at 16-64 stretches of 8 trials, the interval sweep's 6 x 8 trials at 16).
SEGMENT_COLUMNS = 1024


def _segments(sc: Scenario, columns: int) -> int:
    """A preview's stretches of ``sc``'s window on the general engine (docs/model.md 2.9): a power of two, about
    :data:`SEGMENT_COLUMNS` over the part's ``columns`` (its trials over its runs), at most
    :data:`.sim.run.MAX_SEGMENTS`, each at least :data:`MIN_SEGMENT_HOURS` long. 1 on the other engines (they pay
    per interruption: the budget is met by fewer trials)."""
    # (a corruption found late spans stretches; bad nodes start at the job's start and change over the window)
    if window_engine(sc).key != "general" or sc.uses_sdc or sc.uses_bad:
        return 1
    want = 2 ** max(0, math.floor(math.log2(max(SEGMENT_COLUMNS / max(columns, 1), 1.0))))
    return int(max(1, min(want, MAX_SEGMENTS, sc.hours // MIN_SEGMENT_HOURS)))


def _scales_with_window(sc: Scenario) -> bool:
    """Whether a run over the start of ``sc``'s window, scaled up, stands for a run of all of it: only
    with constant rates known exactly. A rate profile changes the rates over the days, and with rate
    uncertainty the spread between trials does not shrink as the window grows; either keeps the whole
    window (with fewer trials). So do spares: their results hold more than the hours the scaling knows; and silent
    corruption found late: a rollback to a clean checkpoint, or a run started over, loses more of a longer window;
    and bad nodes, fewer as the window goes on."""
    return (
        sc.rate_profile is None
        and not sc.rate_uncertainty
        and not sc.uses_spares
        and not sc.new_cluster
        and not sc.uses_sdc
        and not sc.uses_bad
    )


def _to_whole_window(totals: np.ndarray, fraction: float) -> np.ndarray:
    """Per-trial totals (counts, hours) over a part of the window, as they would be over the whole
    window: divided by ``fraction``, and their spread around the mean narrowed by ``sqrt(fraction)``.
    (They are sums over many independent stretches between interruptions, so their variance grows in
    proportion to the window; a window is only shortened where it holds very many interruptions.)"""
    v = np.asarray(totals, dtype=float) / fraction
    mean = v.mean(axis=0)
    return np.asarray(np.maximum(mean + (v - mean) * math.sqrt(fraction), 0.0))


def _whole_window_run(res: SimulationResult, sc: Scenario, fraction: float) -> SimulationResult:
    """A run of part of ``sc``'s window, as a run of all of it (see :func:`_to_whole_window`)."""
    if fraction == 1.0:
        return res
    raw = res.trials
    scaled = RawTrials(**{f.name: _to_whole_window(getattr(raw, f.name), fraction) for f in dataclasses.fields(raw)})
    e = res.expected
    expected = dataclasses.replace(
        e, hours_window=sc.hours, unplanned=e.unplanned / fraction, planned=e.planned / fraction
    )

    def whole(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else _to_whole_window(a, fraction)

    return dataclasses.replace(
        res,
        scenario=sc.replace(trials=res.scenario.trials),
        expected=expected,
        trials=scaled,
        restores_fast=whole(res.restores_fast),
        restores_persistent=whole(res.restores_persistent),
        slow_hours=whole(res.slow_hours),
        slow_drains=whole(res.slow_drains),
        sdc_hours=whole(res.sdc_hours),
        sdc_found=whole(res.sdc_found),
        sdc_unrecoverable=whole(res.sdc_unrecoverable),
        restores_failed=whole(res.restores_failed),
        rack_covered=whole(res.rack_covered),
        rack_moved=whole(res.rack_moved),
    )


def _whole_window_sweep(s: SweepResult, fraction: float) -> SweepResult:
    """A sweep over part of the window, as one over all of it (see :func:`_to_whole_window`)."""
    if fraction == 1.0:
        return s
    root = math.sqrt(fraction)

    def spread(mean: np.ndarray, q: np.ndarray) -> np.ndarray:
        return np.asarray(np.maximum(mean + (q - mean) * root, 0.0))

    return dataclasses.replace(
        s,
        interruptions_mean=s.interruptions_mean / fraction,
        interruptions_p05=spread(s.interruptions_mean, s.interruptions_p05) / fraction,
        interruptions_p95=spread(s.interruptions_mean, s.interruptions_p95) / fraction,
        interruptions_expected=s.interruptions_expected / fraction,
        goodput_sem=s.goodput_sem * root,
        goodput_p05=spread(s.goodput_mean, s.goodput_p05),
        goodput_p95=spread(s.goodput_mean, s.goodput_p95),
    )


def _gpu_sweep(
    sc: Scenario, q: Quality, trials: int, should_stop: StopCheck, progress: Progress
) -> tuple[SweepResult, float]:
    t0 = time.perf_counter()
    counts = _gpu_sweep_counts(sc, q)
    cap = q.gpu_events_per_point
    cost = lambda s: sweep_cost(s, "gpus", counts, cap).seconds
    points = 1
    if q.budget_s is not None:  # (the columns a preview's stretches are chosen by: the counts' trials, halved)
        each = [point_trials(at_gpus(sc, int(n)).replace(trials=min(trials, q.gpu_trials)), cap) for n in counts]
        points = max(1, round(sum(each) / max(each)))
    run, fraction, segments = _fit(sc, min(trials, q.gpu_trials), cost, q.budget_s, points)
    res = sweep_gpus(
        run, counts, should_stop=should_stop, progress=progress, max_events_per_point=cap, segments=segments
    )
    return _whole_window_sweep(res, fraction), time.perf_counter() - t0


def _cost_curve(
    sc: Scenario, q: Quality, counts: np.ndarray, by_gpus: SweepResult, should_stop: StopCheck, progress: Progress
) -> CostCurve | None:
    """Days and cost to train at the GPU sweep's counts (None without a training section). The full run
    also simulates the time to train at :data:`COST_MC_POINTS` of them (those it can simulate in size);
    a preview gives the expectations alone."""
    if sc.training is None:
        return None
    if train_engine(sc).key == "general":
        return _general_cost_curve(sc, q, by_gpus, should_stop, progress)
    curve = cost_curve(sc, counts)
    if q.budget_s is not None:
        return curve
    picks = np.unique(np.round(np.geomspace(counts[0], counts[-1], COST_MC_POINTS)).astype(np.int64))
    mc: list[TimeToTrain] = []
    for n in picks:
        if should_stop is not None and should_stop():
            raise Cancelled
        try:
            mc.extend(cost_curve(sc, [int(n)], [int(n)], min(sc.trials, COST_MC_TRIALS)).mc)
        except ScenarioError:  # too large to simulate: the expectation stands alone there
            continue
    return dataclasses.replace(curve, mc=tuple(mc))


def _general_cost_curve(
    sc: Scenario, q: Quality, by_gpus: SweepResult, should_stop: StopCheck, progress: Progress = None
) -> CostCurve:
    """Days and cost to train where the general engine simulates them (no closed form): at every count of the GPU
    sweep the model takes, a time to train (elsewhere none: no point is drawn). The full run simulates it,
    :data:`CURVE_TRAIN_TRIALS` trials at each count, all stepped together (a training run that starts in a
    burn-in's high rates takes longer than the work over the window's goodput says: half again on h100-100k-plan
    at a million GPUs); the line is their mean, the dots and whiskers are :data:`COST_MC_POINTS` of them. A
    preview reads each count's off its window's stretches in time order (docs/model.md 2.9), or where its window
    was not cut, divides the work by its goodput."""
    assert sc.training is not None
    counts = np.asarray(by_gpus.x, dtype=np.int64)
    g = np.asarray(by_gpus.goodput_mean, dtype=float)
    compute, price = sc.training.gpu_hours, sc.gpu_hour_cost_usd
    trials = min(sc.trials, CURVE_TRAIN_TRIALS)
    points = {i: p for i, n in enumerate(counts) if (p := _trainable(sc, int(n), float(g[i]), trials)) is not None}
    hours = np.full(len(counts), math.inf)
    mc: list[TimeToTrain] = []
    if q.budget_s is not None:
        stretches = by_gpus.useful_by_stretch or (None,) * len(counts)
        for i, p in points.items():
            hours[i] = float(np.mean(stretch_hours_to_train(work_hours(p), g[i : i + 1], stretches[i], sc.hours)))
        name = "preview (Monte Carlo window)"
        source = (
            "a preview: the work read off each count's Monte Carlo window, stretch by stretch"
            if by_gpus.useful_by_stretch
            else "a preview: work / each count's Monte Carlo goodput"
        )
    else:
        got = _times_to_train(points, g, should_stop, progress)
        for i, t in got.items():
            hours[i] = float(np.mean(t.hours))
        picks = np.unique(np.round(np.linspace(0, len(counts) - 1, COST_MC_POINTS)).astype(np.int64))
        mc = [got[int(i)] for i in picks if int(i) in got]
        name = "simulated time to train (mean)"
        source = f"the simulated time to train at each count (the mean of {trials} trials)"
    used = hours * counts  # GPU-hours used at each count
    return CostCurve(
        gpus=counts,
        ideal_days=compute / counts / 24.0,
        goodput=np.where(np.isfinite(used), compute / used, 0.0),
        days=hours / 24.0,
        cost_usd=used * price,
        lost_cost_usd=(used - compute) * price,
        mc=tuple(mc),
        expected_from=source,
        line_name=name,
    )


def _trainable(sc: Scenario, gpus: int, goodput: float, trials: int) -> Scenario | None:
    """``sc`` at ``gpus`` GPUs and ``trials`` trials if the model takes its time to train there (judged, as the
    simulated one is, by the window's ``goodput`` there), else None: a count the scenario cannot take (a job of
    one replica in continue mode), a job that would never finish."""
    try:
        point = validate(at_gpus(sc, gpus).replace(trials=trials))
        check_general_training(point, goodput, work_hours(point), prepare(point).persistent_min)
    except ScenarioError:
        return None
    return point


def _times_to_train(
    points: dict[int, Scenario], goodputs: np.ndarray, should_stop: StopCheck, progress: Progress = None
) -> dict[int, TimeToTrain]:
    """The simulated time to train of each of ``points`` (by its index among the counts), all stepped together;
    one that would take too long is left out rather than taking the rest with it."""
    from ..analysis.results import general_times_to_train

    where, scenarios = list(points), list(points.values())
    g = [float(goodputs[i]) for i in where]
    said: list[str | None] = [None] * len(scenarios)  # (all together: a sweep's points cost about one run's steps)
    done = general_times_to_train(scenarios, g, g, progress=progress, should_stop=should_stop, refused=said)
    return {i: t for i, t in zip(where, done) if t is not None}


def _cached_gpu_sweep(sc: Scenario, q: Quality, cache: GpuSweepCache | None) -> SweepResult | None:
    """The GPU sweep for ``sc`` at quality ``q`` if it was computed before; a preview takes the full
    run's sweep too (it is better, and costs nothing)."""
    if cache is None:
        return None
    found = cache.get(_gpu_sweep_key(sc, q))
    if found is None and q.budget_s is not None:
        found = cache.get(_gpu_sweep_key(sc, FULL))
    return found


def compute_plan(
    req: PlanRequest,
    should_stop: StopCheck = None,
    progress: Progress = None,
    cache: GpuSweepCache | None = None,
    on_main: Callable[[MainPart], None] | None = None,
) -> PlanResult:
    """Run the main simulation and both sweeps for a request, in the calling thread. ``on_main`` is given the main
    run as soon as it is done (the window draws what depends on it alone while the sweeps are computed: on two
    cores its drawing and the sweeps overlap).

    (Running the GPU sweep in a second thread was measured: the engine's many short numpy calls contend
    for the GIL, so it saved little and took the core the GUI thread paints with.)
    """
    t0 = time.perf_counter()
    q, sc = req.quality, req.scenario
    trials = sc.trials if q.max_trials is None else min(sc.trials, q.max_trials)
    timings: dict[str, float] = {}

    # The parts' shares of the progress bar, by what they cost (measured on h100-100k-plan's full run: main 7.5 s,
    # interval sweep 14, GPU sweep 17, days-to-train curve 10, sensitivity 16): those that do not run take none.
    curve_runs = q.budget_s is None and sc.training is not None and train_engine(sc).key == "general"
    ranks = q.budget_s is None and not has_closed_form(sc)
    shares = np.cumsum([0.0, 0.5, 0.2, 0.3, 0.15 * curve_runs, 0.25 * ranks])
    edges = shares / shares[-1]

    def step(part: int) -> Progress:
        return progress_part(progress, float(edges[part]), float(edges[part + 1]))

    by_gpus = _cached_gpu_sweep(sc, q, cache)
    run, fraction, segments = _fit(sc, trials, lambda s: run_cost(s).seconds, q.budget_s)
    ran = simulate_scenarios([run], should_stop=should_stop, progress=step(0), segments=segments)[0]
    main = _whole_window_run(ran, sc, fraction)
    timings["main"] = time.perf_counter() - t0
    if on_main is not None:
        on_main(MainPart(req, main))
    t1 = time.perf_counter()
    span = interval_range(sc)
    xs = interval_points(_sweep_points(sc, q, q.interval_points), *span)
    run_iv, fraction_iv, segments_iv = _fit(
        sc, min(trials, q.interval_trials), lambda s: sweep_cost(s, "interval", xs).seconds, q.budget_s, len(xs)
    )
    by_interval = _whole_window_sweep(
        sweep_interval(run_iv, xs, should_stop=should_stop, progress=step(1), segments=segments_iv),
        fraction_iv,
    )
    timings["interval"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    fine = interval_points(EXACT_CURVE_POINTS, *span)
    exact_curve = (fine, expected_goodput_vs_interval(sc, fine))
    timings["exact"] = time.perf_counter() - t2
    if by_gpus is None:
        by_gpus, timings["gpus"] = _gpu_sweep(sc, q, trials, should_stop, step(2))
        if cache is not None:
            cache.put(_gpu_sweep_key(sc, q), by_gpus)
    t3 = time.perf_counter()
    costs = _cost_curve(sc, q, by_gpus.x, by_gpus, should_stop, step(3))
    timings["cost"] = time.perf_counter() - t3
    effects = None
    if ranks:
        t4 = time.perf_counter()
        few = sc.replace(trials=min(sc.trials, SENSITIVITY_TRIALS))
        try:
            effects = paired_sensitivity(few, req.factor, should_stop=should_stop, progress=step(4))
        except ScenarioError:  # a time to train too large at these trials: the ranking stands without it
            effects = paired_sensitivity(
                few.replace(training=None), req.factor, should_stop=should_stop, progress=step(4)
            )
        timings["sensitivity"] = time.perf_counter() - t4
    return PlanResult(
        req,
        main,
        by_interval,
        by_gpus,
        exact_curve,
        time.perf_counter() - t0,
        timings,
        window_fraction=fraction,
        segments=segments,
        cost_curve=costs,
        effects=effects,
    )
