"""The hours of a chunk's interior spacings, band by band (see :mod:`.engine` and docs/engine.md), and the
buffers every chunk reuses.

Within a band every spacing has the same downtime and the same fate of the work in progress at its end,
so each band costs a few whole-array operations on the (band x rows) block of the chunk's matrix.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

from ..theory.params import Params
from .intervals import HoursAccumulator

__all__ = ["CHUNK_ELEMENTS", "ChunkHours", "multiply_columns"]

#: Spacings per chunk (8 MiB of float64s). The work per chunk that does not grow with its size (a
#: hundred-odd numpy calls) is then small beside its draws; the passes that go through every spacing
#: are made a block at a time in cache (``BLOCK_ELEMENTS``), so the chunk need not fit there.
CHUNK_ELEMENTS = 1 << 20
#: Spacings of the bulk worked on at a time (512 KiB): each block's several passes then run in the core's
#: cache instead of going out to memory for each.
BLOCK_ELEMENTS = 1 << 16


class _Workspace:
    """Buffers reused by every chunk, and kept per thread between runs.

    Fresh large arrays are mapped anew by the allocator, and the first write to each 4 KiB page
    faults (a couple of microseconds each on a virtual machine, several milliseconds per run).
    """

    _local = threading.local()
    #: Largest buffer kept between runs (elements); a bigger one is freed with its run.
    KEEP_ELEMENTS = CHUNK_ELEMENTS * 2

    def __init__(self, elements: int, slots: int) -> None:
        self.e = np.empty(elements)  # the chunk's spacings
        self.x = np.empty(0)  # the bands' running times, then each block of the bulk's (see scratch)
        self.y = np.empty(0)  # the bands' whole cycles
        self.ones = np.ones(slots)

    @classmethod
    def get(cls, elements: int, slots: int) -> _Workspace:
        kept: _Workspace | None = getattr(cls._local, "work", None)
        if kept is not None and len(kept.e) >= elements and len(kept.ones) >= slots:
            return kept
        work = cls(elements, slots)
        if elements <= cls.KEEP_ELEMENTS:
            cls._local.work = work
        return work

    def view(self, slots: int, m: int) -> np.ndarray:
        """A (slots, m) view of e."""
        return self.e[: slots * m].reshape(slots, m)

    def scratch(self, elements: int) -> tuple[np.ndarray, np.ndarray]:
        """x and y, of at least ``elements`` each (flat)."""
        if len(self.x) < elements:
            self.x, self.y = np.empty(elements), np.empty(elements)
        return self.x, self.y


#: Elements in numpy's inner loop that make a broadcast multiply as cheap as a scalar one.
_LONG_LOOP = 4096


def multiply_columns(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = a * b`` for a C-contiguous (slots, m) ``a`` and an (m,) ``b``.

    Broadcast slot by slot, numpy's inner loop is only m long and its per-loop overhead makes the
    multiply cost twice a scalar one. Viewing k slots as one (k m,) line and tiling b k times gives
    an inner loop of at least ``_LONG_LOOP`` elements.
    """
    slots, m = a.shape
    k = max(1, min(slots, -(-_LONG_LOOP // max(m, 1))))
    full = slots // k * k
    if full:
        np.multiply(a[:full].reshape(-1, k * m), np.tile(b, k), out=out[:full].reshape(-1, k * m))
    np.multiply(a[full:], b, out=out[full:])


class _BandSums(NamedTuple):
    """Column sums over a chunk's bands, for one interval (see :meth:`ChunkHours.add`)."""

    run_up: np.ndarray  # x over UP (downtime R)
    run_planned_start: np.ndarray  # x over PP and PU (downtime r)
    run_kept: np.ndarray  # x over UP and PP (work in progress kept)
    run_lost: np.ndarray  # x over PU (lost)
    k_kept: np.ndarray  # floor(x) over UP and PP
    k_lost: np.ndarray  # floor(x) over PU
    kept_compute: np.ndarray  # min(frac(x), tau / s) over UP and PP


class ChunkHours:
    """Sums the hours of a chunk's interior spacings into accumulators, one interval at a time.

    Within a band every spacing has the same downtime (``R`` after an unplanned interruption, ``r``
    after a planned one) and the same fate of the work in progress at its end (kept before a planned
    interruption, lost before an unplanned one), so each band costs a few whole-array operations.
    What does not depend on the interval is computed once, here.
    """

    def __init__(
        self, p: Params, e: np.ndarray, total: np.ndarray, scale: np.ndarray, work: _Workspace, bands: np.ndarray
    ) -> None:
        self.p, self.e, self.scale = p, e, scale
        slots, m = e.shape
        h_up, h_pp, h_pu = (int(h) for h in bands)
        self.top = 2 + h_up + h_pp + h_pu  # the first bulk slot
        self.per = max(1, min(slots - self.top, BLOCK_ELEMENTS // max(m, 1)))  # bulk slots per block
        x, y = work.scratch(max(self.top, self.per) * m)
        self.x, self.y = x[: self.top * m].reshape(self.top, m), y[: self.top * m].reshape(self.top, m)
        self.block = x[: self.per * m]
        self.ones = work.ones[:slots]
        self.h_up = h_up  # within the bands: UP first (downtime R), then PP and PU (downtime r)
        self.h_kept = h_up + h_pp  # UP and PP keep the work in progress, PU loses it
        self.down = np.empty((self.top - 2, 1))
        self.down[:h_up] = p.r_unplanned
        self.down[h_up:] = p.r_planned
        self.e_up = self._colsum(e[2 : 2 + h_up])
        self.e_planned_start = self._colsum(e[2 + h_up : self.top])
        self.e_bulk = total - e[0] - e[1] - self.e_up - self.e_planned_start

    def _colsum(self, a: np.ndarray) -> np.ndarray:
        out: np.ndarray = self.ones[: len(a)] @ a  # a matrix-vector product is faster than a.sum(axis=0)
        return out

    def _running(self, slots: slice, b: np.ndarray, r: float | np.ndarray) -> np.ndarray:
        """x = max(e b - r, 0) in ``slots``: with b = scale / s and r = D / s, each spacing's time
        after its downtime, in checkpoint cycles of s = tau + c."""
        x = self.x[slots]
        multiply_columns(self.e[slots], b, x)
        x -= r
        np.maximum(x, 0.0, out=x)
        return x

    def add(self, acc: HoursAccumulator, sl: slice, tau: float) -> None:
        """Add the hours for a checkpoint interval ``tau`` to rows ``sl`` of ``acc``.

        In each spacing, floor(x) cycles of tau + c complete. Of the rest, frac(x) s, the first tau
        is compute and the remainder a write, both kept when a planned interruption ends the spacing
        (UP, PP) and lost otherwise (PU, UU). What x leaves of the spacing is its downtime.
        """
        p = self.p
        s = tau + p.c
        b = self.scale / s
        band = self._bands(b, s, tau)
        run_bulk, k_bulk = self._bulk(b, s)
        segments = band.k_kept + band.k_lost + k_bulk
        acc.useful[sl] += segments * tau + s * band.kept_compute
        # frac(x) - min(frac(x), tau / s): the write in progress, where it is kept
        acc.checkpoint[sl] += segments * p.c + s * np.maximum(band.run_kept - band.k_kept - band.kept_compute, 0.0)
        acc.lost[sl] += s * (np.maximum(band.run_lost - band.k_lost, 0.0) + np.maximum(run_bulk - k_bulk, 0.0))
        acc.recovery[sl] += self.scale * (self.e_up + self.e_bulk) - s * (band.run_up + run_bulk)
        acc.planned[sl] += self.scale * self.e_planned_start - s * band.run_planned_start

    def _bands(self, b: np.ndarray, s: float, tau: float) -> _BandSums:
        """Column sums over the bands (UP, PP, PU) for an interval with ``s = tau + c``."""
        h_up, h_kept = self.h_up, self.h_kept
        x = self._running(slice(2, self.top), b, self.down / s)
        run_up, run_planned_start = self._colsum(x[:h_up]), self._colsum(x[h_up:])
        run_kept, run_lost = self._colsum(x[:h_kept]), self._colsum(x[h_kept:])
        whole = self.y[2 : self.top]
        np.floor(x, out=whole)
        k_kept, k_lost = self._colsum(whole[:h_kept]), self._colsum(whole[h_kept:])
        frac = np.subtract(x[:h_kept], whole[:h_kept], out=x[:h_kept])
        np.minimum(frac, tau / s, out=frac)
        return _BandSums(run_up, run_planned_start, run_kept, run_lost, k_kept, k_lost, self._colsum(frac))

    def _bulk(self, b: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
        """Column sums over the bulk (UU: downtime R, work in progress lost) of x and floor(x).

        The bulk is most of the chunk; it is worked on ``BLOCK_ELEMENTS`` at a time, each block's passes
        (scale, shift, clamp, a sum, floor, a sum) running while it is in cache.
        """
        e = self.e[self.top :]
        slots, m = e.shape
        r = self.p.r_unplanned / s
        run, k = np.zeros(m), np.zeros(m)
        per, x = self.per, self.block
        tiled = np.tile(b, per)  # one block's slots as one line, so numpy's inner loop is long
        ones = self.ones[:per]
        full = slots // per * per
        for lo in range(0, full, per):
            np.multiply(e[lo : lo + per].reshape(-1), tiled, out=x)
            self._clamped_sums(x.reshape(per, m), r, ones, run, k)
        if full < slots:
            rest = x[: (slots - full) * m].reshape(slots - full, m)
            np.multiply(e[full:], b, out=rest)
            self._clamped_sums(rest, r, ones[: slots - full], run, k)
        return run, k

    @staticmethod
    def _clamped_sums(x: np.ndarray, r: float, ones: np.ndarray, run: np.ndarray, k: np.ndarray) -> None:
        """Add the column sums of max(x - r, 0) to ``run`` and of its floor to ``k`` (x is overwritten)."""
        x -= r
        np.maximum(x, 0.0, out=x)
        run += ones @ x
        np.floor(x, out=x)
        k += ones @ x
