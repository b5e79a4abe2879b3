"""Vectorized Monte Carlo of the checkpoint/restart model in :mod:`.exact`.

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

The per-row draws (counts, arrangement) are in :mod:`.rows`, the joining of
spacings across edges in :mod:`.edges`. A trial's window may be split into sub-windows (independent Poisson pieces
joined at their edges), so memory stays bounded whatever the scenario: rows
are (trial, sub-window) pairs, processed in chunks of at most
``CHUNK_ELEMENTS`` spacings.

Where the time goes
-------------------
A chunk is one (spacings x rows) matrix of exponentials, filled by one call
to the generator, which is most of the cost. The spacings are grouped by kind
in bands of matrix rows (see :func:`_run_chunk`), so every spacing costs a
few in-place whole-array operations on top of its draw, with no gathers or
scatters, and no temporaries larger than a band. The buffers are kept per thread between
runs: new ones would be mapped afresh and fault on every page.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .edges import edge_hours
from .intervals import HoursAccumulator
from .model import Scenario
from .params import Params
from .rows import STREAM_COMPONENTS, STREAM_SPACINGS, Rows, draw_rows, stream

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
#: Refuse scenarios that would simulate more interruptions than this (summed over trials).
MAX_TOTAL_EVENTS = 4_000_000_000


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
    width = per_row + 6.0 * math.sqrt(per_row) + 8.0
    rows = max(int(CHUNK_ELEMENTS // width), min(min_rows, int(CHUNK_MAX_ELEMENTS // width)))
    return Layout(subwindows, max(1, min(trials * subwindows, rows)))


class _Workspace:
    """Buffers reused by every chunk, and kept per thread between runs.

    Fresh large arrays are mapped anew by the allocator, and the first write to each 4 KiB page
    faults (a couple of microseconds each on a virtual machine, several milliseconds per run).
    """

    _local = threading.local()
    #: Largest buffer kept between runs (elements); a bigger one is freed with its run.
    KEEP_ELEMENTS = CHUNK_ELEMENTS * 4

    def __init__(self, elements: int, width: int) -> None:
        self.e = np.empty(elements)
        self.x = np.empty(elements)
        self.y = np.empty(elements)  # only its first rows are used (the planned bands)
        self.zeros = np.zeros(elements)  # never written: np.maximum is several times faster on two arrays
        self.ones = np.ones(width)

    @classmethod
    def get(cls, elements: int, width: int) -> _Workspace:
        kept = getattr(cls._local, "work", None)
        if kept is not None and len(kept.e) >= elements and len(kept.ones) >= width:
            return kept
        work = cls(elements, width)
        if elements <= cls.KEEP_ELEMENTS:
            cls._local.work = work
        return work

    def views(self, width: int, m: int) -> tuple[np.ndarray, ...]:
        """(width, m) views of e, x, y and zeros, and ``width`` ones."""
        k = width * m
        return (*(a[:k].reshape(width, m) for a in (self.e, self.x, self.y, self.zeros)), self.ones[:width])


@dataclass(frozen=True)
class _Chunks:
    """The rows in chunk order (sorted by ``Rows.order``) and the shape of each chunk's matrix
    (see :func:`_run_chunk`). Chunk ``i`` is the slice ``[i * step, (i + 1) * step)`` of these rows."""

    step: int
    n: np.ndarray  # interruptions per row
    kinds: np.ndarray  # (3, rows): counts of fp, pp and pf spacings (see Rows), the order of the bands
    bands: np.ndarray  # (chunks, 3): each chunk's largest count of each kind, the heights of its bands
    widths: np.ndarray  # matrix rows per chunk

    @classmethod
    def plan(cls, rows: Rows, step: int) -> _Chunks:
        n = rows.n[rows.order]
        kinds = np.stack((rows.fp, rows.pp, rows.pf))[:, rows.order]
        starts = np.arange(0, len(n), step)
        bands = np.maximum.reduceat(kinds, starts, axis=1).T
        bulk = np.maximum.reduceat(n - 1 - kinds.sum(axis=0), starts)
        widths = np.where(np.maximum.reduceat(n, starts) > 0, 2 + bands.sum(axis=1) + np.maximum(bulk, 0), 1)
        return cls(step, n, kinds, bands, widths)

    def __len__(self) -> int:
        return len(self.widths)

    def rows(self, i: int) -> slice:
        return slice(i * self.step, (i + 1) * self.step)


#: Elements in numpy's inner loop that make a broadcast multiply as cheap as a scalar one.
_LONG_ROW = 4096


def _multiply_columns(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = a * b`` for a C-contiguous (rows, m) ``a`` and an (m,) ``b``.

    Broadcast row by row, numpy's inner loop is only m long and its per-loop overhead makes the
    multiply cost twice a scalar one. Viewing k rows as one (k m,) row and tiling b k times gives
    an inner loop of at least ``_LONG_ROW`` elements.
    """
    rows, m = a.shape
    k = max(1, min(rows, -(-_LONG_ROW // max(m, 1))))
    full = rows // k * k
    if full:
        np.multiply(a[:full].reshape(-1, k * m), np.tile(b, k), out=out[:full].reshape(-1, k * m))
    np.multiply(a[full:], b, out=out[full:])


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
    """Simulate chunk ``i`` (one column of spacings per row, drawn in one call) for every interval in
    ``taus``; the draws are shared, so the intervals see common random numbers at little extra cost.
    ``accs`` and ``pieces`` are indexed in chunk order.

    A column holds a row's ``n + 1`` spacings. Rows 0 and 1 of the matrix are its first and last (they
    cross the row's edges and are joined by :func:`.edges.edge_hours`). Then come three bands, one for each kind of
    spacing next to a planned interruption: from an unplanned to a planned one, planned to planned, and
    planned to unplanned (heights ``bands``, the chunk's largest counts of each). The rest is the bulk,
    spacings between two unplanned interruptions. Cells a column does not use are zero, and a spacing
    of length zero adds nothing to any sum. Within a band every spacing has the same downtime (``R``)
    and the same fate of the work in progress at its end (kept before a planned interruption, lost
    before an unplanned one), so each band costs a few whole-array operations.
    """
    sl = chunks.rows(i)
    n = chunks.n[sl]
    width = int(chunks.widths[i])
    m = len(n)
    e, x, y, zeros, ones = work.views(width, m)
    rng.standard_exponential(out=e)
    if width > 1:
        e[1] *= n > 0  # a row without interruptions is one spacing
    if width > 2:
        limits = chunks.kinds[:, sl]
        row = 2
        for height, limit in zip(chunks.bands[i], limits):
            e[row : row + height] *= np.arange(height)[:, None] < limit
            row += height
        bulk_count = n - 1 - limits.sum(axis=0)
        lo = row + max(int(bulk_count.min()), 0)  # every column fills the bulk rows above this one
        e[lo:] *= np.arange(lo - row, width - row)[:, None] < bulk_count
    total = ones @ e  # column sums (a matrix-vector product is faster than e.sum(axis=0))
    scale = sub_hours / total  # hours per unit: the spacings fill the sub-window exactly
    pieces[0, sl] = e[0] * scale
    if width > 1:
        pieces[1, sl] = e[1] * scale
    if width <= 2:
        return
    fp, pp, pf = (int(h) for h in chunks.bands[i])
    top = 2 + fp + pp + pf  # the first bulk row
    saved = slice(2, 2 + fp + pp)  # the work in progress is kept: a planned interruption ends them
    planned_start = slice(2 + fp, top)
    bulk = slice(top, width)
    r_band = np.empty((top - 2, 1))
    r_band[:fp] = p.r_unplanned
    r_band[fp:] = p.r_planned

    def running(rows: slice, b: np.ndarray, r: float | np.ndarray) -> np.ndarray:
        """x = max(e b - r, 0) in ``rows``: with b = scale / s and r = R / s, the spacing's time
        after its downtime, in segments of s = tau + c."""
        _multiply_columns(e[rows], b, x[rows])
        x[rows] -= r
        np.maximum(x[rows], zeros[rows], out=x[rows])
        return x[rows]

    def colsum(a: np.ndarray) -> np.ndarray:
        return ones[: len(a)] @ a

    e_fp, e_planned_start = colsum(e[2 : 2 + fp]), colsum(e[planned_start])
    e_bulk = total - e[0] - e[1] - e_fp - e_planned_start
    for acc, tau in zip(accs, taus):
        s = tau + p.c
        b = scale / s
        # Bands: floor(x) segments of tau + c complete. Of the rest, frac(x) s, the first tau is kept
        # compute and the remainder a write when a planned interruption ends the spacing; otherwise
        # it is lost.
        xb = running(slice(2, top), b, r_band / s)
        run_fp, run_ps = colsum(xb[:fp]), colsum(xb[fp:])
        run_kept, run_lost = colsum(xb[: fp + pp]), colsum(xb[fp + pp :])
        whole = y[2:top]
        np.floor(xb, out=whole)
        k_kept, k_lost = colsum(whole[: fp + pp]), colsum(whole[fp + pp :])
        frac = np.subtract(x[saved], y[saved], out=x[saved])
        np.minimum(frac, tau / s, out=frac)
        kept_compute = colsum(frac)
        # Bulk: the same with one downtime and all work in progress lost.
        xb = running(bulk, b, p.r_unplanned / s)
        run = colsum(xb)
        np.floor(xb, out=xb)
        k_bulk = colsum(xb)
        segments = k_kept + k_lost + k_bulk
        acc.useful[sl] += segments * tau + s * kept_compute
        acc.checkpoint[sl] += segments * p.c + s * np.maximum(run_kept - k_kept - kept_compute, 0.0)
        acc.lost[sl] += s * (np.maximum(run_lost - k_lost, 0.0) + np.maximum(run - k_bulk, 0.0))
        acc.recovery[sl] += scale * (e_fp + e_bulk) - s * (run_fp + run)
        acc.planned[sl] += scale * e_planned_start - s * run_ps


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
    big = params.lam + params.mu
    if layout is None:
        layout = plan_layout(big * params.hours, trials)
    sub = layout.subwindows
    sub_hours = params.hours / sub
    nrows = trials * sub
    rows = draw_rows(params, seed, nrows, sub_hours)
    chunks = _Chunks.plan(rows, layout.rows_per_chunk)
    accs = [HoursAccumulator(nrows) for _ in taus]  # in chunk order until the last chunk is done
    pieces = np.zeros((2, nrows))  # each row's first and last spacing, joined across rows by edge_hours
    sizes = chunks.widths * np.diff(np.minimum(np.arange(len(chunks) + 1) * chunks.step, nrows))
    work = _Workspace.get(int(sizes.max()), int(chunks.widths.max()))
    for i in range(len(chunks)):
        if should_stop is not None and should_stop():
            raise Cancelled()
        _run_chunk(params, chunks, i, sub_hours, stream(seed, STREAM_SPACINGS, i), accs, taus, pieces, work)
        if progress is not None:
            progress((i + 1) / len(chunks))
    unsort = np.argsort(rows.order)
    pieces = pieces[:, unsort]
    for acc in accs:
        acc.reorder(unsort)
    edges = edge_hours(params, rows, pieces, sub, seed, taus)

    def per_trial(a: np.ndarray) -> np.ndarray:
        return a.reshape(trials, sub).sum(axis=1)

    def hours(rows: np.ndarray, edge: np.ndarray) -> np.ndarray:
        # Sums of differences carry rounding of a few units in the last place of the window's hours:
        # it must not show as goodput above 100% or as negative hours.
        return np.clip(per_trial(rows) + edge, 0.0, params.hours)

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
