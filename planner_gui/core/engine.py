"""Vectorized Monte Carlo of the checkpoint/restart model in :mod:`.exact`.

docs/engine.md explains the engine step by step, with a worked example; this is the summary.

How a trial is simulated
------------------------
The window is a snapshot of a long job in its steady state (as Meta's 54-day
Llama 3 snapshot was). Interruptions of both kinds form one Poisson process of
rate ``Lambda = lam + mu`` on the whole time line, each one unplanned with
probability ``lam / Lambda``, and every interruption starts the job afresh.
So a trial is fully described by

* the number of interruptions in the window, ``N_u ~ Poisson(lam T)`` and
  ``N_p ~ Poisson(mu T)``, drawn by inversion from fixed uniforms so that
  nearby scenarios share their randomness (common random numbers);
* the ``N + 1`` spacings between them, drawn as normalised exponentials (the
  uniform-spacings construction), which are exchangeable: their order in time
  does not matter for totals, only which kinds of interruption bound each one;
* which spacings have a planned interruption at either end (a few per planned
  interruption), drawn from the exact law of a random arrangement
  (a hypergeometric number of runs), and
* the time since the last interruption before the window (``A ~ Exp(Lambda)``)
  and to the first one after it (``B``), which put the window in steady state
  and make the expected goodput *equal* to the exact expression, with no
  start-up or end bias. Only what the window can see of them is drawn (where
  it starts in the downtime or checkpoint cycle, and whether the cycle running
  at its end completes; see :mod:`.edges`), so they stay short however rare
  interruptions are.

The per-row draws (counts, arrangement) are in :mod:`.rows`, the joining of spacings across edges
in :mod:`.edges`. A trial's window may be split into sub-windows (independent Poisson pieces joined
at their edges), so memory stays bounded whatever the scenario: *rows* are (trial, sub-window)
pairs, the unit of draws, processed in chunks of at most ``CHUNK_ELEMENTS`` spacings.

Where the time goes
-------------------
A chunk is one matrix of exponentials with a column per row and a *slot* per place a spacing can
take (slots x rows), filled by one call to the generator, which is most of the cost. The spacings
are grouped by kind in bands of slots (see :func:`_draw_chunk`), so every spacing costs a few
in-place whole-array operations on top of its draw, with no gathers or scatters, and no
temporaries larger than a band. The buffers are kept per thread between runs: new ones would be
mapped afresh and fault on every page.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .edges import draw_edges, edge_hours
from .intervals import HoursAccumulator
from .model import Scenario
from .params import Params
from .rows import STREAM_COMPONENTS, STREAM_SPACINGS, Rows, draw_rows, stream
from .specs import MAX_TOTAL_EVENTS  # re-exported: the limit callers check before a run

__all__ = [
    "MAX_TOTAL_EVENTS",
    "Cancelled",
    "Layout",
    "RawTrials",
    "plan_layout",
    "simulate_intervals",
    "simulate_trials",
]

#: Expected interruptions in one row before a trial's window is split into sub-windows.
ROW_EVENT_CAP = 1 << 17
#: Spacings per chunk (a chunk's arrays are a few times this many float64s).
CHUNK_ELEMENTS = 1 << 18
#: Upper bound when a caller asks for more rows per chunk (16 MB per array).
CHUNK_MAX_ELEMENTS = 1 << 21


class Cancelled(Exception):
    """Raised when the caller's ``should_stop`` callback asks the engine to stop."""


@dataclass(frozen=True)
class Layout:
    """How trials are cut into rows and chunks; equal layouts give common random numbers."""

    subwindows: int
    rows_per_chunk: int


@dataclass
class RawTrials:
    """Per-trial outputs of :func:`simulate_trials` (hours in the window)."""

    unplanned: np.ndarray
    planned: np.ndarray
    by_component: np.ndarray
    useful: np.ndarray
    checkpoint: np.ndarray
    lost_work: np.ndarray
    recovery: np.ndarray
    planned_restart: np.ndarray


def plan_layout(expected_events_per_trial: float, trials: int, min_rows: int = 1) -> Layout:
    """Choose sub-windows per trial and rows per chunk for a trial of this many expected events.

    ``min_rows`` asks for at least that many rows per chunk (sweeps share one layout across points, and
    small points would otherwise run as many tiny chunks); chunks still stay under ``CHUNK_MAX_ELEMENTS``.
    """
    subwindows = max(1, math.ceil(expected_events_per_trial / ROW_EVENT_CAP))
    per_row = expected_events_per_trial / subwindows
    slots = per_row + 6.0 * math.sqrt(per_row) + 8.0  # enough for nearly every row's n + 1 spacings
    rows = max(int(CHUNK_ELEMENTS // slots), min(min_rows, int(CHUNK_MAX_ELEMENTS // slots)))
    return Layout(subwindows, max(1, min(trials * subwindows, rows)))


class _Workspace:
    """Buffers reused by every chunk, and kept per thread between runs.

    Fresh large arrays are mapped anew by the allocator, and the first write to each 4 KiB page
    faults (a couple of microseconds each on a virtual machine, several milliseconds per run).
    """

    _local = threading.local()
    #: Largest buffer kept between runs (elements); a bigger one is freed with its run.
    KEEP_ELEMENTS = CHUNK_ELEMENTS * 4

    def __init__(self, elements: int, slots: int) -> None:
        self.e = np.empty(elements)
        self.x = np.empty(elements)
        self.y = np.empty(elements)  # only its first slots are used (the bands)
        self.zeros = np.zeros(elements)  # never written: np.maximum is several times faster on two arrays
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

    def views(self, slots: int, m: int) -> tuple[np.ndarray, ...]:
        """(slots, m) views of e, x, y and zeros, and ``slots`` ones."""
        k = slots * m
        return (*(a[:k].reshape(slots, m) for a in (self.e, self.x, self.y, self.zeros)), self.ones[:slots])


@dataclass(frozen=True)
class _Chunks:
    """The rows in chunk order (sorted by ``Rows.order``) and the shape of each chunk's matrix
    (see :func:`_draw_chunk`). Chunk ``i`` is the slice ``[i * step, (i + 1) * step)`` of these rows."""

    step: int
    n: np.ndarray  # interruptions per row
    kinds: np.ndarray  # (3, rows): each row's UP, PP and PU spacings (see rows.py), the order of the bands
    bands: np.ndarray  # (chunks, 3): each chunk's largest count of each kind, the heights of its bands
    slots: np.ndarray  # per chunk, the slots of its matrix (its first dimension)

    @classmethod
    def plan(cls, rows: Rows, step: int) -> _Chunks:
        n = rows.n[rows.order]
        kinds = np.stack((rows.n_up, rows.n_pp, rows.n_pu))[:, rows.order]
        starts = np.arange(0, len(n), step)
        bands = np.maximum.reduceat(kinds, starts, axis=1).T
        bulk = np.maximum.reduceat(n - 1 - kinds.sum(axis=0), starts)  # the most UU spacings
        slots = np.where(np.maximum.reduceat(n, starts) > 0, 2 + bands.sum(axis=1) + np.maximum(bulk, 0), 1)
        return cls(step, n, kinds, bands, slots)

    def __len__(self) -> int:
        return len(self.slots)

    def rows(self, i: int) -> slice:
        return slice(i * self.step, (i + 1) * self.step)


#: Elements in numpy's inner loop that make a broadcast multiply as cheap as a scalar one.
_LONG_LOOP = 4096


def _multiply_columns(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
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


def _draw_chunk(chunks: _Chunks, i: int, rng: np.random.Generator, work: _Workspace) -> np.ndarray:
    """Chunk ``i``'s matrix of spacings (slots x rows, in units of the generator).

    A column holds a row's ``n + 1`` spacings. Slots 0 and 1 are its first and last (they cross the
    row's edges and are joined by :func:`.edges.edge_hours`). Then come three bands, one for each
    kind of spacing next to a planned interruption, UP, PP and PU (heights ``chunks.bands[i]``, the
    chunk's largest counts of each). The rest is the bulk, UU spacings. The matrix is drawn in one
    call, then the slots a column does not use are set to zero: a spacing of length zero adds
    nothing to any sum.
    """
    sl = chunks.rows(i)
    n = chunks.n[sl]
    slots = int(chunks.slots[i])
    e = work.views(slots, len(n))[0]
    rng.standard_exponential(out=e)
    if slots > 1:
        e[1] *= n > 0  # a row without interruptions is one spacing
    if slots > 2:
        limits = chunks.kinds[:, sl]
        slot = 2
        for height, limit in zip(chunks.bands[i], limits):
            e[slot : slot + height] *= np.arange(height)[:, None] < limit
            slot += height
        uu = n - 1 - limits.sum(axis=0)
        lo = slot + max(int(uu.min()), 0)  # every column fills the bulk slots above this one
        e[lo:] *= np.arange(lo - slot, slots - slot)[:, None] < uu
    return e


class _BandSums(NamedTuple):
    """Column sums over a chunk's bands, for one interval (see :meth:`_ChunkHours.add`)."""

    run_up: np.ndarray  # x over UP (downtime R)
    run_planned_start: np.ndarray  # x over PP and PU (downtime r)
    run_kept: np.ndarray  # x over UP and PP (work in progress kept)
    run_lost: np.ndarray  # x over PU (lost)
    k_kept: np.ndarray  # floor(x) over UP and PP
    k_lost: np.ndarray  # floor(x) over PU
    kept_compute: np.ndarray  # min(frac(x), tau / s) over UP and PP


class _ChunkHours:
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
        _, self.x, self.y, self.zeros, self.ones = work.views(slots, m)
        h_up, h_pp, h_pu = (int(h) for h in bands)
        self.top = 2 + h_up + h_pp + h_pu  # the first bulk slot
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
        _multiply_columns(self.e[slots], b, x)
        x -= r
        np.maximum(x, self.zeros[slots], out=x)
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
        """Column sums over the bulk (UU: downtime R, work in progress lost) of x and floor(x)."""
        x = self._running(slice(self.top, None), b, self.p.r_unplanned / s)
        run = self._colsum(x)
        np.floor(x, out=x)
        return run, self._colsum(x)


def _accumulate_chunk(
    p: Params,
    chunks: _Chunks,
    i: int,
    e: np.ndarray,
    sub_hours: float,
    accs: list[HoursAccumulator],
    taus: np.ndarray,
    pieces: np.ndarray,
    work: _Workspace,
) -> None:
    """Scale chunk ``i``'s spacings ``e`` to fill each row's ``sub_hours``, store its first and last
    spacing (hours) in ``pieces`` and add the hours of the others to ``accs``, one per interval in
    ``taus``. ``accs`` and ``pieces`` are indexed in chunk order."""
    sl = chunks.rows(i)
    slots = e.shape[0]
    total = work.ones[:slots] @ e  # column sums (a matrix-vector product is faster than e.sum(axis=0))
    scale = sub_hours / total  # hours per unit: the spacings fill the sub-window exactly
    pieces[0, sl] = e[0] * scale
    if slots > 1:
        pieces[1, sl] = e[1] * scale
    if slots <= 2:
        return
    hours = _ChunkHours(p, e, total, scale, work, chunks.bands[i])
    for acc, tau in zip(accs, taus):
        hours.add(acc, sl, tau)


def _run_chunk(
    p: Params,
    chunks: _Chunks,
    i: int,
    sub_hours: float,
    rng: np.random.Generator,
    accs: list[HoursAccumulator],
    taus: np.ndarray,
    pieces: np.ndarray,
    work: _Workspace,
) -> None:
    """Simulate chunk ``i`` for every interval in ``taus``; the draws are shared, so the intervals
    see common random numbers at little extra cost."""
    e = _draw_chunk(chunks, i, rng, work)
    _accumulate_chunk(p, chunks, i, e, sub_hours, accs, taus, pieces, work)


def simulate_trials(
    scenario: Scenario,
    params: Params,
    *,
    layout: Layout | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    components: bool = True,
) -> RawTrials:
    """Simulate ``scenario.trials`` independent trials of the window.

    Parameters
    ----------
    scenario
        Supplies trials, seed and the component mix.
    params
        Rates and times in hours (see :class:`.params.Params`).
    layout
        Rows and chunks; pass the same layout to several scenarios for common random numbers.
    progress
        Called with the fraction done after each chunk.
    should_stop
        Polled between chunks; returning True raises :class:`Cancelled`.
    components
        Split each trial's unplanned interruptions among the components (skip it for sweeps).
    """
    return simulate_intervals(
        scenario, params, [params.tau], layout=layout, progress=progress, should_stop=should_stop, components=components
    )[0]


def _run_chunks(
    params: Params,
    rows: Rows,
    layout: Layout,
    seed: int,
    taus: np.ndarray,
    progress: Callable[[float], None] | None,
    should_stop: Callable[[], bool] | None,
) -> tuple[list[HoursAccumulator], np.ndarray]:
    """Every chunk's pass: per interval, the hours of the rows' interior spacings, and each row's first
    and last spacing (``pieces``, hours), all in row order."""
    nrows = len(rows.n)
    sub_hours = params.hours / layout.subwindows
    chunks = _Chunks.plan(rows, layout.rows_per_chunk)
    accs = [HoursAccumulator(nrows) for _ in taus]  # in chunk order until the last chunk is done
    pieces = np.zeros((2, nrows))
    sizes = chunks.slots * np.diff(np.minimum(np.arange(len(chunks) + 1) * chunks.step, nrows))
    work = _Workspace.get(int(sizes.max()), int(chunks.slots.max()))
    for i in range(len(chunks)):
        if should_stop is not None and should_stop():
            raise Cancelled()
        _run_chunk(params, chunks, i, sub_hours, stream(seed, STREAM_SPACINGS, i), accs, taus, pieces, work)
        if progress is not None:
            progress((i + 1) / len(chunks))
    unsort = np.argsort(rows.order)
    for acc in accs:
        acc.reorder(unsort)
    return accs, pieces[:, unsort]


def simulate_intervals(
    scenario: Scenario,
    params: Params,
    taus: Sequence[float] | np.ndarray,
    *,
    layout: Layout | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    components: bool = True,
) -> list[RawTrials]:
    """:func:`simulate_trials` for several checkpoint intervals ``taus`` (hours) on the same draws.

    ``params.tau`` is ignored. The random numbers are drawn once, so this costs little more than one
    run and the results share their draws exactly (common random numbers).
    """
    taus = np.asarray(taus, dtype=float)
    trials, seed = scenario.trials, scenario.seed
    if layout is None:
        layout = plan_layout((params.lam + params.mu) * params.hours, trials)
    sub = layout.subwindows
    rows = draw_rows(params, seed, trials * sub, params.hours / sub)
    accs, pieces = _run_chunks(params, rows, layout, seed, taus, progress, should_stop)
    edges = edge_hours(params, rows, pieces, sub, draw_edges(params, trials, seed), taus)

    def per_trial(a: np.ndarray) -> np.ndarray:
        out: np.ndarray = a.reshape(trials, sub).sum(axis=1)
        return out

    def hours(in_rows: np.ndarray, edge: np.ndarray) -> np.ndarray:
        # Sums of differences carry rounding of a few units in the last place of the window's hours:
        # it must not show as goodput above 100% or as negative hours.
        out: np.ndarray = np.clip(per_trial(in_rows) + edge, 0.0, params.hours)
        return out

    unplanned = per_trial(rows.n_unplanned)
    planned = per_trial(rows.n_planned)
    rates = np.array([c.rate_per_gpu_hour for c in scenario.components])
    if components and rates.sum() > 0:
        by_comp = stream(seed, STREAM_COMPONENTS).multinomial(unplanned, rates / rates.sum())
    else:
        by_comp = np.zeros((trials, len(rates)), dtype=np.int64)
    return [
        RawTrials(
            unplanned=unplanned,
            planned=planned,
            by_component=by_comp,
            useful=hours(acc.useful, edge.useful),
            checkpoint=hours(acc.checkpoint, edge.checkpoint),
            lost_work=hours(acc.lost, edge.lost),
            recovery=hours(acc.recovery, edge.recovery),
            planned_restart=hours(acc.planned, edge.planned),
        )
        for acc, edge in zip(accs, edges)
    ]
