"""What a worker runs: scenarios of a study, each to one row of headline outputs.

The functions here are what a process pool or a Dask worker imports and calls; they take and return
plain data (scenario files as dicts, rows as dicts), so any backend can send them.
"""

from __future__ import annotations

from typing import Any

from ... import __version__
from ..model import Scenario
from ..results import simulate
from ..scenario_io import ScenarioError, scenario_from_dict
from ..training import check_training_size

__all__ = ["OUTPUTS", "check_scenario", "output_row", "run_chunk", "run_one", "worker_version"]

#: The headline outputs of each scenario: its column and where it is in the JSON report of
#: ``planner-gui run --json`` (absent parts, such as time to train without a training section, are empty).
OUTPUTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("goodput.mean", ("goodput", "mean")),
    ("goodput.sem", ("goodput", "sem")),
    ("goodput.p05", ("goodput", "p05")),
    ("goodput.p50", ("goodput", "p50")),
    ("goodput.p95", ("goodput", "p95")),
    ("goodput_expected", ("goodput_expected",)),
    ("goodput_expected_at_optimal_interval", ("goodput_expected_at_optimal_interval",)),
    ("interruptions.mean", ("interruptions", "mean")),
    ("interruptions.p05", ("interruptions", "p05")),
    ("interruptions.p95", ("interruptions", "p95")),
    ("interruptions_expected", ("interruptions_expected",)),
    ("planned_interruptions.mean", ("planned_interruptions", "mean")),
    ("cluster_mtbf_hours", ("cluster_mtbf_hours",)),
    ("interval_used_min", ("checkpoint_interval_min",)),
    ("optimal_interval_min.exact", ("optimal_interval_min", "exact")),
    ("hours.useful", ("hours", "useful")),
    ("hours.checkpoint", ("hours", "checkpoint")),
    ("hours.lost_work", ("hours", "lost_work")),
    ("hours.recovery", ("hours", "recovery")),
    ("hours.planned_restart", ("hours", "planned_restart")),
    ("lost_gpu_hours.mean", ("lost_gpu_hours", "mean")),
    ("lost_cost_usd", ("lost_cost_usd",)),
    ("time_to_train.days.mean", ("time_to_train", "days", "mean")),
    ("time_to_train.days.p95", ("time_to_train", "days", "p95")),
    ("time_to_train.cost_usd", ("time_to_train", "cost_usd")),
    ("storage.checkpoint_write_s", ("storage", "checkpoint_write_s")),
)


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
    return row


def check_scenario(doc: dict[str, Any]) -> Scenario:
    """The scenario of a scenario file, with every check ``planner-gui run`` makes before it simulates: the
    file's limits, the time to train's size, and the spares model's fit and size. ScenarioError otherwise."""
    sc = scenario_from_dict(doc)
    if sc.uses_tiers:
        return sc
    if sc.uses_spares:
        from ..spares.run import check_spares_fit

        assert sc.spares is not None
        try:
            check_spares_fit(sc, sc.spares)
        except ScenarioError:
            raise
        except ValueError as exc:
            raise ScenarioError(str(exc)) from None
        return sc
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
