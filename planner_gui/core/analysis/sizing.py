"""Runs of scenarios with spares (each a :class:`.spares_result.SparesRun`), and the spare-pool sizing: goodput,
the chance a failure finds no spare and the total cost against the number of spare nodes."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..model.scenario import Scenario
from ..model.spares import Spares, restart_scenario, spares_params
from ..sim.capabilities import MAX_GENERAL_POINTS, general_points, meaningless
from ..theory.params import OptimalIntervals, optimal_intervals, resolve
from ..theory.racks import move_shares
from ..theory.spares import p_no_spare, recommended_spares
from .spares_result import TARGET, SparesRun

__all__ = [
    "SizingResult",
    "check_spares_fit",
    "run_spares",
    "run_spares_intervals",
    "run_spares_many",
    "sizing",
    "sizing_counts",
    "spares_optimal",
]

#: Rough cost of the general engine per point it steps through (interruption, repair or return), seconds.
SECONDS_PER_POINT = 4e-7


def expected_points(scenario: Scenario, trials: int | None = None) -> float:
    """Points the general engine steps through for the scenario (its trials, or ``trials``)."""
    sc = scenario if trials is None else scenario.replace(trials=trials)
    return general_points(sc)


def spares_optimal(scenario: Scenario) -> OptimalIntervals:
    """The optimal checkpoint intervals of a scenario with spares: today's, counting only the failures that
    restart the job (in continue mode the others lose no checkpointed work: :func:`.spares.restart_scenario`).
    With 'optimal', the spares model checkpoints at the Daly interval of these."""
    return optimal_intervals(restart_scenario(scenario))


def check_spares_fit(scenario: Scenario, spares: Spares) -> None:
    """Raise ValueError when the spares cannot be simulated for the scenario (one line, naming the input): a
    value out of range, a setting that means nothing, or a run too large."""
    spares.validate(scenario)
    sc = scenario.replace(spares=spares)
    why = meaningless(sc)
    if why is not None:
        raise ValueError(why.removeprefix("spares."))
    n = general_points(sc)
    if n > MAX_GENERAL_POINTS:
        raise ValueError(
            f"spares: about {n:.3g} interruptions and repairs to simulate, over the limit of {MAX_GENERAL_POINTS:.0g}; "
            "use fewer trials, GPUs or days"
        )


def run_spares(
    scenario: Scenario,
    spares: Spares,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SparesRun:
    return run_spares_many([(scenario, spares)], progress=progress, should_stop=should_stop)[0]


def run_spares_many(
    runs: Sequence[tuple[Scenario, Spares]],
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[SparesRun]:
    """:func:`run_spares` of each ``(scenario, spares)`` on the general engine, stepped together (a sweep's points
    cost about one run's steps); each run's numbers are those it gives alone."""
    from ..sim.run import simulate_windows
    from ..sim.setup import prepare

    scs = []
    for scenario, spares in runs:
        check_spares_fit(scenario, spares)
        scs.append(scenario.replace(spares=spares))
    setups = [prepare(sc) for sc in scs]
    trials = simulate_windows(
        [(su.model, sc.trials, sc.seed) for su, sc in zip(setups, scs)], progress=progress, should_stop=should_stop
    )
    out = []
    for sc, su, t in zip(scs, setups, trials):
        sp = sc.spares
        assert sp is not None
        out.append(SparesRun(sc, sp, su.persistent_min, spares_params(sc, sp, su.persistent_min), t))
    return out


def run_spares_intervals(
    scenario: Scenario,
    spares: Spares,
    intervals_min: Sequence[float] | np.ndarray,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[SparesRun]:
    """:func:`run_spares` at each checkpoint interval (minutes), stepped together: one seed's world does not depend
    on the interval, so every interval sees the same failures and repairs (common random numbers)."""
    runs = [(scenario.replace(checkpoint_interval_min=float(x)), spares) for x in intervals_min]
    return run_spares_many(runs, progress=progress, should_stop=should_stop)


# -- spare-pool sizing ------------------------------------------------------------------------------------


def sizing_counts(scenario: Scenario, spares: Spares, points: int = 21) -> np.ndarray:
    """Spare counts to try: from 0 to well past the pool that covers 99.9 % of failures, whole numbers (on racks,
    whole racks of nodes: the pool serves nothing less; the bound then takes every tray failure as a move)."""
    _, interval = resolve(scenario, spares_optimal(scenario.replace(spares=spares)))
    p = spares_params(scenario, spares.replace_spares(None), interval)
    # Rates that change (a burn-in) need the pool of their highest rate in the window, not of the base rates.
    peak = max((m for d, m in scenario.rate_profile or () if d < scenario.days), default=1.0)
    p = dataclasses.replace(p, rates=p.rates * max(peak, 1.0))
    top = max(4, math.ceil(1.25 * recommended_spares(p, 0.999)))
    counts = np.round(np.linspace(0, top, points)).astype(int)
    # The pool that meets the target is always one of them.
    counts = np.unique(np.append(counts, recommended_spares(p, TARGET)))
    if scenario.uses_nvlink:
        q = scenario.trays_per_rack
        if scenario.rack_repairs_matter:  # (warm spares cover most tray failures: the moves' own bound, in racks)
            p = dataclasses.replace(p, rates=p.rates * move_shares(scenario, spares))
            top = max(4 * q, math.ceil(1.25 * recommended_spares(p, 0.999)))
            counts = np.round(np.linspace(0, top, points)).astype(int)
            counts = np.unique(np.append(counts, recommended_spares(p, TARGET)))
        counts = np.unique(-(-counts // q) * q)
    return counts


@dataclass(frozen=True)
class SizingResult:
    """Per spare count: goodput (mean, sem), the chance a failure finds no spare (simulated and exact), the
    job's lost GPU-hours, the pool's GPU-hours, the pool's cost as priced and the total cost (the lost GPU-hours at
    the price plus the pool's cost); the cheapest pool and the smallest that meets the target (None if no count
    tried does)."""

    spare_nodes: np.ndarray
    goodput: np.ndarray
    goodput_sem: np.ndarray
    p_no_spare: np.ndarray
    p_no_spare_expected: np.ndarray
    waiting_hours: np.ndarray
    reduced_hours: np.ndarray  # compute hours lost to running short (replicas out, or shrunk)
    lost_gpu_hours: np.ndarray
    spare_gpu_hours: np.ndarray
    total_cost_usd: np.ndarray
    #: The pool's cost over the window as priced (its price's share, its rent, or its GPU-hours at the price).
    pool_cost_usd: np.ndarray
    cheapest: int
    meets_target: int | None
    target: float
    recommended: int

    def to_csv(self) -> str:
        cols = (
            "spare_nodes",
            "goodput_mean",
            "goodput_sem",
            "p_no_spare",
            "p_no_spare_expected",
            "waiting_for_spares_hours",
            "reduced_throughput_hours",
            "lost_gpu_hours",
            "spare_gpu_hours",
            "pool_cost_usd",
            "total_cost_usd",
            "mark",
        )
        lines = [",".join(cols)]
        for i, s in enumerate(self.spare_nodes):
            marks = []
            if s == self.cheapest:
                marks.append("cheapest")
            if self.meets_target is not None and s == self.meets_target:
                marks.append(f"{self.target:.0%} find a spare")
            vals = (
                self.goodput[i],
                self.goodput_sem[i],
                self.p_no_spare[i],
                self.p_no_spare_expected[i],
                self.waiting_hours[i],
                self.reduced_hours[i],
                self.lost_gpu_hours[i],
                self.spare_gpu_hours[i],
                self.pool_cost_usd[i],
                self.total_cost_usd[i],
            )
            lines.append(f"{int(s)}," + ",".join(f"{v:.10g}" for v in vals) + "," + "; ".join(marks))
        return "\n".join(lines) + "\n"


def sizing(
    scenario: Scenario,
    spares: Spares,
    counts: Sequence[int] | np.ndarray,
    *,
    trials: int | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SizingResult:
    """Simulate every spare count on the same draws (common random numbers) and cost each."""
    counts = np.asarray(sorted({int(c) for c in counts}), dtype=int)
    n = scenario.trials if trials is None else trials
    _, interval = resolve(scenario, spares_optimal(scenario.replace(spares=spares)))
    base = scenario.replace(trials=n)
    done = run_spares_many(
        [(base, spares.replace_spares(int(c))) for c in counts], progress=progress, should_stop=should_stop
    )
    params = [r.params for r in done]
    runs = [r.trials for r in done]
    # M/G/infinity where it holds; else (rates that change, a new cluster's empty pool) the simulated figures.
    closed = done[0].closed_forms() is not None
    rows = []
    warm = scenario.warm_spare_gpus * scenario.hours * scenario.gpu_hour_cost_usd
    for s, p, t in zip(counts, params, runs):
        useful = t.hours["useful"]
        lost = float(((scenario.hours - useful) * scenario.gpus).mean())
        pool = int(s) * scenario.gpus_per_node * scenario.hours
        priced = spares.replace_spares(int(s)).pool_cost_per_hour(scenario.gpus_per_node, scenario.gpu_hour_cost_usd)
        rows.append(
            (
                float(useful.mean() / scenario.hours),
                float(useful.std(ddof=1) / math.sqrt(n) / scenario.hours) if n > 1 else 0.0,
                t.p_no_spare(),
                p_no_spare(p) if closed else math.nan,
                float(t.hours["waiting_for_spares"].mean()),
                float(t.hours["reduced_throughput"].mean()),
                lost,
                pool,
                # (with the racks' warm spares, the same at every pool: what the setup holds in all)
                lost * scenario.gpu_hour_cost_usd + priced * scenario.hours + warm,
                priced * scenario.hours,
            )
        )
    a = np.array(rows)
    cost = a[:, 8]
    ok = np.flatnonzero(a[:, 3 if closed else 2] <= 1.0 - TARGET + 1e-15)
    p_any = spares_params(scenario, spares.replace_spares(None), interval)
    return SizingResult(
        spare_nodes=counts,
        goodput=a[:, 0],
        goodput_sem=a[:, 1],
        p_no_spare=a[:, 2],
        p_no_spare_expected=a[:, 3],
        waiting_hours=a[:, 4],
        reduced_hours=a[:, 5],
        lost_gpu_hours=a[:, 6],
        spare_gpu_hours=a[:, 7],
        total_cost_usd=cost,
        pool_cost_usd=a[:, 9],
        cheapest=int(counts[int(np.argmin(cost))]),
        meets_target=int(counts[ok[0]]) if len(ok) else None,
        target=TARGET,
        recommended=recommended_spares(p_any, TARGET) if closed else done[-1].recommended(False),
    )
