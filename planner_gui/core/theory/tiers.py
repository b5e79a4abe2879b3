"""Closed-form expectations of the two-tier model where one exists, and the intervals to use.

Two cases reduce to renewal-reward over single intervals between interruptions, as in :mod:`.exact`:

* **No failure restores from the persistent tier** (``lam_persistent = 0``): uploads never matter; every
  unplanned interruption restores the last fast snapshot, and the model is today's single tier with the
  fast interval, the fast stall and ``R = detect + restart + fast restore``: :func:`.exact.time_fractions`
  exactly (Daly's formula without planned interruptions).
* **Every failure restores from the persistent tier** (``lam_fast = 0``: the fast tier off, or on with
  every failure losing its replicas): every interruption is a full renewal, so an interval between two is
  one spacing. Its snapshots complete every ``s = tau + c``; the points are snapshots ``k, 2k, ...`` and
  uploads start at ``k, k + q k, k + 2 q k, ...`` (one at a time), the last to finish before a persistent
  restore at ``x`` cycles after the downtime being ``B = k + q k floor((x - k - u) / (q k))`` (none if
  ``x < k + u``). So today's fractions hold, except that a persistent restore also loses the completed
  compute after ``B``: with ``x ~ Exp(X)``, ``X = Lambda s``,

      E[m - B] = 1 / expm1(X) - e^(-X (k + u)) (k + q k / expm1(X q k)),

  and ``tau lam_persistent S E[m - B]`` moves from useful to lost (``S``: the chance that an interval
  outlives its downtime). With ``u = 0`` and ``k = 1`` it is 0: today's model.

With failures of both kinds, a fast restore keeps the cycle going (the count since the bank and the phase
of the persistent cadence carry over), and the lost work at a persistent restore depends on the whole
cycle since the last full renewal. No closed form is derived here: the engine's estimate is checked against
the event-by-event reference simulator (``tests/reference_tiers.py``), and this module returns None.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..model.scenario import Scenario
from ..model.scopes import class_scopes
from ..model.specs import MAX_INTERVAL_MIN, MIN_INTERVAL_MIN, clamp_interval
from ..model.tiers import TierParams, Tiers, persistent_multiple, point_stall_h, restoring_tier
from .exact import TimeFractions, _Terms, daly_interval, exact_optimal_interval, time_fractions
from .renewal import window_rates

__all__ = [
    "TierIntervals",
    "TierRates",
    "expected_fractions",
    "optimal_tier_intervals",
    "persistent_lag",
    "tier_params",
    "tier_rates",
]


@dataclass(frozen=True)
class TierRates:
    """The unplanned rate split by the tier that restores (per hour, whole job), and which components go where."""

    fast: float
    persistent: float
    fast_components: tuple[bool, ...]  # per scenario component: restores from the fast tier


def tier_rates(scenario: Scenario, tiers: Tiers) -> TierRates:
    """Split the scenario's unplanned interruptions into the two Poisson streams by each component's scope (the
    correlated events, when on, in the persistent tier's; silent corruptions found late too: a snapshot taken since
    one started is poisoned, docs/model.md 2.2). A
    restore from memory that fails its validation (docs/model.md 2.2) restores from storage: that share of the
    failures that restore from memory is the persistent tier's stream here (what the strategy's optima and
    expectations see; the general engine simulates each restore)."""
    scenario = window_rates(scenario)  # (a new cluster's node lives: their mean rate over the window)
    comps = scenario.failure_components
    flags = tuple(restoring_tier(sc, tiers) == "fast" for sc in class_scopes(scenario))
    sdc = scenario.sdc_component
    if scenario.uses_sdc and sdc is not None:  # (found late, its snapshot in memory is poisoned: from storage)
        flags = tuple(f and c is not sdc for c, f in zip(comps, flags))
    fast = math.fsum(c.rate_per_gpu_hour for c, f in zip(comps, flags) if f) * scenario.gpus
    slow = math.fsum(c.rate_per_gpu_hour for c, f in zip(comps, flags) if not f) * scenario.gpus
    failed = fast * scenario.restore_fail_p if tiers.fast_enabled else 0.0
    return TierRates(fast - failed, slow + failed, flags[: len(scenario.components)])


def tier_params(
    scenario: Scenario, tiers: Tiers, fast_interval_min: float, persistent_interval_min: float
) -> TierParams:
    """The scenario and strategy in hours, for the intervals given (minutes; resolve "optimal" first).

    With the fast tier on, the persistent interval is rounded to a whole number ``k`` of fast intervals,
    and the persistent tier's blocking stall (the scenario's write, ``Scenario.write_s``) is paid at each
    persistent point on top of the fast stall (docs/tiers.md).
    """
    tiers.validate()
    rates = tier_rates(scenario, tiers)
    detect_restart = scenario.recovery_min / 60.0
    common = {
        "mu": scenario.planned_per_day / 24.0,
        "hours": scenario.hours,
        "upload": tiers.persistent_upload_min / 60.0,
        "r_persistent": detect_restart + tiers.persistent_restore_min / 60.0,
        "r_planned": scenario.restart_at_size_min / 60.0,
        "restore_persistent": tiers.persistent_restore_min / 60.0,
    }
    if not tiers.fast_enabled:
        return TierParams(
            lam_fast=0.0,
            lam_persistent=rates.fast + rates.persistent,
            tau=persistent_interval_min / 60.0,
            c=scenario.write_s / 3600.0,
            k=1,
            r_fast=common["r_persistent"],
            restore_fast=common["restore_persistent"],
            **common,
        )
    return TierParams(
        lam_fast=rates.fast,
        lam_persistent=rates.persistent,
        tau=fast_interval_min / 60.0,
        c=tiers.fast_stall_s / 3600.0,
        k=persistent_multiple(persistent_interval_min, fast_interval_min),
        r_fast=detect_restart + tiers.fast_restore_min / 60.0,
        restore_fast=tiers.fast_restore_min / 60.0,
        c_point=point_stall_h(scenario, tiers),
        **common,
    )


#: The persistent interval where no failure of the model restores from storage (the fast tier in another domain,
#: a persistent stall of its own): the model never needs one, so its optimum is unbounded and the interval is a
#: policy, not an optimum: daily, a copy off the cluster for what the model leaves out (a fire, a bad software
#: rollout, a need to roll back to yesterday's weights).
UNNEEDED_PERSISTENT_MIN = 1440.0
UNNEEDED_PERSISTENT_TEXT = "never needed by this model's failures (none restores from storage): daily by policy"


def persistent_lag(big: float, s: float, k: int, upload: float, skip: int) -> float:
    """``E[m - B]``: completed snapshots after the last finished upload, in an interval of ``Exp(big)`` after
    its downtime that starts at a persistent point (see the module docstring)."""
    x = big * s
    if x == 0.0:
        return 0.0
    u = upload / s
    qk = skip * k
    with np.errstate(over="ignore", divide="ignore"):
        whole = 1.0 / math.expm1(x) if x < 700 else 0.0
        reach = math.exp(-x * (k + u))
        banked = reach * (k + qk / math.expm1(x * qk)) if x * qk < 700 else reach * k
    return max(whole - banked, 0.0)


def expected_fractions(tp: TierParams) -> TimeFractions | None:
    """The exact long-run fractions of time (useful, checkpoint, lost, recovery, planned) when every failure
    restores from one tier; None when both tiers restore, or when persistent points stall longer than other
    snapshots (uneven cycles: no closed form here either)."""
    if tp.c_point > 0.0:
        return None
    if tp.lam_persistent == 0.0:
        return time_fractions(tp.lam_fast, tp.mu, tp.tau, tp.c, tp.r_fast, tp.r_planned, tp.restore_fast)
    if tp.lam_fast > 0.0:
        return None
    lam, mu = tp.lam_persistent, tp.mu
    base = time_fractions(lam, mu, tp.tau, tp.c, tp.r_persistent, tp.r_planned, tp.restore_persistent)
    big = lam + mu
    # The chance an interval outlives its downtime (a planned interruption in a failure's downtime keeps
    # the restore: :func:`.exact.time_fractions`); each interval still starts at a persistent point.
    survive = float(
        _Terms.of(
            *(
                np.asarray(v, dtype=float)
                for v in (lam, mu, tp.tau, tp.c, tp.r_persistent, tp.r_planned, tp.restore_persistent)
            )
        ).survive
    )
    rolled = tp.tau * lam * survive * persistent_lag(big, tp.s, tp.k, tp.upload, tp.skip)
    rolled = min(rolled, float(base.useful))
    return TimeFractions(
        useful=np.asarray(base.useful - rolled),
        checkpoint=base.checkpoint,
        lost_work=np.asarray(base.lost_work + rolled),
        recovery=base.recovery,
        planned=base.planned,
    )


@dataclass(frozen=True)
class TierIntervals:
    """The intervals to use, minutes, the persistent multiple ``k``, and how they were found."""

    fast_min: float
    persistent_min: float
    k: int
    method: str
    #: With the fast tier on, the persistent optimum in minutes whatever the fast interval (the daily policy when
    #: nothing restores from storage); None: found beside each fast interval (:meth:`persistent_for`).
    persistent_target_min: float | None = None
    #: With a persistent stall and restores from storage: the running time between two of them (minutes), the
    #: mean time between failures that the persistent tier's Young and Daly intervals use.
    storage_mtbf_min: float | None = None
    #: ... and the persistent stall and the upload (minutes), for :meth:`persistent_for`.
    point_stall_min: float = 0.0
    upload_min: float = 0.0

    def persistent_for(self, fast_min: float, fast_stall_min: float) -> float:
        """The optimal persistent interval (minutes) beside a fast interval of ``fast_min`` (the optimal one or
        another) and its stall: every snapshot without a persistent stall; the longest when nothing restores
        from storage; else the whole number ``k`` of snapshot cycles ``s`` that minimises Young's waste with the
        upload cadence, ``c_p / (k s) + q k s / (2 M)`` (``q = ceil(u / (k s + c_p))`` the points per upload
        that starts, ``M`` :attr:`storage_mtbf_min`): Young's ``sqrt(2 c_p M)`` where uploads keep up
        (``q = 1``), and not a multiple whose points an upload still running would skip when a slightly longer
        one avoids it. Never longer than the daily policy of :data:`UNNEEDED_PERSISTENT_MIN` (what the model leaves
        out wants a copy off the cluster daily), so that it moves smoothly to that policy as the restores from
        storage become rare."""
        if self.persistent_target_min is not None:
            return self.persistent_target_min
        if self.storage_mtbf_min is None:
            return fast_min
        s, c, u, m = fast_min + fast_stall_min, self.point_stall_min, self.upload_min, self.storage_mtbf_min
        young = math.sqrt(2.0 * c * m) / s
        # Candidates: the multiples short enough for uploads to skip points, and those around Young's.
        short = np.arange(1.0, min(math.ceil(u / s) + 3, 1 << 16) + 1)
        around = np.arange(max(1.0, math.floor(young) - 4), math.ceil(young) + 5)
        ks = np.union1d(short, around)
        q = np.maximum(1.0, np.ceil(u / (ks * s + c) * (1.0 - 1e-12))) if u > 0 else 1.0
        waste = c / (ks * s) + q * ks * s / (2.0 * m)
        return float(min(fast_min * ks[int(np.argmin(waste))], max(UNNEEDED_PERSISTENT_MIN, fast_min)))

    def to_dict(self) -> dict[str, float | int | str]:
        return {"fast_min": self.fast_min, "persistent_min": self.persistent_min, "k": self.k, "method": self.method}


def _goodput_no_fast(tp: TierParams, tau: float) -> float:
    fr = expected_fractions(dataclasses.replace(tp, tau=tau, lam_fast=0.0))  # the persistent tier alone
    assert fr is not None
    return float(fr.useful)


def _goodput_no_fast_grid(tp: TierParams, taus: np.ndarray) -> np.ndarray:
    """:func:`_goodput_no_fast` at every interval of ``taus`` at once (the same formula, elementwise;
    ``k = 1`` with the fast tier off)."""
    lam, mu = tp.lam_persistent + tp.lam_fast, tp.mu
    rho = tp.restore_persistent
    base = np.asarray(time_fractions(lam, mu, taus, tp.c, tp.r_persistent, tp.r_planned, rho).useful, dtype=float)
    big = lam + mu
    if big == 0.0:
        return base
    terms = (lam, mu, 1.0, tp.c, tp.r_persistent, tp.r_planned, rho)
    survive = float(_Terms.of(*(np.asarray(v, dtype=float) for v in terms)).survive)  # (does not depend on tau)
    s = taus + tp.c
    x = big * s
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        qk = np.maximum(1.0, np.ceil(tp.upload / s * (1.0 - 1e-12))) if tp.upload else np.ones_like(s)
        whole = np.where(x < 700, 1.0 / np.expm1(x), 0.0)
        reach = np.exp(-x * (1.0 + tp.upload / s))
        banked = np.where(x * qk < 700, reach * (1.0 + qk / np.expm1(x * qk)), reach)
        lag = np.where(x == 0.0, 0.0, np.maximum(whole - banked, 0.0))
    rolled = np.minimum(taus * lam * survive * lag, base)
    return np.asarray(base - rolled)


def _search(f: Callable[[np.ndarray], np.ndarray], lo: float, hi: float) -> float:
    """The maximiser of a unimodal function of the interval (hours) on a log grid, refined (``f`` takes the
    grid's intervals at once)."""
    a, b = math.log(lo), math.log(hi)
    for _ in range(6):
        grid = np.linspace(a, b, 81)
        values = f(np.exp(grid))
        i = int(np.argmax(values))
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        if b - a < 1e-7:
            break
    return math.exp(grid[i])


def optimal_tier_intervals(scenario: Scenario, tiers: Tiers) -> TierIntervals:
    """The fast interval and the persistent multiple that a planner should use (:func:`_optimal_tier_intervals`).

    The optimum does not depend on the intervals set, the name, the price, the trials or the seed, so it is
    remembered for the rest of the scenario: a sweep over intervals or a slider moving them (the window's
    interval plot, its exact curve) finds it once.
    """
    key_tiers = dataclasses.replace(tiers, fast_interval_min="optimal")
    key = scenario.replace(
        name="", gpu_hour_cost_usd=0.0, trials=1, seed=0, checkpoint_interval_min="optimal", tiers=key_tiers
    )
    try:
        hash(key)
    except TypeError:  # pragma: no cover - every part of a scenario is immutable
        return _optimal_tier_intervals(scenario, tiers)
    return _cached_optimum(key, key_tiers)


@functools.lru_cache(maxsize=64)
def _cached_optimum(scenario: Scenario, tiers: Tiers) -> TierIntervals:
    return _optimal_tier_intervals(scenario, tiers)


def _optimal_tier_intervals(scenario: Scenario, tiers: Tiers) -> TierIntervals:
    """The fast interval and the persistent multiple that a planner should use.

    * Fast tier off: the persistent interval that maximises the exact goodput of the persistent tier alone
      (today's formula with the upload lag, :func:`expected_fractions`), searched on a log grid.
    * Fast tier on: the fast interval trades its stall against the work every unplanned interruption loses
      since the last fast snapshot, whichever tier restores (a persistent restore loses that and more):
      the exact optimum of today's formula at the total unplanned rate with the fast stall and the fast
      restore (Daly's optimum when there are no planned interruptions). Without a persistent stall the
      persistent multiple is ``k = 1``: an upload costs no training time in this model, so uploading every
      snapshot the one-at-a-time rule allows keeps the bank closest (a larger ``k`` is a policy for storage
      traffic; the planner shows its price). With a persistent stall ``c_p`` (the scenario's write, paid at
      every persistent point), the persistent interval is Young's for that stall against the restores from
      storage (the two-level rule: each level's interval from its own cost and the failures it serves), as the
      nearest whole number of fast intervals: ``sqrt(2 c_p M)`` with ``M = rho / lam_persistent`` the *running*
      time between restores from storage, ``rho`` the share of time the job runs (computes or stalls) by the
      fast tier's exact fractions. The work a restore from storage loses is counted in running time, and where
      recovery takes most of the time (a million GPUs) the job runs little between two such restores; the wall
      clock's ``1 / lam_persistent`` put the interval 2.5 times too long there. With no restores from storage
      the model never needs a persistent checkpoint (its optimum is unbounded), so the interval is a stated
      policy, :data:`UNNEEDED_PERSISTENT_MIN` (daily), never a year-long interval given as advice. These are
      formulas, not an exact optimum of the two-tier model
      (:attr:`..sim.tiers_run.TierPlan.persistent_optimum_is_formulas`).
    """
    rates = tier_rates(scenario, tiers)
    lam = rates.fast + rates.persistent
    mu = scenario.planned_per_day / 24.0
    bounds = (MIN_INTERVAL_MIN / 60.0, MAX_INTERVAL_MIN / 60.0)
    if not tiers.fast_enabled:
        tp = tier_params(scenario, tiers, 60.0, 60.0)
        if lam == 0:
            return TierIntervals(MAX_INTERVAL_MIN, MAX_INTERVAL_MIN, 1, "no failures: the longest interval")
        if tp.c == 0 and tp.upload == 0:
            return TierIntervals(MIN_INTERVAL_MIN, MIN_INTERVAL_MIN, 1, "free checkpoints: the shortest interval")
        best = clamp_interval(60.0 * _search(lambda taus: _goodput_no_fast_grid(tp, taus), *bounds))
        return TierIntervals(best, best, 1, "exact optimum of the persistent tier alone (upload lag included)")
    c = tiers.fast_stall_s / 3600.0
    r_fast = scenario.recovery_min / 60.0 + tiers.fast_restore_min / 60.0
    if lam == 0:
        return TierIntervals(MAX_INTERVAL_MIN, MAX_INTERVAL_MIN, 1, "no failures: the longest interval")
    if c == 0:
        fast, fast_how = MIN_INTERVAL_MIN, "free snapshots: the shortest fast interval"
    else:
        # (snapshots that fail to save: each failure loses the cycles since the last one saved, docs/model.md 3)
        p = scenario.save_fail_p
        exact = exact_optimal_interval(lam, mu, c, r_fast, scenario.restart_at_size_min / 60.0, bounds, p)
        fast = clamp_interval(60.0 * exact)
        if not math.isfinite(fast):  # pragma: no cover - exact_optimal_interval always returns a number
            fast = clamp_interval(float(daly_interval(c * 60.0, 60.0 / lam)))
        fast_how = "fast: exact optimum at the total unplanned rate" + (", failed saves counted" if p > 0 else "")
    c_point = point_stall_h(scenario, tiers)
    if c_point == 0.0:
        return TierIntervals(fast, fast, 1, f"{fast_how}; k = 1 (uploads are free)")
    if rates.persistent == 0.0:
        how = f"{fast_how}; persistent: {UNNEEDED_PERSISTENT_TEXT}"
        rule = TierIntervals(fast, fast, 1, how, persistent_target_min=UNNEEDED_PERSISTENT_MIN)
    else:
        f = time_fractions(lam, mu, fast / 60.0, c, r_fast, scenario.restart_at_size_min / 60.0)
        running = max(1.0 - float(f.recovery) - float(f.planned), 1e-9)
        how = (
            f"{fast_how}; persistent: Young's for its own stall against the restores from storage (running time), "
            "with the upload cadence"
        )
        rule = TierIntervals(
            fast,
            fast,
            1,
            how,
            storage_mtbf_min=60.0 * running / rates.persistent,
            point_stall_min=60.0 * c_point,
            upload_min=tiers.persistent_upload_min,
        )
    k = min(max(1, math.floor(MAX_INTERVAL_MIN / fast)), persistent_multiple(rule.persistent_for(fast, c * 60.0), fast))
    return dataclasses.replace(rule, persistent_min=fast * k, k=k)
