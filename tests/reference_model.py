"""An independent, slow, event-by-event reference simulator of the whole model of docs/model.md.

It is written from that page alone (and the single-feature pages for background), to check the engine
against: one trial at a time, plain Python, a heap of timed events, numpy only for the random draws. It
uses nothing of the engines; from the package it takes only the plain inputs (:class:`Scenario`,
:class:`Spares`'s fields, each component's rate posterior from :class:`RatePosterior`, the scope table
``data/llama3_scopes.csv``) and derives everything else itself.

What it models (docs/model.md)
------------------------------
*The world* (section 1), whatever the job does: failures of component ``j`` as a Poisson process of
intensity ``x_j G m(t)`` (``x_j`` the rate, or the trial's draw from its posterior; ``m`` the rate
profile's multiplier, the first piece's before 0 and the last one's after its day), planned interruptions
at ``mu = planned_per_day / 24``; each failure takes 0, 1 or ``min(nodes_per_domain, N)`` nodes by its
scope, in repair for one exponential (or lognormal) time of its category's mean; correlated events at
``correlated_rate_per_day / 24 x m(t)``, one more class (never drawn from a posterior) taking ``min(D x
nodes_per_domain, N)`` nodes for ``correlated_repair_hours`` on average and always restoring from storage;
components with Weibull node lives (section 1, "Node lives") fail instead at each of the ``N`` node positions after
a Weibull life of their shape and of the scale their rate gives (``eta = N / (x G Gamma(1 + 1/shape))``), measured
on the profile's clock ``H(t)`` and renewed at each failure: on a new cluster every position is new at 0; otherwise
each position's renewals are lived from 100 mean lives before the start, which leaves it in its steady state;
on rack-scale NVLink domains (section 1, "Racks") the job's nodes sit in racks of ``Q - K`` of their ``Q`` trays
(``K`` warm spares): a failure that takes nodes strikes a uniformly drawn rack (a correlated event that and the
next ``D - 1``); a tray failure is covered while the rack has a spare tray not in repair (the spare is then in
repair for the failure's repair time and nothing changes in the pool), otherwise (and for a domain failure or a
correlated event) its racks move, taking ``Q`` nodes each from the pool until its repair ends (and the failure's
downtime, or its replicas' time out, is ``rack_move`` longer), and the racks that come in have every spare free;
bad nodes (section 1, "Bad nodes") from ``t = 0``: ``round(s N)`` of the job's nodes and ``round(s S)`` of a finite
pool's bad; each failure of a bad class (scope node, a Poisson stream, not the corruptions found late) is a bad node's
with the chance ``B / N``, and bad nodes fail besides at ``(M - 1) lam B m(t)`` (drawn afresh at each change of ``B``),
each of a bad class by their shares; the failed node is pulled with the chance ``p`` (else a healthy one, the failed
one when none is left), a bad one pulled comes back bad with the chance ``f``, and its replacement is bad with the
chance ``s`` (unlimited pool) or ``(P + r) / (S + 1)``;
the pool of ``S`` spares
(whole racks on NVLink domains: ``floor(S / Q) Q``)
(a failure *finds no spare* when ``A(t-) + nodes > S``); in restart mode the job is blocked (or shrinks,
with ``min_gpus``) while ``A > S``; in continue mode the replicas out, with the nodes lacking paid first
come, first served.

*The job* (section 2): snapshot cycles of ``tau`` compute and a stall ``c`` (``c + c_p`` at every
``k``-th, a persistent point) on the job's running time; uploads of ``u`` wall-clock hours (one at a time)
that make a point the bank; restarting failures that roll progress back to the fast snapshot or the bank
(promoted to the bank during a restore from storage), abort the upload and put the job down until
``max(t + detect + restart [+ swap], the latest swap still running) + restore``; continuing failures
(a continue stall, or a longer downtime); planned interruptions that drain the job (or, during a
restarting failure's downtime, only restart it); fail-slow nodes, which slow the computing job to
``slow_factor`` from their start until their drain ``slow_detect`` later, a planned interruption; blocked time
on which the job's clock stops. Every hour of ``[0, T)`` gets one label (section 2.6); ``useful`` is
``m(T) - min(m(0), m(T))`` with ``m(t)`` the lowest progress from ``t`` on.

Start and stop rules
--------------------
* **A window of a cluster that is not new.** The world and the job start at ``-W`` (``W`` the warm-up,
  :func:`default_warmup_hours` unless given) with an *empty* pool (no node in repair, no replica out, no
  node owed) and the job fresh (progress 0, count 0, computing from the start of a cycle); the trial then
  runs forward through ``0`` to ``T``. This replaces docs/model.md's exact steady-state start (section
  2.7) by a warm-up long enough to reach that steady state: the default is ``max(48, W_pool + 100 /
  Lambda)`` hours, ``W_pool`` the smallest time after which the expected nodes in repair of every
  node-taking class are within ``3.4e-4`` of their steady state (``E[(R - W)+] <= 3.4e-4 E[R]``: exactly
  8 mean repairs for exponential repairs, longer for lognormal ones) and ``Lambda`` the rate of all
  interruptions at the first piece's multiplier (so about 100 interruptions make the job forget its
  start).
* **A new cluster's window**: no warm-up; the world (empty pool) and the fresh job start at ``t = 0``.
* **After T**, each window is followed until nothing can take progress below ``m(T)`` any more: progress
  never falls below the bank (every rollback goes to the fast snapshot or the bank, and neither is ever
  below the bank, which only grows), so the trial stops at the first moment after ``T`` when the bank is at
  least the lowest progress seen since ``T``, and the stall in progress at ``T`` (if any) has ended
  (completed, drained or lost), so that its hours in the window have their label. A trial that has not
  stopped :data:`TAIL_CAP_HOURS` after ``T`` (a job that can never run again) stops there.
* **A time to train** (``training=True``): the world alone runs through the warm-up from ``-W`` (none for
  a new cluster); the job starts fresh at ``t = 0`` on the cluster as it then is (nodes in repair,
  replicas out, maybe blocked) and the trial ends the first moment progress reaches ``W_c = compute
  GPU-hours / G``, checkpointed or not. Swaps of failures before the job existed do not hold it up. Only
  ``train_hours`` is measured; ``hours`` are zeros and the counts are those of ``[0, end)``.

Readings of docs/model.md where it leaves a choice are listed in :data:`READINGS`.
"""

from __future__ import annotations

import bisect
import csv
import heapq
import math
from dataclasses import dataclass
from importlib import resources

import numpy as np

from planner_gui.core.model.scenario import Component, Scenario
from planner_gui.core.theory.rates import RatePosterior

__all__ = [
    "HOURS_KEYS",
    "READINGS",
    "TAIL_CAP_HOURS",
    "ReferenceTrials",
    "default_warmup_hours",
    "reference_model",
    "simulate_reference",
]

#: The labels of the window's hours (docs/model.md 2.6).
HOURS_KEYS = (
    "useful",
    "checkpoint",
    "lost_work",
    "recovery",
    "planned_restart",
    "waiting_for_spares",
    "reduced_throughput",
    "slow",
    "sdc_rollback",
)

#: How this simulator reads the places where docs/model.md leaves a choice.
READINGS = (
    "the latest swap still running (2.2, 2.4) exists only with a swap time: with swap 0 a node is replaced at "
    "once (docs/spares.md), so an earlier failure's `t' + detect + restart` does not hold a later interruption "
    "up; read literally it would hold a planned interruption during a node-taking failure's downtime to "
    "`t' + detect + restart`, against the renewal formula section 3 says holds without spares.",
    "planned restart: the first `restart` hours after a planned interruption are planned restart only until "
    "a restarting failure starts a downtime of its own (every interruption starts afresh, as the renewal "
    "formula of section 3 requires); a continuing failure does not end them.",
    "job clock: every downtime end, `the latest swap still running` and the planned restart's `restart` "
    "hours are on the job's clock, which stops while the job is blocked (2.5).",
    "a restarting failure or a drain during a continue stall ends the continue stall (2.2 and 2.4 give the "
    "downtime without it).",
    "after a restore from the persistent tier the fast tier's checkpoint is the bank (the restored state).",
    "k = max(1, round(persistent / fast interval)) with Python's round (ties to even).",
    "repair means: the spares section's, else GPU 48, Host 24, Network 4, Unplanned Maintenance 8, Dependency "
    "and Unknown 0 (their causes take no node by default), any other category 24.",
    "an upload ending within 1e-9 h before or at a persistent point frees the uploader for it.",
    "events at one instant: the window's edges, then world events (uploads first), then the job's.",
    "a time to train that starts blocked (2.7) computes as soon as the pool lets it, with no restart first; "
    "swaps of failures before t = 0 (the job did not exist) do not hold it up.",
    "shrinking (`min_gpus`) is a restart-mode capacity rule (section 1) and is ignored in continue mode.",
    "restores by tier count each restarting failure in [0, T) by the tier it was sent to (after promotion), "
    "whether or not a later interruption cut its restore short.",
)

#: A window's trial stops at the latest this long after T (a job that can never run again).
TAIL_CAP_HOURS = 10_000.0
#: The residual of the nodes in repair allowed at the end of the default warm-up (8 mean repairs if exponential).
POOL_RESIDUAL = math.exp(-8.0)
#: An upload ending this close before a persistent point frees the uploader for it (rounding of the sums).
TIE_HOURS = 1e-9

_DEFAULT_REPAIR = {
    "GPU": 48.0,
    "Host": 24.0,
    "Network": 4.0,
    "Unplanned Maintenance": 8.0,
    "Dependency": 0.0,
    "Unknown": 0.0,
}
_OTHER_REPAIR = 24.0
_CATEGORY_SCOPES = {
    "GPU": "node",
    "Host": "node",
    "Unplanned Maintenance": "node",
    "Network": "domain",
    "Dependency": "process",
    "Unknown": "process",
}
_INF = math.inf


@dataclass
class ReferenceTrials:
    """Per-trial results of :func:`simulate_reference` (counts and hours inside the window ``[0, T)``)."""

    hours: dict[str, np.ndarray]
    unplanned: np.ndarray
    planned: np.ndarray
    by_component: np.ndarray
    restores_fast: np.ndarray
    restores_persistent: np.ndarray
    promoted: np.ndarray
    continued: np.ndarray
    node_failures: np.ndarray
    no_spare: np.ndarray
    nodes_in_repair: np.ndarray
    train_hours: np.ndarray | None
    slow_drains: np.ndarray | None = None
    restores_failed: np.ndarray | None = None
    covered: np.ndarray | None = None
    sdc_found: np.ndarray | None = None
    sdc_unrecoverable: np.ndarray | None = None
    bad_failures: np.ndarray | None = None
    misdiagnosed: np.ndarray | None = None
    bad_fixed: np.ndarray | None = None
    bad_end: np.ndarray | None = None


# --------------------------------------------------------------------------------------------------------
# The model in hours, derived from the scenario (docs/model.md)
# --------------------------------------------------------------------------------------------------------
def _scope_table() -> dict[str, str]:
    text = resources.files("planner_gui.core").joinpath("data/llama3_scopes.csv").read_text("utf-8")
    return {row["component"]: row["scope"] for row in csv.DictReader(text.splitlines())}


def _scope(component: Component, table: dict[str, str]) -> str:
    """A component's own scope, else the table's by name, else its category's (else ``node``)."""
    if component.scope is not None:
        return str(component.scope)
    if component.name in table:
        return table[component.name]
    return _CATEGORY_SCOPES.get(component.category, "node")


@dataclass(frozen=True)
class _Model:
    """Everything a trial needs, in hours and per hour."""

    gpus: int
    job_nodes: int  # N
    hours: float  # T
    rates: tuple[float, ...]  # r_j per GPU-hour
    shapes: tuple[float, ...]  # posterior (rate uncertainty)
    scales: tuple[float, ...]
    fixed: tuple[float, ...]
    uncertain: bool
    nodes: tuple[int, ...]  # nodes a failure of class j takes
    repair_mean: tuple[float, ...]
    sigma: float | None
    tier: tuple[str, ...]  # "fast" / "persistent": the tier a restarting failure of class j restores from
    continues: tuple[bool, ...]  # continue mode: class j continues
    replicas: tuple[int, ...]  # replicas a failure of class j spans
    mode: str
    spares: float  # S (inf: unlimited)
    min_nodes: int | None
    replica_share: float  # q_rep
    mu: float
    tau: float
    c: float
    k: int
    c_p: float
    upload: float  # u
    restore: dict[str, float]
    detect: float
    restart: float
    swap: float
    continue_stall: float
    piece_starts: tuple[float, ...]  # hours, the first 0
    piece_mults: tuple[float, ...]
    new_cluster: bool
    work: float  # W_c, hours of progress (0 without a training section)
    #: Per class, the detection (hours): by component name, else category (docs/model.md 2.2); empty: ``detect``.
    detect_class: tuple[float, ...] = ()
    slow_rate: float = 0.0  # fail-slow nodes per hour of the whole job (section 1, "Fail-slow nodes")
    slow_factor: float = 1.0  # f: the job's speed while a node is slow
    slow_detect: float = 0.0  # D: hours from a node turning slow to its drain
    save_fail: float = 0.0  # the chance a save fails (2.1, "Saves that fail")
    restore_fail: float = 0.0  # the chance a restore from the fast tier fails its validation (2.2)
    #: Per class, the Weibull shape of its node lives (section 1, "Node lives"; 1: a Poisson class); empty: all 1.
    life_shapes: tuple[float, ...] = ()
    #: Racks (section 1, "Racks"): the job's racks (0: none), trays per rack ``Q``, the job's trays of one, warm
    #: spares ``K``; per class the racks a failure takes and whether a warm spare may cover it.
    racks: int = 0
    rack_trays: int = 0
    rack_job: int = 0
    rack_spares: int = 0
    rack_take: tuple[int, ...] = ()
    rack_cover: tuple[bool, ...] = ()
    rack_move: float = 0.0  # hours a failure that moves racks is down longer
    #: Silent data corruption (section 1, "Silent data corruption"): the class whose failures are corruptions found
    #: late (-1: none), the mean hours to their detection, and the persistent saves kept (inf: all).
    sdc_class: int = -1
    sdc_detect: float = 0.0
    retained: float = _INF
    #: Bad nodes (section 1, "Bad nodes"): per class whether it is a bad class (empty: no bad nodes), the share bad
    #: at the start, the multiplier, the chance the failed node is the one pulled, the chance a repair leaves one bad.
    bad_class: tuple[bool, ...] = ()
    bad_share: float = 0.0
    bad_mult: float = 1.0
    diagnosis: float = 1.0
    repair_fail: float = 0.0


def reference_model(scenario: Scenario) -> _Model:
    """The scenario's model in hours (docs/model.md), validated for what the reference needs."""
    if isinstance(scenario.checkpoint_interval_min, str):
        raise ValueError("the reference needs a numeric checkpoint_interval_min, not 'optimal'")
    tiers, sp = scenario.tiers, scenario.spares
    fast_on = tiers is not None and tiers.fast_enabled
    if tiers is not None and fast_on and isinstance(tiers.fast_interval_min, str):
        raise ValueError("the reference needs a numeric fast_interval_min, not 'optimal'")
    G, gpn = scenario.gpus, scenario.gpus_per_node
    N = max(1, math.ceil(G / gpn))
    npd = tiers.nodes_per_domain if tiers is not None else 2
    table = _scope_table()
    comps = scenario.components
    scopes = [_scope(c, table) for c in comps]
    nodes = [0 if s == "process" else (min(npd, N) if s == "domain" else 1) for s in scopes]

    # Repairs: the spares section's mean by category, else the defaults (section 1, "Repairs").
    override = dict(sp.repair_hours) if sp is not None else {}
    repair = [
        (override.get(c.category, _DEFAULT_REPAIR.get(c.category, _OTHER_REPAIR)) if n > 0 else 0.0)
        for c, n in zip(comps, nodes)
    ]
    names = [(c.name, c.category) for c in comps]
    post = RatePosterior.of(comps)
    rates = [float(c.rate_per_gpu_hour) for c in comps]
    shapes, scales, fixed = list(post.shapes), list(post.scales), list(post.fixed)
    # Correlated failures (section 1, "Correlated failures"): one more class, last, at correlated_rate_per_day / 24
    # per hour of the whole job (so per GPU-hour that over G), known (never drawn), taking correlated_domains
    # domains' nodes (at most N) for a repair of mean correlated_repair_hours, always restoring from storage.
    if scenario.correlated_rate_per_day > 0:
        per_gpu_hour = scenario.correlated_rate_per_day / 24.0 / G
        rates.append(per_gpu_hour)
        shapes.append(0.0)
        scales.append(0.0)
        fixed.append(per_gpu_hour)
        nodes.append(min(npd * scenario.correlated_domains, N))
        repair.append(scenario.correlated_repair_hours)
        scopes.append("correlated")
        names.append(("Correlated", "Correlated"))
    # Racks (section 1, "Racks"): trays of gpus_per_node GPUs, Q to a rack, K of them warm spares; the rack is the
    # failure domain; a failure that moves racks takes Q nodes from the pool for each.
    racks = trays = rack_job = 0
    take: list[int] = []
    if scenario.nvlink_gpus > 0:
        trays = scenario.nvlink_gpus // gpn
        rack_job = trays - scenario.rack_spare_trays
        racks = -(-N // rack_job)
        take = [
            0 if s == "process" else (min(scenario.correlated_domains, racks) if s == "correlated" else 1)
            for s in scopes
        ]
        nodes = [t * trays for t in take]
        repair = [
            (override.get(c.category, _DEFAULT_REPAIR.get(c.category, _OTHER_REPAIR)) if t > 0 else 0.0)
            for c, t in zip(comps, take)
        ] + ([scenario.correlated_repair_hours] if scenario.correlated_rate_per_day > 0 else [])
    stopped = [min(t * rack_job, N) for t in take] if racks else list(nodes)

    # Which tier a restarting failure restores from (2.2's table).
    def tier_of(scope: str) -> str:
        if not fast_on or scope == "correlated":
            return "persistent"
        assert tiers is not None
        if scope == "process":
            return "fast"
        if tiers.fast_replicas < 1:
            return "persistent"
        if scope == "node" or tiers.fast_placement == "other-domain":
            return "fast"
        return "persistent"

    mode = sp.recovery_mode if sp is not None else "restart"
    if mode not in ("restart", "continue"):
        raise ValueError(f"unknown recovery mode {mode!r}")
    if mode == "continue":
        assert sp is not None
        if sp.replica_gpus % gpn:
            raise ValueError("replica_gpus must be a whole number of nodes")
        n_rep = G // sp.replica_gpus
        if n_rep < 2:
            raise ValueError("continue mode needs at least two replicas")
        per_replica = sp.replica_gpus // gpn
        replicas = [(-(-n // per_replica) if n > 0 else 0) for n in stopped]
        continues = [n > 0 and r <= sp.max_replicas_lost and r < n_rep for n, r in zip(nodes, replicas)]
        share = sp.replica_gpus / G
    else:
        replicas, continues, share = [0] * len(nodes), [False] * len(nodes), 0.0
    sdc_class = next((j for j, (name, _) in enumerate(names) if name.casefold() == "silent data corruption"), -1)
    if scenario.sdc_detect_hours <= 0:
        sdc_class = -1
    if sdc_class >= 0:  # a corruption found restarts the job, in continue mode too
        continues = [c and j != sdc_class for j, c in enumerate(continues)]

    interval = float(scenario.checkpoint_interval_min) / 60.0
    write = scenario.write_s / 3600.0
    if fast_on:
        assert tiers is not None
        fast = float(tiers.fast_interval_min) / 60.0
        tau, c, k, c_p = fast, tiers.fast_stall_s / 3600.0, max(1, round(interval / fast)), write
    else:
        tau, c, k, c_p = interval, write, 1, 0.0
    restore = {
        "fast": tiers.fast_restore_min / 60.0 if tiers is not None else 0.0,
        "persistent": tiers.persistent_restore_min / 60.0 if tiers is not None else 0.0,
    }
    if scenario.rate_profile:
        profile = sorted((float(d) * 24.0, float(m)) for d, m in scenario.rate_profile)
        starts = tuple(d for d, _ in profile)
        mults = tuple(m for _, m in profile)
        starts = (0.0, *starts[1:])  # the first piece holds from 0 (and before it)
    else:
        starts, mults = (0.0,), (1.0,)
    spares = _INF if sp is None or sp.spare_nodes is None else float(sp.spare_nodes)
    if racks and spares < _INF:
        spares = float(int(spares) // trays * trays)
    min_nodes = None
    if sp is not None and sp.min_gpus is not None and mode == "restart":
        min_nodes = max(1, math.ceil(sp.min_gpus / gpn))
    work = scenario.training.gpu_hours / G if scenario.training is not None else 0.0
    return _Model(
        gpus=G,
        job_nodes=N,
        hours=scenario.hours,
        rates=tuple(rates),
        shapes=tuple(float(x) for x in shapes),
        scales=tuple(float(x) for x in scales),
        fixed=tuple(float(x) for x in fixed),
        uncertain=bool(scenario.rate_uncertainty),
        nodes=tuple(nodes),
        repair_mean=tuple(repair),
        sigma=sp.repair_sigma if sp is not None else None,
        tier=tuple(tier_of(s) for s in scopes),
        continues=tuple(continues),
        replicas=tuple(replicas),
        mode=mode,
        spares=spares,
        min_nodes=min_nodes,
        replica_share=share,
        mu=scenario.planned_per_day / 24.0,
        tau=tau,
        c=c,
        k=k,
        c_p=c_p,
        upload=tiers.persistent_upload_min / 60.0 if tiers is not None else 0.0,
        restore=restore,
        detect=scenario.detect_min / 60.0,
        # docs/model.md 2.2, "Restart at scale": the restart at 16,384 GPUs plus the growth per doubling from there
        restart=max(0.0, scenario.restart_min + scenario.restart_per_log2_gpus_min * math.log2(scenario.gpus / 16_384))
        / 60.0,
        swap=sp.swap_min / 60.0 if sp is not None else 0.0,
        continue_stall=sp.continue_stall_min / 60.0 if sp is not None else 0.0,
        piece_starts=starts,
        piece_mults=mults,
        new_cluster=bool(scenario.new_cluster),
        work=work,
        detect_class=tuple(
            dict(scenario.detect_by).get(name, dict(scenario.detect_by).get(cat, scenario.detect_min)) / 60.0
            for name, cat in names
        ),
        slow_rate=scenario.slow_rate_per_gpu_hour * G,
        slow_factor=scenario.slow_factor,
        slow_detect=scenario.slow_detect_min / 60.0,
        save_fail=scenario.save_fail_p,
        restore_fail=scenario.restore_fail_p,
        life_shapes=tuple(dict(scenario.weibull).get(name, 1.0) for name, _ in names),
        racks=racks,
        rack_trays=trays,
        rack_job=rack_job,
        rack_spares=scenario.rack_spare_trays if racks else 0,
        rack_take=tuple(take),
        rack_cover=tuple(s == "node" and scenario.rack_spare_trays > 0 for s in scopes) if racks else (),
        rack_move=scenario.rack_move_min / 60.0 if racks else 0.0,
        sdc_class=sdc_class,
        sdc_detect=scenario.sdc_detect_hours,
        retained=float(scenario.retained_checkpoints) if scenario.retained_checkpoints > 0 else _INF,
        # (bad classes: scope node, a Poisson stream, not the corruptions found late, a rate above 0)
        bad_class=tuple(
            scope == "node" and dict(scenario.weibull).get(name, 1.0) == 1.0 and j != sdc_class and rates[j] > 0
            for j, (scope, (name, _)) in enumerate(zip(scopes, names))
        )
        if scenario.bad_share > 0
        else (),
        bad_share=scenario.bad_share,
        bad_mult=scenario.bad_multiplier,
        diagnosis=scenario.diagnosis_p,
        repair_fail=scenario.repair_fail_p,
    )


def _normal_sf(x: float) -> float:
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def _residual_hours(mean: float, sigma: float | None, share: float) -> float:
    """The smallest ``W`` with ``E[(R - W)+] <= share E[R]`` for a repair ``R`` of this mean and law."""
    if mean <= 0:
        return 0.0
    if sigma is None:  # exponential: E[(R - W)+] = mean e^(-W / mean)
        return mean * math.log(1.0 / share)
    if sigma == 0:
        return mean
    s = sigma

    def excess(w: float) -> float:  # E[(R - W)+] / mean for a lognormal of this mean
        x = math.log(w / mean)
        return _normal_sf((x - s * s / 2) / s) - (w / mean) * _normal_sf((x + s * s / 2) / s)

    lo, hi = mean * 1e-6, mean
    while excess(hi) > share:
        hi *= 2.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) > share else (lo, mid)
    return hi


def default_warmup_hours(model: _Model) -> float:
    """The default warm-up (see the module docstring): ``max(48, W_pool + 100 / Lambda)`` hours."""
    pool = max(
        (
            _residual_hours(h, model.sigma, POOL_RESIDUAL)
            for h, n, r in zip(model.repair_mean, model.nodes, model.rates)
            if n > 0 and r > 0
        ),
        default=0.0,
    )
    mean_rate = sum(
        (sh * sc if model.uncertain and sh > 0 and sc > 0 else (fx if model.uncertain else r))
        for r, sh, sc, fx in zip(model.rates, model.shapes, model.scales, model.fixed)
    )
    lam = mean_rate * model.gpus * model.piece_mults[0] + model.mu
    return max(48.0, pool + (100.0 / lam if lam > 0 else 0.0))


# --------------------------------------------------------------------------------------------------------
# Random draws (numpy, drawn in blocks and handed out one at a time)
# --------------------------------------------------------------------------------------------------------
class _Draws:
    """One trial's random numbers: standard exponentials, uniforms and normals from its own generator."""

    BLOCK = 2048

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._exp: list[float] = []
        self._uni: list[float] = []
        self._nor: list[float] = []

    def exp(self) -> float:
        if not self._exp:
            self._exp = self.rng.standard_exponential(self.BLOCK).tolist()
        return self._exp.pop()

    def uniform(self) -> float:
        if not self._uni:
            self._uni = self.rng.random(self.BLOCK).tolist()
        return self._uni.pop()

    def normal(self) -> float:
        if not self._nor:
            self._nor = self.rng.standard_normal(self.BLOCK).tolist()
        return self._nor.pop()


# --------------------------------------------------------------------------------------------------------
# One trial
# --------------------------------------------------------------------------------------------------------
# World events on the heap: (time, order at one instant, sequence, kind, data); the window's edges come first
# at one instant. The upload in flight is held apart (one at a time, and an aborted one simply disappears).
_EDGE, _WORLD = 0, 1
_COMPUTE, _STALL = "compute", "stall"


class _Trial:
    """One trial: the world's events and the job's reactions, in time order (docs/model.md 1 and 2)."""

    def __init__(
        self, m: _Model, rng: np.random.Generator, training: bool, warmup: float, job_warmup: float | None = None
    ) -> None:
        self.m = m
        self.draws = _Draws(rng)
        self.training = training
        # The trial's rates (held for the whole trial, warm-up included) and the class law.
        if m.uncertain:
            x = [
                fx + sc * float(rng.standard_gamma(sh)) if sh > 0 and sc > 0 else fx
                for sh, sc, fx in zip(m.shapes, m.scales, m.fixed)
            ]
        else:
            x = list(m.rates)
        # Classes of Weibull node lives fail at their positions, not in the Poisson stream.
        shapes = m.life_shapes or (1.0,) * len(x)
        self.lived = [j for j, k in enumerate(shapes) if k != 1.0 and x[j] > 0]
        self.life_x = list(x)
        x = [0.0 if j in self.lived else v for j, v in enumerate(x)]
        total = math.fsum(x)
        self.base_rate = total * m.gpus  # failures per hour at m(t) = 1
        acc, self.class_cum = 0.0, []
        for v in x:
            acc += v
            self.class_cum.append(acc / total if total > 0 else 1.0)
        self.class_cum[-1] = 1.0
        start = 0.0 if m.new_cluster else -warmup

        # -- world state ----------------------------------------------------------------------------
        self.t = start
        self.heap: list[tuple[float, int, int, str, object]] = []
        self.seq = 0
        self.A = 0  # nodes in repair
        self.out = 0  # replicas out (continue mode)
        self.owed = 0  # nodes owed so far (rises of L at failures), continue mode
        self.paid = 0  # nodes paid so far (falls of L at repairs)
        self.waiting: list[tuple[int, int]] = []  # (owed up to and including it, replicas), first come first
        self.blocked = False
        self.theta = 1.0
        self.slow_nodes = 0  # fail-slow episodes under way (the job runs at slow_factor while any is)
        self.upload_end = _INF  # the upload in flight (wall clock), and the progress of its point
        self.upload_p = 0.0

        # -- the job ----------------------------------------------------------------------------------
        self.job = False  # the job exists (not before t = 0 for a time to train)
        self.J = 0.0  # the job's clock: wall-clock time not blocked
        self.down = False
        self.down_end = 0.0  # on the job's clock
        self.pending: str | None = None  # the restore a restarting failure's downtime ends with
        self.planned_until = -_INF  # job clock up to which the downtime is a planned restart
        self.swap_end = -_INF  # job clock: the latest node-taking restarting failure's t + detect + restart + swap
        self.cstall = False  # in a continue stall (while running)
        self.cstall_end = 0.0
        self.phase = _COMPUTE
        self.left = m.tau  # running time left in the phase
        self.count = 0  # snapshots since the last full renewal
        self.snap_count = 0  # the count at the fast tier's checkpoint (the last snapshot saved)
        self.P = 0.0
        self.P_snap = 0.0
        self.bank = 0.0
        # Silent corruptions (section 1): those under way, the mark (the lowest progress since the first of them
        # started; None: none under way), and the persistent saves kept, oldest first: (progress, saved).
        self.sdc_on = 0
        self.mark: float | None = None
        self.saves: list[tuple[float, bool]] = []
        self.found = False  # the failure being handled found a corruption under way
        # The window's work as pieces of progress computed in it and not rolled back, lowest first: a rollback
        # cuts those above its target and names the cause (section 2.6: a found corruption's rollback).
        self.pieces: list[list[float]] = []
        self.sdc_lost = 0.0

        # -- the window's books ----------------------------------------------------------------------
        self.in_window = False
        self.after_T = False
        self.hours = dict.fromkeys(HOURS_KEYS, 0.0)
        self.gain = 0.0  # progress computed inside the window
        self.lost_stalls = 0.0
        self.bucket = 0.0  # window hours of the stall in progress (their label waits for its end)
        self.P0 = 0.0
        self.min_window = _INF  # lowest progress inside [0, T)
        self.mT = _INF  # lowest progress from T on
        self.area_A = 0.0
        self.n = dict.fromkeys(
            (
                "unplanned",
                "planned",
                "restores_fast",
                "restores_persistent",
                "promoted",
                "continued",
                "node_failures",
                "no_spare",
                "slow_drains",
                "restores_failed",
                "covered",
                "sdc_found",
                "sdc_unrecoverable",
                "bad_failures",
                "misdiagnosed",
                "bad_fixed",
            ),
            0,
        )
        self.rack_busy: dict[int, list[float]] = {}  # per rack: when its warm spares in repair are back
        self.by_component = [0] * len(m.rates)
        # -- bad nodes (section 1, "Bad nodes"): from t = 0, the job's bad nodes and the pool's, a good node's rate
        # by the bad classes (per hour at m = 1) and their shares; the extra failures' process, redrawn at each
        # change of B (its version names the one in force).
        self.bad_on = any(m.bad_class)
        self.bad_started = False
        self.B = 0
        self.Pb = 0
        self.bad_version = 0
        per_node = [v * m.gpus / m.job_nodes if m.bad_class and m.bad_class[j] else 0.0 for j, v in enumerate(x)]
        self.bad_lam = math.fsum(per_node)
        acc, self.bad_cum = 0.0, []
        for v in per_node:
            acc += v
            self.bad_cum.append(acc / self.bad_lam if self.bad_lam > 0 else 1.0)
        self.bad_end = -1
        self.done_at = _INF
        self.events = 0  # events processed (for the speed figures)

        # -- the first events ---------------------------------------------------------------------------
        self._push(self._next_failure(start), _WORLD, "failure")
        if self.lived:
            self._start_lives(rng, start)
        self._push(self._next_planned(start), _WORLD, "planned")
        if m.slow_rate > 0:
            self._push(start + self.draws.exp() / m.slow_rate, _WORLD, "slow_starts")
        if training:
            self._push(0.0, _EDGE, "job_starts")
        else:
            if job_warmup is not None and not m.new_cluster and -job_warmup > start:
                self._push(-job_warmup, _EDGE, "job_begins")  # the world warms up alone before it
            else:
                self.job = True
            self._push(0.0, _EDGE, "window_opens")
            self._push(m.hours, _EDGE, "window_closes")

    # -- helpers -----------------------------------------------------------------------------------------
    def _push(self, time: float, order: int, kind: str, data: object = None) -> None:
        if time < _INF:
            self.seq += 1
            heapq.heappush(self.heap, (time, order, self.seq, kind, data))

    def _next_failure(self, t: float, base: float | None = None) -> float:
        """The next point of a Poisson process of intensity ``base x m(t)`` after ``t`` (default: the failures')."""
        starts, mults = self.m.piece_starts, self.m.piece_mults
        base = self.base_rate if base is None else base
        e = self.draws.exp()
        while True:
            i = max(0, bisect.bisect_right(starts, t) - 1)
            rate = base * mults[i]
            end = starts[i + 1] if i + 1 < len(starts) else _INF
            if rate > 0:
                if e / rate < end - t:
                    return t + e / rate
                e = max(0.0, e - rate * (end - t))
            if end == _INF:
                return _INF
            t = end

    # -- node lives (section 1, "Node lives") -------------------------------------------------------------
    def _clock(self, t: float) -> float:
        """The profile's clock: the multiplier integrated from 0 to ``t`` (before 0 at the first piece's)."""
        starts, mults = self.m.piece_starts, self.m.piece_mults
        if t <= 0:
            return mults[0] * t
        h = 0.0
        for i, a in enumerate(starts):
            b = starts[i + 1] if i + 1 < len(starts) else _INF
            if t <= a:
                break
            h += mults[i] * (min(t, b) - a)
        return h

    def _wall(self, h: float) -> float:
        """The time at which the profile's clock reads ``h`` (inf if never)."""
        starts, mults = self.m.piece_starts, self.m.piece_mults
        if h <= 0:
            return h / mults[0] if mults[0] > 0 else (-_INF if h < 0 else 0.0)
        acc = 0.0
        for i, a in enumerate(starts):
            b = starts[i + 1] if i + 1 < len(starts) else _INF
            span = mults[i] * (b - a)
            if acc + span >= h:
                return a + (h - acc) / mults[i]
            acc += span
        return _INF

    def _life(self, j: int) -> float:
        k = self.m.life_shapes[j]
        return self.eta[j] * float(self.life_rng.standard_exponential()) ** (1.0 / k)

    def _start_lives(self, rng: np.random.Generator, start: float) -> None:
        """Each lived class's N positions: new at 0 on a new cluster, else lived from 100 mean lives before."""
        m = self.m
        self.life_rng = np.random.default_rng(int(rng.integers(2**62)))
        self.eta = {}
        h0 = self._clock(start)
        for j in self.lived:
            k = m.life_shapes[j]
            self.eta[j] = m.job_nodes / (self.life_x[j] * m.gpus * math.gamma(1.0 + 1.0 / k))
            mean = self.eta[j] * math.gamma(1.0 + 1.0 / k)
            for _ in range(m.job_nodes):
                if m.new_cluster:
                    h = self._life(j)
                else:
                    h = h0 - 100.0 * mean
                    while h <= h0:
                        h += self._life(j)
                self._push(self._wall(h), _WORLD, "life_failure", (j, h))

    def _on_life_failure(self, j: int, h: float) -> None:
        """A position of class ``j`` fails at clock ``h``: renewed, it fails again one life later."""
        nxt = h + self._life(j)
        self._push(self._wall(nxt), _WORLD, "life_failure", (j, nxt))
        self._on_failure(j)

    def _next_planned(self, t: float) -> float:
        return t + self.draws.exp() / self.m.mu if self.m.mu > 0 else _INF

    def _repair_time(self, j: int) -> float:
        h = self.m.repair_mean[j]
        sigma = self.m.sigma
        if h <= 0:
            return 0.0
        if sigma is None:
            return h * self.draws.exp()
        return math.exp(math.log(h) - sigma * sigma / 2 + sigma * self.draws.normal())

    def _capacity(self) -> None:
        """Blocked and the throughput from the pool and the replicas out (section 1)."""
        m = self.m
        if m.mode == "continue":
            self.blocked = False
            self.theta = max(0.0, 1.0 - self.out * m.replica_share)
            return
        lack = self.A - m.spares
        if lack <= 0:
            self.blocked, self.theta = False, 1.0
        elif m.min_nodes is None:
            self.blocked, self.theta = True, 1.0
        else:
            have = m.job_nodes - (lack * m.rack_job / m.rack_trays if m.racks else lack)
            self.blocked = have < m.min_nodes
            self.theta = have / m.job_nodes

    def _lacking(self) -> float:
        return max(0.0, self.A - self.m.spares)

    # -- time passing ------------------------------------------------------------------------------------
    def _advance(self, t1: float) -> None:
        """Let the state run from ``self.t`` to ``t1`` (no event between), labelling the window's hours."""
        dt = t1 - self.t
        if dt <= 0:
            return
        w = self.in_window
        if w:
            self.area_A += self.A * dt
        if self.job:
            h = self.hours
            if self.blocked:
                if w:
                    h["waiting_for_spares"] += dt
            else:
                if self.down:
                    if w:
                        planned = min(dt, max(0.0, self.planned_until - self.J))
                        h["planned_restart"] += planned
                        h["recovery"] += dt - planned
                elif self.cstall:
                    if w:
                        h["recovery"] += dt
                elif self.phase == _COMPUTE:
                    speed = self.m.slow_factor if self.slow_nodes > 0 else 1.0
                    gain = self.theta * speed * dt
                    if w and gain > 0:  # (a piece of the window's work)
                        if self.pieces and self.pieces[-1][1] == self.P:
                            self.pieces[-1][1] += gain
                        else:
                            self.pieces.append([self.P, self.P + gain])
                    self.P += gain
                    self.left -= dt
                    if w:
                        self.gain += gain
                        h["reduced_throughput"] += dt - self.theta * dt
                        h["slow"] += self.theta * dt - gain
                else:
                    self.left -= dt
                    if w:
                        self.bucket += dt
                self.J += dt
        self.t = t1

    def _job_next(self) -> tuple[float, str]:
        """The job's next event on the wall clock (none while blocked: its clock stops)."""
        if not self.job or self.blocked:
            return _INF, ""
        if self.down:
            return self.t + max(0.0, self.down_end - self.J), "up"
        if self.cstall:
            return self.t + max(0.0, self.cstall_end - self.J), "cstall_end"
        when, kind = self.t + max(0.0, self.left), "phase_end"
        pace = self.theta * (self.m.slow_factor if self.slow_nodes > 0 else 1.0)
        if self.training and self.phase == _COMPUTE and pace > 0 and self.sdc_on == 0:  # (2.7: none under way)
            reach = self.t + max(0.0, self.m.work - self.P) / pace
            if reach <= when:
                return reach, "trained"
        return when, kind

    # -- progress falling back, and the labels that wait for an end ----------------------------------------
    def _roll_back(self, target: float, found: bool = False) -> None:
        while self.pieces and self.pieces[-1][1] > target:  # the window's work above the target is lost
            lo, hi = self.pieces[-1]
            if found:
                self.sdc_lost += hi - max(lo, target)
            if lo >= target:
                self.pieces.pop()
            else:
                self.pieces[-1][1] = target
        if self.mark is not None:
            self.mark = min(self.mark, target)
        self.P = target
        if self.in_window:
            self.min_window = min(self.min_window, target)
        elif self.after_T:
            self.mT = min(self.mT, target)

    def _stall_ends(self, label: str) -> None:
        """The stall in progress ends: its window hours are ``checkpoint`` or lost."""
        if label == "checkpoint":
            self.hours["checkpoint"] += self.bucket
        else:
            self.lost_stalls += self.bucket
        self.bucket = 0.0

    def _go_down(self, end: float, pending: str | None) -> None:
        self.down, self.down_end, self.pending = True, end, pending
        self.cstall = False
        self.phase, self.left = _COMPUTE, self.m.tau  # after any downtime: a cycle's compute from its start

    # -- world events ------------------------------------------------------------------------------------
    # -- bad nodes (section 1, "Bad nodes") ---------------------------------------------------------------
    def _start_bad(self) -> None:
        """The job's start: ``round(s N)`` of its nodes bad, and ``round(s S)`` of a finite pool's."""
        m = self.m
        self.bad_started = True
        self.B = round(m.bad_share * m.job_nodes)
        self.Pb = round(m.bad_share * m.spares) if m.spares < _INF else 0
        self._schedule_bad()

    def _schedule_bad(self) -> None:
        """The bad nodes' next extra failure, at ``(M - 1) lam B m(t)`` (the one drawn before is void)."""
        self.bad_version += 1
        rate = (self.m.bad_mult - 1.0) * self.bad_lam * self.B
        if rate > 0:
            self._push(self._next_failure(self.t, rate), _WORLD, "bad_failure", self.bad_version)

    def _bad_pull(self, extra: bool) -> None:
        """A node failure of a bad class: which node failed, which is pulled, and what replaces it."""
        m, N = self.m, self.m.job_nodes
        failed_bad = extra or self.draws.uniform() * N < self.B
        healthy = N - self.B - (0 if failed_bad else 1)  # the healthy nodes besides the failed one
        right = self.draws.uniform() < m.diagnosis or healthy < 1
        pulled_bad = failed_bad and right
        back_bad = pulled_bad and self.draws.uniform() < m.repair_fail
        if m.spares < _INF:
            q = (self.Pb + (1 if back_bad else 0)) / (m.spares + 1.0)
        else:
            q = m.bad_share
        new_bad = self.draws.uniform() < q
        if self.in_window:
            self.n["bad_failures"] += 1 if failed_bad else 0
            self.n["misdiagnosed"] += 0 if right else 1
            self.n["bad_fixed"] += 1 if pulled_bad and not back_bad else 0
        self.B += (1 if new_bad else 0) - (1 if pulled_bad else 0)
        if m.spares < _INF:
            self.Pb += (1 if back_bad else 0) - (1 if new_bad else 0)
        self._schedule_bad()

    def _on_failure(self, lived: int | None = None, found: bool = False, bad_extra: bool = False) -> None:
        m, t = self.m, self.t
        if bad_extra:  # a bad node's extra failure: its class by the bad classes' shares
            j = min(bisect.bisect_left(self.bad_cum, self.draws.uniform()), len(self.bad_cum) - 1)
        elif lived is None:
            self._push(self._next_failure(t), _WORLD, "failure")
            j = bisect.bisect_left(self.class_cum, self.draws.uniform())
            j = min(j, len(self.class_cum) - 1)
        else:
            j = lived
        if j == m.sdc_class and not found:  # a silent corruption starts: found as this failure a delay later
            self._push(t + m.sdc_detect * self.draws.exp(), _WORLD, "sdc_found", j)
            self.sdc_on += 1
            if self.sdc_on == 1 and self.job:
                self.mark = self.P
            return
        if self.bad_started and m.bad_class[j]:
            self._bad_pull(bad_extra)
        # (a corruption found: the restart after it rolls back to the newest clean save, section 1)
        self.found = found and self.job and self.mark is not None
        if found:
            self.sdc_on -= 1
            if self.sdc_on == 0 and not self.job:
                self.mark = None
        k = m.nodes[j]
        w = self.in_window
        if w:
            self.n["unplanned"] += 1
            self.by_component[j] += 1
        found = True
        back = None
        if k > 0 and m.racks:
            first = min(int(self.draws.uniform() * m.racks), m.racks - 1)
            hit = [(first + i) % m.racks for i in range(m.rack_take[j])]
            end = t + self._repair_time(j)
            busy = [e for e in self.rack_busy.get(hit[0], []) if e > t]
            if m.rack_cover[j] and len(busy) < m.rack_spares:  # a warm spare of the rack covers it
                self.rack_busy[hit[0]] = [*busy, end]
                if w:
                    self.n["covered"] += 1
                if m.mode == "continue" and m.continues[j]:
                    self.out += m.replicas[j]
                    self._push(t + m.continue_stall + m.restart + m.swap, _WORLD, "replicas_back", m.replicas[j])
                    if w:
                        self.n["continued"] += 1
                    self._continue_after()
                else:
                    self._restart_after(j, True)
                self._capacity()
                return
            # The racks move: back in the pool once the failure is repaired; those that come in are whole.
            back = end
            for r in hit:
                self.rack_busy.pop(r, None)
        if k > 0:
            found = self.A + k <= m.spares
            if w:
                self.n["node_failures"] += 1
                self.n["no_spare"] += 0 if found else 1
            before = self._lacking()
            self.A += k
            self._push(back if back is not None else t + self._repair_time(j), _WORLD, "repair", k)
            rise = self._lacking() - before
        cont = m.mode == "continue" and m.continues[j]
        if m.mode == "continue" and k > 0:
            reps = m.replicas[j]
            if not found:  # out until its nodes are paid, then restart + swap
                self.owed += int(rise)
                self.out += reps
                self.waiting.append((self.owed, reps))
            elif cont:
                self.out += reps
                move = m.rack_move if m.racks else 0.0  # (on racks a failure that takes nodes here moved them)
                self._push(t + m.continue_stall + m.restart + m.swap + move, _WORLD, "replicas_back", reps)
        if cont:
            if w:
                self.n["continued"] += 1
            self._continue_after()
        else:
            self._restart_after(j, k > 0, moved=k > 0 and m.racks > 0)
        self._capacity()

    def _on_repair(self, k: int) -> None:
        before = self._lacking()
        self.A -= k
        fall = before - self._lacking()
        if fall > 0:
            self.paid += int(fall)
            while self.waiting and self.waiting[0][0] <= self.paid:
                _, reps = self.waiting.pop(0)
                # (on racks every failure that waits for nodes moved its racks: the move comes after them too)
                self._push(self.t + self.m.restart + self.m.swap + self.m.rack_move, _WORLD, "replicas_back", reps)
        self._capacity()

    def _on_replicas_back(self, reps: int) -> None:
        self.out -= reps
        self._capacity()

    def _saved(self) -> bool:
        """Whether a save succeeds (2.1: each fails with chance ``save_fail``, independently)."""
        return self.m.save_fail <= 0 or self.draws.uniform() >= self.m.save_fail

    def _record_save(self, p: float, ok: bool) -> None:
        self.saves.append((p, ok))
        if len(self.saves) > self.m.retained:
            self.saves.pop(0)

    def _on_upload_end(self) -> None:
        ok = self._saved()
        self._record_save(self.upload_p, ok)
        if ok:  # (a failed upload took its time all the same)
            self.bank = self.upload_p
        self.upload_end = _INF

    # -- the job's reactions -----------------------------------------------------------------------------
    def _restart_after(self, j: int, took_nodes: bool, moved: bool = False) -> None:
        """A failure that restarts the job (2.2); one that moved racks is down the rack move longer (section 1,
        "Racks")."""
        if not self.job:
            return
        m = self.m
        own = m.tier[j]
        tier = own
        found = self.found
        self.found = False
        if self.down and self.pending == "persistent":
            tier = "persistent"  # the worse of the two
        promoted = own == "fast" and tier == "persistent"
        failed = False
        if tier == "fast" and self.bank > self.P_snap:  # (2.2) every snapshot since the bank's point failed
            tier = "persistent"
        elif tier == "fast" and m.restore_fail > 0 and self.draws.uniform() < m.restore_fail:
            tier, failed = "persistent", True  # the fast restore fails its validation
        if found and tier == "fast" and self.P_snap > self.mark:  # a snapshot since the corruption is poisoned
            tier = "persistent"
        if self.in_window:
            self.n["promoted"] += 1 if promoted else 0
            self.n["restores_" + tier] += 1
            self.n["restores_failed"] += 1 if failed else 0
        if not self.down and self.phase == _STALL:
            self._stall_ends("lost")
        if found and self.in_window:
            self.n["sdc_found"] += 1
        if found and tier == "persistent":  # the newest clean save kept, else the run starts over
            mark = self.mark
            assert mark is not None
            clean = [p for p, ok in self.saves if ok and p <= mark]
            target = clean[-1] if clean else 0.0
            if not clean and self.in_window:
                self.n["sdc_unrecoverable"] += 1
            self._roll_back(target, found=True)
            self.bank = target
            self.saves = [(target, True)]  # (the poisoned saves are dropped)
            self.count, self.P_snap, self.snap_count = 0, target, 0
        elif tier == "fast":
            self._roll_back(self.P_snap, found=found)
            self.count = self.snap_count
        else:
            self._roll_back(self.bank)
            self.count, self.P_snap, self.snap_count = 0, self.bank, 0
        if self.sdc_on == 0:
            self.mark = None
        self.upload_end = _INF  # aborted
        detect = m.detect_class[j] if m.detect_class else m.detect  # (2.2: the cause's own detection)
        if moved:
            detect += m.rack_move
        own_end = self.J + detect + m.restart + (m.swap if took_nodes else 0.0)
        end = max(own_end, self.swap_end) + m.restore[tier] + (m.restore["fast"] if failed else 0.0)
        if took_nodes and m.swap > 0:  # with no swap time the node is replaced at once: nothing still runs
            self.swap_end = max(self.swap_end, self.J + detect + m.restart + m.swap)
        self._go_down(end, tier)
        self.planned_until = -_INF  # a downtime of its own: recovery from here

    def _continue_after(self) -> None:
        """A failure the job continues after (2.3)."""
        if not self.job:
            return
        cs = self.m.continue_stall
        if self.down:
            self.down_end = max(self.down_end, self.J + cs)
        elif self.cstall:
            self.cstall_end = max(self.cstall_end, self.J + cs)
        elif cs > 0:
            self.cstall, self.cstall_end = True, self.J + cs

    def _on_slow_start(self) -> None:
        """A node turns slow (section 1, "Fail-slow nodes"): drained D hours later."""
        m = self.m
        self._push(self.t + self.draws.exp() / m.slow_rate, _WORLD, "slow_starts")
        self.slow_nodes += 1
        self._push(self.t + m.slow_detect, _WORLD, "slow_drain")

    def _on_slow_drain(self) -> None:
        """A slow node is drained: a planned interruption (2.4) of the job."""
        self.slow_nodes -= 1
        if self.in_window:
            self.n["slow_drains"] += 1
        self._interrupt_planned()

    def _on_planned(self) -> None:
        """A planned interruption (2.4)."""
        self._push(self._next_planned(self.t), _WORLD, "planned")
        if self.in_window:
            self.n["planned"] += 1
        self._interrupt_planned()

    def _interrupt_planned(self) -> None:
        if not self.job:
            return
        m = self.m
        if self.down and self.pending is not None:  # a restarting failure's downtime: persist nothing
            self._go_down(max(self.J + m.restart, self.swap_end) + m.restore[self.pending], self.pending)
        else:  # the state is intact: drain
            if not self.down and self.phase == _STALL:
                self._stall_ends("checkpoint")
            self.P_snap = self.bank = self.P
            self._record_save(self.P, True)
            self.count = self.snap_count = 0
            self.upload_end = _INF
            self._go_down(max(self.J + m.restart, self.swap_end), None)
        self.planned_until = self.J + m.restart

    # -- the job's own events ------------------------------------------------------------------------------
    def _on_phase_end(self) -> None:
        m = self.m
        if self.phase == _COMPUTE:
            self.phase = _STALL
            point = (self.count + 1) % m.k == 0
            self.left = m.c + (m.c_p if point else 0.0)
            return
        # A snapshot counts at the end of its whole stall (and is kept only if its save succeeds).
        self.count += 1
        if self._saved():
            self.P_snap, self.snap_count = self.P, self.count
        self._stall_ends("checkpoint")
        if self.count % m.k == 0:  # a persistent point
            if self.upload_end <= self.t + TIE_HOURS:
                self._on_upload_end()
            if self.upload_end == _INF:
                if m.upload <= 0:
                    ok = self._saved()  # its copy to storage, a save of its own
                    self._record_save(self.P, ok)
                    if ok:
                        self.bank = self.P
                else:
                    self.upload_end, self.upload_p = self.t + m.upload, self.P
        self.phase, self.left = _COMPUTE, m.tau

    def _on_up(self) -> None:
        self.down, self.pending = False, None
        self.planned_until = -_INF

    # -- the run ---------------------------------------------------------------------------------------------
    def _stop(self) -> bool:
        if self.training:
            return self.done_at < _INF
        if not self.after_T:
            return False
        if self.bucket == 0.0 and self.bank >= self.mT and self.sdc_on == 0:
            return True
        return self.t > self.m.hours + TAIL_CAP_HOURS

    def run(self) -> None:
        """Process events in time order until the trial's stop rule (module docstring) holds."""
        if self.training and self.m.work <= 0:
            self.done_at = 0.0
            return
        while not self._stop():
            self.events += 1
            t_job, job_kind = self._job_next()
            t_world = self.heap[0][0] if self.heap else _INF
            t_upload = self.upload_end
            if t_upload <= t_world and t_upload <= t_job and t_upload < _INF:
                if self.heap and self.heap[0][0] == t_upload and self.heap[0][1] == _EDGE:
                    pass  # the edge first
                else:
                    self._advance(t_upload)
                    self._on_upload_end()
                    continue
            if t_job < t_world:
                self._advance(t_job)
                if job_kind == "up":
                    self._on_up()
                elif job_kind == "cstall_end":
                    self.cstall = False
                elif job_kind == "phase_end":
                    self._on_phase_end()
                else:  # trained
                    self.done_at = self.t
                continue
            if not self.heap:
                raise RuntimeError("no event left: the trial cannot end")
            time, _, _, kind, data = heapq.heappop(self.heap)
            self._advance(time)
            if kind == "failure":
                self._on_failure()
            elif kind == "life_failure":
                self._on_life_failure(*data)  # type: ignore[misc]
            elif kind == "repair":
                self._on_repair(int(data))  # type: ignore[call-overload]
            elif kind == "replicas_back":
                self._on_replicas_back(int(data))  # type: ignore[call-overload]
            elif kind == "planned":
                self._on_planned()
            elif kind == "slow_starts":
                self._on_slow_start()
            elif kind == "slow_drain":
                self._on_slow_drain()
            elif kind == "sdc_found":
                self._on_failure(lived=int(data), found=True)  # type: ignore[call-overload]
            elif kind == "bad_failure":
                if data == self.bad_version:
                    self._on_failure(bad_extra=True)
            elif kind == "window_opens":
                self.in_window = True
                self.P0 = self.min_window = self.P
                if self.bad_on:
                    self._start_bad()
            elif kind == "window_closes":
                self.in_window, self.after_T = False, True
                self.mT = self.P
                self.bad_end = self.B
            elif kind == "job_starts":
                if self.bad_on:
                    self._start_bad()
                self.job = True
                self.mark = self.P if self.sdc_on else None
                self.in_window = True  # counts over [0, end) for a time to train
                self._capacity()
            elif kind == "job_begins":  # a window's job, fresh, after the world's own warm-up
                self.job = True
                self.mark = self.P if self.sdc_on else None
                self._capacity()

    def finish(self) -> dict[str, float]:
        """The window's hours (docs/model.md 2.6)."""
        h = dict(self.hours)
        if self.training:
            return dict.fromkeys(HOURS_KEYS, 0.0)
        useful = self.mT - min(self.min_window, self.mT)
        h["useful"] = useful
        h["lost_work"] = self.lost_stalls + (self.gain - useful) - self.sdc_lost
        h["sdc_rollback"] = self.sdc_lost
        return h


# --------------------------------------------------------------------------------------------------------
# The trials
# --------------------------------------------------------------------------------------------------------
def simulate_reference(
    scenario: Scenario,
    trials: int,
    seed: int,
    *,
    training: bool = False,
    warmup_hours: float | None = None,
    job_warmup_hours: float | None = None,
) -> ReferenceTrials:
    """Simulate ``trials`` independent trials of the scenario, one at a time.

    Parameters
    ----------
    scenario
        The inputs; its intervals must be numbers (not ``optimal``).
    trials, seed
        Trial ``i`` draws from ``np.random.default_rng([seed, 0xEEF, i])``.
    training
        Simulate the time to train (``train_hours``) instead of windows.
    warmup_hours
        The warm-up before ``t = 0`` (ignored for a new cluster); None: :func:`default_warmup_hours`.
    job_warmup_hours
        For a window: the job starts fresh this long before ``t = 0`` (the world has warmed up alone from
        ``-warmup_hours`` until then: cheaper where the pool needs a long warm-up and the job a short one);
        None: the job starts with the world.

    Returns
    -------
    ReferenceTrials
        Per-trial hours and counts inside ``[0, T)`` (for a time to train: ``train_hours``).
    """
    m = reference_model(scenario)
    if training and scenario.training is None:
        raise ValueError("a time to train needs the scenario's training section")
    warm = default_warmup_hours(m) if warmup_hours is None else float(warmup_hours)
    hours = {key: np.zeros(trials) for key in HOURS_KEYS}
    counts = {
        key: np.zeros(trials, dtype=np.int64)
        for key in (
            "unplanned",
            "planned",
            "restores_fast",
            "restores_persistent",
            "promoted",
            "continued",
            "node_failures",
            "no_spare",
            "slow_drains",
            "restores_failed",
            "covered",
            "sdc_found",
            "sdc_unrecoverable",
            "bad_failures",
            "misdiagnosed",
            "bad_fixed",
        )
    }
    bad_end = np.zeros(trials)
    by_component = np.zeros((trials, len(m.rates)), dtype=np.int64)
    nodes_in_repair = np.zeros(trials)
    train = np.zeros(trials) if training else None
    for i in range(trials):
        trial = _Trial(m, np.random.default_rng([seed, 0xEEF, i]), training, warm, job_warmup_hours)
        trial.run()
        for key, value in trial.finish().items():
            hours[key][i] = value
        for key in counts:
            counts[key][i] = trial.n[key]
        by_component[i] = trial.by_component
        bad_end[i] = trial.bad_end
        span = m.hours if not training else trial.done_at
        nodes_in_repair[i] = trial.area_A / span if span > 0 else float(trial.A)
        if train is not None:
            train[i] = trial.done_at
    return ReferenceTrials(
        hours=hours,
        unplanned=counts["unplanned"],
        planned=counts["planned"],
        by_component=by_component,
        restores_fast=counts["restores_fast"],
        restores_persistent=counts["restores_persistent"],
        promoted=counts["promoted"],
        continued=counts["continued"],
        node_failures=counts["node_failures"],
        no_spare=counts["no_spare"],
        nodes_in_repair=nodes_in_repair,
        train_hours=train,
        slow_drains=counts["slow_drains"],
        restores_failed=counts["restores_failed"],
        covered=counts["covered"],
        sdc_found=counts["sdc_found"],
        sdc_unrecoverable=counts["sdc_unrecoverable"],
        bad_failures=counts["bad_failures"],
        misdiagnosed=counts["misdiagnosed"],
        bad_fixed=counts["bad_fixed"],
        bad_end=bad_end,
    )
