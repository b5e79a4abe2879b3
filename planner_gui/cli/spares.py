"""``sweep --over spares``: the spare-pool sizing (its flags: :mod:`.spares_flags`)."""

from __future__ import annotations

import argparse

from ..core.analysis.sizing import expected_points, sizing, sizing_counts
from ..core.analysis.sweep import Cost
from ..core.sim.capabilities import MAX_GENERAL_POINTS, general_seconds_together
from ..core.util import fmt
from .flags import Progress, UsageError, check_output, scenario_from_args, write_output
from .spares_flags import _with_flag, spares_from_args

__all__ = ["cmd_sweep_spares"]


def cmd_sweep_spares(args: argparse.Namespace) -> int:
    """``sweep --over spares``: goodput, the chance a failure finds no spare and the cost per spare count."""
    if not 2 <= args.points <= 401:
        raise UsageError(f"--points: must be from 2 to 401 (got {fmt.number(args.points)})")
    sc = scenario_from_args(args)
    sp = spares_from_args(args, sc)
    if args.output == "-":
        args.output = None
    if args.output is not None:
        check_output(args.output, "--output")
    counts = sizing_counts(sc, sp, args.points)
    points = expected_points(sc.replace(spares=sp)) * len(counts)
    if points > MAX_GENERAL_POINTS:  # the limit of one run holds for the sweep's runs together
        each = points / len(counts)
        fit = int(MAX_GENERAL_POINTS // each)
        hint = f"use --points {fit}" if fit >= 2 else "use fewer trials"
        raise UsageError(
            f"--points: {len(counts)} spare counts x about {each:.3g} interruptions, repairs and returns each = "
            f"{points:.3g} to simulate, over the limit of {MAX_GENERAL_POINTS:.3g} for one command; {hint}"
        )
    # (the counts are stepped together: a step is paid once for them all)
    cost = Cost(points, general_seconds_together([sc.replace(spares=sp.replace_spares(int(c))) for c in counts]))
    with Progress(cost, f"sizing the spare pool at {len(counts)} counts") as progress:
        try:
            res = sizing(sc, sp, counts, progress=progress)
        except ValueError as exc:
            raise UsageError(_with_flag(str(exc))) from None
    write_output(args.output, res.to_csv(), f"{len(counts)} spare counts (CSV)")
    return 0
