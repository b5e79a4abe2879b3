"""Scenarios side by side: the inputs that differ and the headline outputs with their differences.

The command line's ``compare`` and the window's comparison table both show what :func:`comparison`
returns; the outputs are taken from each scenario's JSON report (``planner-gui run --json``), so the
numbers are the same everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..model.scenario import OPTIMAL, Scenario
from ..model.spares import Spares
from ..theory.profiles import expected_by_component, pieces
from ..theory.rates import evidence_of
from ..util import fmt

__all__ = ["OUTPUTS", "comparison", "comparison_table", "input_differences", "profile_text", "show_value"]

_INPUTS: tuple[tuple[str, Callable[[Scenario], str]], ...] = (
    ("GPUs", lambda s: fmt.count(s.gpus)),
    ("days", lambda s: f"{s.days:g}"),
    ("recovery strategy", lambda s: strategy_text(s)),
    ("recovery mode", lambda s: _mode_text(s)),
    ("spare nodes", lambda s: _pool_text(s)),
    ("swap", lambda s: f"{_spares(s).swap_min:g} min"),
    ("replicas", lambda s: _replicas_text(s)),
    ("repairs", lambda s: _repairs_text(s)),
    ("planned per day", lambda s: f"{s.planned_per_day:.3g}"),
    (
        "checkpoint interval",
        lambda s: "optimal" if s.checkpoint_interval_min == OPTIMAL else f"{float(s.checkpoint_interval_min):g} min",
    ),
    ("blocking write", lambda s: _write_text(s)),
    ("detection", lambda s: f"{s.detect_min:g} min"),
    ("detection by cause", lambda s: s.detect_by_text() or "none"),
    ("restart", lambda s: s.restart_text(short=True)),
    ("fail-slow nodes", lambda s: s.slow_text(short=True)),
    ("checkpoints that fail", lambda s: s.failing_checkpoints_text(short=True)),
    ("correlated failures", lambda s: s.correlated_text(short=True)),
    ("silent corruption (found after, kept)", lambda s: _sdc_text(s)),
    ("bad nodes (share, multiplier, right pulls, failed repairs)", lambda s: s.bad_text(short=True)),
    ("node lives (shape, scale)", lambda s: s.weibull_text(short=True) or "exponential"),
    ("new cluster", lambda s: "yes" if s.new_cluster else "no"),
    ("racks (NVLink domain, warm spares)", lambda s: s.rack_text(short=True)),
    ("one GPU interrupted", lambda s: _one_gpu_text(s)),
    ("price per GPU-hour", lambda s: f"${s.gpu_hour_cost_usd:,.2f}"),
    ("training compute", lambda s: "none" if s.training is None else f"{s.training.gpu_hours:,.3g} GPU-hours"),
    ("rate uncertainty", lambda s: "on" if s.rate_uncertainty else "off"),
    ("trials", lambda s: fmt.count(s.trials)),
    ("seed", lambda s: str(s.seed)),
)


def _pool(report: dict[str, Any]) -> bool:
    """Whether a report has a spare pool's figures (bad nodes alone give a ``spares`` section of their counts)."""
    return "p_no_spare" in (report.get("spares") or {})


def _sdc_text(s: Scenario) -> str:
    """Silent corruption's inputs, both of them even while it is found at once (a file may keep the count)."""
    if s.uses_sdc or s.retained_checkpoints <= 0:
        return s.sdc_text(short=True)
    return f"found at once, keep {s.retained_checkpoints:,}"


def _one_gpu_text(s: Scenario) -> str:
    """One GPU's time between interruptions: its rates', or where a new cluster's node lives vary them, the window
    over the expected count (as run and the window say)."""
    if not s.nodes_vary:
        return fmt.every(s.gpu_mtbf_hours)
    n = float(expected_by_component(s).sum())
    return fmt.every(s.hours * s.gpus / n if n > 0 else math.inf) + " on average over the window"


def profile_text(scenario: Scenario) -> str:
    """A scenario's rate profile in a few words: "none", or its pieces in the window and its multipliers
    (at the start, at the end and on average over the window)."""
    if scenario.rate_profile is None:
        return "none"
    p = pieces(scenario.rate_profile, scenario.days)
    mean = p.integral() / p.hours
    count = f"{len(p)} piece{'' if len(p) == 1 else 's'}"
    return f"{count}, x{p.multipliers[0]:.3g} to x{p.multipliers[-1]:.3g}, x{mean:.3g} on average"


#: Headline outputs: label, how to read it from a JSON report (None where it does not apply), unit.
OUTPUTS: tuple[tuple[str, Callable[[dict[str, Any]], float | None], str], ...] = (
    ("unplanned interruptions", lambda d: d["interruptions"]["mean"], ""),
    ("goodput (Monte Carlo)", lambda d: 100 * d["goodput"]["mean"], "%"),
    ("goodput (exact)", lambda d: None if d["goodput_expected"] is None else 100 * d["goodput_expected"], "%"),
    ("restores from memory", lambda d: d["restores"]["fast"], ""),
    ("restores from storage", lambda d: d["restores"]["persistent"], ""),
    ("fast restores failed", lambda d: d["restores"].get("failed"), ""),
    ("correlated events", lambda d: d["correlated"]["events"]["mean"] if "correlated" in d else None, ""),
    ("checkpoint interval", lambda d: d["checkpoint_interval_min"], "min"),
    ("fast (in-memory) interval", lambda d: (d.get("tiers") or {}).get("fast_interval_min"), "min"),
    ("GPU-hours not spent training", lambda d: d["lost_gpu_hours"]["mean"], "GPU-h"),
    ("their cost", lambda d: d["lost_cost_usd"], "$"),
    ("hours waiting for spares", lambda d: d["hours"].get("waiting_for_spares"), "h"),
    ("hours at reduced throughput", lambda d: d["hours"].get("reduced_throughput"), "h"),
    ("hours at slow nodes' pace", lambda d: d["hours"].get("slow"), "h"),
    ("slow nodes drained", lambda d: d["slow"]["drains"]["mean"] if "slow" in d else None, ""),
    ("hours of corruption rollbacks", lambda d: d["hours"].get("sdc_rollback"), "h"),
    ("corruptions with no clean checkpoint", lambda d: d["sdc"]["unrecoverable"]["mean"] if "sdc" in d else None, ""),
    ("failures finding no spare", lambda d: 100 * d["spares"]["p_no_spare"] if _pool(d) else None, "%"),
    ("spare pool cost", lambda d: d["spares"]["idle_cost_usd"] if _pool(d) else None, "$"),
    ("failures of bad nodes", lambda d: d["bad"]["bad_failures"]["mean"] if "bad" in d else None, ""),
    ("healthy nodes pulled instead", lambda d: d["spares"]["misdiagnosed"]["mean"] if "bad" in d else None, ""),
    ("nodes bad at the end", lambda d: d["bad"]["bad_at_end"]["mean"] if "bad" in d else None, ""),
    ("warm spare trays' cost", lambda d: d["racks"]["warm_spare_cost_usd"] if "racks" in d else None, "$"),
    (
        "cost with the spares held",
        lambda d: (
            d["lost_cost_usd"]
            + (d["spares"]["idle_cost_usd"] or 0.0 if _pool(d) else 0.0)
            + (d["racks"]["warm_spare_cost_usd"] if "racks" in d else 0.0)
        ),
        "$",
    ),
    ("failures covered in their rack", lambda d: d["racks"]["covered_in_rack"]["mean"] if "racks" in d else None, ""),
    ("failures that moved racks", lambda d: d["racks"]["moves"]["mean"] if "racks" in d else None, ""),
    ("days to train", lambda d: d["time_to_train"]["days"]["mean"] if "time_to_train" in d else None, "days"),
    ("cost to train", lambda d: d["time_to_train"]["cost_usd"] if "time_to_train" in d else None, "$"),
)


def _spares(scenario: Scenario) -> Spares:
    return scenario.spares or Spares()


def _write_text(scenario: Scenario) -> str:
    """The blocking write; with the fast tier on, what each persistent checkpoint blocks for beside the fast
    stall."""
    text = f"{scenario.checkpoint_write_s:,g} s"
    if scenario.fast_tier_on:
        text += " per persistent point"
    return text


def _pool_text(scenario: Scenario) -> str:
    nodes = _spares(scenario).spare_nodes
    return "unlimited" if nodes is None else fmt.count(nodes)


def _mode_text(scenario: Scenario) -> str:
    sp = _spares(scenario)
    if sp.recovery_mode == "continue":
        return "continue on replicas"
    return "restart" + ("" if sp.min_gpus is None else f", shrink to {sp.min_gpus:,} GPUs")


def _replicas_text(scenario: Scenario) -> str:
    sp = _spares(scenario)
    if sp.recovery_mode != "continue":
        return "-"
    return f"{sp.replica_gpus:,} GPUs, stall {sp.continue_stall_min:g} min, {sp.max_replicas_lost} lost"


def _repairs_text(scenario: Scenario) -> str:
    sp = _spares(scenario)
    law = "exponential" if sp.repair_sigma is None else f"lognormal, sigma {sp.repair_sigma:g}"
    changed = ", ".join(f"{c} {h:g} h" for c, h in sp.repair_hours)
    return law + (f"; {changed}" if changed else "")


def strategy_text(scenario: Scenario) -> str:
    """The recovery strategy in a few words (docs/tiers.md)."""
    t = scenario.tiers
    if t is None or t.is_todays:
        return "persistent only"
    parts = []
    if t.fast_enabled:
        parts.append(f"fast tier, {t.fast_replicas} replica{'' if t.fast_replicas == 1 else 's'} {t.fast_placement}")
    if t.persistent_upload_min > 0:
        parts.append(f"upload {t.persistent_upload_min:g} min")
    if t.persistent_restore_min > 0:
        parts.append(f"persistent restore {t.persistent_restore_min:g} min")
    return ", ".join(parts)


def input_differences(scenarios: Sequence[Scenario]) -> list[tuple[str, list[str]]]:
    """The inputs whose shown value differs between ``scenarios``: (label, the value in each)."""
    rows = [(label, [show(s) for s in scenarios]) for label, show in _INPUTS]
    rows = [(label, values) for label, values in rows if len(set(values)) > 1]
    if len({s.rate_profile for s in scenarios}) > 1:  # profiles that differ, even where their words agree
        shown = [profile_text(s) for s in scenarios]
        if len(set(shown)) == 1:
            shown = [f"{text} (profile {i + 1})" for i, text in enumerate(shown)]
        rows.append(("rate profile", shown))
    names = list(dict.fromkeys(c.name for s in scenarios for c in s.components))
    for name in names:
        rates = [{c.name: c.rate_per_gpu_hour for c in s.components}.get(name) for s in scenarios]
        if len(set(rates)) > 1:
            shown = ["absent" if r is None else f"{r * 24_000:.3g} per 1,000 GPU-days" for r in rates]
            rows.append((f"{fmt.clean(name, 60)} rate", shown))
    if any(s.rate_uncertainty for s in scenarios):  # the evidence matters only when the rates are drawn from it
        for name in names:
            found = [next((c for c in s.components if c.name == name), None) for s in scenarios]
            evidence = [None if c is None else evidence_of(c) for c in found]
            if len(set(evidence)) > 1:
                shown = [
                    "absent"
                    if c is None
                    else "none"
                    if e is None
                    else f"{fmt.count(e.count, 0 if float(e.count).is_integer() else 1)} in "
                    f"{fmt.compact(e.exposure_gpu_hours)} GPU-h"
                    for c, e in zip(found, evidence)
                ]
                rows.append((f"{fmt.clean(name, 60)} evidence", shown))
    return rows


def comparison(
    names: Sequence[str], scenarios: Sequence[Scenario], reports: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The comparison as a JSON-ready object: each scenario's report, the inputs that differ, and each
    headline output with its difference from the first scenario."""
    outputs = []
    for label, read, unit in OUTPUTS:
        values = [read(d) for d in reports]
        if all(v is None for v in values):
            continue
        first = values[0]
        deltas = [None if v is None or first is None else v - first for v in values]
        outputs.append({"output": label, "unit": unit, "values": values, "differences": deltas})
    return {
        "scenarios": [{"name": n, "report": d} for n, d in zip(names, reports)],
        "inputs": [{"input": label, "values": values} for label, values in input_differences(scenarios)],
        "outputs": outputs,
    }


def show_value(value: float | None, unit: str, signed: bool = False, missing: str = "-") -> str:
    """A headline value (or, ``signed``, a difference) in its unit, as the comparison table shows it;
    ``missing`` where there is none."""
    if value is None:
        return missing
    sign = "+" if signed and value >= 0 else ""
    if unit == "$":
        return f"{'-' if value < 0 else sign}${fmt.compact(abs(value))}"
    if unit == "%":
        return f"{value:{'+' if signed else ''}.2f}{' points' if signed else '%'}"
    text = fmt.compact(value) if abs(value) >= 1e4 else f"{value:,.1f}"
    return f"{sign}{text}{' ' + unit if unit else ''}"


def comparison_table(doc: dict[str, Any]) -> str:
    """The comparison as a plain-text table: a column per scenario, differences from the first."""
    full = [fmt.clean(s["name"], 200) for s in doc["scenarios"]]
    names = [fmt.clean(s["name"], 30) for s in doc["scenarios"]]
    numbered = len(set(names)) < len(names) or names != full
    if numbered:  # a name cut to fit misleads ("Llama 3 405B (16,3...--days 10"): number them, full names below
        names = [f"{i + 1}. {fmt.clean(s['name'], 27)}" for i, s in enumerate(doc["scenarios"])]
    rows = [("", names)]
    rows += [(r["input"], [fmt.clean(v, 36) for v in r["values"]]) for r in doc["inputs"]] or [
        ("inputs", ["the same"] * len(names))
    ]
    rows.append(("", ["-" * 10] * len(names)))
    for r in doc["outputs"]:
        cells = [show_value(r["values"][0], r["unit"])]
        cells += [
            f"{show_value(v, r['unit'])} ({show_value(d, r['unit'], signed=True)})"
            for v, d in zip(r["values"][1:], r["differences"][1:])
        ]
        rows.append((r["output"], cells))
    width = max(len(label) for label, _ in rows)
    cols = [max(len(cells[i]) for _, cells in rows) for i in range(len(names))]
    lines = [
        f"{label:<{width}}  " + "  ".join(f"{c:<{w}}" for c, w in zip(cells, cols)).rstrip() for label, cells in rows
    ]
    if numbered:
        lines += ["", *(f"{i + 1}. {name}" for i, name in enumerate(full))]
    return "\n".join(lines)
