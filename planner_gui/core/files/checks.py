"""What a whole scenario may run, checked once its fields are read (:mod:`.scenario_io` calls these): the size
of its simulation (from the one table of engines, :mod:`.sim.capabilities`), its spares and its fast tier's
replicas against the job, the storage write, and several runs that fit alone but not together. Each refusal is
one :class:`ScenarioError` line naming the field."""

from __future__ import annotations

import math

from ..model.scenario import Scenario
from ..model.specs import LIMITS, MAX_TOTAL_EVENTS, MAX_TOTAL_PIECES
from ..sim.capabilities import (
    MAX_GENERAL_POINTS,
    general_points,
    general_steps_error,
    meaningless,
    slow_dominates,
    window_engine,
)
from ..theory.profiles import pieces
from ..theory.rates import mean_job_rate
from ..util import fmt
from ..util.fmt import clean
from ..util.fmt import number as fmt_number

__all__ = [
    "ScenarioError",
    "check_size",
    "check_spares",
    "check_storage_write",
    "check_tiers_fit",
    "check_together",
    "size_share",
    "smallest_gpu_mtbf_hours",
]


class ScenarioError(ValueError):
    """A scenario document or value is invalid; ``str(err)`` is one line for the user."""


def size_share(scenario: Scenario) -> float:
    """The scenario's window as a share of the most one simulation may be (the limits :func:`check_size`
    applies: points for the general engine, interruptions and profile pieces for the others; 1.0 is at the
    limit). A command of several runs holds their sum to 1, so that it costs no more than one run may."""
    if window_engine(scenario).key == "general":
        return general_points(scenario) / MAX_GENERAL_POINTS
    lam = mean_job_rate(scenario) * pieces(scenario.rate_profile, scenario.days).integral() / scenario.hours
    events = (lam + scenario.planned_per_day / 24.0) * scenario.hours * scenario.trials
    count = len(pieces(scenario.rate_profile, scenario.days)) * scenario.trials
    return max(events / MAX_TOTAL_EVENTS, count / MAX_TOTAL_PIECES)


def check_together(scenarios: list[Scenario], flag: str = "--trials") -> None:
    """Refuse, in one line, runs that each fit but together cost more than one simulation may (their
    :func:`size_share` summed over 1), naming the trials a run that they all fit in."""
    shares = [size_share(s) for s in scenarios]
    total = math.fsum(shares)
    if total <= 1.0:
        return
    per_trial = math.fsum(sh / max(s.trials, 1) for sh, s in zip(shares, scenarios))
    fit = int(1.0 / per_trial) if per_trial > 0 else 0
    hint = f"use {flag} {fit} or fewer" if fit >= 1 else "use fewer or smaller scenarios"
    raise ScenarioError(
        f"{flag}: the {len(scenarios)} scenarios each fit, but together they are {total:.2g} times the most one "
        f"command simulates; {hint}"
    )


def check_size(scenario: Scenario) -> None:
    """Refuse a scenario whose simulation would be unreasonably large, or a setting that means nothing for it
    (both from the one table of engines, :mod:`.sim.capabilities`): too many interruptions for the renewal and
    two-tier engines (at the rates' expected level over the profile), too many points for the general engine,
    or too many trials x pieces of a rate profile."""
    why = meaningless(scenario)
    if why is not None:
        raise ScenarioError(why)
    if window_engine(scenario).key == "general":
        steps = general_steps_error(scenario)
        if steps is not None:
            raise ScenarioError(f"{'slow_rate_per_gpu_hour' if slow_dominates(scenario) else 'days'}: {steps}")
        points = general_points(scenario)
        if points > MAX_GENERAL_POINTS:
            raise ScenarioError(
                f"trials: about {points:.3g} interruptions, repairs and returns to simulate, over the limit of "
                f"{MAX_GENERAL_POINTS:.3g}; {_nearest_trials(scenario.trials, points, MAX_GENERAL_POINTS)}"
            )
        return
    lam = mean_job_rate(scenario) * pieces(scenario.rate_profile, scenario.days).integral() / scenario.hours
    events = (lam + scenario.planned_per_day / 24.0) * scenario.hours * scenario.trials
    if events > MAX_TOTAL_EVENTS:
        raise ScenarioError(
            f"trials: about {events:.3g} interruptions to simulate, over the limit of {MAX_TOTAL_EVENTS:.3g}; "
            f"{_nearest_trials(scenario.trials, events, MAX_TOTAL_EVENTS)}"
        )
    count = len(pieces(scenario.rate_profile, scenario.days)) * scenario.trials
    if count > MAX_TOTAL_PIECES:
        raise ScenarioError(
            f"trials: {count:,} pieces of the rate profile to simulate (trials x pieces in the window), over the "
            f"limit of {MAX_TOTAL_PIECES:,}; use fewer trials or pieces"
        )


def check_spares(scenario: Scenario) -> None:
    """Refuse a spares section that does not fit the scenario: repair hours of a category it does not have,
    a shrink floor or replica larger than the job, a replica not a whole number of nodes, another optional
    model it does not combine with, or a simulation too large."""
    sp = scenario.spares
    if sp is None:
        return
    cats = scenario.categories
    for cat, _ in sp.repair_hours:
        if cat not in cats:
            raise ScenarioError(
                f"spares.repair_hours.{clean(cat, 40)}: no such category in the components (categories: "
                f"{', '.join(clean(c, 40) for c in cats)})"
            )
    misfit = sp.job_misfit(scenario)
    if misfit is not None:
        raise ScenarioError(f"spares.{misfit}")


def check_tiers_fit(scenario: Scenario) -> None:
    """Refuse a fast tier whose replicas cannot be placed in the job's nodes and domains."""
    t = scenario.tiers
    if t is None or not t.fast_enabled or t.fast_replicas == 0:
        return
    nodes = math.ceil(scenario.gpus / scenario.gpus_per_node)
    domains = math.ceil(nodes / t.nodes_per_domain)
    if t.fast_replicas > nodes - 1:
        raise ScenarioError(
            f"tiers.fast_replicas: a node and {fmt.plural(t.fast_replicas, 'replica')} of it need "
            f"{fmt.plural(t.fast_replicas + 1, 'node')}; the job has {nodes:,}"
        )
    if t.fast_placement == "same-domain" and t.fast_replicas > t.nodes_per_domain - 1:
        raise ScenarioError(f"tiers.fast_replicas: {t.same_domain_misfit()}")
    if t.fast_placement == "other-domain" and domains < 2:
        raise ScenarioError(
            f"tiers.fast_placement: other-domain needs two failure domains or more; the job's "
            f"{fmt.plural(nodes, 'node')} make one domain of {fmt.plural(t.nodes_per_domain, 'node')} (use fewer nodes "
            "per domain, or same-domain)"
        )


def check_storage_write(scenario: Scenario) -> None:
    """Refuse a storage section whose write exceeds what ``checkpoint_write_s`` may hold, so that the
    engine only ever sees writes it would accept as typed."""
    hi = LIMITS["checkpoint_write_s"][1]
    if scenario.storage is not None and scenario.write_s > hi:
        raise ScenarioError(
            f"storage: a checkpoint would take {scenario.write_s:.3g} s to write (gpus x checkpoint_gb_per_gpu / "
            f"storage_gb_s), over the limit of {fmt_number(hi)} s; use faster storage or smaller checkpoints"
        )


def _nearest_trials(trials: int, amount: float, limit: float) -> str:
    """What runs instead of a simulation too large: the most trials that fit at these GPUs and days."""
    most = math.floor(trials * limit / amount)
    if most >= 1:
        return f"at most {most:,} trials run at these GPUs and days (or use fewer days or GPUs)"
    return "even one trial is over it: use fewer days or GPUs"


def smallest_gpu_mtbf_hours(scenario: Scenario) -> float:
    """The smallest per-GPU MTBF (hours) the scenario's component mix allows: its largest component may
    fail at most ``LIMITS['rate_per_gpu_hour']`` times per GPU-hour. Computed from the mix alone (the
    largest component's share of the total rate), so it never overflows; 0 for an all-zero mix."""
    return scenario.top_share() / LIMITS["rate_per_gpu_hour"][1]
