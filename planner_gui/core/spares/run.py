"""One run of a scenario with spares (its report and JSON), and the spare-pool sizing: goodput, the chance
a failure finds no spare and the total cost against the number of spare nodes."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import Scenario
from ..params import OptimalIntervals, optimal_intervals, resolve
from ..profiles import is_flat
from ..rates import RatePosterior
from ..results import summarize
from ..sim.capabilities import MAX_GENERAL_POINTS, general_points, meaningless
from ..sim.run import HOURS_KEYS, SPARES_HOURS_KEYS, SimTrials
from .exact import nodes_in_repair_pmf, p_no_spare, recommended_spares, repair_quantile
from .model import Spares, SparesParams, restart_scenario, spares_params

__all__ = [
    "SizingResult",
    "SparesRun",
    "check_spares_fit",
    "run_spares",
    "run_spares_intervals",
    "run_spares_many",
    "sizing",
    "sizing_counts",
    "spares_optimal",
    "spares_to_dict",
]

#: Share of node-losing failures that must find a spare for the pool :func:`recommended_spares` gives.
TARGET = 0.99
#: Trials whose drawn rates average the pool's closed forms over the posterior (rate uncertainty).
POSTERIOR_DRAWS = 64
#: Rough cost of the general engine per point it steps through (interruption, repair or return), seconds.
SECONDS_PER_POINT = 4e-7


def spares_to_dict(sp: Spares) -> dict[str, Any]:
    """The spares inputs as plain JSON values (``spare_nodes`` null: unlimited)."""
    return {
        "spare_nodes": sp.spare_nodes,
        "swap_min": sp.swap_min,
        "repair_hours": dict(sp.repair_hours),
        "repair_sigma": sp.repair_sigma,
        "min_gpus": sp.min_gpus,
        "recovery_mode": sp.recovery_mode,
        "replica_gpus": sp.replica_gpus,
        "continue_stall_min": sp.continue_stall_min,
        "max_replicas_lost": sp.max_replicas_lost,
    }


def expected_points(scenario: Scenario, trials: int | None = None) -> float:
    """Points the general engine steps through for the scenario (its trials, or ``trials``)."""
    sc = scenario if trials is None else scenario.replace(trials=trials)
    return general_points(sc)


def spares_optimal(scenario: Scenario) -> OptimalIntervals:
    """The optimal checkpoint intervals of a scenario with spares: today's, counting only the failures that
    restart the job (in continue mode the others lose no checkpointed work: :func:`.model.restart_scenario`).
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


@dataclass(frozen=True)
class SparesRun:
    """Monte Carlo trials of a scenario with its spares, beside the closed forms of the pool."""

    scenario: Scenario
    spares: Spares
    interval_min: float
    params: SparesParams
    trials: SimTrials

    @property
    def goodput(self) -> np.ndarray:
        return self.trials.hours["useful"] / self.scenario.hours

    def lost_gpu_hours(self) -> np.ndarray:
        return (self.scenario.hours - self.trials.hours["useful"]) * self.scenario.gpus

    @property
    def idle_gpu_hours(self) -> float | None:
        """GPU-hours of the spare pool over the window (every spare is paid for, idle or in repair)."""
        s = self.spares.spare_nodes
        return None if s is None else s * self.scenario.gpus_per_node * self.scenario.hours

    def closed_forms(self) -> tuple[float, float, float] | None:
        """The pool's closed forms (M/G/infinity: the chance a failure finds no spare, the mean and the p95 of the
        nodes in repair) where they hold: a pool in its steady state, so not over rates that change in the
        window nor from a new cluster's empty pool (None there). With rate uncertainty, their average over the
        posterior (the first :data:`POSTERIOR_DRAWS` trials' drawn rates, each a steady state of its own)."""
        sc, p = self.scenario, self.params
        if sc.new_cluster or (sc.rate_profile is not None and not is_flat(sc.rate_profile, sc.days)):
            return None
        posterior = RatePosterior.of(sc.components)
        if not (sc.rate_uncertainty and posterior.uncertain.any()):
            return p_no_spare(p), p.mean_nodes_in_repair, repair_quantile(p, 0.95)
        draws = posterior.draw(sc.seed, min(sc.trials, POSTERIOR_DRAWS)) * sc.gpus
        ps = [dataclasses.replace(p, rates=d) for d in draws]
        pmfs = [nodes_in_repair_pmf(q) for q in ps]
        size = max(len(x) for x in pmfs)
        mixed = np.mean([np.pad(x, (0, size - len(x))) for x in pmfs], axis=0)
        p95 = float(np.searchsorted(np.cumsum(mixed), 0.95 * (1 - 1e-12)))
        # The chance a failure finds no spare, over the posterior: each draw's weighted by its node-loss rate.
        weights = np.array([float(q.node_loss_rates.sum()) for q in ps])
        chances = np.array([p_no_spare(q) for q in ps])
        share = float((weights * chances).sum() / weights.sum()) if weights.sum() > 0 else 0.0
        return share, float(np.mean([q.mean_nodes_in_repair for q in ps])), p95

    def recommended(self, closed_form: bool) -> int:
        """The pool in which 99 % of node-losing failures find their spares: M/G/infinity's where it holds,
        else the simulated failures' (the nodes in repair just after each, over the trials, with the rates
        as they change and the pool's start), so that it never contradicts the simulated chance of none."""
        simulated = None if closed_form else self.trials.pool_for(TARGET)
        return recommended_spares(self.params, TARGET) if simulated is None else simulated

    def spares_json(self) -> dict[str, Any]:
        closed = self.closed_forms()
        return {
            "p_no_spare": self.trials.p_no_spare(),
            "p_no_spare_expected": None if closed is None else closed[0],
            "nodes_in_repair": {
                "mean": float(self.trials.nodes_in_repair.mean()),
                "p95": self.trials.repair_quantile(0.95),
                "mean_expected": None if closed is None else closed[1],
                "p95_expected": None if closed is None else closed[2],
            },
            "idle_gpu_hours": self.idle_gpu_hours,
            "idle_cost_usd": None
            if self.idle_gpu_hours is None
            else self.idle_gpu_hours * self.scenario.gpu_hour_cost_usd,
            "recommended_for_99pct": self.recommended(closed is not None),
            "recommended_simulated": closed is None and self.trials.pool_for(TARGET) is not None,
            "node_failures": summarize(self.trials.node_failures).to_dict(),
            "continued": float((self.trials.unplanned - self.trials.restarts).mean())
            if self.trials.restarts is not None
            else 0.0,
            "inputs": spares_to_dict(self.spares),
        }

    def to_json_dict(self, base: dict[str, Any]) -> dict[str, Any]:
        """Today's report (``base``, from :meth:`.results.SimulationResult.to_json_dict`) with the Monte Carlo
        numbers of this model in place of today's, the two new hours and the ``spares`` section. The exact
        expectations of today's model do not hold here: those keys are null."""
        sc, t = self.scenario, self.trials
        lost = self.lost_gpu_hours()
        hours = {k: float(t.hours[k].mean()) for k in HOURS_KEYS}
        for k in SPARES_HOURS_KEYS:
            if self.applies(k):
                hours[k] = float(t.hours[k].mean())
        out = dict(base)
        out.update(
            {
                "interruptions": summarize(t.unplanned).to_dict(),
                "planned_interruptions": summarize(t.planned).to_dict(),
                "goodput": summarize(self.goodput).to_dict(),
                "goodput_expected": None,
                "goodput_expected_at_optimal_interval": None,
                "hours": hours,
                "hours_expected": None,
                "lost_gpu_hours": summarize(lost).to_dict(),
                "lost_cost_usd": float(lost.mean() * sc.gpu_hour_cost_usd),
                "spares": self.spares_json(),
            }
        )
        return out

    def applies(self, key: str) -> bool:
        """Whether an hours key of this model applies to these spares (it is reported only then)."""
        sp = self.spares
        if key == "waiting_for_spares":
            return sp.recovery_mode == "restart" and sp.spare_nodes is not None
        return sp.recovery_mode == "continue" or (sp.min_gpus is not None and sp.spare_nodes is not None)


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
    """Spare counts to try: from 0 to well past the pool that covers 99.9 % of failures, whole numbers."""
    _, interval = resolve(scenario, spares_optimal(scenario.replace(spares=spares)))
    p = spares_params(scenario, spares.replace_spares(None), interval)
    # Rates that change (a burn-in) need the pool of their highest rate in the window, not of the base rates.
    peak = max((m for d, m in scenario.rate_profile or () if d < scenario.days), default=1.0)
    p = dataclasses.replace(p, rates=p.rates * max(peak, 1.0))
    top = max(4, math.ceil(1.25 * recommended_spares(p, 0.999)))
    counts = np.round(np.linspace(0, top, points)).astype(int)
    # The pool that meets the target is always one of them.
    return np.unique(np.append(counts, recommended_spares(p, TARGET)))


@dataclass(frozen=True)
class SizingResult:
    """Per spare count: goodput (mean, sem), the chance a failure finds no spare (simulated and exact), the
    job's lost GPU-hours, the pool's GPU-hours and the total cost; the cheapest pool and the smallest that
    meets the target (None if no count tried does)."""

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
    for s, p, t in zip(counts, params, runs):
        useful = t.hours["useful"]
        lost = float(((scenario.hours - useful) * scenario.gpus).mean())
        pool = int(s) * scenario.gpus_per_node * scenario.hours
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
                (lost + pool) * scenario.gpu_hour_cost_usd,
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
        cheapest=int(counts[int(np.argmin(cost))]),
        meets_target=int(counts[ok[0]]) if len(ok) else None,
        target=TARGET,
        recommended=recommended_spares(p_any, TARGET) if closed else done[-1].recommended(False),
    )
