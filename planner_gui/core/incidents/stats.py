"""The statistics of a fit: rate intervals, trend tests, a Weibull fit (scipy.special only)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..util import special
from .logs import LEVEL

# -- statistics ------------------------------------------------------------------------------------------


def rate_interval(count: float, exposure: float, level: float = LEVEL) -> tuple[float, float]:
    """Equal-tailed interval of a Poisson rate: the Gamma posterior under the Jeffreys prior.

    The posterior of the rate after ``count`` events in ``exposure`` (GPU-hours) is Gamma with shape
    ``count + 1/2`` and rate ``exposure``; its ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles are
    returned. It holds the true rate about ``level`` of the time on average over rates, with dips at small
    ones (0.81 for 90 % at a mean count of 2; Brown, Cai and DasGupta 2003).
    """
    tail = (1.0 - level) / 2.0
    shape = count + 0.5
    return float(special.gammaincinv(shape, tail)) / exposure, float(special.gammaincinv(shape, 1.0 - tail)) / exposure


@dataclass(frozen=True)
class TrendTest:
    """A test of "no trend" (a constant rate) over the window.

    ``statistic`` is the test's statistic (Laplace: a standard normal under no trend, negative for a
    falling rate), ``p_value`` its two-sided p-value, ``points`` the incidents it used (an incident that
    sets an end of the window carries no information on the trend and is left out).
    """

    test: str
    statistic: float | None
    p_value: float | None
    points: int
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {"test": self.test, "statistic": self.statistic, "p_value": self.p_value, "verdict": self.verdict}


@dataclass(frozen=True)
class PowerLawFit:
    """MIL-HDBK-189's test and fit of a power-law process: cumulative intensity ``(t / scale) ** shape``.

    The time ``t`` runs from the window's start, so the shape means burn-in (``< 1``) or ageing (``> 1``)
    when the window starts with the cluster (or a big change to it). The rate at the window's end is
    ``shape`` times the window's average.
    """

    shape: float | None
    shape_low: float | None
    shape_high: float | None
    scale_hours: float | None
    statistic: float | None
    p_value: float | None
    points: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": "MIL-HDBK-189",
            "statistic": self.statistic,
            "p_value": self.p_value,
            "shape": self.shape,
            "shape_low": self.shape_low,
            "shape_high": self.shape_high,
            "scale_hours": self.scale_hours,
        }


@dataclass(frozen=True)
class WeibullFit:
    """The Weibull distribution of the times between incidents: ``P(gap > x) = exp(-(x / scale) ** shape)``.

    ``gaps`` is the number of whole gaps used; ``censored`` the gap still open at the window's end.
    """

    shape: float | None
    shape_low: float | None
    shape_high: float | None
    scale_hours: float | None
    gaps: int
    censored: int
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "shape": self.shape,
            "shape_low": self.shape_low,
            "shape_high": self.shape_high,
            "scale_hours": self.scale_hours,
            "gaps": self.gaps,
            "verdict": self.verdict,
        }


def laplace_test(u: Sequence[float] | NDArray[np.float64]) -> tuple[float, float]:
    """Laplace's statistic and two-sided p-value for points ``u`` in [0, 1] (times / window).

    Under a constant rate the points are uniform, so ``U = sqrt(12 m) (mean(u) - 1/2)`` is close to a
    standard normal; a falling rate crowds them early (``U < 0``).
    """
    x = np.asarray(u, dtype=float)
    stat_u = math.sqrt(12.0 * x.size) * (float(x.mean()) - 0.5)
    return stat_u, float(special.erfc(abs(stat_u) / math.sqrt(2.0)))


def mil_hdbk_189_test(
    u: Sequence[float] | NDArray[np.float64], level: float = LEVEL
) -> tuple[float, float, float, float, float]:
    """MIL-HDBK-189's test of a power-law process on points ``u`` in (0, 1]: statistic, p-value, shape and
    its interval.

    Given the count, a power-law process of shape ``b`` puts its points at ``u`` with ``P(U <= u) = u ** b``,
    so ``-b ln u`` are unit exponentials and ``2 b S``, ``S = -sum(ln u)``, is chi-square with ``2 m``
    degrees of freedom. Hence the statistic ``2 S`` (chi-square under no trend), the shape's estimate
    ``m / S`` and its exact interval from the Gamma(``m``) quantiles.
    """
    x = np.asarray(u, dtype=float)
    m = x.size
    s = float(-np.log(x).sum())
    p = min(1.0, 2.0 * min(float(special.gammainc(m, s)), float(special.gammaincc(m, s))))
    tail = (1.0 - level) / 2.0
    return 2.0 * s, p, m / s, float(special.gammaincinv(m, tail)) / s, float(special.gammaincinv(m, 1.0 - tail)) / s


def _bisect_log(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of an increasing ``f`` between ``lo`` and ``hi`` (``f(lo) < 0 < f(hi)``), halving ``ln k``."""
    a, b = math.log(lo), math.log(hi)
    for _ in range(200):
        mid = 0.5 * (a + b)
        if f(math.exp(mid)) < 0:
            a = mid
        else:
            b = mid
        if b - a < 1e-13:
            break
    return math.exp(0.5 * (a + b))


def fit_weibull(
    gaps: Sequence[float] | NDArray[np.float64],
    censored: Sequence[float] | NDArray[np.float64] = (),
    level: float = LEVEL,
) -> tuple[float, float, float, float]:
    """Maximum-likelihood Weibull shape and scale of ``gaps``, and a profile-likelihood interval of the shape.

    ``censored`` are gaps known only to be longer than their value (the one open at the window's end).
    Returns ``(shape, scale, shape_low, shape_high)``. With the scale profiled out (``scale ** k`` = the
    sum of ``x ** k`` over all gaps / the ``r`` whole ones), the log-likelihood of the shape is

        l(k) = r ln k + (k - 1) sum(ln x_whole) - r ln(sum(x_all ** k) / r) - r,

    whose derivative ``-r g(k)``, ``g(k) = mean_k(ln x_all) - 1/k - mean(ln x_whole)`` with ``mean_k``
    weighted by ``x ** k``, is increasing in ``k``: one root, found by bisection. The interval holds the
    shapes whose ``l`` is within half the chi-square(1) quantile of the maximum (Wilks).
    Needs at least two different whole gaps, all positive.
    """
    whole = np.asarray(gaps, dtype=float)
    cens = np.asarray(censored, dtype=float)
    if whole.size < 2 or np.any(whole <= 0) or np.any(cens <= 0) or float(whole.min()) == float(whole.max()):
        raise ValueError("a Weibull fit needs at least two different positive gaps")
    top = float(max(whole.max(), cens.max(initial=0.0)))
    # Gaps divided by the longest: every x ** k is at most 1, so no k overflows (the constant this
    # subtracts from l(k) does not move its maximum or the interval).
    lw = np.log(whole / top)
    la = np.concatenate([lw, np.log(cens / top)])
    r = lw.size
    mean_w, sum_w = float(lw.mean()), float(lw.sum())

    def log_sum(k: float) -> tuple[float, NDArray[np.float64]]:
        z = k * la
        zmax = float(z.max())
        w = np.exp(z - zmax)
        return zmax + math.log(float(w.sum())), w

    def g(k: float) -> float:
        _, w = log_sum(k)
        return float((w * la).sum() / w.sum()) - 1.0 / k - mean_w

    def profile(k: float) -> float:
        return r * math.log(k) + (k - 1.0) * sum_w - r * (log_sum(k)[0] - math.log(r)) - r

    lo, hi = 0.1, 10.0
    while g(lo) > 0 and lo > 1e-6:
        lo /= 10.0
    while g(hi) < 0 and hi < 1e6:
        hi *= 10.0
    k = _bisect_log(g, lo, hi)
    scale = top * math.exp((log_sum(k)[0] - math.log(r)) / k)
    target = profile(k) - float(special.gammaincinv(0.5, level))  # half the chi-square(1) quantile
    below = k / 2.0
    while profile(below) > target and below > 1e-8:
        below /= 2.0
    above = k * 2.0
    while profile(above) > target and above < 1e8:
        above *= 2.0
    low = _bisect_log(lambda x: profile(x) - target, below, k)  # the profile rises to its maximum at k ...
    high = _bisect_log(lambda x: target - profile(x), k, above)  # ... and falls after it
    return k, scale, low, high
