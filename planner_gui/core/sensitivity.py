"""Which lever buys the most: the effect of one fixed improvement of each input, from the exact model.

Each lever changes one input of the scenario by a factor (halving a time or a rate by default) and
the exact expectations (:mod:`.exact`) give the goodput before and after; with a training compute
(:class:`.model.Training`) also the days to train and their cost, without one the cost of the GPU-hours
not spent training in the window. Exact expectations take well under a millisecond per lever, so the
window recomputes the chart live as the sliders move.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .exact import time_fractions
from .model import OPTIMAL, Scenario
from .params import resolve

__all__ = ["DEFAULT_FACTOR", "Effect", "Lever", "expected_goodput", "levers", "sensitivity"]

#: The improvement each lever applies by default: halve the time or the rate.
DEFAULT_FACTOR = 0.5


@dataclass(frozen=True)
class Lever:
    """One input a planner can improve, and how a factor changes it."""

    name: str
    change: str  # what the factor does, in words ("detection x0.5")
    apply: Callable[[Scenario], Scenario]


@dataclass(frozen=True)
class Effect:
    """What a lever buys: differences after minus before (a better goodput is a positive delta; a
    saving is a negative cost delta). ``days_delta`` is None without a training compute."""

    lever: str
    change: str
    goodput_delta: float
    days_delta: float | None
    cost_delta_usd: float

    def to_dict(self) -> dict[str, object]:
        return {
            "lever": self.lever,
            "change": self.change,
            "goodput_delta": self.goodput_delta,
            "days_delta": self.days_delta,
            "cost_delta_usd": self.cost_delta_usd,
        }


def expected_goodput(sc: Scenario) -> float:
    """The exact expected goodput (with 'optimal', at Daly's interval for this very scenario)."""
    p, _ = resolve(sc)
    return float(time_fractions(p.lam, p.mu, p.tau, p.c, p.r_unplanned, p.r_planned).useful)


def _days_and_cost(sc: Scenario, goodput: float) -> tuple[float | None, float]:
    """Expected days to train (work / goodput, renewal theory's leading term) and their cost; without a
    training compute, no days and the cost of the window's GPU-hours not spent training."""
    if sc.training is None:
        return None, sc.gpus * sc.hours * (1.0 - goodput) * sc.gpu_hour_cost_usd
    if goodput <= 0:
        return math.inf, math.inf
    hours = sc.training.gpu_hours / sc.gpus / goodput
    return hours / 24.0, hours * sc.gpus * sc.gpu_hour_cost_usd


def _fmt_factor(f: float) -> str:
    return f"x{f:.3g}"


def levers(sc: Scenario, factor: float = DEFAULT_FACTOR) -> list[Lever]:
    """The levers of ``sc``: detection, restart, checkpoint write, planned interruptions, every
    category's failure rate and all rates together; the checkpoint interval when it is not already
    optimal; the GPU count when a training compute makes its trade-off (fewer failures, slower run) real.
    """
    x = _fmt_factor(factor)

    def times(field: str) -> Callable[[Scenario], Scenario]:
        return lambda s: s.replace(**{field: getattr(s, field) * factor})

    def rates(category: str | None) -> Callable[[Scenario], Scenario]:
        return lambda s: s.scale_rates(factor, category)

    def optimal(s: Scenario) -> Scenario:
        return s.replace(checkpoint_interval_min=OPTIMAL)

    def gpus(s: Scenario) -> Scenario:
        return s.replace(gpus=max(1, round(s.gpus * factor)))

    out = [
        Lever("detection", f"detection {x}", times("detect_min")),
        Lever("restart", f"restart {x}", times("restart_min")),
        Lever("checkpoint write", f"blocking write {x}", times("checkpoint_write_s")),
        Lever("planned interruptions", f"planned per day {x}", times("planned_per_day")),
        Lever("all failure rates", f"every rate {x}", rates(None)),
    ]
    out += [Lever(f"{cat} failures", f"{cat} rates {x}", rates(cat)) for cat in sc.categories]
    if not sc.uses_optimal_interval:
        out.append(Lever("checkpoint interval", "the optimal interval (Daly)", optimal))
    if sc.training is not None:
        out.append(Lever("GPU count", f"GPUs {x}", gpus))
    return out


def sensitivity(sc: Scenario, factor: float = DEFAULT_FACTOR) -> list[Effect]:
    """The effect of each lever, the biggest saving first (with a training compute: the most dollars
    saved; without: the most goodput gained). Levers that change nothing are left out."""
    if not (factor > 0 and math.isfinite(factor)):
        raise ValueError("the factor must be a positive number")
    base_g = expected_goodput(sc)
    base_days, base_cost = _days_and_cost(sc, base_g)
    effects = []
    for lever in levers(sc, factor):
        changed = lever.apply(sc)
        if changed == sc:
            continue
        g = expected_goodput(changed)
        days, cost = _days_and_cost(changed, g)
        days_delta = None if days is None or base_days is None else days - base_days
        effects.append(Effect(lever.name, lever.change, g - base_g, days_delta, cost - base_cost))
    key = (lambda e: e.cost_delta_usd) if sc.training is not None else (lambda e: -e.goodput_delta)
    return sorted(effects, key=key)
