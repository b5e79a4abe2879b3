"""A scenario made ready for the general engine: its checkpoint intervals resolved, in the engine's units.

"optimal" intervals follow the failures that restart the job: in continue mode the failures the job continues
after lose no checkpointed work, so only the others count (:func:`..model.spares.restart_scenario`). With a
recovery strategy the two tiers' intervals are :func:`.tiers_run.plan_tiers`'s for those failures; without,
Daly's interval for them. Rates that vary (a profile, rate uncertainty) do not move the intervals: they are the
scenario's base rates' (README, "The model").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.scenario import Scenario
from ..model.spares import restart_scenario
from ..theory.params import OptimalIntervals, optimal_intervals, resolve
from .model import SimModel, sim_model
from .tiers_run import TierPlan, plan_tiers

__all__ = ["Setup", "prepare"]


@dataclass(frozen=True)
class Setup:
    """The intervals a scenario runs at (minutes; ``fast_min`` None with the fast tier off), its tier plan (with a
    recovery strategy), the optimal intervals of one blocking checkpoint, and the model in the engine's units."""

    scenario: Scenario
    fast_min: float | None
    persistent_min: float
    tier_plan: TierPlan | None
    optimal: OptimalIntervals
    model: SimModel


def prepare(scenario: Scenario, *, trials: int | None = None) -> Setup:
    """Resolve the scenario's intervals and build its model (``trials``: how many trials' rates to draw)."""
    base = restart_scenario(scenario)
    optimal = optimal_intervals(base)
    if scenario.uses_tiers:
        plan = plan_tiers(base)
        fast, persistent = plan.fast_min, plan.persistent_min
    else:
        plan = None
        fast, persistent = None, resolve(base, optimal)[1]
    return Setup(scenario, fast, persistent, plan, optimal, sim_model(scenario, fast, persistent, trials=trials))
