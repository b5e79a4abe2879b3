"""The commands ``run`` and ``sweep`` (and ``gui``, which opens the window)."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from ..core.analysis.results import SimulationResult, hours_label, simulate
from ..core.analysis.sweep import (
    Cost,
    check_sweep_size,
    gpu_counts,
    interval_points,
    run_cost,
    sweep_gpus,
    sweep_interval,
    varies_fast_interval,
)
from ..core.analysis.training import SECONDS_PER_SPACING, TimeToTrain, check_training_size, training_events, work_hours
from ..core.files.scenario_io import (
    save,
)
from ..core.model.scenario import Scenario
from ..core.model.spares import Spares, correlated_caveats, correlated_nodes_text, correlated_then, spare_racks
from ..core.model.specs import MIN_INTERVAL_MIN
from ..core.model.tiers import restore_caveat
from ..core.session.plan import interval_range
from ..core.sim.capabilities import general_points, general_seconds, train_engine, window_engine
from ..core.theory.bad_nodes import bad_exact
from ..core.theory.params import resolve
from ..core.theory.profiles import expected_by_component, is_flat, mean_multiplier, pieces
from ..core.theory.tiers import UNNEEDED_PERSISTENT_TEXT
from ..core.util import fmt
from .flags import TRAINING_FLAGS, Progress, UsageError, check_output, scenario_from_args, write_output

#: An interval for people: 0.6 s, 5.5 min, 3.0 h (never "0.0 min"); the one formatter's, short for the lines below.
_minutes = fmt.duration_min


def report(res: SimulationResult) -> str:
    """The short readable report of ``planner-gui run``."""
    sc, d = res.scenario, res.to_json_dict()
    it, gp, pl = d["interruptions"], d["goodput"], d["planned_interruptions"]
    hours = d["hours"]
    total_h = sc.hours
    window_h = f"{total_h:,.0f}" if total_h >= 10 else f"{total_h:.2g}"
    opt = res.optimal
    continuing = sc.spares is not None and sc.spares.recovery_mode == "continue"
    how = (
        ("Daly's, for the failures that restart" if continuing else "Daly optimum")
        if sc.uses_optimal_interval
        else "fixed"
    )
    lost = d["lost_gpu_hours"]
    top = sorted(res.by_component_mean().items(), key=lambda kv: -kv[1])[:5]
    lines = [
        fmt.clean(sc.name, 240),
        f"  {fmt.plural(sc.gpus, 'GPU')} ({fmt.plural(math.ceil(sc.gpus / sc.gpus_per_node), 'node')}) for "
        f"{sc.days:g} day{'' if sc.days == 1 else 's'}; {fmt.plural(sc.trials, 'trial')}, seed {sc.seed}",
        f"Unplanned interruptions  {it['mean']:,.1f} (p05-p95 {it['p05']:,.0f}-{it['p95']:,.0f}); "
        f"expected {'about ' if not bad_exact(sc) else ''}{res.expected.unplanned:,.1f}"
        + (
            f"; {d['restores']['fast'] + d['restores']['persistent']:,.1f} restarted, "
            f"{d['spares']['continued']:,.1f} continued"
            if continuing and "spares" in d
            else ""
        ),
        f"  {fmt.every(_mean_gap_hours(res))} for the job"
        + (" on average over the window" if _rates_vary(sc) else "")
        # with rates that vary, one GPU's on the same footing as the job's (the window over the mean count)
        + f"; one GPU: {fmt.every(_mean_gap_hours(res) * sc.gpus if _rates_vary(sc) else sc.gpu_mtbf_hours)}",
        f"Planned interruptions    {pl['mean']:,.1f} (p05-p95 {pl['p05']:,.0f}-{pl['p95']:,.0f})",
        f"Goodput                  {fmt.percent(gp['mean'], 2)} +/- {fmt.percent(gp['sem'], 2)} "
        f"(p05-p95 {fmt.percent(gp['p05'])}-{fmt.percent(gp['p95'])}); "
        f"exact {fmt.exact_percent(res.expected.goodput, why=res.no_closed_form)}",
        *(
            _tier_lines(res)
            if res.tier_plan is not None
            else [
                f"Checkpoint interval      {_minutes(res.interval_min)} ({how}); optima: Young {_minutes(opt.young)}, "
                f"Daly {_minutes(opt.daly)}, {_exact_optimum(res)}"
                + (_at_the_floor("write") if sc.write_s == 0 else "")
            ]
        ),
        *([f"  ({caveat}; sweep --over interval shows the trade)"] if (caveat := sc.sdc_interval_caveat()) else ()),
        *_storage_lines(res),
        *([f"Restart                  {sc.restart_text()}"] if sc.restart_per_log2_gpus_min else ()),
        *(
            [f"Detection by cause       {sc.detect_by_text()}; every other cause {sc.detect_min:g} min"]
            if sc.detect_by
            else ()
        ),
        *(
            [
                f"Fail-slow nodes          {sc.slow_text()}; {d['slow']['drains']['mean']:,.1f} drained "
                f"(expected {d['slow']['drains_expected']:,.1f})"
            ]
            if "slow" in d
            else ()
        ),
        *(
            [
                f"Checkpoints that fail    {sc.failing_checkpoints_text()}{_failed_restores(d)}"
                + (
                    "; the exact optimal interval counts the failed saves, Young's and Daly's do not"
                    if sc.save_fail_p and not sc.uses_tiers
                    else ""
                )
            ]
            if sc.save_fail_p or sc.restore_fail_p
            else ()
        ),
        *([_sdc_line(sc, d["sdc"], res.interval_min, _fast_min(res))] if "sdc" in d else ()),
        *([_bad_line(sc, d["bad"], d["spares"])] if "bad" in d else ()),
        *([_correlated_line(sc, d["correlated"], continuing)] if "correlated" in d else ()),
        *([_lives_line(sc, d["node_lives"])] if "node_lives" in d else ()),
        *([_racks_line(sc, d["racks"])] if "racks" in d else ()),
        *(_spares_lines(res, d) if res.spares_run is not None else ()),
        *_rate_lines(res, d),
        f"Where the {window_h} hours went: "
        + ", ".join(f"{hours_label(k, sc)} {v:,.1f}" for k, v in hours.items()).replace("useful compute", "useful", 1),
        f"Not spent training       {fmt.compact(lost['mean'])} GPU-hours ({fmt.money(d['lost_cost_usd'])} at "
        f"${sc.gpu_hour_cost_usd:,.2f} per GPU-hour)",
        *(_training_lines(res.time_to_train, sc, float(res.goodput.mean())) if res.time_to_train is not None else ()),
        "Top causes               " + ", ".join(f"{fmt.clean(n, 40)} {v:,.1f}" for n, v in top),
    ]
    return "\n".join(lines)


def _fast_min(res: SimulationResult) -> float | None:
    """The fast interval a run used, minutes (None: the fast tier off)."""
    return res.tier_plan.fast_min if res.tier_plan is not None else None


def _sdc_line(sc: Scenario, sdc: dict[str, Any], persistent_min: float, fast_min: float | None) -> str:
    """Run's line on silent data corruption found late: the inputs, the corruptions found against their expectation,
    the work their rollbacks took, and those that found no clean checkpoint kept (with about how many would)."""
    found, hours = sdc["found"]["mean"], sdc["rollback_hours"]["mean"]
    comp = sc.sdc_component
    expected = ""
    if comp is not None:
        expected = f" (expected {expected_by_component(sc)[sc.failure_components.index(comp)]:,.1f})"
    each = sdc["rollback_hours_per_found"]
    each_text = f", {fmt.duration_hours(each)} each" if each is not None else ""
    unkept = ""
    if sc.retained_checkpoints > 0:
        share = sc.sdc_unkept_share(persistent_min, fast_min)
        enough = sc.sdc_kept_for(0.05, persistent_min, fast_min)
        unkept = (
            f"; {sdc['unrecoverable']['mean']:,.2f} found no clean checkpoint kept and started the run over (about "
            f"{fmt.percent(share, 0)} of corruptions are found {sc.retained_checkpoints:,} saves or more after they "
            f"start, were the job never down; keeping {enough:,} would leave 5 % or less)"
        )
    return (
        f"Silent corruption        {sc.sdc_text()}: {found:,.1f} found{expected}, rolling back "
        f"{hours:,.1f} h of the window's work{each_text}{unkept}"
    )


def _bad_line(sc: Scenario, bad: dict[str, Any], spares: dict[str, Any]) -> str:
    """Run's line on bad nodes: the inputs, their failures (the extra ones against their expectation), the bad nodes
    fixed, the healthy nodes pulled instead of a failed one, and the bad nodes left at the window's end."""
    want = bad["bad_failures_expected"]
    expected = f" (expected {want:,.1f})" if want is not None else ""
    end, end_expected = bad["bad_at_end"]["mean"], bad["bad_at_end_expected"]
    end_text = f" (expected {end_expected:,.1f})" if end_expected is not None else ""
    mis = spares["misdiagnosed"]["mean"]
    return (
        f"Bad nodes                {sc.bad_text()}: {bad['bad_failures']['mean']:,.1f} failures of bad nodes"
        f"{expected}; {bad['fixed']['mean']:,.1f} pulled and fixed, {mis:,.1f} healthy nodes pulled instead; "
        f"{end:,.1f} nodes bad at the end{end_text}, {bad['bad_at_start']:,} at the start"
    )


def _racks_line(sc: Scenario, racks: dict[str, Any]) -> str:
    """Run's line on rack-scale NVLink domains: the layout, the GPUs its racks hold, and the failures a rack's warm
    spare covered against those that moved racks (with their expectation where a closed form gives it)."""
    bought = racks["gpus_in_racks"]
    moves, moved = racks["moves"]["mean"], racks["racks_moved"]["mean"]
    expected = "" if racks["moves_expected"] is None else f" (expected {racks['moves_expected']:,.1f})"
    covered = (
        f"{racks['covered_in_rack']['mean']:,.1f} tray failures covered within their rack, "
        if sc.rack_spare_trays
        else ""
    )
    warm = (
        f"; the warm spares' {racks['warm_spare_gpus']:,} GPUs are {fmt.compact(racks['warm_spare_gpu_hours'])} "
        f"GPU-hours ({fmt.money(racks['warm_spare_cost_usd'])} at ${sc.gpu_hour_cost_usd:,.2f} per GPU-hour)"
        if racks["warm_spare_gpus"]
        else ""
    )
    them = "it" if sc.racks == 1 else "them"
    several = f" ({moved:,.1f} racks)" if sc.uses_correlated and sc.correlated_domains > 1 else ""
    domain = "; the rack is the failure domain" if sc.tiers is not None else ""
    move = f"; {sc.rack_move_text()}" if sc.rack_move_text() else ""
    return (
        f"Racks                    {sc.rack_text()} ({bought:,} GPUs in {them} for the job's {sc.gpus:,}); "
        f"{covered}{moves:,.1f} failures moved racks to spare racks{several}{expected}{move}{warm}{domain}"
    )


def _lives_line(sc: Scenario, lives: dict[str, Any]) -> str:
    """Run's line on node lives that are not exponential: each component's life, and its failures against their
    expectation and against what its long-run rate gives (they differ on a new cluster)."""
    parts = []
    for name, v in lives.items():
        got, exp, steady = v["failures"]["mean"], v["failures_expected"], v["failures_at_long_run_rate"]
        if v["scale_hours"] is None:  # (a rate of 0: no life ends)
            parts.append(f"{fmt.clean(name, 40)} shape {fmt.number(v['shape'])}: a rate of 0, it never fails")
            continue
        kind = " (exponential)" if v["shape"] == 1.0 else ""
        parts.append(
            f"{fmt.clean(name, 40)} shape {fmt.number(v['shape'])}{kind}, scale "
            f"{fmt.duration_hours(v['scale_hours'])} (mean {fmt.duration_hours(v['mean_life_hours'])}) per node: "
            f"{got:,.1f} failures (expected {exp:,.1f}"
            + (f"; {steady:,.1f} at its long-run rate)" if sc.new_cluster else ")")
        )
    where = "every node new at the start" if sc.new_cluster else "nodes in their steady state (a long run)"
    profile = (
        "; the rate profile speeds these lives too (a burn-in profile beside them counts infant mortality twice)"
        if sc.rate_profile is not None and not is_flat(sc.rate_profile, sc.days)
        else ""
    )
    return f"Node lives               {'; '.join(parts)}; {where}{profile}"


def _correlated_line(sc: Scenario, cor: dict[str, Any], continuing: bool) -> str:
    """Run's line on correlated failures: the inputs, the nodes an event takes, what the job does after one, the
    events against their expectation, and what changes the inputs' meaning (a profile, unlimited spares)."""
    return (
        f"Correlated failures      {sc.correlated_text()}: {correlated_nodes_text(sc)} an event, "
        f"{correlated_then(sc)}; {cor['events']['mean']:,.1f} events (expected {cor['events_expected']:,.1f})"
        f"{correlated_caveats(sc)}"
    )


def _failed_restores(d: dict[str, Any]) -> str:
    """Run's text on restores from the fast tier that failed: "; 12.3 fast restores failed, then restored from
    storage", or nothing where none can fail."""
    failed = d["restores"].get("failed")
    if failed is None or not d["scenario"].get("restore_fail_p"):
        return ""
    return f"; {failed:,.1f} fast restores failed, then restored from storage"


def _rates_vary(sc: Scenario) -> bool:
    """Whether the job's rate varies over the window or between trials (a profile, rate uncertainty, a new cluster's
    node lives): its interruptions are then one every (the window over their expected count)."""
    profile = sc.rate_profile is not None and not is_flat(sc.rate_profile, sc.days)
    return sc.rate_uncertainty or profile or sc.nodes_vary


def _mean_gap_hours(res: SimulationResult) -> float:
    """The job's mean time between unplanned interruptions: the window over their expected count (which is
    the per-GPU rate's inverse over the GPUs at constant, known rates)."""
    n = res.expected.unplanned
    return res.scenario.hours / n if n > 0 else math.inf


def _spares_lines(res: SimulationResult, d: dict[str, Any]) -> list[str]:
    """The pool, the recovery mode and what the pool did (the report's ``spares``)."""
    run = res.spares_run
    assert run is not None
    sp, s = run.spares, d["spares"]
    nodes = s["nodes_in_repair"]
    pool = "unlimited" if sp.spare_nodes is None else f"{sp.spare_nodes:,}"
    racks = spare_racks(res.scenario)
    trays = res.scenario.trays_per_rack
    if racks is not None:
        pool += f" ({fmt.plural(racks, 'spare rack')} of {fmt.plural(trays, 'node')})"
    recommended = s["recommended_for_99pct"]
    lines = [
        f"Spare nodes              {pool}; swap {sp.swap_min:g} min; repairs {_repairs_text(sp)}",
        f"Recovery mode            {sp.recovery_mode}"
        + (
            f" (replicas of {sp.replica_gpus:,} GPUs, stall {sp.continue_stall_min:g} min, at most "
            f"{sp.max_replicas_lost:,} lost at once)"
            if sp.recovery_mode == "continue"
            else ""
        )
        + ("" if sp.min_gpus is None or sp.recovery_mode == "continue" else f"; shrinks down to {sp.min_gpus:,} GPUs"),
        f"No spare at a failure    {fmt.percent(s['p_no_spare'], 2)} "
        + (
            f"(M/G/infinity: {fmt.percent(s['p_no_spare_expected'], 2)})"
            if s["p_no_spare_expected"] is not None
            else "(no closed form: warm spare trays cover some failures, so rack moves are no Poisson stream)"
            if res.scenario.rack_spare_trays
            else "(no closed form: the rates change over the window, or the pool starts empty)"
        ),
        _in_repair_line(res.scenario, nodes),
        f"Pool for 99% of failures {recommended:,} spare nodes"
        + (f" ({fmt.plural(-(-recommended // trays), 'rack')})" if res.scenario.uses_nvlink else "")
        + (
            (" (simulated)" if res.scenario.rack_spare_trays else " (simulated, at the rates as they change)")
            if s.get("recommended_simulated")
            else " (M/G/infinity)"
        ),
    ]
    if s["idle_gpu_hours"] is not None:
        cost = f"{fmt.money(s['idle_cost_usd'])} at ${res.scenario.gpu_hour_cost_usd:,.2f} per GPU-hour"
        idle = f"{fmt.compact(s['idle_gpu_hours'])} GPU-hours ({cost})"
        lines.append(f"Spare pool               {idle}")
    if sp.priced:  # bought or rented: what it costs as such, beside its GPU-hours
        lines.append(
            f"Pool as priced           {fmt.money(s['pool_cost_usd'])} over the window ({s['pool_cost_basis']})"
        )
    return lines


def _in_repair_line(sc: Scenario, nodes: dict[str, Any]) -> str:
    """Run's line on the nodes in repair (on racks: the racks out of the job, in racks and nodes), with M/G/infinity's
    where it holds."""
    exact = nodes["mean_expected"] is not None
    if not sc.uses_nvlink:
        return f"Nodes in repair          mean {nodes['mean']:,.1f}, p95 {nodes['p95']:,.0f}" + (
            f" (M/G/infinity: {nodes['mean_expected']:,.1f}, {nodes['p95_expected']:,.0f})" if exact else ""
        )
    q = sc.trays_per_rack
    p95 = round(nodes["p95"] / q)
    covered = "; trays repaired within their racks not counted" if sc.rack_spare_trays else ""
    return (
        f"Racks out of the job     mean {nodes['mean'] / q:,.2f} racks ({nodes['mean']:,.1f} nodes), p95 "
        f"{fmt.plural(p95, 'rack')}"
        + (f" (M/G/infinity: {nodes['mean_expected'] / q:,.2f}, {nodes['p95_expected'] / q:,.0f})" if exact else "")
        + covered
    )


def _repairs_text(sp: Spares) -> str:
    """How repairs last: their law, and the categories whose mean differs from the default."""
    law = (
        "exponential"
        if sp.repair_sigma is None
        else "of fixed length (sigma 0)"
        if sp.repair_sigma == 0
        else f"lognormal, sigma {sp.repair_sigma:g}"
    )
    changed = ", ".join(f"{c} {h:g} h" for c, h in sp.repair_hours)
    return law + (f"; mean {changed}" if changed else "")


def _every(n: int, what: str) -> str:
    """``every snapshot``, ``every 2nd snapshot``, ``every 11th snapshot``."""
    if n == 1:
        return f"every {what}"
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"every {n:,}{suffix} {what}"


def _tier_lines(res: SimulationResult) -> list[str]:
    """The recovery strategy: both tiers' intervals (and their optima), and where restores came from."""
    plan = res.tier_plan
    assert plan is not None
    sc, t, r = res.scenario, plan.tiers, res.restores()
    opt = plan.optimal
    persistent_how = "optimal" if sc.uses_optimal_interval else "fixed"
    asked = sc.checkpoint_interval_min
    if plan.fast_min is not None and not isinstance(asked, str) and not math.isclose(asked, plan.persistent_min):
        persistent_how += f", {_minutes(asked)} asked: the nearest whole number of fast intervals"
    upload = (
        f"; uploads {_minutes(t.persistent_upload_min)} in the background"
        + (f", {_every(plan.upload_every, 'checkpoint')} (one at a time)" if plan.upload_every > 1 else "")
        if t.persistent_upload_min > 0
        else ""
    )
    lines = []
    if plan.fast_min is not None:
        yd = plan.fast_young_daly()
        how = "optimal" if t.fast_interval_min == "optimal" else "fixed"
        caveat = (
            " (the fast tier's formula's: it leaves out the upload cadence's effect on restores from storage)"
            if plan.fast_optimum_is_formulas
            else ""
        )
        if t.fast_stall_s == 0:  # the formulas' optimum is then 0: shown at the shortest interval taken
            caveat += _at_the_floor("stall")
        lines.append(
            f"Fast tier (memory)       every {_minutes(plan.fast_min)} ({how}; optimum {_minutes(opt.fast_min)}{caveat}"
            + (f", Young {_minutes(yd[0])}, Daly {_minutes(yd[1])}" if yd is not None and t.fast_stall_s > 0 else "")
            + f"); stall {t.fast_stall_s:g} s, restore {_minutes(t.fast_restore_min)}, "
            + (f"{fmt.plural(t.fast_replicas, 'replica')} {t.fast_placement}" if t.fast_replicas else "no replicas")
            + f", {fmt.plural(t.nodes_per_domain, 'node')} per domain"
        )
        pyd = plan.persistent_young_daly()
        if plan.persistent_unneeded:
            persistent_how = (
                UNNEEDED_PERSISTENT_TEXT
                if sc.uses_optimal_interval
                else persistent_how + "; never needed by this model's failures (none restores from storage)"
            )
        elif sc.write_s > 0:
            persistent_how += f"; optimum {_minutes(plan.optimal_persistent_min)}" + (
                f", Young {_minutes(pyd[0])}, Daly {_minutes(pyd[1])}" if pyd is not None else ""
            )
        stall = (
            f"; blocking {sc.write_s:,g} s at each (on top of the fast stall)"
            if sc.write_s > 0
            else "; no blocking of its own (its snapshot is the fast one)"
        )
        lines.append(
            f"Persistent tier          every {_minutes(plan.persistent_min)} ({persistent_how}; "
            f"{_every(plan.k, 'snapshot')}){stall}{upload}; restore {_minutes(t.persistent_restore_min)}"
        )
    else:
        lines.append(
            f"Persistent tier          every {_minutes(plan.persistent_min)} ({persistent_how}; optimum "
            f"{_minutes(opt.persistent_min)}); blocking {sc.write_s:,g} s{upload}; restore "
            f"{_minutes(t.persistent_restore_min)}"
        )
    upload_h, big = t.persistent_upload_min / 60.0, plan.params.big
    if upload_h >= sc.hours:
        lines.append(
            f"Note                     an upload ({_minutes(t.persistent_upload_min)}) outlasts the window "
            f"({_minutes(sc.hours * 60.0)}): no persistent checkpoint can finish inside it"
        )
    elif big > 0 and upload_h * big >= 1.0:  # an upload outlives the next interruption with chance e^(-big u)
        lines.append(
            f"Note                     an upload ({_minutes(t.persistent_upload_min)}) outlasts the mean time "
            f"between interruptions ({_minutes(60.0 / big)}): {100 * math.exp(-big * upload_h):.0f} % of uploads "
            "finish before the next one"
        )
    slower = restore_caveat(sc, t)
    if slower is not None:
        lines.append(f"Note                     {slower}")
    lines.append(f"Restores                 from memory {r['fast']:,.1f}, from storage {r['persistent']:,.1f}")
    return lines


def _exact_optimum(res: SimulationResult) -> str:
    """The one-tier formula's optimal interval, "exact" where that formula gives the goodput; elsewhere named as the
    formula's, with where the best interval is found (the window says "see the interval plot")."""
    opt = _minutes(res.optimal.exact)
    if res.expected.goodput is not None:
        return f"exact {opt}"
    where = f"no closed form with {res.no_closed_form}: sweep --over interval finds the best"
    return f"the one-tier formula's {opt} ({where})"


def _at_the_floor(cost: str) -> str:
    """Why an optimum is the shortest interval: with no ``cost`` (a write, a stall) the formulas' optimum is 0."""
    return f" (no {cost}: the shortest interval taken, {_minutes(MIN_INTERVAL_MIN)})"


def _days(hours: float) -> str:
    return f"{hours / 24.0:,.1f}"


def _training_lines(t: TimeToTrain, sc: Scenario, window_goodput: float) -> list[str]:
    """When the model finishes and what it costs (the report's ``time_to_train``), the compute it is for, and why
    the run's goodput is not the window's where they differ (a run that starts in a burn-in, or outlasts the
    window)."""
    d = t.to_json_dict(sc.gpu_hour_cost_usd)
    days = d["days"]
    tr = sc.training
    assert tr is not None
    what = (
        f"{tr.train_flops:.3g} FLOPs at {tr.peak_tflops:g} TFLOP/s per GPU and {100 * tr.mfu:g}% MFU"
        if tr.train_flops is not None
        else "the GPU-hours given"
    )
    return [
        f"Time to train            {days['mean']:,.1f} days (p05-p95 {days['p05']:,.1f}-{days['p95']:,.1f}); "
        f"{_days(t.work_hours)} days at 100% goodput"
        + (f", {_days(t.expected_hours)} at the exact goodput" if t.expected_hours is not None else ""),
        f"  {fmt.compact(d['gpu_hours'])} GPU-hours used for {fmt.compact(t.compute_gpu_hours)} of compute ({what}): "
        f"{fmt.money(d['cost_usd'])}, of which {fmt.money(d['lost_cost_usd'])} lost to interruptions"
        + (" and slow nodes" if sc.uses_slow else "")
        + (
            f"; the racks' warm spares held for it: {fmt.money(warm_cost)}"
            if (warm_cost := sc.warm_spare_gpus * days["mean"] * 24.0 * sc.gpu_hour_cost_usd)
            else ""
        ),
        *_training_why(t, sc, days["mean"], window_goodput),
    ]


def _training_why(t: TimeToTrain, sc: Scenario, mean_days: float, window_goodput: float) -> list[str]:
    """A line where the run's own goodput (the work over its mean time) differs from the window's by a point or
    more: where the rates change over the days, the run sees a different part of them than the window."""
    if not mean_days > 0 or not (sc.rate_profile is not None or sc.new_cluster):
        return []
    run = t.work_hours / (24.0 * mean_days)
    if abs(run - window_goodput) < 0.01:
        return []
    profile = sc.rate_profile is not None and not is_flat(sc.rate_profile, sc.days)
    if mean_days > sc.days:
        part = f"it outlasts the {sc.days:g}-day window" + (
            ", and the rates of the window's end hold past it" if profile else ""
        )
    else:
        part = f"it runs through the first {mean_days:,.1f} of the window's {sc.days:g} days"
    why = "the rates change over the days" if profile else "the rate changes as the nodes age"
    if profile and sc.lives_vary:
        why = "the rates change over the days and as the nodes age"
    return [
        f"  the run's own goodput is {fmt.percent(run)}, not the window's {fmt.percent(window_goodput)}: "
        f"{why} and {part}"
    ]


def _storage_lines(res: SimulationResult) -> list[str]:
    """Where the write time comes from, and a warning when storage cannot keep up."""
    sc = res.scenario
    if sc.storage is None:
        return []
    st = sc.storage
    lines = [
        f"Checkpoint write         {fmt.duration_hours(sc.write_s / 3600.0)} from storage: {fmt.count(sc.gpus)} GPUs "
        f"x {st.checkpoint_gb_per_gpu:g} GB / {st.storage_gb_s:,g} GB/s"
    ]
    warning = sc.storage_warning(res.interval_min)
    return lines + ([f"Warning: {warning}"] if warning is not None else [])


def _rate_lines(res: SimulationResult, d: dict[str, Any]) -> list[str]:
    """Rate uncertainty (its posterior and its share of the variance) and the rate profile, when on."""
    sc, lines = res.scenario, []
    if "uncertainty" in d:
        u = d["uncertainty"]
        rate = u["rate_per_gpu_hour"]
        lines += [
            f"Rate uncertainty         on: each trial draws its rates from their posteriors (all components: "
            f"{rate['mean']:.3g} +/- {rate['sd']:.2g} per GPU-hour)",
            f"  of the variance, the rates cause {fmt.percent(u['interruptions']['variance_share_rates'])} for "
            f"interruptions and {fmt.percent(u['goodput']['variance_share_rates'])} for goodput; chance the rest",
        ]
    if sc.rate_profile is not None:
        pc = pieces(sc.rate_profile, sc.days)
        first, last, mean = pc.multipliers[0], pc.multipliers[-1], pc.integral() / pc.hours
        day1 = mean_multiplier(sc.rate_profile, min(sc.days, 1.0))  # a burn-in's start is steeper than its day
        bound = d["rate_profile"]["goodput_expected_bound"]
        lines.append(
            f"Rate profile             {fmt.count(len(pc))} piece{'' if len(pc) == 1 else 's'} in the window, "
            f"x{first:.3g} at the start (x{day1:.3g} over {'day 1' if sc.days >= 1 else 'the window'}), "
            f"x{last:.3g} at the end, x{mean:.3g} on average"
            + (f"; exact goodput within {bound * 100:.2g} points (changes of rate)" if bound is not None else "")
            + ("; a new cluster: no node in repair at the start, the job fresh" if sc.new_cluster else "")
        )
    return lines


# -- time estimate and progress -----------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    return run_scenario(args, scenario_from_args(args))


def run_scenario(args: argparse.Namespace, sc: Scenario) -> int:
    """``run`` of a scenario built from the flags: its window, and its time to train when it has one, on the
    engines the table chooses (:mod:`..core.sim.capabilities`)."""
    if sc.training is not None and train_engine(sc).key == "first-passage":
        check_training_size(sc)  # before any time is spent (the general engine's is checked after the window)
    if args.save is not None:
        check_output(args.save, "--save")
        save(sc, args.save)
    cost, what = _run_cost(sc)
    with Progress(cost, what) as progress:
        res = simulate(sc, progress=progress)
    if args.json:
        print(json.dumps(res.to_json_dict(), indent=2, allow_nan=False))
    else:
        print(report(res))
    return 0


def _run_cost(sc: Scenario) -> tuple[Cost, str]:
    """What ``run`` of the scenario costs (its window and its time to train), and how to say what it simulates."""
    cost = run_cost(sc)
    general = window_engine(sc).key == "general"
    if general:
        points = general_points(sc)
        what = f"simulating about {fmt.compact(points)} interruptions" + (
            ", repairs and returns" if sc.uses_spares else ""
        )
    else:
        events = (sc.failure_rate_per_hour + sc.planned_per_day / 24.0) * sc.hours * sc.trials
        what = f"simulating about {fmt.compact(events)} interruptions"
    if sc.training is not None:  # the time to train draws its own interruptions
        if train_engine(sc).key == "first-passage":
            params, _ = resolve(sc)
            extra = training_events(params, work_hours(sc), sc.trials)
            cost = Cost(cost.events + extra, cost.seconds + extra * SECONDS_PER_SPACING)
        else:
            seconds = general_seconds(sc, work_hours(sc) * 1.5)
            cost = Cost(cost.events + seconds / 9.5e-9, cost.seconds + seconds)
    return cost, what


def cmd_sweep(args: argparse.Namespace) -> int:
    if not 2 <= args.points <= 401:
        raise UsageError(f"--points: must be from 2 to 401 (got {fmt.number(args.points)})")
    for field, flag in TRAINING_FLAGS.items():
        if getattr(args, field) is not None:
            raise UsageError(f"{flag}: the time to train is reported by 'planner-gui run', not by sweep")
    sc = scenario_from_args(args)
    if args.output == "-":  # the usual spelling of standard output
        args.output = None
    if args.output is not None:
        check_output(args.output, "--output")
    if args.over == "gpus":
        xs = gpu_counts(args.points)
    elif varies_fast_interval(sc):  # fast intervals, around the fast optimum (the window's range)
        xs = interval_points(args.points, *interval_range(sc))
    else:
        xs = interval_points(args.points)
    cost = check_sweep_size(sc, args.over, xs, "--points")
    with Progress(cost, f"sweeping {len(xs)} points") as progress:
        if args.over == "gpus":
            res = sweep_gpus(sc, xs, progress=progress)
        else:
            res = sweep_interval(sc, xs, progress=progress)
    write_output(args.output, res.to_csv(), f"{len(xs)} points over {args.over} (CSV)")
    return 0


def cmd_gui(args: argparse.Namespace) -> int:
    from ..app import run_gui

    return run_gui(getattr(args, "scenario", None))
