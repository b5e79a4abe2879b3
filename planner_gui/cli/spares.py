"""Spares flags for ``run`` and ``sweep`` (``--spare-nodes``, ``--swap``, ``--repair-hours``, ...), the run
with spares and ``sweep --over spares`` (the spare-pool sizing)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core import fmt
from ..core.model import Scenario
from ..core.scenario_io import ScenarioError, edited_name, save, validate
from ..core.spares.model import RECOVERY_MODES, Spares, node_categories
from ..core.spares.run import (
    SECONDS_PER_POINT,
    SparesRun,
    check_spares_fit,
    expected_points,
    sizing,
    sizing_counts,
)
from ..core.sweep import Cost
from .flags import Progress, UsageError, check_output, integer_arg, number_arg, scenario_from_args, write_output

__all__ = [
    "add_spares_flags",
    "cmd_run_spares",
    "cmd_sweep_spares",
    "run_with_spares",
    "spares_from_args",
    "uses_spares",
    "with_spares",
]

#: Flag -> field, for the messages that name a flag.
SPARES_FLAGS = {
    "spare_nodes": "--spare-nodes",
    "swap": "--swap",
    "repair_hours": "--repair-hours",
    "repair_sigma": "--repair-sigma",
    "shrink_to": "--shrink-to",
    "recovery_mode": "--recovery-mode",
    "replica_gpus": "--replica-gpus",
    "continue_stall": "--continue-stall",
    "max_replicas_lost": "--max-replicas-lost",
}


def _spare_nodes_arg(text: str) -> int | str:
    if text.strip().lower() == "unlimited":
        return "unlimited"
    return integer_arg(text)


def _repair_arg(text: str) -> tuple[str, float]:
    cat, sep, hours = text.partition("=")
    if not sep or not cat.strip():
        raise argparse.ArgumentTypeError(f"must be CATEGORY=HOURS, as in GPU=48 (got {fmt.clean(text, 60)!r})")
    return cat.strip(), number_arg(hours)


def add_spares_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("spares, repairs and recovery mode (docs/spares.md)")
    g.add_argument(
        "--spare-nodes",
        type=_spare_nodes_arg,
        metavar="N|unlimited",
        help="hot spare nodes (default unlimited: a failed node is replaced at once, as without this flag)",
    )
    g.add_argument("--swap", type=number_arg, metavar="MIN", help="minutes added to a restart that swaps in spares")
    g.add_argument(
        "--repair-hours",
        type=_repair_arg,
        action="append",
        metavar="CATEGORY=H",
        help="mean hours a node lost to a category is in repair (repeatable; defaults: GPU=48, Host=24, Network=4, "
        "'Unplanned Maintenance'=8)",
    )
    g.add_argument(
        "--repair-sigma",
        type=number_arg,
        metavar="S",
        help="lognormal repair times with this sigma (default: exponential)",
    )
    g.add_argument(
        "--shrink-to",
        type=integer_arg,
        metavar="GPUS",
        help="without enough spares, run smaller down to this many GPUs instead of waiting",
    )
    g.add_argument("--recovery-mode", choices=RECOVERY_MODES, help="restart from a checkpoint, or continue on replicas")
    g.add_argument("--replica-gpus", type=integer_arg, metavar="N", help="GPUs per data-parallel replica (continue)")
    g.add_argument(
        "--continue-stall", type=number_arg, metavar="MIN", help="stall of the job when a replica fails (continue)"
    )
    g.add_argument(
        "--max-replicas-lost",
        type=integer_arg,
        metavar="N",
        help="the most replicas one failure may take out and the job continue (continue)",
    )


def uses_spares(args: argparse.Namespace) -> bool:
    """Whether any spares flag was given."""
    return any(getattr(args, f, None) is not None for f in SPARES_FLAGS)


def spares_from_args(args: argparse.Namespace, sc: Scenario) -> Spares:
    """The scenario's spares (or the defaults) with the flags' changes."""
    sp = sc.spares or Spares()
    changes: dict[str, Any] = {}
    if args.spare_nodes is not None:
        changes["spare_nodes"] = None if args.spare_nodes == "unlimited" else args.spare_nodes
    if args.swap is not None:
        changes["swap_min"] = args.swap
    if args.repair_hours:
        known = set(sc.categories)
        for cat, _ in args.repair_hours:
            if cat not in known:
                raise UsageError(
                    f"--repair-hours: no category {fmt.clean(cat, 40)!r} in the scenario (categories: "
                    f"{', '.join(sorted(known))})"
                )
            if cat not in node_categories(sc):
                raise UsageError(
                    f"--repair-hours: no cause of {fmt.clean(cat, 40)!r} takes a node (their failures are "
                    "process scope), so its repair time changes nothing"
                )
        changes["repair_hours"] = tuple(dict(args.repair_hours).items())
    if args.repair_sigma is not None:
        changes["repair_sigma"] = args.repair_sigma
    if args.shrink_to is not None:
        changes["min_gpus"] = args.shrink_to
    if args.recovery_mode is not None:
        changes["recovery_mode"] = args.recovery_mode
    if args.replica_gpus is not None:
        changes["replica_gpus"] = args.replica_gpus
    if args.continue_stall is not None:
        changes["continue_stall_min"] = args.continue_stall
    if args.max_replicas_lost is not None:
        changes["max_replicas_lost"] = args.max_replicas_lost
    for key, value in changes.items():
        sp = Spares(**{**_fields(sp), key: value})
    if sp.recovery_mode != "continue":
        for field in ("replica_gpus", "continue_stall", "max_replicas_lost"):
            if getattr(args, field) is not None:
                raise UsageError(f"{SPARES_FLAGS[field]}: applies with --recovery-mode continue")
    if sp.recovery_mode == "continue" and args.shrink_to is not None:
        raise UsageError(
            f"{SPARES_FLAGS['shrink_to']}: applies in restart mode; in continue mode the job runs on the replicas "
            "it has (a short pool shows as reduced throughput)"
        )
    if sp.spare_nodes is None and sp.recovery_mode == "restart":
        for field in ("shrink_to", "repair_hours", "repair_sigma"):
            if getattr(args, field) is not None:
                raise UsageError(
                    f"{SPARES_FLAGS[field]}: changes nothing with unlimited spares in restart mode; give "
                    "--spare-nodes N, --recovery-mode continue, or use 'sweep --over spares'"
                )
    try:
        check_spares_fit(sc, sp)
    except ValueError as exc:
        raise UsageError(_with_flag(str(exc))) from None
    return sp


def _fields(sp: Spares) -> dict[str, Any]:
    return {k: getattr(sp, k) for k in Spares.__dataclass_fields__}


_FIELD_FLAGS = {
    "spare_nodes": "--spare-nodes",
    "swap_min": "--swap",
    "repair hours": "--repair-hours",
    "repair_sigma": "--repair-sigma",
    "min_gpus": "--shrink-to",
    "recovery_mode": "--recovery-mode",
    "replica_gpus": "--replica-gpus",
    "continue_stall_min": "--continue-stall",
    "max_replicas_lost": "--max-replicas-lost",
}


def _with_flag(message: str) -> str:
    for field, flag in _FIELD_FLAGS.items():
        if message.startswith(field):
            return f"{flag}: {message}"
    return message


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


def _report(run: SparesRun, d: dict[str, Any]) -> str:
    sp, s = run.spares, d["spares"]
    gp, h = d["goodput"], d["hours"]
    pool = "unlimited" if sp.spare_nodes is None else f"{sp.spare_nodes:,}"
    lines = [
        f"Scenario                 {fmt.clean(run.scenario.name, 240)}",
        f"GPUs                     {run.scenario.gpus:,} ({run.params.job_nodes:,} nodes), {run.scenario.days:g} days",
        f"Spare nodes              {pool}; swap {sp.swap_min:g} min; repairs " + _repairs_text(sp),
        f"Recovery mode            {sp.recovery_mode}"
        + (
            f" (replicas of {sp.replica_gpus:,} GPUs, stall {sp.continue_stall_min:g} min, at most "
            f"{sp.max_replicas_lost:,} lost at once)"
            if sp.recovery_mode == "continue"
            else ""
        )
        + ("" if sp.min_gpus is None or sp.recovery_mode == "continue" else f"; shrinks down to {sp.min_gpus:,} GPUs"),
        f"Checkpoint interval      {fmt.duration_hours(run.interval_min / 60.0)} "
        + (
            "(fixed)"
            if not run.scenario.uses_optimal_interval
            else "(Daly's, for the failures that restart)"
            if sp.recovery_mode == "continue"
            else "(Daly's)"
        ),
        f"Unplanned interruptions  {d['interruptions']['mean']:,.1f}"
        + (
            f" ({d['restores']['persistent']:,.1f} restarted, {s['continued']:,.1f} continued)"
            if sp.recovery_mode == "continue"
            else ""
        ),
        f"Goodput                  {fmt.percent(gp['mean'], 2)} +/- {fmt.percent(gp['sem'], 2)} "
        f"(p05-p95 {fmt.percent(gp['p05'])}-{fmt.percent(gp['p95'])})",
        f"No spare at a failure    {fmt.percent(s['p_no_spare'], 2)} (M/G/infinity: "
        f"{fmt.percent(s['p_no_spare_expected'], 2)})",
        f"Nodes in repair          mean {s['nodes_in_repair']['mean']:,.1f}, p95 {s['nodes_in_repair']['p95']:,.0f} "
        f"(M/G/infinity: {s['nodes_in_repair']['mean_expected']:,.1f}, {s['nodes_in_repair']['p95_expected']:,.0f})",
        f"Pool for 99% of failures {s['recommended_for_99pct']:,} spare nodes",
        "Hours                    " + ", ".join(f"{k.replace('_', ' ')} {v:,.1f}" for k, v in h.items()),
        f"Lost GPU-hours           {fmt.compact(d['lost_gpu_hours']['mean'])} ({fmt.money(d['lost_cost_usd'])} at "
        f"${run.scenario.gpu_hour_cost_usd:,.2f} per GPU-hour)",
    ]
    if s["idle_gpu_hours"] is not None:
        lines.append(
            f"Spare pool               {fmt.compact(s['idle_gpu_hours'])} GPU-hours ({fmt.money(s['idle_cost_usd'])})"
        )
    return "\n".join(lines)


def cmd_run_spares(args: argparse.Namespace) -> int:
    """``run`` with spares flags: the scenario's spares section (if any) with the flags' changes; with a
    finite pool, a swap time or continue mode the spares engine runs it, else today's run."""
    from .commands import run_scenario

    sc = with_spares(scenario_from_args(args), args)
    return run_scenario(args, sc)


def with_spares(sc: Scenario, args: argparse.Namespace) -> Scenario:
    """The scenario with the spares flags applied (its name says so when they change it), validated."""
    sp = spares_from_args(args, sc)
    if sp == sc.spares or (sc.spares is None and sp == Spares()):
        return sc
    given = " ".join(
        f"{flag} {_shown(getattr(args, field))}"
        for field, flag in SPARES_FLAGS.items()
        if getattr(args, field) is not None
    )
    out = sc.replace(spares=sp, name=edited_name(sc.name, given))
    try:
        return validate(out)
    except ScenarioError as exc:
        raise UsageError(_with_flag(str(exc).removeprefix("spares.").replace("min_gpus", "--shrink-to"))) from None


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(f"{c}={h:g}" for c, h in value)
    return f"{value:,}" if isinstance(value, int) else f"{value:g}" if isinstance(value, float) else str(value)


def run_with_spares(args: argparse.Namespace, sc: Scenario) -> int:
    """``run`` of a scenario with spares (a finite pool, a swap time or continue mode): the spares engine."""
    from ..core.results import simulate

    assert sc.spares is not None
    if args.save is not None:
        check_output(args.save, "--save")
        save(sc, args.save)
    from ..core.params import resolve
    from ..core.spares.model import spares_params

    _, p_interval = resolve(sc)
    points = expected_points(spares_params(sc, sc.spares, p_interval), sc.trials)
    cost = Cost(points, points * SECONDS_PER_POINT)
    with Progress(cost, f"simulating about {fmt.compact(points)} interruptions and repairs") as progress:
        res = simulate(sc, progress=progress)
    assert res.spares_run is not None
    d = res.to_json_dict()
    if args.json:
        print(json.dumps(d, indent=2, allow_nan=False))
    else:
        print(_report(res.spares_run, d))
    return 0


def cmd_sweep_spares(args: argparse.Namespace) -> int:
    """``sweep --over spares``: goodput, the chance a failure finds no spare and the cost per spare count."""
    if not 2 <= args.points <= 401:
        raise UsageError(f"--points: must be from 2 to 401 (got {args.points})")
    sc = scenario_from_args(args)
    sp = spares_from_args(args, sc)
    if args.output == "-":
        args.output = None
    if args.output is not None:
        check_output(args.output, "--output")
    counts = sizing_counts(sc, sp, args.points)
    from ..core.params import resolve
    from ..core.spares.model import spares_params

    _, interval = resolve(sc)
    points = expected_points(spares_params(sc, sp, interval), sc.trials) * len(counts)
    cost = Cost(points, points * SECONDS_PER_POINT)
    with Progress(cost, f"sizing the spare pool at {len(counts)} counts") as progress:
        try:
            res = sizing(sc, sp, counts, progress=progress)
        except ValueError as exc:
            raise UsageError(_with_flag(str(exc))) from None
    write_output(args.output, res.to_csv())
    return 0
