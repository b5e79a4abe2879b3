"""Result types and the top-level :func:`simulate` call.

Results are plain dataclasses of numpy arrays and floats, so the UI only
renders them and the command line only formats them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..files.scenario_io import ScenarioError, scenario_to_dict
from ..model.scenario import Scenario
from ..model.spares import correlated_nodes
from ..sim.capabilities import (
    MAX_GENERAL_POINTS,
    general_points,
    general_steps_error,
    one_tier_closed_form,
    simulated_only,
    train_engine,
    window_engine,
)
from ..sim.engine import Cancelled, Layout, RawTrials, simulate_trials
from ..sim.run import ALL_HOURS_KEYS, HOURS_KEYS, SDC_HOURS_KEY, SLOW_HOURS_KEY, SPARES_HOURS_KEYS
from ..sim.tiers import TierTrials
from ..sim.tiers_run import TierPlan, plan_tiers, simulate_plans
from ..sim.varying import varying_rates
from ..theory.exact import TimeFractions, time_fractions
from ..theory.expected import rates_vary, transient_bound, uncertainty_summary, varying_expectation
from ..theory.params import OptimalIntervals, Params, optimal_intervals, resolve
from ..theory.profiles import expected_by_component
from ..util import fmt
from .summary import Summary, summarize
from .training import TimeToTrain, simulate_time_to_train, training_events, work_hours

if TYPE_CHECKING:
    from ..sim.run import SimTrials
    from ..sim.setup import Setup
    from .spares_result import SparesRun

__all__ = [
    "ALL_HOURS_KEYS",
    "HOURS_KEYS",
    "HOURS_LABELS",
    "SDC_HOURS_KEY",
    "SLOW_HOURS_KEY",
    "SPARES_HOURS_KEYS",
    "Expected",
    "SimulationResult",
    "Summary",
    "expected_for",
    "expected_for_scenario",
    "hours_label",
    "simulate",
    "simulate_tier_scenarios",
    "summarize",
]

#: What each kind of hours is called (the window, the report and ``run``).
HOURS_LABELS = {
    "useful": "useful compute",
    "checkpoint": "checkpoint writes",
    "lost_work": "lost work",
    "recovery": "detection + restart",
    "planned_restart": "planned restarts",
    "waiting_for_spares": "waiting for spares",
    "reduced_throughput": "reduced throughput",
    SLOW_HOURS_KEY: "slow nodes",
    SDC_HOURS_KEY: "corruption rollbacks",
}


def hours_label(key: str, scenario: Scenario | None = None) -> str:
    """What the hours of ``key`` are called for ``scenario``: its recovery names what it holds (a tier's
    restore, the swap of a node, the stalls of continue mode) where the model has them."""
    label = HOURS_LABELS[key]
    if key != "recovery" or scenario is None:
        return label
    t, sp = scenario.tiers, scenario.spares
    if t is not None and (t.persistent_restore_min > 0 or (t.fast_enabled and t.fast_restore_min > 0)):
        label += " + restore"
    if sp is not None and sp.swap_min > 0:
        label += " + swap"
    if sp is not None and sp.recovery_mode == "continue":
        label += " + stalls"
    return label


@dataclass(frozen=True)
class Expected:
    """The exact expectations of the model for a scenario.

    ``fractions`` is None where the model has no closed form (a two-tier strategy with failures restoring
    from both tiers: docs/tiers.md); the Monte Carlo, checked against a reference simulator, is then the
    only estimate, and :attr:`goodput` and :meth:`hours` are None.
    """

    fractions: TimeFractions | None
    hours_window: float
    unplanned: float
    planned: float

    @property
    def exact(self) -> bool:
        return self.fractions is not None

    @property
    def goodput(self) -> float | None:
        return None if self.fractions is None else float(self.fractions.useful)

    def hours(self) -> dict[str, float] | None:
        f = self.fractions
        if f is None:
            return None
        vals = (f.useful, f.checkpoint, f.lost_work, f.recovery, f.planned)
        return {k: float(v) * self.hours_window for k, v in zip(HOURS_KEYS, vals)}


@dataclass(frozen=True)
class SimulationResult:
    """Monte Carlo trials of one scenario beside the exact expectations."""

    scenario: Scenario
    interval_min: float
    optimal: OptimalIntervals
    expected: Expected
    trials: RawTrials
    #: The time to train, when the scenario has a training section.
    time_to_train: TimeToTrain | None = None
    #: The recovery strategy's plan, when the scenario uses one (:attr:`.scenario.Scenario.uses_tiers`).
    tier_plan: TierPlan | None = None
    #: Unplanned interruptions per trial by the tier they restored from (None: all from the persistent tier).
    restores_fast: np.ndarray | None = None
    #: The pool's run (its figures and closed forms), when the scenario uses spares
    #: (:attr:`.scenario.Scenario.uses_spares`).
    spares_run: SparesRun | None = None
    #: Unplanned interruptions per trial that restored from the persistent tier (None: every one not fast).
    restores_persistent: np.ndarray | None = None
    #: The engine that ran the window (:mod:`.sim.capabilities`).
    engine: str = "renewal"
    #: A window in stretches (docs/model.md 2.9): each trial's useful hours in each stretch, in time order
    #: (trials, stretches); None for a window run whole.
    useful_by_stretch: np.ndarray | None = None
    #: Fail-slow nodes (docs/model.md, "Fail-slow nodes"): per trial the hours computing at a slow node's pace lost,
    #: and the slow nodes drained in the window (None: none modelled).
    slow_hours: np.ndarray | None = None
    slow_drains: np.ndarray | None = None
    #: Checkpoints that fail (docs/model.md 2.2): per trial the restores from the fast tier that failed their
    #: validation (each then restored from storage, and counted there too); None: none can fail.
    restores_failed: np.ndarray | None = None
    #: Racks (docs/model.md, "Racks"): per trial the failures a rack's warm spare tray covered (None: no warm spares).
    rack_covered: np.ndarray | None = None
    rack_moved: np.ndarray | None = None
    #: Silent data corruption (docs/model.md, "Silent data corruption"): per trial the window's work found
    #: corruptions rolled back (out of the lost work), the corruptions found, and those with no clean checkpoint
    #: kept (None: every corruption is found at once).
    sdc_hours: np.ndarray | None = None
    sdc_found: np.ndarray | None = None
    sdc_unrecoverable: np.ndarray | None = None
    #: Bad nodes (docs/model.md, "Bad nodes"): per trial the window's failures of bad nodes, the node failures that
    #: pulled a healthy node instead of the failed one, the bad nodes pulled and fixed, and the job's bad nodes at the
    #: window's end (None: no bad nodes).
    bad_failures: np.ndarray | None = None
    misdiagnosed: np.ndarray | None = None
    bad_fixed: np.ndarray | None = None
    bad_end: np.ndarray | None = None

    @property
    def no_closed_form(self) -> str:
        """Why :attr:`expected` has no goodput when it has none: the model that has no closed form."""
        if self.spares_run is not None:
            return "spares and repairs"
        sc = self.scenario
        only = simulated_only(sc)
        if only is not None:
            return only
        if sc.new_cluster:
            return "a new cluster's start"
        if self.engine == "general" and (sc.rate_uncertainty or sc.rate_profile is not None):
            return "recovery tiers with rates that vary"
        tp = self.tier_plan
        if tp is not None and tp.params.lam_fast * tp.params.lam_persistent == 0 and tp.params.c_point > 0:
            return "persistent checkpoints stall longer than fast ones"
        return "two tiers restore"

    @property
    def hours_keys(self) -> tuple[str, ...]:
        """Where the hours go, in display order: today's five, and with spares those of
        :data:`SPARES_HOURS_KEYS` that apply to its spares (waiting with a finite pool in restart mode,
        reduced throughput with shrinking or in continue mode)."""
        slow: tuple[str, ...] = (SLOW_HOURS_KEY,) if self.slow_hours is not None else ()
        slow += (SDC_HOURS_KEY,) if self.sdc_hours is not None else ()
        if self.spares_run is None:
            return (*HOURS_KEYS, *slow)
        return (*HOURS_KEYS, *(k for k in SPARES_HOURS_KEYS if self.spares_run.applies(k)), *slow)

    @property
    def goodput(self) -> np.ndarray:
        """Per-trial goodput: compute never rolled back / wall-clock window."""
        return self.trials.useful / self.scenario.hours

    def hours_per_trial(self) -> dict[str, np.ndarray]:
        """Hours per trial by :attr:`hours_keys`."""
        t = self.trials
        out = dict(zip(HOURS_KEYS, (t.useful, t.checkpoint, t.lost_work, t.recovery, t.planned_restart)))
        if self.spares_run is not None:
            out |= {
                k: self.spares_run.trials.hours[k]
                for k in self.hours_keys[len(HOURS_KEYS) :]
                if k not in (SLOW_HOURS_KEY, SDC_HOURS_KEY)
            }
        if self.slow_hours is not None:
            out[SLOW_HOURS_KEY] = self.slow_hours
        if self.sdc_hours is not None:
            out[SDC_HOURS_KEY] = self.sdc_hours
        return out

    def by_component_mean(self) -> dict[str, float]:
        means = self.trials.by_component.mean(axis=0)
        return {c.name: float(m) for c, m in zip(self.scenario.failure_components, means)}

    def restores(self) -> dict[str, float]:
        """Mean unplanned interruptions per window by the tier they restored from (with spares in continue
        mode, those the job continued after restored from none: only its restarts count); with checkpoints that
        fail, ``failed``: the restores from the fast tier that failed their validation (then from storage, and
        counted there)."""
        fast = 0.0 if self.restores_fast is None else float(self.restores_fast.mean())
        failed = {} if self.restores_failed is None else {"failed": float(self.restores_failed.mean())}
        if self.restores_persistent is not None:
            return {"fast": fast, "persistent": float(self.restores_persistent.mean()), **failed}
        run = self.spares_run
        if run is not None and run.trials.restarts is not None:
            return {"fast": fast, "persistent": float(run.trials.restarts.mean()) - fast}
        return {"fast": fast, "persistent": float(self.trials.unplanned.mean()) - fast}

    def optimal_json(self) -> dict[str, float | None]:
        """``optimal_interval_min``: Young's, Daly's and the exact optimum of the interval the run reports as
        ``checkpoint_interval_min`` (the persistent tier's), and the optimal pair of intervals of the two tiers
        (``fast`` None with the fast tier off).

        With the fast tier off: Young's and Daly's from the blocking write, and the exact optimum the tier model's,
        which counts an upload's lag (today's without upload). With it on, Young and Daly are the persistent
        tier's own stall's (the scenario's write, paid at each persistent point) against the restores from
        storage, None without such a stall or such restores (the fast tier's are ``tiers.fast_young_min`` and
        ``fast_daly_min``); ``exact`` is the optimal pair's persistent interval, None where the optimum is only
        formulas' (both tiers restore and uploads take time, or the persistent tier stalls)."""
        plan = self.tier_plan
        out: dict[str, float | None] = dict(self.optimal.to_dict())
        if plan is None:
            return out | {"fast": None, "persistent": self.optimal.exact}
        persistent = plan.optimal.persistent_min
        if not plan.tiers.fast_enabled:
            return out | {"exact": persistent, "fast": None, "persistent": persistent}
        exact = None if plan.fast_optimum_is_formulas or plan.persistent_optimum_is_formulas else persistent
        fast = plan.optimal.fast_min
        yd = plan.persistent_young_daly()
        young, daly = (None, None) if yd is None else yd
        return out | {"young": young, "daly": daly, "exact": exact, "fast": fast, "persistent": persistent}

    def goodput_at_optimum(self) -> float | None:
        """The exact expected goodput at the exact optimal checkpoint interval (the optimum of the base
        rates; with varying rates, the goodput there is the varying rates' expectation); with a two-tier
        strategy, at both tiers' optimal intervals where a closed form exists (else None); None with spares."""
        if self.spares_run is not None or (self.engine == "general" and not one_tier_closed_form(self.scenario)):
            return None
        if self.tier_plan is not None:
            sc = self.scenario
            tiers = self.tier_plan.tiers
            best = sc.replace(checkpoint_interval_min="optimal")
            if tiers.fast_enabled:
                best = best.replace(tiers=dataclasses.replace(tiers, fast_interval_min="optimal"))
            f = plan_tiers(best).expected()
            return None if f is None else float(f.useful)
        p, _ = resolve(self.scenario, self.optimal)
        tau = self.optimal.exact / 60.0
        if rates_vary(self.scenario):
            return float(varying_expectation(self.scenario, p, tau)[0].useful)
        f = time_fractions(p.lam, p.mu, tau, p.c, p.r_unplanned, p.r_planned, save_fail=p.save_fail)
        return float(f.useful)

    def lost_gpu_hours(self) -> np.ndarray:
        """GPU-hours per trial not spent on useful compute."""
        return (self.scenario.hours - self.trials.useful) * self.scenario.gpus

    def to_json_dict(self) -> dict[str, Any]:
        """The machine-readable report of ``planner-gui run --json`` (with spares: see
        :meth:`.spares_result.SparesRun.to_json_dict`); with bad nodes the ``spares`` section (made if there is no
        pool) has their ``misdiagnosed`` pulls."""
        out = self._json_dict() if self.spares_run is None else self.spares_run.to_json_dict(self._json_dict())
        if self.misdiagnosed is not None:
            out["spares"] = {
                **(out.get("spares") or {"node_failures": summarize(self._node_failures()).to_dict()}),
                "misdiagnosed": summarize(self.misdiagnosed).to_dict(),
            }
        return out

    def _node_failures(self) -> np.ndarray:
        """Per trial the window's failures that took nodes (the pool's count, or the classes' that take nodes)."""
        if self.spares_run is not None:
            return np.asarray(self.spares_run.trials.node_failures)
        from ..model.spares import Spares, failure_classes

        nodes = failure_classes(self.scenario, Spares()).nodes
        return np.asarray(self.trials.by_component[:, nodes > 0].sum(axis=1))

    def _json_dict(self) -> dict[str, Any]:
        sc = self.scenario
        hours = self.hours_per_trial()
        lost = self.lost_gpu_hours()
        return {
            "interruptions": summarize(self.trials.unplanned).to_dict(),
            "planned_interruptions": summarize(self.trials.planned).to_dict(),
            "goodput": summarize(self.goodput).to_dict(),
            "goodput_expected": self.expected.goodput,
            "interruptions_expected": self.expected.unplanned,
            # The chance a window sees an unplanned interruption at all: the share of trials with one, and where
            # the rates are constant and known, its closed form 1 - exp(-expected count).
            "p_interrupted": float(np.mean(self.trials.unplanned > 0)),
            # (node lives are no Poisson stream: no closed form)
            "p_interrupted_expected": None
            if rates_vary(sc) or sc.uses_weibull or sc.uses_bad
            else float(-np.expm1(-self.expected.unplanned)),
            "cluster_mtbf_hours": fmt.finite_or_none(sc.cluster_mtbf_hours),
            # The window over the expected count: the job's mean time between interruptions, also where rates vary.
            "mean_gap_hours": fmt.finite_or_none(sc.hours / self.expected.unplanned)
            if self.expected.unplanned > 0
            else None,
            "gpu_mtbf_hours": fmt.finite_or_none(sc.gpu_mtbf_hours),
            # One GPU's on the same footing as mean_gap_hours (the window over the expected count, times the GPUs):
            # where the rates vary (a profile, rate uncertainty, a new cluster's node lives), what one GPU sees.
            "gpu_mean_gap_hours": fmt.finite_or_none(sc.hours * sc.gpus / self.expected.unplanned)
            if self.expected.unplanned > 0
            else None,
            "checkpoint_interval_min": self.interval_min,
            "optimal_interval_min": self.optimal_json(),
            "goodput_expected_at_optimal_interval": self.goodput_at_optimum(),
            "by_component": self.by_component_mean(),
            "hours": {k: float(v.mean()) for k, v in hours.items()},
            "hours_expected": self.expected.hours(),
            "lost_gpu_hours": summarize(lost).to_dict(),
            "lost_cost_usd": float(lost.mean() * sc.gpu_hour_cost_usd),
            "restores": self.restores(),
            **self._optional_json(),
            "scenario": scenario_to_dict(sc),
        }

    def _optional_json(self) -> dict[str, Any]:
        """The parts of the report present only for optional inputs, so that without them it is unchanged."""
        sc = self.scenario
        out: dict[str, Any] = {}
        if self.time_to_train is not None:
            out["time_to_train"] = self.time_to_train.to_json_dict(sc.gpu_hour_cost_usd)
        if sc.restart_per_log2_gpus_min:
            out["restart_at_size_min"] = sc.restart_at_size_min
        if self.slow_drains is not None:
            # (a new cluster starts with no slow node: the first drains come a detection after the start)
            span = max(0.0, sc.hours - sc.slow_detect_min / 60.0) if sc.new_cluster else sc.hours
            out["slow"] = {
                "drains": summarize(self.slow_drains).to_dict(),
                "drains_expected": sc.slow_rate_per_gpu_hour * sc.gpus * span,
            }
        if self.sdc_found is not None and self.sdc_hours is not None and self.sdc_unrecoverable is not None:
            found = self.sdc_found
            out["sdc"] = {
                "detect_hours": sc.sdc_detect_hours,
                "retained_checkpoints": sc.retained_checkpoints or None,
                "found": summarize(found).to_dict(),
                "unrecoverable": summarize(self.sdc_unrecoverable).to_dict(),
                "rollback_hours": summarize(self.sdc_hours).to_dict(),
                "rollback_hours_per_found": float(self.sdc_hours.sum() / found.sum()) if found.sum() else None,
            }
        if self.bad_failures is not None and self.bad_end is not None and self.bad_fixed is not None:
            out["bad"] = self._bad_json()
        if sc.uses_correlated:
            # (the last failure class: Scenario.failure_components)
            out["correlated"] = {
                "events": summarize(self.trials.by_component[:, -1]).to_dict(),
                "events_expected": float(expected_by_component(sc)[-1]),
                "nodes_per_event": correlated_nodes(sc),
            }
        if sc.lived_components:
            out["node_lives"] = self._lives_json()
        if sc.uses_nvlink:
            out["racks"] = self._racks_json()
        if sc.storage is not None:
            out["storage"] = {"checkpoint_write_s": sc.write_s, "warning": sc.storage_warning(self.interval_min)}
        if sc.rate_uncertainty or sc.rate_profile is not None:
            out.update(self._rates_json())
        if self.tier_plan is not None:
            out["tiers"] = self.tier_plan.to_json_dict()
        return out

    def _bad_json(self) -> dict[str, Any]:
        """Bad nodes (docs/model.md, "Bad nodes"): the inputs, per trial the window's failures of bad nodes, those
        pulled and fixed, and the job's bad nodes at the window's end, with their expectations
        (:func:`.bad_nodes.bad_expected`: exact with an unlimited pool and known rates, else None)."""
        from ..theory.bad_nodes import bad_exact
        from ..theory.profiles import bad_window

        sc = self.scenario
        assert self.bad_failures is not None and self.bad_end is not None and self.bad_fixed is not None
        e = bad_window(sc)
        exact = bad_exact(sc)
        nodes = sc.job_nodes
        return {
            "share": sc.bad_share,
            "multiplier": sc.bad_multiplier,
            "diagnosis_p": sc.diagnosis_p,
            "repair_fail_p": sc.repair_fail_p,
            "bad_at_start": round(sc.bad_share * nodes),
            "bad_failures": summarize(self.bad_failures).to_dict(),
            "bad_failures_expected": float(e.failures[0]) if exact else None,
            "extra_failures_expected": float(e.extra[0]) if exact else None,
            "fixed": summarize(self.bad_fixed).to_dict(),
            "bad_at_end": summarize(self.bad_end).to_dict(),
            "bad_at_end_expected": float(e.bad[0]) if exact else None,
        }

    def _racks_json(self) -> dict[str, Any]:
        """Rack-scale NVLink domains (docs/model.md, "Racks"): the layout, the GPUs its racks hold, and per trial the
        failures a rack's warm spare tray covered and those that moved racks to spare racks, with the moves'
        expectation where a closed form gives it (:func:`.theory.racks.rack_moves_expected`)."""
        from ..model.spares import spare_racks
        from ..theory.racks import rack_moves_expected

        sc = self.scenario
        zeros = np.zeros(len(self.goodput))
        warm = sc.warm_spare_gpus  # (GPUs held out of the job as warm spares)
        # A correlated event that moves several racks counts once among the moves, each of its racks in racks_moved.
        take = min(sc.correlated_domains, sc.racks)
        extra = (take - 1) * self.trials.by_component[:, -1] if sc.uses_correlated else zeros
        moved = self.rack_moved if self.rack_moved is not None else zeros
        covered = self.rack_covered if self.rack_covered is not None else zeros
        return {
            "nvlink_gpus": sc.nvlink_gpus,
            "trays_per_rack": sc.trays_per_rack,
            "spare_trays_per_rack": sc.rack_spare_trays,
            "job_trays_per_rack": sc.job_trays_per_rack,
            "racks": sc.racks,
            "gpus_in_racks": sc.racks * sc.nvlink_gpus,
            "warm_spare_gpus": warm,
            "warm_spare_gpu_hours": warm * sc.hours,
            "warm_spare_cost_usd": warm * sc.hours * sc.gpu_hour_cost_usd,
            "spare_racks": spare_racks(sc),
            "covered_in_rack": summarize(covered).to_dict(),
            "moves": summarize(moved).to_dict(),
            "moves_expected": rack_moves_expected(sc),
            "racks_moved": summarize(moved + extra).to_dict(),
            # (with a time to train: the warm spares held for it, at its mean length)
            "warm_spare_cost_to_train_usd": None
            if self.time_to_train is None
            else warm * float(self.time_to_train.hours.mean()) * sc.gpu_hour_cost_usd,
        }

    def _lives_json(self) -> dict[str, Any]:
        """Per component given a node life (a shape of 1 included): its shape, scale and mean life per node (hours;
        None at a rate of 0), its failures in the window against their expectation and against its long-run
        rate's."""
        sc = self.scenario
        expected = expected_by_component(sc)
        steady = expected_by_component(sc.replace(new_cluster=False))
        out = {}
        index = {c.name: j for j, c in enumerate(sc.components)}
        for c, shape in sc.lived_components:
            j = index[c.name]
            out[c.name] = {
                "shape": shape,
                "scale_hours": fmt.finite_or_none(sc.weibull_scale_hours(c)),
                "mean_life_hours": fmt.finite_or_none(sc.weibull_mean_life_hours(c)),
                "failures": summarize(self.trials.by_component[:, j]).to_dict(),
                "failures_expected": float(expected[j]),
                "failures_at_long_run_rate": float(steady[j]),
            }
        return out

    def _rates_json(self) -> dict[str, Any]:
        """With rate uncertainty: how much of the variance the rates cause; with a profile: the bound on the
        exact goodput's error from its changes of rate."""
        sc, out = self.scenario, {}
        p, _ = resolve(sc, self.optimal)
        if sc.rate_uncertainty:
            _, var = varying_rates(sc, p)  # the engine's own draws of each trial's rates (the same stream)
            rate = np.full(len(self.goodput), p.lam) if var is None else var.lams(p.lam, len(self.goodput))
            fitted = None if self.engine != "general" else _fitted_goodput(rate, self.goodput)
            out["uncertainty"] = uncertainty_summary(sc, p, rate, self.goodput, fitted)
        if sc.rate_profile is not None:
            bound = transient_bound(sc, p) if self.expected.goodput is not None else None
            out["rate_profile"] = {"goodput_expected_bound": bound}
        return out


def _fitted_goodput(rate: np.ndarray, goodput: np.ndarray) -> np.ndarray:
    """``E[goodput | the trial's rate]`` estimated from the trials themselves (a quadratic in the rate, by least
    squares), where no closed form gives it (the general engine's models)."""
    if len(rate) < 4 or float(np.ptp(rate)) == 0.0:
        return np.full(len(goodput), float(goodput.mean()))
    x = (rate - rate.mean()) / rate.std()
    coef = np.polyfit(x, goodput, 2)
    return np.asarray(np.polyval(coef, x))


def expected_for(params: Params) -> Expected:
    """The exact expectations for constant rates."""
    f = time_fractions(*params.fraction_args)
    return Expected(f, params.hours, params.lam * params.hours, params.mu * params.hours)


def expected_for_scenario(scenario: Scenario, params: Params) -> Expected:
    """The exact expectations for the scenario's rates (:func:`expected_for` when they are constant; with a
    profile or rate uncertainty, :func:`.expected.varying_expectation`)."""
    if scenario.new_cluster and scenario.uses_weibull:  # (a new cluster's node lives: their renewals' count)
        fractions = varying_expectation(scenario, params)[0] if rates_vary(scenario) else expected_for(params).fractions
        return Expected(fractions, params.hours, _expected_unplanned(scenario, params), params.mu * params.hours)
    if not rates_vary(scenario):
        return expected_for(params)
    fractions, unplanned = varying_expectation(scenario, params)
    return Expected(fractions, params.hours, unplanned, params.mu * params.hours)


def simulate(
    scenario: Scenario,
    *,
    layout: Layout | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SimulationResult:
    """Run the Monte Carlo for ``scenario`` and compute the exact expectations beside it (where the model has
    them); with a training section, also the time to train. :mod:`.sim.capabilities` chooses the engine.

    See :func:`.engine.simulate_trials` for ``layout``, ``progress`` and ``should_stop``.
    """
    return simulate_scenarios([scenario], layout=layout, progress=progress, should_stop=should_stop)[0]


def simulate_scenarios(
    scenarios: Sequence[Scenario],
    *,
    layout: Layout | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    general: bool = False,
    segments: int = 1,
    refused: list[str | None] | None = None,
) -> list[SimulationResult]:
    """:func:`simulate` of each scenario, each on the engine :mod:`.sim.capabilities` chooses (``general``: the
    general engine for every one). Those on the general engine step together (a sweep's points cost about one
    run's steps); each result is the one its scenario gives alone.

    ``segments`` > 1 is a preview's (docs/model.md 2.9): the general engine cuts each window into that many
    stretches stepped side by side, and a time to train is read off each trial's stretches in time order, not
    simulated. The other engines ignore it.

    ``refused`` (a list, one entry per scenario): a time to train the general engine refuses (it would never finish,
    or take too long) is said there, in words, and that result has no time to train, instead of the refusal failing
    every scenario; the others' windows and times to train are not simulated again."""
    engines = [window_engine(sc, general=general).key for sc in scenarios]
    trains = [train_engine(sc, general=general).key if sc.training is not None else None for sc in scenarios]
    weights = [_window_weight(sc, e) for sc, e in zip(scenarios, engines)]
    weights += [_train_weight(sc, e) if e is not None else 0.0 for sc, e in zip(scenarios, trains)]
    parts = _Parts(progress, weights)
    out: list[SimulationResult | None] = [None] * len(scenarios)
    gen = [i for i, e in enumerate(engines) if e == "general"]
    tiered = [i for i, e in enumerate(engines) if e == "tiers"]
    for i, e in enumerate(engines):
        if e == "renewal":
            out[i] = _simulate_renewal(scenarios[i], layout, parts.one(i), should_stop)
    if tiered:
        res = simulate_tier_scenarios(
            [scenarios[i] for i in tiered], progress=parts.group(tiered), should_stop=should_stop
        )
        for i, r in zip(tiered, res):
            out[i] = r
    if gen:
        done_gen = _simulate_general([scenarios[i] for i in gen], parts.group(gen), should_stop, segments)
        for i, r in zip(gen, done_gen):
            out[i] = r
    n = len(scenarios)
    first = [i for i, e in enumerate(trains) if e == "first-passage"]
    for i in first:
        res_i = out[i]
        assert res_i is not None
        p, _ = resolve(scenarios[i], res_i.optimal)
        ttt = simulate_time_to_train(scenarios[i], p, progress=parts.one(n + i), should_stop=should_stop)
        out[i] = dataclasses.replace(res_i, time_to_train=ttt)
    gen_train = [i for i, e in enumerate(trains) if e == "general"]
    if gen_train and segments > 1:
        for i in gen_train:
            res_i = out[i]
            assert res_i is not None
            ttt = _time_to_train_from_stretches(scenarios[i], res_i)
            out[i] = dataclasses.replace(res_i, time_to_train=ttt)
        gen_train = []
    if gen_train:
        said: list[str | None] | None = None if refused is None else [None] * len(gen_train)
        done = _general_times_to_train(
            [scenarios[i] for i in gen_train],
            [out[i] for i in gen_train],  # type: ignore[misc]
            parts.group([n + i for i in gen_train]),
            should_stop,
            said,
        )
        for k, (i, trained) in enumerate(zip(gen_train, done)):
            res_i = out[i]
            assert res_i is not None
            out[i] = dataclasses.replace(res_i, time_to_train=trained)
            if refused is not None and said is not None:
                refused[i] = said[k]
    if progress is not None:
        progress(1.0)
    return [r for r in out if r is not None]


class _Parts:
    """Progress callbacks for the parts of a run, each weighted by what it costs, so the fraction reported runs
    once from 0 to 1. Ask for a part's callback just before running it: parts are reported in that order."""

    def __init__(self, progress: Callable[[float], None] | None, weights: Sequence[float]) -> None:
        self.progress = progress
        w = np.asarray(weights, dtype=float)
        w = np.where(np.isfinite(w), w, 0.0)
        total = float(w.sum())
        self.w = w / total if total > 0 else np.full(len(w), 1.0 / max(len(w), 1))
        self.done = 0.0

    def group(self, idx: Sequence[int]) -> Callable[[float], None] | None:
        """One callback for parts that run together (reported as the share of their summed weight)."""
        weight = float(self.w[list(idx)].sum()) if len(idx) else 0.0
        base = self.done
        self.done += weight
        if self.progress is None or not len(idx):
            return None
        report = self.progress
        return lambda f: report(min(1.0, base + weight * f))

    def one(self, i: int) -> Callable[[float], None] | None:
        return self.group([i])


def _window_weight(sc: Scenario, engine: str) -> float:
    if engine == "general":
        return general_points(sc)
    p, _ = resolve(sc)
    return (p.lam + p.mu) * p.hours * sc.trials + sc.trials


def _train_weight(sc: Scenario, engine: str) -> float:
    if engine == "general":
        return general_points(sc, work_hours(sc) * 1.5)
    p, _ = resolve(sc)
    return training_events(p, work_hours(sc), sc.trials)


def simulate_tier_scenarios(
    scenarios: list[Scenario],
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[SimulationResult]:
    """The vectorized two-tier engine's windows (scenarios in its domain: :mod:`.sim.capabilities`)."""
    plans = [plan_tiers(sc) for sc in scenarios]
    outs = simulate_plans(plans, progress=progress, should_stop=should_stop)
    return [_tier_result(plan, optimal_intervals(sc), out) for plan, sc, out in zip(plans, scenarios, outs)]


def _tier_result(plan: TierPlan, optimal: OptimalIntervals, out: TierTrials) -> SimulationResult:
    tp = plan.params
    expected = Expected(plan.expected(), tp.hours, (tp.lam_fast + tp.lam_persistent) * tp.hours, tp.mu * tp.hours)
    return SimulationResult(
        plan.scenario,
        plan.persistent_min,
        optimal,
        expected,
        out.raw(),
        None,
        plan,
        np.asarray(out.restores_fast),
        restores_persistent=np.asarray(out.restores_persistent),
        engine="tiers",
    )


def simulate_spares_scenarios(
    scenarios: list[Scenario],
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[SimulationResult]:
    """:func:`simulate` of scenarios with spares, on the general engine, stepped together."""
    return simulate_scenarios(scenarios, progress=progress, should_stop=should_stop, general=True)


def simulate_spares_at_intervals(
    scenario: Scenario,
    intervals_min: np.ndarray,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[SimulationResult]:
    """:func:`simulate` of a scenario at each checkpoint interval (minutes), stepped together on the general engine:
    the world of one seed does not depend on the interval, so every interval sees the same failures and repairs."""
    scs = [scenario.replace(checkpoint_interval_min=float(x)) for x in intervals_min]
    return simulate_scenarios(scs, progress=progress, should_stop=should_stop, general=True)


def _simulate_renewal(
    scenario: Scenario,
    layout: Layout | None,
    progress: Callable[[float], None] | None,
    should_stop: Callable[[], bool] | None,
) -> SimulationResult:
    """The renewal engine's window (one tier, no spares: every interruption starts the job afresh)."""
    optimal = optimal_intervals(scenario)
    params, interval = resolve(scenario, optimal)
    raw = simulate_trials(scenario, params, layout=layout, progress=progress, should_stop=should_stop)
    return SimulationResult(scenario, interval, optimal, expected_for_scenario(scenario, params), raw)


def _simulate_general(
    scenarios: Sequence[Scenario],
    progress: Callable[[float], None] | None,
    should_stop: Callable[[], bool] | None,
    segments: int = 1,
) -> list[SimulationResult]:
    """The general engine's windows, stepped together (docs/model.md; ``segments``: 2.9)."""
    from ..sim.run import Cancelled as SimCancelled
    from ..sim.run import simulate_windows
    from ..sim.setup import prepare

    setups = [prepare(sc) for sc in scenarios]
    try:
        runs = simulate_windows(
            [(su.model, sc.trials, sc.seed) for su, sc in zip(setups, scenarios)],
            segments=segments,
            progress=progress,
            should_stop=should_stop,
        )
    except SimCancelled:
        raise Cancelled() from None
    return [_general_result(su, t) for su, t in zip(setups, runs)]


def hours_to_reach(work: float, useful: np.ndarray, length: float) -> np.ndarray:
    """Per trial (a row of ``useful``: its useful hours in each stretch of ``length`` hours, in time order), the
    hours until the useful hours add up to ``work``: within the stretch that reaches it, at that stretch's pace;
    past the window, at the pace of its second half (the rates in force late in the window hold past it, as a
    profile's last piece does; half the stretches, not the last alone, so that one stretch's stall does not set
    the pace of a run far longer than the window)."""
    u = np.asarray(useful, dtype=float)
    trials, m = u.shape
    before = np.concatenate([np.zeros((trials, 1)), np.cumsum(u, axis=1)], axis=1)  # useful before stretch k
    k = (before[:, 1:] < work).sum(axis=1)  # the stretch that reaches it (m: none does)
    inside = k < m
    rows = np.arange(trials)
    kk = np.minimum(k, m - 1)
    late = u[:, m // 2 :].sum(axis=1) / ((m - m // 2) * length)  # useful hours per hour, the window's second half
    pace = np.where(inside, u[rows, kk] / length, late)
    pace = np.maximum(pace, 1e-9)
    start = np.where(inside, kk * length, m * length)
    done = np.where(inside, before[rows, kk], before[:, m])
    return np.asarray(start + (work - done) / pace)


def stretch_hours_to_train(work: float, goodput: np.ndarray, useful: np.ndarray | None, hours: float) -> np.ndarray:
    """Each trial's hours to do ``work`` in a window of ``hours`` (docs/model.md 2.9): read off its stretches in
    time order (``useful``: each trial's useful hours in each stretch, :func:`hours_to_reach`) where it was run in
    stretches, else the work over its ``goodput``."""
    if useful is None:
        return np.asarray(work / np.maximum(np.asarray(goodput, dtype=float), 1e-6))
    return hours_to_reach(work, useful, hours / useful.shape[1])


def _time_to_train_from_stretches(scenario: Scenario, res: SimulationResult) -> TimeToTrain:
    """A preview's time to train on the general engine (docs/model.md 2.9): per trial, when its stretches' useful
    hours, in time order, reach the work (refused as the simulated one would be, by the window's mean goodput)."""
    work = work_hours(scenario)
    check_general_training(scenario, float(res.goodput.mean()), work, res.interval_min)
    e = res.expected.goodput
    hours = stretch_hours_to_train(work, res.goodput, res.useful_by_stretch, scenario.hours)
    return TimeToTrain(work, scenario.gpus, hours, work / e if e is not None and e > 0 else None)


def _general_result(su: Setup, t: SimTrials) -> SimulationResult:
    from ..model.spares import Spares, spares_params
    from .spares_result import SparesRun

    sc = su.scenario
    h = t.hours
    raw = RawTrials(
        t.unplanned,
        t.planned,
        t.by_component,
        h["useful"],
        h["checkpoint"],
        h["lost_work"],
        h["recovery"],
        h["planned_restart"],
    )
    p, _ = resolve(sc, su.optimal)
    unplanned = _expected_unplanned(sc, p)
    # The two-tier closed form where it holds (no spares, constant known rates, a steady start, every failure
    # restoring from one tier: docs/model.md 3), with planned interruptions that keep a pending restore.
    fractions = None
    closed = not (sc.uses_spares or sc.new_cluster or simulated_only(sc) is not None)
    if su.tier_plan is not None and closed and not rates_vary(sc):
        fractions = su.tier_plan.expected()
    elif su.tier_plan is None and one_tier_closed_form(sc):  # one tier (with saves that fail: docs/model.md 3)
        fractions = expected_for_scenario(sc, p).fractions
    expected = Expected(fractions, p.hours, unplanned, p.mu * p.hours)
    spares_run = None
    if sc.uses_spares:
        sp = sc.spares if sc.spares is not None else Spares()
        spares_run = SparesRun(sc, sp, su.persistent_min, spares_params(sc, sp, su.persistent_min), t)
    return SimulationResult(
        sc,
        su.persistent_min,
        su.optimal,
        expected,
        raw,
        None,
        su.tier_plan,
        np.asarray(t.restores_fast),
        spares_run,
        restores_persistent=np.asarray(t.restores_persistent),
        engine="general",
        useful_by_stretch=t.useful_by_stretch,
        slow_hours=h[SLOW_HOURS_KEY] if sc.uses_slow else None,
        slow_drains=t.slow_drains,
        sdc_hours=h[SDC_HOURS_KEY] if t.sdc_found is not None else None,
        sdc_found=t.sdc_found,
        sdc_unrecoverable=t.sdc_unrecoverable,
        restores_failed=t.restores_failed,
        rack_covered=t.rack_covered,
        rack_moved=t.rack_moved,
        bad_failures=t.bad_failures,
        misdiagnosed=t.misdiagnosed,
        bad_fixed=t.bad_fixed,
        bad_end=t.bad_end,
    )


def _expected_unplanned(scenario: Scenario, p: Params) -> float:
    """Expected unplanned interruptions in the window: the rates' (posterior) mean over the profile; on a new
    cluster with node lives that are not exponential, their renewals' (:func:`.profiles.expected_to`)."""
    if (scenario.new_cluster and scenario.uses_weibull) or scenario.uses_bad:
        return float(expected_by_component(scenario).sum())
    if not rates_vary(scenario):
        return p.lam * p.hours
    return float(varying_expectation(scenario, p)[1])


def _general_times_to_train(
    scenarios: Sequence[Scenario],
    results: Sequence[SimulationResult],
    progress: Callable[[float], None] | None,
    should_stop: Callable[[], bool] | None,
    refused: list[str | None] | None = None,
) -> list[TimeToTrain | None]:
    """The general engine's times to train of scenarios whose windows ran: checked against the windows' goodput."""
    return general_times_to_train(
        scenarios,
        [float(r.goodput.mean()) for r in results],
        [r.expected.goodput for r in results],
        progress=progress,
        should_stop=should_stop,
        refused=refused,
        start_overs=[
            None if r.sdc_unrecoverable is None else float(r.sdc_unrecoverable.mean()) / sc.hours
            for sc, r in zip(scenarios, results)
        ],
    )


def general_times_to_train(
    scenarios: Sequence[Scenario],
    goodputs: Sequence[float],
    expected: Sequence[float | None],
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    refused: list[str | None] | None = None,
    start_overs: Sequence[float | None] | None = None,
) -> list[TimeToTrain | None]:
    """The general engine's times to train, stepped together: from the first step on the cluster as the warm-up
    left it (docs/model.md 2.7). ``goodputs`` are each scenario's simulated window goodput (what the refusal of a
    run that would never finish, or would take too long, is judged by), ``expected`` the goodput the expected
    time to train divides the work by (None: no expectation), ``start_overs`` each one's runs started over per hour
    as its window saw them (silent corruption found with no clean checkpoint kept; None: from the closed form).

    Without ``refused`` a refusal is a ScenarioError and every entry is a time to train. With it (one entry per
    scenario), a refused scenario's entry there says why, in words, and its time to train is None; the rest are
    simulated together (when one of them turns out, while stepped, never to finish, each is stepped alone to find
    it)."""
    from ..sim.run import Cancelled as SimCancelled
    from ..sim.run import Endless, simulate_train
    from ..sim.setup import prepare

    setups = [prepare(sc) for sc in scenarios]
    works = [work_hours(sc) for sc in scenarios]
    runs = []  # the scenarios to step: (index, its run)
    overs = list(start_overs) if start_overs is not None else [None] * len(scenarios)
    for i, (sc, su, g, w) in enumerate(zip(scenarios, setups, goodputs, works)):
        try:
            check_general_training(sc, g, w, su.persistent_min, overs[i])
        except ScenarioError as exc:
            if refused is None:
                raise
            refused[i] = _in_words(exc)
            continue
        runs.append((i, (su.model, sc.trials, sc.seed, w)))

    def step(batch: list[tuple[int, Any]], progress: Callable[[float], None] | None) -> list[np.ndarray]:
        try:
            return simulate_train([r for _, r in batch], progress=progress, should_stop=should_stop)
        except SimCancelled:
            raise Cancelled() from None

    hours: dict[int, np.ndarray] = {}
    try:
        hours = dict(zip((i for i, _ in runs), step(runs, progress))) if runs else {}
    except Endless as exc:
        if refused is None:
            raise ScenarioError(f"training: {exc}") from None
        for one in runs:  # (rare: found only while stepping) each alone, to say which
            try:
                hours[one[0]] = step([one], None)[0]
            except Endless as alone:
                refused[one[0]] = _in_words(ScenarioError(f"training: {alone}"))
    out: list[TimeToTrain | None] = []
    for i, (sc, w, e) in enumerate(zip(scenarios, works, expected)):
        h = hours.get(i)
        out.append(None if h is None else TimeToTrain(w, sc.gpus, h, w / e if e is not None and e > 0 else None))
    return out


def _in_words(exc: Exception) -> str:
    """A refusal as one line of at most 200 characters."""
    return " ".join(str(exc).split())[:200]


def _pool_short_for_good(scenario: Scenario, persistent_min: float) -> str | None:
    """Why a restart-mode job with a finite pool waits for spares nearly all the time once the cluster is in
    its steady state (the rates in force at the profile's end: a new cluster's window may look well while its
    pool is still full), or None. The job runs only while the pool covers the nodes in repair (M/G/infinity:
    ``P(A <= S)``)."""
    from ..model.spares import spares_params
    from ..theory.spares import nodes_in_repair_pmf

    sp = scenario.spares
    if sp is None or not scenario.uses_spares or sp.spare_nodes is None or sp.recovery_mode != "restart" or sp.min_gpus:
        return None
    p = spares_params(scenario, sp, persistent_min)
    last = scenario.rate_profile[-1][1] if scenario.rate_profile else 1.0
    pmf = nodes_in_repair_pmf(dataclasses.replace(p, rates=p.rates * last))
    covered = float(pmf[: int(sp.spare_nodes) + 1].sum())
    if covered >= 1e-3:
        return None
    mean = float((np.arange(len(pmf)) * pmf).sum())
    return (
        f"{sp.spare_nodes:,} spare nodes cover the nodes in repair (about {mean:,.0f} on average) "
        f"{100 * covered:.2g} % of the time, so the job waits for spares nearly always; use more spares, shorter "
        "repairs, continue mode or shrinking"
    )


#: A time to train whose runs are started over at a rate ``r`` takes about ``(e^(r T) - 1) / r`` for ``T`` of work
#: at its goodput; past ``r T`` of this it is refused as never finishing (3 million times ``T``).
MAX_START_OVER_EXPONENT = 15.0


def start_over_rate(scenario: Scenario, persistent_min: float) -> float:
    """Silent corruptions found with no clean checkpoint kept, per hour (docs/model.md 2.2): the corruptions' mean
    rate over the window times :meth:`.scenario.Scenario.sdc_unkept_share` (an upper bound); 0 without them."""
    comp = scenario.sdc_component
    if comp is None or not scenario.uses_sdc or scenario.retained_checkpoints <= 0:
        return 0.0
    rate = float(expected_by_component(scenario)[scenario.failure_components.index(comp)]) / scenario.hours
    return rate * scenario.sdc_unkept_share(persistent_min)


def check_general_training(
    scenario: Scenario, goodput: float, work: float, persistent_min: float, start_overs: float | None = None
) -> None:
    """Refuse a time to train the general engine would never finish, or that would take too long: estimated
    from the window's simulated ``goodput`` (the job's progress per hour) and, with silent corruption found late,
    the runs started over per hour (``start_overs``, as the window saw them; None: :func:`start_over_rate`)."""
    g = goodput
    if not g > 1e-4:
        raise ScenarioError(
            "training: the run would never finish: its goodput is 0 at these inputs (the job barely progresses)"
        )
    short = _pool_short_for_good(scenario, persistent_min)
    if short is not None:
        raise ScenarioError(f"training: the run would never finish: {short}")
    hours = work / g
    over = start_over_rate(scenario, persistent_min) if start_overs is None else start_overs
    enough = scenario.sdc_kept_for(0.05, persistent_min)
    advice = f"keep more checkpoints ({enough:,} for 5 % or less of them) or find corruption sooner"
    started_over = over * hours > 3.0  # (runs started over make most of its length)
    if over > 0.0:  # runs started over by corruptions found with none clean kept: about (e^(r T) - 1) / r
        if over * hours > MAX_START_OVER_EXPONENT:
            raise ScenarioError(
                "retained_checkpoints: the run would never finish: a silent corruption found with no clean checkpoint "
                f"kept starts it over about once every {fmt.duration_hours(1.0 / over)}, and it needs "
                f"{fmt.duration_hours(hours)} at this goodput; {advice}"
            )
        hours = math.expm1(over * hours) / over
    steps = general_steps_error(scenario, hours)
    if steps is not None:
        raise ScenarioError(f"training: {steps}")
    points = general_points(scenario, hours)
    if points > MAX_GENERAL_POINTS and started_over:
        raise ScenarioError(
            f"retained_checkpoints: about {points:.3g} points to simulate for the time to train, over the limit of "
            f"{MAX_GENERAL_POINTS:.3g}: silent corruptions found with no clean checkpoint kept start the run over "
            f"about once every {fmt.duration_hours(1.0 / over)}, so it takes about {fmt.duration_hours(hours)}; "
            f"{advice}"
        )
    if points > MAX_GENERAL_POINTS:
        raise ScenarioError(
            f"training: about {points:.3g} points to simulate for the time to train "
            f"({points / max(scenario.trials, 1):.3g} a trial), over the limit of {MAX_GENERAL_POINTS:.3g}; "
            "use fewer trials or less compute"
        )


def _progress_split(
    scenario: Scenario, params: Params, progress: Callable[[float], None] | None
) -> tuple[Callable[[float], None] | None, Callable[[float], None] | None]:
    """Progress callbacks for the window and the time to train, each weighted by the interruptions it
    draws, so the fraction reported runs once from 0 to 1."""
    if progress is None or scenario.training is None:
        return progress, None
    window = (params.lam + params.mu) * params.hours * scenario.trials + scenario.trials
    train = training_events(params, work_hours(scenario), scenario.trials)
    share = window / (window + train) if window + train > 0 and train < float("inf") else 1.0
    report = progress
    return (lambda f: report(share * f)), (lambda f: report(share + (1.0 - share) * f))
