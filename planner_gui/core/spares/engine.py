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
   cumulative sum, the capacity, and in continue mode when a replica that lacked nodes has them all (the
   nodes lacking owed and paid, first come first served: one search);
3. drops the points that change nothing for the job, and
4. gets the job's hours in closed form over all remaining points at once (:func:`_hours_closed`): on the
   clock of time not blocked, downtimes are intervals (a reset's, a continue's stall) whose running
   maximum end says how much of each stretch between points is down; the running time since the last
   reset gives the position in the checkpoint cycle, and so the compute and writes of each stretch and
   the work each restart loses. There is no loop over points, so a trial's cost does not grow with how
   long it runs between resets, and a sweep over intervals steps one draw at every interval at once.
   (tests/stepping_spares.py steps the same points one after another; the two agree to rounding.)

The simulated stretch starts ``warm`` hours before the window (so the job's state at the window's start is
close to its steady state; the pool starts exactly in its steady state) and runs a little past its end, so
that work done inside the window is counted as useful or lost by what happens to it, even after the end.
"""

from __future__ import annotations

import dataclasses
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
    #: Unplanned interruptions in the window that restarted the job from its checkpoint (in continue mode the
    #: others continued on the surviving replicas; in restart mode every one restarts).
    restarts: np.ndarray | None = None
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


def _owed_and_paid(p: SparesParams, away: np.ndarray, away0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Continue mode's accounts of nodes lacking. After each point: the nodes owed to replicas so far (those
    lacking at the start, then every rise of the nodes lacking, ``max(0, nodes in repair - spares)``, at a
    failure) and the nodes paid to them (every fall, at a repair). Their difference is the nodes lacking.
    Also the nodes lacking at the start, per lane."""
    lacking = np.maximum(away - p.spare_nodes, 0.0)
    lacking0 = np.maximum(away0 - p.spare_nodes, 0.0)
    before = np.empty_like(lacking)
    before[:, :1] = lacking0[:, None]
    before[:, 1:] = lacking[:, :-1]
    owed = lacking0[:, None] + np.cumsum(np.maximum(lacking - before, 0.0), axis=1)
    paid = np.cumsum(np.maximum(before - lacking, 0.0), axis=1)
    return owed, paid, lacking0


def _replicas_per_node(p: SparesParams) -> float:
    """Replicas waiting per node lacking: the nodes lacking are those of the latest failures (first come,
    first served), so their mix is the failures' (a domain failure's nodes take out fewer replicas than as
    many single-node failures)."""
    nodes = float((p.rates * p.nodes).sum())
    return float((p.rates * p.replicas).sum()) / nodes if nodes > 0 else 1.0


def _paid_by(times: np.ndarray, paid: np.ndarray, amounts: np.ndarray, lanes: np.ndarray) -> np.ndarray:
    """For each query (``lanes[i]``, ``amounts[i]``): the time of its lane's first point where the nodes
    paid reach the amount (inf if none does). ``paid`` grows along each lane (whole numbers): one search
    over all lanes laid end to end on one line, each lane shifted past the one before."""
    if not len(amounts):
        return np.zeros(0)
    width = paid.shape[1]
    top = float(max(paid.max(initial=0.0), amounts.max())) + 1.0
    offset = np.arange(paid.shape[0], dtype=float) * top
    line = (paid + offset[:, None]).ravel()
    idx = np.searchsorted(line, amounts + offset[lanes], side="left") - lanes * width
    found = idx < width
    out = np.full(len(amounts), np.inf)
    out[found] = times[lanes[found], idx[found]]
    return out


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
    restarts: np.ndarray

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
    restarts = ((types == _RESTART) & inwin).sum(axis=1)
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
        # Replicas out: from the failure to its return (stall + restart + swap later; or, when the pool
        # lacked nodes for it, restart + swap after it has them all). Repaired nodes go to the replicas
        # waiting longest (first come, first served), so a replica that lacked nodes is whole again once the
        # nodes repaired since have paid every node lacking up to and including its own (:func:`_whole_at`).
        # The nodes lacking when the stretch starts are owed first, each keeping one replica out.
        owed, paid, lacking0 = _owed_and_paid(p, away, away0)
        sl, sc = np.nonzero(short)
        back = np.full(times.shape, np.inf)
        back[sl, sc] = _paid_by(times, paid, owed[sl, sc], sl)
        ret = np.where(
            short,
            back + p.restart + p.swap,
            np.where(types == _CONTINUE, times + p.stall + p.restart + p.swap, np.inf),
        )
        out_rep = np.where(np.isfinite(ret) & fail, rep, 0)
        # The nodes lacking at the start: unit u is paid once u nodes have come back. Each keeps out the
        # replicas a node in repair keeps out on average (a domain's nodes share replicas).
        per_node = _replicas_per_node(p)
        units = np.arange(1, int(lacking0.max(initial=0.0)) + 1, dtype=float)
        ul, uu = np.nonzero(units[None, :] <= lacking0[:, None])
        first_back = np.full((lanes, len(units)), np.inf)
        first_back[ul, uu] = _paid_by(times, paid, units[uu], ul) + p.restart + p.swap
        first_out = np.where(np.isfinite(first_back), per_node, 0.0)
        t2 = np.concatenate([times, np.where(out_rep > 0, ret, np.inf), first_back], axis=1)
        ty2 = np.concatenate(
            [
                types,
                np.where(out_rep > 0, _DEPART, _PAD).astype(np.int8),
                np.where(first_out > 0, _DEPART, _PAD).astype(np.int8),
            ],
            axis=1,
        )
        od2 = np.concatenate([out_rep.astype(float), -out_rep.astype(float), -first_out], axis=1)
        sw2 = np.concatenate([swapped, np.zeros_like(swapped), np.zeros(first_back.shape, dtype=bool)], axis=1)
        # With no stall, restart or swap a replica returns at the moment it left (or the pool covered it).
        instant = p.restart + p.swap <= 0 or p.stall + p.restart + p.swap <= 0
        times, types, outd, swapped = _sorted(t2, ty2, od2, sw2, ties=zero_repair or instant)
        out = per_node * lacking0[:, None] + np.cumsum(outd, axis=1)
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
    if p.mode == "continue":  # replicas out for the nodes lacking at the start
        blocked0 = np.zeros(lanes, dtype=bool)
        lacking = np.maximum(away0 - p.spare_nodes, 0.0)
        cap0 = np.clip(1.0 - _replicas_per_node(p) * lacking * p.share, 0.0, 1.0)
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
        restarts,
    )


#: Hours keys that do not depend on the checkpoint interval (the others do).
_DOWN_KEYS = ("waiting_for_spares", "planned_restart", "recovery")


def _shifted(a: np.ndarray, first: np.ndarray | float) -> np.ndarray:
    """Each row's values moved one place right, ``first`` in front: per point, the value before it."""
    out = np.empty_like(a)
    out[..., 0] = first
    out[..., 1:] = a[..., :-1]
    return out


def _cycle_compute(x: np.ndarray, tau: np.ndarray | float, s: np.ndarray | float) -> np.ndarray:
    """Compute done by position ``x`` of checkpoint cycles of ``tau`` compute then a write (``s`` in all)."""
    whole = np.floor(x / s)
    return np.asarray(whole * tau + np.minimum(x - whole * s, tau))


#: Elements (lanes x points x intervals) stepped at a time by :func:`_hours_closed`: small enough that its
#: arrays stay in the processor's cache.
GROUP_ELEMENTS = 1 << 15


def _step(st: _Stream, taus: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The hours of each lane of a block as ``(intervals, lanes)`` arrays: at each of ``taus`` (compute hours
    per checkpoint) or, without, at the block's own interval (one row). :func:`_hours_closed` over groups of
    lanes small enough to stay in cache."""
    m = 1 if taus is None else len(taus)
    group = max(1, GROUP_ELEMENTS // (max(st.times.shape[1], 1) * m))
    parts = [_hours_closed(st, slice(a, a + group), taus) for a in range(0, st.lanes, group)]
    return {k: np.concatenate([h[k] for h in parts], axis=1) for k in HOURS_KEYS}


def _hours_closed(st: _Stream, rows: slice, taus: np.ndarray | None) -> dict[str, np.ndarray]:
    """The hours of lanes ``rows`` of a block, at its own interval or at each of ``taus`` (``(intervals,
    lanes)`` arrays), in closed form over all pieces (the stretch up to each point) at once.

    * Time blocked waiting for spares is set aside: on the clock ``G`` of time not blocked, downtimes run
      as usual. Resets (restarts, planned interruptions) split a lane into segments.
    * Downtimes are intervals on ``G``: a reset's (detect + restart, + swap after a node loss; or the
      planned restart) and each continue's stall, except a continue during a planned downtime (it waits
      with the job). A reset overrides what is left of earlier ones (intervals are cut at the next reset),
      except the swap of a node, which a later interruption does not shorten.
      A piece is down from its start until the latest end of the intervals so far, and runs the rest.
    * The job's position in its checkpoint cycle is the segment's start phase plus the running time since
      the segment's reset (``U``, the running time since the lane's start, less its value at the reset).
      Compute and writes follow from the cycle's shape. A segment's work up to the last cycle it completes
      (its bank) is kept; a restart loses what follows; a planned interruption and the end keep all.
    """
    p = st.p
    t, ty = st.times[rows], st.types[rows]
    lanes, width = t.shape
    valid = ty != _PAD
    t_before = _shifted(t, st.start)
    with np.errstate(invalid="ignore"):  # padding: inf - inf
        dt = t - t_before
    dt[~valid] = 0.0
    blocked_in = _shifted(st.blocked[rows], st.blocked0[rows])
    if blocked_in.any():
        waiting = np.where(blocked_in, dt, 0.0)
        g_dt = dt - waiting
    else:
        waiting, g_dt = None, dt
    g = np.cumsum(g_dt, axis=1)  # G at each point
    # Segments: per point, the last reset at or before it (key: 2 col + planned; -1: none, the first segment).
    is_restart = ty == _RESTART
    is_planned = ty == _PLANNED
    reset = is_restart | is_planned
    col = np.arange(width)
    key = np.maximum.accumulate(np.where(reset, 2 * col + is_planned, -1), axis=1)
    first_seg = key < 0
    seg_planned = (key & 1).astype(bool) & ~first_seg
    seg_g = np.maximum.accumulate(np.where(reset, g, -np.inf), axis=1)  # G at the segment's reset
    in_planned_down = seg_planned & (g - seg_g < p.r_planned)
    # Downtime intervals on G, each cut at the next reset, except the swap of a node: a later interruption
    # does not bring the replacement node sooner (its interval runs on to its end).
    is_cont = ty == _CONTINUE
    length = np.where(is_cont & ~in_planned_down, p.stall, -np.inf)
    length[is_restart] = p.r_unplanned
    swapped = is_restart & st.swapped[rows]
    length[swapped] += p.swap
    length[is_planned] = p.r_planned
    next_reset_g = np.full((lanes, width), np.inf)
    next_reset_g[:, :-1] = np.minimum.accumulate(np.where(reset, g, np.inf)[:, :0:-1], axis=1)[:, ::-1]
    ends = np.where(swapped, g + length, np.minimum(g + length, next_reset_g))
    down_until = _shifted(np.maximum.accumulate(ends, axis=1), -np.inf)
    g_before = g - g_dt
    down = np.clip(down_until - g_before, 0.0, g_dt)
    run = g_dt - down
    u = np.cumsum(run, axis=1)
    u_seg = np.maximum.accumulate(np.where(reset, u, 0.0), axis=1)  # U at the segment's reset (U only grows)
    w = (t_before >= 0) & (t <= p.hours) & valid
    wcap = w * _shifted(st.cap[rows], st.cap0[rows])
    # A planned interruption's own restart is planned; a swap still running after it is recovery.
    planned_left = np.where(seg_planned, seg_g + p.r_planned, -np.inf)
    planned = np.clip(_shifted(planned_left, -np.inf) - g_before, 0.0, down)
    hours: dict[str, np.ndarray] = {
        "planned_restart": (w * planned).sum(axis=1),
        "recovery": (w * (down - planned)).sum(axis=1),
        "waiting_for_spares": np.zeros(lanes) if waiting is None else (w * waiting).sum(axis=1),
    }
    # The cycle: per interval (a leading axis).
    if taus is None:
        tau = np.full((1, 1, 1), p.tau)
    else:
        tau = np.asarray(taus, dtype=float)[:, None, None]
    s = tau + p.c
    m = tau.shape[0]
    phase0 = np.where(first_seg[None], (st.phase_u[rows][None, :, None] * s), 0.0)
    # Each piece's segment is that of the point before it: a piece ending at a reset closes its segment.
    rel = u - _shifted(u_seg, 0.0)  # running time since the piece's segment's reset, at the piece's end
    x_end = _shifted(phase0, st.phase_u[rows][None, :] * s[:, :, 0]) + rel[None]
    c_end = _cycle_compute(x_end, tau, s)
    # At a piece's start: the end of the piece before, or the segment's start (0 after a reset).
    after_reset = _shifted(reset, False)
    c_start = np.where(
        after_reset[None], 0.0, _shifted(c_end, _cycle_compute(x_end[..., 0] - run[None, :, 0], tau[..., 0], s[..., 0]))
    )
    comp = c_end - c_start
    # The bank of the segment each piece belongs to, on the U clock: at a restart the last cycle completed
    # before it; at a planned interruption everything (its U); none at the lane's end.
    bank_x = np.where(is_restart[None], np.floor(x_end / s) * s, x_end)
    bank_u = np.where(reset[None], bank_x - x_end + u[None], np.inf)
    bank = np.minimum.accumulate(bank_u[..., ::-1], axis=2)[..., ::-1]  # the next closing reset's
    u_before = u - run
    whole = u[None] <= bank  # the piece is before its segment's bank: all kept
    kept = np.where(whole, comp, 0.0)
    kept_write = np.where(whole, run[None] - comp, 0.0)
    split = np.nonzero(~whole & (u_before[None] < bank))
    if split[0].size:  # the piece holding its segment's bank: kept up to the bank
        iv, ln, pt = split
        x_bank = x_end[split] - (u[ln, pt] - bank[split])
        c_bank = _cycle_compute(x_bank, tau[iv, 0, 0], s[iv, 0, 0]) - c_start[split]
        kept[split] = c_bank
        kept_write[split] = (bank[split] - u_before[ln, pt]) - c_bank
    hours["useful"] = (wcap[None] * kept).sum(axis=2)
    hours["checkpoint"] = (w[None] * kept_write).sum(axis=2)
    hours["lost_work"] = (wcap[None] * (comp - kept) + w[None] * (run[None] - comp - kept_write)).sum(axis=2)
    hours["reduced_throughput"] = ((w - wcap)[None] * comp).sum(axis=2)
    for k in _DOWN_KEYS:
        hours[k] = np.broadcast_to(hours[k], (m, lanes))
    return hours


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
        restarts=np.concatenate([b.restarts for b in blocks]),
        repair_grid=np.linspace(0.0, p.hours, REPAIR_GRID),
    )


def simulate_spares_many(
    runs: Sequence[tuple[SparesParams, int, int]],
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[SparesTrials]:
    """Simulate several runs ``(params, trials, seed)`` of the spares model (a sweep's points), with one
    progress report over all of them; each gives what :func:`simulate_spares` gives for it alone."""
    plan: list[tuple[int, int, np.random.SeedSequence]] = []  # (run, lanes, seed) per block
    for r, (p, trials, seed) in enumerate(runs):
        lanes = _lanes_per_block(p)
        seeds = np.random.SeedSequence([seed, 0x5FA2E5]).spawn(math.ceil(trials / lanes))
        plan.extend((r, min(lanes, trials - i * lanes), ss) for i, ss in enumerate(seeds))
    blocks: list[list[_Stream]] = [[] for _ in runs]
    hours: list[list[dict[str, np.ndarray]]] = [[] for _ in runs]
    for i, (r, lanes, ss) in enumerate(plan):
        st = _draw(runs[r][0], lanes, ss, should_stop)
        blocks[r].append(st)
        hours[r].append({k: v[0] for k, v in _step(st).items()})
        st.release()
        if progress is not None:
            progress((i + 1) / len(plan))
    return [_trials(p, b, h) for (p, _, _), b, h in zip(runs, blocks, hours)]


def _draw(
    p: SparesParams,
    lanes: int,
    seed: np.random.SeedSequence,
    should_stop: Callable[[], bool] | None,
    warm: float | None = None,
    tail: float | None = None,
) -> _Stream:
    from ..engine import Cancelled

    if should_stop is not None and should_stop():
        raise Cancelled
    return _stream_block(p, lanes, np.random.default_rng(seed), warm, tail)


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
    taus = np.asarray(taus, dtype=float)
    ps = [dataclasses.replace(p, tau=float(t)) for t in taus]
    warm = max(warm_hours(q) for q in ps)
    tail = max(_tail_hours(q) for q in ps)
    lanes = min(_lanes_per_block(q) for q in ps)
    seeds = np.random.SeedSequence([seed, 0x5FA2E5]).spawn(math.ceil(trials / lanes))
    blocks: list[_Stream] = []
    hours: list[list[dict[str, np.ndarray]]] = [[] for _ in taus]
    for b, ss in enumerate(seeds):
        st = _draw(p, min(lanes, trials - b * lanes), ss, should_stop, warm, tail)
        blocks.append(st)
        h = _step(st, taus)
        for i in range(len(taus)):
            hours[i].append({k: v[i] for k, v in h.items()})
        st.release()
        if progress is not None:
            progress((b + 1) / len(seeds))
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
