"""The draws made once per row, before any spacing: how many interruptions of each kind a row
(a trial, or a sub-window of one) holds, and which of its spacings lie next to a planned one.

Every kind of draw has its own random stream (:func:`stream`), so changing how one is made never
shifts another, and common random numbers hold across scenarios that share a seed.

Spacings are named by the kinds of interruption at their two ends, in time order: ``U`` for an
unplanned one, ``P`` for a planned one. A row with ``n >= 1`` interruptions has ``n - 1`` interior
spacings of the kinds UP, PP, PU and UU, and two pieces that cross its edges (see docs/engine.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..theory.params import Params
from ..util import special
from ..util.streams import stream

__all__ = [
    "Arrangement",
    "Rows",
    "draw_arrangement",
    "draw_rows",
    "draw_rows_at",
    "poisson_by_inversion",
    "poisson_quantiles",
    "split_by_rates",
    "uniforms",
]

STREAM_COUNTS, STREAM_ARRANGE, STREAM_EDGES, STREAM_SPACINGS, STREAM_COMPONENTS = range(1, 6)


def poisson_by_inversion(u: np.ndarray, mean: float) -> np.ndarray:
    """Poisson(mean) quantiles of ``u``: the smallest k with CDF(k) >= u.

    Monotone in ``mean``, so nearby scenarios share their draws. The exact CDF is tabulated over the
    range the extreme ``u`` need (found from a Cornish-Fisher guess, widened until it covers them), and
    each ``u`` is looked up in the table.
    """
    if mean <= 0 or not u.size:
        return np.zeros(u.shape, dtype=np.int64)
    z = special.ndtri(np.array([u.min(), u.max()]))
    guess = np.floor(mean + math.sqrt(mean) * z + (z * z - 1.0) / 6.0 + 0.5)
    margin = 4.0
    while True:
        lo = max(guess[0] - margin, 0.0)
        hi = guess[1] + margin
        cdf = special.pdtr(np.arange(lo - 1.0, hi + 1.0), mean)  # CDF(lo - 1) ... CDF(hi)
        if (lo == 0 or cdf[0] < u.min()) and cdf[-1] >= u.max():
            break
        margin *= 4.0
    k: np.ndarray = (lo + np.searchsorted(cdf[1:], u, side="left")).astype(np.int64)
    return k


#: Above this many distinct means, :func:`poisson_quantiles` searches each element's quantile on its own.
_TABLES = 64


def poisson_quantiles(u: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Poisson(``means``) quantiles of ``u``, element by element: what :func:`poisson_by_inversion` gives
    for each mean (the same numbers: both find the smallest k with ``special.pdtr(k, mean) >= u``).

    A few distinct means (the pieces of a rate profile) are done one table each; many (a rate per trial)
    start from the Cornish-Fisher guess and step to the quantile, one step per unit the guess is off.
    """
    means = np.asarray(means, dtype=float)
    values, inverse = np.unique(means, return_inverse=True)
    out = np.zeros(u.shape, dtype=np.int64)
    if len(values) <= _TABLES:
        for j, mean in enumerate(values):
            idx = np.flatnonzero(inverse == j)
            out[idx] = poisson_by_inversion(u[idx], float(mean))
        return out
    some = np.flatnonzero(means > 0)
    uu, m = u[some], means[some]
    z = special.ndtri(uu)
    k = np.maximum(np.floor(m + np.sqrt(m) * z + (z * z - 1.0) / 6.0 + 0.5), 0.0)
    low = np.flatnonzero(special.pdtr(k, m) < uu)
    while low.size:  # up to the first k whose CDF reaches u
        k[low] += 1.0
        low = low[special.pdtr(k[low], m[low]) < uu[low]]
    high = np.flatnonzero((k > 0) & (special.pdtr(k - 1.0, m) >= uu))
    while high.size:  # down to the smallest such k
        k[high] -= 1.0
        high = high[(k[high] > 0) & (special.pdtr(k[high] - 1.0, m[high]) >= uu[high])]
    out[some] = k.astype(np.int64)
    return out


def split_by_rates(rng: np.random.Generator, counts: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """Each trial's ``counts`` shared among classes in proportion to their ``rates`` (one multinomial draw a trial):
    ``rates`` is one row for every trial, or a row per trial (a trial's own rates, with rate uncertainty). Where
    the rates sum to 0 nothing is drawn and the shares are 0."""
    if rates.ndim == 1:
        total = rates.sum()
        if total <= 0:
            return np.zeros((len(counts), len(rates)), dtype=np.int64)
        out: np.ndarray = rng.multinomial(counts, rates / total)
        return out
    totals = rates.sum(axis=1, keepdims=True)
    per_trial: np.ndarray = rng.multinomial(counts, rates / np.where(totals > 0, totals, 1.0))
    return per_trial


def uniforms(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniforms kept away from 0 and 1, where quantile functions are infinite."""
    u: np.ndarray = np.clip(rng.random(shape), 1e-15, 1.0 - 1e-15)
    return u


@dataclass
class Arrangement:
    """Per row, what a random order of its interruptions decides: the kinds at its ends, and how many
    interior spacings there are of each kind next to a planned interruption (the rest are UU)."""

    first_planned: np.ndarray  # the row's first interruption is planned
    last_planned: np.ndarray  # its last one is planned
    n_up: np.ndarray  # interior spacings from an unplanned to a planned interruption
    n_pp: np.ndarray  # between two planned ones
    n_pu: np.ndarray  # from a planned to an unplanned one


@dataclass
class Rows(Arrangement):
    """Per-row draws: counts, and the arrangement of the interruptions (see :class:`Arrangement`)."""

    n_unplanned: np.ndarray
    n_planned: np.ndarray
    order: np.ndarray  # rows sorted by their count's uniform: equal counts share chunks, in every scenario

    @property
    def n(self) -> np.ndarray:
        n: np.ndarray = self.n_unplanned + self.n_planned
        return n


def draw_arrangement(rng: np.random.Generator, n_unplanned: np.ndarray, n_planned: np.ndarray) -> Arrangement:
    """The arrangement of ``n_unplanned`` and ``n_planned`` interruptions in a uniformly random order.

    Parameters
    ----------
    rng
        Draws one hypergeometric and two uniforms per row, whatever the counts.
    n_unplanned, n_planned
        Per row, the counts ``m`` and ``k`` (int arrays of one length).

    Returns
    -------
    Arrangement
        Drawn from the exact law of a random order. The ``m`` unplanned interruptions fall in ``k + 1``
        groups (before the first planned one, between two, after the last); ``t``, the number of
        non-empty groups, is hypergeometric, and given ``t`` the non-empty groups are a uniform choice
        of ``t`` of them, so the first and the last group are non-empty with probabilities
        ``t / (k + 1)`` and then ``(t - [first]) / k``. The planned ones then form
        ``1 + t - [first] - [last]`` runs, which fixes every count (derived in docs/engine.md).
    """
    m, k = n_unplanned, n_planned
    t = rng.hypergeometric(k + 1, np.where(m > 0, m - 1, 0), m)  # numpy's (good, bad, sample)
    ua, ub = uniforms(rng, (2, len(m)))
    first_group = ua < t / (k + 1)  # unplanned ones before the first planned one
    last_group = ub < (t - first_group) / np.maximum(k, 1)  # and after the last
    has_p = k > 0
    runs = np.where(has_p, 1 + t - first_group - last_group, 0)  # maximal runs of planned ones
    first_p = has_p & ~first_group
    last_p = has_p & ~last_group
    return Arrangement(
        first_planned=first_p,
        last_planned=last_p,
        n_up=np.where(has_p, runs - first_p, 0),  # every run but a leading one follows an unplanned one
        n_pp=np.where(has_p, k - runs, 0),  # a run of r planned ones holds r - 1 PP spacings
        n_pu=np.where(has_p, runs - last_p, 0),  # every run but a trailing one precedes an unplanned one
    )


def draw_rows(p: Params, seed: int, rows: int, sub_hours: float) -> Rows:
    """Counts and arrangement for ``rows`` rows of ``sub_hours`` each (see the engine's docstring)."""
    u = uniforms(stream(seed, STREAM_COUNTS), (rows, 2))
    n_unplanned = poisson_by_inversion(u[:, 0], p.lam * sub_hours)
    n_planned = poisson_by_inversion(u[:, 1], p.mu * sub_hours)
    arranged = draw_arrangement(stream(seed, STREAM_ARRANGE), n_unplanned, n_planned)
    return Rows(
        **vars(arranged),
        n_unplanned=n_unplanned,
        n_planned=n_planned,
        order=np.argsort(u[:, 0], kind="stable"),
    )


def draw_rows_at(seed: int, unplanned_means: np.ndarray, planned_means: np.ndarray) -> Rows:
    """:func:`draw_rows` for rows with means of their own (a rate profile, a rate per trial).

    The counts are the same quantiles of the same uniforms, so a row keeps nearly the same count when its
    mean moves a little (common random numbers). Rows are ordered by their count, then by its uniform:
    with different means, the uniform alone no longer puts rows of similar counts side by side.
    """
    u = uniforms(stream(seed, STREAM_COUNTS), (len(unplanned_means), 2))
    n_unplanned = poisson_quantiles(u[:, 0], unplanned_means)
    n_planned = poisson_quantiles(u[:, 1], planned_means)
    arranged = draw_arrangement(stream(seed, STREAM_ARRANGE), n_unplanned, n_planned)
    return Rows(
        **vars(arranged),
        n_unplanned=n_unplanned,
        n_planned=n_planned,
        order=np.lexsort((u[:, 0], n_unplanned + n_planned)),
    )
