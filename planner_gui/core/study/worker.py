"""What a worker runs: scenarios of a study, each to one row of headline outputs.

The functions here are what a process pool or a Dask worker imports and calls; they take and return
plain data (scenario files as dicts, rows as dicts), so any backend can send them.
"""

from __future__ import annotations

from typing import Any

from ... import __version__
from ..analysis.results import simulate
from ..analysis.training import check_training_size
from ..files.scenario_io import ScenarioError, scenario_from_dict
from ..model.scenario import Scenario

__all__ = [
    "OUTPUTS",
    "TOTAL_COST",
    "check_scenario",
    "output_row",
    "run_chunk",
    "run_one",
    "total_cost",
    "worker_version",
]

#: The headline outputs of each scenario, by their column: where each is in the JSON report of ``planner-gui run
#: --json`` is its dotted name (absent parts, such as time to train without a training section, are empty),
#: except the columns of :data:`RENAMED`.
COLUMNS: tuple[str, ...] = (
    "goodput.mean",
    "goodput.sem",
    "goodput.p05",
    "goodput.p50",
    "goodput.p95",
    "goodput_expected",
    "goodput_expected_at_optimal_interval",
    "interruptions.mean",
    "interruptions.p05",
    "interruptions.p95",
    "interruptions_expected",
    "planned_interruptions.mean",
    "cluster_mtbf_hours",
    "interval_used_min",
    "optimal_interval_min.exact",
    "hours.useful",
    "hours.checkpoint",
    "hours.lost_work",
    "hours.recovery",
    "hours.planned_restart",
    "hours.waiting_for_spares",
    "hours.reduced_throughput",
    "hours.slow",
    "slow.drains.mean",
    "hours.sdc_rollback",
    "sdc.found.mean",
    "sdc.unrecoverable.mean",
    "bad.bad_failures.mean",
    "bad.bad_at_end.mean",
    "spares.misdiagnosed.mean",
    "correlated.events.mean",
    "lost_gpu_hours.mean",
    "lost_cost_usd",
    "restores.fast",
    "restores.persistent",
    "restores.failed",
    "optimal_interval_min.fast",
    "optimal_interval_min.persistent",
    "tiers.fast_interval_min",
    "tiers.persistent_interval_min",
    "tiers.upload_every_checkpoint",
    "spares.p_no_spare",
    "spares.p_no_spare_expected",
    "spares.nodes_in_repair.mean",
    "spares.nodes_in_repair.p95",
    "spares.continued",
    "spares.idle_gpu_hours",
    "spares.idle_cost_usd",
    "spares.recommended_for_99pct",
    "uncertainty.goodput.variance_share_rates",
    "time_to_train.ideal_days",
    "time_to_train.days.mean",
    "time_to_train.days.p05",
    "time_to_train.days.p10",
    "time_to_train.days.p25",
    "time_to_train.days.p50",
    "time_to_train.days.p75",
    "time_to_train.days.p90",
    "time_to_train.days.p95",
    "time_to_train.gpu_hours",
    "time_to_train.cost_usd",
    "time_to_train.lost_cost_usd",
    "storage.checkpoint_write_s",
)
#: Columns named otherwise than their place in the report.
RENAMED = {"interval_used_min": ("checkpoint_interval_min",)}
OUTPUTS: tuple[tuple[str, tuple[str, ...]], ...] = tuple((c, RENAMED.get(c, tuple(c.split(".")))) for c in COLUMNS)
#: A computed column: what the scenario costs in all, with its spare pool's GPU-hours (see :func:`total_cost`).
TOTAL_COST = "total_cost_usd"


def worker_version() -> str:
    """The planner-gui version a worker runs (a study refuses workers of another version)."""
    return __version__


def output_row(report: dict[str, Any]) -> dict[str, float | None]:
    """The headline outputs of one JSON report (None where the report has no such part)."""
    row: dict[str, float | None] = {}
    for column, path in OUTPUTS:
        node: Any = report
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        row[column] = float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None
    row[TOTAL_COST] = total_cost(report)
    return row


def total_cost(report: dict[str, Any]) -> float | None:
    """What a scenario costs in all, its spare pool included: with a training run, the GPU-hours it uses and the
    pool's over its days (``time_to_train.cost_usd`` + ``spares.pool_cost_per_hour_usd`` x hours); without one, the
    window's lost GPU-hours and the pool's (``lost_cost_usd`` + ``spares.pool_cost_usd``)."""
    sp = report.get("spares") or {}
    per_hour = sp.get("pool_cost_per_hour_usd")
    pool_per_hour = float(per_hour) if isinstance(per_hour, (int, float)) else 0.0
    ttt = report.get("time_to_train")
    if isinstance(ttt, dict) and isinstance(ttt.get("cost_usd"), (int, float)):
        days = (ttt.get("days") or {}).get("mean")
        return float(ttt["cost_usd"]) + pool_per_hour * 24.0 * float(days if isinstance(days, (int, float)) else 0.0)
    lost = report.get("lost_cost_usd")
    if not isinstance(lost, (int, float)):
        return None
    pool = sp.get("pool_cost_usd")
    return float(lost) + (float(pool) if isinstance(pool, (int, float)) else 0.0)


def check_scenario(doc: dict[str, Any]) -> Scenario:
    """The scenario of a scenario file, with every check ``planner-gui run`` makes before it simulates: the
    file's limits, the time to train's size, and the spares model's fit and size. ScenarioError otherwise."""
    sc = scenario_from_dict(doc)  # (the one table's checks: values, meaningless settings, sizes)
    check_training_size(sc)
    return sc


#: The key of a row that holds a scenario's failure instead of its outputs (the study records nothing for it).
ERROR_KEY = "error"


def run_one(index: int, doc: dict[str, Any]) -> dict[str, Any]:
    """Simulate one scenario file; its row holds its index, its seed and its outputs. A scenario that cannot
    run gives a row of its index and ``error`` (one line), so that the others of its task still count."""
    try:
        sc = check_scenario(doc)
        return {"index": index, "seed": sc.seed, **output_row(simulate(sc).to_json_dict())}
    except (ScenarioError, ValueError, ArithmeticError, MemoryError) as exc:
        text = str(exc) if isinstance(exc, ScenarioError) else f"{type(exc).__name__}: {exc}"
        return {"index": index, ERROR_KEY: " ".join(text.split())[:300]}


def run_chunk(chunk: list[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Simulate several scenarios (one task of a pool or a cluster)."""
    return [run_one(index, doc) for index, doc in chunk]
