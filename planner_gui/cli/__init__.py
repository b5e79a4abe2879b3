"""Command line: ``planner-gui run``, ``sweep``, ``sensitivity``, ``compare``, ``study``, ...; no subcommand opens
the window.

Bad flags or files exit with status 2 and one line on stderr, never a traceback. Long runs print an
estimate of their time and their progress on stderr; Ctrl-C stops them (exit status 130).

This module only starts the program (:mod:`.program`), so that a Ctrl-C while its modules load is the
same one line and exit status as a Ctrl-C later, not a traceback. The window (no arguments) and its compute
process start without loading the command line's modules.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ..core.session.spawn import SERVE_ARG

__all__ = ["build_parser", "main", "report", "scenario_from_args"]

#: Exit status on Ctrl-C (128 + SIGINT), as :data:`.flags.EXIT_INTERRUPTED`.
_EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``planner-gui`` command; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == [SERVE_ARG]:  # the window's compute process: none of the command line's modules
        from ..core.session.server import main as serve

        return serve()
    try:
        if not args and sys.stderr is not None:  # the window: it starts its compute process before anything loads
            from ..app import run_gui

            return run_gui()
        from .program import main as program
    except KeyboardInterrupt:
        print("planner-gui: interrupted", file=sys.stderr)
        return _EXIT_INTERRUPTED
    return program(args)


def __getattr__(name: str) -> Any:
    if name in ("build_parser", "report", "scenario_from_args"):
        from . import program

        return getattr(program, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
