"""Closed forms of the racks of docs/model.md section 1, "Racks", where one holds.

One rack's warm spare trays in repair form a small Markov chain when failures are Poisson and repairs exponential
of one mean: with ``b`` of its ``K`` spares in repair, a tray failure (rate ``lambda`` per rack) takes one more
while ``b < K`` and moves the rack at ``b = K``; a failure of its domain, or a correlated event that takes it (rate
``nu`` per rack), moves it whatever ``b``; a move brings in a whole rack (``b = 0``); each spare in repair is back
at rate ``1 / h``. Tray failures arrive as a Poisson stream, so the share of them that move the rack is the chain's
steady-state chance of ``b = K`` (PASTA).
"""

from __future__ import annotations

import math

import numpy as np

from ..model.scenario import Scenario
from ..model.spares import Spares, failure_classes
from .profiles import is_flat
from .rates import RatePosterior

__all__ = ["move_share", "move_shares", "rack_moves_expected"]


def move_share(spares: int, tray_rate: float, reset_rate: float, repair_hours: float) -> float:
    """The steady-state share of a rack's tray failures that move it: ``spares`` warm spares, tray failures at
    ``tray_rate`` per hour per rack, moves for other causes at ``reset_rate``, repairs exponential of mean
    ``repair_hours``."""
    k = spares
    if k == 0:
        return 1.0
    if tray_rate <= 0:
        return 0.0
    mu = 1.0 / repair_hours if repair_hours > 0 else math.inf
    if not math.isfinite(mu):
        return 0.0
    q = np.zeros((k + 1, k + 1))
    for b in range(k + 1):
        q[b, b + 1 if b < k else 0] += tray_rate
        if b > 0:
            q[b, 0] += reset_rate
            q[b, b - 1] += b * mu
    np.fill_diagonal(q, -q.sum(axis=1))
    # pi Q = 0, sum pi = 1: replace one equation by the normalization.
    a = np.vstack([q.T[:-1], np.ones(k + 1)])
    rhs = np.zeros(k + 1)
    rhs[-1] = 1.0
    pi = np.linalg.solve(a, rhs)
    return float(pi[k])


def rack_moves_expected(scenario: Scenario) -> float | None:
    """The failures in the window expected to move racks, where the closed form holds: a window in its steady
    state (not a new cluster, constant known rates, exponential lives), exponential repairs, and every class a warm
    spare may cover of one mean repair (or no warm spare at all, when every failure that takes nodes moves its
    racks, whatever its repair). None elsewhere."""
    sc = scenario
    if not sc.uses_nvlink or sc.racks < 1:
        return None
    sp = sc.spares if sc.spares is not None else Spares()
    fc = failure_classes(sc, sp)
    assert fc.racks is not None and fc.in_rack is not None
    takes = fc.racks > 0
    cover = fc.in_rack & (fc.rates > 0)
    hours = sc.hours
    if not cover.any():
        return float(fc.rates[takes].sum() * hours)
    uncertain = sc.rate_uncertainty and bool(RatePosterior.of(sc.components).uncertain.any())
    steady = not (sc.new_cluster or sc.uses_weibull or uncertain)
    flat = sc.rate_profile is None or is_flat(sc.rate_profile, sc.days)
    repairs = np.unique(fc.repair[cover])
    if not steady or not flat or sp.repair_sigma is not None or len(repairs) != 1:
        return None
    # (a correlated event that moves several racks counts once, as every failure does)
    return float((fc.rates[takes] * move_shares(sc, sp)[takes]).sum() * hours)


def move_shares(scenario: Scenario, spares: Spares) -> np.ndarray:
    """Per class, the share of its failures that move racks in the steady state: 1 but for the tray failures a warm
    spare may cover, whose share is the rack's chain's (:func:`move_share`) at the longest of their mean repairs (exact
    where they share one mean, else an upper bound)."""
    fc = failure_classes(scenario, spares)
    assert fc.racks is not None and fc.in_rack is not None
    cover = fc.in_rack & (fc.rates > 0)
    if not cover.any():
        return np.ones(len(fc.rates))
    racks = scenario.racks
    others = (fc.racks > 0) & ~cover
    share = move_share(
        scenario.rack_spare_trays,
        float(fc.rates[cover].sum()) / racks,
        float((fc.rates[others] * fc.racks[others]).sum()) / racks,
        float(fc.repair[cover].max()),
    )
    return np.where(cover, share, 1.0)
