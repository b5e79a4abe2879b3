"""Command line: ``planner-gui run``, ``planner-gui sweep``; no subcommand opens the desktop app.

Bad flags or files exit with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

from . import __version__
from .core import fmt
from .core.model import OPTIMAL, Scenario
from .core.results import SimulationResult, simulate
from .core.server import SERVE_ARG
from .core.scenario_io import LIMITS, ScenarioError, load, load_preset, preset_names, validate, write_atomic
from .core.sweep import sweep_gpus, sweep_interval

EXIT_USAGE = 2


class UsageError(Exception):
    """A bad flag or value; printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


# argparse puts "argument --flag:" before these messages. Ranges are checked with the scenario.
def _number(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {text!r})")
    return v


def _integer(text: str) -> int:
    try:
        return int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number (got {text!r})") from None


def _interval(text: str) -> float | str:
    if text.strip().lower() == OPTIMAL:
        return OPTIMAL
    try:
        return _number(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a number of minutes or 'optimal' (got {text!r})") from None


#: Scenario field set by each override flag, so range errors name the flag the user typed.
FLAG_FIELDS = {
    "gpus": "--gpus",
    "days": "--days",
    "checkpoint_interval_min": "--checkpoint-interval",
    "checkpoint_write_s": "--checkpoint-write",
    "detect_min": "--detect",
    "restart_min": "--restart",
    "planned_per_day": "--planned-per-day",
    "trials": "--trials",
    "seed": "--seed",
}


def _add_scenario_flags(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", metavar="NAME", help=f"start from a preset ({', '.join(preset_names())})")
    src.add_argument("--scenario", metavar="FILE", help="start from a scenario JSON file")
    p.add_argument("--gpus", type=_integer, metavar="N", help="GPUs in the job")
    p.add_argument("--days", type=_number, metavar="D", help="wall-clock window, days")
    p.add_argument("--checkpoint-interval", type=_interval, metavar="MIN|optimal",
                   help="compute minutes between checkpoints, or 'optimal' (Daly)")
    p.add_argument("--checkpoint-write", type=_number, metavar="SEC",
                   help="blocking checkpoint write, seconds")
    p.add_argument("--detect", type=_number, metavar="MIN", help="detection time, minutes")
    p.add_argument("--restart", type=_number, metavar="MIN",
                   help="restart time (reschedule, initialise, load), minutes")
    p.add_argument("--planned-per-day", type=_number, metavar="X",
                   help="planned interruptions per day")
    p.add_argument("--gpu-mtbf-hours", type=_number, metavar="H",
                   help="scale all component rates so one GPU's MTBF is H hours (mix kept)")
    p.add_argument("--trials", type=_integer, metavar="K", help="Monte Carlo trials")
    p.add_argument("--seed", type=_integer, metavar="S", help="random seed")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="planner-gui", description="What-if planner for GPU cluster reliability and goodput.")
    parser.add_argument("--version", action="version", version=f"planner-gui {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    run = sub.add_parser("run", help="simulate one scenario and print a report")
    _add_scenario_flags(run)
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    sw = sub.add_parser("sweep", help="simulate over GPU count or checkpoint interval and write CSV")
    _add_scenario_flags(sw)
    sw.add_argument("--over", choices=("gpus", "interval"), default="gpus", help="the swept input")
    sw.add_argument("--points", type=_integer, default=41, metavar="N", help="points (2-401)")
    sw.add_argument("--output", "-o", metavar="FILE", help="CSV file to write (default: standard output)")
    gui = sub.add_parser("gui", help="open the desktop app (the default)")
    gui.add_argument("--scenario", metavar="FILE", help="open this scenario file")
    return parser


def _naming_flags(exc: ScenarioError, flags: dict[str, str]) -> ScenarioError:
    """``exc`` with its leading field replaced by the flag that set it, when a flag did."""
    field, _, rest = str(exc).partition(": ")
    return ScenarioError(f"{flags[field]}: {rest}") if field in flags else exc


def scenario_from_args(args: argparse.Namespace) -> Scenario:
    """The base scenario (preset, file or default) with the flags' overrides, validated."""
    if getattr(args, "scenario", None):
        sc = load(args.scenario)
    elif getattr(args, "preset", None):
        try:
            sc = load_preset(args.preset)
        except ScenarioError as exc:
            raise _naming_flags(exc, {"preset": "--preset"}) from None
    else:
        sc = load_preset("llama3-405b")
    overrides = {f: getattr(args, flag[2:].replace("-", "_")) for f, flag in FLAG_FIELDS.items()}
    overrides = {f: v for f, v in overrides.items() if v is not None}
    sc = sc.replace(**overrides)
    if args.gpu_mtbf_hours is not None:
        hours = args.gpu_mtbf_hours
        if hours <= 0:
            raise ScenarioError("--gpu-mtbf-hours: must be more than 0")
        try:
            sc = sc.with_gpu_mtbf_hours(hours)
        except ValueError as exc:
            raise ScenarioError(f"--gpu-mtbf-hours: {exc}") from None
        top_rate = max(c.rate_per_gpu_hour for c in sc.components)
        max_rate = LIMITS["rate_per_gpu_hour"][1]
        if top_rate > max_rate:  # the most frequent component would fail more than once an hour per GPU
            least = hours * top_rate / max_rate
            step = 10.0 ** (math.floor(math.log10(least)) - 2)  # three significant digits, rounded up
            raise ScenarioError(f"--gpu-mtbf-hours: must be at least {math.ceil(least / step) * step:.3g} hours "
                                f"with this component mix (got {hours:g})")
    try:
        return validate(sc)
    except ScenarioError as exc:
        raise _naming_flags(exc, {f: FLAG_FIELDS[f] for f in overrides}) from None


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
        sc.name,
        f"  {fmt.count(sc.gpus)} GPUs ({fmt.count(math.ceil(sc.gpus / sc.gpus_per_node))} nodes) for "
        f"{sc.days:g} days; {fmt.count(sc.trials)} trials, seed {sc.seed}",
        f"Unplanned interruptions  {it['mean']:,.1f} (p05-p95 {it['p05']:,.0f}-{it['p95']:,.0f}); "
        f"expected {res.expected.unplanned:,.1f}",
        f"  {fmt.every(sc.cluster_mtbf_hours)} for the job; one GPU: {fmt.every(sc.gpu_mtbf_hours)}",
        f"Planned interruptions    {pl['mean']:,.1f} (p05-p95 {pl['p05']:,.0f}-{pl['p95']:,.0f})",
        f"Goodput                  {fmt.percent(gp['mean'], 2)} +/- {fmt.percent(gp['sem'], 2)} "
        f"(p05-p95 {fmt.percent(gp['p05'])}-{fmt.percent(gp['p95'])}); exact {fmt.percent(res.expected.goodput, 2)}",
        f"Checkpoint interval      {res.interval_min:,.1f} min ({how}); optima: Young {opt.young:,.1f}, "
        f"Daly {opt.daly:,.1f}, exact {opt.exact:,.1f} min",
        f"Where the {total_h:,.0f} hours went: useful {hours['useful']:,.1f}, checkpoint writes "
        f"{hours['checkpoint']:,.1f}, lost work {hours['lost_work']:,.1f}, detection + restart "
        f"{hours['recovery']:,.1f}, planned restarts {hours['planned_restart']:,.1f}",
        f"Lost GPU-hours           {fmt.compact(lost['mean'])} ({fmt.money(d['lost_cost_usd'])} at "
        f"${sc.gpu_hour_cost_usd:,.2f} per GPU-hour)",
        "Top causes               " + ", ".join(f"{n} {v:,.1f}" for n, v in top),
    ]
    return "\n".join(lines)


def _cmd_run(args: argparse.Namespace) -> int:
    res = simulate(scenario_from_args(args))
    if args.json:
        print(json.dumps(res.to_json_dict(), indent=2, allow_nan=False))
    else:
        print(report(res))
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    if not 2 <= args.points <= 401:
        raise UsageError(f"--points: must be from 2 to 401 (got {args.points})")
    sc = scenario_from_args(args)
    if args.over == "gpus":
        from .core.sweep import gpu_counts

        res = sweep_gpus(sc, gpu_counts(args.points))
    else:
        from .core.sweep import interval_points

        res = sweep_interval(sc, interval_points(args.points))
    text = res.to_csv()
    if args.output:
        try:
            write_atomic(args.output, text)
        except OSError as exc:
            raise ScenarioError(f"{args.output}: cannot write ({exc.strerror or exc})") from None
    else:
        sys.stdout.write(text)
    return 0


def _cmd_gui(args: argparse.Namespace) -> int:
    from .app import run_gui

    return run_gui(getattr(args, "scenario", None))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``planner-gui`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == [SERVE_ARG]:  # the window's compute process (see planner_gui.ui.compute)
        from .core.server import main as serve

        return serve()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        command = args.command or "gui"
        handler = {"run": _cmd_run, "sweep": _cmd_sweep, "gui": _cmd_gui}[command]
        return handler(args)
    except UsageError as exc:
        print(f"planner-gui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ScenarioError as exc:
        print(f"planner-gui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("planner-gui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


__all__ = ["main", "build_parser", "report", "scenario_from_args"]
