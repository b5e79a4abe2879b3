"""Closed forms of the spares model: the pool of spares as an M/G/infinity system.

Node losses of each class arrive as a Poisson stream (rate ``a_j``, ``k_j`` nodes each) and every group
stays in repair for a time of mean ``D_j``, of any law. The groups in repair of class ``j`` at a random
moment are then Poisson with mean ``a_j D_j`` (M/G/infinity), independently across classes, so the nodes
in repair are ``A = sum_j k_j X_j``, ``X_j ~ Poisson(a_j D_j)``: a compound Poisson law, whatever the
spares and the job do (the failures do not depend on them). By PASTA a failure sees ``A`` at that law
just before it, so a failure of class ``j`` finds fewer spares than the ``k_j`` it needs with probability
``P(A + k_j > S)``, and the chance that a failure finds no spare is the rate-weighted mean of those.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.spares import SparesParams
from ..util import special

__all__ = [
    "nodes_in_repair_pmf",
    "p_no_spare",
    "recommended_spares",
    "repair_quantile",
]


def _poisson_pmf(n: np.ndarray, mean: float) -> np.ndarray:
    """P(X = n) for X Poisson with ``mean`` (scipy.special, not scipy.stats: that module is heavy to import
    and the bundle leaves it out)."""
    out: np.ndarray = np.exp(special.xlogy(n, mean) - mean - special.gammaln(n + 1.0))
    return out


def _poisson_top(mean: float, tail: float) -> int:
    """The smallest n with P(X > n) <= ``tail`` for X Poisson with ``mean``."""
    n = np.arange(int(mean + 12.0 * math.sqrt(mean) + 40.0) + 1)
    above = special.pdtrc(n, mean)  # P(X > n)
    return int(np.argmax(above <= tail))


def nodes_in_repair_pmf(p: SparesParams, tail: float = 1e-12) -> np.ndarray:
    """The law of the nodes in repair at a random moment: ``pmf[n] = P(A = n)`` (to a tail below ``tail``)."""
    pmf = np.array([1.0])
    for k in sorted({int(x) for x in p.nodes if x > 0}):
        mean = float(((p.nodes == k) * p.rates * p.repair).sum())
        if mean <= 0:
            continue
        top = _poisson_top(mean, tail) + 1
        part = np.zeros(top * k + 1)
        part[::k] = _poisson_pmf(np.arange(top + 1), mean)
        pmf = np.convolve(pmf, part)
    return pmf


def p_no_spare(p: SparesParams, spares: float | None = None) -> float:
    """The chance that a node-losing failure finds fewer spares than the nodes it takes."""
    s = p.spare_nodes if spares is None else spares
    if math.isinf(s):
        return 0.0
    rates = p.node_loss_rates
    total = float(rates.sum())
    if total == 0:
        return 0.0
    cdf = np.cumsum(nodes_in_repair_pmf(p))
    out = 0.0
    for rate, k in zip(rates, p.nodes):
        if rate > 0:
            # P(A + k > S) = 1 - P(A <= S - k)
            n = int(s) - int(k)
            below = 0.0 if n < 0 else float(cdf[min(n, len(cdf) - 1)])
            out += rate * (1.0 - below)
    return max(0.0, out / total)


def recommended_spares(p: SparesParams, target: float = 0.99) -> int:
    """The smallest pool in which at least ``target`` of node-losing failures find their spares."""
    if float(p.node_loss_rates.sum()) == 0:
        return 0
    pmf = nodes_in_repair_pmf(p)
    top = len(pmf) + int(p.nodes.max())
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi) // 2
        if p_no_spare(p, mid) <= 1.0 - target + 1e-15:
            hi = mid
        else:
            lo = mid + 1
    return lo


def repair_quantile(p: SparesParams, q: float) -> float:
    """The q-quantile of the nodes in repair at a random moment."""
    cdf = np.cumsum(nodes_in_repair_pmf(p))
    return float(np.searchsorted(cdf, q * (1 - 1e-12)))
