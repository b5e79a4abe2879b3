"""Time to train: when the model finishes, and what it costs.

Goodput is the means; the answer is the day the run ends. The run needs ``W = gpu_hours / gpus``
hours of pure compute from every GPU (:attr:`.scenario.Training.gpu_hours`). It starts at time 0,
computing from scratch, and follows the model of :mod:`.exact`: interruptions of both kinds arrive as
Poisson processes at any time; an unplanned one loses the work since the last completed checkpoint
and costs detection + restart, a planned one drains the job (nothing lost) and costs the restart; an
interruption during a downtime starts a new downtime of its own kind; the job computes ``tau``, then
writes for ``c``, and the pattern restarts after every interruption. The run ends at the first moment
its progress (work kept + work since the last checkpoint) reaches ``W``: the first passage ``T_W``.

How the Monte Carlo works
-------------------------
Per trial, the spacings between interruptions are independent ``Exp(lam + mu)``; each ends at a
planned interruption with probability ``mu / (lam + mu)``, independently. Both come from one call to
the generator per block: two competing exponential clocks, ``Exp(lam)`` and ``Exp(mu)``, of which the
earlier one ends the spacing and says its kind. A spacing opens with the downtime of the interruption
that started it (none for the first: the run starts computing at time 0), and the compute after the
downtime runs whole cycles of ``s = tau + c`` and part of one more. So, per spacing, whole-array
operations give the most progress it reaches (``reach``: kept work + compute since the last checkpoint,
just before it ends) and the work it keeps (``kept``: whole cycles, plus the unfinished cycle's compute
when a planned interruption drains it). Cumulative sums give the work kept before each spacing; the
spacing in which ``W`` is reached is the first whose ``kept before + reach >= W`` (one ``argmax`` along
each row), and the time inside it is exact: its downtime, the work still missing ``w``, and the
``ceil(w / tau) - 1`` writes passed on the way. Trials that have not finished at the end of a block
carry their kept work, elapsed time and next downtime into another block, drawn for them alone, until
every trial has finished (nothing is capped). Trials are processed in chunks, so memory stays bounded.

Expected time from the exact goodput
------------------------------------
Times from one start of computing to the next (time 0, and the end of every downtime) form a
renewal-reward process whose long-run rate of kept work is the goodput ``g`` of
:func:`.exact.time_fractions`, so ``E[T_W] = W / g + C(W)`` with ``C`` of the order of one cycle. With
unplanned interruptions only it is exactly ``C(W) = e^(lam R) / lam (e^(lam w) - 1 - (w / tau)
(e^(lam s) - 1))``, ``w = W - tau (ceil(W / tau) - 1)`` the last piece of work, and by convexity
``-tau / g <= C(W) <= 0``: the run never writes its last checkpoint and ends before its last piece costs
a whole interval. With planned interruptions too, the renewal equation (solved in
``tests/reference_training.py``) keeps ``C`` in the same bounds. So ``W / g`` (:func:`expected_hours`)
overstates the expectation by at most ``tau / g``, the time one checkpoint interval of work takes at the
goodput.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..files.scenario_io import ScenarioError
from ..model.scenario import Scenario
from ..model.specs import MAX_TOTAL_EVENTS
from ..sim.engine import Cancelled
from ..theory.exact import time_fractions
from ..theory.params import Params, resolve
from ..util.streams import stream

__all__ = [
    "MAX_SPACINGS",
    "SECONDS_PER_SPACING",
    "STREAM_TRAINING",
    "CostCurve",
    "TimeToTrain",
    "check_training_size",
    "cost_curve",
    "expected_hours",
    "first_passage_hours",
    "simulate_time_to_train",
    "training_events",
    "work_hours",
]

#: The random stream of the time to train (the engine's streams, in :mod:`.rows`, are 1 to 5).
STREAM_TRAINING = 6
#: Spacings held at once per block of trials (each array of a block is this many float64s at most).
BLOCK_ELEMENTS = 1 << 18
#: Seconds per simulated spacing on the reference machine (2 shared cores; 40 ms for the 808,000
#: spacings of Llama 3's compute on 100,000 GPUs x 1,000 trials), for time estimates.
SECONDS_PER_SPACING = 5e-8
#: The most spacings a time to train may draw, summed over its trials: as long as the engine's largest
#: run (:data:`.specs.MAX_TOTAL_EVENTS` at about 9.5 ns each), about 40 s.
MAX_SPACINGS = MAX_TOTAL_EVENTS // 5

Progress = Callable[[float], None] | None
StopCheck = Callable[[], bool] | None


@dataclass(frozen=True)
class TimeToTrain:
    """The simulated time to train of one scenario, per trial, beside its expectation from the goodput."""

    work_hours: float  # W: hours of pure compute each GPU must do (the time at 100 % goodput)
    gpus: int
    hours: np.ndarray  # per trial: the first passage T_W, hours of wall-clock time
    expected_hours: float | None  # W / g, with g the exact goodput (None: the model has no closed form)

    @property
    def compute_gpu_hours(self) -> float:
        """GPU-hours of pure compute (what 100 % goodput would use)."""
        return self.work_hours * self.gpus

    def gpu_hours(self) -> np.ndarray:
        """GPU-hours used per trial: every GPU is held for the whole run."""
        out: np.ndarray = self.hours * self.gpus
        return out

    def to_json_dict(self, price_usd: float) -> dict[str, Any]:
        """The ``time_to_train`` part of the JSON report, at ``price_usd`` per GPU-hour."""
        days = self.hours / 24.0
        quantiles = np.percentile(days, DAYS_PERCENTILES)
        used = float(self.gpu_hours().mean())
        return {
            "ideal_days": self.work_hours / 24.0,
            "days": {"mean": float(days.mean())} | {f"p{p:02d}": float(v) for p, v in zip(DAYS_PERCENTILES, quantiles)},
            "gpu_hours": used,
            "cost_usd": used * price_usd,
            "lost_cost_usd": (used - self.compute_gpu_hours) * price_usd,
        }


#: The percentiles of the time to train the JSON report gives (and a study's results: a deadline met by nine runs
#: in ten is ``p90``).
DAYS_PERCENTILES = (5, 10, 25, 50, 75, 90, 95)


def work_hours(scenario: Scenario) -> float:
    """``W``: hours of pure compute each GPU must do; the scenario must have a training section."""
    if scenario.training is None:
        raise ValueError("the scenario has no training section")
    return scenario.training.gpu_hours / scenario.gpus


def _goodput(p: Params) -> float:
    f = time_fractions(*p.fraction_args)
    return float(f.useful)


def _cycle_hours(p: Params) -> float:
    """Mean time from one start of computing to the next: ``1 / (Lambda S)`` (inf without interruptions)."""
    big = p.lam + p.mu
    if big == 0:
        return math.inf
    survive = (p.lam * math.exp(-big * p.r_unplanned) + p.mu * math.exp(-big * p.r_planned)) / big
    return math.inf if survive == 0 else 1.0 / (big * survive)


def expected_hours(p: Params, work: float) -> float:
    """``W / g``: the expected time to train from the exact goodput (inf when the goodput is 0).

    The exact expectation differs from it by at most about one renewal cycle (see the module docstring).
    """
    g = _goodput(p)
    return math.inf if g <= 0 else work / g


def _no_interruption_hours(p: Params, work: np.ndarray) -> np.ndarray:
    """Time to do ``work`` without an interruption: the work and the ``ceil(work / tau) - 1`` writes on the way."""
    out: np.ndarray = work + np.maximum(np.ceil(work / p.tau) - 1.0, 0.0) * p.c
    return out


def _straight_hours(p: Params, work: float) -> float:
    """:func:`_no_interruption_hours` of one amount of work."""
    return float(_no_interruption_hours(p, np.array(work)))


def training_events(p: Params, work: float, trials: int) -> float:
    """Spacings the Monte Carlo is expected to draw: ``trials x Lambda x E[T_W]`` (inf if it never ends)."""
    big = p.lam + p.mu
    if big == 0:
        return 0.0
    mean = expected_hours(p, work) + min(_cycle_hours(p), _straight_hours(p, work))
    return trials * (big * mean + 1.0)


def check_training_size(scenario: Scenario, p: Params | None = None) -> None:
    """Refuse, in one line, a time to train that never ends or would take too long to simulate."""
    if scenario.training is None:
        return
    from ..sim.capabilities import train_engine

    if train_engine(scenario).key == "general":  # checked from the window's goodput once it has run
        return
    p = p if p is not None else resolve(scenario)[0]
    events = training_events(p, work_hours(scenario), scenario.trials)
    if not math.isfinite(events):
        raise ScenarioError(
            "training: the run would never finish: its goodput is 0 at these inputs (interruptions come faster "
            "than the job recovers)"
        )
    if events > MAX_SPACINGS:
        raise ScenarioError(
            f"training: about {events:.3g} interruptions to simulate for the time to train "
            f"({events / max(scenario.trials, 1):.3g} a trial), over the limit of {MAX_SPACINGS:.3g}; use fewer "
            "trials or less compute, or inputs where the job progresses faster (at low goodput it barely moves)"
        )


# -- the Monte Carlo ----------------------------------------------------------------------------------


def _block_length(p: Params, need: float) -> int:
    """Spacings to draw for a trial that still needs ``need`` hours of work: its expected count and a
    margin of four standard deviations (as if Poisson), so nearly every trial finishes in one block."""
    mean = (p.lam + p.mu) * (expected_hours(p, need) + min(_cycle_hours(p), _straight_hours(p, need)))
    return math.ceil(mean + 4.0 * math.sqrt(mean) + 8.0) if math.isfinite(mean) else BLOCK_ELEMENTS


def _spacings(rng: np.random.Generator, p: Params, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Spacings between interruptions (hours) and whether each ends at a planned one, from one call.

    Two competing clocks, ``Exp(lam)`` to the next unplanned and ``Exp(mu)`` to the next planned
    interruption: the earlier ends the spacing, so it is ``Exp(lam + mu)`` and planned with probability
    ``mu / (lam + mu)``, independently of its length.
    """
    # A rate near 0 (as low as 5e-324) overflows a spacing to inf: an interruption that never comes, which
    # the rest of the pass takes as such.
    with np.errstate(over="ignore"):
        if p.mu == 0 or p.lam == 0:
            y = rng.standard_exponential(shape)
            y /= p.lam + p.mu
            return y, np.full(shape, p.lam == 0)
        e = rng.standard_exponential((2, *shape))
        e[0] /= p.lam
        e[1] /= p.mu
    planned = e[1] < e[0]
    return np.minimum(e[0], e[1], out=e[0]), planned


@dataclass
class _Pending:
    """Per unfinished trial of a chunk, where its next spacing starts."""

    index: np.ndarray  # the trial's position in the chunk
    kept: np.ndarray  # work kept so far, hours
    elapsed: np.ndarray  # wall-clock time so far, hours
    down: np.ndarray  # downtime that opens the next spacing (0 before the first: the run starts computing)


def _progress(
    p: Params, y: np.ndarray, planned: np.ndarray, down0: np.ndarray, need: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per spacing of a block: its opening downtime, the most progress it reaches beyond the work kept
    before it (``reach``), and the work it keeps (``kept``). In place where it can be: this is most of the
    cost after the draw."""
    down = np.empty_like(y)
    down[:, 0] = down0
    np.multiply(planned[:, :-1], p.r_planned - p.r_unplanned, out=down[:, 1:])  # the kind of the one before
    down[:, 1:] += p.r_unplanned
    run = np.subtract(y, down)
    np.maximum(run, 0.0, out=run)
    # A run longer than the whole remaining work without interruption finishes it, whatever its exact
    # length; capping it keeps astronomically long spacings (rates near 0) finite.
    np.minimum(run, (_no_interruption_hours(p, need) + p.tau + p.c)[:, None], out=run)
    s = p.tau + p.c
    whole = np.floor(run / s)  # whole cycles
    partial = whole * s
    np.subtract(run, partial, out=partial)  # compute in the cycle the interruption cuts short
    np.maximum(partial, 0.0, out=partial)
    np.minimum(partial, p.tau, out=partial)
    whole *= p.tau
    reach = np.add(whole, partial, out=run)
    partial *= planned  # a planned interruption drains the cut cycle's compute; an unplanned one loses it
    whole += partial
    return down, reach, whole


def _exclusive_cumsum(a: np.ndarray) -> np.ndarray:
    """Per row, the sum of the entries before each one (0 for the first); never subtracts."""
    out = np.zeros_like(a)
    np.cumsum(a[:, :-1], axis=1, out=out[:, 1:])
    return out


def _block(p: Params, work: float, rng: np.random.Generator, st: _Pending, length: int, out: np.ndarray) -> _Pending:
    """Draw ``length`` spacings for every pending trial, store the finish times of those that finish in
    ``out``, and return the others, moved to the end of the block."""
    n = len(st.index)
    need = work - st.kept
    y, planned = _spacings(rng, p, (n, length))
    down, reach, kept = _progress(p, y, planned, st.down, need)
    kept_before = _exclusive_cumsum(kept)
    hit = kept_before + reach >= need[:, None]
    first = hit.argmax(axis=1)
    rows = np.arange(n)
    done = hit[rows, first]
    r, j = rows[done], first[done]
    time_before = _exclusive_cumsum(y)
    missing = need[r] - kept_before[r, j]  # > 0: no earlier spacing reached W
    out[st.index[r]] = st.elapsed[r] + time_before[r, j] + down[r, j] + _no_interruption_hours(p, missing)
    left = ~done
    return _Pending(
        st.index[left],
        st.kept[left] + kept_before[left, -1] + kept[left, -1],
        st.elapsed[left] + time_before[left, -1] + y[left, -1],
        np.where(planned[left, -1], p.r_planned, p.r_unplanned),
    )


def _chunk(p: Params, work: float, rng: np.random.Generator, trials: int) -> np.ndarray:
    """First-passage times of ``trials`` trials that share one generator: blocks until all have finished."""
    out = np.empty(trials)
    zeros = np.zeros(trials)
    st = _Pending(np.arange(trials), zeros, zeros.copy(), zeros.copy())
    while len(st.index):
        want = _block_length(p, float((work - st.kept).max()))
        length = max(2, min(want, BLOCK_ELEMENTS // len(st.index)))
        st = _block(p, work, rng, st, length, out)
    return out


def first_passage_hours(
    p: Params, work: float, trials: int, seed: int, *, progress: Progress = None, should_stop: StopCheck = None
) -> np.ndarray:
    """Per trial, the wall-clock hours until the job's progress first reaches ``work`` hours.

    Parameters
    ----------
    p
        Rates and times in hours (``p.hours``, the window, is not used).
    work
        ``W``, hours of pure compute (> 0).
    trials, seed
        Trials, and the seed of their random stream (:data:`STREAM_TRAINING`, one generator per chunk).
    progress, should_stop
        Called with the fraction done after each chunk; polled before each (True raises
        :class:`.engine.Cancelled`).

    Returns
    -------
    numpy.ndarray
        ``trials`` first-passage times, hours; every trial has finished (see the module docstring).
    """
    if p.lam + p.mu == 0:  # nothing ever interrupts the run
        return np.full(trials, _straight_hours(p, work))
    per_chunk = max(1, BLOCK_ELEMENTS // _block_length(p, work))
    starts = range(0, trials, per_chunk)
    parts = []
    for i, start in enumerate(starts):
        if should_stop is not None and should_stop():
            raise Cancelled()
        parts.append(_chunk(p, work, stream(seed, STREAM_TRAINING, i), min(per_chunk, trials - start)))
        if progress is not None:
            progress((i + 1) / len(starts))
    return np.concatenate(parts)


def simulate_time_to_train(
    scenario: Scenario, p: Params | None = None, *, progress: Progress = None, should_stop: StopCheck = None
) -> TimeToTrain:
    """The time to train of ``scenario`` (which must have a training section): Monte Carlo and expectation.

    Raises :class:`.scenario_io.ScenarioError` when it cannot be simulated (see :func:`check_training_size`).
    """
    p = p if p is not None else resolve(scenario)[0]
    check_training_size(scenario, p)
    work = work_hours(scenario)
    hours = first_passage_hours(p, work, scenario.trials, scenario.seed, progress=progress, should_stop=should_stop)
    return TimeToTrain(work, scenario.gpus, hours, expected_hours(p, work))


# -- days and cost against GPU count --------------------------------------------------------------------


@dataclass(frozen=True)
class CostCurve:
    """Days and cost of a training run against GPU count: where adding GPUs stops paying.

    ``days`` and ``cost_usd`` are the expectations at every count in ``gpus`` (from the exact goodput, or where
    there is no closed form the simulated time to train: :attr:`expected_from` says which); ``mc`` holds the Monte
    Carlo at a few of them.
    """

    gpus: np.ndarray
    ideal_days: np.ndarray  # at 100 % goodput
    goodput: np.ndarray
    days: np.ndarray  # W / g, in days
    cost_usd: np.ndarray  # GPU-hours used x price
    lost_cost_usd: np.ndarray  # (GPU-hours used - compute GPU-hours) x price
    mc: tuple[TimeToTrain, ...]
    #: What the line (``days``, ``cost_usd``) is, as the plot's note says it, and as its legend names it.
    expected_from: str = "work / exact goodput (renewal theory's leading term)"
    line_name: str = "expected (exact goodput)"

    @property
    def fastest_gpus(self) -> int:
        """The GPU count (of those in ``gpus``) with the fewest expected days: adding GPUs beyond it slows
        the run down."""
        return int(self.gpus[int(np.argmin(self.days))])


def cost_curve(
    scenario: Scenario, gpus: Sequence[int] | np.ndarray, mc_gpus: Sequence[int] = (), mc_trials: int | None = None
) -> CostCurve:
    """Expected days and cost of ``scenario``'s training run at each GPU count, and the Monte Carlo at ``mc_gpus``.

    Each count is the scenario with only ``gpus`` changed (the checkpoint interval follows Daly's optimum
    if the scenario asks for it; a storage section's write grows with the count). The expectations are
    ``W / g`` (fast; see the module docstring for how close); the Monte Carlo uses ``mc_trials`` trials
    (default: the scenario's).
    """
    if scenario.training is None:
        raise ValueError("the scenario has no training section")
    counts = np.asarray(gpus, dtype=np.int64)
    params = [resolve(scenario.replace(gpus=int(n)))[0] for n in counts]
    g = time_fractions(*(np.array(column) for column in zip(*(q.fraction_args for q in params)))).useful
    compute, price = scenario.training.gpu_hours, scenario.gpu_hour_cost_usd
    with np.errstate(divide="ignore"):
        used = compute / g  # GPU-hours used: gpus x W / g, the same compute at any count
    trials = scenario.trials if mc_trials is None else mc_trials
    return CostCurve(
        gpus=counts,
        ideal_days=compute / counts / 24.0,
        goodput=g,
        days=used / counts / 24.0,
        cost_usd=used * price,
        lost_cost_usd=(used - compute) * price,
        mc=tuple(simulate_time_to_train(scenario.replace(gpus=int(n), trials=trials)) for n in mc_gpus),
    )
