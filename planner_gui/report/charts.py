"""The report's figures, drawn from the same data the window plots (:class:`.core.session.plan.PlanResult`) and the
same JSON report the command line prints.

Each function returns one SVG figure (text). What they show follows the window's plots
(``planner_gui/ui/plots.py``): interruptions and goodput vs GPU count (the Monte Carlo mean over its
p05-p95 band, the exact expectation dashed, the current size marked, guides at 16,384 and 100,000),
goodput vs checkpoint interval (with the current interval and Young's and Daly's optima marked),
interruptions by component (exact bars by category, Monte Carlo dots with p05-p95 whiskers) and where
the hours go; and the sensitivity chart (:mod:`.core.analysis.sensitivity`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.analysis.results import ALL_HOURS_KEYS, HOURS_LABELS
from ..core.analysis.sensitivity import Effect, per_dollar
from ..core.analysis.sweep import GUIDE_GPUS
from ..core.analysis.tornado import Bar, Tornado, end_text
from ..core.model.scenario import CORRELATED_NAME
from ..core.session.plan import PlanResult
from ..core.theory.profiles import expected_by_component
from ..core.util import fmt
from .svg import (
    BarChart,
    LegendEntry,
    Row,
    XYPlot,
    count_ticks,
    duration_ticks,
    linear_ticks,
)

__all__ = [
    "HOURS_LABELS",
    "OVERLAYS",
    "components_chart",
    "goodput_vs_gpus",
    "goodput_vs_interval",
    "hours_chart",
    "interruptions_vs_gpus",
    "sensitivity_chart",
]

# Tableau 10, as the window's plots use it.
BLUE, ORANGE, RED, TEAL, GREEN, YELLOW, PURPLE, PINK, BROWN, GREY = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
PALETTE = (BLUE, ORANGE, RED, TEAL, GREEN, YELLOW, PURPLE, PINK, BROWN, GREY)
MAIN_COLOR = BLUE
CURRENT_COLOR = RED
EXACT_COLOR = "#000"
EXACT_DASH = "6 4"
#: Colour, dash pattern and marker of each compared scenario (a dash tells them apart in grey too).
OVERLAYS: tuple[tuple[str, str, str], ...] = (
    (ORANGE, "9 3", "diamond"),
    (GREEN, "2 3", "square"),
    (PURPLE, "9 3 2 3", "triangle"),
    (BROWN, "4 2", "diamond"),
    ("#3b8c85", "1 3", "square"),
    ("#c09a1e", "12 4", "triangle"),
    ("#d4668a", "6 2 2 2", "diamond"),
)
CATEGORY_COLORS = {
    "GPU": RED,
    "Dependency": BLUE,
    "Network": ORANGE,
    "Unplanned Maintenance": PURPLE,
    "Host": TEAL,
    "Unknown": GREY,
    CORRELATED_NAME: BROWN,
}
OTHERS_COLOR = "#d9d9d9"
#: Components named in the components chart; the rest are summed in one row.
MAX_COMPONENT_ROWS = 24
#: A goodput axis spans at least this many percentage points (as in the window).
MIN_PERCENT_SPAN = 2.0
#: Longest scenario label in a legend.
LEGEND_NAME = 48


def category_color(category: str, index: int) -> str:
    return CATEGORY_COLORS.get(category, PALETTE[(index + 4) % len(PALETTE)])


def _short(label: str) -> str:
    return fmt.clean(label, LEGEND_NAME)


def _percent_range(*arrays: np.ndarray) -> tuple[float, float]:
    """A goodput axis range (percent) around the data: within 0-100, at least MIN_PERCENT_SPAN wide."""
    vals = np.concatenate([np.ravel(a) for a in arrays])
    vals = vals[np.isfinite(vals)]
    lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (0.0, 100.0)
    pad = max((hi - lo) * 0.06, (MIN_PERCENT_SPAN - (hi - lo)) / 2, 0.0)
    lo, hi = lo - pad, hi + pad
    if lo < 0:
        lo, hi = 0.0, max(hi - lo, MIN_PERCENT_SPAN)
    if hi > 100:
        lo, hi = min(lo - (hi - 100), 100 - MIN_PERCENT_SPAN), 100.0
    return max(lo, 0.0), hi


def _gpu_span(plans: Sequence[PlanResult]) -> tuple[float, float]:
    """The GPU counts of the sweeps and the scenarios' own sizes; an end within 10% of a power of ten is
    moved onto it, so the axis is labelled at its ends (1k, 1M)."""
    lo = min(min(float(p.by_gpus.x[0]), float(p.main.scenario.gpus)) for p in plans)
    hi = max(max(float(p.by_gpus.x[-1]), float(p.main.scenario.gpus)) for p in plans)
    lo_decade = 10.0 ** math.floor(math.log10(lo))
    hi_decade = 10.0 ** math.ceil(math.log10(hi))
    return (lo_decade if lo <= lo_decade * 1.1 else lo), (hi_decade if hi >= hi_decade / 1.1 else hi)


def _gpu_entries(
    plot: XYPlot,
    plans: Sequence[PlanResult],
    labels: Sequence[str],
    value: str,
) -> None:
    """The series of a GPU-count plot: the main band, mean, exact curve and marker; each compared
    scenario's mean and marker. ``value`` is "interruptions" or "goodput"."""
    scale = 100.0 if value == "goodput" else 1.0
    main = plans[0]
    g = main.by_gpus
    prefix = "this scenario: " if len(plans) > 1 else ""
    kinds = []
    if plot.band("main", g.x, scale * getattr(g, f"{value}_p05"), scale * getattr(g, f"{value}_p95"), MAIN_COLOR):
        kinds.append("band")
    if plot.line("main", g.x, scale * getattr(g, f"{value}_mean"), MAIN_COLOR, 2.2):
        kinds.append("line")
    if kinds:
        what = "Monte Carlo mean, p05–p95" if "band" in kinds else "Monte Carlo mean"
        plot.legend.append(LegendEntry("main", tuple(kinds), prefix + what, MAIN_COLOR))
    if plot.line("exact", g.x, scale * getattr(g, f"{value}_expected"), EXACT_COLOR, 1.5, EXACT_DASH):
        plot.legend.append(LegendEntry("exact", ("line",), prefix + "exact expectation", EXACT_COLOR, EXACT_DASH))
    for i, (p, label) in enumerate(zip(plans[1:], labels[1:])):
        color, dash, shape = OVERLAYS[i % len(OVERLAYS)]
        series = f"compared-{i + 1}"
        s = p.by_gpus
        kinds = []
        if plot.line(series, s.x, scale * getattr(s, f"{value}_mean"), color, 2.0, dash):
            kinds.append("line")
        if plot.marker(series, p.main.scenario.gpus, _current(p, value) * scale, color, shape):
            kinds.append("marker")
        if kinds:
            at = f" (at {fmt.count(p.main.scenario.gpus)} GPUs)" if "marker" in kinds else ""
            plot.legend.append(
                LegendEntry(series, tuple(kinds), f"{_short(label)}: Monte Carlo mean{at}", color, dash, shape)
            )
    # The current size goes last, so it is drawn over the compared scenarios' curves.
    if plot.marker("current", main.main.scenario.gpus, _current(main, value) * scale, CURRENT_COLOR):
        where = f"{fmt.count(main.main.scenario.gpus)} GPUs"
        plot.legend.append(LegendEntry("current", ("marker",), f"{prefix}current size ({where})", CURRENT_COLOR))
    for n in GUIDE_GPUS:
        plot.guide(n, f"{n:,}")


def _gpu_plot_height(plans: Sequence[PlanResult]) -> float:
    """Shorter plots for longer legends, so the two GPU-count plots still share a printed page."""
    return 250.0 - 10.0 * (len(plans) - 1)


def _current(p: PlanResult, value: str) -> float:
    """The Monte Carlo mean at the scenario's own size (the JSON report's, not the sweep's)."""
    if value == "goodput":
        return float(p.main.goodput.mean())
    return float(p.main.trials.unplanned.mean())


def interruptions_vs_gpus(plans: Sequence[PlanResult], labels: Sequence[str]) -> str:
    """Unplanned interruptions in the window vs GPU count, log-log."""
    x = _gpu_span(plans)
    values: list[np.ndarray] = []
    for p in plans:
        g = p.by_gpus
        values += [
            g.interruptions_p05,
            g.interruptions_p95,
            g.interruptions_mean,
            np.array([_current(p, "interruptions")]),
        ]
    values.append(plans[0].by_gpus.interruptions_expected)
    v = np.concatenate([np.ravel(a) for a in values])
    v = v[np.isfinite(v) & (v > 0)]
    y = (float(v.min()) / 1.6, float(v.max()) * 1.6) if v.size else (0.1, 10.0)
    days = plans[0].main.scenario.days
    plot = XYPlot(
        "interruptions-gpus",
        "Unplanned interruptions vs GPU count",
        "Monte Carlo mean over trials with its 5th-95th percentile band, the exact expectation dashed, "
        "and the current cluster size marked.",
        x,
        y,
        count_ticks(*x),
        count_ticks(*y),
        "GPUs (log scale)",
        f"interruptions in {days:g} day{'' if days == 1 else 's'}",
        x_log=True,
        y_log=True,
        guides=True,
        plot_height=_gpu_plot_height(plans),
    )
    _gpu_entries(plot, plans, labels, "interruptions")
    return plot.to_svg()


def goodput_vs_gpus(plans: Sequence[PlanResult], labels: Sequence[str]) -> str:
    """Goodput vs GPU count, with the 90% target."""
    x = _gpu_span(plans)
    plot = XYPlot(
        "goodput-gpus",
        "Goodput vs GPU count",
        "Monte Carlo mean over trials with its 5th-95th percentile band, the exact expectation dashed, "
        "the current cluster size marked, and a 90% target line.",
        x,
        (0.0, 100.0),
        count_ticks(*x),
        (linear_ticks(0.0, 100.0), [10.0 * k for k in range(1, 10, 2)]),
        "GPUs (log scale)",
        "goodput (%)",
        x_log=True,
        guides=True,
        plot_height=_gpu_plot_height(plans),
    )
    _gpu_entries(plot, plans, labels, "goodput")
    plot.hline(90.0, "90% target", "#555")
    return plot.to_svg()


def goodput_vs_interval(plan: PlanResult) -> str:
    """Goodput vs checkpoint interval: the Monte Carlo sweep's band and mean, the exact curve, and the
    current interval and Young's and Daly's optima marked with their values."""
    iv, main = plan.by_interval, plan.main
    fine, exact = plan.exact_curve
    x = (float(fine[0]), float(fine[-1]))
    y = _percent_range(100 * iv.goodput_p05, 100 * iv.goodput_p95, 100 * np.asarray(exact))
    ticks = linear_ticks(*y)
    plot = XYPlot(
        "goodput-interval",
        "Goodput vs checkpoint interval",
        "Monte Carlo mean over trials with its 5th-95th percentile band and the exact expectation dashed; "
        "the interval in use and Young's and Daly's optima marked.",
        x,
        (min(y[0], ticks[0][0]), max(y[1], ticks[-1][0])),
        duration_ticks(*x),
        (ticks, []),
        "fast (in-memory) checkpoint interval (log scale)"
        if main.tier_plan is not None and main.tier_plan.fast_min is not None
        else "checkpoint interval: compute between checkpoints (log scale)",
        "goodput (%)",
        x_log=True,
    )
    kinds = []
    if plot.band("main", iv.x, 100 * iv.goodput_p05, 100 * iv.goodput_p95, MAIN_COLOR):
        kinds.append("band")
    if plot.line("main", iv.x, 100 * iv.goodput_mean, MAIN_COLOR, 2.2):
        kinds.append("line")
    if kinds:
        trials = int(iv.trials.max()) if iv.trials.size else 0
        what = "Monte Carlo mean, p05–p95" if "band" in kinds else "Monte Carlo mean"
        plot.legend.append(LegendEntry("main", tuple(kinds), f"{what} ({fmt.count(trials)} trials)", MAIN_COLOR))
    if plot.line("exact", fine, 100 * np.asarray(exact), EXACT_COLOR, 1.5, EXACT_DASH):
        plot.legend.append(LegendEntry("exact", ("line",), "exact expectation", EXACT_COLOR, EXACT_DASH))
    opt, tp = main.optimal, main.tier_plan
    if tp is not None and tp.fast_min is not None:  # the sweep varies the fast tier's interval: its marks
        how = "optimal" if tp.tiers.fast_interval_min == "optimal" else "fixed"
        in_use, (young, daly) = tp.fast_min, tp.fast_young_daly() or (math.nan, math.nan)
    else:
        how = "Daly" if main.scenario.uses_optimal_interval else "fixed"
        in_use, young, daly = main.interval_min, opt.young, opt.daly
    for name, minutes, color, height, dash, width in (
        (f"in use ({how})", in_use, CURRENT_COLOR, 0.42, None, 2.0),
        ("Young", young, ORANGE, 0.30, "5 3", 1.5),
        ("Daly", daly, PURPLE, 0.18, "5 3", 1.5),
    ):
        if plot.xs.contains(minutes):
            plot.vline(minutes, f"{name} {fmt.duration_min(minutes)}", color, height, dash, width)
    return plot.to_svg()


def _spread(values: np.ndarray) -> tuple[float, float, float]:
    p05, p95 = np.percentile(values, [5, 95])
    return float(values.mean()), float(p05), float(p95)


def components_chart(plan: PlanResult) -> str:
    """Interruptions by component: bars of the exact expectation coloured by category, dots and whiskers
    of the Monte Carlo mean and p05-p95; the largest by name, the rest summed in one row."""
    main = plan.main
    sc = main.scenario
    comps = sc.failure_components  # (the correlated events, when on, last)
    by = main.trials.by_component
    expected = np.asarray(expected_by_component(sc), dtype=float)  # (the profile's and the posterior's mean)
    order = [int(i) for i in np.argsort(-expected, kind="stable")]
    fit = MAX_COMPONENT_ROWS
    named, rest = (order, []) if len(order) <= fit else (order[: fit - 1], order[fit - 1 :])
    cats = list(dict.fromkeys(c.category for c in comps))
    rows: list[tuple[str, float, tuple[float, float, float], str | None]] = [
        (fmt.clean(comps[i].name, 40), float(expected[i]), _spread(by[:, i]), comps[i].category) for i in named
    ]
    if rest:
        rows.append((f"{len(rest)} others", float(expected[rest].sum()), _spread(by[:, rest].sum(axis=1)), None))
    hi = max([r[1] for r in rows] + [r[2][2] for r in rows] + [1e-9]) * 1.04
    chart = BarChart(
        "components",
        "Unplanned interruptions by component",
        "Bars: the exact expected count of each component, coloured by category; dots and whiskers: the "
        "Monte Carlo mean and 5th-95th percentile over trials.",
        [Row(r[0], f"{r[1]:,.1f}") for r in rows],
        (0.0, hi),
        f"interruptions in {sc.days:g} day{'' if sc.days == 1 else 's'} (bar and number: exact expectation)",
    )
    used: dict[str, tuple[str, str]] = {}
    for i, (_, value, _, category) in enumerate(rows):
        if category is None:
            series, color, label = "others", OTHERS_COLOR, "others (summed)"
        else:
            k = cats.index(category)
            series, color, label = f"category-{k}", category_color(category, k), fmt.clean(category, 40)
        chart.bar(series, i, value, color)
        used.setdefault(series, (label, color))
    for i, (_, _, (mean, lo, hi_), _) in enumerate(rows):
        chart.dot("monte-carlo", i, mean, lo, hi_)
    chart.legend = [LegendEntry(s, ("bar",), f"exact: {label}", color) for s, (label, color) in used.items()]
    chart.legend.append(LegendEntry("monte-carlo", ("dot",), "Monte Carlo mean, p05–p95"))
    return chart.to_svg()


def hours_chart(report: dict[str, Any]) -> str:
    """Where the window's hours go (Monte Carlo means; exact expectations as ticks where the model has them); the
    losses set the scale, and a useful-compute bar far longer than them is cut. The rows are the report's hours
    (with spares: waiting for spares and reduced throughput where they apply)."""
    keys = [k for k in ALL_HOURS_KEYS if k in report["hours"]]
    hours = [float(report["hours"][k]) for k in keys]
    expected = report.get("hours_expected")
    exact = [float(expected[k]) if expected is not None and k in expected else math.nan for k in keys]
    total = float(report["scenario"]["days"]) * 24.0
    finite_exact = [e for e in exact[1:] if math.isfinite(e)]
    losses = max([*hours[1:], *finite_exact, 0.0])
    right = losses * 1.08
    cut = hours[0] > 1.6 * right
    if not cut or right <= 0:
        right, cut = max([hours[0], *(e for e in exact if math.isfinite(e)), losses, 1e-9]) * 1.04, False
    rows = [
        Row(HOURS_LABELS[k], f"{fmt.count(v, 1)} h ({fmt.percent(v / total if total else 0.0)})")
        for k, v in zip(keys, hours)
    ]
    title = f"hours of the {fmt.count(total, 0)}-hour window (Monte Carlo mean over trials)"
    parts = ", ".join(HOURS_LABELS[k] for k in keys)
    chart = BarChart(
        "hours",
        "Where the hours go",
        f"The wall-clock window split into {parts}: Monte Carlo means as bars"
        + (", exact expectations as ticks." if expected is not None else " (no closed form here)."),
        rows,
        (0.0, right),
        title + ("; useful compute is cut" if cut else ""),
    )
    ticks = False
    for i, (v, e) in enumerate(zip(hours, exact)):
        chart.bar("monte-carlo", i, min(v, right), MAIN_COLOR, cut=cut and i == 0)
        if math.isfinite(e) and e <= right:
            chart.tick("exact", i, e)
            ticks = True
    chart.legend = [LegendEntry("monte-carlo", ("bar",), "Monte Carlo mean", MAIN_COLOR)]
    if ticks:
        chart.legend.append(LegendEntry("exact", ("tick",), "exact expectation"))
    return chart.to_svg()


def effect_text(e: Effect) -> str:
    """What a lever buys, in words: "+1.23 points, -0.4 days, -$1.2 M" (with paired Monte Carlo, "+1.23 +/- 0.02
    points")."""
    se = "" if e.goodput_delta_se is None else f" ± {100 * e.goodput_delta_se:.2f}"
    days = "" if e.days_delta is None else f", {fmt.signed(e.days_delta, 1)} days"
    paid = "" if e.price_usd is None else f"; {per_dollar(e)}"
    return f"{fmt.signed(100 * e.goodput_delta)}{se} points{days}, {fmt.signed_money(e.cost_delta_usd)}{paid}"


def sensitivity_chart(effects: Sequence[Effect], training: bool, what: str | None = None) -> str:
    """A bar per lever, in the order given (biggest saving first), labelled with its goodput points and
    dollars."""
    deltas = [100 * e.goodput_delta for e in effects]
    lo, hi = min([0.0, *deltas]), max([0.0, *deltas])
    span = (hi - lo) or 1e-3
    lo, hi = (lo - 0.04 * span if lo < 0 else 0.0), (hi + 0.04 * span if hi > 0 else 0.0)
    if what is None:
        what = "days and cost to train" if training else "cost of the GPU-hours not spent training"
    mc = any(e.goodput_delta_se is not None for e in effects)
    how = "paired Monte Carlo, ± one standard error" if mc else "exact expectation"
    chart = BarChart(
        "sensitivity",
        "What each change buys",
        f"The change in {'' if mc else 'exact expected '}goodput (percentage points) and in the {what}, for each "
        f"input changed alone ({how}); the biggest saving first.",
        [Row(fmt.clean(e.change, 48), effect_text(e)) for e in effects],
        (lo, hi),
        f"change in goodput (percentage points, {how})",
    )
    drawn: dict[str, None] = {}
    for i, d in enumerate(deltas):
        series = "gain" if d >= 0 else "loss"
        chart.bar(series, i, d, MAIN_COLOR if d >= 0 else RED)
        drawn[series] = None
    names = {"gain": ("goodput gained", MAIN_COLOR), "loss": ("goodput lost", RED)}
    chart.legend = [LegendEntry(s, ("bar",), names[s][0], names[s][1]) for s in ("gain", "loss") if s in drawn]
    return chart.to_svg()


def tornado_text(t: Tornado, b: Bar) -> str:
    """One bar in words: the input's two ends and what each gives ("2.5 -> 10 min: 16.3 -> 16.8 days")."""
    ends = f"{b.low:.3g} -> {b.high:.3g} {b.unit}"
    lo, hi = (end_text(t, b, which, se=False) for which in ("low", "high"))
    return f"{ends}: {lo} -> {hi}"


def tornado_chart(t: Tornado) -> str:
    """The tornado: per unsure input (widest first), a bar from the scenario's outcome to the outcome at the
    input's low end and one to its high end; a line at the scenario's own."""
    days = t.days is not None
    base = t.days if days and t.days is not None else 100 * t.goodput
    lows = [b.days_low if days else 100 * b.goodput_low for b in t.bars]
    highs = [b.days_high if days else 100 * b.goodput_high for b in t.bars]
    values = [v for v in (*lows, *highs) if v is not None and math.isfinite(v)] + [base]
    lo, hi = min(values), max(values)
    pad = 0.05 * ((hi - lo) or 1e-3)
    what = "days to train" if days else "goodput (%)"
    how = "exact expectations" if t.exact else "paired Monte Carlo"
    chart = BarChart(
        "tornado",
        "What is unsure",
        f"The {what} with each unsure input at its low end and at its high end, every other input as entered "
        f"({how}); the widest first.",
        [Row(fmt.clean(b.label, 40), tornado_text(t, b)) for b in t.bars],
        (lo - pad, hi + pad),
        f"{what}, {how}",
    )
    drawn: dict[str, None] = {}
    for i, (a, b) in enumerate(zip(lows, highs)):
        for series, end, color in (("low", a, MAIN_COLOR), ("high", b, ORANGE)):
            if end is not None and math.isfinite(end):
                chart.span(series, i, base, end, color)
                drawn[series] = None
    chart.rule("base", base)
    names = {"low": ("the input at its low end", MAIN_COLOR), "high": ("the input at its high end", ORANGE)}
    chart.legend = [LegendEntry(s, ("bar",), names[s][0], names[s][1]) for s in ("low", "high") if s in drawn]
    chart.legend.append(LegendEntry("base", ("rule",), f"as entered: {base:,.2f}"))
    return chart.to_svg()
