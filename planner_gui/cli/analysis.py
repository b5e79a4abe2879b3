"""The commands ``sensitivity`` (which lever buys the most), ``tornado`` (which unsure input moves the answer most)
and ``compare`` (scenarios side by side)."""

from __future__ import annotations

import argparse
import json
import math
import sys

from ..core.analysis.compare import comparison, comparison_table
from ..core.analysis.results import simulate
from ..core.analysis.sensitivity import (
    DEFAULT_FACTOR,
    check_prices,
    cost_words,
    has_closed_form,
    levers,
    merge_prices,
    parse_prices,
    per_dollar,
    sensitivity,
)
from ..core.analysis.sweep import Cost, run_cost
from ..core.analysis.tornado import Tornado, end_text, parse_bounds, tornado, unsure_inputs
from ..core.files.checks import check_together
from ..core.files.scenario_io import ScenarioError, load, validate
from ..core.util import fmt
from ..core.util.progress import progress_part
from .flags import (
    Parser,
    Progress,
    UsageError,
    add_scenario_flags,
    file_name,
    integer_arg,
    number_arg,
    scenario_from_args,
)

__all__ = ["add_parsers", "cmd_compare", "cmd_sensitivity", "cmd_tornado"]

#: The most scenarios ``compare`` puts side by side.
MAX_COMPARED = 8


def add_parsers(sub: argparse._SubParsersAction[Parser]) -> None:
    """Register ``sensitivity`` and ``compare`` on the command line's subcommands."""
    sens = sub.add_parser("sensitivity", help="the effect of improving each input, biggest saving first")
    add_scenario_flags(sens)
    sens.add_argument(
        "--factor",
        type=number_arg,
        default=DEFAULT_FACTOR,
        metavar="F",
        help=f"multiply each lever's time or rate by F, from 0.01 to 100 (default {DEFAULT_FACTOR}: halve it)",
    )
    sens.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="LEVER=USD",
        help="what the lever would cost to buy, in dollars (repeatable; e.g. 'detection=2e6', 'in-memory tier=1e6'; "
        "a name the scenario lacks lists its levers): each priced change shows the dollars it saves per dollar "
        "paid. Adds to (or overrides) the file's lever_prices",
    )
    sens.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    what = "which unsure input moves the answer most: each estimate at its low and high end, widest first"
    tor = sub.add_parser("tornado", help=what, description=what[0].upper() + what[1:] + ".")
    add_scenario_flags(tor)
    tor.add_argument(
        "--bounds",
        action="append",
        default=[],
        metavar="INPUT=LOW:HIGH",
        help="other ends for one input, in its unit (repeatable; e.g. detect_min=2:20; the table names the inputs)",
    )
    tor.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    cmp = sub.add_parser("compare", help="simulate several scenario files and show them side by side")
    cmp.add_argument("files", nargs="+", type=file_name, metavar="FILE", help="scenario files (2 to 8)")
    cmp.add_argument(
        "--trials",
        type=integer_arg,
        metavar="K",
        help="Monte Carlo trials for every scenario (default: each file's own)",
    )
    cmp.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


#: The factors a lever may be multiplied by: a hundredfold better or worse at most (beyond, the levers leave
#: the ranges their inputs take: a detection of 1e300 minutes is no plan).
MIN_FACTOR, MAX_FACTOR = 0.01, 100.0


def cmd_sensitivity(args: argparse.Namespace) -> int:
    if not MIN_FACTOR <= args.factor <= MAX_FACTOR or args.factor == 1:  # (a NaN fails the range too)
        raise UsageError(
            f"--factor: must be a number from {MIN_FACTOR:g} to {MAX_FACTOR:g} other than 1 (got {args.factor:.10g})"
        )
    sc = scenario_from_args(args)
    try:
        flagged = parse_prices(args.price)
        check_prices(sc, args.factor, [n for n, _ in flagged])
        for name in check_prices(sc, args.factor):  # (a file's price for a lever the scenario no longer has)
            print(
                f"planner-gui: note: lever_prices: no lever '{fmt.clean(name, 60)}' here; its price is not used",
                file=sys.stderr,
            )
        sc = sc.replace(lever_prices=merge_prices(sc.lever_prices, flagged))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    exact = has_closed_form(sc)
    if exact:
        effects = sensitivity(sc, args.factor)
    else:
        changes = 1 + len(levers(sc, args.factor))
        cost = run_cost(sc)
        cost = Cost(cost.events * changes, cost.seconds * changes)
        with Progress(cost, f"simulating the scenario and {changes - 1} changes of it (paired Monte Carlo)") as p:
            effects = sensitivity(sc, args.factor, progress=p)
    if args.json:
        print(json.dumps([e.to_dict() for e in effects], indent=2, allow_nan=False))
        return 0
    how = "exact expectations" if exact else f"paired Monte Carlo, {sc.trials:,} trials, +/- one standard error"
    print(f"{fmt.clean(sc.name, 120)}: what each change buys ({how})")
    width = max([len(e.change) for e in effects] + [6])
    what = cost_words(sc)
    print(f"{'change':<{width}}  {'goodput':>{24 if not exact else 14}}  {what}")
    for e in effects:
        se = "" if e.goodput_delta_se is None else f" +/- {100 * e.goodput_delta_se:.2f}"
        days = (
            ""
            if e.days_delta is None
            else f"{fmt.signed(e.days_delta, 1)} days"
            + ("" if e.days_delta_se is None else f" +/- {e.days_delta_se:.1f}")
            + ", "
        )
        usd = fmt.signed_money(e.cost_delta_usd)
        if e.cost_delta_se is not None:
            usd += f" +/- ${fmt.compact(e.cost_delta_se)}"
        paid = "" if e.price_usd is None else f"; {per_dollar(e)}"
        gain = fmt.signed(100 * e.goodput_delta) + se
        print(f"{e.change:<{width}}  {gain:>{17 if se else 7}} points  {days}{usd}{paid}")
    if not effects:
        print("(no change of an input moves anything here)")
    caveat = sc.sdc_interval_caveat()
    if caveat is not None and sc.uses_optimal_interval and effects:
        print(f"(the interval is re-optimized for each change, and {caveat})")
    return 0


def cmd_tornado(args: argparse.Namespace) -> int:
    try:
        bounds = parse_bounds(args.bounds)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    sc = scenario_from_args(args)
    try:
        inputs = unsure_inputs(sc, bounds)
        if has_closed_form(sc):
            t = tornado(sc, bounds)
        else:
            cost = run_cost(sc)
            runs = 1 + 2 * len(inputs)
            cost = Cost(cost.events * runs, cost.seconds * runs)
            with Progress(cost, f"simulating the scenario and its {2 * len(inputs)} ends (paired Monte Carlo)") as p:
                t = tornado(sc, bounds, progress=p)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps([b.to_dict() for b in t.bars], indent=2, allow_nan=False))
        return 0
    print(tornado_table(sc.name, t))
    return 0


def tornado_table(name: str, t: Tornado) -> str:
    """The tornado as text: each input's range and what its two ends give, widest first."""
    how = "exact expectations" if t.exact else f"paired Monte Carlo, {t.trials:,} trials, +/- one standard error"
    days = t.days is not None
    base = f"{t.days:,.1f} days to train" if days and t.days is not None else f"goodput {100 * t.goodput:.2f} %"
    lines = [f"{fmt.clean(name, 120)}: which unsure input moves the answer most ({how}); as entered: {base}"]
    width = max([len(b.label) for b in t.bars] + [5])
    head = "days at low / high" if days else "goodput at low / high (%)"
    lines.append(f"{'input':<{width}}  {'low':>10} {'value':>10} {'high':>10}  unit{' ' * 14}  {head}")
    for b in t.bars:
        ends = [
            "cannot run" if why is not None else end_text(t, b, which).replace(" days", "").replace(" %", "")
            for which, why in (("low", b.refused_low), ("high", b.refused_high))
        ]
        out = " / ".join(ends).replace(" ± ", " +/- ")
        lines.append(f"{b.label:<{width}}  {b.low:>10.4g} {b.value:>10.4g} {b.high:>10.4g}  {b.unit:<18}  {out}")
    if not t.bars:
        lines.append("(no input of this scenario is an estimate the tornado varies)")
    for b in t.bars:
        for which, why, at in (("low", b.refused_low, b.low), ("high", b.refused_high, b.high)):
            if why is not None:
                lines.append(f"{b.label} at its {which} end ({at:.4g} {b.unit}) cannot run: {why}")
    lines.append("Why these ends, and each input's name for --bounds:")
    lines += [f"  {b.input}: {b.why}" for b in t.bars]
    return "\n".join(lines)


def cmd_compare(args: argparse.Namespace) -> int:
    if not 2 <= len(args.files) <= MAX_COMPARED:
        raise UsageError(f"compare: give 2 to {MAX_COMPARED} scenario files (got {len(args.files)})")
    scenarios = [load(path) for path in args.files]
    if args.trials is not None:
        try:
            scenarios = [validate(s.replace(trials=args.trials)) for s in scenarios]
        except ScenarioError as exc:
            raise ScenarioError(f"--trials: {str(exc).partition(': ')[2]}") from None
    check_together(scenarios)
    costs = [run_cost(s) for s in scenarios]
    total = math.fsum(c.seconds for c in costs) or 1.0
    reports = []
    with Progress(Cost(sum(c.events for c in costs), total), f"simulating {len(scenarios)} scenarios") as progress:
        done = 0.0
        for s, c in zip(scenarios, costs):
            share = c.seconds / total
            part = progress_part(progress, done, done + share)
            reports.append(simulate(s, progress=part).to_json_dict())
            done += share
    doc = comparison([s.name for s in scenarios], scenarios, reports)
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
    else:
        print(comparison_table(doc))
    return 0
