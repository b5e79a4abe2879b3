"""Recovery strategies side by side: what each step from 2019's blocking checkpoint to in-memory snapshots
with replicas in another failure domain buys, at the scenario's scale and across GPU counts.

Every strategy is built from the scenario's own numbers (its tiers section, or the published defaults of
:class:`..model.scenario.Tiers` when it has none), so they differ only in the strategy:

1. **persistent only (blocking)**: the whole checkpoint is written while training waits (the blocking
   write plus the upload time), no fast tier;
2. **+ async upload**: only the blocking part stalls; the upload runs in the background and the checkpoint
   counts once it has finished;
3. **+ fast tier, same-domain**: in-memory snapshots with replicas in the node's own failure domain (a
   domain failure falls back to the persistent tier); the persistent checkpoint keeps strategy 2's blocking
   part, now paid at each persistent point on top of the fast stall (set it to 0 when a persistent
   checkpoint only uploads the snapshot in memory);
4. **+ fast tier, other-domain**: replicas only in other domains (only planned interruptions renew from the
   persistent tier);
5. **continue on replicas (blocking persistent)**: no fast tier, the checkpoint of strategy 1, but the job
   is data-parallel replicas (FT-HSDP, docs/spares.md): a failure inside one replica stalls the others and
   takes it out until it is back, losing no work; only failures that cannot continue (process scope, or
   more replicas than may be lost) restart from the checkpoint (after detection, restart and the persistent
   restore). Replica size, stall and replicas that may be lost are the scenario's spares section's, or
   their defaults.

Every strategy keeps the rest of the scenario: its spare pool, swap time and repairs (restart mode in rows 1-4,
continue mode in row 5), its rates (uncertain or changing over the run) and its training run, so the rows
differ in the recovery strategy alone. Across GPU counts a finite pool keeps its share of the job's nodes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..files.scenario_io import ScenarioError, validate
from ..model.scenario import Scenario
from ..model.spares import Spares
from ..model.specs import LIMITS
from ..model.tiers import restore_caveat
from ..sim.tiers_run import tiers_of
from ..util.progress import progress_part
from .results import HOURS_KEYS, SDC_HOURS_KEY, SLOW_HOURS_KEY, SPARES_HOURS_KEYS, SimulationResult, simulate
from .sweep import Cost, at_gpus, run_cost

__all__ = [
    "STRATEGIES",
    "StrategyRow",
    "comparable",
    "compare_strategies",
    "comparison_cost",
    "distinct_notes",
    "strategy_scenarios",
]

#: The strategies, in the order a planner would adopt them.
STRATEGIES = (
    "persistent only (blocking)",
    "+ async upload",
    "+ fast tier, same-domain",
    "+ fast tier, other-domain",
    "continue on replicas (blocking persistent)",
)
#: GPU counts of the comparison across scales.
SCALE_GPUS = (1024, 4096, 16_384, 65_536, 100_000, 262_144, 1_048_576)
#: Trials per point across scales (the scenario's own trials at its scale).
SCALE_TRIALS = 200


def strategy_scenarios(scenario: Scenario) -> list[tuple[str, Scenario]]:
    """The scenario under each of :data:`STRATEGIES` (the scenario's intervals: 'optimal' is each one's)."""
    t = tiers_of(scenario)
    write = scenario.write_s
    off = dataclasses.replace(t, fast_enabled=False)
    blocking_write = min(write + 60.0 * t.persistent_upload_min, LIMITS["checkpoint_write_s"][1])
    own = scenario.spares
    restart = None if own is None else dataclasses.replace(own, recovery_mode="restart")
    base = scenario.replace(storage=None, spares=restart)
    # Continue mode on strategy 1's checkpoint, with the scenario's pool, swap and repairs (and its replica size,
    # stall and replicas that may be lost, or their defaults); its restarts restore from the persistent tier.
    sp = dataclasses.replace(own or Spares(), recovery_mode="continue", min_gpus=None)
    sp = dataclasses.replace(sp, replica_gpus=_replica_for(scenario, sp.replica_gpus))
    cont = base.replace(
        checkpoint_write_s=blocking_write,
        tiers=dataclasses.replace(off, persistent_upload_min=0.0),
        spares=sp,
    )
    return [
        (
            STRATEGIES[0],
            base.replace(checkpoint_write_s=blocking_write, tiers=dataclasses.replace(off, persistent_upload_min=0.0)),
        ),
        (STRATEGIES[1], base.replace(checkpoint_write_s=write, tiers=off)),
        (
            STRATEGIES[2],
            base.replace(
                checkpoint_write_s=write, tiers=dataclasses.replace(t, fast_enabled=True, fast_placement="same-domain")
            ),
        ),
        (
            STRATEGIES[3],
            base.replace(
                checkpoint_write_s=write, tiers=dataclasses.replace(t, fast_enabled=True, fast_placement="other-domain")
            ),
        ),
        (STRATEGIES[4], cont),
    ]


def _replica_for(scenario: Scenario, replica_gpus: int) -> int:
    """A replica no larger than the job (whole nodes)."""
    gpn = scenario.gpus_per_node
    job = max(gpn, scenario.gpus - scenario.gpus % gpn)
    return min(replica_gpus, job)


def _at_gpus(sc: Scenario, gpus: int, replica_gpus: int) -> Scenario:
    """A strategy's scenario at another GPU count (:func:`.sweep.at_gpus`: a finite pool keeps its share of the
    nodes): a continue replica of ``replica_gpus`` (the scenario's own size, not the one its scale may have cut
    it to) brought down to the job where it is larger."""
    out = at_gpus(sc, gpus)
    if out.spares is not None:
        out = out.replace(spares=dataclasses.replace(out.spares, replica_gpus=_replica_for(out, replica_gpus)))
    return out


@dataclass(frozen=True)
class StrategyRow:
    """One strategy at the scenario's scale; a strategy that cannot be built there (``error``: why, e.g. replicas
    that do not fit in a domain) has no numbers."""

    name: str
    scenario: Scenario
    goodput: float | None
    goodput_sem: float | None
    goodput_expected: float | None
    hours: dict[str, float] | None  # mean hours of the window by where they went
    restores: dict[str, float] | None
    fast_interval_min: float | None
    persistent_interval_min: float | None
    error: str | None = None
    #: What the row's name does not say (e.g. a placement without replicas to place), one note each.
    notes: tuple[str, ...] = ()
    #: With a training run: its ``time_to_train`` (days and cost, as ``run --json``'s).
    time_to_train: dict[str, Any] | None = None

    @property
    def note(self) -> str | None:
        """The notes in one text (None without any)."""
        return "; ".join(self.notes) if self.notes else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.name,
            "error": self.error,
            "note": self.note,
            "notes": list(self.notes),
            "goodput": self.goodput,
            "goodput_sem": self.goodput_sem,
            "goodput_expected": self.goodput_expected,
            "hours": self.hours,
            "restores": self.restores,
            "fast_interval_min": self.fast_interval_min,
            "persistent_interval_min": self.persistent_interval_min,
            "time_to_train": self.time_to_train,
        }


def _kept(scenario: Scenario) -> str:
    """In words, what every strategy keeps of the scenario (its pool, swap, rates and training)."""
    sp = scenario.spares
    pool = "unlimited spares" if sp is None or sp.spare_nodes is None else f"{sp.spare_nodes:,} spare nodes"
    parts = [pool + (f", swap {sp.swap_min:g} min" if sp is not None and sp.swap_min > 0 else "")]
    if scenario.rate_uncertainty:
        parts.append("uncertain rates")
    if scenario.rate_profile is not None:
        parts.append("burn-in" if scenario.new_cluster else "rate profile")
    if scenario.training is not None:
        parts.append("training run")
    return ", ".join(parts)


def _waits(scenario: Scenario) -> bool:
    """Whether the restart strategies can wait for spares (a finite pool without shrinking)."""
    sp = scenario.spares
    return sp is not None and sp.spare_nodes is not None and sp.min_gpus is None


def comparable(scenario: Scenario) -> Scenario:
    """``scenario`` checked as the comparison takes it: with its fast tier off. Each strategy sets the fast tier
    (and its placement) itself and is checked on its own (:func:`compare_strategies`), so replicas that do not fit
    the scenario's own placement fail only the strategies that use them, not the comparison. The command line
    and the window both go through here."""
    if scenario.tiers is None:
        return validate(scenario)
    return validate(scenario.replace(tiers=dataclasses.replace(scenario.tiers, fast_enabled=False)))


def _attempt(
    sc: Scenario, progress: Callable[[float], None] | None, should_stop: Callable[[], bool] | None
) -> SimulationResult | str:
    """The strategy's run, or why it cannot be built (the checks a scenario file or ``run`` would make; an error
    of the run itself is raised, not taken for one)."""
    try:
        checked = validate(sc)
    except ScenarioError as exc:
        return str(exc)
    return simulate(checked, progress=progress, should_stop=should_stop)


def _scaled(sc: Scenario, gpus: int, replica_gpus: int, scale_trials: int) -> Scenario:
    """A strategy's scenario as the comparison across GPU counts runs it (goodput only: no time to train)."""
    return _at_gpus(sc, gpus, replica_gpus).replace(trials=min(sc.trials, scale_trials), training=None)


def _runs(
    plans: Sequence[tuple[str, Scenario]], counts: Sequence[int], replica_gpus: int, scale_trials: int
) -> list[Scenario]:
    """Every run of a comparison, in the order it makes them: each strategy at scale, then each across counts."""
    return [sc for _, sc in plans] + [_scaled(sc, n, replica_gpus, scale_trials) for _, sc in plans for n in counts]


def _cost(sc: Scenario) -> Cost:
    """A run's estimated cost (:func:`.sweep.run_cost`; one that cannot be built costs next to nothing)."""
    try:
        return run_cost(sc)
    except (ScenarioError, ValueError, ArithmeticError):
        return Cost(0.0, 1e-3)


def comparison_cost(
    scenario: Scenario, gpus: Sequence[int] | None = SCALE_GPUS, scale_trials: int = SCALE_TRIALS
) -> Cost:
    """What :func:`compare_strategies` costs: the sum of its runs' estimates (:func:`.sweep.run_cost`)."""
    counts = [] if gpus is None else [int(n) for n in gpus]
    runs = _runs(strategy_scenarios(scenario), counts, (scenario.spares or Spares()).replica_gpus, scale_trials)
    costs = [_cost(sc) for sc in runs]
    return Cost(sum(c.events for c in costs), sum(c.seconds for c in costs))


def distinct_notes(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The notes of the rows (``StrategyRow.to_dict`` documents), each once, in the order the rows give them
    (a note two rows share, and the notes of a row that has several, are said once each)."""
    seen: dict[str, None] = {}
    for row in rows:
        for note in row["notes"]:
            seen.setdefault(note, None)
    return list(seen)


def _noted(rows: list[StrategyRow], names: Sequence[str], note: str) -> list[StrategyRow]:
    """``rows`` with ``note`` added to those named ``names``."""
    return [dataclasses.replace(r, notes=(*r.notes, note)) if r.name in names else r for r in rows]


def compare_strategies(
    scenario: Scenario,
    gpus: Sequence[int] | None = SCALE_GPUS,
    *,
    scale_trials: int = SCALE_TRIALS,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Every strategy at the scenario's scale (its trials) and, unless ``gpus`` is None, its goodput at each
    GPU count (``scale_trials`` trials a point). A JSON-ready dict: ``at_scale`` (a row per strategy) and
    ``across_gpus`` (``gpus`` and each strategy's goodput mean and standard error). A strategy that cannot be
    built (replicas that do not fit, too few nodes for them) has its reason in ``error`` and null numbers, at
    the scenario's scale or at a GPU count; the others are computed."""
    rows = []
    plans = strategy_scenarios(scenario)
    counts = [] if gpus is None else [int(n) for n in gpus]
    replica = (scenario.spares or Spares()).replica_gpus  # each count cuts the scenario's replica, not its cut one
    # Progress goes by each run's estimated time (continuing on replicas at a million GPUs outweighs the rest).
    weights = [_cost(sc).seconds for sc in _runs(plans, counts, replica, scale_trials)]
    total = sum(weights) or 1.0
    done = 0

    def part() -> Callable[[float], None] | None:
        lo = sum(weights[:done]) / total
        return progress_part(progress, lo, lo + weights[done] / total)

    keys = (*HOURS_KEYS, *(k for k in SPARES_HOURS_KEYS if k == "reduced_throughput" or _waits(scenario)))
    keys = tuple(sorted(keys, key=lambda k: (k == "reduced_throughput", (*HOURS_KEYS, *SPARES_HOURS_KEYS).index(k))))
    if scenario.uses_slow:
        keys = (*keys, SLOW_HOURS_KEY)
    if scenario.uses_sdc:
        keys = (*keys, SDC_HOURS_KEY)
    for name, sc in plans:
        res = _attempt(sc, part(), should_stop)
        done += 1
        if isinstance(res, str):
            rows.append(StrategyRow(name, sc, None, None, None, None, None, None, None, res))
            continue
        d = res.to_json_dict()
        tiers = d.get("tiers")
        rows.append(
            StrategyRow(
                name,
                sc,
                d["goodput"]["mean"],
                d["goodput"]["sem"],
                d["goodput_expected"],
                {k: float(d["hours"].get(k, 0.0)) for k in keys},
                d["restores"],
                None if tiers is None else tiers["fast_interval_min"],
                res.interval_min,
                time_to_train=d.get("time_to_train"),
            )
        )
        if res.tier_plan is not None and res.tier_plan.persistent_unneeded and sc.uses_optimal_interval:
            rows = _noted(
                rows,
                [name],
                "nothing restores from storage: the model never needs a persistent checkpoint (its optimum is "
                f"unbounded), so row {len(rows)} takes one daily, by policy",
            )
    t = tiers_of(scenario)
    if t.fast_replicas == 0:  # both fast-tier rows are then one strategy
        rows = _noted(
            rows,
            STRATEGIES[2:4],
            "no replicas: a node's snapshot has no copy, so where copies would go does not matter (rows 3 and 4 are "
            "the same)",
        )
    if t.persistent_upload_min == 0:  # nothing to move to the background
        same = "no upload time: the whole checkpoint write blocks either way (rows 1 and 2 are the same)"
        rows = _noted(rows, STRATEGIES[:2], same)
    caveat = restore_caveat(scenario, dataclasses.replace(t, fast_enabled=True))
    if caveat is not None:
        rows = _noted(rows, STRATEGIES[2:4], f"{caveat} (rows 3 and 4)")
    across: dict[str, Any] = {"gpus": counts}
    for name, sc in plans:
        means: list[float | None] = []
        sems: list[float | None] = []
        errors: list[str | None] = []
        for n in counts:
            small = _scaled(sc, n, replica, scale_trials)
            res = _attempt(small, part(), should_stop)
            done += 1
            if isinstance(res, str):  # e.g. too few nodes for the replicas at this count, or over a size limit
                means.append(None)
                sems.append(None)
                errors.append(res)
                continue
            means.append(float(res.goodput.mean()))
            sems.append(float(res.goodput.std(ddof=1) / np.sqrt(res.goodput.size)) if res.goodput.size > 1 else 0.0)
            errors.append(None)
        across[name] = {"goodput": means, "goodput_sem": sems, "errors": errors}
    return {
        "scenario": scenario.name,
        "gpus": scenario.gpus,
        "kept": _kept(scenario),
        "hours_keys": list(keys),
        "at_scale": [r.to_dict() for r in rows],
        "across_gpus": across,
    }
