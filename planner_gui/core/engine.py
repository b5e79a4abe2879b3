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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import pdtrik

from .model import Scenario
from .params import Params

__all__ = ["Layout", "RawTrials", "Cancelled", "plan_layout", "simulate_trials", "MAX_TOTAL_EVENTS"]

#: Expected interruptions in one row before a trial's window is split into sub-windows.
ROW_EVENT_CAP = 1 << 17
#: Spacings per chunk (a chunk's arrays are a few times this many float64s).
CHUNK_ELEMENTS = 1 << 18
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


def plan_layout(expected_events_per_trial: float, trials: int) -> Layout:
    """Choose sub-windows per trial and rows per chunk for a trial of this many expected events."""
    subwindows = max(1, math.ceil(expected_events_per_trial / ROW_EVENT_CAP))
    per_row = expected_events_per_trial / subwindows
    width = per_row + 6.0 * math.sqrt(per_row) + 8.0
    rows = max(1, min(trials * subwindows, int(CHUNK_ELEMENTS // width)))
    return Layout(subwindows, rows)


def _rng(seed: int, *words: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, *words])))


def _poisson_by_inversion(u: np.ndarray, mean: float) -> np.ndarray:
    """Poisson(mean) quantiles of ``u``: monotone in ``mean``, so nearby scenarios share draws."""
    if mean <= 0:
        return np.zeros(u.shape, dtype=np.int64)
    # pdtrik inverts the Poisson CDF continuously; the count is the smallest k with CDF(k) >= u.
    return np.ceil(pdtrik(u, mean) - 1e-9).clip(min=0).astype(np.int64)


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
    )


def interval_parts(
    g: np.ndarray, down: np.ndarray, saved: np.ndarray, lo: np.ndarray, hi: np.ndarray, tau: float, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hours of (downtime, useful, checkpoint, lost) within ``[lo, hi]`` of intervals between interruptions.

    An interval of length ``g`` starts with ``down`` hours of downtime, then runs segments of ``tau``
    compute plus ``c`` write. If the interruption that ends it is planned (``saved``), the work in
    progress is kept; otherwise it is lost. ``lo``/``hi`` are offsets from the interval's start.
    """
    s = tau + c
    complete = np.floor(np.maximum(g - down, 0.0) / s)

    def cumulative(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        y = np.maximum(x - down, 0.0)
        k = np.minimum(np.floor(y / s), complete)
        w = np.maximum(y - k * s, 0.0)
        keep = (k < complete) | saved
        useful = k * tau + np.where(keep, np.minimum(w, tau), 0.0)
        write = k * c + np.where(keep, np.maximum(w - tau, 0.0), 0.0)
        return np.minimum(x, down), useful, write

    d1, u1, w1 = cumulative(hi)
    d0, u0, w0 = cumulative(lo)
    dt, ut, wt = d1 - d0, u1 - u0, w1 - w0
    return dt, ut, wt, np.maximum((hi - lo) - dt - ut - wt, 0.0)


class _Accumulator:
    """Per-row sums of hours, filled chunk by chunk."""

    def __init__(self, rows: int) -> None:
        self.useful = np.zeros(rows)
        self.checkpoint = np.zeros(rows)
        self.lost = np.zeros(rows)
        self.recovery = np.zeros(rows)
        self.planned = np.zeros(rows)
        self.first_piece = np.zeros(rows)
        self.last_piece = np.zeros(rows)

    def add(self, idx: np.ndarray, parts: tuple[np.ndarray, ...], starts_planned: np.ndarray) -> None:
        dt, ut, wt, lt = parts
        n = len(self.useful)
        self.useful += np.bincount(idx, ut, n)
        self.checkpoint += np.bincount(idx, wt, n)
        self.lost += np.bincount(idx, lt, n)
        self.recovery += np.bincount(idx, np.where(starts_planned, 0.0, dt), n)
        self.planned += np.bincount(idx, np.where(starts_planned, dt, 0.0), n)


def _special_columns(rows: _Rows, sl: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Row, column and kinds (starts planned, ends planned) of the spacings next to a planned interruption."""
    pf, fp, pp = rows.pf[sl], rows.fp[sl], rows.pp[sl]
    count = pf + fp + pp
    total = int(count.sum())
    row = np.repeat(np.arange(len(count)), count)
    within = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    col = 2 + within
    pf_r, fp_r = pf[row], fp[row]
    starts_planned = (within < pf_r) | (within >= pf_r + fp_r)
    ends_planned = within >= pf_r
    return row, col, starts_planned, ends_planned


def _run_chunk(p: Params, rows: _Rows, sl: slice, sub_hours: float, rng: np.random.Generator,
               acc: _Accumulator) -> None:
    n = rows.n[sl]
    m = len(n)
    width = int(n.max()) + 1
    e = rng.standard_exponential((width, m))
    if width > 1:
        e *= np.arange(width)[:, None] <= n[None, :]
    scale = sub_hours / e.sum(axis=0)  # hours per unit: the spacings fill the sub-window exactly
    acc.first_piece[sl] = e[0] * scale
    if width > 1:
        acc.last_piece[sl] = e[1] * scale
    row, col, starts_p, ends_p = _special_columns(rows, sl)
    if len(row):
        g = e[col, row] * scale[row]
        e[col, row] = 0.0
        down = np.where(starts_p, p.r_planned, p.r_unplanned)
        parts = interval_parts(g, down, ends_p, np.zeros_like(g), g, p.tau, p.c)
        acc.add(row + sl.start, parts, starts_p)
    e[:2] = 0.0
    if width <= 2:
        return
    # Bulk: spacings between two unplanned interruptions (zeros elsewhere contribute nothing).
    a = p.r_unplanned / scale
    x = np.subtract(e, a[None, :])
    np.maximum(x, 0.0, out=x)
    beyond_recovery = x.sum(axis=0)
    total = e.sum(axis=0)
    x *= (scale / p.s)[None, :]
    np.floor(x, out=x)
    segments = x.sum(axis=0)
    recovery = scale * (total - beyond_recovery)
    span = scale * total
    acc.useful[sl] += segments * p.tau
    acc.checkpoint[sl] += segments * p.c
    acc.recovery[sl] += recovery
    acc.lost[sl] += np.maximum(span - recovery - segments * p.s, 0.0)


def _edges(p: Params, rows: _Rows, acc: _Accumulator, trials: int, sub: int, seed: int,
           sub_hours: float) -> _Accumulator:
    """Sum the spacings that cross sub-window and window edges, trial by trial."""
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
    vals[fp] = np.where(has, acc.first_piece, sub_hours)
    ends[fp] = has
    end_planned[fp] = has & rows.first_planned
    lp = fp[has] + 1
    vals[lp] = acc.last_piece[has]
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
    if big == 0:  # no interruptions at all: one endless interval covering the window
        lo[:] = 0.0
        hi[:] = g
    down = np.where(starts_planned, p.r_planned, p.r_unplanned) if big > 0 else np.zeros(ngaps)
    parts = interval_parts(g, down, ends_planned, lo, hi, p.tau, p.c)
    acc_trials = _Accumulator(trials)
    acc_trials.add(gap_trial, parts, starts_planned)
    return acc_trials


def simulate_trials(
    scenario: Scenario,
    params: Params,
    *,
    layout: Layout | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
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
    """
    trials, seed = scenario.trials, scenario.seed
    big = params.lam + params.mu
    if layout is None:
        layout = plan_layout(big * params.hours, trials)
    sub = layout.subwindows
    sub_hours = params.hours / sub
    nrows = trials * sub
    rows = _draw_rows(params, seed, nrows, sub_hours)
    acc = _Accumulator(nrows)
    step = layout.rows_per_chunk
    nchunks = -(-nrows // step)
    for i in range(nchunks):
        if should_stop is not None and should_stop():
            raise Cancelled()
        sl = slice(i * step, min(nrows, (i + 1) * step))
        _run_chunk(params, rows, sl, sub_hours, _rng(seed, _STREAM_SPACINGS, i), acc)
        if progress is not None:
            progress((i + 1) / nchunks)
    edge = _edges(params, rows, acc, trials, sub, seed, sub_hours)

    def per_trial(a: np.ndarray) -> np.ndarray:
        return a.reshape(trials, sub).sum(axis=1)

    unplanned = per_trial(rows.n_unplanned)
    rates = np.array([c.rate_per_gpu_hour for c in scenario.components])
    if rates.sum() > 0 and len(rates):
        by_comp = _rng(seed, _STREAM_COMPONENTS).multinomial(unplanned, rates / rates.sum())
    else:
        by_comp = np.zeros((trials, len(rates)), dtype=np.int64)
    return RawTrials(
        unplanned=unplanned,
        planned=per_trial(rows.n_planned),
        by_component=by_comp,
        useful=per_trial(acc.useful) + edge.useful,
        checkpoint=per_trial(acc.checkpoint) + edge.checkpoint,
        lost_work=per_trial(acc.lost) + edge.lost,
        recovery=per_trial(acc.recovery) + edge.recovery,
        planned_restart=per_trial(acc.planned) + edge.planned,
    )
