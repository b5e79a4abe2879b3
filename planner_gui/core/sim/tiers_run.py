"""A scenario with a recovery strategy (:attr:`..model.scenario.Scenario.tiers`): its intervals resolved, simulated,
and its exact expectations where a closed form exists (:func:`..theory.tiers.expected_fractions`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..model.scenario import OPTIMAL, Scenario, Tiers
from ..model.specs import MAX_INTERVAL_MIN, clamp_interval
from ..model.tiers import TierParams, persistent_multiple, scope_of
from ..theory.exact import TimeFractions, daly_interval, young_interval
from ..theory.tiers import TierIntervals, expected_fractions, optimal_tier_intervals, tier_params, tier_rates
from ..util.progress import progress_part
from .tiers import TierTrials, simulate_tiers

__all__ = ["TierPlan", "plan_tiers", "simulate_plan", "simulate_plans", "tiers_of"]


def tiers_of(scenario: Scenario) -> Tiers:
    """The scenario's strategy (today's single blocking checkpoint when it has none)."""
    return scenario.tiers if scenario.tiers is not None else Tiers()


@dataclass(frozen=True)
class TierPlan:
    """The intervals a scenario's strategy uses and the model in hours."""

    scenario: Scenario
    tiers: Tiers
    #: Compute between fast snapshots, minutes (None: the fast tier is off).
    fast_min: float | None
    #: Compute between persistent checkpoints, minutes (``k`` fast intervals with the fast tier on).
    persistent_min: float
    optimal: TierIntervals
    params: TierParams

    @property
    def k(self) -> int:
        return self.params.k

    @property
    def upload_every(self) -> int:
        """Uploads start at every ``q``-th persistent point (one at a time: the points an upload still
        running skips)."""
        return self.params.skip

    @property
    def fast_optimum_is_formulas(self) -> bool:
        """Whether the fast optimum is only the fast tier's formula's: where both tiers restore and uploads take
        time, the fast interval also sets how often uploads start, which moves a restore from storage's loss
        and which the formula leaves out (docs/tiers.md, "Optimal intervals")."""
        p = self.params
        return p.lam_fast > 0 and p.lam_persistent > 0 and self.tiers.persistent_upload_min > 0

    @property
    def persistent_optimum_is_formulas(self) -> bool:
        """Whether the persistent optimum is Young's rule rather than an exact optimum: with the fast tier on and
        a persistent stall of its own at each point (:func:`..theory.tiers.optimal_tier_intervals`)."""
        return self.fast_min is not None and self.params.c_point > 0

    @property
    def persistent_unneeded(self) -> bool:
        """Whether persistent checkpoints only cost their stall here: the fast tier on, a persistent stall, and no
        failure restoring from storage: the model never needs them (their optimum is unbounded), and the interval
        in use is the stated policy :data:`..theory.tiers.UNNEEDED_PERSISTENT_MIN` (daily)."""
        return self.persistent_optimum_is_formulas and self.params.lam_persistent == 0

    @property
    def optimal_persistent_min(self) -> float:
        """The optimal persistent interval beside the fast interval in use, in whole fast intervals (minutes)."""
        if self.fast_min is None:
            return self.optimal.persistent_min
        target = self.optimal.persistent_for(self.fast_min, self.tiers.fast_stall_s / 60.0)
        return self.fast_min * persistent_multiple(target, self.fast_min)

    def persistent_young_daly(self) -> tuple[float, float] | None:
        """Young's and Daly's intervals for the persistent tier's own stall with the fast tier on (minutes),
        against the running time between restores from storage (:func:`..theory.tiers.optimal_tier_intervals`); None
        without such a stall or such restores."""
        p, m_min = self.params, self.optimal.storage_mtbf_min
        if not self.persistent_optimum_is_formulas or p.lam_persistent == 0 or m_min is None:
            return None
        c_min = p.c_point * 60.0
        return clamp_interval(float(young_interval(c_min, m_min))), clamp_interval(float(daly_interval(c_min, m_min)))

    def expected(self) -> TimeFractions | None:
        """The exact long-run fractions where a closed form exists (every failure restoring from one tier);
        None otherwise."""
        return expected_fractions(self.params)

    def fast_young_daly(self) -> tuple[float, float] | None:
        """Young's and Daly's intervals for the fast tier (minutes): the fast stall against the mean time
        between all unplanned failures (they apply when every failure restores from the fast tier)."""
        if self.fast_min is None:
            return None
        lam = self.params.lam_fast + self.params.lam_persistent
        if lam == 0:
            return MAX_INTERVAL_MIN, MAX_INTERVAL_MIN
        c_min, m_min = self.tiers.fast_stall_s / 60.0, 60.0 / lam
        return clamp_interval(float(young_interval(c_min, m_min))), clamp_interval(float(daly_interval(c_min, m_min)))

    def restoring(self) -> dict[str, str]:
        """Each component's scope and the tier its failures restore from."""
        rates = tier_rates(self.scenario, self.tiers)
        return {
            c.name: f"{scope_of(c)}: {'fast' if fast else 'persistent'}"
            for c, fast in zip(self.scenario.components, rates.fast_components)
        }

    def to_json_dict(self) -> dict[str, Any]:
        """The ``tiers`` part of ``planner-gui run --json``."""
        yd = self.fast_young_daly()
        p = self.params
        return {
            "fast_enabled": self.tiers.fast_enabled,
            "fast_interval_min": self.fast_min,
            "persistent_interval_min": self.persistent_min,
            "persistent_every_fast": self.k if self.fast_min is not None else None,
            "upload_every_checkpoint": self.upload_every,
            "optimal_method": self.optimal.method,
            "fast_young_min": None if yd is None else yd[0],
            "fast_daly_min": None if yd is None else yd[1],
            "unplanned_per_hour": {"fast": p.lam_fast, "persistent": p.lam_persistent},
            "scopes": self.restoring(),
        }


def plan_tiers(scenario: Scenario) -> TierPlan:
    """Resolve the scenario's intervals: "optimal" means :func:`..theory.tiers.optimal_tier_intervals`; with the fast
    tier on, a persistent interval given in minutes is rounded to a whole number of fast intervals."""
    tiers = tiers_of(scenario)
    optimal = optimal_tier_intervals(scenario, tiers)
    if tiers.fast_enabled:
        fast = optimal.fast_min if tiers.fast_interval_min == OPTIMAL else float(tiers.fast_interval_min)
        if scenario.checkpoint_interval_min == OPTIMAL:  # beside the fast interval in use, which may be another
            persistent = optimal.persistent_for(fast, tiers.fast_stall_s / 60.0)
        else:
            persistent = float(scenario.checkpoint_interval_min)
        tp = tier_params(scenario, tiers, fast, persistent)
        return TierPlan(scenario, tiers, fast, fast * tp.k, optimal, tp)
    if scenario.checkpoint_interval_min == OPTIMAL:
        persistent = optimal.persistent_min
    else:
        persistent = float(scenario.checkpoint_interval_min)
    tp = tier_params(scenario, tiers, persistent, persistent)
    return TierPlan(scenario, tiers, None, persistent, optimal, tp)


def simulate_plan(
    plan: TierPlan,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TierTrials:
    """Simulate the plan's scenario (``scenario.trials`` windows)."""
    fast = plan.fast_min if plan.fast_min is not None else plan.persistent_min
    return simulate_tiers(
        plan.scenario, plan.tiers, fast, plan.persistent_min, progress=progress, should_stop=should_stop
    )


def simulate_plans(
    plans: Sequence[TierPlan],
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[TierTrials]:
    """:func:`simulate_plan` of each plan (a sweep's points), one after the other, on the vectorized two-tier engine
    (plans in its domain: no persistent stall beside the fast tier; :mod:`..sim.capabilities`)."""
    out = []
    for n, plan in enumerate(plans):
        part = progress_part(progress, n / len(plans), (n + 1) / len(plans))
        out.append(simulate_plan(plan, progress=part, should_stop=should_stop))
    return out
