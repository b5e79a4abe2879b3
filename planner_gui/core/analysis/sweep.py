"""Sweeps for plots: the same results over GPU count or checkpoint interval.

Every point of a sweep uses the same seed and the same :class:`.engine.Layout`,
so the points share their random numbers (common random numbers): a curve is
smooth, and moving one input does not make other curves jitter.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..files.scenario_io import ScenarioError
from ..model.scenario import Scenario
from ..model.specs import GPU_RANGE, MAX_TOTAL_EVENTS
from ..sim.capabilities import general_seconds, one_tier_closed_form, window_engine
from ..sim.engine import Layout, RawTrials, layout_for, plan_layout, simulate_intervals, simulate_trials
from ..sim.tiers_run import plan_tiers
from ..theory.exact import time_fractions
from ..theory.expected import piecewise_fractions, rate_nodes, rates_vary
from ..theory.params import Params, resolve
from ..theory.profiles import mean_multiplier, pieces
from ..theory.rates import mean_job_rate
from ..util.progress import progress_part
from .results import expected_for_scenario, simulate_scenarios, summarize

__all__ = [
    "GUIDE_GPUS",
    "MAX_ROW_INTERVALS",
    "Cost",
    "SweepResult",
    "at_gpus",
    "check_sweep_size",
    "gpu_counts",
    "interval_points",
    "point_trials",
    "run_cost",
    "sweep_cost",
    "sweep_gpus",
    "sweep_interval",
    "varies_fast_interval",
]

#: GPU counts every GPU sweep includes: the Llama 3 cluster and a 100k cluster.
GUIDE_GPUS = (16_384, 100_000)


@dataclass(frozen=True)
class SweepResult:
    """Per-point summaries of a sweep; every array has one entry per value of ``x``."""

    variable: str  # "gpus", "checkpoint_interval_min" or (the fast tier on) "fast_interval_min"
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
    trials: np.ndarray  # Monte Carlo trials at each point (fewer than asked where trials are long)
    #: With a finite spare pool, its nodes at each point (NaN: unlimited); None without one.
    spare_nodes: np.ndarray | None = None
    #: A preview's windows in stretches (docs/model.md 2.9): at each point, each trial's useful hours in each
    #: stretch in time order (None at a point not run so), to read a time to train off; None otherwise.
    useful_by_stretch: tuple[np.ndarray | None, ...] | None = None

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
        "trials",
    )

    def to_csv(self) -> str:
        """The sweep as CSV text, one row per point."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        cols = (*self.COLUMNS, "spare_nodes") if self.spare_nodes is not None else self.COLUMNS
        w.writerow([self.variable, *cols])
        for i, x in enumerate(self.x):
            w.writerow([_fmt(x), *(_fmt(getattr(self, c)[i]) for c in cols)])
        return out.getvalue()


def _fmt(v: float) -> str:
    """A CSV cell: whole numbers without a decimal point, an empty cell where there is no value (no closed form:
    NaN, which the JSON writes as null)."""
    if not math.isfinite(v):
        return ""
    return repr(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


def gpu_counts(points: int = 41, lo: int = GPU_RANGE[0], hi: int = GPU_RANGE[1]) -> np.ndarray:
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


# -- what a run or a sweep costs ---------------------------------------------------------------------
#
# Measured on the reference machine (2 shared cores, numpy 2.4, OpenBLAS on one thread as the command
# line sets it; see benchmarks/bench_engine.py): a run costs about 9.5 ns per simulated interruption and
# 2.5 us per row (a trial, or a sub-window of a long one); each further interval of a sweep over
# intervals reuses the run's random draws and adds about 3.2 ns per interruption and 1 us per row (its
# edges are joined per row). A sweep over GPU counts is the sum of its points' runs. Runs and sweeps at
# the limit (4e9) took 25-41 s, 0.8-1.1 times these estimates, whatever their shape.

#: Seconds per simulated interruption of a run.
SECONDS_PER_EVENT = 9.5e-9
#: Seconds per row of a run.
SECONDS_PER_ROW = 2.5e-6
#: Seconds per interruption for each further interval of a sweep over intervals.
SECONDS_PER_EVENT_PER_INTERVAL = 3.2e-9
#: Seconds per row for each further interval of a sweep over intervals.
SECONDS_PER_ROW_PER_INTERVAL = 1.0e-6
#: Rows x intervals a sweep over intervals holds at once; beyond this the intervals run in groups, each
#: drawing the same random numbers again, so memory stays flat (about 100 bytes each).
MAX_ROW_INTERVALS = 1 << 20


@dataclass(frozen=True)
class Cost:
    """What simulating costs: ``events``, in interruptions of a single run that would take as long (the
    unit of :data:`.specs.MAX_TOTAL_EVENTS`), and the estimated ``seconds`` on the reference machine."""

    events: float
    seconds: float


def _events_per_trial(p: Params, scenario: Scenario) -> float:
    """Expected interruptions per trial at ``p`` (the scenario's varying rates at their expected level)."""
    if not rates_vary(scenario):
        return (p.lam + p.mu) * p.hours
    lam = mean_job_rate(scenario, p.lam) * mean_multiplier(scenario.rate_profile, scenario.days)
    return (lam + p.mu) * p.hours


def _pass_seconds(events: float, rows: float) -> float:
    return events * SECONDS_PER_EVENT + rows * SECONDS_PER_ROW


def _cost(seconds: float) -> Cost:
    return Cost(seconds / SECONDS_PER_EVENT, seconds)


def run_cost(scenario: Scenario) -> Cost:
    """The cost of :func:`.results.simulate` for ``scenario``'s window, on the engine the table chooses."""
    p, _ = resolve(scenario)
    engine = window_engine(scenario).key
    if engine == "general":
        return _cost(general_seconds(scenario))
    if engine == "tiers":
        return _cost(_tier_seconds(scenario, p))
    per_trial = _events_per_trial(p, scenario)
    rows = scenario.trials * layout_for(scenario, p).subwindows
    return _cost(_pass_seconds(per_trial * scenario.trials, rows))


#: The two-tier engine's seconds per interruption and per run (plan and exact model), measured at 100,000
#: GPUs with replicas in the same domain (both tiers restoring: its slowest case) on the shared 2-core machine.
TIER_SECONDS_PER_EVENT = 35e-9
TIER_SECONDS_PER_RUN = 1e-3


def _tier_seconds(scenario: Scenario, p: Params) -> float:
    """The vectorized two-tier engine's time for ``scenario``."""
    events = (p.lam + p.mu) * p.hours
    return events * scenario.trials * TIER_SECONDS_PER_EVENT + TIER_SECONDS_PER_RUN


def _general_seconds(scenario: Scenario, p: Params) -> float:
    return general_seconds(scenario)


def _interval_groups(n: int, rows: int) -> list[slice]:
    size = max(1, MAX_ROW_INTERVALS // max(rows, 1))
    return [slice(i, min(i + size, n)) for i in range(0, n, size)]


def _halved_trials(scenario: Scenario, p: Params, max_events: float | None) -> int:
    """The trials of a sweep point at ``p``: the scenario's, halved (down to an eighth) while the point's expected
    interruptions exceed ``max_events`` (a large cluster's goodput varies little between trials)."""
    t = scenario.trials
    events = _events_per_trial(p, scenario)
    while max_events and t * events > max_events and t > max(1, scenario.trials // 8):
        t = max(1, t // 2)
    return t


def _gpu_trials(scenario: Scenario, params: Sequence[Params], max_events_per_point: float | None) -> list[int]:
    return [_halved_trials(scenario, p, max_events_per_point) for p in params]


def _gpu_layouts(
    scenario: Scenario, xs: np.ndarray, params: Sequence[Params], trials: Sequence[int]
) -> dict[int, Layout]:
    """One layout per number of trials, for the largest point that runs them (common random numbers)."""
    if not rates_vary(scenario):
        return {
            t: plan_layout(
                max(_events_per_trial(p, scenario) for p, tt in zip(params, trials) if tt == t), t, min_rows=min(t, 128)
            )
            for t in set(trials)
        }
    out = {}
    for t in set(trials):
        n, biggest = max(((n, p) for n, p, tt in zip(xs, params, trials) if tt == t), key=lambda point: point[1].lam)
        out[t] = layout_for(scenario.replace(gpus=int(n), trials=t), biggest, min_rows=min(t, 128))
    return out


def _gpu_point_seconds(
    scenario: Scenario, params: Sequence[Params], trials: Sequence[int], layouts: dict[int, Layout]
) -> list[float]:
    return [
        _pass_seconds(_events_per_trial(p, scenario) * t, t * layouts[t].subwindows) for p, t in zip(params, trials)
    ]


def sweep_cost(
    scenario: Scenario, over: str, xs: Sequence[float] | np.ndarray, max_events_per_point: float | None = None
) -> Cost:
    """The cost of :func:`sweep_gpus` (``over="gpus"``, ``xs`` GPU counts) or :func:`sweep_interval`
    (``over="interval"``, ``xs`` minutes) for ``scenario``."""
    xs = np.asarray(xs)
    engine = window_engine(scenario).key
    if engine != "renewal":  # one engine run per point (:func:`_model_sweep`)
        seconds = _general_seconds if engine == "general" else _tier_seconds
        if over == "gpus":
            points = [at_gpus(scenario, int(n)) for n in xs]
            if max_events_per_point is not None:
                points = [sc.replace(trials=point_trials(sc, max_events_per_point)) for sc in points]
            return _cost(math.fsum(seconds(sc, resolve(sc)[0]) for sc in points))
        return _cost(len(xs) * seconds(scenario, resolve(scenario)[0]))
    if over == "gpus":
        params = [resolve(scenario.replace(gpus=int(n)))[0] for n in xs]
        trials = _gpu_trials(scenario, params, max_events_per_point)
        layouts = _gpu_layouts(scenario, xs, params, trials)
        return _cost(math.fsum(_gpu_point_seconds(scenario, params, trials, layouts)))
    if over != "interval":
        raise ValueError(f"over must be 'gpus' or 'interval' (got {over!r})")
    p, _ = resolve(scenario)
    per_trial = _events_per_trial(p, scenario)
    events = per_trial * scenario.trials
    rows = scenario.trials * layout_for(scenario, p).subwindows
    groups = len(_interval_groups(len(xs), rows))
    extra = max(len(xs) - groups, 0)
    return _cost(
        groups * _pass_seconds(events, rows)
        + extra * (events * SECONDS_PER_EVENT_PER_INTERVAL + rows * SECONDS_PER_ROW_PER_INTERVAL)
    )


def check_sweep_size(scenario: Scenario, over: str, xs: Sequence[float] | np.ndarray, field: str = "points") -> Cost:
    """Refuse a sweep that would cost more than the largest single run allowed; return its cost."""
    cost = sweep_cost(scenario, over, xs)
    if cost.events > MAX_TOTAL_EVENTS:
        what, levers = (
            ("GPU counts", "points, trials or days")
            if over == "gpus"
            else ("checkpoint intervals", "points, trials, days or GPUs")
        )
        raise ScenarioError(
            f"{field}: a sweep over {len(xs)} {what} costs as much as simulating about {cost.events:.3g} "
            f"interruptions, over the limit of {MAX_TOTAL_EVENTS:.3g}; use fewer {levers}"
        )
    return cost


def _summary_columns(raw: RawTrials, p: Params, scenario: Scenario) -> dict[str, float]:
    return _summary(raw.unplanned, raw.useful / p.hours, expected_for_scenario(scenario, p))


def _summary(unplanned: np.ndarray, goodput: np.ndarray, expected: Any) -> dict[str, float]:
    """One point's :attr:`SweepResult.COLUMNS`, from its trials' interruptions and goodput and its expectations
    (``unplanned``, and ``goodput`` or None where no closed form exists)."""
    n, g = summarize(unplanned), summarize(goodput)
    return {
        "interruptions_mean": n.mean,
        "interruptions_p05": n.p05,
        "interruptions_p95": n.p95,
        "interruptions_expected": expected.unplanned,
        "goodput_mean": g.mean,
        "goodput_sem": g.sem,
        "goodput_p05": g.p05,
        "goodput_p95": g.p95,
        "goodput_expected": math.nan if expected.goodput is None else expected.goodput,
        "trials": float(np.asarray(unplanned).size),
    }


def _result(rows: Sequence[dict[str, float]], x: np.ndarray, variable: str) -> SweepResult:
    cols: dict[str, Any] = {c: np.asarray([r[c] for r in rows], dtype=float) for c in SweepResult.COLUMNS}
    return SweepResult(variable, np.asarray(x, dtype=float), **cols)


def sweep_gpus(
    scenario: Scenario,
    counts: Sequence[int] | np.ndarray | None = None,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    max_events_per_point: float | None = None,
    fixed_pool: bool = False,
    segments: int = 1,
) -> SweepResult:
    """The scenario at each GPU count (default :func:`gpu_counts`), everything else fixed: a finite spare pool
    keeps its share of the job's nodes (``fixed_pool``: its number of nodes; :func:`at_gpus`).

    With ``checkpoint_interval_min = 'optimal'`` each point uses its own optimum.

    ``max_events_per_point`` caps the simulated interruptions per point by halving the trials (down to
    1/8 of ``scenario.trials``) where trials are long: a big cluster's trial holds so many interruptions
    that its goodput varies little, so fewer trials give about the same precision. Trials are halved in
    whole steps so that runs of points keep common random numbers. ``segments``: a preview's (docs/model.md 2.9;
    general-engine points only).
    """
    xs = gpu_counts() if counts is None else np.asarray(counts, dtype=np.int64)
    if window_engine(scenario).key != "renewal":
        return _model_sweep(scenario, "gpus", xs, progress, should_stop, max_events_per_point, fixed_pool, segments)
    params = [resolve(scenario.replace(gpus=int(n)))[0] for n in xs]
    trials = _gpu_trials(scenario, params, max_events_per_point)
    layouts = _gpu_layouts(scenario, xs, params, trials)
    # Progress is reported by work done (a big point takes far longer than a small one), within points too.
    weights = np.asarray(_gpu_point_seconds(scenario, params, trials, layouts))
    total = float(weights.sum()) or 1.0
    done = np.concatenate(([0.0], np.cumsum(weights))) / total
    summaries = []
    for i, (n, p, t) in enumerate(zip(xs, params, trials)):
        sc = scenario.replace(gpus=int(n), trials=t)
        within = progress_part(progress, done[i], done[i + 1])
        raw = simulate_trials(sc, p, layout=layouts[t], should_stop=should_stop, components=False, progress=within)
        summaries.append(_summary_columns(raw, p, sc))  # keep the summary, not the trials
    return _result(summaries, xs, "gpus")


def sweep_interval(
    scenario: Scenario,
    intervals_min: Sequence[float] | np.ndarray | None = None,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    segments: int = 1,
) -> SweepResult:
    """The scenario at each checkpoint interval (minutes; default :func:`interval_points`); with the fast tier on,
    at each fast interval (the result's variable is then ``fast_interval_min``).

    Every interval sees the same random draws. When trials x intervals would exceed
    :data:`MAX_ROW_INTERVALS`, the intervals run in groups that each draw the same numbers again, so the
    results are the same and memory stays flat. ``segments``: a preview's (docs/model.md 2.9; the general
    engine only).
    """
    xs = interval_points() if intervals_min is None else np.asarray(intervals_min, dtype=float)
    if window_engine(scenario).key != "renewal":
        variable = "fast_interval_min" if varies_fast_interval(scenario) else "checkpoint_interval_min"
        return _model_sweep(scenario, variable, xs, progress, should_stop, segments=segments)
    base, _ = resolve(scenario)
    layout = layout_for(scenario, base)
    groups = _interval_groups(len(xs), scenario.trials * layout.subwindows)
    params = [replace(base, tau=float(t) / 60.0) for t in xs]
    summaries: list[dict[str, float]] = []
    for g, group in enumerate(groups):
        report = progress_part(progress, g / len(groups), (g + 1) / len(groups))
        raws = simulate_intervals(
            scenario, base, xs[group] / 60.0, layout=layout, progress=report, should_stop=should_stop, components=False
        )
        summaries.extend(_summary_columns(raw, p, scenario) for raw, p in zip(raws, params[group]))
        del raws
    return _result(summaries, xs, "checkpoint_interval_min")


def varies_fast_interval(scenario: Scenario) -> bool:
    """Whether a sweep over intervals varies the fast interval (the fast tier is on) rather than the checkpoint
    (persistent) interval."""
    return scenario.fast_tier_on


def _at_interval(scenario: Scenario, minutes: float) -> Scenario:
    """The scenario with the interval a sweep varies set to ``minutes``: with the fast tier on, the fast
    interval (the persistent interval stays what it is: a whole number of fast intervals, or 'optimal'),
    else the checkpoint (persistent) interval."""
    if varies_fast_interval(scenario):
        assert scenario.tiers is not None
        return scenario.replace(tiers=replace(scenario.tiers, fast_interval_min=float(minutes)))
    return scenario.replace(checkpoint_interval_min=float(minutes))


def at_gpus(scenario: Scenario, gpus: int, *, fixed_pool: bool = False) -> Scenario:
    """The scenario at another GPU count. A finite spare pool keeps its share of the job's nodes (rounded; with
    ``fixed_pool`` its number of nodes; on racks its share of the job's racks, in whole racks, at least one where it
    held one); a shrink floor or a replica larger than the job is brought down to the
    job (whole nodes); everything else is kept."""
    sc = scenario.replace(gpus=gpus)
    sp = scenario.spares
    if sp is None:
        return sc
    gpn = scenario.gpus_per_node
    job = max(gpn, gpus - gpus % gpn)
    min_gpus = None if sp.min_gpus is None else min(sp.min_gpus, gpus)
    replica = min(sp.replica_gpus, job) if sp.recovery_mode == "continue" else sp.replica_gpus
    pool = sp.spare_nodes
    if pool is not None and not fixed_pool and scenario.uses_nvlink and scenario.racks and sc.racks:
        held = pool // scenario.trays_per_rack
        racks = max(1, round(held * sc.racks / scenario.racks)) if held else 0
        pool = racks * scenario.trays_per_rack
    elif pool is not None and not fixed_pool:
        nodes_before = max(1, math.ceil(scenario.gpus / gpn))
        pool = round(pool * math.ceil(gpus / gpn) / nodes_before)
    return sc.replace(spares=replace(sp, spare_nodes=pool, min_gpus=min_gpus, replica_gpus=replica))


def point_trials(scenario: Scenario, max_events: float) -> int:
    """Trials for a sweep point with spares or recovery tiers: as :func:`sweep_gpus` gives them without
    (:func:`_halved_trials`)."""
    return _halved_trials(scenario, resolve(scenario)[0], max_events)


def _model_sweep(
    scenario: Scenario,
    variable: str,
    xs: np.ndarray,
    progress: Callable[[float], None] | None,
    should_stop: Callable[[], bool] | None,
    max_events_per_point: float | None = None,
    fixed_pool: bool = False,
    segments: int = 1,
) -> SweepResult:
    """A sweep of a scenario beyond the renewal engine's (a recovery strategy, spares, a new cluster...): each
    point on the engine the table chooses, those on the general engine stepped together (a sweep over intervals
    of one seed shares its world: common random numbers). Over intervals, the interval varied is the fast one
    when the fast tier is on."""
    points = []
    for x in xs:
        sc = (
            at_gpus(scenario, int(x), fixed_pool=fixed_pool) if variable == "gpus" else _at_interval(scenario, float(x))
        )
        if max_events_per_point is not None:
            sc = sc.replace(trials=point_trials(sc, max_events_per_point))
        # A sweep reports the window, never the days to train (the cost curve simulates those where it can):
        # a point where the job could never finish its training (a million GPUs in a burn-in) still has a window.
        points.append(sc.replace(training=None))
    results = simulate_scenarios(points, progress=progress, should_stop=should_stop, segments=segments)
    summaries = [_summary(res.trials.unplanned, res.goodput, res.expected) for res in results]
    out = _result(summaries, xs, variable)
    if segments > 1:
        out = replace(out, useful_by_stretch=tuple(res.useful_by_stretch for res in results))
    pools = [sc.spares.spare_nodes if sc.spares is not None else None for sc in points]
    if any(p is not None for p in pools):
        out = replace(out, spare_nodes=np.array([math.nan if p is None else float(p) for p in pools]))
    return out


def expected_goodput_vs_interval(scenario: Scenario, intervals_min: np.ndarray) -> np.ndarray:
    """The exact goodput at each checkpoint interval (minutes), on as fine a grid as wanted; with a recovery
    strategy, at each fast interval (fast tier on) where a closed form exists, else NaN; on the general engine
    (spares, a new cluster, tiers with rates that vary), NaN (no closed form)."""
    if window_engine(scenario).key == "general" and not one_tier_closed_form(scenario):
        return np.full(len(np.asarray(intervals_min)), math.nan)
    if scenario.uses_tiers:
        xs = np.asarray(intervals_min, dtype=float)
        first = plan_tiers(_at_interval(scenario, float(xs[0]))) if len(xs) else None
        if first is not None and first.expected() is None:
            return np.full(len(xs), math.nan)  # both tiers restore: no closed form at any interval
        tp = first.params if first is not None else None
        if tp is not None and scenario.fast_tier_on and tp.lam_persistent == 0:
            # Every failure restores from the fast tier: today's formula at each fast interval, in one call.
            return time_fractions(tp.lam_fast, tp.mu, xs / 60.0, tp.c, tp.r_fast, tp.r_planned).useful
        out = []
        for t in xs:
            f = plan_tiers(_at_interval(scenario, float(t))).expected()
            out.append(math.nan if f is None else float(f.useful))
        return np.asarray(out)
    p, _ = resolve(scenario)
    if rates_vary(scenario):
        lams, w = rate_nodes(scenario, p.lam)
        pc = pieces(scenario.rate_profile, scenario.days)
        return np.array([piecewise_fractions(p, t / 60.0, lams, pc).useful @ w for t in np.asarray(intervals_min)])
    taus = np.asarray(intervals_min) / 60.0
    return time_fractions(p.lam, p.mu, taus, p.c, p.r_unplanned, p.r_planned, save_fail=p.save_fail).useful
