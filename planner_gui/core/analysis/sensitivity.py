"""Which lever buys the most: the effect of one fixed improvement of each input.

Each lever changes one input of the scenario by a factor (halving a time or a rate by default). Where the
model has a closed form (one checkpoint tier, or two with every failure restoring from one, constant known
rates, no spares), the exact expectations (:mod:`.exact`) give the goodput before and after; with a training
compute (:class:`.scenario.Training`) also the days to train and their cost, without one the cost of the GPU-hours
not spent training in the window. Exact expectations take well under a millisecond per lever, so the
window recomputes the chart live as the sliders move.

Every other scenario (spares and repairs, continuing on replicas, rates that vary, a new cluster, both tiers
restoring) is ranked by paired Monte Carlo (:func:`paired_sensitivity`): the scenario and every lever's change of
it are simulated on the general engine with the same seed, stepped together, and each lever's effect is the mean
of the per-trial differences, with its standard error (the effects' ``*_se``).

With recovery tiers (:mod:`.tiers`) the exact expectations are the two-tier model's, which has a closed form
when every failure restores from one tier (e.g. replicas in another failure domain); the levers then include
each tier's times, and a scenario without an in-memory tier gets the lever "add one" (its snapshots then make the
persistent checkpoints, so the blocking write goes: the published systems' way). A lever whose scenario
has no closed form is left out; a scenario without one raises :class:`NoClosedForm`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..model.scenario import MAX_LEVER_PRICE_USD, OPTIMAL, Scenario, Tiers
from ..sim.capabilities import simulated_only
from ..sim.tiers_run import plan_tiers
from ..theory.exact import time_fractions
from ..theory.expected import rates_vary
from ..theory.params import resolve
from ..util.fmt import compact, read_number

if TYPE_CHECKING:
    from .results import SimulationResult

__all__ = [
    "DEFAULT_FACTOR",
    "Effect",
    "Lever",
    "NoClosedForm",
    "check_prices",
    "days_and_cost",
    "expected_goodput",
    "has_closed_form",
    "levers",
    "merge_prices",
    "paired_sensitivity",
    "parse_prices",
    "per_dollar",
    "per_trial_days_and_cost",
    "sensitivity",
]


class NoClosedForm(ValueError):
    """The scenario has no exact expectation to rank levers by: its rates vary, its failures restore from
    both checkpoint tiers, or it has a spare pool or a recovery mode (:func:`sensitivity` then ranks by paired
    Monte Carlo)."""


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
    #: Standard errors of the three deltas (paired Monte Carlo; None where the exact model gave them).
    goodput_delta_se: float | None = None
    days_delta_se: float | None = None
    cost_delta_se: float | None = None
    #: What the planner would pay for the lever (the scenario's ``lever_prices``; None: not priced).
    price_usd: float | None = None

    @property
    def saved_per_usd(self) -> float | None:
        """Dollars saved per dollar paid for the lever (its cost delta, a saving, over its price); None unpriced."""
        if self.price_usd is None or self.price_usd <= 0:
            return None
        return -self.cost_delta_usd / self.price_usd

    def to_dict(self) -> dict[str, object]:
        return {
            "lever": self.lever,
            "change": self.change,
            "goodput_delta": self.goodput_delta,
            "days_delta": self.days_delta,
            "cost_delta_usd": self.cost_delta_usd,
            "goodput_delta_se": self.goodput_delta_se,
            "days_delta_se": self.days_delta_se,
            "cost_delta_se": self.cost_delta_se,
            "price_usd": self.price_usd,
            "saved_per_usd": self.saved_per_usd,
        }


def expected_goodput(sc: Scenario) -> float:
    """The exact expected goodput (with 'optimal', at Daly's interval for this very scenario; with recovery
    tiers, the two-tier model's at its intervals). Raises :class:`NoClosedForm` where there is none."""
    only = simulated_only(sc)
    if only is not None:
        raise NoClosedForm(f"no exact expectation with {only} to rank levers by: the Monte Carlo ranks them")
    if sc.uses_tiers:
        plan = plan_tiers(sc)
        f = plan.expected()
        if f is None and plan.params.c_point > 0:
            raise NoClosedForm(
                "with the in-memory tier on, each persistent checkpoint blocks for the write on top of the "
                "snapshot stall: uneven snapshot cycles have no exact expectation to rank levers by; set the "
                "write to 0 if a persistent checkpoint only uploads the snapshot in memory, or use planner-gui "
                "strategies, or sweep"
            )
        if f is None:
            raise NoClosedForm(
                "the scenario's failures restore from both checkpoint tiers (replicas in the same failure domain, "
                "or failures wider than a domain): no exact expectation to rank levers by; use planner-gui "
                "strategies, or sweep"
            )
        return float(f.useful)
    p, _ = resolve(sc)
    return float(time_fractions(*p.fraction_args).useful)


def cost_words(sc: Scenario) -> str:
    """What a lever's cost delta is the change of, in words: the days and cost to train, or the cost of the window's
    GPU-hours not spent training; with spares held (a finite pool, racks' warm spares), their cost too."""
    held = sc.finite_pool or sc.warm_spare_gpus > 0
    if sc.training is not None:
        return "days and cost to train" + (" (the spares held included)" if held else "")
    return "cost of the GPU-hours not spent training" + (" and of the spares held" if held else "")


def days_and_cost(sc: Scenario, goodput: float) -> tuple[float | None, float]:
    """Expected days to train (work / goodput, renewal theory's leading term) and their cost; without a
    training compute, no days and the cost of the window's GPU-hours not spent training."""
    warm = sc.warm_spare_gpus * sc.gpu_hour_cost_usd  # (the racks' warm spares, held the whole time)
    if sc.training is None:
        return None, sc.gpus * sc.hours * (1.0 - goodput) * sc.gpu_hour_cost_usd + warm * sc.hours
    if goodput <= 0:
        return math.inf, math.inf
    hours = sc.training.gpu_hours / sc.gpus / goodput
    return hours / 24.0, hours * sc.gpus * sc.gpu_hour_cost_usd + warm * hours


def _fmt_factor(f: float) -> str:
    return f"x{f:.3g}"


def levers(sc: Scenario, factor: float = DEFAULT_FACTOR) -> list[Lever]:
    """The levers of ``sc``: detection, restart, checkpoint write, planned interruptions, every
    category's failure rate and all rates together; the checkpoint interval when it is not already
    optimal; the GPU count when a training compute makes its trade-off (fewer failures, slower run) real.
    """
    x = _fmt_factor(factor)

    def times(*fields: str) -> Callable[[Scenario], Scenario]:
        return lambda s: s.replace(**{field: getattr(s, field) * factor for field in fields})

    def rates(category: str | None) -> Callable[[Scenario], Scenario]:
        if category is None:  # every rate: the correlated events' too
            return lambda s: s.scale_rates(factor).replace(correlated_rate_per_day=s.correlated_rate_per_day * factor)
        return lambda s: s.scale_rates(factor, category)

    def detection(s: Scenario) -> Scenario:
        return s.replace(detect_min=s.detect_min * factor, detect_by=tuple((n, v * factor) for n, v in s.detect_by))

    def optimal(s: Scenario) -> Scenario:
        return s.replace(checkpoint_interval_min=OPTIMAL)

    def gpus(s: Scenario) -> Scenario:
        return s.replace(gpus=max(1, round(s.gpus * factor)))

    out = [
        # faster detection: of every cause, those detected after their own time too
        Lever("detection", f"detection {x}", detection),
        # a faster restart: both its fixed part and its growth with the job
        Lever("restart", f"restart {x}", times("restart_min", "restart_per_log2_gpus_min")),
        Lever("checkpoint write", f"blocking write {x}", times("checkpoint_write_s")),
        Lever("planned interruptions", f"planned per day {x}", times("planned_per_day")),
        Lever("all failure rates", f"every rate {x}", rates(None)),
    ]
    out += [Lever(f"{cat} failures", f"{cat} rates {x}", rates(cat)) for cat in sc.categories]
    if not sc.uses_optimal_interval:
        out.append(Lever("checkpoint interval", "the optimal interval (Daly)", optimal))
    out += _tier_levers(sc, factor)
    out += _spares_levers(sc, factor)
    if sc.uses_slow:  # fail-slow nodes: find them sooner, or have fewer
        out.append(Lever("slow-node detection", f"slow-node detection {x}", times("slow_detect_min")))
        out.append(Lever("slow-node rate", f"slow-node rate {x}", times("slow_rate_per_gpu_hour")))
        if sc.slow_factor < 1.0:  # a slow node that drags the job less (1 - speed, times the factor)
            out.append(
                Lever(
                    "slow-node slowdown",
                    f"slow-node slowdown {x}",
                    lambda s: s.replace(slow_factor=min(1.0, 1.0 - (1.0 - s.slow_factor) * factor)),
                )
            )
    if sc.save_fail_p > 0:  # checkpoints that fail: saves that fail less often (verified, retried writes)
        out.append(Lever("failed saves", f"failed saves {x}", times("save_fail_p")))
    if sc.restore_fail_p > 0 and sc.fast_tier_on:  # ... and snapshots in memory that pass their validation
        out.append(Lever("failed restores from memory", f"failed restores from memory {x}", times("restore_fail_p")))
    if sc.uses_sdc:  # silent corruption found sooner (loss-spike and cross-replica checks), and more kept
        out.append(Lever("corruption detection", f"corruption found after {x}", times("sdc_detect_hours")))
        if sc.retained_checkpoints > 0 and factor > 0:
            out.append(
                Lever(
                    "checkpoints kept",
                    f"checkpoints kept x{1.0 / factor:.3g}",
                    lambda s: s.replace(retained_checkpoints=max(1, math.ceil(s.retained_checkpoints / factor))),
                )
            )
    if sc.uses_bad:  # bad nodes: fewer (burn-in, a vendor's screening), found right, repaired for good
        out.append(Lever("bad nodes", f"bad nodes {x}", times("bad_share")))
        if sc.diagnosis_p < 1.0:
            out.append(
                Lever(
                    "misdiagnosis",
                    f"healthy nodes pulled {x}",
                    lambda s: s.replace(diagnosis_p=min(1.0, 1.0 - (1.0 - s.diagnosis_p) * factor)),
                )
            )
        if sc.repair_fail_p > 0 and sc.finite_pool:
            # (with an unlimited pool a pulled node leaves the books: a failed repair changes nothing)
            out.append(Lever("failed repairs", f"failed repairs {x}", times("repair_fail_p")))
    if sc.uses_correlated:  # correlated failures: fewer (redundant feeds), or smaller (finer power distribution)
        out.append(Lever("correlated failures", f"correlated failures {x}", times("correlated_rate_per_day")))
        if sc.correlated_domains > 1 and sc.uses_spares:  # (the nodes an event takes matter to the pool alone)
            out.append(
                Lever(
                    "domains per correlated event",
                    f"domains per correlated event {x}",
                    lambda s: s.replace(correlated_domains=max(1, round(s.correlated_domains * factor))),
                )
            )
    if sc.uses_nvlink and sc.rack_move_min > 0:  # a quicker move to a spare rack (the slice's set-up automated)
        out.append(Lever("rack move", f"rack move {x}", times("rack_move_min")))
    if sc.uses_nvlink and sc.rack_spare_trays + 1 < sc.trays_per_rack:  # one more warm spare tray in every rack
        k = sc.rack_spare_trays
        out.append(
            Lever(
                "warm spare trays",
                f"warm spare trays {k} -> {k + 1} a rack",
                lambda s: s.replace(rack_spare_trays=k + 1),
            )
        )
    if sc.training is not None:
        out.append(Lever("GPU count", f"GPUs {x}", gpus))
    return out


def _spares_levers(sc: Scenario, factor: float) -> list[Lever]:
    """With spares: the swap, every repair time, the continue stall (times by the factor), and the pool (its nodes
    divided by the factor: an improvement is more spares)."""
    from ..model.spares import Spares, node_categories, repair_hours_of

    sp = sc.spares if sc.spares is not None else Spares()
    if sp.is_todays and not sc.rack_repairs_matter:
        return []

    x = _fmt_factor(factor)

    def spares(**changes: object) -> Callable[[Scenario], Scenario]:
        return lambda s: s.replace(spares=dataclasses.replace(s.spares or sp, **changes))  # type: ignore[arg-type]

    out = []
    if sp.swap_min > 0:
        out.append(Lever("swap time", f"swap {x}", spares(swap_min=sp.swap_min * factor)))
    cats = node_categories(sc)
    pool_matters = sp.spare_nodes is not None or sp.recovery_mode == "continue" or sc.rack_repairs_matter
    if (cats or sc.uses_correlated) and pool_matters:
        hours = tuple((c, repair_hours_of(c, sp) * factor) for c in cats)
        # (every repair: the correlated events' too)
        out.append(
            Lever(
                "repair times",
                f"every repair {x}",
                lambda s: spares(repair_hours=hours)(s).replace(
                    correlated_repair_hours=s.correlated_repair_hours * factor
                ),
            )
        )
    if sp.spare_nodes is not None:
        more = max(sp.spare_nodes + 1, round(sp.spare_nodes / factor)) if factor < 1 else round(sp.spare_nodes / factor)
        if sc.uses_nvlink:  # (the pool holds whole racks: at least one more)
            q = sc.trays_per_rack
            held = sp.spare_nodes // q
            racks = max(held + 1, round(held / factor)) if factor < 1 else round(held / factor)
            more = racks * q
        out.append(Lever("spare pool", f"spare nodes {sp.spare_nodes:,} -> {more:,}", spares(spare_nodes=more)))
    if sp.recovery_mode == "continue" and sp.continue_stall_min > 0:
        out.append(
            Lever("continue stall", f"continue stall {x}", spares(continue_stall_min=sp.continue_stall_min * factor))
        )
    return out


def _tier_levers(sc: Scenario, factor: float) -> list[Lever]:
    """Each tier's times, and adding an in-memory tier where there is none."""
    x = _fmt_factor(factor)
    tiers = sc.tiers if sc.tiers is not None else Tiers()

    def tier_times(field: str) -> Callable[[Scenario], Scenario]:
        def apply(s: Scenario) -> Scenario:
            t = s.tiers if s.tiers is not None else Tiers()
            return s.replace(tiers=dataclasses.replace(t, **{field: getattr(t, field) * factor}))

        return apply

    out = []
    if tiers.fast_enabled:
        out += [
            Lever("in-memory snapshot stall", f"snapshot stall {x}", tier_times("fast_stall_s")),
            Lever("in-memory restore", f"restore from memory {x}", tier_times("fast_restore_min")),
        ]
        if tiers.fast_interval_min != OPTIMAL:
            out.append(
                Lever(
                    "in-memory interval",
                    "the optimal in-memory interval",
                    lambda s: s.replace(tiers=dataclasses.replace(tiers, fast_interval_min=OPTIMAL)),
                )
            )
    else:
        # As the published in-memory systems do it: the persistent checkpoints upload the tier's snapshots, so the
        # blocking write leaves the critical path (the fast stall is the only one).
        out.append(
            Lever(
                "in-memory tier",
                "add an in-memory tier, no blocking write",
                lambda s: s.replace(checkpoint_write_s=0.0, tiers=dataclasses.replace(tiers, fast_enabled=True)),
            )
        )
    if tiers.persistent_upload_min > 0:
        out.append(Lever("background upload", f"upload {x}", tier_times("persistent_upload_min")))
    if tiers.persistent_restore_min > 0:
        out.append(Lever("restore from storage", f"restore from storage {x}", tier_times("persistent_restore_min")))
    return out


def has_closed_form(sc: Scenario) -> bool:
    """Whether the levers of ``sc`` are ranked by exact expectations (else by paired Monte Carlo)."""
    if rates_vary(sc) or sc.uses_spares or sc.new_cluster or simulated_only(sc) is not None:
        return False
    try:
        expected_goodput(sc)
    except NoClosedForm:
        return False
    return True


def sensitivity(
    sc: Scenario,
    factor: float = DEFAULT_FACTOR,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[Effect]:
    """The effect of each lever, the biggest saving first (with a training compute: the most dollars
    saved; without: the most goodput gained). Levers that change nothing are left out. Scenarios the exact
    model covers are ranked by it (a lever whose change leaves its reach is left out); every other one by paired
    Monte Carlo (:func:`paired_sensitivity`)."""
    if not (factor > 0 and math.isfinite(factor)):
        raise ValueError("the factor must be a positive number")
    if not has_closed_form(sc):
        return paired_sensitivity(sc, factor, progress=progress, should_stop=should_stop)
    base_g = expected_goodput(sc)
    base_days, base_cost = days_and_cost(sc, base_g)
    effects = []
    for lever in levers(sc, factor):
        changed = lever.apply(sc)
        if changed == sc:
            continue
        try:
            g = expected_goodput(changed)
        except NoClosedForm:  # the change leads where the exact model does not reach: no bar rather than a guess
            continue
        days, cost = days_and_cost(changed, g)
        if (
            g == base_g and cost == base_cost
        ):  # e.g. the blocking write with an in-memory tier, whose snapshots replace it
            continue
        days_delta = None if days is None or base_days is None else days - base_days
        effects.append(Effect(lever.name, lever.change, g - base_g, days_delta, cost - base_cost))
    return _ranked(sc, effects)


def _ranked(sc: Scenario, effects: list[Effect]) -> list[Effect]:
    """The effects, biggest saving first, each with the price the scenario gives its lever."""
    prices = dict(sc.lever_prices)
    effects = [dataclasses.replace(e, price_usd=prices.get(e.lever)) for e in effects]
    key = (lambda e: e.cost_delta_usd) if sc.training is not None else (lambda e: -e.goodput_delta)
    return sorted(effects, key=key)


def check_prices(sc: Scenario, factor: float = DEFAULT_FACTOR, names: Sequence[str] | None = None) -> list[str]:
    """The priced levers (``names``, or all the scenario prices) this scenario does not have, for a warning; with
    ``names`` given, ValueError in one line for the first one (a misspelled name would be silently unpriced)."""
    have = [lv.name for lv in levers(sc, factor)]
    unknown = [n for n in (names if names is not None else [n for n, _ in sc.lever_prices]) if n not in have]
    if unknown and names is not None:
        raise ValueError(f"--price: no lever '{unknown[0][:60]}' in this scenario (its levers: {', '.join(have)})")
    return unknown


def per_dollar(e: Effect, short: bool = False) -> str:
    """A priced lever's return: "$1.47 saved per $ paid ($500 k)", or on a bar "$1.47 saved per $"."""
    ratio = e.saved_per_usd
    price = f"${compact(e.price_usd or 0.0)}"
    if ratio is None:
        return f"priced at {price}" if not short else f"{price} paid"
    if short:
        return f"${ratio:,.2f} saved per $" if ratio >= 0 else f"${-ratio:,.2f} lost per $"
    return f"${ratio:,.2f} saved per $ paid ({price})" if ratio >= 0 else f"${-ratio:,.2f} lost per $ paid ({price})"


def parse_prices(specs: Sequence[str]) -> tuple[tuple[str, float], ...]:
    """``["detection=2e6", "restart=$500,000"]`` as (lever, dollars) pairs; ValueError in one line if malformed."""
    out: dict[str, float] = {}
    for spec in specs:
        name, eq, value = spec.rpartition("=")
        name = name.strip()
        if not eq or not name:
            raise ValueError(f"--price: expected LEVER=USD, as detection=2e6 (got '{spec[:60]}')")
        text = value.strip().removeprefix("$")
        read = read_number(text) if len(text) <= 60 else None  # ("1,5" is no number: 1.5 in many locales)
        usd = math.nan if read is None else float(read)
        if not 0 <= usd <= MAX_LEVER_PRICE_USD:  # (a NaN fails too)
            raise ValueError(f"--price {name[:60]}: must be a number of dollars from 0 to 1e13 (got '{value[:40]}')")
        out[name] = usd
    return tuple(out.items())


def merge_prices(base: Sequence[tuple[str, float]], new: Sequence[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    """``base`` with ``new``'s prices added, a lever in both at its new price."""
    return tuple((dict(base) | dict(new)).items())


def paired_sensitivity(
    sc: Scenario,
    factor: float = DEFAULT_FACTOR,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[Effect]:
    """Every lever by paired Monte Carlo with common random numbers: the scenario and each lever's change of it,
    with the same seed and trials, stepped together on the general engine. Per trial, the difference of goodput
    (and of the days and cost to train, or of the window's lost GPU-hours' cost) from the scenario's; each effect is
    their mean, with its standard error. A change that cannot be simulated (refused by the scenario checks, e.g. a
    pool beyond the limits, or a time to train that would never finish) is left out."""
    from ..files.scenario_io import ScenarioError, validate
    from .results import simulate_scenarios

    changed: list[tuple[Lever, Scenario]] = []
    for lever in levers(sc, factor):
        other = lever.apply(sc)
        if other == sc:
            continue
        try:
            changed.append((lever, validate(other)))
        except ScenarioError:
            continue
    said: list[str | None] = [None] * (1 + len(changed))
    runs = simulate_scenarios(
        [sc, *(c for _, c in changed)], progress=progress, should_stop=should_stop, general=True, refused=said
    )
    if said[0] is not None:  # (the scenario itself: nothing to compare with)
        raise ScenarioError(said[0])
    kept = [k for k in range(len(changed)) if said[k + 1] is None]
    changed, runs = [changed[k] for k in kept], [runs[0], *(runs[k + 1] for k in kept)]
    base = runs[0]
    base_g = base.goodput
    base_days, base_cost = per_trial_days_and_cost(base)
    effects = []
    for (lever, _), res in zip(changed, runs[1:]):
        dg = res.goodput - base_g
        days, cost = per_trial_days_and_cost(res)
        dd = None if days is None or base_days is None else days - base_days
        dc = cost - base_cost
        if not np.any(dg) and (dd is None or not np.any(dd)) and not np.any(dc):
            continue  # the change moved nothing (a warm spare tray that buys no goodput still costs its GPUs)
        effects.append(
            Effect(
                lever.name,
                lever.change,
                float(dg.mean()),
                None if dd is None else float(dd.mean()),
                float(dc.mean()),
                _se(dg),
                None if dd is None else _se(dd),
                _se(dc),
            )
        )
    return _ranked(sc, effects)


def _se(values: np.ndarray) -> float:
    return float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0


def per_trial_days_and_cost(res: SimulationResult) -> tuple[np.ndarray | None, np.ndarray]:
    """Per trial: the days to train and their cost (with a training compute), else no days and the cost of the
    window's GPU-hours not spent training; with a finite spare pool, plus the pool's cost over that time (its price's
    share, or its GPU-hours: :meth:`.spares.Spares.pool_cost_per_hour`); on racks with warm spares, plus their
    GPU-hours."""
    sc = res.scenario
    t = res.time_to_train
    pool = 0.0 if sc.spares is None else sc.spares.pool_cost_per_hour(sc.gpus_per_node, sc.gpu_hour_cost_usd)
    pool += sc.warm_spare_gpus * sc.gpu_hour_cost_usd
    if t is None:
        return None, sc.gpus * sc.hours * (1.0 - res.goodput) * sc.gpu_hour_cost_usd + pool * sc.hours
    return t.hours / 24.0, t.gpu_hours() * sc.gpu_hour_cost_usd + pool * t.hours
