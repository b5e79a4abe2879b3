"""The command ``fit``: failure rates from an incident log, as a report, JSON or a scenario file."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

from ..core.files.presets import DEFAULT_PRESET, load_preset, preset_names
from ..core.files.scenario_io import ScenarioError, load, save
from ..core.files.scenario_io import scenario_to_dict as scenario_dict
from ..core.incidents import (
    DEFAULT_PRIOR,
    DEFAULT_PRIOR_WEIGHT,
    LEVEL,
    PRIORS,
    ComponentFit,
    FitResult,
    IncidentLogError,
    fit_log,
    load_prior,
    parse_time,
)
from ..core.model.scenario import Scenario
from ..core.model.specs import LIMITS
from ..core.util import fmt
from .flags import Parser, UsageError, check_output, file_name, integer_arg, number_arg

__all__ = ["add_parser", "cmd_fit", "fit_report"]


def _prior_arg(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must be {', '.join(PRIORS)} or a scenario file (got an empty value)")
    return file_name(text)


def add_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    """Register ``fit`` on the command line's subcommands."""
    p = sub.add_parser("fit", help="fit failure rates from an incident log (CSV) and make a scenario of them")
    p.add_argument("log", type=file_name, metavar="LOG", help="CSV: timestamp, component[, category][, GPUs affected]")
    p.add_argument("--gpus", type=integer_arg, required=True, metavar="N", help="GPUs in the cluster the log watched")
    p.add_argument(
        "--start", metavar="TIME", help="start of the window watched (ISO 8601; default: the first incident)"
    )
    p.add_argument("--end", metavar="TIME", help="end of the window watched (ISO 8601; default: the last incident)")
    p.add_argument(
        "--prior",
        metavar="PRIOR",
        type=_prior_arg,
        default=DEFAULT_PRIOR,
        help=f"what is known before the log, combined with it cause by cause: {' | '.join(PRIORS)} | a scenario file "
        f"(its components' evidence); default {DEFAULT_PRIOR} (Llama 3 Table 5), so a cause the log never saw keeps "
        "a rate above 0; none: the log alone",
    )
    p.add_argument(
        "--prior-weight",
        metavar="W",
        type=number_arg,
        default=DEFAULT_PRIOR_WEIGHT,
        help=f"how much of the prior's evidence counts, above 0 and at most 1 (default {DEFAULT_PRIOR_WEIGHT:g}: a "
        "tenth of Llama 3's 884,736 GPU-days)",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--preset", metavar="NAME", help=f"take the other inputs from a preset ({', '.join(preset_names())})"
    )
    src.add_argument("--scenario", metavar="FILE", type=file_name, help="take the other inputs from a scenario file")
    p.add_argument("--output", "-o", metavar="FILE", type=file_name, help="write the fitted scenario to FILE")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the report")


def _time_flag(value: str | None, flag: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_time(value)[0]
    except ValueError as exc:
        raise UsageError(f"{flag}: '{fmt.clean(value, 40)}' {exc}") from None


def _base(args: argparse.Namespace) -> Scenario:
    if args.scenario is not None:
        return load(args.scenario)
    try:
        return load_preset(args.preset if args.preset is not None else DEFAULT_PRESET)
    except ScenarioError as exc:
        raise ScenarioError(f"--preset: {str(exc).partition(': ')[2]}") from None


def _per_1000_days(rate: float | None) -> str:
    """A rate per GPU-hour as interruptions per 1,000 GPU-days, three significant digits."""
    return "" if rate is None else f"{rate * 24_000:.3g}"


def _many(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _row(c: ComponentFit, hits: bool, widths: tuple[int, int], prior: bool) -> str:
    interval = f"{_per_1000_days(c.rate_low)}-{_per_1000_days(c.rate_high)}"
    text = (
        f"{fmt.clean(c.name, widths[0]):<{widths[0]}}  {fmt.clean(c.category, widths[1]):<{widths[1]}}  "
        f"{c.count:>6,}  {_per_1000_days(c.rate_per_gpu_hour):>8}  {interval:>15}  "
        + (f"{_per_1000_days(c.log_rate):>9}  {fmt.percent(c.prior_share, 0):>6}  " if prior else "")
        + f"{_per_1000_days(c.llama3_rate):>8}"
    )
    if hits:
        text += f"  {'' if c.gpus_affected is None else f'{c.gpus_affected:,}':>7}"
    return text.rstrip()


def fit_report(res: FitResult, base: Scenario, written: str | None = None) -> str:
    """The readable report of ``planner-gui fit`` (``written``: the scenario file written, if any)."""
    hits = res.total.gpus_affected is not None
    prior = res.prior is not None
    widths = (
        min(40, max(len("All components"), *(len(c.name) for c in res.components))),
        min(24, max(len("category"), *(len(c.category) for c in res.components))),
    )
    start = "given" if res.start_given else "the first incident"
    end = "given" if res.end_given else "the last incident"
    lines = [
        f"{fmt.clean(res.source, 80)}: {_many(res.total.count, 'incident')} of "
        f"{_many(len(res.components), 'component')} on {_many(res.gpus, 'GPU')}",
        f"  window {res.window_text('start')} ({start}) to {res.window_text('end')} ({end}): "
        f"{fmt.duration_hours(res.hours)}, {fmt.compact(res.exposure_gpu_hours)} GPU-hours",
        "",
        f"{'component':<{widths[0]}}  {'category':<{widths[1]}}  {'count':>6}  {'rate':>8}  "
        f"{f'{LEVEL:.0%} interval':>15}  "
        + (f"{'log alone':>9}  {'prior':>6}  " if prior else "")
        + f"{'Llama 3':>8}"
        + ("  GPUs hit" if hits else ""),
        *(_row(c, hits, widths, prior) for c in res.components),
        _row(res.total, hits, widths, prior),
        f"  (rates: interruptions per 1,000 GPU-days; interval: Jeffreys, {LEVEL:.0%}"
        + (
            "; rate and interval: the log with the prior; prior: its weight in the rate, its share of the evidence)"
            if prior
            else ")"
        ),
        "",
        f"Trend: {res.trend.verdict}",
    ]
    pl = res.power_law
    if pl.p_value is not None:
        lines.append(
            f"  (Laplace U = {res.trend.statistic:+.2f}; MIL-HDBK-189 chi-square {pl.statistic:,.1f} "
            f"on {2 * pl.points} degrees of freedom, p = {pl.p_value:.2g})"
        )
    lines.append(res.weibull.verdict[0].upper() + res.weibull.verdict[1:])
    lines += [f"Note: {n}" for n in res.notes]
    where = f"written to {fmt.clean(written, 120)}" if written is not None else "(-o FILE writes it)"
    lines.append(
        f"Scenario {where}: these rates, with GPUs ({base.gpus:,}), days ({base.days:g}) and every other input "
        f"from {fmt.clean(base.name, 80)}"
    )
    return "\n".join(lines)


def cmd_fit(args: argparse.Namespace) -> int:
    lo, hi, _ = LIMITS["gpus"]
    if not lo <= args.gpus <= hi:
        raise UsageError(
            f"--gpus: must be a whole number from {fmt.number(lo)} to {fmt.number(hi)} (got {fmt.number(args.gpus)})"
        )
    start, end = _time_flag(args.start, "--start"), _time_flag(args.end, "--end")
    if start is not None and end is not None and end <= start:
        raise UsageError(f"--end: '{fmt.clean(args.end, 40)}' is not after --start '{fmt.clean(args.start, 40)}'")
    if not 0.0 < args.prior_weight <= 1.0:
        raise UsageError(f"--prior-weight: must be above 0 and at most 1 (got {args.prior_weight:.10g})")
    base = _base(args)
    if args.output is not None:
        check_output(args.output, "--output")
    try:
        prior = load_prior(args.prior if args.prior in PRIORS else Path(args.prior), args.prior_weight)
    except IncidentLogError as exc:
        raise UsageError(f"--prior: {str(exc).removeprefix('prior: ')}") from None
    try:
        # A Path, so that a file name is never taken for the log's text.
        res = fit_log(Path(args.log), args.gpus, start, end, prior)
    except IncidentLogError as exc:
        raise UsageError(str(exc)) from None
    scenario = None
    if args.output is not None or args.json:  # the report alone needs no scenario (nor its limits)
        try:
            scenario = res.scenario(base)
        except ScenarioError as exc:
            raise ScenarioError(f"the fitted scenario: {exc}") from None
    if args.output is not None and scenario is not None:
        save(scenario, args.output)
    if args.json and scenario is not None:
        doc = res.to_json_dict()
        doc["scenario"] = scenario_dict(scenario)
        print(json.dumps(doc, indent=2, allow_nan=False))
    else:
        print(fit_report(res, base, args.output))
    return 0
