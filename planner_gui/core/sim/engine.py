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

Rates that vary (rate uncertainty: a rate per trial; a rate profile: a rate per piece of the window,
each piece its own rows) change only the rows' lengths and Poisson means and the rates at the window's
edges (:mod:`.varying`, ``docs/engine.md``, "Rates that vary"); constant rates run exactly as before.

Where the time goes
-------------------
A chunk is one matrix of exponentials (negated: the logs of uniforms, see :func:`_draw_chunk`) with a
column per row and a *slot* per place a spacing can take (slots x rows), filled by one call to the
generator and one to numpy's log, about 40 % of the cost. The spacings are grouped by kind in bands of
slots, so every spacing costs a few in-place whole-array operations on top of its draw, with no gathers
or scatters; the bulk's passes go a block at a time while it is in cache (:mod:`.chunk_sums`). The
buffers are kept per thread between runs: new ones would be mapped afresh and fault on every page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..model.scenario import Scenario
from ..model.specs import MAX_TOTAL_EVENTS  # re-exported: the limit callers check before a run
from ..theory.params import Params
from ..theory.profiles import Pieces
from ..util.streams import stream
from .chunk_sums import CHUNK_ELEMENTS, ChunkHours, _Workspace
from .edges import draw_edges, edge_hours
from .intervals import HoursAccumulator
from .rows import STREAM_COMPONENTS, STREAM_SPACINGS, Rows, draw_rows, draw_rows_at, split_by_rates
from .varying import VaryingRates, row_pieces, varying_rates

__all__ = [
    "MAX_TOTAL_EVENTS",
    "Cancelled",
    "Layout",
    "RawTrials",
    "layout_for",
    "plan_layout",
    "plan_varying_layout",
    "simulate_intervals",
    "simulate_trials",
]

#: Expected interruptions in one row before a trial's window is split into sub-windows.
ROW_EVENT_CAP = 1 << 17
#: Upper bound when a caller asks for more rows per chunk (16 MB per array).
CHUNK_MAX_ELEMENTS = 1 << 21


class Cancelled(Exception):
    """Raised when the caller's ``should_stop`` callback asks the engine to stop."""


@dataclass(frozen=True)
class Layout:
    """How trials are cut into rows and chunks; equal layouts give common random numbers."""

    subwindows: int
    rows_per_chunk: int
    #: With a rate profile: the rows of each of its pieces in the window (they add up to ``subwindows``).
    splits: tuple[int, ...] | None = None


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


def layout_for(scenario: Scenario, params: Params, min_rows: int = 1) -> Layout:
    """The layout :func:`simulate_intervals` chooses for ``scenario`` at ``params`` (with at least ``min_rows``
    rows per chunk): sweeps share it across their points."""
    p, var = varying_rates(scenario, params)
    if var is None:
        return plan_layout((p.lam + p.mu) * p.hours, scenario.trials, min_rows)
    lam = float(var.lams(p.lam, scenario.trials).max())
    return plan_varying_layout(lam, p.mu, var.pieces, scenario.trials, min_rows)


def plan_varying_layout(lam: float, mu: float, p: Pieces, trials: int, min_rows: int = 1) -> Layout:
    """:func:`plan_layout` for a rate profile's pieces ``p``: each piece is cut into as many rows as its
    expected interruptions need at the unplanned rate ``lam`` (the highest of the trials', times the
    piece's multiplier) and the planned rate ``mu``; rows per chunk follow the largest row."""
    events = (lam * p.multipliers + mu) * p.lengths
    splits = np.maximum(1, np.ceil(events / ROW_EVENT_CAP)).astype(int)
    per_row = float(np.max(events / splits))
    slots = per_row + 6.0 * math.sqrt(per_row) + 8.0
    rows = max(int(CHUNK_ELEMENTS // slots), min(min_rows, int(CHUNK_MAX_ELEMENTS // slots)))
    sub = int(splits.sum())
    return Layout(sub, max(1, min(trials * sub, rows)), tuple(int(k) for k in splits))


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


def _draw_chunk(chunks: _Chunks, i: int, rng: np.random.Generator, work: _Workspace) -> tuple[np.ndarray, np.ndarray]:
    """Chunk ``i``'s matrix of spacings (slots x rows, in units of the generator) and its column sums, both
    **negated**: each slot holds ``log U = -E`` for a uniform ``U`` and a standard exponential ``E``. numpy's
    vectorised log of uniforms is faster than its exponential sampler; the sign costs nothing, because every
    spacing is used through its column's scale (:func:`_accumulate_chunk`), which is negative too.

    A column holds a row's ``n + 1`` spacings. Slots 0 and 1 are its first and last (they cross the
    row's edges and are joined by :func:`.edges.edge_hours`). Then come three bands, one for each
    kind of spacing next to a planned interruption, UP, PP and PU (heights ``chunks.bands[i]``, the
    chunk's largest counts of each). The rest is the bulk, UU spacings. The matrix is drawn in one
    call, then the slots a column does not use are set to zero: a spacing of length zero adds
    nothing to any sum. A column that drew ``U = 0`` (once in 2^53 draws; its log is infinite) is
    drawn again.
    """
    sl = chunks.rows(i)
    n = chunks.n[sl]
    slots = int(chunks.slots[i])
    e = work.view(slots, len(n))
    rng.random(out=e)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.log(e, out=e)
        _mask_unused(chunks, i, e, np.arange(len(n)))
        total = work.ones[:slots] @ e  # a matrix-vector product is faster than e.sum(axis=0)
        bad = np.flatnonzero(~np.isfinite(total))
        while bad.size:
            again = np.log(rng.random((slots, bad.size)))
            _mask_unused(chunks, i, again, bad)
            e[:, bad] = again
            total[bad] = work.ones[:slots] @ again
            bad = bad.compress(~np.isfinite(total.take(bad)))
    return e, total


def _mask_unused(chunks: _Chunks, i: int, e: np.ndarray, cols: np.ndarray) -> None:
    """Zero the slots that columns ``cols`` of chunk ``i`` do not use, in ``e`` (their matrix)."""
    n = chunks.n[chunks.rows(i)].take(cols)
    slots = e.shape[0]
    if slots > 1:
        e[1] *= n > 0  # a row without interruptions is one spacing
    if slots > 2:
        limits = chunks.kinds[:, chunks.rows(i)].take(cols, axis=1)
        slot = 2
        for height, limit in zip(chunks.bands[i], limits):
            e[slot : slot + height] *= np.arange(height)[:, None] < limit
            slot += height
        uu = n - 1 - limits.sum(axis=0)
        lo = slot + max(int(uu.min()), 0)  # every column fills the bulk slots above this one
        e[lo:] *= np.arange(lo - slot, slots - slot)[:, None] < uu


def _accumulate_chunk(
    p: Params,
    chunks: _Chunks,
    i: int,
    e: np.ndarray,
    total: np.ndarray,
    sub_hours: float,
    accs: list[HoursAccumulator],
    taus: np.ndarray,
    pieces: np.ndarray,
    work: _Workspace,
) -> None:
    """Scale chunk ``i``'s spacings ``e`` (column sums ``total``; both negated, see :func:`_draw_chunk`) to
    fill each row's ``sub_hours``, store its first and last spacing (hours) in ``pieces`` and add the hours
    of the others to ``accs``, one per interval in ``taus``. ``accs`` and ``pieces`` are indexed in chunk
    order."""
    sl = chunks.rows(i)
    slots = e.shape[0]
    scale = sub_hours / total  # hours per unit (negative): the spacings fill the sub-window exactly
    pieces[0, sl] = e[0] * scale
    if slots > 1:
        pieces[1, sl] = e[1] * scale
    if slots <= 2:
        return
    hours = ChunkHours(p, e, total, scale, work, chunks.bands[i])
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
    e, total = _draw_chunk(chunks, i, rng, work)
    _accumulate_chunk(p, chunks, i, e, total, sub_hours, accs, taus, pieces, work)


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
    row_hours: np.ndarray | None = None,
) -> tuple[list[HoursAccumulator], np.ndarray]:
    """Every chunk's pass: per interval, the hours of the rows' interior spacings, and each row's first
    and last spacing (``pieces``, hours), all in row order. ``row_hours`` gives each row's length when
    they differ (a rate profile); None: ``params.hours / layout.subwindows``."""
    nrows = len(rows.n)
    sub_hours = params.hours / layout.subwindows
    sorted_hours = None if row_hours is None else row_hours[rows.order]
    chunks = _Chunks.plan(rows, layout.rows_per_chunk)
    accs = [HoursAccumulator(nrows) for _ in taus]  # in chunk order until the last chunk is done
    pieces = np.zeros((2, nrows))
    sizes = chunks.slots * np.diff(np.minimum(np.arange(len(chunks) + 1) * chunks.step, nrows))
    work = _Workspace.get(int(sizes.max()), int(chunks.slots.max()))
    for i in range(len(chunks)):
        if should_stop is not None and should_stop():
            raise Cancelled()
        hours = sub_hours if sorted_hours is None else sorted_hours[chunks.rows(i)]
        _run_chunk(params, chunks, i, hours, stream(seed, STREAM_SPACINGS, i), accs, taus, pieces, work)
        if progress is not None:
            progress((i + 1) / len(chunks))
    unsort = np.argsort(rows.order)
    for acc in accs:
        acc.reorder(unsort)
    return accs, pieces[:, unsort]


class _Drawn(NamedTuple):
    """A run's rows, the hours of their interior spacings and of their gaps across edges, per interval."""

    rows: Rows
    sub: int  # rows per trial
    accs: list[HoursAccumulator]
    edges: list[HoursAccumulator]


def _constant(params: Params, trials: int, seed: int, taus: np.ndarray, layout: Layout | None, **run: Any) -> _Drawn:
    """Constant rates: every row of every trial has the same means."""
    if layout is None:
        layout = plan_layout((params.lam + params.mu) * params.hours, trials)
    sub = layout.subwindows
    rows = draw_rows(params, seed, trials * sub, params.hours / sub)
    accs, pieces = _run_chunks(params, rows, layout, seed, taus, **run)
    return _Drawn(rows, sub, accs, edge_hours(params, rows, pieces, sub, draw_edges(params, trials, seed), taus))


def _varying(
    params: Params, var: VaryingRates, trials: int, seed: int, taus: np.ndarray, layout: Layout | None, **run: Any
) -> _Drawn:
    """Rates that vary between trials or over the window (:mod:`.varying`): each row its own means."""
    lams = var.lams(params.lam, trials)
    if layout is None or layout.splits is None or len(layout.splits) != len(var.pieces):
        layout = plan_varying_layout(float(lams.max()), params.mu, var.pieces, trials)
    assert layout.splits is not None
    one = row_pieces(var.pieces, layout.splits)
    sub = len(one)
    row_hours = np.tile(one.hours, trials)
    unplanned = (lams[:, None] * (one.multipliers * one.hours)[None, :]).ravel()
    rows = draw_rows_at(seed, unplanned, params.mu * row_hours)
    accs, pieces = _run_chunks(params, rows, layout, seed, taus, row_hours=row_hours, **run)
    outside = draw_edges(params, trials, seed, lams * var.pieces.multipliers[0], lams * var.after)
    return _Drawn(rows, sub, accs, edge_hours(params, rows, pieces, sub, outside, taus, row_hours))


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
    run and the results share their draws exactly (common random numbers). A rate profile or rate
    uncertainty in ``scenario`` makes the rates vary (:mod:`.varying`); ``params.lam`` is then the rate
    they multiply.
    """
    taus = np.asarray(taus, dtype=float)
    trials, seed = scenario.trials, scenario.seed
    params, var = varying_rates(scenario, params)
    run: dict[str, Any] = {"progress": progress, "should_stop": should_stop}
    if var is None:
        drawn = _constant(params, trials, seed, taus, layout, **run)
    else:
        drawn = _varying(params, var, trials, seed, taus, layout, **run)
    return _assemble(scenario, params.hours, drawn, var.comp_rates if var is not None else None, components)


def _assemble(
    scenario: Scenario, window: float, drawn: _Drawn, comp_rates: np.ndarray | None, components: bool
) -> list[RawTrials]:
    """Per-trial results, one per interval: the rows summed per trial, the edges added, the interruptions
    split among the components."""
    trials, sub = scenario.trials, drawn.sub

    def per_trial(a: np.ndarray) -> np.ndarray:
        out: np.ndarray = a.reshape(trials, sub).sum(axis=1)
        return out

    def hours(in_rows: np.ndarray, edge: np.ndarray) -> np.ndarray:
        # Sums of differences carry rounding of a few units in the last place of the window's hours:
        # it must not show as goodput above 100% or as negative hours.
        out: np.ndarray = np.clip(per_trial(in_rows) + edge, 0.0, window)
        return out

    unplanned = per_trial(drawn.rows.n_unplanned)
    by_comp = _split(scenario, unplanned, comp_rates, components)
    return [
        RawTrials(
            unplanned=unplanned,
            planned=per_trial(drawn.rows.n_planned),
            by_component=by_comp,
            useful=hours(acc.useful, edge.useful),
            checkpoint=hours(acc.checkpoint, edge.checkpoint),
            lost_work=hours(acc.lost, edge.lost),
            recovery=hours(acc.recovery, edge.recovery),
            planned_restart=hours(acc.planned, edge.planned),
        )
        for acc, edge in zip(drawn.accs, drawn.edges)
    ]


def _split(scenario: Scenario, unplanned: np.ndarray, comp_rates: np.ndarray | None, components: bool) -> np.ndarray:
    """Each trial's unplanned interruptions split among the failure classes (the components, then the correlated
    events), in proportion to their rates (the trial's own, ``comp_rates``, with rate uncertainty: the engine table
    gives the general engine correlated failures beside those); zeros when ``components`` is False."""
    rates = np.array([c.rate_per_gpu_hour for c in scenario.failure_components])
    if not components:
        return np.zeros((len(unplanned), len(rates)), dtype=np.int64)
    return split_by_rates(
        stream(scenario.seed, STREAM_COMPONENTS), unplanned, rates if comp_rates is None else comp_rates
    )
