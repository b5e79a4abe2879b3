"""Node lives that are not exponential (docs/model.md, "Node lives"): one failure class whose failures are those of
the job's node positions, each failing after a Weibull life and renewed at its failure, drawn chunk by chunk for
every row of a world at once.

Everything here runs on the profile's clock ``h`` (the cumulative multiplier, :meth:`.world.World._cum`): a node
ages at the rate multiplier ``m(t)``, so a profile scales the hazard at every age alike, and a shape of 1 is the
Poisson class of every other component.

Positions that have not failed since the world's start are followed as counts per row, in two groups by the law
of their first failure after ``base`` (the age origin of the group):

* ``NEW``: a new cluster's node, new at the profile's 0: its life is Weibull from age 0 (the ones alive at the
  world's start, conditioned on being alive);
* ``STEADY``: a position in the steady state of its renewal process: the time to its next failure has the
  forward-recurrence law ``G(x) = P(1/k, (x / eta)^k)`` (``P`` the regularized lower incomplete gamma), the
  integral of the survival over the mean life.

A new cluster's rows that start after the profile's 0 (a preview's later stretches) draw their positions'
failures from 0 to their start first. A group's failures in ``[h0, h1)`` are ``Binomial(left, P(fail there |
alive at h0))``, each at a time drawn from that conditional law. A position that has failed is followed on its
own: its next failure one Weibull life after its last. All draws are a chunk's (its own stream), so a run's
numbers do not depend on other rows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..util import special

__all__ = ["Lives"]

#: The laws of a group's first failure after its ``base``.
NEW, STEADY = 0, 1


def _packed(a: np.ndarray) -> np.ndarray:
    """``a``'s finite entries first in each row (in order), as narrow as the fullest row, inf pads."""
    keep = np.isfinite(a)
    width = int(keep.sum(axis=1).max(initial=0))
    if width == a.shape[1]:
        return a
    out = np.full((a.shape[0], width), np.inf)
    rows, _ = np.nonzero(keep)
    out[rows, np.cumsum(keep, axis=1)[keep] - 1] = a[keep]
    return out


class Lives:
    """The node positions of one failure class of Weibull lives, for ``n`` rows.

    ``shape``: the Weibull shape ``k``; ``scale``: per row, the characteristic life ``eta`` on the profile's clock
    (inf: the class never fails); ``positions``: the job's nodes; ``new``: a new cluster, whose nodes were new at
    the profile's 0 (else every position is in its renewal steady state); ``h_start``: per row, the profile's clock
    at the world's start."""

    def __init__(
        self,
        shape: float,
        scale: np.ndarray,
        positions: int,
        *,
        new: bool,
        h_start: np.ndarray,
        rng: np.random.Generator,
    ) -> None:
        self.k = float(shape)
        self.eta = np.asarray(scale, dtype=float)
        n = len(self.eta)
        self.a = 1.0 / self.k  # the forward-recurrence law's gamma shape
        self.mean = self.eta * math.gamma(1.0 + 1.0 / self.k)
        h = np.asarray(h_start, dtype=float)
        #: Per row, the next failure (profile clock) of each position that has failed (inf pads).
        self.pending = np.full((n, 0), np.inf)
        if new:
            # Every position new at the profile's 0; a row that starts later (a preview's stretch) lives its
            # positions' failures up to its start first.
            self.groups: list[list[Any]] = [[NEW, np.full(n, positions, dtype=np.int64), np.zeros(n)]]
            if np.any(h > 0):
                self.draw(rng, np.zeros(n), np.maximum(h, 0.0))
        else:
            self.groups = [[STEADY, np.full(n, positions, dtype=np.int64), h]]

    def _z(self, x: np.ndarray) -> np.ndarray:
        """``(x / eta)^k`` per row (0 where eta is inf)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(np.isfinite(self.eta), (np.maximum(x, 0.0) / self.eta) ** self.k, 0.0)
        return np.asarray(out)

    def _x(self, z: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """The age whose ``(x / eta)^k`` is ``z``."""
        return np.asarray(eta * np.maximum(z, 0.0) ** self.a)

    def _lives(self, rng: np.random.Generator, eta: np.ndarray) -> np.ndarray:
        """Weibull lives of the rows' scales ``eta`` (an array of any shape)."""
        return np.asarray(eta * rng.standard_exponential(eta.shape) ** self.a)

    def _first(
        self, rng: np.random.Generator, law: int, left: np.ndarray, base: np.ndarray, h0: np.ndarray, h1: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """One group's failures in ``[h0, h1)``: their times (rows, inf pads) and the group's count left."""
        z0, z1 = self._z(h0 - base), self._z(h1 - base)
        if law == NEW:
            q = -np.expm1(-(z1 - z0))
        else:
            p0, p1, s0, s1 = (
                special.gammainc(self.a, z0),
                special.gammainc(self.a, z1),
                special.gammaincc(self.a, z0),
                special.gammaincc(self.a, z1),
            )
            with np.errstate(divide="ignore", invalid="ignore"):
                q = np.where(p0 < 0.5, (p1 - p0), (s0 - s1)) / s0
            q = np.where(s0 > 0, q, 1.0)
        q = np.clip(np.nan_to_num(q, nan=0.0), 0.0, 1.0)
        count = rng.binomial(left, q)
        width = int(count.max(initial=0))
        if width == 0:
            return np.full((len(left), 0), np.inf), left
        live = np.arange(width)[None, :] < count[:, None]
        v = rng.random((len(left), width)) * q[:, None]
        if law == NEW:
            z = z0[:, None] - np.log1p(-v)
        else:
            p = p0[:, None] + v * s0[:, None]
            low = p < 0.5
            with np.errstate(invalid="ignore"):
                z = np.where(
                    low,
                    special.gammaincinv(self.a, np.where(low, p, 0.0)),
                    special.gammainccinv(self.a, np.where(low, 1.0, s0[:, None] * (1.0 - v))),
                )
        eta = np.broadcast_to(self.eta[:, None], z.shape)
        times = base[:, None] + self._x(z, eta)
        # (a time rounded onto the chunk's edges stays inside it)
        times = np.clip(times, h0[:, None], np.nextafter(h1, -np.inf)[:, None])
        return np.where(live, times, np.inf), left - count

    def draw(self, rng: np.random.Generator, h0: np.ndarray, h1: np.ndarray) -> np.ndarray:
        """The class's failures in ``[h0, h1)`` (per row, profile clock): (rows, width), inf pads, not sorted."""
        n = len(h0)
        rows_out: list[np.ndarray] = []
        vals_out: list[np.ndarray] = []
        firsts = []
        for g in self.groups:
            times, g[1] = self._first(rng, g[0], g[1], g[2], h0, h1)
            if times.shape[1]:
                firsts.append(times)
        queue = self.pending
        if firsts:  # the positions failing for the first time now have a next failure too
            new = np.concatenate(firsts, axis=1)
            r, c = np.nonzero(np.isfinite(new))
            rows_out.append(r)
            vals_out.append(new[r, c])
            new[r, c] += self._lives(rng, self.eta[r])
            queue = np.concatenate([queue, new], axis=1)
        while True:
            r, c = np.nonzero(queue < h1[:, None])
            if not len(r):
                break
            v = queue[r, c]
            rows_out.append(r)
            vals_out.append(v)
            queue[r, c] = v + self._lives(rng, self.eta[r])
        live = np.isfinite(queue)
        self.pending = _packed(queue) if live.sum() < 0.5 * live.size else queue
        if not rows_out:
            return np.full((n, 0), np.inf)
        rows, vals = np.concatenate(rows_out), np.concatenate(vals_out)
        order = np.argsort(rows, kind="stable")
        rows, vals = rows[order], vals[order]
        counts = np.bincount(rows, minlength=n)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        out = np.full((n, int(counts.max())), np.inf)
        out[rows, np.arange(len(rows)) - starts[rows]] = vals
        return out

    def span(self, h0: np.ndarray, target: float) -> float:
        """About how long on the profile's clock from ``h0`` (per row) until ``target`` failures of the busiest row:
        for the original positions from their law, for those renewed from their mean life (a chunk's length)."""
        spans = [np.inf]
        mean = np.where(np.isfinite(self.mean), self.mean, np.inf)
        for law, left, base in self.groups:
            busy = left > 0
            if not busy.any():
                continue
            frac = np.minimum(target / np.maximum(left, 1), 0.999)
            if law == NEW:
                x0 = np.maximum(h0 - base, 0.0)
                x1 = self._x(self._z(x0) - np.log1p(-frac), self.eta)
                spans.append(float(np.min(np.where(busy, x1 - x0, np.inf))))
            else:  # (the forward-recurrence density is at most 1 / mean)
                spans.append(float(np.min(np.where(busy, frac * mean, np.inf))))
        renewed = np.isfinite(self.pending).sum(axis=1)
        if renewed.any():
            spans.append(float(np.min(np.where(renewed > 0, target * mean / np.maximum(renewed, 1), np.inf))))
        return max(min(spans), 1e-9)
