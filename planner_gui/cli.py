"""Command line: ``planner-gui run``, ``planner-gui sweep``; no subcommand opens the desktop app.

Bad flags or files exit with status 2 and one line on stderr, never a traceback. Long runs print an
estimate of their time and their progress on stderr; Ctrl-C stops them (exit status 130).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from . import __version__
from .core import fmt
from .core.model import OPTIMAL, Scenario
from .core.results import SimulationResult, simulate
from .core.scenario_io import (
    DEFAULT_PRESET,
    LIMITS,
    ScenarioError,
    check_name,
    edited_name,
    load,
    load_preset,
    preset_names,
    save,
    smallest_gpu_mtbf_hours,
    validate,
)
from .core.server import SERVE_ARG
from .core.sweep import (
    Cost,
    check_sweep_size,
    gpu_counts,
    interval_points,
    run_cost,
    sweep_gpus,
    sweep_interval,
)
from .core.userfiles import writable_target, write_atomic

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: The longest error line printed (user text inside it is shortened well before this).
MAX_MESSAGE = 400
#: Print an estimate of the time up front for jobs expected to take at least this long (seconds).
ESTIMATE_AFTER_S = 3.0
#: Show progress once a job has run this long (seconds).
PROGRESS_AFTER_S = 2.0
#: Smallest interval between two updates of a progress line on a terminal (seconds).
PROGRESS_EVERY_S = 0.25


class UsageError(Exception):
    """A bad flag or value; printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        parsed: argparse.Namespace
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:  # argparse would echo them raw; a few, cleaned, are enough to say what is wrong
            shown = " ".join(f"'{fmt.clean(a, 40)}'" for a in extras[:3]) + (" ..." if len(extras) > 3 else "")
            self.error(f"unrecognized arguments: {shown}")
        return parsed


# -- numbers ------------------------------------------------------------------------------------------
# One grammar for every numeric flag: ASCII digits; thousands separators only in well-formed groups of
# three ("100,000", "1,000.5", "100_000"), never "1,5" (which means 1.5 in many locales); a fraction
# and an exponent where the flag takes any number.
_NUMBER = re.compile(
    r"[+-]?(?:(?P<int>\d{1,3}(?:,\d{3})+|\d{1,3}(?:_\d{3})+|\d+)(?:\.(?P<frac>\d*))?|\.(?P<frac_only>\d+))"
    r"(?:[eE](?P<exp>[+-]?\d+))?",
    re.ASCII,
)
_NOT_FINITE = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan"}
#: Longer values are refused before parsing (no flag needs more, and Python refuses to convert 4,300+ digits).
_MAX_NUMBER_CHARS = 100


def _quoted(text: str) -> str:
    return f"'{fmt.clean(text, 40)}'"


def _parse_number(text: str, kind: str) -> int | float:
    """``text`` as an int (no fraction or exponent) or float; raises ArgumentTypeError saying what is allowed."""
    value = text.strip(" \t")
    if not value:
        raise argparse.ArgumentTypeError(f"must be {kind} (got an empty value)")
    if len(value) > _MAX_NUMBER_CHARS:
        raise argparse.ArgumentTypeError(
            f"must be {kind} of at most {_MAX_NUMBER_CHARS} characters (got {len(value):,} characters)"
        )
    if not value.isascii():
        raise argparse.ArgumentTypeError(f"must be {kind} written with the ASCII digits 0-9 (got {_quoted(text)})")
    if value.lower() in _NOT_FINITE:
        raise argparse.ArgumentTypeError(f"must be a finite number (got {_quoted(text)})")
    m = _NUMBER.fullmatch(value)
    if m is None:
        if re.fullmatch(r"[+-]?[\d,_]+(?:\.\d*)?(?:[eE][+-]?\d+)?", value):
            raise argparse.ArgumentTypeError(
                f"must be {kind}; ',' and '_' may only separate groups of three digits, as in 100,000 or "
                f"100_000 (got {_quoted(text)})"
            )
        raise argparse.ArgumentTypeError(f"must be {kind} (got {_quoted(text)})")
    plain = value.replace(",", "").replace("_", "")
    if m.group("frac") is None and m.group("frac_only") is None and m.group("exp") is None:
        return int(plain)
    v = float(plain)
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {_quoted(text)})")
    return v


def _number(text: str) -> float:
    return float(_parse_number(text, "a number"))


def _integer(text: str) -> int:
    v = _parse_number(text, "a whole number")
    if isinstance(v, float):
        if not v.is_integer():
            raise argparse.ArgumentTypeError(f"must be a whole number (got {_quoted(text)})")
        v = int(v)
    return v


def _interval(text: str) -> float | str:
    if text.strip().lower() == OPTIMAL:
        return OPTIMAL
    return float(_parse_number(text, "a number of minutes or 'optimal'"))


def _file_name(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("must be a file name (got an empty value)")
    if "\0" in text:
        raise argparse.ArgumentTypeError(f"must be a file name without NUL bytes (got {_quoted(text)})")
    return text


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
#: Fields whose flags change what a scenario describes, and so its name. Trials and seed change only
#: how the Monte Carlo estimates it.
_NAMED_FIELDS = (
    "gpus",
    "days",
    "checkpoint_interval_min",
    "checkpoint_write_s",
    "detect_min",
    "restart_min",
    "planned_per_day",
)


def _add_scenario_flags(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", metavar="NAME", help=f"start from a preset ({', '.join(preset_names())})")
    src.add_argument("--scenario", metavar="FILE", type=_file_name, help="start from a scenario JSON file")
    p.add_argument(
        "--name",
        metavar="TEXT",
        help="the scenario's name (default: the preset's or file's, marked 'edited' when flags change it)",
    )
    p.add_argument("--gpus", type=_integer, metavar="N", help="GPUs in the job")
    p.add_argument("--days", type=_number, metavar="D", help="wall-clock window, days")
    p.add_argument(
        "--checkpoint-interval",
        type=_interval,
        metavar="MIN|optimal",
        help="compute minutes between checkpoints, or 'optimal' (Daly)",
    )
    p.add_argument("--checkpoint-write", type=_number, metavar="SEC", help="blocking checkpoint write, seconds")
    p.add_argument("--detect", type=_number, metavar="MIN", help="detection time, minutes")
    p.add_argument(
        "--restart", type=_number, metavar="MIN", help="restart time (reschedule, initialise, load), minutes"
    )
    p.add_argument("--planned-per-day", type=_number, metavar="X", help="planned interruptions per day")
    p.add_argument(
        "--gpu-mtbf-hours",
        type=_number,
        metavar="H",
        help="scale all component rates so one GPU's MTBF is H hours (mix kept)",
    )
    p.add_argument("--trials", type=_integer, metavar="K", help="Monte Carlo trials")
    p.add_argument("--seed", type=_integer, metavar="S", help="random seed")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="planner-gui", description="What-if planner for GPU cluster reliability and goodput.")
    parser.add_argument("--version", action="version", version=f"planner-gui {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    run = sub.add_parser("run", help="simulate one scenario and print a report")
    _add_scenario_flags(run)
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    run.add_argument(
        "--save", metavar="FILE", type=_file_name, help="also write the scenario, after every flag, as a scenario file"
    )
    sw = sub.add_parser("sweep", help="simulate over GPU count or checkpoint interval and write CSV")
    _add_scenario_flags(sw)
    sw.add_argument("--over", choices=("gpus", "interval"), default="gpus", help="the swept input")
    sw.add_argument("--points", type=_integer, default=41, metavar="N", help="points (2-401)")
    sw.add_argument(
        "--output", "-o", metavar="FILE", type=_file_name, help="CSV file to write ('-' or none: standard output)"
    )
    gui = sub.add_parser("gui", help="open the desktop app (the default)")
    gui.add_argument("--scenario", metavar="FILE", type=_file_name, help="open this scenario file")
    return parser


def _naming_flags(exc: ScenarioError, flags: dict[str, str]) -> ScenarioError:
    """``exc`` with its leading field replaced by the flag that set it, when a flag did."""
    field, _, rest = str(exc).partition(": ")
    return ScenarioError(f"{flags[field]}: {rest}") if field in flags else exc


def _show_value(v: object) -> str:
    """A flag's value as the user could type it again: ``100,000``, ``0.354``, ``optimal``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return repr(float(v))


def _with_mtbf(sc: Scenario, hours: float) -> Scenario:
    """``sc`` with its rates scaled to a per-GPU MTBF of ``hours``, or a ScenarioError naming the flag."""
    if hours <= 0:
        raise ScenarioError("--gpu-mtbf-hours: must be more than 0")
    least = smallest_gpu_mtbf_hours(sc)  # from the mix alone: never overflows, whatever ``hours`` is
    max_rate = LIMITS["rate_per_gpu_hour"][1]
    scaled = None
    if hours >= least:
        try:
            scaled = sc.with_gpu_mtbf_hours(hours)
        except ValueError as exc:
            raise ScenarioError(f"--gpu-mtbf-hours: {fmt.clean(str(exc), 120)}") from None
    if scaled is None or not all(c.rate_per_gpu_hour <= max_rate for c in scaled.components):
        # The most frequent component would fail more than once an hour per GPU. Name the smallest value
        # allowed, rounded up to three significant digits (so that the value named is itself accepted).
        step = 10.0 ** (math.floor(math.log10(least)) - 2)
        shown = math.ceil(least / step) * step
        if shown < least * (1 + 1e-12):
            shown += step
        raise ScenarioError(
            f"--gpu-mtbf-hours: must be at least {shown:.3g} hours with this component mix (got {hours:g})"
        )
    return scaled


def scenario_from_args(args: argparse.Namespace) -> Scenario:
    """The base scenario (preset, file or default) with the flags' overrides, validated.

    When the flags change what the scenario describes, its name says so (see
    :func:`.scenario_io.edited_name`), unless ``--name`` sets it.
    """
    if getattr(args, "scenario", None) is not None:
        sc = load(args.scenario)
    elif getattr(args, "preset", None) is not None:
        try:
            sc = load_preset(args.preset)
        except ScenarioError as exc:
            raise _naming_flags(exc, {"preset": "--preset"}) from None
    else:
        sc = load_preset(DEFAULT_PRESET)
    base = sc
    overrides = {f: getattr(args, flag[2:].replace("-", "_")) for f, flag in FLAG_FIELDS.items()}
    overrides = {f: v for f, v in overrides.items() if v is not None}
    sc = sc.replace(**overrides)
    edits = [
        f"{FLAG_FIELDS[f]} {_show_value(overrides[f])}"
        for f in _NAMED_FIELDS
        if f in overrides and overrides[f] != getattr(base, f)
    ]
    if args.gpu_mtbf_hours is not None:
        sc = _with_mtbf(sc, args.gpu_mtbf_hours)
        if sc.components != base.components:
            edits.append(f"--gpu-mtbf-hours {_show_value(args.gpu_mtbf_hours)}")
    if args.name is not None:
        try:
            sc = sc.replace(name=check_name(args.name, "--name"))
        except ScenarioError as exc:
            raise ScenarioError(fmt.clean(str(exc), MAX_MESSAGE)) from None
    elif edits:
        sc = sc.replace(name=edited_name(sc.name, " ".join(edits)))
    try:
        return validate(sc)
    except ScenarioError as exc:
        raise _naming_flags(exc, {f: FLAG_FIELDS[f] for f in overrides}) from None


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


def _about(seconds: float) -> str:
    """``about 35 s``, ``about 4 min``."""
    if seconds < 10:
        return f"about {max(1, round(seconds))} s"
    if seconds < 90:
        return f"about {round(seconds / 5) * 5} s"
    return f"about {round(seconds / 60)} min"


class _Progress:
    """Says how long a job should take, then how far it is, on stderr.

    On a terminal one line is rewritten in place (``\\r``) a few times a second; elsewhere (a log, a
    pipe) at most three plain lines are written, at 25%, 50% and 75%. Nothing is shown for jobs that
    finish within a few seconds.
    """

    def __init__(self, cost: Cost, what: str, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        try:
            self.tty = bool(self.stream.isatty())
        except (AttributeError, ValueError, OSError):
            self.tty = False
        self.cost, self.what = cost, what
        self.t0 = time.monotonic()
        self.last = 0.0
        self.width = 0  # characters of the progress line on the terminal, to clear it
        self.next_mark = 0.25

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def __enter__(self) -> _Progress:
        if self.cost.seconds >= ESTIMATE_AFTER_S:
            self._write(
                f"planner-gui: {self.what}: {_about(self.cost.seconds)} on a 2-core machine (Ctrl-C stops it)\n"
            )
        self.t0 = time.monotonic()
        return self

    def __call__(self, fraction: float) -> None:
        now = time.monotonic()
        elapsed = now - self.t0
        if elapsed < PROGRESS_AFTER_S or not 0.0 <= fraction < 1.0:
            return
        if self.tty:
            if now - self.last < PROGRESS_EVERY_S:
                return
            self.last = now
            left = f", about {_about(elapsed * (1 - fraction) / fraction)[6:]} left" if fraction >= 0.05 else ""
            line = f"planner-gui: {fraction:4.0%} done after {elapsed:.0f} s{left}"
            self._write("\r" + line.ljust(self.width))
            self.width = len(line)
        elif fraction >= self.next_mark:
            while self.next_mark <= fraction:
                self.next_mark += 0.25
            self._write(f"planner-gui: {fraction:.0%} done after {elapsed:.0f} s\n")

    def __exit__(self, *exc: object) -> None:
        if self.width:  # leave the terminal line empty for what follows
            self._write("\r" + " " * self.width + "\r")
            self.width = 0


# -- commands -------------------------------------------------------------------------------------------


def _check_output(path: str, flag: str) -> None:
    """Refuse an output file that cannot be written, before any time is spent computing."""
    try:
        writable_target(path)
    except OSError as exc:
        raise ScenarioError(
            f"{flag}: {fmt.clean(path, 120)}: cannot write ({fmt.clean(exc.strerror or str(exc), 160)})"
        ) from None


def _cmd_run(args: argparse.Namespace) -> int:
    sc = scenario_from_args(args)
    if args.save is not None:
        _check_output(args.save, "--save")
        save(sc, args.save)
    events = (sc.failure_rate_per_hour + sc.planned_per_day / 24.0) * sc.hours * sc.trials
    with _Progress(run_cost(sc), f"simulating about {fmt.compact(events)} interruptions") as progress:
        res = simulate(sc, progress=progress)
    if args.json:
        print(json.dumps(res.to_json_dict(), indent=2, allow_nan=False))
    else:
        print(report(res))
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    if not 2 <= args.points <= 401:
        raise UsageError(f"--points: must be from 2 to 401 (got {args.points})")
    sc = scenario_from_args(args)
    if args.output == "-":  # the usual spelling of standard output
        args.output = None
    if args.output is not None:
        _check_output(args.output, "--output")
    xs = gpu_counts(args.points) if args.over == "gpus" else interval_points(args.points)
    cost = check_sweep_size(sc, args.over, xs, "--points")
    with _Progress(cost, f"sweeping {len(xs)} points") as progress:
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


def _cmd_gui(args: argparse.Namespace) -> int:
    from .app import run_gui

    return run_gui(getattr(args, "scenario", None))


def _error(message: str) -> int:
    print(f"planner-gui: error: {fmt.clean(message, MAX_MESSAGE)}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``planner-gui`` command; returns the exit status."""
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        if argv == [SERVE_ARG]:  # the window's compute process (see planner_gui.ui.compute)
            from .core.server import main as serve

            return serve()
        if argv and argv[0].startswith("--scenario"):  # `planner-gui --scenario FILE` opens it in the window
            argv = ["gui", *argv]
        parser = build_parser()
        args = parser.parse_args(argv)
        command = args.command or "gui"
        handler = {"run": _cmd_run, "sweep": _cmd_sweep, "gui": _cmd_gui}[command]
        return handler(args)
    except UsageError as exc:
        return _error(str(exc))
    except ScenarioError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        print("planner-gui: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep Python from complaining at exit
        # when it flushes stdout.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 0


__all__ = ["build_parser", "main", "report", "scenario_from_args"]
