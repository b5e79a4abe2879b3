"""The draws made once per row, before any spacing: how many interruptions of each kind a row
(a trial, or a sub-window of one) holds, and which of its spacings lie next to a planned one.

Every kind of draw has its own random stream (:func:`stream`), so changing how one is made never
shifts another, and common random numbers hold across scenarios that share a seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri, pdtr

from .params import Params

__all__ = ["Rows", "draw_rows", "poisson_by_inversion", "stream", "uniforms"]

STREAM_COUNTS, STREAM_ARRANGE, STREAM_EDGES, STREAM_SPACINGS, STREAM_COMPONENTS = range(1, 6)


def stream(seed: int, *words: int) -> np.random.Generator:
    """An independent generator for the scenario's ``seed`` and a stream id (and, for spacings, a chunk)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, *words])))


def poisson_by_inversion(u: np.ndarray, mean: float) -> np.ndarray:
    """Poisson(mean) quantiles of ``u``: the smallest k with CDF(k) >= u.

    Monotone in ``mean``, so nearby scenarios share their draws. The exact CDF is tabulated over the
    range the extreme ``u`` need (found from a Cornish-Fisher guess, widened until it covers them), and
    each ``u`` is looked up in the table.
    """
    if mean <= 0 or not u.size:
        return np.zeros(u.shape, dtype=np.int64)
    z = ndtri(np.array([u.min(), u.max()]))
    guess = np.floor(mean + math.sqrt(mean) * z + (z * z - 1.0) / 6.0 + 0.5)
    margin = 4.0
    while True:
        lo = max(guess[0] - margin, 0.0)
        hi = guess[1] + margin
        cdf = pdtr(np.arange(lo - 1.0, hi + 1.0), mean)  # CDF(lo - 1) ... CDF(hi)
        if (lo == 0 or cdf[0] < u.min()) and cdf[-1] >= u.max():
            break
        margin *= 4.0
    return (lo + np.searchsorted(cdf[1:], u, side="left")).astype(np.int64)


def uniforms(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniforms kept away from 0 and 1, where quantile functions are infinite."""
    return np.clip(rng.random(shape), 1e-15, 1.0 - 1e-15)


@dataclass
class Rows:
    """Per-row draws: counts and the kinds of interruption around each spacing."""

    n_unplanned: np.ndarray
    n_planned: np.ndarray
    first_planned: np.ndarray  # the row's first interruption is planned
    last_planned: np.ndarray
    # Interior spacings by the kinds at their ends (p: planned, f: unplanned, i.e. a failure):
    pf: np.ndarray  # from a planned to an unplanned interruption
    fp: np.ndarray  # from an unplanned to a planned one
    pp: np.ndarray  # between two planned ones
    order: np.ndarray  # rows sorted by their count's uniform: equal counts share chunks, in every scenario

    @property
    def n(self) -> np.ndarray:
        return self.n_unplanned + self.n_planned


def draw_rows(p: Params, seed: int, rows: int, sub_hours: float) -> Rows:
    """Counts and arrangement for ``rows`` rows of ``sub_hours`` each (see the engine's docstring)."""
    u = uniforms(stream(seed, STREAM_COUNTS), (rows, 2))
    nf = poisson_by_inversion(u[:, 0], p.lam * sub_hours)
    npl = poisson_by_inversion(u[:, 1], p.mu * sub_hours)
    rng = stream(seed, STREAM_ARRANGE)
    # In a random arrangement of k planned among m unplanned, the k + 1 gaps of unplanned ones
    # (before, between, after the planned) hold t non-empty gaps, t ~ Hypergeometric(k + 1, m - 1, m).
    has_f = nf > 0
    t = rng.hypergeometric(npl + 1, np.where(has_f, nf - 1, 0), nf)
    ua, ub = uniforms(rng, (2, rows))
    k = npl
    a = ua < t / (k + 1)  # the gap before the first planned one is non-empty
    b = ub < (t - a) / np.maximum(k, 1)  # the gap after the last planned one is non-empty
    has_p = k > 0
    runs = np.where(has_p, 1 + t - a - b, 0)
    first_p = has_p & ~a
    last_p = has_p & ~b
    return Rows(
        nf,
        npl,
        first_p,
        last_p,
        pf=np.where(has_p, runs - last_p, 0),
        fp=np.where(has_p, runs - first_p, 0),
        pp=np.where(has_p, k - runs, 0),
        order=np.argsort(u[:, 0], kind="stable"),
    )
