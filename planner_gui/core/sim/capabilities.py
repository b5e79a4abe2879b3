"""The one table of what the model's features are, which engine runs a scenario, and what it refuses.

Every feature combines with every other (docs/model.md): the general engine (:mod:`.run`) simulates any
scenario. Faster engines take the scenarios that have a shortcut, each only on the domain where
``tests/test_sim.py`` shows it equal to the general engine:

============  ===========================================================================================
engine        runs
============  ===========================================================================================
renewal       windows with one checkpoint tier, no spares beyond today's, restart mode, not a new cluster
              (rates may be uncertain or follow a profile; correlated failures where the rates are known):
              every interruption starts the job afresh
tiers         windows with a recovery strategy (fast tier, uploads, restore times) but no persistent stall
              beside the fast tier, at constant known rates, no spares, not a new cluster, and where no
              planned interruption can meet a restore (no planned interruptions, or the fast tier off and no
              restore time): it takes every planned interruption for a full renewal, which one during a
              restarting failure's downtime is not (docs/model.md 2.4: the pending restore stays)
first-passage times to train with one tier, no spares, constant known rates (correlated failures too)
general       everything
============  ===========================================================================================

What is refused is refused here, worded once: settings that mean nothing (a job of one replica cannot
continue on the others) and simulations too large to run. Values out of range are the scenario file's
(:mod:`..files.scenario_io`) and the inputs' table's (:mod:`..model.specs`).

This module imports no engine: the scenario files and the window's inputs ask it without loading one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..model.scenario import CORRELATED_NAME, SDC_NAME, Scenario
from ..theory.bad_nodes import bad_classes, bad_expected, bad_rates
from ..theory.profiles import is_flat
from ..theory.rates import RatePosterior

__all__ = [
    "ENGINES",
    "FEATURES",
    "MAX_GENERAL_POINTS",
    "MAX_GENERAL_STEPS",
    "SECONDS_PER_COLUMN_STEP",
    "SECONDS_PER_STEP",
    "SIMULATED_ONLY",
    "Engine",
    "Feature",
    "bad_misfit",
    "features",
    "general_points",
    "general_seconds",
    "general_steps_error",
    "meaningless",
    "one_tier_closed_form",
    "racks_misfit",
    "simulated_only",
    "train_engine",
    "window_engine",
]

#: The most points (interruptions, repairs that change something, replica returns) the general engine may step
#: through for one run, all trials together: about two minutes on a 2-core machine.
MAX_GENERAL_POINTS = 4e8
#: The general engine's cost on the reference machine (2 shared cores): per step (one point of every trial) and
#: per trial and step, both measured at 100,000 GPUs with 1,000 trials (benchmarks/bench_engine.py).
SECONDS_PER_STEP = 100e-6
SECONDS_PER_COLUMN_STEP = 250e-9
#: The most points a trial may step through on the general engine: each step costs :data:`SECONDS_PER_STEP`
#: whatever the trials, so a window of tens of millions of points a trial (10 million GPUs for ten years) is
#: refused up front, however few its trials, rather than run for half an hour.
MAX_GENERAL_STEPS = 3e6


def _uncertain(sc: Scenario) -> bool:
    return sc.rate_uncertainty and bool(RatePosterior.of(sc.components).uncertain.any())


@dataclass(frozen=True)
class Feature:
    """A part of the model a scenario may use."""

    key: str
    label: str
    present: Callable[[Scenario], bool]


#: Every feature, in the order the help lists them.
FEATURES: tuple[Feature, ...] = (
    Feature("fast_tier", "the fast (in-memory) checkpoint tier", lambda s: s.fast_tier_on),
    Feature("persistent_stall", "a persistent stall beside the fast tier", lambda s: s.fast_tier_on and s.write_s > 0),
    Feature("tiers", "a recovery strategy beyond one blocking checkpoint", lambda s: s.uses_tiers),
    Feature(
        "spare_pool",
        "a finite pool of spare nodes",
        lambda s: s.finite_pool,
    ),
    Feature("swap", "a swap time for failed nodes", lambda s: s.spares is not None and s.spares.swap_min > 0),
    Feature(
        "continue", "continuing on replicas", lambda s: s.spares is not None and s.spares.recovery_mode == "continue"
    ),
    Feature(
        "shrink",
        "running smaller while short of spares",
        lambda s: s.finite_pool and s.spares is not None and s.spares.min_gpus is not None,
    ),
    Feature("rate_uncertainty", "rate uncertainty", _uncertain),
    Feature("rate_profile", "rates that change over the run", lambda s: not is_flat(s.rate_profile, s.days)),
    Feature("new_cluster", "a new cluster (burn-in from an empty pool)", lambda s: s.new_cluster),
    Feature("training", "a time to train", lambda s: s.training is not None),
    Feature("fail_slow", "fail-slow nodes", lambda s: s.uses_slow),
    Feature("detect_by", "detection by cause", lambda s: s.uses_detect_by),
    Feature("failing_checkpoints", "checkpoints that fail", lambda s: s.uses_failing_checkpoints),
    Feature("correlated", "correlated failures", lambda s: s.uses_correlated),
    Feature("weibull", "node lives that are not exponential", lambda s: s.uses_weibull),
    Feature("racks", "rack-scale NVLink domains", lambda s: s.uses_nvlink),
    Feature("sdc", "silent data corruption found late", lambda s: s.uses_sdc),
    Feature("bad", "bad nodes and misdiagnosis", lambda s: s.uses_bad),
)


#: Features no closed form of docs/model.md section 3 takes: with one of them only the Monte Carlo gives the numbers.
#: Each with where it has none (None: wherever it is present): saves that fail have one with a single tier
#: (docs/model.md 3), none with a recovery strategy; correlated failures are one more Poisson stream of restarts from
#: storage that the formulas take at a known rate, not with rates drawn from their posteriors; node lives that are not
#: exponential make failures that are no Poisson stream (the formulas' rates are their long-run ones); racks whose
#: moves take longer than a swap make two downtimes of one cause, which the one-downtime formulas do not take.
SIMULATED_ONLY: dict[str, Callable[[Scenario], bool] | None] = {
    "fail_slow": None,
    "detect_by": None,
    "failing_checkpoints": lambda s: s.uses_tiers,
    "correlated": _uncertain,
    "weibull": None,
    "racks": lambda s: s.rack_move_min > 0,
    "sdc": None,
    "bad": None,
}


#: How :func:`simulated_only` names a feature of :data:`SIMULATED_ONLY` that has no closed form only somewhere: the
#: feature with what takes the closed form away.
_WHERE_WORDS = {
    "failing_checkpoints": "checkpoints that fail with a recovery strategy",
    "correlated": "correlated failures with rate uncertainty",
    "racks": "racks whose moves take longer than a swap",
}


def simulated_only(scenario: Scenario) -> str | None:
    """The label of the first feature of :data:`SIMULATED_ONLY` the scenario uses where no closed form takes it
    ("fail-slow nodes"; where it has one elsewhere, with what takes it away), or None."""
    by_key = {f.key: f for f in FEATURES}
    return next(
        (
            _WHERE_WORDS.get(k, by_key[k].label) if where is not None else by_key[k].label
            for k, where in SIMULATED_ONLY.items()
            if by_key[k].present(scenario) and (where is None or where(scenario))
        ),
        None,
    )


def one_tier_closed_form(scenario: Scenario) -> bool:
    """Whether the one-tier renewal formulas (docs/model.md 3) give the scenario's expectations, whichever engine
    simulates it: one checkpoint tier, no spares, not a new cluster, and no feature they do not take."""
    return not (
        scenario.uses_tiers or scenario.uses_spares or scenario.new_cluster or simulated_only(scenario) is not None
    )


def features(scenario: Scenario) -> frozenset[str]:
    """The keys of the features the scenario uses."""
    return frozenset(f.key for f in FEATURES if f.present(scenario))


def _drains_in_restores(sc: Scenario) -> bool:
    """Whether a planned interruption can meet a restarting failure's downtime and find something pending there
    (a restore's time, or a restore from storage that a fast-tier failure during it would be promoted to):
    docs/model.md 2.4 keeps it pending, which the vectorized two-tier engine does not."""
    t = sc.tiers
    return sc.planned_per_day > 0 and t is not None and (t.fast_enabled or t.persistent_restore_min > 0)


@dataclass(frozen=True)
class Engine:
    """An engine, the features it runs (``None``: all of them), and what else its domain excludes."""

    key: str
    label: str
    window: bool  # runs windows (else times to train)
    handles: frozenset[str] | None
    excludes: Callable[[Scenario], bool] | None = None

    def takes(self, used: frozenset[str], scenario: Scenario) -> bool:
        """Whether it runs ``scenario``, whose features are ``used``."""
        if self.handles is None:
            return True
        return used <= self.handles and (self.excludes is None or not self.excludes(scenario))


_VARYING = frozenset({"rate_uncertainty", "rate_profile"})


def _correlated_uncertain(sc: Scenario) -> bool:
    """Correlated failures beside rates drawn from their posteriors: the renewal engine draws the components' rates
    alone (the events' rate is known), so the general engine runs them."""
    return sc.uses_correlated and _uncertain(sc)


#: The engines, fastest first; the first that takes a scenario's features runs it.
ENGINES: tuple[Engine, ...] = (
    Engine(
        "renewal",
        "the renewal engine (core/sim/engine.py)",
        True,
        _VARYING | {"training", "correlated"},
        _correlated_uncertain,
    ),
    Engine(
        "tiers",
        "the vectorized two-tier engine (core/sim/tiers.py)",
        True,
        frozenset({"fast_tier", "tiers", "training"}),
        _drains_in_restores,
    ),
    Engine(
        "first-passage",
        "the first-passage time to train (core/analysis/training.py)",
        False,
        frozenset({"training", "correlated"}),
    ),
    Engine("general", "the general engine (core/sim)", True, None),
    Engine("general", "the general engine (core/sim)", False, None),
)


def window_engine(scenario: Scenario, *, general: bool = False) -> Engine:
    """The engine that simulates the scenario's window (``general``: the general engine, whatever the scenario)."""
    used = features(scenario)
    return next(e for e in ENGINES if e.window and (e.handles is None or (not general and e.takes(used, scenario))))


def train_engine(scenario: Scenario, *, general: bool = False) -> Engine:
    """The engine that simulates the scenario's time to train."""
    used = features(scenario)
    return next(e for e in ENGINES if not e.window and (e.handles is None or (not general and e.takes(used, scenario))))


def meaningless(scenario: Scenario) -> str | None:
    """Why a setting means nothing for this scenario (one line), or None."""
    if scenario.uses_correlated and any(CORRELATED_NAME in (c.name, c.category) for c in scenario.components):
        return (
            f"components: a component is named '{CORRELATED_NAME}' or of that category, the correlated failures' own "
            "name; rename it to tell the two apart"
        )
    racks = racks_misfit(scenario)
    if racks is not None:
        return racks
    if scenario.uses_sdc and scenario.sdc_component is None:
        return (
            f"sdc_detect_hours: no component is named '{SDC_NAME}', whose failures are the silent corruptions found "
            "late (add one, or set the delay to 0)"
        )
    bad = bad_misfit(scenario)
    if bad is not None:
        return bad
    crowded = _repairs_overflow(scenario)
    if crowded is not None:
        return crowded
    sp = scenario.spares
    if sp is not None and sp.recovery_mode == "continue":
        replicas = scenario.gpus // max(1, sp.replica_gpus)
        if replicas < 2:
            return (
                f"spares.recovery_mode: continue needs two replicas or more to continue on; {scenario.gpus:,} GPUs in "
                f"replicas of {sp.replica_gpus:,} make {replicas} (use smaller replicas, or restart)"
            )
        if sp.min_gpus is not None:
            return (
                "spares.min_gpus: shrinking applies in restart mode; in continue mode the job runs on the replicas it "
                "has (a short pool shows as reduced throughput)"
            )
    if sp is not None and sp.min_gpus is not None and sp.spare_nodes is None:
        return "spares.min_gpus: shrinking needs a finite spare pool; with unlimited spares the job is never short"
    return None


def bad_misfit(sc: Scenario) -> str | None:
    """Why bad nodes mean nothing for this scenario (docs/model.md, "Bad nodes"; one line), or None."""
    if not sc.uses_bad:
        return None
    if sc.uses_nvlink:
        return (
            "bad_share: bad nodes are not modelled on NVLink racks (a rack that moves takes all its trays at once); "
            "set bad_share 0 or nvlink_gpus 0"
        )
    if round(sc.bad_share * sc.job_nodes) < 1:
        return (
            f"bad_share: {sc.bad_share:.3g} of the job's {sc.job_nodes:,} nodes is no bad node (at least "
            f"{1.0 / sc.job_nodes:.3g} makes one)"
        )
    if not bad_classes(sc).any():
        return (
            "bad_share: no cause takes a single node at an exponential rate, so no node is ever found bad (give a "
            "component the node scope, or a Weibull shape of 1)"
        )
    return None


def racks_misfit(sc: Scenario) -> str | None:
    """Why the rack inputs mean nothing for this scenario (docs/model.md, "Racks"; one line), or None."""
    if not sc.uses_nvlink:  # (warm spare trays without racks are unused, as the window's note says)
        return None
    gpn = sc.gpus_per_node
    if sc.nvlink_gpus % gpn:
        return (
            f"nvlink_gpus: an NVLink domain of {sc.nvlink_gpus:,} GPUs is not whole trays of {gpn:,} GPUs (the "
            "scenario's GPUs per node; GB200 NVL72 is 72 GPUs in trays of 4)"
        )
    if sc.rack_spare_trays >= sc.trays_per_rack:
        return (
            f"rack_spare_trays: {sc.rack_spare_trays:,} warm spares of a rack of {sc.trays_per_rack:,} trays leave no "
            "tray for the job"
        )
    sp = sc.spares
    q = sc.trays_per_rack
    if sp is not None and sp.spare_nodes is not None and sp.spare_nodes % q:
        racks = sp.spare_nodes // q
        near = f"{racks * q:,} or {(racks + 1) * q:,}" if racks else f"0 or {q:,}"
        return (
            f"spares.spare_nodes: the pool holds whole racks of {q:,} nodes on NVLink domains; {sp.spare_nodes:,} is "
            f"not (give a multiple of {q:,}: {near})"
        )
    if sp is not None and sp.recovery_mode == "continue":
        rep, job = max(1, sp.replica_gpus // gpn), sc.job_trays_per_rack
        if rep % job and job % rep:
            return (
                f"spares.replica_gpus: replicas of {sp.replica_gpus:,} GPUs do not line up with the job's "
                f"{job * gpn:,} GPUs of a rack (give a multiple or a divisor of {job * gpn:,})"
            )
    return None


#: The most nodes in repair on average, as a multiple of the cluster's nodes (the job's and its spares): beyond it
#: the failures would mostly strike nodes already in repair, which the model's independent failures do not hold.
MAX_REPAIR_CROWDING = 10.0


def _repairs_overflow(scenario: Scenario) -> str | None:
    """Why the nodes in repair are beyond the model (one line), or None: where the pool is followed (a pool, a swap or
    continue mode), the M/G/infinity mean at the profile's highest multiplier above :data:`MAX_REPAIR_CROWDING` times
    the cluster's nodes."""
    if not scenario.uses_spares:
        return None
    from ..model.spares import failure_classes

    sp = scenario.spares
    assert sp is not None
    fc = failure_classes(scenario, sp)
    peak = 1.0 if scenario.rate_profile is None else max(1.0, max(m for _, m in scenario.rate_profile))
    mean = fc.mean_nodes_in_repair * peak
    cluster = fc.job_nodes + (sp.spare_nodes or 0)
    if mean <= MAX_REPAIR_CROWDING * cluster:
        return None
    return (
        f"repairs: about {mean:,.0f} nodes would be in repair on average, over {MAX_REPAIR_CROWDING:g} times the "
        f"cluster's {cluster:,} (the job's and its spares): failures would mostly strike nodes already in repair, "
        "which the model does not hold; use shorter repairs or lower rates"
    )


def general_points(scenario: Scenario, work_hours: float | None = None) -> float:
    """The points the general engine steps through for the scenario's window (or, with ``work_hours``, a time to
    train of that many hours), all trials together: interruptions at the rates' level over the profile, the
    repairs and returns that may change the job's throughput, and the warm-up."""
    hours = (work_hours if work_hours is not None else scenario.hours) + 100.0
    rate = (
        scenario.failure_rate_per_hour + _lives_excess_per_hour(scenario, hours) + _bad_excess_per_hour(scenario, hours)
    )
    sp = scenario.spares
    nodes = 0.0
    if scenario.uses_spares:
        from ..model.spares import failure_classes

        assert sp is not None
        nodes = failure_classes(scenario, sp).node_loss_rate
    returns = rate if sp is not None and sp.recovery_mode == "continue" else 0.0
    mult = 1.0
    if scenario.rate_profile is not None:
        from ..theory.profiles import pieces

        p = pieces(scenario.rate_profile, scenario.days)
        mult = max(p.integral() / p.hours, 1.0)
    per_hour = (rate + nodes + returns) * mult + scenario.planned_per_day / 24.0 + _slow_points_per_hour(scenario)
    return per_hour * hours * scenario.trials


def _bad_excess_per_hour(scenario: Scenario, hours: float) -> float:
    """Bad nodes' extra failures per hour over ``hours`` from the job's start (their expectation, docs/model.md 3)."""
    if not scenario.uses_bad:
        return 0.0
    lam = float(bad_rates(scenario).sum())
    return float(bad_expected(scenario, lam, np.array([hours])).extra[0]) / hours


def _lives_excess_per_hour(scenario: Scenario, hours: float) -> float:
    """A new cluster's failures per hour beyond the long-run rate over its first ``hours``, from node lives that
    are not exponential (the renewal function of each component's positions; 0 for a cluster that is not new)."""
    if not (scenario.new_cluster and scenario.uses_weibull):
        return 0.0
    from ..theory.profiles import expected_to

    lived = scenario.replace(rate_profile=None, rate_uncertainty=False, days=hours / 24.0)
    counts = expected_to(lived, np.array([hours]))[: len(scenario.components), 0]
    steady = np.array([c.rate_per_gpu_hour * scenario.gpus * hours for c in scenario.components])
    return float(np.maximum(counts - steady, 0.0).sum()) / hours


def general_steps_error(scenario: Scenario, work_hours: float | None = None) -> str | None:
    """Why the general engine will not simulate the scenario's window (or a time to train of ``work_hours``)
    however few its trials: more points a trial than :data:`MAX_GENERAL_STEPS`; None when it fits. The text
    names what to shorten. (The limit on points in all, :data:`MAX_GENERAL_POINTS`, is the caller's.)"""
    per_trial = general_points(scenario, work_hours) / max(scenario.trials, 1)
    if per_trial <= MAX_GENERAL_STEPS:
        return None
    minutes = per_trial * (SECONDS_PER_STEP + SECONDS_PER_COLUMN_STEP) / 60.0
    what, shorten = ("the time to train", "less compute") if work_hours else ("the window", "fewer days or GPUs")
    if slow_dominates(scenario):
        shorten = "a lower fail-slow rate"
    return (
        f"about {per_trial:.3g} interruptions, repairs and returns a trial to simulate for {what} (about "
        f"{minutes:,.0f} min even for one trial), over the limit of {MAX_GENERAL_STEPS:.3g} a trial; use {shorten}"
    )


def _slow_points_per_hour(scenario: Scenario) -> float:
    """The general engine's points per hour for fail-slow nodes: a node turning slow, and its drain."""
    return 2.0 * scenario.slow_rate_per_gpu_hour * scenario.gpus


def slow_dominates(scenario: Scenario) -> bool:
    """Whether fail-slow nodes make most of the general engine's points for the scenario's window."""
    slow = _slow_points_per_hour(scenario) * (scenario.hours + 100.0) * scenario.trials
    return slow > 0 and 2.0 * slow > general_points(scenario)


def general_seconds(scenario: Scenario, work_hours: float | None = None) -> float:
    """The general engine's time for the scenario's window (or a time to train of ``work_hours``), estimated."""
    return general_seconds_together([scenario], work_hours)


def general_seconds_together(scenarios: Sequence[Scenario], work_hours: float | None = None) -> float:
    """The general engine's time for windows stepped together (as a sweep over spare counts steps them): each
    step is paid once for them all, each trial's point for each."""
    points = [general_points(sc, work_hours) for sc in scenarios]
    steps = max((p / max(sc.trials, 1) for p, sc in zip(points, scenarios)), default=0.0)
    return steps * SECONDS_PER_STEP + math.fsum(points) * SECONDS_PER_COLUMN_STEP
