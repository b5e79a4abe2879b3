"""Goal seek: the cheapest setup whose time to train at a quantile meets a deadline.

A planner names the inputs they control and the values each may take (a list, or a range searched on a grid
that is then refined around the best point); every setup of their product is simulated from the same seed
(common random numbers: two setups differ by their inputs, not by luck), and each gives

* ``days_quantile``: its time to train at the quantile ``Q`` of its trials (Q = 0.9: nine runs in ten finish
  sooner), and
* ``cost_usd``: what it costs in all, the GPU-hours it holds for the whole run at the price per GPU-hour plus
  its spare pool's over the same days (``time_to_train.cost_usd`` of ``planner-gui run --json`` plus the pool's,
  the study's ``total_cost_usd``).

The chosen setup is the cheapest whose ``days_quantile`` is at most the deadline (and whose cost is within the
budget, if one is given); with none, the search says so and gives the fastest. The front is every setup no other
beats on both days and cost (the Pareto front), fastest first; the runners-up are the next cheapest setups that
meet the goal, each with what separates it from the chosen one.

With lists alone the search is exhaustive. A range is first tried at ``points`` values (log-spaced for a log
range, whole numbers for a field that takes them), then, ``rounds`` times, at ``points`` values between the
best setup's neighbours on its last grid, the other inputs at the best setup's values. Setups already simulated
are not simulated again.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.sensitivity import per_trial_days_and_cost
from ..files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict
from ..model.scenario import Scenario
from ..study.spec import Input, StudyError, apply_values, input_of
from ..util import fmt

if TYPE_CHECKING:
    pass

__all__ = [
    "MAX_SETUPS",
    "OptimizeError",
    "Search",
    "Searcher",
    "Setup",
    "Vary",
    "as_study",
    "evaluate",
    "optimize",
    "pareto_front",
    "setups_of",
    "shown",
    "summary_flags",
]

#: The most setups one search may simulate (a list product beyond it is refused; a study runs larger searches).
MAX_SETUPS = 2_000
#: Setups simulated together (the general engine steps them side by side; a stop is checked between batches).
BATCH = 8
#: The runners-up listed beside the chosen setup.
RUNNERS_UP = 3
#: Inputs a search may not vary, and why.
NOT_VARIED = {
    "seed": "cannot be varied: every setup runs from the scenario's seed, so that setups differ by their inputs, not "
    "by luck (give the scenario another --seed to try other draws)",
    "name": "cannot be varied: it changes no result",
    "lever_prices": "cannot be varied: it changes no result",
}

Progress = Callable[[float], None] | None
StopCheck = Callable[[], bool] | None


class OptimizeError(ValueError):
    """A search that cannot run as asked (one line)."""


@dataclass(frozen=True)
class Vary:
    """An input the planner controls: its dotted path and its values (a list), or a range ``lo`` to ``hi``."""

    key: str
    values: tuple[Any, ...] | None = None
    lo: float = 0.0
    hi: float = 0.0
    log: bool = False


@dataclass(frozen=True)
class Setup:
    """One setup simulated: its inputs' values and what it gives (``error``: why it could not run)."""

    inputs: dict[str, Any]
    days_quantile: float
    cost_usd: float
    days_mean: float
    meets: bool
    error: str | None = None

    def inputs_text(self) -> str:
        """Its inputs in words: "gpus 65,536, spares.spare_nodes 40"."""
        return ", ".join(f"{k} {shown(v)}" for k, v in self.inputs.items())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "inputs": dict(self.inputs),
            "days_quantile": fmt.finite_or_none(self.days_quantile),
            "cost_usd": fmt.finite_or_none(self.cost_usd),
            "days_mean": fmt.finite_or_none(self.days_mean),
            "meets_goal": self.meets,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class Search:
    """What a search found: the chosen setup (None only when no setup could run), the Pareto front, the
    runners-up, every setup simulated, and whether it was stopped before the end."""

    deadline_days: float
    quantile: float
    budget_usd: float | None
    chosen: Setup | None
    front: tuple[Setup, ...]
    runners_up: tuple[Setup, ...]
    setups: tuple[Setup, ...]
    evaluated: int
    stopped: bool = False
    #: The inputs whose chosen value is an end of the values they were given (a wider range may do better).
    at_edges: tuple[str, ...] = ()

    @property
    def meets(self) -> bool:
        """Whether the chosen setup meets the goal (else it is the cheapest that meets the deadline over the budget,
        or the fastest, which do not)."""
        return self.chosen is not None and self.chosen.meets

    @property
    def over_budget(self) -> bool:
        """Whether the goal fails on the budget alone: the chosen setup meets the deadline, the cheapest that does,
        but costs more than the budget."""
        return self.chosen is not None and not self.chosen.meets and self.chosen.days_quantile <= self.deadline_days

    def verdict(self) -> str:
        """The chosen setup's standing in words: "No setup meets the goal within the budget ..." or "... The fastest"
        (empty when it meets the goal)."""
        c = self.chosen
        if c is None:
            return "No setup could be simulated."
        if self.meets:
            return ""
        if self.over_budget and self.budget_usd is not None:
            return (
                f"No setup meets the deadline within the budget. The cheapest that meets the deadline costs "
                f"${fmt.compact(c.cost_usd)}, ${fmt.compact(c.cost_usd - self.budget_usd)} over it"
            )
        return "No setup meets the goal. The fastest"

    def edges_text(self) -> str:
        """A note for chosen values at the end of what they were given ("" for none)."""
        if not self.at_edges or self.chosen is None:
            return ""
        what = ", ".join(f"{k} {shown(self.chosen.inputs[k])}" for k in self.at_edges)
        return f"At the end of the values given: {what}; a wider range may find a better setup."

    def to_dict(self) -> dict[str, Any]:
        return {
            "chosen": None if self.chosen is None else self.chosen.to_dict(),
            "front": [s.to_dict() for s in self.front],
            "evaluated": self.evaluated,
            "meets_goal": self.meets,
            "deadline_days": self.deadline_days,
            "quantile": self.quantile,
            "budget_usd": self.budget_usd,
            "runners_up": [s.to_dict() | {"differs": differs(self.chosen, s)} for s in self.runners_up]
            if self.chosen is not None
            else [],
            "stopped": self.stopped,
            "over_budget": self.over_budget,
            "at_range_end": list(self.at_edges),
            "failed": [s.to_dict() for s in self.setups if s.error is not None],
        }


def shown(v: Any) -> str:
    """An input's value in words: whole numbers with separators, others to four digits, words as they are."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    return f"{v:,}" if isinstance(v, int) else f"{v:.4g}"


def differs(a: Setup | None, b: Setup) -> dict[str, list[Any]]:
    """The inputs where ``b`` differs from ``a``: ``{input: [a's value, b's value]}``."""
    if a is None:
        return {}
    return {k: [a.inputs.get(k), v] for k, v in b.inputs.items() if a.inputs.get(k) != v}


def _inputs(base_doc: dict[str, Any], vary: Sequence[Vary], points: int) -> list[Input]:
    """The study inputs of ``vary`` (its checks: the path, the values, a scenario each end gives)."""
    out = []
    for v in vary:
        if v.key in NOT_VARIED:
            raise OptimizeError(f"{v.key}: {NOT_VARIED[v.key]}")
        spec: Any = (
            list(v.values)
            if v.values is not None
            else {"min": v.lo, "max": v.hi, "scale": "log" if v.log else "linear", "points": points}
        )
        try:
            out.append(input_of(v.key, spec, base_doc))
        except StudyError as exc:
            why = str(exc).replace("add it under [set] or in the base scenario", "give the scenario one (its flags)")
            raise OptimizeError(why.replace("vary.", "--vary " if v.values is not None else "--range ", 1)) from None
    names = [i.name for i in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise OptimizeError(f"{dup}: varied more than once")
    return out


def setups_of(inputs: Sequence[Input]) -> list[tuple[Any, ...]]:
    """Every setup of a grid: the product of each input's values (a range's grid values)."""
    return list(itertools.product(*(i.grid_values() for i in inputs)))


def pareto_front(setups: Sequence[Setup]) -> tuple[Setup, ...]:
    """The setups no other beats on both days at the quantile and cost (ties: the first), fastest first."""
    ok = sorted(
        (s for s in setups if s.error is None and math.isfinite(s.days_quantile)),
        key=lambda s: (s.days_quantile, s.cost_usd),
    )
    front: list[Setup] = []
    best = math.inf
    for s in ok:
        if s.cost_usd < best:
            front.append(s)
            best = s.cost_usd
    return tuple(front)


def evaluate(
    base: Scenario,
    vary: Sequence[Vary],
    goal: tuple[float, float, float | None],
    batch: Sequence[tuple[Any, ...]],
    points: int = 5,
    should_stop: StopCheck = None,
) -> list[Setup]:
    """Simulate each setup of ``batch`` (the values of ``vary``'s inputs, in order) from ``base``'s seed, stepped
    together; ``goal`` is (deadline days, quantile, budget or None). A setup that cannot run is a :class:`Setup`
    with its ``error``."""
    from ..analysis.results import simulate_scenarios
    from ..analysis.training import check_training_size

    deadline, q, budget = goal
    inputs = tuple(_inputs(scenario_to_dict(base), vary, points))
    base_doc = scenario_to_dict(base)

    def named(values: Sequence[Any]) -> dict[str, Any]:
        return {i.name: v for i, v in zip(inputs, values)}

    def failed(values: Sequence[Any], why: str) -> Setup:
        return Setup(named(values), math.inf, math.inf, math.inf, False, " ".join(why.split())[:300])

    out: dict[tuple[Any, ...], Setup] = {}
    runnable: list[tuple[tuple[Any, ...], Scenario]] = []
    for values in dict.fromkeys(tuple(v) for v in batch):
        try:
            sc = scenario_from_dict(apply_values(base_doc, inputs, values))
            check_training_size(sc)
            runnable.append((values, sc))
        except (ScenarioError, StudyError, ValueError) as exc:
            out[values] = failed(values, str(exc))
    said: list[str | None] = [None] * len(runnable)  # one that cannot run (e.g. it would never finish): why
    results = simulate_scenarios([sc for _, sc in runnable], should_stop=should_stop, refused=said) if runnable else []
    for (values, _), res, why in zip(runnable, results, said):
        if why is not None:
            out[values] = failed(values, why)
            continue
        days, cost = per_trial_days_and_cost(res)
        assert days is not None  # (every setup has a training run: checked before the search)
        dq = float(np.quantile(days, q))
        c = float(np.mean(cost))
        meets = dq <= deadline and (budget is None or c <= budget)
        out[values] = Setup(named(values), dq, c, float(np.mean(days)), meets)
    return [out[tuple(v)] for v in dict.fromkeys(tuple(v) for v in batch)]


def _best(setups: Sequence[Setup], deadline: float) -> Setup | None:
    """The cheapest setup that meets the goal; else the cheapest that meets the deadline (over the budget); else the
    fastest that ran."""
    ok = [s for s in setups if s.error is None]
    meeting = [s for s in ok if s.meets] or [s for s in ok if s.days_quantile <= deadline]
    if meeting:
        return min(meeting, key=lambda s: (s.cost_usd, s.days_quantile))
    finite = [s for s in ok if math.isfinite(s.days_quantile)]
    return min(finite, key=lambda s: (s.days_quantile, s.cost_usd)) if finite else None


class Searcher:
    """A search, a batch at a time: :meth:`next_batch` says which setups to simulate next (None when the search
    is over), :meth:`add` takes what they gave (:func:`evaluate`), :meth:`result` what was found so far. The command
    line's :func:`optimize` drives it in its own process; the window sends each batch to a compute process and
    shows the front as it grows (and, stopped, the best so far)."""

    def __init__(
        self,
        base: Scenario,
        vary: Sequence[Vary],
        deadline_days: float,
        quantile: float,
        budget_usd: float | None = None,
        *,
        points: int = 5,
        rounds: int = 2,
    ) -> None:
        if base.training is None:
            raise OptimizeError(
                "optimize needs a training run: give its compute (--train-flops, --mfu or --compute-gpu-hours) or a "
                "scenario with a training section"
            )
        if not (math.isfinite(deadline_days) and deadline_days > 0):
            raise OptimizeError(f"--deadline-days: must be a number above 0 (got {deadline_days:g})")
        if not 0.0 < quantile < 1.0:
            raise OptimizeError(f"--quantile: must be above 0 and below 1, e.g. 0.9 (got {quantile:g})")
        if budget_usd is not None and not (math.isfinite(budget_usd) and budget_usd > 0):
            raise OptimizeError(f"--budget: must be a number of dollars above 0 (got {budget_usd:g})")
        if not vary:
            raise OptimizeError("name at least one input to vary (--vary INPUT=V1,V2,... or --range INPUT=LO:HI)")
        if not 2 <= points <= 50:
            raise OptimizeError(f"--points: must be from 2 to 50 (got {points})")
        self.base, self.vary, self.points, self.rounds = base, tuple(vary), points, rounds
        self.goal = (deadline_days, quantile, budget_usd)
        self.inputs = _inputs(scenario_to_dict(base), vary, points)
        self.ranged = [k for k, v in enumerate(vary) if v.values is None]
        self.grids = list(self.inputs)  # each range input's latest grid
        first = setups_of(self.inputs)
        if len(first) > MAX_SETUPS:
            raise OptimizeError(
                f"{len(first):,} setups to simulate, over the limit of {MAX_SETUPS:,}: give fewer values, or run the "
                "search as a study (--as-study) and pick from its results"
            )
        self.planned = len(first) + (rounds * points ** len(self.ranged) if self.ranged else 0)
        self.seen: dict[tuple[Any, ...], Setup] = {}
        self._queue: list[tuple[Any, ...]] = first
        self._round = 0

    def next_batch(self, size: int = BATCH) -> list[tuple[Any, ...]] | None:
        """The next setups to simulate (up to ``size``), or None when the search is over."""
        self._queue = [v for v in self._queue if v not in self.seen]
        while not self._queue:
            if not self.ranged or self._round >= self.rounds:
                return None
            best = _best(list(self.seen.values()), self.goal[0])
            if best is None:
                return None
            self._round += 1
            self.grids = _refine(self.grids, self.ranged, best, self.points)
            self._queue = [v for v in setups_of(self.grids) if v not in self.seen]
        return self._queue[:size]

    def add(self, batch: Sequence[tuple[Any, ...]], setups: Sequence[Setup]) -> None:
        for values, s in zip(batch, setups):
            self.seen[tuple(values)] = s

    @property
    def fraction(self) -> float:
        return min(1.0, len(self.seen) / max(self.planned, 1))

    def result(self, stopped: bool = False) -> Search:
        """What the search has found (so far, when ``stopped``)."""
        setups = tuple(self.seen.values())
        chosen = _best(setups, self.goal[0])
        meeting = sorted(
            (s for s in setups if s.meets and s is not chosen), key=lambda s: (s.cost_usd, s.days_quantile)
        )
        deadline, q, budget = self.goal
        return Search(
            deadline,
            q,
            budget,
            chosen,
            pareto_front(setups),
            tuple(meeting[:RUNNERS_UP]) if chosen is not None and chosen.meets else (),
            setups,
            len(setups),
            stopped,
            self._edges(chosen),
        )

    def _edges(self, chosen: Setup | None) -> tuple[str, ...]:
        """The numeric inputs whose chosen value is the least or the most they were given."""
        if chosen is None:
            return ()
        out = []
        for v, inp in zip(self.vary, self.inputs):
            got = chosen.inputs.get(inp.name)
            if isinstance(got, bool) or not isinstance(got, (int, float)):
                continue
            given = [x for x in (v.values or (v.lo, v.hi)) if isinstance(x, (int, float)) and not isinstance(x, bool)]
            if len(set(given)) >= 2 and (got <= min(given) or got >= max(given)):
                out.append(inp.name)
        return tuple(out)


def optimize(
    base: Scenario,
    vary: Sequence[Vary],
    deadline_days: float,
    quantile: float,
    budget_usd: float | None = None,
    *,
    points: int = 5,
    rounds: int = 2,
    progress: Progress = None,
    should_stop: StopCheck = None,
) -> Search:
    """Search the setups of ``vary`` on ``base`` for the cheapest whose time to train at ``quantile`` is at most
    ``deadline_days`` (see the module's docstring). A stop (``should_stop``, or Ctrl-C) ends the search with what
    it has found so far (``stopped``). OptimizeError for a search that cannot run as asked."""
    from ..sim.engine import Cancelled

    s = Searcher(base, vary, deadline_days, quantile, budget_usd, points=points, rounds=rounds)
    try:
        while (batch := s.next_batch()) is not None:
            if should_stop is not None and should_stop():
                raise Cancelled()
            s.add(batch, evaluate(base, vary, s.goal, batch, points, should_stop))
            if progress is not None:
                progress(s.fraction)
    except (Cancelled, KeyboardInterrupt):
        return s.result(stopped=True)
    return s.result()


def _refine(grids: Sequence[Input], ranged: Sequence[int], best: Setup, points: int) -> list[Input]:
    """The grids of a finer round around ``best``: each range input at ``points`` values between the best value's
    neighbours on its last grid (that grid's end at an edge), each list input at the best setup's value alone."""
    out: list[Input] = []
    for k, inp in enumerate(grids):
        v = best.inputs[inp.name]
        if k not in ranged:
            out.append(dataclasses.replace(inp, levels=(v,)))
            continue
        values = sorted(set(inp.grid_values()))
        i = min(range(len(values)), key=lambda j: abs(values[j] - v))
        lo, hi = values[max(i - 1, 0)], values[min(i + 1, len(values) - 1)]
        if lo == hi:
            out.append(dataclasses.replace(inp, levels=(v,)))
        else:
            out.append(dataclasses.replace(inp, levels=None, lo=float(lo), hi=float(hi), points=points))
    return out


def as_study(base: Scenario, vary: Sequence[Vary], quantile: float, points: int, name: str) -> tuple[str, str]:
    """The search as a study file (TOML) and its base scenario file (JSON), to run large searches on the local
    cores or a Dask cluster (``planner-gui study``): the same setups as the search's first grid (a range at
    ``points`` values), each from the scenario's seed (``vary.seed`` of one value: common random numbers), at its
    trials; :func:`summary_flags` then picks what :func:`optimize` chooses from that grid. The base file is named
    ``name``. OptimizeError where the study's results lack the quantile's column."""
    from ..analysis.training import DAYS_PERCENTILES

    percent = round(100 * quantile)
    if base.training is None:
        raise OptimizeError("optimize needs a training run (see --train-flops, --mfu, --compute-gpu-hours)")
    if abs(100 * quantile - percent) > 1e-9 or percent not in DAYS_PERCENTILES:
        shown = ", ".join(f"{p / 100:g}" for p in DAYS_PERCENTILES)
        raise OptimizeError(
            f"--as-study: a study's results give the time to train at the quantiles {shown}; "
            f"--quantile {quantile:g} is not one (run the search here instead)"
        )
    base_doc = scenario_to_dict(base)
    _inputs(base_doc, vary, points)  # (the same checks as the search)
    lines = [
        "# A goal-seek search as a study: run it with planner-gui study (add --scheduler tcp://HOST:PORT for a Dask",
        "# cluster), then pick the cheapest setup that meets the deadline with planner-gui study --summary.",
        "[study]",
        f"name = {json.dumps('search of ' + base.name[:150])}",
        f"scenario = {json.dumps(name)}",
        'design = "grid"',
        f"trials = {base.trials}",
        "",
        "[vary]",
        f"seed = [{base.seed}]  # every setup from the scenario's seed: common random numbers",
    ]
    for v in vary:
        key = json.dumps(v.key)
        if v.values is not None:
            lines.append(f"{key} = {json.dumps(list(v.values))}")
        else:
            scale = "log" if v.log else "linear"
            lines.append(f'{key} = {{ min = {v.lo!r}, max = {v.hi!r}, scale = "{scale}", points = {points} }}')
    return "\n".join(lines) + "\n", json.dumps(base_doc, indent=2) + "\n"


def summary_flags(deadline_days: float, quantile: float, budget_usd: float | None) -> list[str]:
    """The flags of ``planner-gui study --summary`` that pick the cheapest setup meeting the goal."""
    where = [f"time_to_train.days.p{round(100 * quantile):02d}<={deadline_days!r}"]
    if budget_usd is not None:
        where.append(f"total_cost_usd<={budget_usd!r}")
    flags = []
    for w in where:
        flags += ["--where", w]
    return [*flags, "--least", "total_cost_usd"]
