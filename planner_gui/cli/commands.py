"""The commands ``run`` and ``sweep`` (and ``gui``, which opens the window)."""

from __future__ import annotations

import argparse
import json
import math
import sys

from ..core import fmt
from ..core.results import SimulationResult, simulate
from ..core.scenario_io import (
    ScenarioError,
    save,
)
from ..core.sweep import (
    check_sweep_size,
    gpu_counts,
    interval_points,
    run_cost,
    sweep_gpus,
    sweep_interval,
)
from ..core.userfiles import write_atomic
from .flags import Progress, UsageError, check_output, scenario_from_args


def _minutes(m: float) -> str:
    """An interval for people: 0.6 s, 5.5 min, 3.0 h (never "0.0 min")."""
    return fmt.duration_hours(m / 60.0)


def report(res: SimulationResult) -> str:
    """The short readable report of ``planner-gui run``."""
    sc, d = res.scenario, res.to_json_dict()
    it, gp, pl = d["interruptions"], d["goodput"], d["planned_interruptions"]
    hours = d["hours"]
    total_h = sc.hours
    opt = res.optimal
    how = "Daly optimum" if sc.uses_optimal_interval else "fixed"
    lost = d["lost_gpu_hours"]
    top = sorted(res.by_component_mean().items(), key=lambda kv: -kv[1])[:5]
    lines = [
        fmt.clean(sc.name, 240),
        f"  {fmt.count(sc.gpus)} GPUs ({fmt.count(math.ceil(sc.gpus / sc.gpus_per_node))} nodes) for "
        f"{sc.days:g} day{'' if sc.days == 1 else 's'}; {fmt.count(sc.trials)} trials, seed {sc.seed}",
        f"Unplanned interruptions  {it['mean']:,.1f} (p05-p95 {it['p05']:,.0f}-{it['p95']:,.0f}); "
        f"expected {res.expected.unplanned:,.1f}",
        f"  {fmt.every(sc.cluster_mtbf_hours)} for the job; one GPU: {fmt.every(sc.gpu_mtbf_hours)}",
        f"Planned interruptions    {pl['mean']:,.1f} (p05-p95 {pl['p05']:,.0f}-{pl['p95']:,.0f})",
        f"Goodput                  {fmt.percent(gp['mean'], 2)} +/- {fmt.percent(gp['sem'], 2)} "
        f"(p05-p95 {fmt.percent(gp['p05'])}-{fmt.percent(gp['p95'])}); exact {fmt.percent(res.expected.goodput, 2)}",
        f"Checkpoint interval      {_minutes(res.interval_min)} ({how}); optima: Young {_minutes(opt.young)}, "
        f"Daly {_minutes(opt.daly)}, exact {_minutes(opt.exact)}",
        f"Where the {total_h:,.0f} hours went: useful {hours['useful']:,.1f}, checkpoint writes "
        f"{hours['checkpoint']:,.1f}, lost work {hours['lost_work']:,.1f}, detection + restart "
        f"{hours['recovery']:,.1f}, planned restarts {hours['planned_restart']:,.1f}",
        f"Lost GPU-hours           {fmt.compact(lost['mean'])} ({fmt.money(d['lost_cost_usd'])} at "
        f"${sc.gpu_hour_cost_usd:,.2f} per GPU-hour)",
        "Top causes               " + ", ".join(f"{fmt.clean(n, 40)} {v:,.1f}" for n, v in top),
    ]
    return "\n".join(lines)


# -- time estimate and progress -----------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    sc = scenario_from_args(args)
    if args.save is not None:
        check_output(args.save, "--save")
        save(sc, args.save)
    events = (sc.failure_rate_per_hour + sc.planned_per_day / 24.0) * sc.hours * sc.trials
    with Progress(run_cost(sc), f"simulating about {fmt.compact(events)} interruptions") as progress:
        res = simulate(sc, progress=progress)
    if args.json:
        print(json.dumps(res.to_json_dict(), indent=2, allow_nan=False))
    else:
        print(report(res))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    if not 2 <= args.points <= 401:
        raise UsageError(f"--points: must be from 2 to 401 (got {args.points})")
    sc = scenario_from_args(args)
    if args.output == "-":  # the usual spelling of standard output
        args.output = None
    if args.output is not None:
        check_output(args.output, "--output")
    xs = gpu_counts(args.points) if args.over == "gpus" else interval_points(args.points)
    cost = check_sweep_size(sc, args.over, xs, "--points")
    with Progress(cost, f"sweeping {len(xs)} points") as progress:
        if args.over == "gpus":
            res = sweep_gpus(sc, xs, progress=progress)
        else:
            res = sweep_interval(sc, xs, progress=progress)
    text = res.to_csv()
    if args.output is not None:
        try:
            write_atomic(args.output, text)
        except OSError as exc:
            raise ScenarioError(
                f"{fmt.clean(args.output, 120)}: cannot write ({fmt.clean(exc.strerror or str(exc), 160)})"
            ) from None
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0


def cmd_gui(args: argparse.Namespace) -> int:
    from ..app import run_gui

    return run_gui(getattr(args, "scenario", None))
