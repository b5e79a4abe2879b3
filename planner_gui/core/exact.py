"""Closed-form expectations for the checkpoint/restart model.

The model (also simulated by :mod:`.engine`):

* unplanned interruptions arrive as a Poisson process of rate ``lam`` per hour
  of wall-clock time, whatever the job is doing (computing, writing a
  checkpoint, detecting or restarting);
* planned interruptions arrive as an independent Poisson process of rate ``mu``;
  the job is drained first, so a planned one loses no work;
* after an unplanned interruption the job is down for ``R`` = detect + restart
  hours, after a planned one for ``r`` = restart hours; any interruption during a
  downtime starts a new downtime of its own kind;
* while running, the job computes ``tau`` hours, then writes a blocking
  checkpoint for ``C`` hours, and repeats; an unplanned interruption loses the
  work since the last completed checkpoint.

Every interruption starts the process afresh, so renewal-reward theory gives
exact long-run fractions of time. With ``mu = 0`` the goodput is Daly's (2006)
exact expression ``tau / (M e^(R/M) (e^((tau + C)/M) - 1))`` with ``M = 1/lam``.
All functions broadcast over numpy arrays; times are in hours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "TimeFractions",
    "time_fractions",
    "daly_goodput",
    "young_interval",
    "daly_interval",
    "exact_optimal_interval",
]


@dataclass(frozen=True)
class TimeFractions:
    """Expected fractions of wall-clock time (each an array broadcast from the inputs)."""

    useful: np.ndarray
    checkpoint: np.ndarray
    lost_work: np.ndarray
    recovery: np.ndarray
    planned: np.ndarray

    @property
    def goodput(self) -> np.ndarray:
        return self.useful


def _tail_means(big_lambda: np.ndarray, tau: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E[min(Z, tau)] and E[max(Z - tau, 0)] for Z, the exponential remainder modulo s.

    Z has density Lambda e^(-Lambda z) / (1 - e^(-Lambda s)) on [0, s).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        denom = -np.expm1(-big_lambda * s)
        e_s = np.exp(-big_lambda * s)
        compute = (-np.expm1(-big_lambda * tau) / big_lambda - tau * e_s) / denom
        write = ((np.exp(-big_lambda * tau) - e_s) / big_lambda - (s - tau) * e_s) / denom
        # Lambda -> 0: Z is uniform on [0, s).
        uniform_compute = tau * (s - tau / 2) / s
        uniform_write = (s - tau) ** 2 / (2 * s)
        small = big_lambda * s < 1e-9
        compute = np.where(small, uniform_compute, compute)
        write = np.where(small, uniform_write, write)
    return compute, write


def time_fractions(
    lam: ArrayLike, mu: ArrayLike, tau: ArrayLike, c: ArrayLike, r_unplanned: ArrayLike, r_planned: ArrayLike
) -> TimeFractions:
    """Exact long-run fractions of time for the model in the module docstring.

    Parameters
    ----------
    lam, mu
        Unplanned and planned interruption rates per hour (>= 0).
    tau
        Compute time between checkpoints, hours (> 0).
    c
        Blocking checkpoint write time, hours (>= 0).
    r_unplanned, r_planned
        Downtime after an unplanned (detect + restart) and a planned (restart) interruption, hours.
    """
    lam, mu, tau, c, ru, rp = (np.asarray(x, dtype=float) for x in (lam, mu, tau, c, r_unplanned, r_planned))
    big = lam + mu
    s = tau + c
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p_unplanned = np.where(big > 0, lam / np.where(big > 0, big, 1.0), 0.0)
        p_planned = 1.0 - p_unplanned
        # Probability that an interval survives its downtime, by the kind that started it.
        survive = p_unplanned * np.exp(-big * ru) + p_planned * np.exp(-big * rp)
        segments = 1.0 / np.expm1(big * s)  # E[complete segments after the downtime]
        tail_compute, tail_write = _tail_means(big, tau, s)
        end_planned = np.where(big > 0, mu / np.where(big > 0, big, 1.0), 0.0)
        useful = big * survive * (tau * segments + end_planned * tail_compute)
        checkpoint = big * survive * (c * segments + end_planned * tail_write)
        recovery = p_unplanned * -np.expm1(-big * ru)
        planned = p_planned * -np.expm1(-big * rp)
    no_events = big == 0
    useful = np.where(no_events, tau / s, useful)
    checkpoint = np.where(no_events, c / s, checkpoint)
    recovery = np.where(no_events, 0.0, recovery)
    planned = np.where(no_events, 0.0, planned)
    lost = np.clip(1.0 - useful - checkpoint - recovery - planned, 0.0, 1.0)
    return TimeFractions(useful, checkpoint, lost, recovery, planned)


def daly_goodput(tau: ArrayLike, c: ArrayLike, r: ArrayLike, m: ArrayLike) -> np.ndarray:
    """Daly's exact efficiency ``tau / (M e^(R/M) (e^((tau + C)/M) - 1))`` (no planned interruptions)."""
    tau, c, r, m = (np.asarray(x, dtype=float) for x in (tau, c, r, m))
    with np.errstate(over="ignore", divide="ignore"):
        return np.where(np.isinf(m), tau / (tau + c), tau / (m * np.exp(r / m) * np.expm1((tau + c) / m)))


def young_interval(c: ArrayLike, m: ArrayLike) -> np.ndarray:
    """Young (1974): ``sqrt(2 C M)``."""
    return np.sqrt(2.0 * np.asarray(c, dtype=float) * np.asarray(m, dtype=float))


def daly_interval(c: ArrayLike, m: ArrayLike) -> np.ndarray:
    """Daly (2006) higher-order optimum; ``M`` when ``C >= 2M``."""
    c, m = np.asarray(c, dtype=float), np.asarray(m, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = c / (2.0 * m)
        tau = np.sqrt(2.0 * c * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - c
    return np.where(c < 2.0 * m, tau, m)


def exact_optimal_interval(
    lam: float, mu: float, c: float, r_unplanned: float, r_planned: float, bounds: tuple[float, float]
) -> float:
    """The interval (hours) that maximises the exact goodput, searched within ``bounds``.

    Goodput is unimodal in ``tau``: a grid on ``log(tau)`` brackets the maximum, and the grid is
    refined around it (each round one vectorised evaluation) until the bracket is under 1e-9 wide,
    i.e. a relative precision of 1e-9 in ``tau``. (Written out rather than taken from scipy.optimize,
    which would add 35 MB to the standalone bundle.)
    """
    lo, hi = float(np.log(bounds[0])), float(np.log(bounds[1]))
    while True:
        grid = np.linspace(lo, hi, 81)
        g = time_fractions(lam, mu, np.exp(grid), c, r_unplanned, r_planned).useful
        i = int(np.argmax(g))
        lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
        if hi - lo < 1e-9:
            return float(np.exp(grid[i]))
