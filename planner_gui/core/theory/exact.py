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

Precision
---------
Rates span hundreds of decades (a rate of 1e-300 per hour is a valid input), so
no expression here subtracts nearly equal numbers: every quantity is written in
``x = Lambda (tau + C)``, the expected interruptions per checkpoint cycle, with
``x / expm1(x)`` and ``(expm1(y) - y) / y**2`` (a series near 0) in place of
differences of exponentials, and a second form, free of cancellation there, where
the argument is large. Each fraction is accurate to about 1e-13 relative (tested
against a high-precision evaluation of the textbook forms), lies in [0, 1], and
the five add up to 1 without being forced to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "TimeFractions",
    "daly_goodput",
    "daly_interval",
    "exact_optimal_interval",
    "time_fractions",
    "young_interval",
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


#: 1/(k+2)! for k = 9..0: the Taylor series of (e^y - 1 - y)/y^2, to 1e-19 relative for |y| < 0.1.
_E2_SERIES = tuple(1.0 / math.factorial(k + 2) for k in range(9, -1, -1))


def _x_over_expm1(x: np.ndarray) -> np.ndarray:
    """``x / (e^x - 1)``, 1 at ``x = 0``; any sign (it is ``-x`` for very negative ``x``, 0 for huge ``x``).

    Callers silence floating-point warnings: the branch not taken may overflow or divide 0 by 0.
    """
    # Below 1e-8 the next term, x^2/12, is under double precision (and x may be 0 or subnormal).
    return np.where(np.abs(x) < 1e-8, 1.0 - x / 2.0, x / np.expm1(x))


def _e2(y: np.ndarray) -> np.ndarray:
    """``(e^y - 1 - y) / y^2`` (1/2 at 0), for ``|y| <= 1``; callers silence floating-point warnings.

    The direct form loses about ``-log10 |y|`` digits; below ``|y| = 0.1`` the Taylor series is used.
    """
    series = np.full_like(y, _E2_SERIES[0])
    for coef in _E2_SERIES[1:]:  # Horner, in place (np.polynomial's polyval costs more than the sum)
        series *= y
        series += coef
    return np.where(np.abs(y) < 0.1, series, (np.expm1(y) - y) / (y * y))


def _remainder_compute(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``x E[min(V, a)]``: the compute in the remainder of an interval (see :func:`time_fractions`)."""
    y = x * a
    # E[min(V, a)] = a (1 - a e2(-y) x / (1 - e^(-x))), where the subtraction loses nothing for y < 1;
    # for y >= 1, (1 - e^(-y) - y e^(-x)) / (x (1 - e^(-x))) loses under a digit.
    out: np.ndarray = np.where(
        y < 1.0,
        y * (1.0 - a * _e2(-y) * _x_over_expm1(-x)),
        (-np.expm1(-y) - y * np.exp(-x)) / -np.expm1(-x),
    )
    return out


def _remainder_write(x: np.ndarray, a: np.ndarray, b: np.ndarray, rx: np.ndarray) -> np.ndarray:
    """``x E[max(V - a, 0)]``: the write in the remainder of an interval; ``rx = x / expm1(x)``.

    ``b = C / s`` is passed, not computed as ``1 - a``, which has an absolute error of an ulp of 1.
    """
    y, z = x * a, x * b
    # E[max(V - a, 0)] = b^2 e2(z) x / expm1(x) for z < 1 (0, not inf / inf, for huge x);
    # for z >= 1, (e^(-y) - (1 + z) e^(-x)) / (x (1 - e^(-x))) loses under a digit.
    out: np.ndarray = np.where(
        z < 1.0,
        z * b * _e2(z) * rx,
        (np.exp(-y) - (1.0 + z) * np.exp(-x)) / -np.expm1(-x),
    )
    return out


def _remainder_length(x: np.ndarray, rx: np.ndarray) -> np.ndarray:
    """``x E[V]``: the length of the remainder of an interval; ``rx = x / expm1(x)``."""
    # E[V] = 1/x - 1/expm1(x) = e2(x) x / expm1(x) for x < 1; for x >= 1 the difference loses under a digit.
    return np.where(x < 1.0, x * _e2(x) * rx, 1.0 - rx)


@dataclass(frozen=True)
class _Terms:
    """What every fraction is made of (see :func:`time_fractions`)."""

    p: np.ndarray  # lam / Lambda
    q: np.ndarray  # mu / Lambda
    survive: np.ndarray  # S
    x: np.ndarray  # Lambda s
    a: np.ndarray  # tau / s
    b: np.ndarray  # C / s
    rx: np.ndarray  # x / expm1(x)

    #: The share of intervals started by a planned interruption in a failure's downtime (a restore pending)
    pending: np.ndarray | float = 0.0
    #: The chance that a save fails (docs/model.md 2.1): a failure loses the cycles since the last one saved
    save_fail: np.ndarray | float = 0.0

    @classmethod
    def of(
        cls,
        lam: np.ndarray,
        mu: np.ndarray,
        tau: np.ndarray,
        c: np.ndarray,
        ru: np.ndarray,
        rp: np.ndarray,
        rho: np.ndarray | float = 0.0,
        save_fail: np.ndarray | float = 0.0,
    ) -> _Terms:
        big = lam + mu
        s = tau + c
        # Lambda = 0 takes p = 0, q = 1: then S = 1 and the formulas give their limits. (q is not
        # 1 - p, which would lose the digits of a small planned share.)
        some = big > 0
        p = np.where(some, lam / np.where(some, big, 1.0), 0.0)
        q = np.where(some, mu / np.where(some, big, 1.0), 1.0)
        # Probability that an interval survives its downtime, by the kind that started it: a failure (R), a
        # planned interruption in a failure's downtime, which keeps the pending restore (r + rho; docs/model.md
        # 2.4), or one with no restore pending (r). The second's share solves pi = q (p (1 - e^(-Lambda R)) +
        # pi (1 - e^(-Lambda (r + rho)))): the interval before it was down when it came, with a restore pending.
        e_u, e_p, e_k = np.exp(-big * ru), np.exp(-big * rp), np.exp(-big * (rp + rho))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            num = q * p * -np.expm1(-big * ru)
            pending = np.where(num > 0, num / (p + q * e_k), 0.0)  # (1 - q (1 - e_k) = p + q e_k)
        survive = p * e_u + pending * e_k + (q - pending) * e_p
        x = big * s
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # from branches not taken
            rx = _x_over_expm1(x)
        return cls(p, q, survive, x, tau / s, c / s, rx, pending, save_fail)

    def failed_saves(self) -> np.ndarray:
        """The share of time computed in whole cycles that a failure takes because their saves failed: ``S p a x
        f / (e^x - f)``, ``f`` the chance a save fails (docs/model.md 3; 0 when none fails)."""
        f = np.asarray(self.save_fail, dtype=float)
        if not np.any(f > 0):
            return np.zeros_like(self.x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            share = np.where(f > 0, f / (np.expm1(self.x) + (1.0 - f)), 0.0)
            out: np.ndarray = np.nan_to_num(self.survive * self.p * self.a * self.x * share)
        return out

    def useful(self) -> np.ndarray:
        out: np.ndarray = self.survive * (self.a * self.rx + self.q * _remainder_compute(self.x, self.a))
        out = out - self.failed_saves()
        return out


def _arrays(*values: ArrayLike) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(v, dtype=float) for v in values)


def time_fractions(
    lam: ArrayLike,
    mu: ArrayLike,
    tau: ArrayLike,
    c: ArrayLike,
    r_unplanned: ArrayLike,
    r_planned: ArrayLike,
    r_pending: ArrayLike = 0.0,
    save_fail: ArrayLike = 0.0,
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
    save_fail
        The chance that a save fails (docs/model.md 2.1): an interval ended by a failure keeps only the cycles up to
        the last one saved.
    r_pending
        The restore a planned interruption keeps when it comes in an unplanned one's downtime, hours (docs/model.md
        2.4: it persists nothing, and the job is down for ``r_planned + r_pending``); 0 where the restore is part
        of the restart (one checkpoint tier), which is the model below exactly.

    Notes
    -----
    Renewal-reward over the intervals between interruptions (``Lambda = lam + mu``, mean length
    ``1/Lambda``; started and ended by an unplanned interruption with probability ``p = lam / Lambda``,
    by a planned one with ``q = mu / Lambda``, independently): a fraction is ``Lambda`` times the
    expected time of its kind in one interval. An interval is down for its downtime ``D`` (or all of
    it, if shorter), and survives it with probability ``e^(-Lambda D)``. The time after the downtime
    is ``Y ~ Exp(Lambda)``: ``K`` whole cycles of ``s = tau + C`` and a remainder ``V s``, with ``V``
    on [0, 1) of density ``x e^(-x v) / (1 - e^(-x))``, ``x = Lambda s``, independent of ``K``, and
    ``x E[K] = x / expm1(x)``. The remainder is kept (compute up to ``tau``, then write) when a planned
    interruption ends the interval, and lost otherwise. So, with ``S = p e^(-Lambda R) + q e^(-Lambda r)``,
    ``a = tau / s`` and ``b = C / s``::

        useful     = S (a x/expm1(x) + q x E[min(V, a)])
        checkpoint = S (b x/expm1(x) + q x E[max(V - a, 0)])
        lost_work  = S p x E[V]
        recovery   = p (1 - e^(-Lambda R)),   planned = q (1 - e^(-Lambda r))

    They add up to 1 because ``x/expm1(x) + x E[V] = 1``, which the code never uses, so the sum is a
    check of the formulas. ``Lambda = 0`` is the limit: ``useful = a``, ``checkpoint = b``.

    With a pending restore ``rho = r_pending > 0`` the interval's kind is a Markov chain: a planned
    interruption that comes while the interval before it is still down from a failure (or from such a planned
    interruption) keeps its restore, and is down ``r + rho``. Its share of intervals, ``pi = q p (1 -
    e^(-Lambda R)) / (1 - q (1 - e^(-Lambda (r + rho))))``, survives its downtime with ``e^(-Lambda (r +
    rho))``, so ``S = p e^(-Lambda R) + pi e^(-Lambda (r + rho)) + (q - pi) e^(-Lambda r)``; the first ``r``
    of every planned downtime is the planned restart, and the restore beyond it recovery: ``recovery += pi
    (e^(-Lambda r) - e^(-Lambda (r + rho)))``. The fractions still add up to 1.

    With saves that fail, each with chance ``f``, an interval ended by a failure keeps ``K`` cycles less the
    failed saves counted back from the last (``F``, ``P(F >= n) = f^n``): ``E[min(F, K)] = f e^(-x) / (1 - f
    e^(-x))``, so ``S p a x f / (e^x - f)`` of the time moves from useful to lost work (docs/model.md 3).
    """
    lam, mu, tau, c, ru, rp, rho, sf = _arrays(lam, mu, tau, c, r_unplanned, r_planned, r_pending, save_fail)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # from branches not taken
        t = _Terms.of(lam, mu, tau, c, ru, rp, rho, sf)
        big = lam + mu
        fractions = (
            t.useful(),
            t.survive * (t.b * t.rx + t.q * _remainder_write(t.x, t.a, t.b, t.rx)),
            t.survive * t.p * _remainder_length(t.x, t.rx) + t.failed_saves(),
            t.p * -np.expm1(-big * ru) + t.pending * (np.exp(-big * rp) - np.exp(-big * (rp + rho))),
            t.q * -np.expm1(-big * rp),
        )
    # Rounding may put a fraction of exactly 1 (e.g. free checkpoints and no unplanned interruptions) an
    # ulp above it.
    return TimeFractions(*(np.minimum(np.maximum(f, 0.0), 1.0) for f in fractions))


def daly_goodput(tau: ArrayLike, c: ArrayLike, r: ArrayLike, m: ArrayLike) -> np.ndarray:
    """Daly's exact efficiency ``tau / (M e^(R/M) (e^((tau + C)/M) - 1))`` (no planned interruptions).

    Evaluated as ``tau/(tau + C) e^(-R/M) x/expm1(x)`` with ``x = (tau + C)/M``, which stays accurate as
    ``M`` grows without bound (``M = inf`` gives ``tau / (tau + C)``).
    """
    tau, c, r, m = (np.asarray(x, dtype=float) for x in (tau, c, r, m))
    s = tau + c
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out: np.ndarray = tau / s * np.exp(-r / m) * _x_over_expm1(s / m)
    return out


def young_interval(c: ArrayLike, m: ArrayLike) -> np.ndarray:
    """Young (1974): ``sqrt(2 C M)``; 0 when ``C = 0`` (also for ``M = inf``), ``inf`` when only ``M`` is."""
    c, m = np.asarray(c, dtype=float), np.asarray(m, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(c == 0, 0.0, np.sqrt(2.0 * c * m))


def daly_interval(c: ArrayLike, m: ArrayLike) -> np.ndarray:
    """Daly (2006) higher-order optimum; ``M`` when ``C >= 2M``; 0 when ``C = 0``, ``inf`` when only ``M`` is."""
    c, m = np.asarray(c, dtype=float), np.asarray(m, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = c / (2.0 * m)
        tau = np.sqrt(2.0 * c * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - c
    return np.where(c == 0, 0.0, np.where(c < 2.0 * m, tau, m))


#: Points per round of :func:`exact_optimal_interval`: each round narrows the bracket 400-fold, so four
#: rounds take the allowed intervals (0.6 s to a year) to 1e-9. An evaluation costs mostly per call,
#: hardly per point.
_OPTIMUM_GRID = 801


def exact_optimal_interval(
    lam: float,
    mu: float,
    c: float,
    r_unplanned: float,
    r_planned: float,
    bounds: tuple[float, float],
    save_fail: float = 0.0,
) -> float:
    """The interval (hours) that maximises the exact goodput, searched within ``bounds``.

    Goodput is unimodal in ``tau``: a grid on ``log(tau)`` brackets the maximum, and the grid is
    refined around it (each round one vectorised evaluation) until the bracket is under 1e-9 wide,
    i.e. a relative precision of 1e-9 in ``tau``. (Written out rather than taken from scipy.optimize,
    which would add 35 MB to the standalone bundle.)
    """
    lo, hi = float(np.log(bounds[0])), float(np.log(bounds[1]))
    lams, mus, cs, ru, rp = _arrays(lam, mu, c, r_unplanned, r_planned)
    while True:
        grid = np.linspace(lo, hi, _OPTIMUM_GRID)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # from branches not taken
            g = _Terms.of(lams, mus, np.exp(grid), cs, ru, rp, 0.0, save_fail).useful()  # goodput alone: half the cost
        i = int(np.argmax(g))
        lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
        if hi - lo < 1e-9:
            return float(np.exp(grid[i]))
