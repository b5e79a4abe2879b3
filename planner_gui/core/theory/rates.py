"""Rate uncertainty: the evidence behind each component's rate, and the posterior it gives.

A rate estimated from ``count`` interruptions over ``exposure`` GPU-hours is uncertain. Under the Jeffreys
prior its posterior is Gamma with shape ``count + 1/2`` and rate ``exposure`` (mean ``(count + 1/2) /
exposure``), as :func:`.incidents.rate_interval` uses. With ``Scenario.rate_uncertainty`` on, each trial
draws every component's rate from it, then its interruptions at those rates.

Evidence
--------
A component carries its own (``count``, ``exposure_gpu_hours``), from a scenario file or a fitted log;
a component named as a Llama 3 cause without its own has that cause's Table 5 count over the snapshot's
16,384 x 54 x 24 GPU-hours (:func:`evidence_of`; looked up by name, so the shipped presets and the
files saved from them stay as they are). Other components have none and keep their rate.

The scenario's rate may differ from the evidence's estimate ``count / exposure`` (a "GPU x2" edit, or the
Epoch preset's scaling): the posterior is then scaled by the same factor, so a component's draw is
``rate x X / count`` with ``X ~ Gamma(count + 1/2, 1)``: exactly the posterior when the rate is the
estimate, twice it for "x2", and 0 for a zeroed rate. With ``count = 0`` there is no estimate to scale:
a zero rate draws from the posterior itself, ``X / exposure`` with ``X ~ Gamma(1/2, 1)``, and a positive
rate is kept as it is.

Expectations over the posterior
-------------------------------
Goodput depends on the total rate only. Components whose scales (``rate / count``, or ``1 / exposure``)
are equal add up to one Gamma; when all do (Llama 3's, a fitted log's: one exposure), the total is
``fixed + scale x Gamma(sum of shapes)`` and :meth:`RatePosterior.nodes` integrates over it with a
deterministic quadrature (the trapezoidal rule in ``log x``, exponentially accurate for this smooth,
fast-decaying density: 1e-12 with its 64 nodes, 256 below a shape of 3).

With several scales the total is ``Y x S``: ``Y ~ Gamma(sum of shapes)``, independent of the shares
``S = sum_g scale_g D_g``, ``D ~ Dirichlet(shapes)``. ``Y`` is integrated by the same quadrature, ``S``
by 65,536 fixed draws (a fixed stream, the same every time) with ``S`` and ``S^2`` as control variates
(their exact means are known), on which the smooth function of ``S`` is interpolated at 17 Chebyshev
points. What the draws leave is the cubic and higher part of a smooth function over the narrow range
of ``S``: below 1e-9 in goodput (measured in ``tests/test_rates.py`` against other draws).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..model.scenario import Component, Scenario, llama3_evidence
from ..util import special
from ..util.streams import stream

__all__ = [
    "STREAM_RATES",
    "Evidence",
    "RatePosterior",
    "evidence_of",
    "gamma_rule",
    "job_rates",
    "mean_job_rate",
]

#: The random stream of the rate draws (the engine's are 1 to 5, the time to train's 6).
STREAM_RATES = 7
#: The stream of the fixed draws of the shares (several scales), seeded by this alone.
_SHARES_SEED = 7_2024_0723
#: Quadrature nodes over the total's Gamma (for a shape below 3, where log y spreads wider: 256), Chebyshev
#: points over the shares, draws of the shares.
GAMMA_NODES = 64
CHEBYSHEV_POINTS = 17
SHARE_DRAWS = 1 << 16
#: Scales equal to this relative precision are one group (rounding makes count / exposure and back differ).
_SAME_SCALE = 1e-9


@dataclass(frozen=True)
class Evidence:
    """``count`` interruptions seen over ``exposure_gpu_hours``."""

    count: float
    exposure_gpu_hours: float


def evidence_of(component: Component) -> Evidence | None:
    """The component's own evidence, else its Llama 3 cause's (by name), else None."""
    if component.count is not None and component.exposure_gpu_hours is not None:
        return Evidence(component.count, component.exposure_gpu_hours)
    llama = llama3_evidence().get(component.name)
    return Evidence(*llama) if llama is not None else None


@dataclass(frozen=True)
class RatePosterior:
    """Every component's rate (per GPU-hour) in a trial: ``fixed + scale x X``, ``X ~ Gamma(shape, 1)``.

    Components without a posterior have ``shape = scale = 0`` and their rate in ``fixed``; the others have
    ``fixed = 0`` (see the module docstring for the scaling).
    """

    shapes: np.ndarray
    scales: np.ndarray
    fixed: np.ndarray

    @classmethod
    def of(cls, components: tuple[Component, ...]) -> RatePosterior:
        n = len(components)
        shapes, scales, fixed = np.zeros(n), np.zeros(n), np.zeros(n)
        for i, c in enumerate(components):
            ev = evidence_of(c)
            if ev is not None and ev.count > 0:
                shapes[i], scales[i] = ev.count + 0.5, c.rate_per_gpu_hour / ev.count
            elif ev is not None and c.rate_per_gpu_hour == 0:
                shapes[i], scales[i] = 0.5, 1.0 / ev.exposure_gpu_hours
            else:
                fixed[i] = c.rate_per_gpu_hour
        return cls(shapes, scales, fixed)

    @property
    def uncertain(self) -> np.ndarray:
        out: np.ndarray = (self.shapes > 0) & (self.scales > 0)
        return out

    def mean(self) -> float:
        """The posterior mean of the total rate per GPU-hour."""
        return math.fsum(self.fixed) + math.fsum(self.shapes * self.scales)

    def variance(self) -> float:
        """The posterior variance of the total rate per GPU-hour (independent Gammas)."""
        return math.fsum(self.shapes * self.scales**2)

    def draw(self, seed: int, trials: int) -> np.ndarray:
        """(trials, components) rates per GPU-hour, from the scenario's own stream of rate draws."""
        rates: np.ndarray = np.tile(self.fixed, (trials, 1))
        unc = np.flatnonzero(self.uncertain)
        if unc.size:
            x = stream(seed, STREAM_RATES).standard_gamma(self.shapes[unc], size=(trials, unc.size))
            rates[:, unc] = x * self.scales[unc]
        return rates

    def groups(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct scales and their summed shapes (components of one scale add up to one Gamma)."""
        unc = self.uncertain
        order = np.argsort(self.scales[unc])
        scales, shapes = self.scales[unc][order], self.shapes[unc][order]
        new = np.ones(len(scales), dtype=bool)
        new[1:] = np.diff(scales) > _SAME_SCALE * scales[1:]
        ids = np.cumsum(new) - 1
        shape_sum = np.bincount(ids, shapes)
        scale_mean = np.bincount(ids, shapes * scales) / np.where(shape_sum > 0, shape_sum, 1.0)
        return scale_mean, shape_sum

    def nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """Nodes and weights of a rule for expectations over the total rate per GPU-hour: ``E f(total)
        = sum w f(node)`` (see the module docstring; the weights add up to 1)."""
        scales, shapes = self.groups()
        nodes, weights = _nodes(math.fsum(self.fixed), tuple(scales), tuple(shapes))
        return nodes.copy(), weights.copy()


@functools.lru_cache(maxsize=16)
def _nodes(fixed: float, scales: tuple[float, ...], shapes: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`RatePosterior.nodes`, kept for the posteriors seen last (several scales cost some draws)."""
    if not scales:
        return np.array([fixed]), np.ones(1)
    y, wy = gamma_rule(math.fsum(shapes))
    if len(scales) == 1:
        return fixed + scales[0] * y, wy
    s, ws = _share_rule(np.array(scales), np.array(shapes))
    return fixed + (s[:, None] * y[None, :]).ravel(), (ws[:, None] * wy[None, :]).ravel()


def gamma_rule(shape: float, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights for ``E f(Y)``, ``Y ~ Gamma(shape, 1)``: the trapezoidal rule in ``log y``
    between the 1e-16 and 1 - 1e-16 quantiles, weights normalised to add up to 1."""
    n = (GAMMA_NODES if shape >= 3.0 else 4 * GAMMA_NODES) if n is None else n
    lo, hi = float(special.gammaincinv(shape, 1e-16)), float(special.gammainccinv(shape, 1e-16))
    t = np.linspace(math.log(lo), math.log(hi), n)
    log_density = shape * t - np.exp(t) - special.gammaln(shape)  # of log Y
    w = np.exp(log_density - log_density.max())
    w[[0, -1]] /= 2.0
    return np.exp(t), w / w.sum()


def _share_rule(scales: np.ndarray, shapes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chebyshev points over the range of ``S = sum scale_g D_g`` and weights ``E l_c(S)`` (the Lagrange
    basis averaged over fixed Dirichlet draws of ``D``), so that ``E h(S) = sum w_c h(s_c)``."""
    draws = max(1 << 12, min(SHARE_DRAWS, (1 << 22) // len(scales)))
    g = np.random.Generator(np.random.PCG64(_SHARES_SEED)).standard_gamma(shapes, size=(draws, len(shapes)))
    s = (g @ scales) / g.sum(axis=1)
    lo, hi = float(s.min()), float(s.max())
    if hi - lo <= 1e-12 * hi:
        return np.array([float(s.mean())]), np.ones(1)
    k = np.arange(CHEBYSHEV_POINTS)
    nodes = (lo + hi) / 2.0 + (hi - lo) / 2.0 * np.cos(np.pi * k / (CHEBYSHEV_POINTS - 1))
    bary = (-1.0) ** k * np.where((k == 0) | (k == CHEBYSHEV_POINTS - 1), 0.5, 1.0)
    diff = s[:, None] - nodes[None, :]
    hit = diff == 0.0
    diff[hit] = 1.0
    terms = bary / diff
    basis = terms / terms.sum(axis=1, keepdims=True)
    rows = hit.any(axis=1)
    basis[rows] = hit[rows]  # a draw on a node: that node's basis function is 1 there
    return nodes, _controlled_mean(basis, s, _share_moments(scales, shapes))


def _share_moments(scales: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """The exact ``E S`` and ``E S^2`` of ``S = sum scale_g D_g``, ``D ~ Dirichlet(shapes)``."""
    rho = float(shapes.sum())
    first = float(scales @ shapes)
    return np.array([first / rho, (first**2 + float(scales**2 @ shapes)) / (rho * (rho + 1.0))])


def _controlled_mean(basis: np.ndarray, s: np.ndarray, moments: np.ndarray) -> np.ndarray:
    """The mean of each basis function over the draws, with ``S`` and ``S^2`` as control variates (their
    exact means known): the weights then integrate every quadratic in ``S`` exactly, and the draws' error
    is left only in the small cubic and higher part of a smooth function over the narrow range of ``S``."""
    scale = moments[0]
    x = np.stack((s / scale, (s / scale) ** 2), axis=1)
    target = moments / np.array([scale, scale**2])
    xc = x - x.mean(axis=0)
    coef, *_ = np.linalg.lstsq(xc, basis - basis.mean(axis=0), rcond=None)
    out: np.ndarray = basis.mean(axis=0) - (x.mean(axis=0) - target) @ coef
    return out


def job_rates(scenario: Scenario, lam: float, per_gpu: np.ndarray | float) -> np.ndarray:
    """Job rates per hour of total rates ``per_gpu`` per GPU-hour, for a scenario whose total is ``lam`` per
    hour: ``lam x per_gpu / total`` (so sweeps that move ``lam`` move these), or GPUs x ``per_gpu`` when
    the scenario's total is 0."""
    nominal = scenario.rate_per_gpu_hour
    out: np.ndarray = lam * (np.asarray(per_gpu) / nominal) if nominal > 0 else scenario.gpus * np.asarray(per_gpu)
    return out


def mean_job_rate(scenario: Scenario, lam: float | None = None) -> float:
    """The expected unplanned rate of the job per hour (its rates' posterior mean when rate uncertainty is
    on), before any profile; ``lam`` is the scenario's total rate (default: its own)."""
    lam = scenario.failure_rate_per_hour if lam is None else lam
    if not scenario.rate_uncertainty:
        return lam
    return float(job_rates(scenario, lam, RatePosterior.of(scenario.components).mean()))
