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
  start-up or end bias.

Each spacing between two unplanned interruptions (almost all of them) costs a
handful of in-place array operations on top of drawing its exponential. A
trial's window may be split into sub-windows (independent Poisson pieces
joined at their edges), so memory stays bounded whatever the scenario: rows
are (trial, sub-window) pairs, processed in chunks of at most
``CHUNK_ELEMENTS`` spacings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri, pdtr

from .model import Scenario
from .intervals import HoursAccumulator, interval_parts, whole_interval_parts
from .params import Params

__all__ = [
    "Layout",
    "RawTrials",
    "Cancelled",
    "plan_layout",
    "simulate_trials",
    "simulate_intervals",
    "MAX_TOTAL_EVENTS",
]

#: Expected interruptions in one row before a trial's window is split into sub-windows.
ROW_EVENT_CAP = 1 << 17
#: Spacings per chunk (a chunk's arrays are a few times this many float64s).
CHUNK_ELEMENTS = 1 << 18
#: Upper bound when a caller asks for more rows per chunk (16 MB per array).
CHUNK_MAX_ELEMENTS = 1 << 21
#: Refuse scenarios that would simulate more interruptions than this (summed over trials).
MAX_TOTAL_EVENTS = 4_000_000_000

_STREAM_COUNTS, _STREAM_ARRANGE, _STREAM_EDGES, _STREAM_SPACINGS, _STREAM_COMPONENTS = range(1, 6)


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


def _rng(seed: int, *words: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, *words])))


def _poisson_by_inversion(u: np.ndarray, mean: float) -> np.ndarray:
    """Poisson(mean) quantiles of ``u``: the smallest k with CDF(k) >= u.

    Monotone in ``mean``, so nearby scenarios share their draws. A Cornish-Fisher guess is
    corrected step by step with the exact CDF; most entries need no step at all.
    """
    if mean <= 0:
        return np.zeros(u.shape, dtype=np.int64)
    z = ndtri(u)
    k = np.floor(mean + math.sqrt(mean) * z + (z * z - 1.0) / 6.0 + 0.5).clip(min=0.0)
    active = np.arange(k.size)
    for _ in range(10_000):
        ka, ua = k[active], u[active]
        up = pdtr(ka, mean) < ua
        down = ~up & (ka > 0)
        down[down] = pdtr(ka[down] - 1.0, mean) >= ua[down]
        moving = up | down
        if not moving.any():
            break
        k[active] = ka + up - down
        active = active[moving]
    return k.astype(np.int64)


def _uniforms(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.clip(rng.random(shape), 1e-15, 1.0 - 1e-15)


@dataclass
class _Rows:
    """Per-row draws: counts and the kinds of interruption around each spacing."""

    n_unplanned: np.ndarray
    n_planned: np.ndarray
    first_planned: np.ndarray  # the row's first interruption is planned
    last_planned: np.ndarray
    pf: np.ndarray  # interior spacings from a planned to an unplanned interruption
    fp: np.ndarray
    pp: np.ndarray
    order: np.ndarray  # rows sorted by their count's uniform: equal counts share chunks, in every scenario

    @property
    def n(self) -> np.ndarray:
        return self.n_unplanned + self.n_planned


def _draw_rows(p: Params, seed: int, rows: int, sub_hours: float) -> _Rows:
    u = _uniforms(_rng(seed, _STREAM_COUNTS), (rows, 2))
    nf = _poisson_by_inversion(u[:, 0], p.lam * sub_hours)
    npl = _poisson_by_inversion(u[:, 1], p.mu * sub_hours)
    rng = _rng(seed, _STREAM_ARRANGE)
    # In a random arrangement of k planned among m unplanned, the k + 1 gaps of unplanned ones
    # (before, between, after the planned) hold t non-empty gaps, t ~ Hypergeometric(k + 1, m - 1, m).
    has_f = nf > 0
    t = rng.hypergeometric(npl + 1, np.where(has_f, nf - 1, 0), nf)
    ua, ub = _uniforms(rng, (2, rows))
    k = npl
    a = ua < t / (k + 1)  # the gap before the first planned one is non-empty
    b = ub < (t - a) / np.maximum(k, 1)  # the gap after the last planned one is non-empty
    has_p = k > 0
    runs = np.where(has_p, 1 + t - a - b, 0)
    first_p = has_p & ~a
    last_p = has_p & ~b
    return _Rows(
        nf,
        npl,
        first_p,
        last_p,
        pf=np.where(has_p, runs - last_p, 0),
        fp=np.where(has_p, runs - first_p, 0),
        pp=np.where(has_p, k - runs, 0),
        order=np.argsort(u[:, 0], kind="stable"),
    )


def _special_columns(rows: _Rows, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Position in ``idx``, spacing index and kinds (starts planned, ends planned) of the
    spacings next to a planned interruption, for the rows ``idx``.

    Each row's are its spacings 2, 3, ...: first those from a planned to an unplanned interruption,
    then unplanned to planned, then planned to planned. (np.repeat is used throughout: it is several
    times faster here than gathering with an index array.)
    """
    pf, fp, pp = rows.pf[idx], rows.fp[idx], rows.pp[idx]
    count = pf + fp + pp
    total = int(count.sum())
    position = np.repeat(np.arange(len(count)), count)
    within = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    pf_c = np.repeat(pf, count)
    starts_planned = (within < pf_c) | (within >= np.repeat(pf + fp, count))
    return position, 2 + within, starts_planned, within >= pf_c


class _Specials:
    """The spacings next to a planned interruption, for all rows in chunk order.

    Found once for every row (not chunk by chunk); each chunk gathers their lengths into ``g``, and
    :meth:`add_to` adds their hours once all chunks have run.
    """

    BLOCK = 1 << 14  # elements per pass when adding: small arrays stay in the allocator's heap

    def __init__(self, rows: _Rows, p: Params, step: int) -> None:
        self.step = step
        self.position, self.spacing, self.starts_p, self.ends_p = _special_columns(rows, rows.order)
        nchunks = -(-len(rows.order) // step)
        self.bounds = np.searchsorted(self.position, np.arange(nchunks + 1) * step)
        self.rows = rows.order[self.position]
        self.down = p.r_unplanned + (p.r_planned - p.r_unplanned) * self.starts_p
        self.g = np.zeros(len(self.position))

    def chunk_slice(self, chunk: int) -> slice:
        return slice(int(self.bounds[chunk]), int(self.bounds[chunk + 1]))

    def add_to(self, acc: HoursAccumulator, tau: float, c: float) -> None:
        for a in range(0, len(self.g), self.BLOCK):
            b = a + self.BLOCK
            parts = whole_interval_parts(self.g[a:b], self.down[a:b], self.ends_p[a:b], tau, c)
            acc.add(self.rows[a:b], parts, self.starts_p[a:b])


class _Workspace:
    """Buffers reused by every chunk: fresh large arrays would cost a page fault per 4 KiB."""

    def __init__(self, elements: int, width: int) -> None:
        self.e = np.empty(elements)
        self.x = np.empty(elements)
        self.ones = np.ones(width)

    def views(self, width: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k = width * m
        return self.e[:k].reshape(width, m), self.x[:k].reshape(width, m), self.ones[:width]


def _pad_index(n: np.ndarray, width: int) -> np.ndarray:
    """Flat indices, in a (width, len(n)) array, of the cells below each column's n + 1 spacings."""
    m = len(n)
    lens = width - 1 - n
    col = np.repeat(np.arange(m), lens)
    within = np.arange(len(col)) - np.repeat(np.cumsum(lens) - lens, lens)
    return (n[col] + 1 + within) * m + col


def _run_chunk(p: Params, rows: _Rows, idx: np.ndarray, width: int, sub_hours: float,
               rng: np.random.Generator, accs: list[HoursAccumulator], taus: np.ndarray,
               pieces: np.ndarray, work: _Workspace, special: "_Specials", chunk: int) -> None:
    """Simulate the rows ``idx`` (one column of spacings per row, drawn in one call) for every interval in
    ``taus``; the draws are shared, so the intervals see common random numbers at little extra cost."""
    n = rows.n[idx]
    m = len(n)
    e, x, ones = work.views(width, m)
    rng.standard_exponential(out=e)
    e.reshape(-1)[_pad_index(n, width)] = 0.0
    total = ones @ e  # column sums (a matrix-vector product is faster than e.sum(axis=0))
    scale = sub_hours / total  # hours per unit: the spacings fill the sub-window exactly
    pieces[0, idx] = e[0] * scale
    removed = e[0].copy()
    if width > 1:
        pieces[1, idx] = e[1] * scale
        removed += e[1]
    e[:2] = 0.0
    sl = special.chunk_slice(chunk)
    if sl.stop > sl.start:
        col = special.position[sl] - chunk * special.step
        flat = special.spacing[sl] * m + col
        values = e.reshape(-1)[flat]
        e.reshape(-1)[flat] = 0.0
        removed += np.bincount(col, values, m)
        special.g[sl] = values * scale[col]  # their parts are added after the last chunk
    bulk = total - removed
    span = scale * bulk
    if width <= 2:
        return
    for acc, tau in zip(accs, taus):
        s = tau + p.c
        # Bulk: spacings between two unplanned interruptions; zeroed cells contribute nothing.
        # With b = scale / s, the complete segments in a spacing are floor(max(e b - R/s, 0)).
        b = scale / s
        np.multiply(e, b[None, :], out=x)
        x -= p.r_unplanned / s
        np.maximum(x, 0.0, out=x)
        beyond_recovery = (ones @ x) / b  # sum of max(e - R/scale, 0)
        np.floor(x, out=x)
        segments = ones @ x
        recovery = scale * (bulk - beyond_recovery)
        acc.useful[idx] += segments * tau
        acc.checkpoint[idx] += segments * p.c
        acc.recovery[idx] += recovery
        acc.lost[idx] += np.maximum(span - recovery - segments * s, 0.0)


def _edges(p: Params, rows: _Rows, pieces: np.ndarray, trials: int, sub: int, seed: int, sub_hours: float,
           taus: np.ndarray) -> list[HoursAccumulator]:
    """Sum the spacings that cross sub-window and window edges, trial by trial, for each interval."""
    rng = _rng(seed, _STREAM_EDGES)
    u = _uniforms(rng, (4, trials))
    big = p.lam + p.mu
    before = -np.log(u[0]) / big if big > 0 else np.full(trials, np.inf)
    after = -np.log(u[1]) / big if big > 0 else np.full(trials, np.inf)
    p_planned = p.mu / big if big > 0 else 0.0
    start_p0 = u[2] < p_planned
    end_p_last = u[3] < p_planned

    n = rows.n
    has = n > 0
    pieces_per_row = np.where(has, 2, 1)
    nrows = len(n)
    row_trial = np.arange(nrows) // sub
    first_piece_pos = np.cumsum(pieces_per_row) - pieces_per_row + 2 * row_trial + 1
    row_bounds = np.concatenate(([0], np.cumsum(pieces_per_row)))
    trial_first = row_bounds[np.arange(trials) * sub] + 2 * np.arange(trials)
    trial_last = row_bounds[(np.arange(trials) + 1) * sub] + 2 * np.arange(trials) + 1
    total = int(row_bounds[-1]) + 2 * trials

    vals = np.zeros(total)
    ends = np.zeros(total, dtype=bool)
    kind_planned = np.zeros(total, dtype=bool)  # for a gap's first piece: starts planned; for its end: ends planned
    end_planned = np.zeros(total, dtype=bool)
    vals[trial_first] = np.where(np.isfinite(before), before, 0.0)
    kind_planned[trial_first] = start_p0
    vals[trial_last] = np.where(np.isfinite(after), after, 0.0)
    ends[trial_last] = True
    end_planned[trial_last] = end_p_last
    # A row with interruptions: its first piece ends a gap, its last piece starts one.
    fp = first_piece_pos
    vals[fp] = np.where(has, pieces[0], sub_hours)
    ends[fp] = has
    end_planned[fp] = has & rows.first_planned
    lp = fp[has] + 1
    vals[lp] = pieces[1][has]
    kind_planned[lp] = rows.last_planned[has]

    gap = np.cumsum(ends) - ends
    ngaps = int(ends.sum())
    g = np.bincount(gap, vals, ngaps)
    starts = np.ones(total, dtype=bool)
    starts[1:] = ends[:-1]
    starts_planned = kind_planned[starts]
    ends_planned = end_planned[ends]
    first_gap = gap[trial_first]
    last_gap = gap[trial_last]
    gap_trial = np.repeat(np.arange(trials), last_gap - first_gap + 1)
    lo = np.zeros(ngaps)
    lo[first_gap] = vals[trial_first]
    hi = g.copy()
    hi[last_gap] -= vals[trial_last]
    down = np.where(starts_planned, p.r_planned, p.r_unplanned) if big > 0 else np.zeros(ngaps)
    out = []
    for tau in taus:
        if big == 0:
            # No interruptions ever: one endless interval, entered at a uniformly random phase of the
            # checkpoint cycle (steady state), and nothing in progress is ever rolled back.
            lo = u[2] * (tau + p.c)
            hi = lo + p.hours
            g = hi + tau + p.c
            ends_planned = np.ones(ngaps, dtype=bool)
        acc = HoursAccumulator(trials)
        acc.add(gap_trial, interval_parts(g, down, ends_planned, lo, hi, tau, p.c), starts_planned)
        out.append(acc)
    return out


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
    return simulate_intervals(scenario, params, [params.tau], layout=layout, progress=progress,
                              should_stop=should_stop, components=components)[0]


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
    rows = _draw_rows(params, seed, nrows, sub_hours)
    accs = [HoursAccumulator(nrows) for _ in taus]
    pieces = np.zeros((2, nrows))  # each row's first and last spacing, joined across rows by _edges
    step = layout.rows_per_chunk
    starts = np.arange(0, nrows, step)
    widths = np.maximum.reduceat(rows.n[rows.order], starts) + 1
    sizes = widths * (np.minimum(starts + step, nrows) - starts)
    work = _Workspace(int(sizes.max()), int(widths.max()))
    special = _Specials(rows, params, step)
    nchunks = len(starts)
    for i in range(nchunks):
        if should_stop is not None and should_stop():
            raise Cancelled()
        idx = rows.order[i * step : (i + 1) * step]
        _run_chunk(params, rows, idx, int(widths[i]), sub_hours, _rng(seed, _STREAM_SPACINGS, i), accs, taus,
                   pieces, work, special, i)
        if progress is not None:
            progress((i + 1) / nchunks)
    for acc, tau in zip(accs, taus):
        special.add_to(acc, tau, params.c)
    edges = _edges(params, rows, pieces, trials, sub, seed, sub_hours, taus)

    def per_trial(a: np.ndarray) -> np.ndarray:
        return a.reshape(trials, sub).sum(axis=1)

    unplanned = per_trial(rows.n_unplanned)
    planned = per_trial(rows.n_planned)
    rates = np.array([c.rate_per_gpu_hour for c in scenario.components])
    if components and rates.sum() > 0:
        by_comp = _rng(seed, _STREAM_COMPONENTS).multinomial(unplanned, rates / rates.sum())
    else:
        by_comp = np.zeros((trials, len(rates)), dtype=np.int64)
    return [
        RawTrials(
            unplanned=unplanned,
            planned=planned,
            by_component=by_comp,
            useful=per_trial(acc.useful) + edge.useful,
            checkpoint=per_trial(acc.checkpoint) + edge.checkpoint,
            lost_work=per_trial(acc.lost) + edge.lost,
            recovery=per_trial(acc.recovery) + edge.recovery,
            planned_restart=per_trial(acc.planned) + edge.planned,
        )
        for acc, edge in zip(accs, edges)
    ]
