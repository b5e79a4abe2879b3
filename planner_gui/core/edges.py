"""The spacings that cross edges: between sub-windows of a trial, and at the ends of its window.

Each row's first and last spacing are only pieces of a spacing; the engine returns them as
``pieces`` and they are joined here, trial by trial, with the time since the last interruption
before the window and to the first one after it (steady state).
"""

from __future__ import annotations

import numpy as np

from .intervals import HoursAccumulator, interval_parts
from .params import Params
from .rows import STREAM_EDGES, Rows, stream, uniforms

__all__ = ["edge_hours"]


def edge_hours(p: Params, rows: Rows, pieces: np.ndarray, sub: int, seed: int, taus: np.ndarray
               ) -> list[HoursAccumulator]:
    """Sum the spacings that cross sub-window and window edges, trial by trial, for each interval.

    ``rows`` are (trial, sub-window) pairs, ``sub`` sub-windows per trial, in trial order.
    """
    trials = len(rows.n) // sub
    sub_hours = p.hours / sub
    rng = stream(seed, STREAM_EDGES)
    u = uniforms(rng, (4, trials))
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
