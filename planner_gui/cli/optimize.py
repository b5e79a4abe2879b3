"""The command ``optimize``: the cheapest setup whose time to train at a quantile meets a deadline (goal seek,
:mod:`planner_gui.core.decisions.optimize`)."""

from __future__ import annotations

import argparse
import json
import math
import shlex
from pathlib import Path
from typing import Any

from ..core.analysis.sweep import Cost, run_cost
from ..core.decisions.optimize import (
    MAX_SETUPS,
    OptimizeError,
    Search,
    Vary,
    as_study,
    differs,
    optimize,
    shown,
    summary_flags,
)
from ..core.files.scenario_io import ScenarioError
from ..core.model.scenario import Scenario
from ..core.util import fmt
from ..core.util.userfiles import write_atomic
from .flags import (
    EXIT_INTERRUPTED,
    Parser,
    Progress,
    UsageError,
    add_scenario_flags,
    check_output,
    file_name,
    integer_arg,
    number_arg,
    scenario_from_args,
)
from .numbers import parse_number, quoted

__all__ = ["add_parser", "cmd_optimize", "parse_range", "parse_vary", "search_text"]


def add_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    """Register ``optimize`` on the command line's subcommands."""
    what = "the cheapest setup whose time to train at a quantile meets a deadline, and the days-cost front"
    p = sub.add_parser("optimize", help=what, description=what[0].upper() + what[1:] + ".")
    add_scenario_flags(p)
    p.add_argument(
        "--deadline-days", type=number_arg, required=True, metavar="D", help="the time to train to meet, days"
    )
    p.add_argument(
        "--quantile",
        type=number_arg,
        default=0.9,
        metavar="Q",
        help="the share of runs that must finish by the deadline, above 0 and below 1 (default 0.9)",
    )
    p.add_argument("--budget", type=number_arg, metavar="USD", help="the most the setup may cost in all, dollars")
    p.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="INPUT=V1,V2,...",
        help="an input the search may set, by its path as in study files (gpus, spares.spare_nodes, "
        "tiers.fast_placement, ...), and its values (repeatable)",
    )
    p.add_argument(
        "--range",
        action="append",
        default=[],
        metavar="INPUT=LO:HI[:log]",
        help="an input searched over a range: a grid of --points values, then refined around the best (repeatable)",
    )
    p.add_argument(
        "--points", type=integer_arg, default=5, metavar="N", help="values of each range per round, 2-50 (default 5)"
    )
    p.add_argument(
        "--rounds", type=integer_arg, default=2, metavar="N", help="refinements of the ranges, 0-10 (default 2)"
    )
    p.add_argument(
        "--as-study",
        metavar="FILE.toml",
        type=file_name,
        help="write the search's first grid as a study file (and its base scenario beside it) to run with "
        "planner-gui study on the local cores or a Dask cluster, and print the commands; simulate nothing here",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the text")


def _value(text: str) -> Any:
    """A value of --vary: a number, true/false, or a word (e.g. same-domain)."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    try:
        return parse_number(t, "a number")
    except argparse.ArgumentTypeError:
        if not t:
            raise UsageError("--vary: an empty value (give values separated by commas)") from None
        return t


def parse_vary(item: str) -> Vary:
    key, eq, rest = item.partition("=")
    if not eq or not key.strip() or not rest.strip():
        raise UsageError(f"--vary: give INPUT=V1,V2,..., e.g. gpus=65536,100000 (got {quoted(item[:60])})")
    return Vary(key.strip(), values=tuple(_value(v) for v in rest.split(",")))


def parse_range(item: str) -> Vary:
    key, eq, rest = item.partition("=")
    parts = rest.split(":")
    if not eq or not key.strip() or len(parts) not in (2, 3) or (len(parts) == 3 and parts[2].strip() != "log"):
        raise UsageError(f"--range: give INPUT=LO:HI or INPUT=LO:HI:log (got {quoted(item[:60])})")
    try:
        lo, hi = (float(parse_number(x, "a number")) for x in parts[:2])
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--range {key.strip()}: {exc}") from None
    return Vary(key.strip(), lo=lo, hi=hi, log=len(parts) == 3)


def cmd_optimize(args: argparse.Namespace) -> int:
    vary = [parse_vary(v) for v in args.vary] + [parse_range(r) for r in args.range]
    if not 0 <= args.rounds <= 10:
        raise UsageError(f"--rounds: must be from 0 to 10 (got {args.rounds})")
    sc = scenario_from_args(args)
    if args.as_study is not None:
        return _as_study(args, sc, vary)
    one = run_cost(sc)
    sizes = [len(v.values) if v.values is not None else args.points for v in vary]
    planned = math.prod(sizes) if sizes else 0
    if any(v.values is None for v in vary):
        planned += args.rounds * args.points ** sum(v.values is None for v in vary)
    planned = min(planned, MAX_SETUPS)
    try:
        with Progress(
            Cost(one.events * planned, one.seconds * planned), f"simulating up to {planned:,} setups"
        ) as progress:
            search = optimize(
                sc,
                vary,
                args.deadline_days,
                args.quantile,
                args.budget,
                points=args.points,
                rounds=args.rounds,
                progress=progress,
            )
    except OptimizeError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(search.to_dict(), indent=2, allow_nan=False))
    else:
        print(search_text(sc.name, search))
    return EXIT_INTERRUPTED if search.stopped else 0


def _as_study(args: argparse.Namespace, sc: Scenario, vary: list[Vary]) -> int:
    spec_path = Path(args.as_study)
    base_path = spec_path.with_name(spec_path.stem + "-base.json")
    try:
        spec, base = as_study(sc, vary, args.quantile, args.points, base_path.name)
    except OptimizeError as exc:
        raise UsageError(str(exc)) from None
    for path, text in ((base_path, base), (spec_path, spec)):
        check_output(str(path), "--as-study")
        try:
            write_atomic(path, text)
        except OSError as exc:
            raise ScenarioError(
                f"--as-study: {fmt.clean(str(path), 120)}: cannot write ({exc.strerror or exc})"
            ) from None
    results = spec_path.with_suffix(".csv")
    pick = " ".join(shlex.quote(f) for f in summary_flags(args.deadline_days, args.quantile, args.budget))
    if args.rounds and any(v.values is None for v in vary):
        print(f"The study runs the ranges' first grid ({args.points} values each); refine it with a finer study.")
    print(f"Wrote {spec_path} and {base_path}. Run the search, then pick the cheapest setup that meets the goal:")
    print(f"  planner-gui study {shlex.quote(str(spec_path))} -o {shlex.quote(str(results))}")
    print(f"  planner-gui study --summary {shlex.quote(str(results))} {pick}")
    return 0


def _days(x: float) -> str:
    return f"{x:,.1f} days" if math.isfinite(x) else "never"


def search_text(name: str, s: Search) -> str:
    """The search as text: the goal, the chosen setup (or why none), the runners-up and the front."""
    q = f"p{100 * s.quantile:g}"
    days = f"{s.deadline_days:g} {'day' if s.deadline_days == 1 else 'days'}"
    goal = f"the time to train at {q} (of its runs, {100 * s.quantile:g} % finish sooner) at most {days}"
    if s.budget_usd is not None:
        goal += f", costing at most ${fmt.compact(s.budget_usd)}"
    lines = [f"{fmt.clean(name, 120)}: the cheapest setup with {goal}."]
    stopped = " (stopped: the best so far)" if s.stopped else ""
    lines.append(f"{fmt.plural(s.evaluated, 'setup')} simulated from one seed{stopped}.")
    if s.chosen is None:
        lines.append(s.verdict())
    elif s.meets:
        c = s.chosen
        lines.append(
            f"Chosen: {c.inputs_text()}: {_days(c.days_quantile)} at {q} (mean {_days(c.days_mean)}), "
            f"${fmt.compact(c.cost_usd)} in all."
        )
        for r in s.runners_up:
            what = "; ".join(f"{k} {shown(a)} -> {shown(b)}" for k, (a, b) in differs(c, r).items())
            lines.append(
                f"  runner-up: {what or 'the same inputs'}: {_days(r.days_quantile)} at {q}, "
                f"+${fmt.compact(r.cost_usd - c.cost_usd)}"
            )
    else:
        c = s.chosen
        lines.append(f"{s.verdict()}: {c.inputs_text()}: {_days(c.days_quantile)} at {q}, ${fmt.compact(c.cost_usd)}.")
    if s.edges_text():
        lines.append(s.edges_text())
    if s.front:
        lines.append(f"The front (no setup is both faster at {q} and cheaper than one of these), fastest first:")
        lines += [f"  {_days(f.days_quantile):>12}  ${fmt.compact(f.cost_usd):>8}  {f.inputs_text()}" for f in s.front]
    failed = [x for x in s.setups if x.error is not None]
    if failed:
        first = f"{failed[0].inputs_text()}: {failed[0].error}"
        lines.append(f"{fmt.plural(len(failed), 'setup')} could not run; the first: {first}")
    return "\n".join(lines)
