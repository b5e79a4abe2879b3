"""The world of docs/model.md section 1, drawn chunk by chunk in time for every trial of one model at once.

Failures, planned interruptions, repairs, the pool and the replicas out do not depend on what the job does,
so they are drawn before the job is stepped over them (:mod:`.job`). A :class:`World` holds, per trial, what
carries from one chunk of time to the next (the repairs still running, in continue mode the nodes owed to
waiting replicas and the returns already scheduled), and :meth:`World.chunk` draws the next stretch
``[t0, t1)``:

1. failures by inversion of the profile's cumulative multiplier (each trial's rates, its own with rate
   uncertainty), their classes, and a repair time for each that takes nodes; planned interruptions;
2. one sorted stream per trial of failures, planned interruptions and repair completions, the nodes in
   repair after each point (one cumulative sum), which failures find no spare, and the window's counts;
3. in restart mode the capacity after each point; in continue mode the replicas out: a continuing failure's
   return is known at once, a failure that found no spare returns ``rejoin`` after the nodes paid to waiting
   replicas (first come, first served) reach the nodes owed up to its own, which may be chunks later;
4. the points that change something for the job: every failure and planned interruption, and the repairs
   and returns that change its throughput or whether it is blocked.

Chunk boundaries, and every draw of a chunk, depend only on the model, its seed and the chunk's index (never
on other models stepped beside it, nor on which trials have finished), so a run's numbers are the ones it
gives alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..rows import stream
from .model import CONTINUE, RESTART_FAST, RESTART_PERSISTENT, SimModel

__all__ = [
    "CHANGE",
    "PAD",
    "PLANNED",
    "REPAIR_GRID",
    "Chunk",
    "World",
]

#: Point kinds beyond the classes' (RESTART_FAST, RESTART_PERSISTENT, CONTINUE): 0 pads a trial's row.
PAD, PLANNED, CHANGE = 0, 4, 5
_DEPART, _RETURN, _MARK = 6, 7, 8  # (internal: a repair completion, a replica's return, a window mark)
STREAM_WORLD = 31
#: Points per trial a chunk aims at.
TARGET_POINTS = 256
#: Moments of the window at which each trial's nodes in repair are kept (its start, its end, evenly between).
REPAIR_GRID = 49


@dataclass
class Chunk:
    """A stretch of the world: per trial (rows) the points that change something for the job, in time order,
    padded with PAD at the end of short rows."""

    times: np.ndarray
    kinds: np.ndarray  # int8
    took: np.ndarray  # bool: a failure that took nodes (a restart after it pays the swap)
    cap: np.ndarray  # throughput after the point
    blocked: np.ndarray  # bool: blocked after the point
    counts: np.ndarray  # points per row


def _compact(keep: np.ndarray, arrays: list[np.ndarray], fill: list[float]) -> list[np.ndarray]:
    """Each row's kept entries moved to its front, in order; the rest padded with ``fill``."""
    rows = keep.shape[0]
    kept = keep.sum(axis=1)
    width = int(kept.max()) if keep.size else 0
    src = np.flatnonzero(keep)
    row = src // max(keep.shape[1], 1)
    starts = np.concatenate([[0], np.cumsum(kept)[:-1]])
    dest = row * width + (np.arange(len(src)) - starts[row])
    out = []
    for a, f in zip(arrays, fill):
        b = np.full(rows * width, f, dtype=a.dtype)
        b[dest] = a.ravel()[src]
        out.append(b.reshape(rows, width))
    return out


def _sort_rows(times: np.ndarray, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Every row in time order (stable: points at one moment keep their given order), the others alike."""
    order = np.argsort(times, axis=1, kind="stable")
    flat = (order + (np.arange(times.shape[0]) * times.shape[1])[:, None]).ravel()
    return [a.ravel()[flat].reshape(a.shape) for a in (times, *arrays)]


def _first_reaching(values: np.ndarray, targets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For each query (``rows[i]``, ``targets[i]``): the index of its row's first entry of ``values`` (non-
    decreasing along each row) that reaches the target, or the row's width if none does. One search over all
    rows laid end to end, each shifted past the one before."""
    width = values.shape[1]
    if not len(targets) or width == 0:
        return np.full(len(targets), width, dtype=np.int64)
    lo = float(min(values.min(), targets.min()))
    top = float(max(values.max(), targets.max())) - lo + 1.0
    offset = np.arange(values.shape[0], dtype=float) * top
    line = (values - lo + offset[:, None]).ravel()
    idx = np.searchsorted(line, targets - lo + offset[rows], side="left") - rows * width
    return np.minimum(idx, width).astype(np.int64)


class World:
    """The world of one model's ``trials`` trials, from ``start`` hours on, one chunk at a time."""

    def __init__(self, m: SimModel, trials: int, seed: int, start: float, *, window: bool) -> None:
        self.m, self.n, self.seed = m, trials, seed
        self.t = start
        self.index = 0
        self.window = window
        rates = np.array(m.trial_rates(trials), dtype=float)
        self.lam = rates.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            cum = np.cumsum(rates, axis=1) / np.where(self.lam > 0, self.lam, 1.0)[:, None]
        cum[:, -1] = 1.0
        self.cum = cum  # per trial, the classes' cumulative shares (for drawing classes)
        self.rates = rates
        # The profile's cumulative multiplier at its piece starts (hours from 0).
        ps, pm = m.profile_starts, m.profile_mults
        self.knots_t = ps
        self.knots_h = np.concatenate([[0.0], np.cumsum(np.diff(ps) * pm[:-1])])
        self.mults = pm
        n = trials
        rng = stream(seed, STREAM_WORLD, 1 << 20)  # the state at the start (its own stream)
        self.rep_t = np.full((n, 0), np.inf)
        self.rep_k = np.zeros((n, 0), dtype=np.int64)
        self.away = np.zeros(n)
        if not m.new_cluster or start < 0:
            self._stationary_pool(rng, start)
        self.cont = m.continue_mode
        self.out = np.zeros(n)  # replicas out (continue mode)
        self.owed = np.zeros(n)
        self.paid = np.zeros(n)
        self.thr = np.full((n, 0), np.inf)  # waiting replicas' thresholds of nodes paid
        self.thr_rep = np.zeros((n, 0))
        self.ret_t = np.full((n, 0), np.inf)  # returns scheduled after the current chunk
        self.ret_rep = np.zeros((n, 0))
        self.per_node = self._replicas_per_node()
        if self.cont:
            lacking0 = np.maximum(self.away - m.spare_nodes, 0.0)
            units = int(lacking0.max(initial=0.0))
            if units:
                u = np.arange(1, units + 1, dtype=float)[None, :]
                self.thr = np.where(u <= lacking0[:, None], u, np.inf)
                self.thr_rep = np.where(u <= lacking0[:, None], self.per_node, 0.0)
            self.owed = lacking0.copy()
            self.out = self.per_node * lacking0
            self.cap = np.clip(1.0 - self.out * m.rep_share, 0.0, 1.0)
            self.blocked = np.zeros(n, dtype=bool)
        else:
            self.blocked, self.cap = self._capacity(self.away)
        # What the window counts (docs/model.md 2.6) and the pool's figures.
        nclass = len(m.rates)
        self.unplanned = np.zeros(n, dtype=np.int64)
        self.planned = np.zeros(n, dtype=np.int64)
        self.by_class = np.zeros((n, nclass), dtype=np.int64)
        self.node_failures = np.zeros(n, dtype=np.int64)
        self.no_spare = np.zeros(n, dtype=np.int64)
        self.area = np.zeros(n)
        self.hist = np.zeros(1)
        self.grid = np.linspace(0.0, m.hours, REPAIR_GRID)
        self.over_time = np.zeros((n, REPAIR_GRID))
        self.marks = np.array([m.hours, m.hours + m.tail_hours()]) if window else np.zeros(0)
        #: A point at the end of every chunk (for a time to train: a job that sees no failure still ends).
        self.end_marks = False
        #: How far the world may run before its run is called endless (set by the runner).
        self.horizon = math.inf

    # -- the start -----------------------------------------------------------------------------------------
    def _stationary_pool(self, rng: np.random.Generator, start: float) -> None:
        """Nodes in repair at ``start`` in the steady state of the rate in force there (M/G/infinity): per class a
        Poisson number of failures in repair, each with the residual of a length-biased repair time."""
        m = self.m
        mult = self._mult(start)
        mean = self.rates * (m.nodes > 0) * m.repair * mult  # (trials, classes): failures in repair
        counts = rng.poisson(mean)
        total = counts.sum(axis=1)
        width = int(total.max(initial=0))
        if width == 0:
            return
        cls = np.zeros((self.n, width), dtype=np.int64)
        live = np.arange(width)[None, :] < total[:, None]
        # Each trial's classes, in class order, one per failure in repair.
        cls[live] = np.repeat(np.tile(np.arange(len(m.rates)), self.n), counts.ravel())
        means = m.repair[cls]
        if m.sigma is None:
            biased = means * rng.standard_gamma(2.0, means.shape)
        else:
            s = m.sigma
            biased = means * np.exp(s * rng.standard_normal(means.shape) + 0.5 * s * s)
        resid = rng.random(means.shape) * biased
        self.rep_t = np.where(live, start + resid, np.inf)
        self.rep_k = np.where(live, m.nodes[cls], 0)
        self.away = self.rep_k.sum(axis=1).astype(float)

    def _replicas_per_node(self) -> float:
        """Replicas waiting per node lacking: the mix of the failures that take nodes (a domain's nodes share
        replicas), for the nodes lacking at the start."""
        m = self.m
        nodes = float((m.rates * m.nodes).sum())
        return float((m.rates * m.replicas).sum()) / nodes if nodes > 0 else 1.0

    def _capacity(self, away: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Restart mode: whether the job is blocked, and its throughput, with ``away`` nodes in repair."""
        m = self.m
        deficit = np.maximum(away - m.spare_nodes, 0.0)
        if m.min_nodes is None:
            blocked = deficit > 0
            return blocked, np.where(blocked, 0.0, 1.0)
        avail = m.job_nodes - deficit
        blocked = avail < m.min_nodes
        return blocked, np.where(blocked, 0.0, avail / m.job_nodes)

    # -- the profile --------------------------------------------------------------------------------------
    def _mult(self, t: float) -> float:
        return self.m.multiplier_at(t)

    def _cum(self, t: float) -> float:
        """The profile's multiplier integrated from 0 to ``t`` (negative before 0, at the first piece's rate)."""
        if t < 0:
            return float(self.mults[0]) * t
        i = int(np.searchsorted(self.knots_t, t, side="right")) - 1
        return float(self.knots_h[i] + self.mults[i] * (t - self.knots_t[i]))

    def _inverse(self, h: np.ndarray) -> np.ndarray:
        """Times at which the cumulative multiplier reaches ``h``."""
        out = np.empty_like(h)
        neg = h < 0
        if neg.any():
            out[neg] = h[neg] / float(self.mults[0])
        pos = ~neg
        if pos.any():
            i = np.searchsorted(self.knots_h, h[pos], side="right") - 1
            mult = self.mults[i]
            with np.errstate(divide="ignore", invalid="ignore"):
                out[pos] = self.knots_t[i] + np.where(mult > 0, (h[pos] - self.knots_h[i]) / mult, 0.0)
        return out

    def _chunk_end(self) -> float:
        """Where the next chunk ends: about TARGET_POINTS points per trial at the rate in force, never across a
        change of the profile's multiplier nor across 0 (a time to train starts its job there)."""
        m, t0 = self.m, self.t
        per_failure = 1.0 + float(np.mean(m.nodes > 0)) + (1.0 if self.cont else 0.0)
        rate = float(self.lam.max(initial=0.0)) * self._mult(t0) * per_failure + m.mu
        length = TARGET_POINTS / rate if rate > 0 else 1e6
        t1 = t0 + min(length, 1e6)
        nxt = self.knots_t[self.knots_t > t0]
        if len(nxt):
            t1 = min(t1, float(nxt[0]))
        if t0 < 0:
            t1 = min(t1, 0.0)
        return t1

    # -- one chunk ----------------------------------------------------------------------------------------
    def _poisson_times(self, rng: np.random.Generator, mean: np.ndarray, lo: np.ndarray, span: np.ndarray) -> np.ndarray:
        """Sorted Poisson points per row, ``mean[i]`` of them on average, uniform on ``[lo, lo + span)``; inf pads."""
        n = rng.poisson(mean)
        width = int(n.max(initial=0))
        if width == 0:
            return np.full((len(mean), 0), np.inf)
        e = rng.standard_exponential((len(mean), width + 1))
        np.cumsum(e, axis=1, out=e)
        total = e[np.arange(len(mean)), n]
        u = e[:, :width] / total[:, None]
        t = lo[:, None] + span[:, None] * u
        t[np.arange(width)[None, :] >= n[:, None]] = np.inf
        return t

    def chunk(self) -> Chunk:
        """Draw the next stretch of the world and return its points for the job."""
        m, n = self.m, self.n
        t0, t1 = self.t, self._chunk_end()
        rng = stream(self.seed, STREAM_WORLD, self.index)
        self.index += 1
        self.t = t1
        h0, h1 = self._cum(t0), self._cum(t1)
        # 1. Failures (times through the profile, classes), repairs, planned interruptions.
        ones = np.ones(n)
        fh = self._poisson_times(rng, self.lam * (h1 - h0), h0 * ones, (h1 - h0) * ones)
        real = np.isfinite(fh)
        ft = np.where(real, self._inverse(np.where(real, fh, 0.0)), np.inf)
        ft = np.where(real, np.clip(ft, t0, np.nextafter(t1, -np.inf)), np.inf)
        width = ft.shape[1]
        u = rng.random((n, width))
        cls = np.minimum((u[:, :, None] > self.cum[:, None, :]).sum(axis=2), len(m.rates) - 1) if width else (
            np.zeros((n, 0), dtype=np.int64)
        )
        k = np.where(real, m.nodes[cls], 0)
        kind = np.where(real, m.kinds[cls], PAD)
        dep = np.where(k > 0, ft + self._repairs(rng, m.repair[cls]), np.inf)
        pt = self._poisson_times(rng, m.mu * (t1 - t0) * ones, t0 * ones, (t1 - t0) * ones)
        # Repairs that end in this chunk (earlier ones still running, and this chunk's); the rest carry over.
        all_t = np.concatenate([self.rep_t, dep], axis=1)
        all_k = np.concatenate([self.rep_k, k], axis=1)
        ends = all_t < t1
        self.rep_t, self.rep_k = _compact(~ends & np.isfinite(all_t), [all_t, all_k], [np.inf, 0])
        dt, dk = _compact(ends, [all_t, all_k], [np.inf, 0])
        marks = self.marks[(self.marks >= t0) & (self.marks < t1)]
        if self.end_marks:
            marks = np.append(marks, t1)
        mk = np.broadcast_to(marks, (n, len(marks)))
        # 2. One sorted stream per trial (failures first among points at one moment: a repair of 0 hours ends
        # after its failure).
        times = np.concatenate([ft, pt, dt, mk], axis=1)
        kinds = np.concatenate(
            [kind, np.where(np.isfinite(pt), PLANNED, PAD), np.where(np.isfinite(dt), _DEPART, PAD), np.full(mk.shape, _MARK)],
            axis=1,
        ).astype(np.int8)
        delta = np.concatenate([k, np.zeros(pt.shape, np.int64), -dk, np.zeros(mk.shape, np.int64)], axis=1)
        rep = np.concatenate([m.replicas[cls] * real, np.zeros((n, times.shape[1] - width), np.int64)], axis=1)
        cls_all = np.concatenate([cls, np.full((n, times.shape[1] - width), -1)], axis=1)
        times, kinds, delta, rep, cls_all = _sort_rows(times, [kinds, delta, rep, cls_all])
        away_before = self.away[:, None] + np.concatenate([np.zeros((n, 1)), np.cumsum(delta, axis=1)[:, :-1]], axis=1)
        away = away_before + delta
        fail = (kinds == RESTART_FAST) | (kinds == RESTART_PERSISTENT) | (kinds == CONTINUE)
        short = fail & (delta > 0) & (away > m.spare_nodes)
        self._count(times, kinds, fail, delta, short, cls_all, away_before, t0, t1)
        # 3. Capacity (restart mode) or replicas out (continue mode) after each point.
        if self.cont:
            times, kinds, delta, cap, blocked, took = self._continue(times, kinds, delta, rep, away, short, t1)
        else:
            blocked, cap = self._capacity(away)
            took = fail & (delta > 0)
        if times.shape[1]:
            self.away = self.away + delta.sum(axis=1)
        # 4. The points that change something for the job.
        prev_cap = np.concatenate([self.cap[:, None], cap[:, :-1]], axis=1)
        prev_blk = np.concatenate([self.blocked[:, None], blocked[:, :-1]], axis=1)
        changes = (cap != prev_cap) | (blocked != prev_blk)
        passive = (kinds == _DEPART) | (kinds == _RETURN)
        keep = (kinds != PAD) & (~passive | changes)
        if times.shape[1]:
            last = np.maximum(np.cumsum(kinds != PAD, axis=1)[:, -1] - 1, 0)
            rows = np.arange(n)
            has = (kinds != PAD).any(axis=1)
            self.cap = np.where(has, cap[rows, last], self.cap)
            self.blocked = np.where(has, blocked[rows, last], self.blocked)
        kinds = np.where(passive | (kinds == _MARK), CHANGE, kinds).astype(np.int8)
        times, kinds, took, cap, blocked = _compact(
            keep, [times, kinds, took, cap, blocked], [np.inf, PAD, False, 1.0, False]
        )
        return Chunk(times, kinds, took, cap, blocked, keep.sum(axis=1))

    def _repairs(self, rng: np.random.Generator, means: np.ndarray) -> np.ndarray:
        sigma = self.m.sigma
        if sigma is None:
            return means * rng.standard_exponential(means.shape)
        return means * np.exp(sigma * rng.standard_normal(means.shape) - 0.5 * sigma * sigma)

    def _count(
        self,
        times: np.ndarray,
        kinds: np.ndarray,
        fail: np.ndarray,
        delta: np.ndarray,
        short: np.ndarray,
        cls: np.ndarray,
        away_before: np.ndarray,
        t0: float,
        t1: float,
    ) -> None:
        """The window's counts of this chunk's points, and the nodes in repair over the window."""
        if not self.window:
            return
        T = self.m.hours
        if t1 <= 0 or t0 >= T:
            return
        n = self.n
        inwin = (times >= 0) & (times < T)
        f = fail & inwin
        self.unplanned += f.sum(axis=1)
        self.planned += ((kinds == PLANNED) & inwin).sum(axis=1)
        self.node_failures += (f & (delta > 0)).sum(axis=1)
        self.no_spare += (short & inwin).sum(axis=1)
        nclass = self.by_class.shape[1]
        slot = (np.arange(n)[:, None] * nclass + cls)[f]
        self.by_class += np.bincount(slot, minlength=n * nclass).reshape(n, nclass)
        # Time at each count of nodes in repair: the span before each point has the count before it; the
        # span after the last, the count after it.
        real = kinds != PAD
        ends = np.where(real, times, t1)
        starts = np.concatenate([np.full((n, 1), t0), ends[:, :-1]], axis=1)
        lo, hi = max(t0, 0.0), min(t1, T)
        span = np.clip(np.minimum(ends, hi), lo, None) - np.clip(np.minimum(starts, hi), lo, None)
        span = np.maximum(span, 0.0)
        last_start = ends[:, -1] if ends.shape[1] else np.full(n, t0)
        tail = np.maximum(hi - np.clip(last_start, lo, hi), 0.0)
        after = away_before[:, -1] + delta[:, -1] if ends.shape[1] else self.away
        self.area += (away_before * span).sum(axis=1) + after * tail
        counts = np.concatenate([away_before.ravel(), after])
        weights = np.concatenate([span.ravel(), tail])
        h = np.bincount(counts.astype(np.int64), weights=weights)
        size = max(len(h), len(self.hist))
        self.hist = np.pad(self.hist, (0, size - len(self.hist))) + np.pad(h, (0, size - len(h)))
        # Nodes in repair at the grid's moments that fall in this chunk: the count after the last point at or
        # before each (before the first: the count before it).
        g = (self.grid >= t0) & ((self.grid < t1) | ((self.grid == T) & (t1 >= T)))
        if g.any():
            moments = self.grid[g]
            idx = (times[:, None, :] <= moments[None, :, None]).sum(axis=2)  # points at or before each moment
            padded = np.concatenate([away_before[:, :1] if away_before.shape[1] else self.away[:, None], away_before + delta], axis=1)
            self.over_time[:, g] = np.take_along_axis(padded, idx, axis=1)

    def _continue(
        self,
        times: np.ndarray,
        kinds: np.ndarray,
        delta: np.ndarray,
        rep: np.ndarray,
        away: np.ndarray,
        short: np.ndarray,
        t1: float,
    ) -> tuple[np.ndarray, ...]:
        """Continue mode: the replicas' returns that fall in this chunk merged into its stream, and the replicas
        out (so the throughput) after each point (docs/model.md, "Replicas")."""
        m, n = self.m, self.n
        lacking = np.maximum(away - m.spare_nodes, 0.0)
        before = np.concatenate([np.maximum(self.away - m.spare_nodes, 0.0)[:, None], lacking[:, :-1]], axis=1)
        owed = self.owed[:, None] + np.cumsum(np.maximum(lacking - before, 0.0), axis=1)
        paid = self.paid[:, None] + np.cumsum(np.maximum(before - lacking, 0.0), axis=1)
        width = times.shape[1]
        # Waiting replicas: those carried over, and this chunk's failures that found no spare.
        sl, sc = np.nonzero(short)
        new_thr = np.full((n, width), np.inf)
        new_thr[sl, sc] = owed[sl, sc]
        thr = np.concatenate([self.thr, new_thr], axis=1)
        thr_rep = np.concatenate([self.thr_rep, np.where(short, rep, 0).astype(float)], axis=1)
        ql, qc = np.nonzero(np.isfinite(thr))
        at = _first_reaching(paid, thr[ql, qc], ql)
        found = at < width
        back = np.full(thr.shape, np.inf)
        back[ql[found], qc[found]] = times[ql[found], at[found]] + m.rejoin
        resolved = np.isfinite(back)
        still = np.isfinite(thr) & ~resolved
        self.thr, self.thr_rep = _compact(still, [thr, thr_rep], [np.inf, 0.0])
        # Returns: of continuing failures that found their spares, of waiting replicas that got their nodes, and
        # those scheduled earlier.
        cont_ok = (kinds == CONTINUE) & ~short
        ret_now = np.where(cont_ok, times + m.cont_out, np.inf)
        all_t = np.concatenate([self.ret_t, ret_now, back], axis=1)
        all_r = np.concatenate([self.ret_rep, np.where(cont_ok, rep, 0).astype(float), np.where(resolved, thr_rep, 0.0)], axis=1)
        here = all_t < t1
        self.ret_t, self.ret_rep = _compact(np.isfinite(all_t) & ~here, [all_t, all_r], [np.inf, 0.0])
        rt, rr = _compact(here & (all_r > 0), [all_t, all_r], [np.inf, 0.0])
        self.owed = owed[:, -1] if width else self.owed
        self.paid = paid[:, -1] if width else self.paid
        out_by = np.where(cont_ok | short, rep, 0).astype(float)
        took = ((kinds == RESTART_FAST) | (kinds == RESTART_PERSISTENT) | (kinds == CONTINUE)) & (delta > 0)
        t2 = np.concatenate([times, rt], axis=1)
        k2 = np.concatenate([kinds, np.where(np.isfinite(rt), _RETURN, PAD).astype(np.int8)], axis=1)
        d2 = np.concatenate([delta, np.zeros(rt.shape, dtype=delta.dtype)], axis=1)
        o2 = np.concatenate([out_by, -rr], axis=1)
        tk2 = np.concatenate([took, np.zeros(rt.shape, dtype=bool)], axis=1)
        t2, k2, d2, o2, tk2 = _sort_rows(t2, [k2, d2, o2, tk2])
        out = self.out[:, None] + np.cumsum(o2, axis=1)
        if t2.shape[1]:
            self.out = out[:, -1]
        cap = np.clip(1.0 - out * m.rep_share, 0.0, 1.0)
        blocked = np.zeros(cap.shape, dtype=bool)
        return t2, k2, d2, cap, blocked, tk2
