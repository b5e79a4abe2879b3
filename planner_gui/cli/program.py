"""The command line's program: its parser and the dispatch to each command (see the package's docstring)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from .. import __version__
from ..core.files.scenario_io import ScenarioError
from ..core.util import fmt
from . import fit as fit_command
from . import optimize as optimize_command
from . import share as report_command
from . import strategies as strategies_command
from . import study as study_command
from .analysis import add_parsers as add_analysis_parsers
from .analysis import cmd_compare, cmd_sensitivity, cmd_tornado
from .commands import cmd_gui, cmd_run, cmd_sweep, report
from .flags import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    MAX_MESSAGE,
    Parser,
    UsageError,
    add_scenario_flags,
    file_name,
    integer_arg,
    scenario_from_args,
)
from .output import EXIT_OUTPUT, OutputError, guarded, quiet_stdout
from .spares import cmd_sweep_spares


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="planner-gui",
        description="What-if planner for GPU cluster reliability and goodput.",
        usage="planner-gui [-h] [--version] [--scenario FILE] [COMMAND ...]",
        epilog="With no command, or with --scenario FILE alone, it opens the desktop app (planner-gui gui "
        "[--scenario FILE]). 'planner-gui COMMAND --help' lists a command's flags and their defaults.",
    )
    parser.add_argument("--version", action="version", version=f"planner-gui {__version__}")
    sub = parser.add_subparsers(
        dest="command", parser_class=Parser, metavar="COMMAND", title="commands", prog="planner-gui"
    )
    run = sub.add_parser("run", help="simulate one scenario and print a report")
    add_scenario_flags(run)
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    run.add_argument(
        "--save", metavar="FILE", type=file_name, help="also write the scenario, after every flag, as a scenario file"
    )
    what = "simulate over GPU count, checkpoint interval or spare-pool size (--over gpus|interval|spares) and write CSV"
    sw = sub.add_parser("sweep", help=what, description=what[0].upper() + what[1:] + ".")
    add_scenario_flags(sw)
    sw.add_argument(
        "--over",
        choices=("gpus", "interval", "spares"),
        default="gpus",
        help="the swept input (spares: the spare-pool sizing, goodput and cost per spare count)",
    )
    sw.add_argument("--points", type=integer_arg, default=41, metavar="N", help="points (2-401)")
    sw.add_argument(
        "--output", "-o", metavar="FILE", type=file_name, help="CSV file to write ('-' or none: standard output)"
    )
    add_analysis_parsers(sub)
    report_command.add_parser(sub)
    strategies_command.add_parser(sub)
    optimize_command.add_parser(sub)
    fit_command.add_parser(sub)
    study_command.add_parser(sub)
    gui = sub.add_parser("gui", help="open the desktop app (the default)")
    gui.add_argument("--scenario", metavar="FILE", type=file_name, help="open this scenario file")
    return parser


def _sweep_handler(args: argparse.Namespace) -> Callable[[argparse.Namespace], int]:
    if getattr(args, "over", None) == "spares":
        return cmd_sweep_spares
    return cmd_sweep


def _error(message: str) -> int:
    print(f"{fmt.ERROR_PREFIX}{fmt.clean(message, MAX_MESSAGE)}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``planner-gui`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stderr is not None:
        return _main(argv)
    # Started with standard error closed (`2>&-`): its lines go nowhere and the command still runs
    # (print(file=None) would write them to standard output, and a write to None fails).
    with open(os.devnull, "w") as nowhere:
        sys.stderr = nowhere
        try:
            return _main(argv)
        finally:
            sys.stderr = None


def _main(argv: list[str]) -> int:
    real = sys.stdout
    try:
        with guarded():
            return _command(argv)
    except OutputError as exc:
        if real is not None and real is sys.__stdout__:
            quiet_stdout()  # what is still buffered must not fail again when Python exits
        print(f"{fmt.ERROR_PREFIX}cannot write the output ({fmt.clean(str(exc), 120)})", file=sys.stderr)
        return EXIT_OUTPUT
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep Python from complaining at exit
        # when it flushes stdout.
        if real is not None and real is sys.__stdout__:
            quiet_stdout()
        return 0


def _command(argv: list[str]) -> int:
    try:
        if argv and argv[0].startswith("--scenario"):  # `planner-gui --scenario FILE` opens it in the window
            argv = ["gui", *argv]
        parser = build_parser()
        args = parser.parse_args(argv)
        command = args.command or "gui"
        handler = {
            "run": cmd_run,
            "sweep": _sweep_handler(args),
            "sensitivity": cmd_sensitivity,
            "tornado": cmd_tornado,
            "compare": cmd_compare,
            "report": report_command.cmd_report,
            "strategies": strategies_command.cmd_strategies,
            "optimize": optimize_command.cmd_optimize,
            "fit": fit_command.cmd_fit,
            "study": study_command.cmd_study,
            "gui": cmd_gui,
        }[command]
        return handler(args)
    except UsageError as exc:
        return _error(str(exc))
    except ScenarioError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        print("planner-gui: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


__all__ = ["build_parser", "main", "report", "scenario_from_args"]
