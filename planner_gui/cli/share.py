"""The command ``report``: one self-contained HTML file of a scenario, optionally beside others.

It computes what the window shows (:func:`.core.session.plan.compute_plan` at full quality) for the scenario
and each ``--compare`` file, and writes :func:`.report.render_report` of the results.
"""

from __future__ import annotations

import argparse
import sys

from ..core.analysis.sensitivity import has_closed_form, levers
from ..core.analysis.sweep import Cost, gpu_counts, interval_points, run_cost, sweep_cost
from ..core.analysis.tornado import Tornado, tornado, unsure_inputs
from ..core.files.checks import check_together
from ..core.files.scenario_io import ScenarioError, load
from ..core.model.scenario import Scenario
from ..core.model.specs import GPU_RANGE
from ..core.session.plan import (
    FULL,
    GPU_SWEEP_EVENTS,
    SENSITIVITY_TRIALS,
    PlanRequest,
    PlanResult,
    compute_plan,
    interval_range,
)
from ..core.util import fmt
from ..core.util.progress import progress_part
from ..core.util.userfiles import write_atomic
from ..report import MAX_COMPARED, render_report
from .flags import (
    Parser,
    Progress,
    UsageError,
    add_scenario_flags,
    check_output,
    file_name,
    scenario_from_args,
)

__all__ = ["add_parser", "cmd_report", "plan_cost"]


def add_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    """Register ``report`` on the command line's subcommands."""
    rep = sub.add_parser(
        "report", help="write one self-contained HTML report: headline numbers, plots, levers, inputs, sources"
    )
    add_scenario_flags(rep)
    rep.add_argument(
        "--compare",
        nargs="+",
        action="extend",
        default=[],
        type=file_name,
        metavar="FILE",
        help=f"scenario files to compare with it (at most {MAX_COMPARED}; the flags change only the main scenario)",
    )
    rep.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="FILE",
        type=file_name,
        help="HTML file to write ('-': standard output)",
    )


def plan_cost(sc: Scenario) -> Cost:
    """The estimated cost of :func:`.core.session.plan.compute_plan` at full quality: the run and both sweeps."""
    q = FULL
    interval = sweep_cost(
        sc.replace(trials=min(sc.trials, q.interval_trials)),
        "interval",
        interval_points(q.interval_points, *interval_range(sc)),
    )
    counts = gpu_counts(q.gpu_points, GPU_RANGE[0], max(sc.gpus, GPU_RANGE[1]))
    gpus = sweep_cost(sc.replace(trials=min(sc.trials, q.gpu_trials)), "gpus", counts, GPU_SWEEP_EVENTS)
    parts = [run_cost(sc), interval, gpus]
    if not has_closed_form(sc):  # the levers and the tornado by paired Monte Carlo (SENSITIVITY_TRIALS trials)
        few = run_cost(sc.replace(trials=min(sc.trials, SENSITIVITY_TRIALS)))
        n = 1 + len(levers(sc)) + 1 + 2 * len(unsure_inputs(sc))
        parts.append(Cost(few.events * n, few.seconds * n))
    return Cost(sum(c.events for c in parts), sum(c.seconds for c in parts))


def cmd_report(args: argparse.Namespace) -> int:
    if len(args.compare) > MAX_COMPARED:
        raise UsageError(f"--compare: give at most {MAX_COMPARED} scenario files (got {len(args.compare)})")
    sc = scenario_from_args(args)
    others = [load(path) for path in args.compare]
    output = None if args.output == "-" else args.output
    if output is not None:
        check_output(output, "--output")
    scenarios = [sc, *others]
    check_together(scenarios)
    costs = [plan_cost(s) for s in scenarios]
    total = sum(c.seconds for c in costs) or 1.0
    what = "simulating the scenario" if not others else f"simulating {len(scenarios)} scenarios"
    plans: list[PlanResult] = []
    unsure: Tornado | None = None
    with Progress(Cost(sum(c.events for c in costs), total), what) as progress:
        done = 0.0
        for i, (s, c) in enumerate(zip(scenarios, costs)):
            share = c.seconds / total
            part = progress_part(progress, done, done + share)
            if i == 0 and not has_closed_form(s):  # the tornado by paired Monte Carlo, at the levers' trials
                plans.append(compute_plan(PlanRequest(s, FULL), progress=progress_part(part, 0.0, 0.8)))
                unsure = tornado(
                    s.replace(trials=min(s.trials, SENSITIVITY_TRIALS)), progress=progress_part(part, 0.8, 1.0)
                )
            else:
                plans.append(compute_plan(PlanRequest(s, FULL), progress=part))
            done += share
    text = render_report(plans[0], plans[1:], unsure=unsure)
    if output is None:  # the bytes the file would hold (it declares UTF-8), whatever the terminal's encoding
        sys.stdout.flush()
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:
            sys.stdout.write(text)
        else:
            stream.write(text.encode("utf-8"))
            stream.flush()
        return 0
    try:
        write_atomic(output, text)
    except OSError as exc:
        raise ScenarioError(
            f"--output: {fmt.clean(output, 120)}: cannot write ({fmt.clean(exc.strerror or str(exc), 160)})"
        ) from None
    return 0
