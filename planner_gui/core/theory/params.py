"""A scenario's inputs in the engine's units (hours), with the checkpoint interval resolved."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..model.scenario import OPTIMAL, Scenario
from ..model.specs import MAX_INTERVAL_MIN, MIN_INTERVAL_MIN, clamp_interval
from .exact import daly_interval, exact_optimal_interval, young_interval
from .renewal import window_rates

__all__ = [
    "MAX_INTERVAL_MIN",
    "MIN_INTERVAL_MIN",
    "OptimalIntervals",
    "Params",
    "daly_minutes",
    "optimal_intervals",
    "resolve",
]


@dataclass(frozen=True)
class Params:
    """Rates per hour and times in hours: what :mod:`.engine` and :mod:`.exact` consume."""

    lam: float  # unplanned interruptions per hour, whole job
    mu: float  # planned interruptions per hour
    hours: float  # window length
    tau: float  # compute between checkpoints
    c: float  # blocking checkpoint write
    r_unplanned: float  # detect + restart
    r_planned: float  # restart
    save_fail: float = 0.0  # the chance a save fails (docs/model.md 2.1)

    @property
    def fraction_args(self) -> tuple[float, ...]:
        """What :func:`.exact.time_fractions` takes, in its order (no restore pending: one tier)."""
        return (self.lam, self.mu, self.tau, self.c, self.r_unplanned, self.r_planned, 0.0, self.save_fail)


@dataclass(frozen=True)
class OptimalIntervals:
    """Optimal compute time between checkpoints, minutes."""

    young: float
    daly: float
    exact: float

    def to_dict(self) -> dict[str, float]:
        return {"young": self.young, "daly": self.daly, "exact": self.exact}


def optimal_intervals(scenario: Scenario) -> OptimalIntervals:
    """Young's, Daly's and the exact model's optimal intervals, clamped to the allowed range
    (:func:`_optimal_intervals`), remembered for the inputs they depend on: a sweep over intervals, or over
    a recovery strategy's intervals, finds them once."""
    key = scenario.replace(
        name="", gpu_hour_cost_usd=0.0, trials=1, seed=0, checkpoint_interval_min=OPTIMAL, tiers=None
    )
    try:
        hash(key)
    except TypeError:  # pragma: no cover - every part of a scenario is immutable
        return _optimal_intervals(scenario)
    return _cached_optimal_intervals(key)


@functools.lru_cache(maxsize=256)
def _cached_optimal_intervals(scenario: Scenario) -> OptimalIntervals:
    return _optimal_intervals(scenario)


def _optimal_intervals(scenario: Scenario) -> OptimalIntervals:
    """Young's, Daly's and the exact model's optimal intervals, clamped to the allowed range.

    Young and Daly use M = the cluster's mean time between unplanned interruptions; the exact optimum
    maximises :func:`.exact.time_fractions` and so also accounts for planned interruptions and restarts.
    Without unplanned interruptions nothing is ever lost, and all three are the longest interval; with
    free checkpoints (and some failures, however rare) all three are the shortest.
    """
    scenario = window_rates(scenario)  # (a new cluster's node lives: their mean rate over the window)
    lam = scenario.failure_rate_per_hour
    if lam == 0:
        return OptimalIntervals(MAX_INTERVAL_MIN, MAX_INTERVAL_MIN, MAX_INTERVAL_MIN)
    m_min = scenario.cluster_mtbf_hours * 60.0  # inf for a subnormal rate: the formulas take it
    c_min = scenario.write_s / 60.0  # from storage when the scenario has a storage section
    young = clamp_interval(float(young_interval(c_min, m_min)))
    daly = daly_minutes(scenario)
    if c_min == 0:
        exact = MIN_INTERVAL_MIN
    else:
        exact = clamp_interval(
            60.0
            * exact_optimal_interval(
                lam,
                scenario.planned_per_day / 24.0,
                c_min / 60.0,
                scenario.recovery_min / 60.0,
                scenario.restart_at_size_min / 60.0,
                (MIN_INTERVAL_MIN / 60.0, MAX_INTERVAL_MIN / 60.0),
                scenario.save_fail_p,
            )
        )
    return OptimalIntervals(young, daly, exact)


def daly_minutes(scenario: Scenario) -> float:
    """Daly's optimal interval for the scenario, minutes, clamped to the allowed range (the longest
    when there are no unplanned interruptions; on a new cluster with node lives, at their mean rate over the
    window)."""
    scenario = window_rates(scenario)
    if scenario.failure_rate_per_hour == 0:
        return MAX_INTERVAL_MIN
    c_min = scenario.write_s / 60.0  # from storage when the scenario has a storage section
    return clamp_interval(float(daly_interval(c_min, scenario.cluster_mtbf_hours * 60.0)))


def resolve(scenario: Scenario, optimal: OptimalIntervals | None = None) -> tuple[Params, float]:
    """The scenario in hours, and the checkpoint interval used (minutes; Daly's when 'optimal')."""
    if scenario.uses_optimal_interval:
        interval = optimal.daly if optimal is not None else daly_minutes(scenario)
    else:
        interval = float(scenario.checkpoint_interval_min)
    params = Params(
        lam=scenario.failure_rate_per_hour,
        mu=scenario.planned_per_day / 24.0,
        hours=scenario.hours,
        tau=interval / 60.0,
        c=scenario.write_s / 3600.0,
        r_unplanned=scenario.recovery_min / 60.0,
        r_planned=scenario.restart_at_size_min / 60.0,
        save_fail=scenario.save_fail_p,
    )
    return params, interval
