"""The whole model (docs/model.md) in the general engine's units: one :class:`SimModel` per scenario.

Rates are per hour for the whole job, times in hours. A failure class is a scenario component; what it
does (restart from the fast or the persistent tier, or continue on the surviving replicas), the nodes it
takes and their mean repair follow from its scope and category (docs/model.md, section 1). The checkpoint
cycle is the same for both tiers: ``tau`` of compute, a stall ``c``, every ``k``-th snapshot a persistent
point that stalls ``c_p`` more (docs/model.md, 2.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.scenario import Scenario, Tiers
from ..model.spares import Spares, failure_classes
from ..model.tiers import persistent_multiple, point_stall_h, restoring_tier
from ..theory.bad_nodes import bad_classes
from ..theory.profiles import pieces
from ..theory.rates import RatePosterior

__all__ = [
    "CONTINUE",
    "RESTART_FAST",
    "RESTART_PERSISTENT",
    "SimModel",
    "sim_model",
]

#: The most hours of persistent cycles a warm-up or a window's tail covers.
MAX_CYCLE_HOURS = 96.0
#: Silent data corruption (docs/model.md 2.7): a window's warm-up grows by this many mean detection delays (at most
#: SDC_WARM_CAP_HOURS), so that few corruptions found in it started before the job; a trial is followed past its
#: window this many more mean delays (a corruption under way at the end is found, but once in 22,000, before).
SDC_WARM_MEANS = 4.0
SDC_WARM_CAP_HOURS = 168.0
SDC_TAIL_MEANS = 10.0
#: What a failure of a class does to the job.
RESTART_FAST, RESTART_PERSISTENT, CONTINUE = 1, 2, 3


@dataclass(frozen=True)
class SimModel:
    """One scenario, resolved: the world's classes, the pool, the job's cycle and downtimes (hours)."""

    # -- the world (docs/model.md, section 1) ------------------------------------------------------------
    #: Per class: failures per hour of the whole job at multiplier 1 (without rate uncertainty).
    rates: np.ndarray
    #: Per class: RESTART_FAST, RESTART_PERSISTENT or CONTINUE.
    kinds: np.ndarray
    #: Per class: nodes taken, their mean repair (hours), replicas spanned.
    nodes: np.ndarray
    repair: np.ndarray
    replicas: np.ndarray
    #: Lognormal sigma of repairs (None: exponential).
    sigma: float | None
    mu: float
    #: The rate profile's piece starts (hours from 0; the first 0) and multipliers (one piece of 1: none).
    profile_starts: np.ndarray
    profile_mults: np.ndarray
    new_cluster: bool
    spare_nodes: float  # math.inf: unlimited
    job_nodes: int
    min_nodes: int | None  # shrink down to this many nodes; None: wait (restart mode)
    continue_mode: bool
    rep_share: float  # one replica's share of the throughput
    rejoin: float  # restart + swap: a replica's return once it has its nodes
    cont_out: float  # continue stall + restart + swap: a continuing failure's replicas out
    # -- the job (docs/model.md, section 2) --------------------------------------------------------------
    tau: float
    c: float
    k: int
    c_p: float
    upload: float
    detect_restart: float
    restart: float
    restore_fast: float
    restore_persistent: float
    swap: float
    stall: float
    hours: float
    #: Fail-slow nodes (docs/model.md, "Fail-slow nodes"): episodes per hour of the whole job (0: none), the job's
    #: speed while one is under way, and the hours from an episode's start to its drain.
    slow_rate: float = 0.0
    slow_factor: float = 1.0
    slow_detect: float = 0.0
    #: Per class, detection + restart (hours) where detection differs by cause (docs/model.md 2.2); None: every
    #: class's is ``detect_restart``.
    dr_class: np.ndarray | None = None
    #: Checkpoints that fail (docs/model.md 2.1, 2.2): the chance that a save fails (a snapshot; a persistent
    #: point's copy to storage), and that a restore from the fast tier fails its validation.
    save_fail: float = 0.0
    restore_fail: float = 0.0
    #: Per class, the Weibull shape of a node position's life (docs/model.md, "Node lives"; 1: the class is a Poisson
    #: stream), or None when every class is; and whether the nodes were new at the profile's 0 (a new cluster: it
    #: stays so for a preview's later stretches, whose worlds start in the pool's steady state).
    shapes: np.ndarray | None = None
    lives_new: bool = False
    #: Per trial and class, the drawn rates per GPU-hour (rate uncertainty), or None.
    rate_draws: np.ndarray | None = None
    gpus: int = 1
    #: Rack-scale NVLink domains (docs/model.md, "Racks"): the job's racks (0: none), each one's warm spare trays and
    #: trays (its spares included), per class the racks a failure takes when it moves them and whether a warm spare
    #: may cover it; ``nodes`` then counts a moved rack's trays, and the job's trays of one rack are
    #: ``rack_share`` of them.
    racks: int = 0
    rack_spares: int = 0
    rack_take: np.ndarray | None = None
    rack_cover: np.ndarray | None = None
    rack_share: float = 1.0
    #: Hours a failure that moves racks adds to its swap (0: none); ``rejoin`` counts it already (a replica waits
    #: for nodes only after a move).
    rack_move: float = 0.0
    #: Silent data corruption (docs/model.md, "Silent data corruption"): the class whose failures are corruptions
    #: found late (-1: none), the mean hours from a corruption's start to its detection (0: found at once), and the
    #: persistent saves kept (math.inf: every one).
    sdc_class: int = -1
    sdc_detect: float = 0.0
    retained: float = math.inf
    #: Bad nodes (docs/model.md, "Bad nodes"): per class whether a bad node fails by it ``bad_mult`` times as often
    #: (None: no bad nodes), the share of the job's nodes and the pool's bad at the job's start, the chance a node
    #: failure pulls the failed node, and the chance a bad node's repair leaves it bad.
    bad_cls: np.ndarray | None = None
    bad_share: float = 0.0
    bad_mult: float = 1.0
    diagnosis: float = 1.0
    repair_fail: float = 0.0
    #: Whether the nodes in repair are followed (a pool, a swap or continue mode: the job or the report needs
    #: them); without, the world draws no repairs.
    track_pool: bool = True

    @property
    def s(self) -> float:
        return self.tau + self.c

    @property
    def cycle(self) -> float:
        """Running time from one persistent point to the next: ``k s + c_p``."""
        return self.k * self.s + self.c_p

    @property
    def points_per_upload(self) -> int:
        """``q``: uploads start every q-th persistent point of an uninterrupted run (one at a time)."""
        if self.upload <= 0:
            return 1
        return max(1, math.ceil(self.upload / self.cycle * (1.0 - 1e-12)))

    @property
    def failing(self) -> bool:
        """Whether a checkpoint can fail (a save, or a restore from the fast tier)."""
        return self.save_fail > 0.0 or self.restores_can_fail

    @property
    def restores_can_fail(self) -> bool:
        """Whether a restore from the fast tier can fail its validation, and so fall back to the bank."""
        return self.restore_fail > 0.0 and self.restarts_fast

    @property
    def finite_pool(self) -> bool:
        return math.isfinite(self.spare_nodes)

    @property
    def varying_profile(self) -> bool:
        return len(self.profile_mults) > 1 or float(self.profile_mults[0]) != 1.0

    def trial_rates(self, trials: int) -> np.ndarray:
        """(trials, classes) failures per hour of the whole job at multiplier 1."""
        if self.rate_draws is None:
            return np.broadcast_to(self.rates, (trials, len(self.rates)))
        return np.asarray(self.rate_draws[:trials] * self.gpus)

    def multiplier_at(self, t: float) -> float:
        """The profile's multiplier in force at time ``t`` (before 0: the first piece's)."""
        i = int(np.searchsorted(self.profile_starts, t, side="right")) - 1
        return float(self.profile_mults[max(i, 0)])

    @property
    def max_downtime(self) -> float:
        dr = self.detect_restart if self.dr_class is None else float(self.dr_class.max(initial=0.0))
        return dr + self.rack_move + self.swap + max(self.restore_fast, self.restore_persistent) + self.stall

    @property
    def restarts_fast(self) -> bool:
        return bool(np.any((self.kinds == RESTART_FAST) & (self.rates > 0))) or (
            self.rate_draws is not None and bool(np.any(self.kinds == RESTART_FAST))
        )

    @property
    def restarts_persistent(self) -> bool:
        return bool(np.any((self.kinds == RESTART_PERSISTENT) & (self.rates > 0))) or (
            self.rate_draws is not None and bool(np.any(self.kinds == RESTART_PERSISTENT))
        )

    def interruption_rate(self, multiplier: float) -> float:
        """Interruptions per hour of the whole job at the profile's ``multiplier`` (the drawn rates' mean with rate
        uncertainty), planned ones and slow nodes' drains included."""
        if self.rate_draws is not None:
            return float(self.rate_draws.sum(axis=1).mean()) * self.gpus * multiplier + self.mu + self.slow_rate
        return float(self.trial_rates(1)[0].sum()) * multiplier + self.mu + self.slow_rate

    def warm_hours(self) -> float:
        """The warm-up before a window (docs/model.md, 2.7): three upload cycles (at most 96 hours: a cadence of
        persistent points far longer than that starts in its steady state already), the longest downtime and
        three snapshot cycles, then 60 interruptions' worth of time, at most 96 hours."""
        big = self.interruption_rate(self.multiplier_at(-1.0))
        cycles = min(3.0 * self.points_per_upload * self.cycle + self.upload, MAX_CYCLE_HOURS)
        base = cycles + self.max_downtime + 3.0 * self.s
        late = min(SDC_WARM_MEANS * self.sdc_detect, SDC_WARM_CAP_HOURS)  # (a corruption started before it)
        return base + (min(60.0 / big, 96.0) if big > 0 else 0.0) + late

    def tail_hours(self) -> float:
        """Hours after the window within which, without interruptions, a snapshot taken after it is banked (its
        cadence's part at most 96 hours); with saves that fail, within which one is banked but once in 10,000
        (that many more persistent points, and 96 hours each); with restores from memory that can fail, however
        long the cadence (such a failure falls back to the bank: a trial settled before the bank passes the window's
        end would count the work above it as lost, however rare the failure)."""
        p = self.save_fail
        more = math.ceil(math.log(1e-4) / math.log(p)) if p > 0.0 else 0
        cap = MAX_CYCLE_HOURS * (1 + more)
        if self.restores_can_fail:  # (a restore can fall back to the bank: follow until it passes)
            cap = math.inf
        cycles = min((self.points_per_upload + 1.0 + more) * self.cycle + self.upload, cap)
        return cycles + self.max_downtime + self.s + SDC_TAIL_MEANS * self.sdc_detect


def sim_model(
    scenario: Scenario, fast_min: float | None, persistent_min: float, *, trials: int | None = None
) -> SimModel:
    """The scenario at these intervals (minutes; ``fast_min`` None: the fast tier is off) in the engine's units.

    With rate uncertainty the trials' rates are drawn here, from the scenario's own stream of rate draws
    (:meth:`.rates.RatePosterior.draw`), so every engine and every report sees the same ones.
    """
    tiers = scenario.tiers if scenario.tiers is not None else Tiers()
    spares = scenario.spares if scenario.spares is not None else Spares()
    comps = scenario.failure_components
    gpn = scenario.gpus_per_node
    fc = failure_classes(scenario, spares)
    nodes, repair, replicas, scopes = fc.nodes, fc.repair, fc.replicas, fc.scopes
    continue_mode = spares.recovery_mode == "continue"
    cont = continue_mode & fc.cont
    fast_on = tiers.fast_enabled and fast_min is not None
    tier = np.array(
        [RESTART_FAST if fast_on and restoring_tier(s, tiers) == "fast" else RESTART_PERSISTENT for s in scopes],  # type: ignore[arg-type]
        dtype=np.int64,
    )
    sdc = scenario.sdc_component
    sdc_class = comps.index(sdc) if scenario.uses_sdc and sdc is not None else -1
    if sdc_class >= 0:  # (a corruption found rolls every replica back: it restarts, in continue mode too)
        cont = cont & (np.arange(len(cont)) != sdc_class)
    kinds = np.where(cont, CONTINUE, tier).astype(np.int64)
    if fast_on:
        assert fast_min is not None
        tau, c = fast_min / 60.0, tiers.fast_stall_s / 3600.0
        k, c_p = persistent_multiple(persistent_min, fast_min), point_stall_h(scenario, tiers)
    else:
        tau, c, k, c_p = persistent_min / 60.0, scenario.write_s / 3600.0, 1, 0.0
    p = pieces(scenario.rate_profile, 1e9) if scenario.rate_profile is not None else None
    starts = np.zeros(1) if p is None else p.starts
    mults = np.ones(1) if p is None else p.multipliers
    draws = None
    if scenario.rate_uncertainty:
        posterior = RatePosterior.of(comps)  # (the correlated events' rate is fixed: no evidence behind it)
        if posterior.uncertain.any():
            draws = posterior.draw(scenario.seed, scenario.trials if trials is None else trials)
    swap = spares.swap_min / 60.0
    restart = scenario.restart_at_size_min / 60.0
    pool = math.inf if spares.spare_nodes is None else float(spares.spare_nodes)
    if scenario.uses_nvlink and math.isfinite(pool):  # (the pool serves whole racks)
        pool = float(int(pool) // scenario.trays_per_rack * scenario.trays_per_rack)
    stall = spares.continue_stall_min / 60.0
    move = scenario.rack_move_min / 60.0 if scenario.uses_nvlink else 0.0
    return SimModel(
        rates=fc.rates,
        kinds=kinds,
        nodes=nodes,
        repair=repair,
        replicas=replicas,
        sigma=spares.repair_sigma,
        mu=scenario.planned_per_day / 24.0,
        profile_starts=np.asarray(starts, dtype=float),
        profile_mults=np.asarray(mults, dtype=float),
        new_cluster=scenario.new_cluster,
        spare_nodes=pool,
        job_nodes=fc.job_nodes,
        min_nodes=None if spares.min_gpus is None or continue_mode else max(1, math.ceil(spares.min_gpus / gpn)),
        continue_mode=continue_mode,
        rep_share=min(1.0, spares.replica_gpus / scenario.gpus),
        rejoin=restart + swap + move,
        cont_out=stall + restart + swap,
        tau=tau,
        c=c,
        k=int(k),
        c_p=c_p,
        upload=tiers.persistent_upload_min / 60.0,
        detect_restart=scenario.recovery_min / 60.0,
        restart=restart,
        restore_fast=tiers.fast_restore_min / 60.0 if fast_on else 0.0,
        restore_persistent=tiers.persistent_restore_min / 60.0,
        swap=swap,
        stall=stall,
        hours=scenario.hours,
        rate_draws=draws,
        gpus=scenario.gpus,
        track_pool=scenario.uses_spares or scenario.uses_nvlink,
        racks=scenario.racks,
        rack_spares=scenario.rack_spare_trays if scenario.uses_nvlink else 0,
        rack_take=fc.racks,
        rack_cover=fc.in_rack,
        rack_share=scenario.job_trays_per_rack / scenario.trays_per_rack if scenario.uses_nvlink else 1.0,
        rack_move=move,
        slow_rate=scenario.slow_rate_per_gpu_hour * scenario.gpus,
        slow_factor=scenario.slow_factor if scenario.uses_slow else 1.0,
        slow_detect=scenario.slow_detect_min / 60.0 if scenario.uses_slow else 0.0,
        save_fail=scenario.save_fail_p,
        restore_fail=scenario.restore_fail_p if fast_on else 0.0,
        dr_class=(
            np.array([(scenario.detect_min_of(cc) + scenario.restart_at_size_min) / 60.0 for cc in comps])
            if scenario.uses_detect_by
            else None
        ),
        shapes=np.array([scenario.weibull_shape_of(cc) for cc in comps]) if scenario.uses_weibull else None,
        lives_new=scenario.new_cluster,
        sdc_class=sdc_class,
        sdc_detect=scenario.sdc_detect_hours if sdc_class >= 0 else 0.0,
        retained=float(scenario.retained_checkpoints) if scenario.retained_checkpoints > 0 else math.inf,
        bad_cls=bad_classes(scenario) if scenario.uses_bad else None,
        bad_share=scenario.bad_share if scenario.uses_bad else 0.0,
        bad_mult=scenario.bad_multiplier if scenario.uses_bad else 1.0,
        diagnosis=scenario.diagnosis_p if scenario.uses_bad else 1.0,
        repair_fail=scenario.repair_fail_p if scenario.uses_bad else 0.0,
    )
