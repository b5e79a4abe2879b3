"""The command ``strategies``: recovery strategies side by side (docs/tiers.md)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.analysis.strategies import SCALE_GPUS, comparable, compare_strategies, comparison_cost, distinct_notes
from ..core.util import fmt
from .flags import Parser, Progress, UsageError, add_scenario_flags, integer_arg, scenario_from_args

__all__ = ["add_parser", "cmd_strategies"]

_HOURS_LABELS = {
    "useful": "useful",
    "checkpoint": "stalls",
    "lost_work": "lost work",
    "recovery": "recovery",
    "planned_restart": "planned",
    "waiting_for_spares": "waiting",
    "reduced_throughput": "reduced",
    "slow": "slow",
    "sdc_rollback": "corrupted",
}


def add_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    p = sub.add_parser(
        "strategies",
        help="recovery strategies side by side: blocking, async upload, in-memory tier in the same or another domain, "
        "continuing on replicas",
    )
    add_scenario_flags(p)
    p.add_argument(
        "--scale-gpus",
        type=integer_arg,
        nargs="*",
        metavar="N",
        help=f"GPU counts of the comparison across scales (default {' '.join(str(n) for n in SCALE_GPUS)}; "
        "none: only the scenario's scale)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def cmd_strategies(args: argparse.Namespace) -> int:
    if getattr(args, "no_fast_tier", None):
        raise UsageError("--no-fast-tier: strategies puts the strategies with and without the fast tier side by side")
    sc = scenario_from_args(args, check=comparable)
    gpus = SCALE_GPUS if args.scale_gpus is None else tuple(sorted(set(args.scale_gpus)))  # in order, once each
    for n in gpus:
        if not 1024 <= n <= 10_000_000:
            raise UsageError(
                f"--scale-gpus: each must be a whole number from 1,024 to 10,000,000 (got {fmt.number(n)})"
            )
    with Progress(comparison_cost(sc, gpus), "strategies") as progress:
        doc = compare_strategies(sc, gpus, progress=progress)
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
        return 0
    print(table(doc))
    return 0


def table(doc: dict[str, Any]) -> str:
    """The comparison as text: at the scenario's scale, then goodput across GPU counts."""
    rows = doc["at_scale"]
    keys = [k for k in doc["hours_keys"] if k != "useful"]  # useful compute is the goodput column
    total = next((sum(r["hours"].values()) for r in rows if r["hours"] is not None), 0.0) or 1.0  # the window
    width = max(len(r["strategy"]) for r in rows)
    head = f"{'strategy':<{width}}  {'goodput':>8}  " + "  ".join(f"{_HOURS_LABELS[k]:>9}" for k in keys)
    lines = [
        f"{fmt.clean(doc['scenario'], 160)}",
        f"At {doc['gpus']:,} GPUs (share of the window; restores from memory / storage; intervals); every strategy "
        f"with the scenario's {doc.get('kept', 'spare nodes, rates and training')}:",
        head,
    ]
    for r in rows:
        if r["error"] is not None:
            lines.append(f"{r['strategy']:<{width}}  cannot be built here: {fmt.clean(r['error'], 200)}")
            continue
        shares = "  ".join(f"{fmt.percent(r['hours'][k] / total):>9}" for k in keys)
        rest = r["restores"]
        fast = "-" if r["fast_interval_min"] is None else fmt.duration_min(r["fast_interval_min"])
        lines.append(
            f"{r['strategy']:<{width}}  {fmt.percent(r['goodput'], 1):>8}  {shares}  "
            f"restores {rest['fast']:,.0f} / {rest['persistent']:,.0f}; fast {fast}, persistent "
            f"{fmt.duration_min(r['persistent_interval_min'])}"
        )
    lines.extend(f"Note: {n}" for n in distinct_notes(rows))
    across = doc["across_gpus"]
    if across["gpus"]:
        lines.append("")
        lines.append("Goodput across GPU counts:")
        heads = [fmt.count(n) for n in across["gpus"]]  # exact: the counts are the ones simulated
        cell = max(7, *(len(h) for h in heads))
        lines.append(f"{'strategy':<{width}}  " + "  ".join(f"{h:>{cell}}" for h in heads))
        for r in rows:
            values = across[r["strategy"]]["goodput"]
            cells = ("-" if v is None else fmt.percent(v) for v in values)
            lines.append(f"{r['strategy']:<{width}}  " + "  ".join(f"{c:>{cell}}" for c in cells))
        said: set[str] = set()
        for r in rows:  # why each "-" is one (each reason once, with the first strategy and count it holds for)
            errors = across[r["strategy"]].get("errors") or []
            for n, why in zip(across["gpus"], errors):
                if why is not None and why not in said:
                    said.add(why)
                    lines.append(f"-: {r['strategy']} at {fmt.count(n)} GPUs: {fmt.clean(why, 200)}")
    return "\n".join(lines)
