"""Independent references for the time to train (planner_gui/core/analysis/training.py), written from the model's
words, not from the vectorized code.

1. :func:`simulate_run`: a slow, readable event-by-event simulator, one event at a time, in pure Python
   with its own random generator (``random.Random``).
2. :func:`renewal_expected_hours`: the exact expectation ``E[T_W]`` from the renewal equation of the
   model, solved numerically (second order in the grid step).
3. Closed forms for special cases: :func:`unplanned_only_expected_hours` and
   :func:`planned_only_expected_hours`.

The model (docs/how-it-works.md "The model"): unplanned interruptions (rate ``lam``) and planned ones (rate ``mu``)
are independent Poisson processes in wall-clock time, whatever the job is doing. The job starts at time
0 computing from scratch; it computes ``tau`` hours, then writes a blocking checkpoint for ``c`` hours,
and repeats. An unplanned interruption loses the work since the last completed checkpoint and the job is
down for ``R`` (detect + restart); a planned one drains the job (the work so far is kept) and it is down
for ``r``. An interruption during a downtime starts a new downtime of its own kind. After every
downtime the pattern restarts: compute ``tau``, then write. The run ends at the first moment its
progress (work kept + work since the last checkpoint) reaches ``W``.
"""

from __future__ import annotations

import math
import random

import numpy as np

INF = math.inf


# -- 1. event by event ------------------------------------------------------------------------------------


def simulate_run(lam, mu, tau, c, r_unplanned, r_planned, work, rng: random.Random) -> float:
    """The wall-clock hours one run takes to make ``work`` hours of progress, simulated event by event."""
    clock = 0.0
    kept = 0.0  # work saved by the last completed checkpoint or planned drain
    next_unplanned = clock + rng.expovariate(lam) if lam > 0 else INF
    next_planned = clock + rng.expovariate(mu) if mu > 0 else INF
    state, length = "compute", min(tau, work)  # the run starts computing at time 0
    started = clock  # when the current state began
    while True:
        ends = started + length
        interruption = min(next_unplanned, next_planned)
        if interruption < ends:  # the state is cut short
            clock = interruption
            if next_unplanned <= next_planned:
                # Unplanned: the work since the last checkpoint (and a write in progress) is lost.
                next_unplanned = clock + rng.expovariate(lam)
                state, length = "down", r_unplanned
            else:
                # Planned: the job is drained first, so what it computed is kept; a write in progress
                # completes the checkpoint's work.
                next_planned = clock + rng.expovariate(mu)
                if state == "compute":
                    kept += clock - started
                elif state == "write":
                    kept += tau
                state, length = "down", r_planned
            started = clock
            continue
        clock = ends  # the state ran to its end
        if state == "compute":
            if kept + length >= work:  # this compute was the last piece of work
                return clock
            state, length = "write", c
        elif state == "write":
            kept += tau
            state, length = "compute", min(tau, work - kept)
        else:  # a downtime ended: the pattern restarts from the work kept
            state, length = "compute", min(tau, work - kept)
        started = clock


def simulate_runs(lam, mu, tau, c, r_unplanned, r_planned, work, trials, seed) -> np.ndarray:
    """:func:`simulate_run` for ``trials`` runs from one seeded generator."""
    rng = random.Random(seed)
    return np.array([simulate_run(lam, mu, tau, c, r_unplanned, r_planned, work, rng) for _ in range(trials)])


# -- 2. the renewal equation --------------------------------------------------------------------------------
#
# Let f(w) be the expected time to make w more hours of progress from a fresh start (computing, at the
# start of a cycle, as at time 0 and after every downtime). Split the run into stages: a stage attempts
# the next segment (compute tau then write c, or the last piece of compute, w <= tau, with no write)
# until the segment completes or a planned interruption drains it; an unplanned interruption makes it
# try the segment again. With Lambda = lam + mu, p = lam / Lambda, q = mu / Lambda, an attempt of length
# l costs on average (1 - e^(-Lambda l)) / (Lambda S): its run up to the interruption, and the downtime
# period after it, whose mean is (1 - S) / (Lambda S) with S = p e^(-Lambda R) + q e^(-Lambda r) (the
# chance that a downtime ends before the next interruption). By Wald's identity the stage costs that
# over the chance an attempt ends the stage. So:
#
#   0 < w <= tau:  (q + p e^(-Lambda w)) f(w) = (1 - e^(-Lambda w)) / (Lambda S)
#                                               + q Lambda int_0^w e^(-Lambda y) f(w - y) dy
#   w > tau:       (q + p e^(-Lambda s)) f(w) = (1 - e^(-Lambda s)) / (Lambda S)
#                                               + (e^(-Lambda s) + q (e^(-Lambda tau) - e^(-Lambda s))) f(w - tau)
#                                               + q Lambda int_0^tau e^(-Lambda y) f(w - y) dy
#
# (a planned interruption at y < tau keeps y of work; one during the write keeps tau). f jumps at every
# multiple of tau (just above k tau one more write is needed), so the grid puts those points on nodes and
# keeps both one-sided values; the trapezoid rule on each smooth piece is second order.


def _stage_constants(lam, mu, c, r_unplanned, r_planned):
    big = lam + mu
    p, q = lam / big, mu / big
    survive = p * math.exp(-big * r_unplanned) + q * math.exp(-big * r_planned)
    return big, p, q, survive


def renewal_expected_hours(lam, mu, tau, c, r_unplanned, r_planned, works, per_tau=200) -> np.ndarray:
    """``E[T_W]`` for each ``W`` in ``works``: the renewal equation above on a grid of ``per_tau`` steps per ``tau``."""
    works = np.atleast_1d(np.asarray(works, dtype=float))
    big, p, q, survive = _stage_constants(lam, mu, c, r_unplanned, r_planned)
    s, h = tau + c, tau / per_tau
    nodes = math.ceil(works.max() / h) + 1
    weights = _panel_weights(big, h, per_tau)
    left = np.zeros(nodes)  # f at each node (the value there)
    right = np.zeros(nodes)  # f just above each node (differs at multiples of tau)
    for i in range(1, nodes):
        if i <= per_tau:  # the last piece of work needs no write
            left[i] = _first_period(big, p, q, survive, i * h, weights, left, right, i)
        else:
            left[i] = _later(big, p, q, survive, tau, s, weights, left, right, i, per_tau, jump=False)
        if i % per_tau == 0:
            right[i] = _later(big, p, q, survive, tau, s, weights, left, right, i, per_tau, jump=True)
        else:
            right[i] = left[i]
    # Between nodes f is smooth: interpolate from the right limit at the node below to the value above
    # (a W on a node takes the value there).
    i = np.clip(np.ceil(works / h).astype(int) - 1, 0, nodes - 2)
    frac = works / h - i
    return right[i] * (1 - frac) + left[i + 1] * frac


def _panel_weights(big, h, m):
    """Weights of int_0^(m h) e^(-Lambda y) f(w - y) dy for f linear on each panel (product integration):
    exact for piecewise-linear f, so they sum to the kernel's integral and the recursion neither grows nor
    damps its errors, whatever Lambda h is. Panel j (y from j h to (j + 1) h) weighs its upper node
    (y = j h) by e^(-Lambda j h) A and its lower node by e^(-Lambda j h) B."""
    z = big * h
    total = h * -math.expm1(-z) / z  # int_0^h e^(-Lambda t) dt
    lower = h * (-math.expm1(-z) - z * math.exp(-z)) / (z * z)  # int_0^h e^(-Lambda t) t / h dt
    kernel = np.exp(-z * np.arange(m))
    return kernel * (total - lower), kernel * lower  # per panel j: (upper node, lower node)


def _window(weights, left, right, i, m, delayed_right):
    """The integral over the ``m`` panels below node ``i``, without node ``i``'s own term (its weight is
    ``weights[0][0]``): each panel from its lower node's right limit to its upper node's value."""
    upper, lower = weights
    lo = i - m
    return (right[lo:i] * lower[m - 1 :: -1]).sum() + (left[lo + 1 : i] * upper[m - 1 : 0 : -1]).sum()


def _first_period(big, p, q, survive, w, weights, left, right, i):
    integral = _window((weights[0][:i], weights[1][:i]), left, right, i, i, False)
    a = q + p * math.exp(-big * w)
    return (-math.expm1(-big * w) / (big * survive) + q * big * integral) / (a - q * big * weights[0][0])


def _later(big, p, q, survive, tau, s, weights, left, right, i, m, jump):
    """f at node ``i`` > tau; with ``jump``, its right limit at a multiple of tau (one more write)."""
    delayed = right[i - m] if jump else left[i - m]
    integral = _window(weights, left, right, i, m, jump)
    a = q + p * math.exp(-big * s)
    b = math.exp(-big * s) + q * (math.exp(-big * tau) - math.exp(-big * s))
    return (-math.expm1(-big * s) / (big * survive) + b * delayed + q * big * integral) / (a - q * big * weights[0][0])


# -- 3. closed forms ----------------------------------------------------------------------------------------


def unplanned_only_expected_hours(lam, tau, c, r_unplanned, work) -> float:
    """``E[T_W]`` with unplanned interruptions only (``mu = 0``), exactly.

    The run is ``n = ceil(W / tau) - 1`` segments of ``s = tau + c`` and a last piece ``w = W - n tau``,
    each retried from its start until it runs through without an interruption. A segment of length ``l``
    takes ``(e^(lam l) - 1) e^(lam R) / lam`` on average: ``e^(lam l) - 1`` failed attempts, each its run
    and a downtime period of mean ``(e^(lam R) - 1) / lam``, plus the successful one.
    """
    n = math.ceil(work / tau) - 1
    last = work - n * tau
    return math.exp(lam * r_unplanned) / lam * (n * math.expm1(lam * (tau + c)) + math.expm1(lam * last))


def planned_only_expected_hours(mu, tau, c, r_planned, work) -> float:
    """``E[T_W]`` with planned interruptions only (``lam = 0``), for ``W <= 2 tau``, exactly.

    Nothing is lost, so the run is active (computing or writing) for ``A = W + (time writing)`` and down
    after each of the ``mu E[A]`` interruptions that hit it, for a downtime period of mean
    ``(e^(mu r) - 1) / mu``: ``E[T] = e^(mu r) E[A]``. On the axis of progress, planned interruptions are
    a Poisson process of rate ``mu``, and each restarts the pattern; a write starts when ``tau`` of
    compute passes without one, at a progress level ``x + tau`` below ``W`` where ``x`` is 0 or an
    interruption's level. For ``W <= 2 tau`` at most one write can start; its expected number is
    ``e^(-mu tau) (1 + mu (W - tau))`` (the start at 0 and the ``mu (W - tau)`` interruptions expected
    below ``W - tau``, each followed by ``tau`` free of them). A write lasts ``min(c, Exp(mu))``:
    on average ``(1 - e^(-mu c)) / mu``.
    """
    if work > 2 * tau:
        raise ValueError("the closed form holds for W <= 2 tau")
    writes = 0.0 if work <= tau else math.exp(-mu * tau) * (1.0 + mu * (work - tau))
    active = work + writes * -math.expm1(-mu * c) / mu
    return math.exp(mu * r_planned) * active
