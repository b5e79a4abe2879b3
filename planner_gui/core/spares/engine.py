"""Monte Carlo of spares, repairs and continuation (the model of :mod:`.model` and docs/spares.md).

Why not the renewal engine
--------------------------
Today's engine (:mod:`..engine`) uses that every interruption starts the job afresh, so the gaps between
interruptions are independent. With a finite pool the state of the pool (nodes in repair) carries over
from one gap to the next, and in ``continue`` mode so does the job's progress, so that shortcut no longer
holds. What still holds is that the failure streams do not depend on the job: the nodes in repair, the
capacity the job can use at each moment and, in ``continue`` mode, the replicas out, are functions of the
failure times alone. The engine therefore

1. draws, for a block of trials at once (one *lane* per trial), the failure times, their classes, the
   repair times and the nodes already in repair when the simulated stretch starts (the stationary law
   of M/G/infinity: a Poisson number per class, each with a residual repair time drawn as a uniform
   fraction of a length-biased repair time);
2. sorts every trial's points in time (failures, planned interruptions, repair completions, replica
   returns, and marks at the window's edges) and gets the nodes in repair after each point with one
   cumulative sum, the capacity and the time the pool next covers the loss with a reverse running minimum;
3. drops the points that change nothing for the job, and
4. steps through the remaining points, advancing each job's state (downtime left, position in the
   checkpoint cycle, work since the last checkpoint) in closed form between points. A reset (a restart
   or a planned interruption) leaves the same state whatever came before, so every lane is cut at resets
   into chunks of a few dozen points and all chunks of all lanes step together: the loop's length is the
   longest chunk's, not the longest trial's, and a few trials cost little more than their points.

The simulated stretch starts ``warm`` hours before the window (so the job's state at the window's start is
close to its steady state; the pool starts exactly in its steady state) and runs a little past its end, so
that work done inside the window is counted as useful or lost by what happens to it, even after the end.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .model import SparesParams

__all__ = [
    "HOURS_KEYS",
    "SparesTrials",
    "simulate_spares",
    "simulate_spares_intervals",
    "simulate_spares_many",
    "warm_hours",
]

#: Where the hours go: today's five keys, then the two this model adds.
HOURS_KEYS = (
    "useful",
    "checkpoint",
    "lost_work",
    "recovery",
    "planned_restart",
    "waiting_for_spares",
    "reduced_throughput",
)

# Point types in a trial's merged stream.
_DEPART, _RESTART, _PLANNED, _CONTINUE, _MARK, _PAD = 0, 1, 2, 3, 4, 5
#: Lanes simulated together.
LANES = 100
#: Points (interruptions, repairs, marks) per block, all lanes together: bounds the memory of a block.
BLOCK_ELEMENTS = 3_000_000
#: Points per chunk (at least) when lanes are cut at their resets to be stepped together.
CHUNK = 32
#: Moments of the window (its start, its end and evenly between) at which each trial's nodes in repair are kept.
REPAIR_GRID = 49


@dataclass
class SparesTrials:
    """Per-trial results (hours in the window, counts of events in it) and the pooled time in each
    number of nodes in repair (``repair_hist[n]``: trial-hours with n nodes in repair)."""

    hours: dict[str, np.ndarray]
    unplanned: np.ndarray
    planned: np.ndarray
    node_failures: np.ndarray  # failures in the window that took nodes
    no_spare: np.ndarray  # ... and found fewer spares than the nodes they took
    nodes_in_repair: np.ndarray  # time average over the window
    repair_hist: np.ndarray
    #: Unplanned interruptions in the window per trial and failure class (trials x classes).
    by_class: np.ndarray | None = None
    #: Nodes in repair per trial at the hours :attr:`repair_grid` of the window (trials x moments).
    repair_over_time: np.ndarray | None = None
    repair_grid: np.ndarray | None = None

    @property
    def goodput(self) -> np.ndarray:
        total = sum(self.hours.values())
        return np.asarray(self.hours["useful"] / np.where(total > 0, total, 1.0))

    def p_no_spare(self) -> float:
        """The share of node-losing failures in the window that found fewer spares than they needed."""
        n = float(self.node_failures.sum())
        return float(self.no_spare.sum()) / n if n else 0.0

    def repair_quantile(self, q: float) -> float:
        """The q-quantile of the nodes in repair over time (pooled over trials)."""
        cum = np.cumsum(self.repair_hist)
        if cum[-1] <= 0:
            return 0.0
        return float(np.searchsorted(cum, q * cum[-1] * (1 - 1e-12)))


def warm_hours(p: SparesParams) -> float:
    """Hours simulated before the window: enough for the job's state to forget its start."""
    big = p.lam + p.mu
    s = p.tau + p.c
    need = 3.0 * s + p.r_unplanned + p.swap + (5.0 / big if big > 0 else 0.0)
    return float(min(max(need, 3.0 * s), 96.0 + 3.0 * s))


def _tail_hours(p: SparesParams) -> float:
    return 2.0 * (p.tau + p.c) + p.r_unplanned + p.swap + p.stall + p.restart


def _repair_draws(rng: np.random.Generator, means: np.ndarray, sigma: float | None) -> np.ndarray:
    if sigma is None:
        return means * rng.standard_exponential(means.shape)
    return means * np.exp(sigma * rng.standard_normal(means.shape) - 0.5 * sigma * sigma)


def _residual_draws(rng: np.random.Generator, means: np.ndarray, sigma: float | None) -> np.ndarray:
    """Residual repair times of nodes in repair at a random moment: a uniform fraction of a length-biased
    repair time (Gamma(2) for exponential repairs, lognormal with its log-mean raised by sigma^2)."""
    if sigma is None:
        biased = means * rng.standard_gamma(2.0, means.shape)
    else:
        biased = means * np.exp(sigma * rng.standard_normal(means.shape) + 0.5 * sigma * sigma)
    return rng.random(means.shape) * biased


def _poisson_times(rng: np.random.Generator, rate: float, lanes: int, start: float, length: float) -> np.ndarray:
    """Sorted Poisson points on [start, start + length) per lane, padded with inf (uniform spacings:
    normalised exponentials, no sort)."""
    n = rng.poisson(rate * length, lanes)
    m = int(n.max()) if lanes else 0
    if m == 0:
        return np.full((lanes, 0), np.inf)
    e = rng.standard_exponential((lanes, m + 1))
    np.cumsum(e, axis=1, out=e)
    total = e[np.arange(lanes), n]
    t = start + length * (e[:, :m] / total[:, None])
    t[np.arange(m)[None, :] >= n[:, None]] = np.inf
    return t


def _next_true_time(ok: np.ndarray, times: np.ndarray) -> np.ndarray:
    """For every position, the time of the first position at or after it where ``ok`` holds (inf if none)."""
    lanes, width = ok.shape
    big = width
    idx = np.where(ok, np.arange(width)[None, :], big)
    nxt = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]
    padded = np.concatenate([times, np.full((lanes, 1), np.inf)], axis=1)
    return np.take_along_axis(padded, nxt, axis=1)


def _capacity(p: SparesParams, away: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Restart mode: whether the job is blocked, and its throughput, with ``away`` nodes in repair."""
    deficit = np.maximum(away - p.spare_nodes, 0.0)
    if p.min_nodes is None:
        blocked = deficit > 0
        return blocked, np.where(blocked, 0.0, 1.0)
    avail = p.job_nodes - deficit
    blocked = avail < p.min_nodes
    return blocked, np.where(blocked, 0.0, avail / p.job_nodes)


def _compact(keep: np.ndarray, *arrays: np.ndarray, fill: tuple[float, ...]) -> list[np.ndarray]:
    """Move each lane's kept entries to its front, in order; pad the rest with ``fill``."""
    lanes = keep.shape[0]
    kept = keep.sum(axis=1)
    width = int(kept.max()) if keep.size else 0
    src = np.flatnonzero(keep)
    # Destination of each kept entry: its lane's row, at its rank among the lane's kept entries.
    lane = src // keep.shape[1]
    starts = np.concatenate([[0], np.cumsum(kept)[:-1]])
    dest = lane * width + (np.arange(len(src)) - starts[lane])
    out = []
    for a, f in zip(arrays, fill):
        b = np.full(lanes * width, f, dtype=a.dtype)
        b[dest] = a.ravel()[src]
        out.append(b.reshape(lanes, width))
    return out


def _sorted(times: np.ndarray, *arrays: np.ndarray, ties: bool) -> list[np.ndarray]:
    """Every lane's points in time order, and the other arrays alike. With ``ties`` (points that can fall
    at the same moment and must then stay in their given order) the sort is stable; else the faster
    unstable sort gives the same order, since distinct points coincide with probability zero."""
    order = np.argsort(times, axis=1, kind="stable" if ties else None)
    flat = (order + (np.arange(times.shape[0]) * times.shape[1])[:, None]).ravel()
    return [a.ravel()[flat].reshape(a.shape) for a in (times, *arrays)]


@dataclass
class _Stream:
    """One block of lanes: the points that change something for the job (every lane's, in time order,
    padded with ``_PAD``), each lane's state at the stretch's start, and what the block yields without
    stepping the job (counts, nodes in repair)."""

    p: SparesParams
    start: float  # where the stretch starts (hours; the window starts at 0)
    times: np.ndarray
    types: np.ndarray
    cap: np.ndarray
    blocked: np.ndarray
    swapped: np.ndarray
    blocked0: np.ndarray
    cap0: np.ndarray
    phase_u: np.ndarray  # uniform: the job's position in its checkpoint cycle at the start, as a fraction
    unplanned: np.ndarray
    planned: np.ndarray
    node_failures: np.ndarray
    no_spare: np.ndarray
    nodes_in_repair: np.ndarray
    hist: np.ndarray
    by_class: np.ndarray
    over_time: np.ndarray

    @property
    def lanes(self) -> int:
        return len(self.phase_u)

    def release(self) -> None:
        """Drop the points once stepped (the block's other results stay)."""
        empty = np.empty((self.lanes, 0))
        self.times = self.cap = empty
        self.types = self.blocked = self.swapped = empty.astype(np.int8)


def _at_moments(times: np.ndarray, away: np.ndarray, away0: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Each lane's nodes in repair at the moments ``grid``: the count after its last point at or before each
    (``away0`` before its first). All lanes in one search: each lane's sorted times are shifted into a stretch
    of one increasing line of their own."""
    lanes, width = times.shape
    if width == 0:
        return np.repeat(away0[:, None], len(grid), axis=1)
    finite = np.isfinite(times)
    bottom = min(float(times[finite].min()) if finite.any() else 0.0, float(grid[0]))
    top = max(float(times[finite].max()) if finite.any() else 0.0, float(grid[-1])) + 1.0
    span = top - bottom + 1.0
    off = (np.arange(lanes) * span)[:, None]
    line = (np.where(finite, times, top) - bottom + off).ravel()
    idx = np.searchsorted(line, ((grid - bottom)[None, :] + off).ravel(), side="right").reshape(lanes, len(grid))
    idx -= np.arange(lanes)[:, None] * width
    padded = np.concatenate([away0[:, None], away], axis=1)
    return np.take_along_axis(padded, idx, axis=1)


def _stream_block(
    p: SparesParams, lanes: int, rng: np.random.Generator, warm: float | None = None, tail: float | None = None
) -> _Stream:
    """Draw a block's failures, repairs and planned interruptions, and get the points that change something
    for the job. The points do not depend on the checkpoint interval: with ``warm`` and ``tail`` (hours
    before and after the window; default: what ``p``'s interval needs) long enough for several intervals,
    one block serves them all (:func:`simulate_spares_intervals`)."""
    warm = warm_hours(p) if warm is None else warm
    tail = _tail_hours(p) if tail is None else tail
    window = p.hours
    start, length = -warm, warm + window + tail
    # 1. Failures (with classes and repairs), planned interruptions, the pool's start.
    ft = _poisson_times(rng, p.lam, lanes, start, length)
    probs = np.cumsum(p.rates) / p.lam if p.lam > 0 else np.ones(len(p.rates))
    cls = np.minimum(np.searchsorted(probs, rng.random(ft.shape), side="right"), len(p.rates) - 1)
    real = np.isfinite(ft)
    k = np.where(real, p.nodes[cls], 0)
    dep = ft + _repair_draws(rng, p.repair[cls], p.sigma)
    pt = _poisson_times(rng, p.mu, lanes, start, length)
    groups = np.where(p.nodes > 0, p.rates * p.repair, 0.0)
    g_total = float(groups.sum())
    if g_total > 0:
        g = rng.poisson(g_total, lanes)
        gm = int(g.max())
        gcls = np.searchsorted(np.cumsum(groups) / g_total, rng.random((lanes, gm)), side="right")
        gcls = np.minimum(gcls, len(groups) - 1)
        init = start + _residual_draws(rng, p.repair[gcls], p.sigma)
        gk = p.nodes[gcls]
        live = np.arange(gm)[None, :] < g[:, None]
        init = np.where(live, init, np.inf)
        gk = np.where(live, gk, 0)
    else:
        init, gk = np.full((lanes, 0), np.inf), np.zeros((lanes, 0), dtype=np.int64)
    away0 = gk.sum(axis=1).astype(float)

    # 2. One sorted stream per lane: failures, planned, repair completions, window marks.
    ftype = np.where(real, np.where((p.mode == "continue") & p.cont[cls], _CONTINUE, _RESTART), _PAD)
    marks = np.broadcast_to(np.array([0.0, window]), (lanes, 2))
    times = np.concatenate([ft, dep, init, pt, marks], axis=1)
    types = np.concatenate(
        [
            ftype,
            np.where(real & (k > 0), _DEPART, _PAD),
            np.where(np.isfinite(init), _DEPART, _PAD),
            np.where(np.isfinite(pt), _PLANNED, _PAD),
            np.full((lanes, 2), _MARK),
        ],
        axis=1,
    ).astype(np.int8)
    delta = np.concatenate([k, -k, -gk, np.zeros(pt.shape, np.int64), np.zeros((lanes, 2), np.int64)], axis=1)
    swapped = np.concatenate([k > 0, np.zeros((lanes, times.shape[1] - k.shape[1]), bool)], axis=1)
    rep = np.concatenate([p.replicas[cls] * real, np.zeros((lanes, times.shape[1] - k.shape[1]), np.int64)], axis=1)
    # A repair of zero hours ends at its failure: it must come after it.
    zero_repair = bool(np.any((p.nodes > 0) & (p.repair <= 0)))
    times, types, delta, swapped, rep = _sorted(times, types, delta, swapped, rep, ties=zero_repair)
    away = away0[:, None] + np.cumsum(delta, axis=1)
    fail = (types == _RESTART) | (types == _CONTINUE)
    inwin = (times >= 0) & (times < window)
    short = fail & (delta > 0) & (away > p.spare_nodes)
    node_failures = (fail & inwin & (delta > 0)).sum(axis=1)
    no_spare = (short & inwin).sum(axis=1)

    # Nodes in repair over the window: time at each count.
    nxt = np.concatenate([times[:, 1:], np.full((lanes, 1), np.inf)], axis=1)
    span = np.clip(np.minimum(nxt, window), 0, None) - np.clip(np.minimum(times, window), 0, None)
    span = np.where(np.isfinite(span), span, 0.0)
    first = np.clip(np.minimum(times[:, :1], window), 0, None)[:, 0]  # before the first point: away0
    hist = np.bincount(away.ravel().astype(np.int64), weights=span.ravel())
    hist0 = np.bincount(away0.astype(np.int64), weights=first, minlength=1)
    size = max(len(hist), len(hist0))
    hist = np.pad(hist, (0, size - len(hist))) + np.pad(hist0, (0, size - len(hist0)))
    nodes_mean = ((away * span).sum(axis=1) + away0 * first) / window
    over_time = _at_moments(times, away, away0, np.linspace(0.0, window, REPAIR_GRID))
    ncls = len(p.rates)
    counted = real & (ft >= 0) & (ft < window)
    slot = (np.arange(lanes)[:, None] * ncls + cls)[counted]
    by_class = np.bincount(slot, minlength=lanes * ncls).reshape(lanes, ncls)

    if p.mode == "continue":
        # Replicas out: from the failure to its return (stall + restart + swap, or after the pool covers
        # the loss); restart failures keep their replicas out only while the pool cannot cover them.
        back = _next_true_time(away <= p.spare_nodes, times)
        ret = np.where(
            short,
            back + p.restart + p.swap,
            np.where(types == _CONTINUE, times + p.stall + p.restart + p.swap, np.inf),
        )
        out_rep = np.where(np.isfinite(ret) & fail, rep, 0)
        t2 = np.concatenate([times, np.where(out_rep > 0, ret, np.inf)], axis=1)
        ty2 = np.concatenate([types, np.where(out_rep > 0, _DEPART, _PAD).astype(np.int8)], axis=1)
        od2 = np.concatenate([out_rep, -out_rep], axis=1)
        sw2 = np.concatenate([swapped, np.zeros_like(swapped)], axis=1)
        # With no stall, restart or swap a replica returns at the moment it left (or the pool covered it).
        instant = p.restart + p.swap <= 0 or p.stall + p.restart + p.swap <= 0
        times, types, outd, swapped = _sorted(t2, ty2, od2, sw2, ties=zero_repair or instant)
        out = np.cumsum(outd, axis=1)
        cap = np.clip(1.0 - out * p.share, 0.0, 1.0)
        blocked = np.zeros(cap.shape, dtype=bool)
    else:
        blocked, cap = _capacity(p, away)

    counts = (
        (fail & inwin).sum(axis=1),
        ((types == _PLANNED) & (times >= 0) & (times < window)).sum(axis=1),
    )

    # 3. Keep the points that change something for the job.
    prev_cap = np.concatenate([np.ones((lanes, 1)), cap[:, :-1]], axis=1)
    prev_blk = np.concatenate([np.zeros((lanes, 1), bool), blocked[:, :-1]], axis=1)
    keep = (types != _PAD) & ((types != _DEPART) | (cap != prev_cap) | (blocked != prev_blk))
    keep[:, 0] |= types[:, 0] != _PAD
    times, types, cap, blocked, swapped = _compact(
        keep, times, types, cap, blocked, swapped, fill=(np.inf, _PAD, 1.0, False, False)
    )
    if p.mode == "continue":
        blocked0, cap0 = np.zeros(lanes, dtype=bool), np.ones(lanes)
    else:
        blocked0, cap0 = _capacity(p, away0)
    phase_u = rng.random(lanes)
    return _Stream(
        p,
        start,
        times,
        types,
        cap,
        blocked,
        swapped,
        blocked0,
        cap0,
        phase_u,
        counts[0],
        counts[1],
        node_failures,
        no_spare,
        nodes_mean,
        hist,
        by_class,
        over_time,
    )


def _chunks(
    times: np.ndarray,
    types: np.ndarray,
    start: np.ndarray,
    initial: tuple[np.ndarray, np.ndarray, np.ndarray],
    arrays: tuple[np.ndarray, ...],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], list[np.ndarray]]:
    """Cut every lane's points at resets (restarts and planned interruptions) into independent chunks.

    After a reset the job's state (downtime left, position in the cycle, pending work) is the same whatever
    came before, so the stretch from one reset to the next can be stepped on its own: a chunk starts at a
    reset with an empty state and ends at the next reset, which it also steps (to settle the work pending
    at it). A lane's first chunk starts at its start (``start``, per lane) with the lane's initial state.
    Chunks are ordered longest first and laid out column by column, so column ``j`` of the chunks still
    running is a prefix.

    Returns the lane of each chunk, the chunks running at each column, where each column starts in the
    flat entries, the chunks' initial state (time, blocked, capacity, phase) and the entries of ``times``,
    ``types`` and ``arrays``, column after column (column ``j``: the first ``running[j]`` chunks).
    """
    width = times.shape[1]
    valid = types != _PAD
    reset = valid & ((types == _RESTART) | (types == _PLANNED))
    # Cut only at the first reset in each stretch of CHUNK points: every cut steps a point twice.
    r_lane, r_col = np.nonzero(reset)
    bucket = r_lane * (width // CHUNK + 1) + r_col // CHUNK
    cut = np.ones(len(bucket), dtype=bool)
    cut[1:] = bucket[1:] != bucket[:-1]
    reset = np.zeros_like(reset)
    reset[r_lane[cut], r_col[cut]] = True
    col = np.arange(width)[None, :]
    begins = valid & (reset | (col == 0))
    flat_valid = valid.ravel()
    pos = np.flatnonzero(flat_valid)  # flat positions of the points, lane by lane, in time order
    is_begin = begins.ravel()[pos]
    is_reset = reset.ravel()[pos] & (pos % width != 0)
    chunk = np.cumsum(is_begin) - 1
    nchunks = int(chunk[-1]) + 1 if len(chunk) else 0
    first = np.flatnonzero(is_begin)  # index into pos of each chunk's first point
    # A chunk's length: up to the next chunk's start, plus that start when it is a reset of the same lane.
    nxt = np.append(first[1:], len(pos))
    ends_at_reset = np.zeros(nchunks, dtype=bool)
    ends_at_reset[:-1] = is_reset[first[1:]]
    length = nxt - first + ends_at_reset
    order = np.argsort(-length, kind="stable")
    row = np.empty(nchunks, dtype=np.int64)
    row[order] = np.arange(nchunks)
    maxlen = int(length.max()) if nchunks else 0
    running = nchunks - np.searchsorted(np.sort(length), np.arange(maxlen), side="right")
    offset = np.concatenate([[0], np.cumsum(running)])
    # Entries: every point in its chunk, and every reset once more as the last point of the chunk before.
    rank = np.arange(len(pos)) - first[chunk]
    extra = np.flatnonzero(is_reset)
    prev = chunk[extra] - 1
    src = np.concatenate([pos, pos[extra]])
    dest = np.concatenate([offset[rank] + row[chunk], offset[length[prev] - 1] + row[prev]])
    cols = []
    for a in (times, types, *arrays):
        b = np.empty(int(offset[-1]), dtype=a.dtype)
        b[dest] = a.ravel()[src]
        cols.append(b)
    lane = (pos[first] // width)[order]
    lead = (pos[first] % width == 0)[order]
    t0 = np.where(lead, start[lane], times.ravel()[pos[first]][order])
    blocked0, cap0, phase0 = initial
    init = (
        t0,
        np.where(lead, blocked0[lane], False),
        np.where(lead, cap0[lane], 1.0),
        np.where(lead, phase0[lane], 0.0),
    )
    return lane, running, offset, init, cols


#: The job's parameters the stepping needs, per lane (lanes of different scenarios step together).
_LANE_PARAMS = ("tau", "s", "r_unplanned", "r_planned", "swap", "stall", "window")


def _lane_params(streams: list[_Stream]) -> dict[str, np.ndarray]:
    """Per lane of the streams laid end to end: the job's parameters and the stretch's start."""

    def per_lane(value: Callable[[SparesParams], float]) -> np.ndarray:
        return np.concatenate([np.full(st.lanes, value(st.p)) for st in streams])

    out = {
        "tau": per_lane(lambda p: p.tau),
        "s": per_lane(lambda p: p.tau + p.c),
        "r_unplanned": per_lane(lambda p: p.r_unplanned),
        "r_planned": per_lane(lambda p: p.r_planned),
        "swap": per_lane(lambda p: p.swap),
        "stall": per_lane(lambda p: p.stall),
        "window": per_lane(lambda p: p.hours),
    }
    out["start"] = np.concatenate([np.full(st.lanes, st.start) for st in streams])
    return out


def _padded(arrays: list[np.ndarray], width: int, fill: float | int | bool) -> np.ndarray:
    """The blocks' (lanes x points) arrays stacked, each padded on the right with ``fill`` to ``width``."""
    rows = sum(a.shape[0] for a in arrays)
    out = np.full((rows, width), fill, dtype=arrays[0].dtype)
    r = 0
    for a in arrays:
        out[r : r + a.shape[0], : a.shape[1]] = a
        r += a.shape[0]
    return out


#: Hours keys that do not depend on the checkpoint interval (the others do).
_DOWN_KEYS = ("waiting_for_spares", "planned_restart", "recovery")


def _step(streams: list[_Stream], taus: np.ndarray | None = None) -> list[dict[str, np.ndarray]]:
    """Step every lane of ``streams`` through its points; the job's state advances in closed form between
    them. Returns, per stream, the hours of each of its lanes (an array of ``(intervals, lanes)``).

    The lanes are cut into chunks at their resets (:func:`_chunks`) and all chunks of all streams step
    together (each with its own scenario's parameters), so the loop runs over the longest chunk's points,
    not the longest lane's, and many small runs (a sweep's points) cost about one loop.

    With ``taus`` (compute hours per checkpoint, several), every lane is stepped at each of them at once:
    the downtimes do not depend on the interval, only the position in the checkpoint cycle and the work
    pending do, and those carry a leading axis of one row per interval. Without, that axis has one row
    (each stream's own interval)."""
    width = max(st.times.shape[1] for st in streams)
    times = _padded([st.times for st in streams], width, np.inf)
    types = _padded([st.types for st in streams], width, _PAD)
    caps = _padded([st.cap for st in streams], width, 1.0)
    blks = _padded([st.blocked for st in streams], width, False)
    swaps = _padded([st.swapped for st in streams], width, False)
    lp = _lane_params(streams)
    blocked0 = np.concatenate([st.blocked0 for st in streams])
    cap0 = np.concatenate([st.cap0 for st in streams])
    phase_u = np.concatenate([st.phase_u for st in streams])
    lanes = times.shape[0]
    lane, running, offset, init, cols = _chunks(
        times, types, lp["start"], (blocked0, cap0, phase_u), (caps, blks, swaps)
    )
    col_t, col_ty, col_cap, col_blk, col_swap = cols
    t_prev, blocked, cap, phase_u0 = (np.array(a) for a in init)
    n_all = len(t_prev)
    # Per chunk (in the chunks' order): its lane's parameters; tau and s with a row per interval.
    ru_a, rp_a, swap_a, stall_a, window_a = (lp[k][lane] for k in _LANE_PARAMS[2:])
    if taus is None:
        tau_a, s_a = lp["tau"][lane][None, :], lp["s"][lane][None, :]
    else:
        c = np.array([st.p.c for st in streams])
        if np.any(c != c[0]):
            raise ValueError("stepping at several intervals needs one checkpoint write time")
        tau_a = np.broadcast_to(np.asarray(taus, dtype=float)[:, None], (len(taus), n_all))
        s_a = tau_a + c[0]
    m = tau_a.shape[0]
    phase = phase_u0[None, :] * s_a
    z = np.zeros
    acc = {k: z(n_all) if k in _DOWN_KEYS else z((m, n_all)) for k in HOURS_KEYS}
    down = z(n_all)
    planned_kind = z(n_all, dtype=bool)
    unck = z((m, n_all))
    wpend = z((m, n_all))
    for j in range(len(running)):
        n = int(running[j])
        o = int(offset[j])
        t = col_t[o : o + n]
        ty = col_ty[o : o + n]
        tp = t_prev[:n]
        blk = blocked[:n]
        cp = cap[:n]
        ph = phase[:, :n]
        dn = down[:n]
        pk = planned_kind[:n]
        tau, s = tau_a[:, :n], s_a[:, :n]
        dt = t - tp
        w = ((tp >= 0) & (t <= window_a[:n])).astype(float)
        # Advance: waiting, then the downtime left, then cycles of compute and write.
        wt = np.where(blk, dt, 0.0)
        acc["waiting_for_spares"][:n] += w * wt
        d = np.where(blk, 0.0, np.minimum(dt, dn))
        acc["planned_restart"][:n] += w * np.where(pk, d, 0.0)
        acc["recovery"][:n] += w * np.where(pk, 0.0, d)
        dn = dn - d
        rem = dt - wt - d
        x1 = ph + rem
        nb = np.floor(x1 / s)
        ph1 = np.clip(x1 - nb * s, 0.0, s)
        comp = nb * tau + np.minimum(ph1, tau) - np.minimum(ph, tau)
        wtime = rem - comp
        wcp = w * cp
        acc["reduced_throughput"][:, :n] += (w - wcp) * comp
        crossed = nb >= 1
        pend_c = wcp * np.minimum(ph1, tau)
        pend_w = w * np.maximum(ph1 - tau, 0.0)
        uk = unck[:, :n]
        wp = wpend[:, :n]
        acc["useful"][:, :n] += np.where(crossed, uk + wcp * comp - pend_c, 0.0)
        acc["checkpoint"][:, :n] += np.where(crossed, wp + w * wtime - pend_w, 0.0)
        uk = np.where(crossed, pend_c, uk + wcp * comp)
        wp = np.where(crossed, pend_w, wp + w * wtime)
        ph = ph1
        # The point itself.
        restart = ty == _RESTART
        plan = ty == _PLANNED
        cont = ty == _CONTINUE
        if restart.any() or plan.any():
            reset = restart | plan
            acc["lost_work"][:, :n] += np.where(restart, uk + wp, 0.0)
            acc["useful"][:, :n] += np.where(plan, uk, 0.0)
            acc["checkpoint"][:, :n] += np.where(plan, wp, 0.0)
            uk = np.where(reset, 0.0, uk)
            wp = np.where(reset, 0.0, wp)
            ph = np.where(reset, 0.0, ph)
            dn = np.where(restart, ru_a[:n] + swap_a[:n] * col_swap[o : o + n], np.where(plan, rp_a[:n], dn))
            pk = np.where(restart, False, np.where(plan, True, pk))
        if cont.any():
            hold = cont & pk & (dn > 0)
            stall_now = cont & ~hold
            dn = np.where(stall_now, np.maximum(dn, stall_a[:n]), dn)
            pk = np.where(stall_now, False, pk)
        unck[:, :n] = uk
        wpend[:, :n] = wp
        phase[:, :n] = ph
        down[:n] = dn
        planned_kind[:n] = pk
        cap[:n] = col_cap[o : o + n]
        blocked[:n] = col_blk[o : o + n]
        t_prev[:n] = t
    # Work still pending after the tail would complete its cycle: count it where it was heading.
    acc["useful"] += unck
    acc["checkpoint"] += wpend
    # Per lane: one weighted count over (interval, lane) pairs.
    slot = (np.arange(m)[:, None] * lanes + lane[None, :]).ravel()
    per_lane = {}
    for k, v in acc.items():
        if k in _DOWN_KEYS:
            per_lane[k] = np.broadcast_to(np.bincount(lane, weights=v, minlength=lanes), (m, lanes))
        else:
            per_lane[k] = np.bincount(slot, weights=v.ravel(), minlength=m * lanes).reshape(m, lanes)
    bounds = np.cumsum([0] + [st.lanes for st in streams])
    return [{k: v[:, a:b] for k, v in per_lane.items()} for a, b in itertools.pairwise(bounds)]


def _lanes_per_block(p: SparesParams) -> int:
    """Lanes per block: at most LANES, and few enough that a block's arrays stay near BLOCK_ELEMENTS."""
    per_trial = (p.lam + p.mu + float(p.node_loss_rates.sum())) * (p.hours + warm_hours(p) + _tail_hours(p)) + 8
    return int(max(1, min(LANES, BLOCK_ELEMENTS // per_trial)))


def _trials(p: SparesParams, blocks: list[_Stream], hours: list[dict[str, np.ndarray]]) -> SparesTrials:
    size = max(len(b.hist) for b in blocks)
    return SparesTrials(
        hours={k: np.concatenate([h[k] for h in hours]) for k in HOURS_KEYS},
        unplanned=np.concatenate([b.unplanned for b in blocks]),
        planned=np.concatenate([b.planned for b in blocks]),
        node_failures=np.concatenate([b.node_failures for b in blocks]),
        no_spare=np.concatenate([b.no_spare for b in blocks]),
        nodes_in_repair=np.concatenate([b.nodes_in_repair for b in blocks]),
        repair_hist=sum((np.pad(b.hist, (0, size - len(b.hist))) for b in blocks), np.zeros(size)),
        by_class=np.concatenate([b.by_class for b in blocks]),
        repair_over_time=np.concatenate([b.over_time for b in blocks]),
        repair_grid=np.linspace(0.0, p.hours, REPAIR_GRID),
    )


def simulate_spares_many(
    runs: Sequence[tuple[SparesParams, int, int]],
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[SparesTrials]:
    """Simulate several runs ``(params, trials, seed)`` of the spares model; each gives what
    :func:`simulate_spares` gives for it alone, number for number.

    Every run is drawn in blocks of lanes (one stream each, seeded from the run's seed and the block's
    number); the blocks of all runs then step together, up to :data:`BLOCK_ELEMENTS` points at a time, so
    a sweep of many small runs costs about one stepping loop instead of one per run."""
    from ..engine import Cancelled

    plan: list[tuple[int, int, np.random.SeedSequence]] = []  # (run, lanes, seed) per block
    for r, (p, trials, seed) in enumerate(runs):
        lanes = _lanes_per_block(p)
        seeds = np.random.SeedSequence([seed, 0x5FA2E5]).spawn(math.ceil(trials / lanes))
        plan.extend((r, min(lanes, trials - i * lanes), ss) for i, ss in enumerate(seeds))
    blocks: list[list[_Stream]] = [[] for _ in runs]
    hours: list[list[dict[str, np.ndarray]]] = [[] for _ in runs]
    pending: list[tuple[int, _Stream]] = []
    points = 0

    def step() -> None:
        for (r, st), h in zip(pending, _step([st for _, st in pending])):
            hours[r].append({k: v[0] for k, v in h.items()})
            st.release()
        pending.clear()

    for i, (r, lanes, ss) in enumerate(plan):
        if should_stop is not None and should_stop():
            raise Cancelled
        st = _stream_block(runs[r][0], lanes, np.random.default_rng(ss))
        blocks[r].append(st)
        if pending and points + st.times.size > BLOCK_ELEMENTS:
            step()
            points = 0
        pending.append((r, st))
        points += st.times.size
        if progress is not None:
            progress(0.95 * (i + 1) / len(plan))
    if pending:
        step()
    if progress is not None:
        progress(1.0)
    return [_trials(p, b, h) for (p, _, _), b, h in zip(runs, blocks, hours)]


def simulate_spares_intervals(
    p: SparesParams,
    taus: Sequence[float] | np.ndarray,
    trials: int,
    seed: int,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[SparesTrials]:
    """``trials`` windows of ``p`` at each checkpoint interval in ``taus`` (hours of compute per checkpoint),
    all on the same draws (common random numbers: the curve over the intervals is smooth).

    The failures, repairs and the pool do not depend on the interval, so each block is drawn once, with
    the warm-up and tail the longest interval needs, and stepped at every interval at once (the counts
    and the pool's figures are the same at every interval). Each interval's numbers are those of a run of
    its own, statistically (a run alone draws its own warm-up), not number for number."""
    from ..engine import Cancelled

    taus = np.asarray(taus, dtype=float)
    ps = [dataclasses.replace(p, tau=float(t)) for t in taus]
    warm = max(warm_hours(q) for q in ps)
    tail = max(_tail_hours(q) for q in ps)
    lanes = min(_lanes_per_block(q) for q in ps)
    seeds = np.random.SeedSequence([seed, 0x5FA2E5]).spawn(math.ceil(trials / lanes))
    blocks: list[_Stream] = []
    hours: list[list[dict[str, np.ndarray]]] = [[] for _ in taus]
    pending: list[_Stream] = []
    points = 0

    def step() -> None:
        for st, h in zip(pending, _step(pending, taus)):
            for i in range(len(taus)):
                hours[i].append({k: v[i] for k, v in h.items()})
            st.release()
        pending.clear()

    for b, ss in enumerate(seeds):
        if should_stop is not None and should_stop():
            raise Cancelled
        st = _stream_block(p, min(lanes, trials - b * lanes), np.random.default_rng(ss), warm, tail)
        blocks.append(st)
        if pending and (points + st.times.size) * len(taus) > BLOCK_ELEMENTS:
            step()
            points = 0
        pending.append(st)
        points += st.times.size
        if progress is not None:
            progress(0.95 * (b + 1) / len(seeds))
    if pending:
        step()
    if progress is not None:
        progress(1.0)
    return [_trials(q, blocks, h) for q, h in zip(ps, hours)]


def simulate_spares(
    p: SparesParams,
    trials: int,
    seed: int,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SparesTrials:
    """Simulate ``trials`` windows of the spares model (blocks of :data:`LANES` lanes, one stream each)."""
    return simulate_spares_many([(p, trials, seed)], progress=progress, should_stop=should_stop)[0]
