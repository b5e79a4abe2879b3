"""A slow, readable, event-by-event simulator of the model with rates that vary: the reference the
vectorized engine is checked against (``tests/test_rates.py``).

It is written from the model's words (docs/how-it-works.md, "The model"), not from the engine:

* the trial first draws its components' rates when the rates are uncertain: a component with evidence
  ``count`` over ``exposure`` GPU-hours has the posterior Gamma(shape ``count + 1/2``, rate ``exposure``),
  scaled by the component's rate over ``count / exposure``;
* unplanned interruptions arrive as a Poisson process whose rate is the job's rate times the profile's
  multiplier in force (the first piece's before the window, the last one's after it); planned ones at a
  constant rate. Each unplanned interruption's cause is a component, in proportion to its rate;
* the job computes ``tau`` hours, then writes a checkpoint for ``c`` hours, and repeats; an unplanned
  interruption loses what was computed and written since the last completed checkpoint and costs
  ``R`` hours of downtime; a planned one drains the job first (nothing is lost) and costs ``r`` hours;
  an interruption during a downtime starts a new downtime of its own kind;
* the window ``[0, T)`` is a snapshot of a long job: the simulation starts long before it (40 mean gaps
  at the first piece's rate: the first interruption there makes the state that of the steady state,
  and there is one with probability 1 - 4e-18) and runs until the first interruption after the window,
  which decides whether the work running at its end is kept.

Each hour of the window is then counted as useful (computed and never rolled back), checkpoint (a write
never rolled back), lost, recovery (downtime after an unplanned interruption) or planned restart.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Model:
    """The inputs in hours and per hour. ``rates`` are the components' unplanned rates per GPU-hour and
    ``evidence`` their (count, exposure) or None; ``profile`` is a list of (start hour, multiplier), the
    first at hour 0."""

    gpus: int
    rates: tuple[float, ...]
    evidence: tuple[tuple[int, float] | None, ...]
    uncertain: bool
    profile: tuple[tuple[float, float], ...]
    mu: float
    hours: float
    tau: float
    c: float
    r_unplanned: float
    r_planned: float


def trial_rates(model: Model, rng: np.random.Generator) -> list[float]:
    """The components' rates per GPU-hour in one trial: drawn from their posteriors when uncertain."""
    if not model.uncertain:
        return list(model.rates)
    rates = []
    for rate, evidence in zip(model.rates, model.evidence):
        if evidence is None:
            rates.append(rate)
            continue
        count, exposure = evidence
        if count > 0:
            posterior_draw = rng.gamma(count + 0.5, 1.0 / exposure)  # numpy's (shape, scale)
            rates.append(posterior_draw * rate / (count / exposure))
        elif rate == 0:
            rates.append(rng.gamma(0.5, 1.0 / exposure))
        else:
            rates.append(rate)
    return rates


def multiplier_at(model: Model, t: float) -> float:
    """The profile's multiplier at hour ``t`` (the first piece's before 0)."""
    current = model.profile[0][1]
    for start, m in model.profile:
        if start <= t:
            current = m
    return current


def next_unplanned(model: Model, rate: float, t: float, rng: np.random.Generator) -> float:
    """The first unplanned interruption after ``t``: exponential waits, started afresh at each change of
    the profile (the process forgets its past)."""
    changes = sorted(start for start, _ in model.profile if start > t)
    while True:
        job_rate = rate * multiplier_at(model, t)
        wait = rng.exponential(1.0 / job_rate) if job_rate > 0 else math.inf
        if not changes or t + wait < changes[0]:
            return t + wait
        t = changes.pop(0)


def interruptions(model: Model, rate: float, rng: np.random.Generator) -> list[tuple[float, str]]:
    """Every interruption from the warm-up's start to the first one after the window, in time order."""
    start_rate = rate * model.profile[0][1] + model.mu
    t = -40.0 / start_rate
    out = [(t, "start")]
    next_u = next_unplanned(model, rate, t, rng)
    next_p = t + (rng.exponential(1.0 / model.mu) if model.mu > 0 else math.inf)
    while out[-1][0] < model.hours:
        if next_u < next_p:
            out.append((next_u, "unplanned"))
            next_u = next_unplanned(model, rate, next_u, rng)
        elif next_p < math.inf:
            out.append((next_p, "planned"))
            next_p += rng.exponential(1.0 / model.mu)
        else:  # no interruption ever again: the work running at the window's end completes
            out.append((math.inf, "none"))
    return out


def _add(hours: dict[str, float], kind: str, a: float, b: float, window: float) -> None:
    """Add the part of ``[a, b)`` inside the window ``[0, window)`` to ``hours[kind]``."""
    hours[kind] += max(0.0, min(b, window) - max(a, 0.0))


def gap_hours(model: Model, hours: dict[str, float], start: float, end: float, opened: str, closed: str) -> None:
    """The hours of the window in one gap between interruptions, from ``start`` (an interruption of kind
    ``opened``; "start" for the warm-up's start, which has no downtime) to ``end`` (of kind ``closed``)."""
    down = {"unplanned": model.r_unplanned, "planned": model.r_planned, "start": 0.0}[opened]
    kind = "planned_restart" if opened == "planned" else "recovery"
    _add(hours, kind, start, min(start + down, end), model.hours)
    s = model.tau + model.c
    cycle = start + down
    if cycle < 0:  # cycles wholly before the window count for nothing: start at the first one that may not
        cycle += math.floor(-cycle / s) * s
    while cycle < end and cycle < model.hours:
        compute_end, write_end = cycle + model.tau, cycle + s
        if write_end <= end or closed == "planned":  # completed, or drained before a planned interruption
            _add(hours, "useful", cycle, min(compute_end, end), model.hours)
            _add(hours, "checkpoint", compute_end, min(write_end, end), model.hours)
        else:  # an unplanned interruption before the checkpoint completes: all of it is lost
            _add(hours, "lost", cycle, end, model.hours)
        cycle = write_end


def simulate_trial(model: Model, rng: np.random.Generator) -> dict[str, float]:
    """One trial: the window's hours of each kind, its interruptions of each kind and per component, and
    the trial's total unplanned rate per GPU-hour."""
    rates = trial_rates(model, rng)
    total = math.fsum(rates)
    events = interruptions(model, total * model.gpus, rng)
    hours = dict.fromkeys(("useful", "checkpoint", "lost", "recovery", "planned_restart"), 0.0)
    for (start, opened), (end, closed) in itertools.pairwise(events):
        gap_hours(model, hours, start, end, opened, closed)
    inside = [kind for t, kind in events if 0.0 <= t < model.hours]
    unplanned = inside.count("unplanned")
    causes = rng.multinomial(unplanned, np.array(rates) / total) if total > 0 else np.zeros(len(rates))
    return {
        **hours,
        "unplanned": float(unplanned),
        "planned": float(inside.count("planned")),
        "rate": total,
        **{f"component{i}": float(n) for i, n in enumerate(causes)},
    }


def simulate(model: Model, trials: int, seed: int) -> dict[str, np.ndarray]:
    """``trials`` independent trials: each quantity as an array over trials."""
    rng = np.random.default_rng(seed)
    rows = [simulate_trial(model, rng) for _ in range(trials)]
    return {k: np.array([row[k] for row in rows]) for k in rows[0]}
