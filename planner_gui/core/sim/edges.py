"""The spacings that cross edges: between sub-windows of a trial, and at the ends of its window.

Each row's first and last spacing are only pieces of a spacing; the engine returns them as
``pieces`` and they are joined here, trial by trial, into whole *gaps* (the time from one
interruption to the next), with the time since the last interruption before the window and to the
first one after it (steady state).

Those two are exponential with mean ``1/Lambda``, which is astronomically long for tiny rates
(1e40 hours at 1e-40 per hour), and the hours inside the window would then be differences of such
numbers. They are not drawn as such: only what the window can see of them is (:func:`draw_edges`).

* The time since the last interruption, ``A``, matters only through where the window starts in the
  interval it begins: in its downtime ``D`` (probability ``1 - e^(-Lambda D)``; ``A`` is then an
  exponential truncated to ``[0, D)``), or otherwise at the phase ``(A - D) mod s`` of the checkpoint
  cycle ``s = tau + C``, which is an exponential truncated to ``[0, s)`` whatever the number of whole
  cycles before it (memorylessness). So ``A`` is drawn as ``D`` plus such a phase, by inversion.
* The time to the next interruption, ``B``, matters only through whether it comes before the cycle
  running at the window's end completes, which is within ``s`` of the end; it is capped at
  ``max(R, r) + 2 s``, a margin of more than a cycle against rounding.

Both are exact (the window's hours are the same as with the full draws), and every number handled
is then at most a few windows or cycles long. docs/engine.md works through an example.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..theory.params import Params
from ..util.streams import stream
from .intervals import HoursAccumulator, interval_parts
from .rows import STREAM_EDGES, Rows, uniforms

__all__ = ["EdgeDraws", "draw_edges", "edge_hours", "truncated_exponential"]


def truncated_exponential(v: np.ndarray, rate: float | np.ndarray, width: float) -> np.ndarray:
    """The ``v``-quantiles of an exponential of ``rate`` truncated to ``[0, width)``.

    ``-log1p(v expm1(-x)) / x`` in units of ``width``, with ``x = rate width``: accurate for any ``x``.
    Below ``x = 1e-100`` it is ``v``, uniform, to far better than double precision (and ``v expm1(-x)``
    would lose bits as a subnormal number). ``rate`` may be one per element of ``v``.
    """
    x = rate * width
    if np.ndim(x):
        with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
            q_each: np.ndarray = np.where(x < 1e-100, v, -np.log1p(v * np.expm1(-x)) / x) * width
        return q_each
    if x < 1e-100:
        uniform: np.ndarray = v * width
        return uniform
    q: np.ndarray = -np.log1p(v * np.expm1(-x)) / x * width
    return q


@dataclass(frozen=True)
class EdgeDraws:
    """Per trial, what the window sees of the interruptions just outside it (see the module docstring)."""

    big: float | np.ndarray  # Lambda, the rate of interruptions of both kinds before the window (or per trial)
    start_planned: np.ndarray  # the last interruption before the window was planned
    end_planned: np.ndarray  # the first one after it is planned
    down: np.ndarray  # the downtime D of the last one before the window
    in_down: np.ndarray  # the window starts within that downtime ...
    age_in_down: np.ndarray  # ... this long after the interruption (meaningful where in_down)
    phase: np.ndarray  # otherwise a uniform on [0, 1) that places the start in the checkpoint cycle
    until_next: np.ndarray  # B, from the window's end to the next interruption (inf for Lambda = 0)

    def before(self, s: float) -> np.ndarray:
        """Hours from the last interruption before the window to its start, for cycles of ``s`` hours:
        ``A`` itself within the downtime, else ``D`` plus the phase ``(A - D) mod s``."""
        out: np.ndarray = np.where(
            self.in_down, self.age_in_down, self.down + truncated_exponential(self.phase, self.big, s)
        )
        return out

    def after(self, s: float, longest_down: float) -> np.ndarray:
        """Hours from the window's end to the next interruption, capped where they stop mattering."""
        out: np.ndarray = np.minimum(self.until_next, longest_down + 2.0 * s)
        return out


def draw_edges(
    p: Params,
    trials: int,
    seed: int,
    lam_start: np.ndarray | None = None,
    lam_end: np.ndarray | None = None,
) -> EdgeDraws:
    """What each of ``trials`` trials sees outside its window, in steady state.

    Parameters
    ----------
    p
        Rates (``lam + mu`` is ``Lambda``) and downtimes.
    trials, seed
        How many trials, and the seed of the edges' stream.
    lam_start, lam_end
        Per trial, the unplanned rate before the window and after it, when they are not ``p.lam`` (a rate
        profile, rate uncertainty): the steady state before the window is that of ``lam_start``, and the
        next interruption after it comes at ``lam_end + mu``.

    Returns
    -------
    EdgeDraws
        Drawn by inversion from four uniforms per trial (phase or age, time to the next interruption,
        and the kinds of the interruptions before and after the window).
    """
    if lam_start is not None and lam_end is not None:
        return _draw_edges_varying(p, trials, seed, lam_start, lam_end)
    u = uniforms(stream(seed, STREAM_EDGES), (4, trials))
    big = p.lam + p.mu
    p_planned = p.mu / big if big > 0 else 0.0
    start_planned = u[2] < p_planned
    down = np.where(start_planned, p.r_planned, p.r_unplanned)
    # A = -log(1 - u[0]) / Lambda. It is under D, and so computed, when u[0] < 1 - e^(-Lambda D);
    # otherwise u[0] rescaled to a uniform on [0, 1) draws the phase.
    p_down = -np.expm1(-big * down)
    in_down = u[0] < p_down
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        age_in_down = -np.log1p(-u[0]) / big
        phase = np.where(in_down, 0.0, (u[0] - p_down) / (1.0 - p_down))
        until_next = -np.log(u[1]) / big  # inf when Lambda is 0 or tiny: after() caps it
    return EdgeDraws(big, start_planned, u[3] < p_planned, down, in_down, age_in_down, phase, until_next)


def _draw_edges_varying(p: Params, trials: int, seed: int, lam_start: np.ndarray, lam_end: np.ndarray) -> EdgeDraws:
    """:func:`draw_edges` with per-trial rates before and after the window, from the same uniforms."""
    u = uniforms(stream(seed, STREAM_EDGES), (4, trials))
    big, big_end = lam_start + p.mu, lam_end + p.mu
    with np.errstate(divide="ignore", invalid="ignore"):
        p_planned = np.where(big > 0, p.mu / big, 0.0)
        p_planned_end = np.where(big_end > 0, p.mu / big_end, 0.0)
    start_planned = u[2] < p_planned
    down = np.where(start_planned, p.r_planned, p.r_unplanned)
    p_down = -np.expm1(-big * down)
    in_down = u[0] < p_down
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        age_in_down = -np.log1p(-u[0]) / big
        phase = np.where(in_down, 0.0, (u[0] - p_down) / (1.0 - p_down))
        until_next = -np.log(u[1]) / big_end
    return EdgeDraws(big, start_planned, u[3] < p_planned_end, down, in_down, age_in_down, phase, until_next)


@dataclass(frozen=True)
class _Gaps:
    """The trials' pieces laid end to end, and which of them form each gap.

    Per trial the sequence is: a slot for ``before`` (left at 0), then each row's first piece and, if
    the row has interruptions, its last piece, then a slot for ``after`` (left at 0). A gap ends at
    each row's first piece (the row's first interruption) and at the ``after`` slot.
    """

    inner: np.ndarray  # per gap, the hours of its pieces within the window
    starts_planned: np.ndarray  # per gap: the interruption that starts it is planned
    ends_planned: np.ndarray  # the one that ends it is planned
    first_gap: np.ndarray  # per trial, its first and last gap (the same one if it has no interruption)
    last_gap: np.ndarray
    gap_trial: np.ndarray  # per gap, its trial

    @classmethod
    def join(cls, rows: Rows, pieces: np.ndarray, sub: int, sub_hours: float | np.ndarray, edges: EdgeDraws) -> _Gaps:
        trials = len(rows.n) // sub
        has = rows.n > 0
        pieces_per_row = np.where(has, 2, 1)
        row_trial = np.arange(len(has)) // sub
        first_pos = np.cumsum(pieces_per_row) - pieces_per_row + 2 * row_trial + 1  # each row's first piece
        last_pos = first_pos[has] + 1  # and last piece, in rows that have interruptions
        row_bounds = np.concatenate(([0], np.cumsum(pieces_per_row)))
        trial_first = row_bounds[np.arange(trials) * sub] + 2 * np.arange(trials)  # the before slots
        trial_last = row_bounds[(np.arange(trials) + 1) * sub] + 2 * np.arange(trials) + 1  # the after slots
        total = int(row_bounds[-1]) + 2 * trials
        vals = np.zeros(total)
        ends = np.zeros(total, dtype=bool)  # the piece ends a gap
        starts_kind = np.zeros(total, dtype=bool)  # read at a gap's first piece: the gap starts planned
        ends_kind = np.zeros(total, dtype=bool)  # read at a gap's last piece: the gap ends planned
        starts_kind[trial_first] = edges.start_planned
        ends[trial_last] = True
        ends_kind[trial_last] = edges.end_planned
        vals[first_pos] = np.where(has, pieces[0], sub_hours)  # a row without interruptions is one piece
        ends[first_pos] = has
        ends_kind[first_pos] = has & rows.first_planned
        vals[last_pos] = pieces[1][has]
        starts_kind[last_pos] = rows.last_planned[has]
        gap = np.cumsum(ends) - ends
        starts = np.ones(total, dtype=bool)
        starts[1:] = ends[:-1]
        first_gap, last_gap = gap[trial_first], gap[trial_last]
        return cls(
            inner=np.bincount(gap, vals, int(ends.sum())),
            starts_planned=starts_kind[starts],
            ends_planned=ends_kind[ends],
            first_gap=first_gap,
            last_gap=last_gap,
            gap_trial=np.repeat(np.arange(trials), last_gap - first_gap + 1),
        )


def edge_hours(
    p: Params,
    rows: Rows,
    pieces: np.ndarray,
    sub: int,
    edges: EdgeDraws,
    taus: np.ndarray,
    row_hours: np.ndarray | None = None,
) -> list[HoursAccumulator]:
    """The hours of the gaps that cross sub-window and window edges, trial by trial, for each interval.

    Parameters
    ----------
    p
        Downtimes, window and checkpoint write (``p.tau`` is not used: see ``taus``).
    rows
        The (trial, sub-window) rows, ``sub`` per trial, in trial order.
    pieces
        (2, rows): each row's first and last spacing, hours (the first is ignored, and the whole
        sub-window used, in a row without interruptions).
    sub
        Sub-windows per trial.
    edges
        What lies outside each trial's window (:func:`draw_edges`).
    taus
        Checkpoint intervals, hours.
    row_hours
        Each row's length, hours, when the rows of a trial differ (a rate profile); None: ``p.hours / sub``.

    Returns
    -------
    list of HoursAccumulator
        One per interval, with one entry per trial.
    """
    gaps = _Gaps.join(rows, pieces, sub, p.hours / sub if row_hours is None else row_hours, edges)
    down = np.where(gaps.starts_planned, p.r_planned, p.r_unplanned)
    longest_down = max(p.r_planned, p.r_unplanned)
    out = []
    for tau in taus:
        s = tau + p.c
        before = edges.before(s)
        after = edges.after(s, longest_down)
        g = gaps.inner.copy()
        g[gaps.first_gap] += before  # first_gap and last_gap are each one gap per trial (possibly the same)
        g[gaps.last_gap] += after
        lo = np.zeros(len(g))  # the window's part of each gap, as offsets from the gap's start
        lo[gaps.first_gap] = before
        hi = g.copy()
        hi[gaps.last_gap] -= after
        acc = HoursAccumulator(len(gaps.first_gap))
        parts = interval_parts(g, down, gaps.ends_planned, lo, hi, tau, p.c)
        acc.add(gaps.gap_trial, parts, gaps.starts_planned)
        out.append(acc)
    return out
