"""The spacings that cross edges: between sub-windows of a trial, and at the ends of its window.

Each row's first and last spacing are only pieces of a spacing; the engine returns them as
``pieces`` and they are joined here, trial by trial, with the time since the last interruption
before the window and to the first one after it (steady state).

Those two are exponential with mean ``1/Lambda``, which is astronomically long for tiny rates
(1e40 hours at 1e-40 per hour), and the hours inside the window would then be differences of such
numbers. They are not drawn as such: only what the window can see of them is.

* The time since the last interruption, ``A``, matters only through where the window starts in the
  interval it begins: in its downtime ``D`` (probability ``1 - e^(-Lambda D)``; ``A`` is then an
  exponential truncated to ``[0, D)``), or otherwise at the phase ``(A - D) mod s`` of the checkpoint
  cycle ``s = tau + C``, which is an exponential truncated to ``[0, s)`` whatever the number of whole
  cycles before it (memorylessness). So ``A`` is drawn as ``D`` plus such a phase, by inversion.
* The time to the next interruption, ``B``, matters only through whether it comes before the cycle
  running at the window's end completes, i.e. within ``D + s``; it is capped at ``D + 2 s``.

Both are exact (the window's hours are the same as with the full draws), and every number handled
is then at most a few windows or cycles long.
"""

from __future__ import annotations

import numpy as np

from .intervals import HoursAccumulator, interval_parts
from .params import Params
from .rows import STREAM_EDGES, Rows, stream, uniforms

__all__ = ["edge_hours", "truncated_exponential"]


def truncated_exponential(v: np.ndarray, rate: float, width: float) -> np.ndarray:
    """The ``v``-quantiles of an exponential of ``rate`` truncated to ``[0, width)``.

    ``-log1p(v expm1(-x)) / x`` in units of ``width``, with ``x = rate width``: accurate for any ``x``.
    Below ``x = 1e-100`` it is ``v``, uniform, to far better than double precision (and ``v expm1(-x)``
    would lose bits as a subnormal number).
    """
    x = rate * width
    if x < 1e-100:
        return v * width
    return -np.log1p(v * np.expm1(-x)) / x * width


def edge_hours(
    p: Params, rows: Rows, pieces: np.ndarray, sub: int, seed: int, taus: np.ndarray
) -> list[HoursAccumulator]:
    """Sum the spacings that cross sub-window and window edges, trial by trial, for each interval.

    ``rows`` are (trial, sub-window) pairs, ``sub`` sub-windows per trial, in trial order.
    """
    trials = len(rows.n) // sub
    sub_hours = p.hours / sub
    rng = stream(seed, STREAM_EDGES)
    u = uniforms(rng, (4, trials))
    big = p.lam + p.mu
    p_planned = p.mu / big if big > 0 else 0.0
    start_p0 = u[2] < p_planned
    end_p_last = u[3] < p_planned
    # A = -log(1 - u[0]) / Lambda, by inversion. The window starts in the downtime of its first interval
    # when A < D, i.e. u[0] < 1 - e^(-Lambda D), and A is then computed as such (it is under D). Otherwise
    # v, u[0] rescaled to a uniform on [0, 1), places the start in the checkpoint cycle.
    d_first = np.where(start_p0, p.r_planned, p.r_unplanned)
    p_down = -np.expm1(-big * d_first)
    in_down = u[0] < p_down
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        age_in_down = -np.log1p(-u[0]) / big
        v = np.where(in_down, 0.0, (u[0] - p_down) / (1.0 - p_down))
        until_next = -np.log(u[1]) / big  # inf when Lambda is 0 or tiny: it is capped below
    longest_down = max(p.r_planned, p.r_unplanned)

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

    # The gaps (intervals between interruptions) with the before and after pieces left at 0; they
    # depend on the checkpoint cycle and are added for each interval below.
    vals = np.zeros(total)
    ends = np.zeros(total, dtype=bool)
    kind_planned = np.zeros(total, dtype=bool)  # for a gap's first piece: starts planned; for its end: ends planned
    end_planned = np.zeros(total, dtype=bool)
    kind_planned[trial_first] = start_p0
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
    inner = np.bincount(gap, vals, ngaps)
    starts = np.ones(total, dtype=bool)
    starts[1:] = ends[:-1]
    starts_planned = kind_planned[starts]
    ends_planned = end_planned[ends]
    first_gap = gap[trial_first]
    last_gap = gap[trial_last]
    gap_trial = np.repeat(np.arange(trials), last_gap - first_gap + 1)
    down = np.where(starts_planned, p.r_planned, p.r_unplanned)
    out = []
    for tau in taus:
        s = tau + p.c
        before = np.where(in_down, age_in_down, d_first + truncated_exponential(v, big, s))
        after = np.minimum(until_next, longest_down + 2.0 * s)
        g = inner.copy()
        g[first_gap] += before  # first_gap and last_gap are each one gap per trial (possibly the same)
        g[last_gap] += after
        lo = np.zeros(ngaps)
        lo[first_gap] = before
        hi = g.copy()
        hi[last_gap] -= after
        acc = HoursAccumulator(trials)
        acc.add(gap_trial, interval_parts(g, down, ends_planned, lo, hi, tau, p.c), starts_planned)
        out.append(acc)
    return out
