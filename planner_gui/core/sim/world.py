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

from ..util.streams import stream
from .lives import Lives
from .model import CONTINUE, RESTART_FAST, RESTART_PERSISTENT, SimModel
from .racks import Racks, settle_hours

__all__ = [
    "CHANGE",
    "PAD",
    "PLANNED",
    "REPAIR_GRID",
    "Chunk",
    "World",
    "failed_in_a_row",
    "padded_sum",
]

#: Point kinds beyond the classes' (RESTART_FAST, RESTART_PERSISTENT, CONTINUE): 0 pads a trial's row.
PAD, PLANNED, CHANGE = 0, 4, 5
# (internal: a repair completion, a replica's return, a window mark, a node turning slow)
_DEPART, _RETURN, _MARK, _SLOW, _SDC = 6, 7, 8, 9, 10
STREAM_WORLD = 31
#: Fail-slow episodes have a stream of their own, so that turning them on changes no other draw.
STREAM_SLOW = 33
#: Checkpoints that fail draw from a stream of their own too.
STREAM_FAIL = 34
#: Node lives that are not exponential draw from a stream of their own too.
STREAM_LIVES = 35
#: Which failures a rack's warm spare covers draws from a stream of its own too.
STREAM_RACKS = 36
#: Silent corruptions' detection delays draw from a stream of their own too.
STREAM_SDC = 37
#: A chunk's ``sdc`` at a failure that finds a silent corruption (a corruption's start: 1.0 or 1.5, Chunk.sdc).
SDC_FOUND = 2.0
#: Silent corruptions of a Poisson class are drawn in blocks of this many hours of the profile's clock, each block
#: from the stream STREAM_SDC and this plus its index (blocks before the profile's 0 have negative indices).
SDC_BLOCK_HOURS = 256.0
SDC_BLOCK_STREAM = 1 << 44
#: Bad nodes (their extra failures, which node fails and what is pulled) draw from a stream of their own too.
STREAM_BAD = 38
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
    slow: np.ndarray | None = None  # the job's speed after the point (fail-slow nodes; None: none modelled)
    #: Detection + restart after each failure, hours, by its class (detection per cause; None: the model's one).
    dr: np.ndarray | None = None
    #: Checkpoints that fail (docs/model.md 2.1, 2.2), per point (3, rows, points): the snapshots and the persistent
    #: saves that failed, counted back from the latest before the point, and 1.0 where a restore from the fast
    #: tier at the point fails its validation (None: none fail).
    fail: np.ndarray | None = None
    #: Silent data corruption (docs/model.md, "Silent data corruption"), per point: 0, :data:`SDC_FOUND` where a
    #: failure finds a corruption, and where one starts 1.5 or 1.0: whether an upload in flight then would save (drawn
    #: here; the job reads it where the saves after it leave that save's fate open); None: every corruption is found
    #: at once.
    sdc: np.ndarray | None = None


def failed_in_a_row(u: np.ndarray, p: float) -> np.ndarray:
    """From uniforms on [0, 1): how many saves in a row, counted back from the latest, failed, each with chance
    ``p`` (0 with ``p`` = 0): ``P(n or more) = p^n``."""
    if p <= 0.0:
        return np.zeros_like(u)
    out: np.ndarray = np.floor(np.log1p(-u) / math.log(p))
    return out


def padded_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two histograms of counts from 0 added, the shorter padded with zeros."""
    size = max(len(a), len(b))
    return np.asarray(np.pad(a, (0, size - len(a))) + np.pad(b, (0, size - len(b))))


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


def _from_entries(n: int, rows: np.ndarray, arrays: list[np.ndarray], fill: list[float]) -> list[np.ndarray]:
    """Rows of entries given as a list (``rows[i]`` the row of entry ``i``, non-decreasing), each row's in the
    order given, padded with ``fill``: what :func:`_compact` gives, from a few entries rather than a full mask."""
    counts = np.bincount(rows, minlength=n)
    width = int(counts.max(initial=0))
    starts = np.cumsum(counts) - counts
    pos = np.arange(len(rows)) - starts[rows]
    out = []
    for a, f in zip(arrays, fill):
        b = np.full((n, width), f, dtype=a.dtype)
        b[rows, pos] = a
        out.append(b)
    return out


def _sort_rows(times: np.ndarray, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Every row in time order, the others alike. The order among equal times is not kept: the world never gives
    two points one moment where their order matters, so numpy's fastest sort does. (A repair of no time ends just
    after its failure, :func:`_after`; a return of no time may come before its own failure at the same moment,
    which changes nothing: the replicas are out for no time either way.)"""
    order = np.argsort(times, axis=1)
    flat = (order + (np.arange(times.shape[0]) * times.shape[1])[:, None]).ravel()
    return [a.ravel()[flat].reshape(a.shape) for a in (times, *arrays)]


def _after(t: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``t`` (times derived from ``at`` by adding a duration), never before the next representable time after
    ``at``: a repair, however short, ends after its failure in a row's order (the failure counts the node)."""
    out: np.ndarray = np.maximum(t, np.nextafter(at, np.inf))
    return out


def _first_reaching(values: np.ndarray, targets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For each query (``rows[i]``, ``targets[i]``): the index of its row's first entry of ``values`` (non-
    decreasing along each row) that reaches the target, or the row's width if none does. One search over all
    rows laid end to end, each shifted past the one before."""
    width = values.shape[1]
    if not len(targets) or width == 0:
        return np.full(len(targets), width, dtype=np.int64)
    finite = np.isfinite(values)
    hi = float(max(values[finite].max(initial=-np.inf), targets.max())) + 1.0
    lo = float(min(values[finite].min(initial=np.inf), targets.min()))
    values = np.where(finite, values, hi)  # (pads: beyond every target)
    top = hi - lo + 1.0
    offset = np.arange(values.shape[0], dtype=float) * top
    line = (values - lo + offset[:, None]).ravel()
    idx = np.searchsorted(line, targets - lo + offset[rows], side="left") - rows * width
    out: np.ndarray = np.minimum(idx, width).astype(np.int64)
    return out


#: The number of the window's first chunk (the warm-up's are numbered from 0 and stop at the window).
WINDOW_CHUNKS = 1 << 16


class World:
    """The world of one model's ``trials`` trials, from ``start`` hours on, one chunk at a time."""

    def __init__(
        self,
        m: SimModel,
        trials: int,
        seed: int,
        start: float,
        *,
        window: bool,
        offsets: np.ndarray | None = None,
        rate_rows: np.ndarray | None = None,
    ) -> None:
        """``offsets``: per row, where its time 0 is on the profile (hours; a stretch of a window, docs/model.md
        2.9), before 0 the rate in force there; None: every row's 0 is the profile's. ``rate_rows``: per row,
        the row of the drawn rates it takes (None: its own)."""
        self.m, self.n, self.seed = m, trials, seed
        self.t = start
        self.index = 0
        self.window = window
        drawn = trials if rate_rows is None else int(rate_rows.max(initial=-1)) + 1
        rates = np.array(m.trial_rates(drawn), dtype=float)
        if rate_rows is not None:
            rates = rates[rate_rows]
        # The classes of Weibull lives (docs/model.md, "Node lives") come from their positions, not the Poisson
        # stream; their rates (the long-run ones) still count for the pool's steady state.
        weibull = np.zeros(0, dtype=np.int64) if m.shapes is None else np.flatnonzero(m.shapes != 1.0)
        poisson = rates.copy()
        poisson[:, weibull] = 0.0
        # Silent corruptions found late of a Poisson class start in a stream of their own, drawn in blocks of the
        # profile's clock (docs/model.md, "Silent data corruption"): the same ones whatever the other rates or the
        # chunks, so that a paired comparison keeps them.
        self.sdc_blocks = m.sdc_class >= 0 and m.sdc_detect > 0.0 and m.sdc_class not in weibull
        if self.sdc_blocks:
            poisson[:, m.sdc_class] = 0.0
        self.lam = poisson.sum(axis=1)
        nclass = len(m.rates)
        self.nclass = nclass
        with np.errstate(invalid="ignore", divide="ignore"):
            cum = np.cumsum(poisson, axis=1) / np.where(self.lam > 0, self.lam, 1.0)[:, None]
        cum[:, -1] = 1.0
        if len(weibull):  # (the last class of the stream takes the rounding, not a Weibull class after it)
            cum[cum > 1.0 - 1e-12] = 1.0
        self.shared_mix = m.rate_draws is None  # every trial has the same mix of classes
        # For one search over all trials' class shares laid end to end: trial i's shares shifted by 2 i.
        self.cum_line = (cum + 2.0 * np.arange(trials)[:, None]).ravel()
        self.cum0 = cum[0] if trials else np.ones(nclass)
        self.rates = rates
        # The profile's cumulative multiplier at its piece starts (hours from 0).
        ps, pm = m.profile_starts, m.profile_mults
        self.knots_t = ps
        self.knots_h = np.concatenate([[0.0], np.cumsum(np.diff(ps) * pm[:-1])])
        self.mults = pm
        # Where each row's 0 is on the profile (0 but for the stretches of a preview's window), the cumulative
        # multiplier there, and the multiplier in force there (the rate before 0).
        self.shifted = offsets is not None
        self.offsets = np.zeros(trials) if offsets is None else np.asarray(offsets, dtype=float)
        idx = np.maximum(np.searchsorted(ps, self.offsets, side="right") - 1, 0)
        self.mult0 = pm[idx]
        self.h_at0 = self.knots_h[idx] + self.mult0 * (self.offsets - ps[idx])
        # Node lives: per Weibull class, its positions; each row's scale from its rate (the job's nodes over the
        # rate are the mean life).
        self.lives: list[tuple[int, Lives]] = []
        if len(weibull):
            lives_rng = stream(seed, STREAM_LIVES, 1 << 40)
            h_start = self._cum(start)
            for w in weibull:
                shape = float(m.shapes[w])  # type: ignore[index]
                with np.errstate(divide="ignore"):
                    scale = np.where(rates[:, w] > 0, m.job_nodes / rates[:, w], np.inf) / math.gamma(1.0 + 1.0 / shape)
                lives = Lives(shape, scale, m.job_nodes, new=m.lives_new, h_start=h_start, rng=lives_rng)
                self.lives.append((int(w), lives))
        # What a point's tag means: classes 0..J-1 fail, J..2J-1 end a repair, 2J planned, 2J+1 a mark,
        # 2J+2..3J+1 a continuing failure's replicas return, 3J+2 pads, 3J+3 a return carried over, 3J+4 a node
        # turns slow, 3J+5 a slow node's drain (a planned interruption of the job), 3J+6..4J+5 classes 0..J-1 fail
        # and a warm spare of the rack covers it (docs/model.md, "Racks": nothing leaves the job's racks), 4J+6 a
        # silent corruption starts (docs/model.md, "Silent data corruption": found later as its class's failure).
        j = nclass
        self.tag_pad = 3 * j + 2
        self.tag_carried = 3 * j + 3  # a return scheduled in an earlier chunk (its replicas travel beside it)
        self.tag_slow, self.tag_drain = 3 * j + 4, 3 * j + 5
        self.tag_cover = 3 * j + 6
        self.tag_sdc = 4 * j + 6
        tags_n = 4 * j + 7
        kind_t = np.full(tags_n, PAD, dtype=np.int8)
        kind_t[3 * j + 6 : 4 * j + 6] = m.kinds
        # Per tag: a failure, its class, and whether it took nodes (a restart after it pays the swap).
        self.fail_t = np.zeros(tags_n, dtype=bool)
        self.fail_t[:j] = self.fail_t[3 * j + 6 : 4 * j + 6] = True
        self.cls_t = np.zeros(tags_n, dtype=np.int64)
        self.cls_t[:j] = self.cls_t[3 * j + 6 : 4 * j + 6] = np.arange(j)
        self.took_t = np.zeros(tags_n, dtype=bool)
        self.took_t[:j] = m.nodes > 0
        self.took_t[3 * j + 6 : 4 * j + 6] = True
        # (a failure that takes nodes on racks and is not covered moves them: it pays the rack move too)
        self.moved_t = np.zeros(tags_n, dtype=bool)
        self.moved_t[:j] = (m.nodes > 0) & bool(m.racks)
        self.racks = Racks(trials, m.racks, m.rack_spares) if m.racks and m.rack_spares else None
        kind_t[3 * j + 3] = _RETURN
        kind_t[3 * j + 4] = _SLOW
        kind_t[3 * j + 5] = PLANNED
        kind_t[4 * j + 6] = _SDC
        kind_t[:j] = m.kinds
        kind_t[j : 2 * j] = _DEPART
        kind_t[2 * j] = PLANNED
        kind_t[2 * j + 1] = _MARK
        kind_t[2 * j + 2 : 3 * j + 2] = _RETURN
        self.kind_t = kind_t
        delta_t = np.zeros(tags_n, dtype=np.int64)
        delta_t[:j] = m.nodes
        delta_t[j : 2 * j] = -m.nodes
        self.delta_t = delta_t
        rep_t = np.zeros(tags_n)
        rep_t[:j] = rep_t[3 * j + 6 : 4 * j + 6] = m.replicas
        rep_t[2 * j + 2 : 3 * j + 2] = -m.replicas
        self.rep_t_table = rep_t
        n = trials
        rng = stream(seed, STREAM_WORLD, 1 << 40)  # the state at the start (its own stream)
        self.pool = m.track_pool
        self.rep_t = np.full((n, 0), np.inf)  # repairs still running: their end and class
        self.rep_c = np.zeros((n, 0), dtype=np.int64)
        self.away = np.zeros(n)
        if self.pool and not m.new_cluster:
            self._stationary_pool(rng, start)
        # Fail-slow episodes under way (docs/model.md, "Fail-slow nodes"): their drains still to come, in order.
        self.slow = m.slow_rate > 0.0
        self.slow_ends = np.full((n, 0), np.inf)
        if self.slow and not m.new_cluster:
            self._stationary_slow(start)
        self.slow_n = np.isfinite(self.slow_ends).sum(axis=1).astype(float)
        # Silent corruptions under way (docs/model.md, "Silent data corruption"): when each will be found, in order;
        # those under way when the job begins start for it then (a window's first chunk, a time to train's at 0).
        self.sdc = m.sdc_class >= 0 and m.sdc_detect > 0.0
        self.sdc_found = np.full((n, 0), np.inf)
        self.sdc_due = self.sdc
        # (the blocks' starts drawn and not yet reached, on the profile's clock, with their delays; the next block)
        self.sdc_h = np.full((n, 0), np.inf)
        self.sdc_d = np.zeros((n, 0))
        self.sdc_floor = self._cum(start)
        self.sdc_block = math.floor((float(self.sdc_floor.min()) if n else 0.0) / SDC_BLOCK_HOURS)
        if self.sdc and not m.new_cluster:
            self._stationary_sdc(start)
        # Bad nodes (docs/model.md, "Bad nodes"): from the job's start, per row the job's bad nodes and the pool's
        # (those ready and those in repair, each as it will come back; a finite pool only), each bad node's extra
        # failures per hour on the profile's clock, and the bad classes' shares of them.
        self.bad = m.bad_cls is not None
        self.bad_due = self.bad
        self.bad_n = np.zeros(n)
        self.bad_pool = np.zeros(n)
        if self.bad:
            assert m.bad_cls is not None
            per_node = rates[:, m.bad_cls] / max(m.job_nodes, 1)
            self.bad_extra = (m.bad_mult - 1.0) * per_node.sum(axis=1)
            self.bad_classes = np.flatnonzero(m.bad_cls)
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.cumsum(per_node, axis=1) / per_node.sum(axis=1, keepdims=True)
            share[:, -1] = 1.0
            self.bad_cum = np.nan_to_num(share, nan=1.0)
            self.bad_mask = np.zeros(nclass, dtype=bool)
            self.bad_mask[self.bad_classes] = True
            # (the window's edges on the profile's clock: its counts, and the bad nodes left at its end)
            self.bad_h0, self.bad_hT = self._cum(0.0), self._cum(m.hours)
        #: The window's bad-node figures: failures of bad nodes, pulls of a healthy node instead of the failed one,
        #: bad nodes pulled and fixed, and the job's bad nodes at the window's end.
        self.bad_failures = np.zeros(n, dtype=np.int64)
        self.misdiagnosed = np.zeros(n, dtype=np.int64)
        self.bad_fixed = np.zeros(n, dtype=np.int64)
        self.bad_end = np.full(n, np.nan)
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
        self.unplanned = np.zeros(n, dtype=np.int64)
        self.planned = np.zeros(n, dtype=np.int64)
        self.slow_drains = np.zeros(n, dtype=np.int64)
        self.by_class = np.zeros((n, nclass), dtype=np.int64)
        self.node_failures = np.zeros(n, dtype=np.int64)
        #: Failures a rack's warm spare covered (docs/model.md, "Racks"; the others that take nodes move racks).
        self.covered = np.zeros(n, dtype=np.int64)
        self.no_spare = np.zeros(n, dtype=np.int64)
        self.area = np.zeros(n)
        self.hist = np.zeros(1)
        #: Node-losing failures in the window by the nodes in repair just after them (their own included).
        self.need_hist = np.zeros(1)
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
        if self.racks is not None:
            self._settled_racks(start)
            return
        # (trials, classes): failures in repair, at the rate in force at each row's 0 (``start`` is before it)
        mean = self.rates * (m.nodes > 0) * m.repair * self.mult0[:, None]
        counts = rng.poisson(mean)
        total = counts.sum(axis=1)
        width = int(total.max(initial=0))
        if width == 0:
            return
        cls = np.zeros((self.n, width), dtype=np.int64)
        live = np.arange(width)[None, :] < total[:, None]
        cls[live] = np.repeat(np.tile(np.arange(len(m.rates)), self.n), counts.ravel())
        means = m.repair[cls]
        if m.sigma is None:
            biased = means * rng.standard_gamma(2.0, means.shape)
        else:
            s = m.sigma
            biased = means * np.exp(s * rng.standard_normal(means.shape) + 0.5 * s * s)
        resid = rng.random(means.shape) * biased
        self.rep_t = np.where(live, start + resid, np.inf)
        self.rep_c = cls
        self.away = np.where(live, m.nodes[cls], 0).sum(axis=1).astype(float)

    def _settled_racks(self, start: float) -> None:
        """Racks with warm spares (docs/model.md, "Racks"): which failures the spares covered depends on the failures
        before, so the steady state at ``start`` is the world of the :func:`.racks.settle_hours` before it, from no
        node in repair, at the rate in force at each row's 0 (the failures that take nodes, their classes, repairs and
        racks; from the racks' own stream)."""
        m = self.m
        rng = stream(self.seed, STREAM_RACKS, 1 << 40)
        takes = m.nodes > 0
        hours = max((settle_hours(float(h), m.sigma) for h in m.repair[takes]), default=0.0)
        rates = self.rates * takes * self.mult0[:, None]
        lam = rates.sum(axis=1)
        times = self._poisson_times(rng, lam * hours, start - hours, hours)
        if times.shape[1] == 0:
            return
        live = np.isfinite(times)
        with np.errstate(invalid="ignore", divide="ignore"):
            cum = np.cumsum(rates, axis=1) / np.where(lam > 0, lam, 1.0)[:, None]
        u = rng.random(times.shape)
        # (each row's class shares laid end to end, shifted by 2 a row: one search for all)
        rows = np.arange(self.n)[:, None]
        line = (cum + 2.0 * rows).ravel()
        cls = np.minimum(np.searchsorted(line, u + 2.0 * rows, side="right") - rows * self.nclass, self.nclass - 1)
        ends = _after(times + self._repairs(rng, m.repair[cls]), times)
        r, c = np.nonzero(live)
        assert self.racks is not None and m.rack_take is not None and m.rack_cover is not None
        covered = self.racks.place(
            rng, r, times[r, c], ends[r, c], m.rack_take[cls[r, c]], m.rack_cover[cls[r, c]], start
        )
        out = np.full(times.shape, np.inf)
        out[r, c] = np.where(covered, np.inf, ends[r, c])
        out[out <= start] = np.inf  # (back before the start: no longer in repair)
        self.rep_t, self.rep_c = _compact(np.isfinite(out), [out, cls], [np.inf, 0])
        self.away = np.where(np.isfinite(self.rep_t), m.nodes[self.rep_c], 0).sum(axis=1).astype(float)

    def _stationary_slow(self, start: float) -> None:
        """Slow episodes under way at ``start`` in their steady state (M/D/infinity): a Poisson number of mean
        ``rate x detect``, each drained after a residual uniform on ``[0, detect)``."""
        m = self.m
        rng = stream(self.seed, STREAM_SLOW, 1 << 40)
        counts = rng.poisson(m.slow_rate * m.slow_detect, self.n)
        width = int(counts.max(initial=0))
        resid = rng.random((self.n, width)) * m.slow_detect
        self.slow_ends = np.where(np.arange(width)[None, :] < counts[:, None], start + resid, np.inf)
        self.slow_ends.sort(axis=1)  # (in time order; the masked entries are uniform, whichever they are)

    def _stationary_sdc(self, start: float) -> None:
        """Corruptions under way at ``start`` in their steady state (M/M/infinity): a Poisson number of mean ``rate x
        delay`` (the class's rate in force there), each found after an exponential residual of the delay's mean."""
        m = self.m
        rng = stream(self.seed, STREAM_SDC, 1 << 40)
        counts = rng.poisson(self.rates[:, m.sdc_class] * self.mult0 * m.sdc_detect)
        width = int(counts.max(initial=0))
        resid = rng.standard_exponential((self.n, width)) * m.sdc_detect
        self.sdc_found = np.where(np.arange(width)[None, :] < counts[:, None], start + resid, np.inf)
        self.sdc_found.sort(axis=1)

    @property
    def speed(self) -> np.ndarray:
        """Per row, the job's speed now: the slow factor while a slow episode is under way, else 1."""
        return np.where(self.slow_n > 0, self.m.slow_factor, 1.0)

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
        avail = m.job_nodes - deficit * m.rack_share  # (on racks: a rack lacking is its job's trays)
        blocked = avail < m.min_nodes
        return blocked, np.where(blocked, 0.0, avail / m.job_nodes)

    # -- the profile --------------------------------------------------------------------------------------
    def _cum(self, t: float) -> np.ndarray:
        """Per row: the profile's multiplier integrated from the profile's 0 to the row's ``t`` (before the row's 0,
        at the rate in force there)."""
        if t <= 0:
            out: np.ndarray = self.h_at0 + self.mult0 * t
            return out
        u = self.offsets + t
        i = np.searchsorted(self.knots_t, u, side="right") - 1
        return np.asarray(self.knots_h[i] + self.mults[i] * (u - self.knots_t[i]))

    def _inverse(self, h: np.ndarray) -> np.ndarray:
        """Per row (rows of ``h``): the row's times at which the cumulative multiplier (from the profile's 0)
        reaches ``h``."""
        rel = h - self.h_at0[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            before = rel / self.mult0[:, None]
        if len(self.mults) == 1:
            return np.asarray(before)
        pos = rel >= 0
        finite = np.isfinite(h) & pos
        out = np.where(pos, np.inf, before)
        if finite.any():
            hv = h[finite]
            i = np.searchsorted(self.knots_h, hv, side="right") - 1
            mult = self.mults[i]
            rows = np.nonzero(finite)[0]
            with np.errstate(divide="ignore", invalid="ignore"):
                u = self.knots_t[i] + np.where(mult > 0, (hv - self.knots_h[i]) / mult, 0.0)
            out[finite] = u - self.offsets[rows]
        return np.asarray(out)

    def _chunk_end(self) -> float:
        """Where the next chunk ends: about TARGET_POINTS points per trial at the rate in force, never across a
        change of the profile's multiplier nor across 0 (a time to train starts its job there)."""
        m, t0 = self.m, self.t
        per_failure = 1.0 + (float(np.mean(m.nodes > 0)) if self.pool else 0.0) + (1.0 if self.cont else 0.0)
        u = self.offsets + max(t0, 0.0)  # (the highest multiplier in force among the rows)
        mult = float(self.mults[np.maximum(np.searchsorted(self.knots_t, u, side="right") - 1, 0)].max())
        lam = self.lam + (self.bad_extra * self.bad_n if self.bad and not self.bad_due else 0.0)
        rate = float(np.max(lam, initial=0.0)) * mult * per_failure + m.mu + 2.0 * m.slow_rate
        length = TARGET_POINTS / rate if rate > 0 else 1e6
        if self.lives:  # (their rate changes with the positions' ages: each says how far its share reaches)
            h0 = self._cum(t0)
            reach = min(lives.span(h0, TARGET_POINTS / (2.0 * len(self.lives))) for _, lives in self.lives)
            length = min(length, reach / mult if mult > 0 else 1e6)
        t1 = t0 + min(length, 1e6)
        nxt = self.knots_t[self.knots_t > t0]
        if len(nxt) and not self.shifted:  # (rows at other places on the profile: its changes fall inside chunks)
            t1 = min(t1, float(nxt[0]))
        if t0 < 0:
            t1 = min(t1, 0.0)
        return t1

    # -- one chunk ----------------------------------------------------------------------------------------
    @staticmethod
    def _poisson_times(
        rng: np.random.Generator, mean: np.ndarray, lo: float | np.ndarray, span: float | np.ndarray
    ) -> np.ndarray:
        """Sorted Poisson points per row, ``mean[i]`` of them on average, uniform on ``[lo, lo + span)`` (either
        one for all rows, or per row); inf pads."""
        n = rng.poisson(mean)
        width = int(n.max(initial=0))
        if width == 0:
            return np.full((len(mean), 0), np.inf)
        e = rng.standard_exponential((len(mean), width + 1))
        np.cumsum(e, axis=1, out=e)
        total = e[np.arange(len(mean)), n]
        e = e[:, :width]
        e *= (span / total)[:, None]
        e += np.asarray(lo, dtype=float).reshape(-1, 1) if np.ndim(lo) else lo
        e[np.arange(width)[None, :] >= n[:, None]] = np.inf
        return e

    def _classes(self, u: np.ndarray) -> np.ndarray:
        """The class of each failure from its uniform (the trial's own mix with rate uncertainty)."""
        last = self.nclass - 1
        if self.shared_mix:
            return np.minimum(np.searchsorted(self.cum0, u, side="right"), last)
        rows = np.arange(self.n)[:, None]
        idx = np.searchsorted(self.cum_line, u + 2.0 * rows, side="right") - rows * self.nclass
        out: np.ndarray = np.minimum(idx, last)
        return out

    def chunk(self) -> Chunk:
        """Draw the next stretch of the world and return its points for the job."""
        m, n, j = self.m, self.n, self.nclass
        t0, t1 = self.t, self._chunk_end()
        if t0 >= 0.0 and self.index < WINDOW_CHUNKS:
            # The window's chunks are numbered from its start whatever the warm-up before it, so runs that
            # differ only in their warm-up (a sweep's checkpoint intervals) draw the same failures in it.
            self.index = WINDOW_CHUNKS
        rng = stream(self.seed, STREAM_WORLD, self.index)
        self.index += 1
        self.t = t1
        # 1. Failures (times through the profile, classes), repairs, planned interruptions.
        h0, h1 = self._cum(t0), self._cum(t1)
        fh = self._poisson_times(rng, self.lam * (h1 - h0), h0, h1 - h0)
        cls = self._classes(rng.random(fh.shape))
        if self.lives:  # the failures of node lives (on the profile's clock too), after the Poisson stream's
            lives_rng = stream(self.seed, STREAM_LIVES, self.index - 1)
            drawn = [(w, lives.draw(lives_rng, h0, h1)) for w, lives in self.lives]
            fh = np.concatenate([fh, *(d for _, d in drawn)], axis=1)
            cls = np.concatenate([cls, *(np.full(d.shape, w, dtype=cls.dtype) for w, d in drawn)], axis=1)
        if self.bad and t0 >= 0.0:  # bad nodes' extra failures, and what each node failure pulls
            fh, cls = self._bad_nodes(fh, cls, h0, h1)
        ft = self._inverse(fh) if self.shifted or self.knots_t.size > 1 or self.mults[0] != 1.0 else fh
        real = np.isfinite(fh)
        np.minimum(ft, np.nextafter(t1, -np.inf), out=ft, where=real)
        np.maximum(ft, t0, out=ft, where=real)
        sdc_starts = None
        if self.sdc:  # silent corruptions: this chunk's start here and are found later; those found in it fail here
            ft, cls, real, sdc_starts = self._sdc_points(ft, cls, real, t0, t1, h1)
        pt = self._poisson_times(rng, np.full(n, m.mu * (t1 - t0)), t0, t1 - t0)
        ftag = np.where(real, cls, self.tag_pad)
        parts_t, parts_g = [ft, pt], [ftag, np.where(np.isfinite(pt), 2 * j, self.tag_pad)]
        if self.pool:
            k = np.where(real, m.nodes[cls], 0)
            dep = np.where(k > 0, _after(ft + self._repairs(rng, m.repair[cls]), ft), np.inf)
            if self.racks is not None:  # a rack's warm spare covers some: nothing leaves the job's racks
                r, c = np.nonzero(k > 0)
                covered = self.racks.place(
                    stream(self.seed, STREAM_RACKS, self.index - 1),
                    r,
                    ft[r, c],
                    dep[r, c],
                    m.rack_take[cls[r, c]],  # type: ignore[index]
                    m.rack_cover[cls[r, c]],  # type: ignore[index]
                    t1,
                )
                dep[r[covered], c[covered]] = np.inf
                ftag[r[covered], c[covered]] += self.tag_cover
            all_t = np.concatenate([self.rep_t, dep], axis=1)
            all_c = np.concatenate([self.rep_c, cls], axis=1)
            ends = all_t < t1
            self.rep_t, self.rep_c = _compact(~ends & np.isfinite(all_t), [all_t, all_c], [np.inf, 0])
            dt, dc = _compact(ends, [all_t, all_c], [np.inf, 0])
            parts_t.append(dt)
            parts_g.append(np.where(np.isfinite(dt), j + dc, self.tag_pad))
        if self.slow:  # nodes turning slow, and the drains that fall in this chunk (this one's and those carried)
            starts = self._poisson_times(
                stream(self.seed, STREAM_SLOW, self.index - 1), np.full(n, m.slow_rate * (t1 - t0)), t0, t1 - t0
            )
            ends = np.concatenate([self.slow_ends, starts + m.slow_detect], axis=1)
            here = ends < t1
            (drains,) = _compact(here, [ends], [np.inf])
            (self.slow_ends,) = _compact(~here & np.isfinite(ends), [ends], [np.inf])
            parts_t += [starts, drains]
            parts_g += [
                np.where(np.isfinite(starts), self.tag_slow, self.tag_pad),
                np.where(np.isfinite(drains), self.tag_drain, self.tag_pad),
            ]
        if sdc_starts is not None:
            parts_t.append(sdc_starts)
            parts_g.append(np.where(np.isfinite(sdc_starts), self.tag_sdc, self.tag_pad))
        marks = self.marks[(self.marks >= t0) & (self.marks < t1)]
        if self.end_marks:
            marks = np.append(marks, t1)
        if len(marks):
            parts_t.append(np.broadcast_to(marks, (n, len(marks))))
            parts_g.append(np.full((n, len(marks)), 2 * j + 1))
        cont_fail = real & (m.kinds[cls] == CONTINUE) if self.cont else None
        carried: np.ndarray | None = None
        if cont_fail is not None:
            # Every continuing failure's return, for now (those that find no spare wait for nodes instead: the
            # k-th provisional return of a row is its k-th continuing failure's, both in time order); and the
            # returns scheduled before this chunk that fall in it.
            ret = np.where(cont_fail, ft + m.cont_out + m.rack_move * self.moved_t[ftag], np.inf)
            parts_t.append(np.where(ret < t1, ret, np.inf))
            parts_g.append(np.where(ret < t1, 2 * j + 2 + cls, self.tag_pad))
            here = self.ret_t < t1
            if here.any():
                rt, carried = _compact(here, [self.ret_t, self.ret_rep], [np.inf, 0.0])
                self.ret_t, self.ret_rep = _compact(
                    np.isfinite(self.ret_t) & ~here, [self.ret_t, self.ret_rep], [np.inf, 0.0]
                )
                parts_t.append(rt)
                parts_g.append(np.where(np.isfinite(rt), self.tag_carried, self.tag_pad))
        # 2. One sorted stream per trial.
        times = np.concatenate(parts_t, axis=1)
        tags = np.concatenate(parts_g, axis=1)
        if carried is not None:
            # (the carried returns' replicas travel with them through the sort)
            extra = np.concatenate([np.zeros((n, times.shape[1] - carried.shape[1])), carried], axis=1)
            times, tags, extra = _sort_rows(times, [tags, extra])
        else:
            times, tags = _sort_rows(times, [tags])
            extra = None
        kinds = self.kind_t[tags]
        fail = (kinds == RESTART_FAST) | (kinds == RESTART_PERSISTENT) | (kinds == CONTINUE)
        if self.pool:
            delta = self.delta_t[tags]
            away = self.away[:, None] + np.cumsum(delta, axis=1)
            short = fail & (delta > 0) & (away > m.spare_nodes)
        else:
            delta = away = None
            short = np.zeros(times.shape, dtype=bool)
        self._count(times, tags, kinds, fail, delta, away, short, t0, t1)
        # 3. Capacity (restart mode) or replicas out (continue mode) after each point.
        if self.cont:
            assert cont_fail is not None
            times, kinds, cap, took, tags = self._continue(times, tags, kinds, fail, delta, away, short, extra, t1)
            blocked = np.zeros(cap.shape, dtype=bool)
        elif self.pool and math.isfinite(m.spare_nodes):
            assert delta is not None and away is not None
            blocked, cap = self._capacity(away)
            took = fail & self.took_t[tags]
        else:
            blocked = np.zeros(times.shape, dtype=bool)
            cap = np.ones(times.shape)
            took = fail & self.took_t[tags]
        if self.pool and delta is not None and delta.shape[1]:
            self.away = self.away + delta.sum(axis=1)
        if self.slow:  # the job's speed after each point
            slow_d = (tags == self.tag_slow).astype(float) - (tags == self.tag_drain)
            slow_n = self.slow_n[:, None] + np.cumsum(slow_d, axis=1)
            speed = np.where(slow_n > 0.5, m.slow_factor, 1.0)
            if slow_n.shape[1]:
                self.slow_n = slow_n[:, -1]
        else:
            speed = None
        # 4. The points that change something for the job.
        passive = (kinds == _DEPART) | (kinds == _RETURN)
        if passive.any():
            prev_cap = np.concatenate([self.cap[:, None], cap[:, :-1]], axis=1)
            prev_blk = np.concatenate([self.blocked[:, None], blocked[:, :-1]], axis=1)
            keep = (kinds != PAD) & (~passive | (cap != prev_cap) | (blocked != prev_blk))
        else:
            keep = kinds != PAD
        if times.shape[1]:
            real_pt = kinds != PAD
            last = times.shape[1] - 1 - np.argmax(real_pt[:, ::-1], axis=1)  # each row's last point
            rows = np.arange(n)
            has = real_pt.any(axis=1)
            self.cap = np.where(has, cap[rows, last], self.cap)
            self.blocked = np.where(has, blocked[rows, last], self.blocked)
        # Detection + restart after each failure, by its class (the model's one elsewhere: not read there).
        dr = None
        if m.dr_class is not None or m.rack_move > 0:  # (a move adds to its failure's downtime as a swap would)
            base = m.detect_restart if m.dr_class is None else m.dr_class[self.cls_t[tags]]
            dr = np.where(self.fail_t[tags], base + m.rack_move * self.moved_t[tags], 0.0)
        sdc = None
        if self.sdc:  # (a start carries the fate of an upload in flight then: see Chunk.sdc)
            fate = stream(self.seed, STREAM_SDC, (1 << 41) + self.index - 1).random(times.shape)
            found = self.fail_t[tags] & (self.cls_t[tags] == m.sdc_class)
            sdc = np.where(tags == self.tag_sdc, 1.0 + 0.5 * (fate >= m.save_fail), np.where(found, SDC_FOUND, 0.0))
        kinds = np.where(passive | (kinds == _MARK) | (kinds == _SLOW) | (kinds == _SDC), CHANGE, kinds).astype(np.int8)
        named = [(name, a) for name, a in (("slow", speed), ("dr", dr), ("sdc", sdc)) if a is not None]
        extras = [a for _, a in named]  # (compacted only where modelled)
        fills = [1.0 if name == "slow" else 0.0 for name, _ in named]
        times, kinds, took, cap, blocked, *kept = _compact(
            keep, [times, kinds, took, cap, blocked, *extras], [np.inf, PAD, False, 1.0, False, *fills]
        )
        out = dict(zip([name for name, _ in named], kept))
        fail = self._fail_draws(times.shape) if m.failing else None
        return Chunk(
            times, kinds, took, cap, blocked, keep.sum(axis=1), out.get("slow"), out.get("dr"), fail, out.get("sdc")
        )

    def _bad_nodes(
        self, fh: np.ndarray, cls: np.ndarray, h0: np.ndarray, h1: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """This chunk's failures with bad nodes' (docs/model.md, "Bad nodes"), on the profile's clock.

        A bad node fails ``bad_mult`` times as often by the bad classes: the Poisson stream already has every
        node's failures at a good node's rate (each one a bad node's with the share of the job's nodes that are bad
        then), and this adds a bad node's extra ones, ``(bad_mult - 1)`` times the good rate per bad node. The bad
        count changes only at node failures, so they are walked in time order, all rows at once: the next extra
        failure is an exponential draw at the rate the count gives, redrawn after each failure (the law is without
        memory). At each node failure the failed node is pulled with the chance ``diagnosis``, else a healthy one
        (the failed one when none is left); a bad node pulled comes back bad with the chance ``repair_fail``; the
        node that replaces it is bad with the pool's share (unlimited: ``bad_share``; finite: its bad nodes, the
        pulled one among them, over its spares plus that one). Returns the failures (extra ones appended,
        unsorted) and their classes."""
        m, n = self.m, self.n
        nodes = float(m.job_nodes)
        if self.bad_due:  # the job's start: a share of its nodes and the pool's are bad
            self.bad_due = False
            self.bad_n = np.full(n, float(round(m.bad_share * nodes)))
            if math.isfinite(m.spare_nodes):
                self.bad_pool = np.full(n, float(round(m.bad_share * m.spare_nodes)))
        rng = stream(self.seed, STREAM_BAD, self.index - 1)
        real = np.isfinite(fh)
        on = real & self.bad_mask[cls]
        (base,) = _compact(on, [np.where(on, fh, np.inf)], [np.inf])
        base = np.sort(base, axis=1)
        base = np.concatenate([base, np.full((n, 1), np.inf)], axis=1)  # (an inf past each row's last)
        rows = np.arange(n)
        ptr = np.zeros(n, dtype=np.int64)
        done = np.zeros(n, dtype=bool)
        tau = h0.astype(float).copy()
        bad, pool = self.bad_n, self.bad_pool  # (changed in place below)
        finite = math.isfinite(m.spare_nodes)
        spares = m.spare_nodes if finite else 0.0
        q_unlimited = m.bad_share
        per_bad = self.bad_extra
        # The window's counts: every failure of a chunk wholly inside it counts, none of one wholly outside; only a
        # chunk across an edge compares times (and finds the bad nodes at the window's end).
        h_0, h_end = self.bad_h0, self.bad_hT
        inside = self.window and bool(np.all(h0 >= h_0) and np.all(h1 <= h_end))
        across = self.window and not inside and bool(np.any((h1 > h_0) & (h0 < h_end)))
        # (a chunk that reaches the window's end, even exactly there, finds the bad nodes at it)
        at_end = self.window and bool(np.any((h0 < h_end) & (h1 >= h_end)))
        extra_t: list[np.ndarray] = []  # (per step, the extra failure's time in each row; inf: none)
        block = 64
        k = block
        e_blk = u_blk = np.zeros(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            while True:
                if k == block:  # (the draws come in blocks of steps)
                    e_blk, u_blk, k = rng.standard_exponential((block, n)), rng.random((block, 4, n)), 0
                e, u = e_blk[k], u_blk[k]
                k += 1
                nxt = base[rows, ptr]
                te = tau + e / (per_bad * bad)  # (no bad node: inf)
                at = np.minimum(te, nxt)
                act = at < h1
                act &= ~done
                if at_end:  # (the bad nodes at the window's end: the count before the first failure after it)
                    ends = ~done & (tau < h_end) & (at >= h_end) & np.isnan(self.bad_end)
                    self.bad_end[ends] = bad[ends]
                done |= ~act
                if not act.any():
                    break
                extra = act & (te < nxt)
                failed_bad = act & (u[0] * nodes < bad)
                failed_bad |= extra
                right = u[1] < m.diagnosis
                if m.diagnosis < 1.0 and np.any(bad >= nodes - 1.0):  # (no healthy node to pull instead)
                    right |= nodes - bad - ~failed_bad < 1
                pulled_bad = failed_bad & right
                back_bad = pulled_bad & (u[3] < m.repair_fail) if m.repair_fail > 0 else None
                if finite:
                    q = (pool + back_bad) / (spares + 1.0) if back_bad is not None else pool / (spares + 1.0)
                    new_bad = act & (u[2] < q)
                else:
                    new_bad = act & (u[2] < q_unlimited)
                if inside or across:
                    inwin = act if inside else act & (at >= h_0) & (at < h_end)
                    self.bad_failures += inwin & failed_bad
                    self.misdiagnosed += inwin & ~right
                    fixed = pulled_bad if back_bad is None else pulled_bad & ~back_bad
                    self.bad_fixed += inwin & fixed
                bad += new_bad
                bad -= pulled_bad
                if finite:
                    pool -= new_bad
                    if back_bad is not None:
                        pool += back_bad
                extra_t.append(np.where(extra, at, np.inf))
                np.copyto(tau, at, where=act)
                ptr += act & ~extra
        if at_end:  # (no failure after the window's end in this chunk: the count at its end)
            ends = (tau < h_end) & (h1 >= h_end) & np.isnan(self.bad_end)
            self.bad_end[ends] = bad[ends]
        if not extra_t:
            return fh, cls
        steps = np.stack(extra_t, axis=1)
        r, col = np.nonzero(np.isfinite(steps))
        if not len(r):
            return fh, cls
        t = steps[r, col]
        # Their classes, by the bad classes' shares of a node's failures (the row's own with rate uncertainty).
        u = rng.random(len(r))
        k = (u[:, None] >= self.bad_cum[r][:, :-1]).sum(axis=1)
        c = self.bad_classes[k]
        order = np.argsort(r, kind="stable")
        r, t, c = r[order], t[order], c[order]
        counts = np.bincount(r, minlength=n)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        wide = int(counts.max())
        add_t = np.full((n, wide), np.inf)
        add_c = np.zeros((n, wide), dtype=cls.dtype)
        col = np.arange(len(r)) - starts[r]
        add_t[r, col] = t
        add_c[r, col] = c
        return np.concatenate([fh, add_t], axis=1), np.concatenate([cls, add_c], axis=1)

    def _sdc_points(
        self, ft: np.ndarray, cls: np.ndarray, real: np.ndarray, t0: float, t1: float, h1: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """This chunk's failures with its silent corruptions found late (docs/model.md, "Silent data corruption"):
        the class's failures drawn here become corruptions' starts, each found an exponential delay later as that
        class's failure; the corruptions found in this chunk (drawn here or before) fail here. When the job begins,
        the corruptions under way start for it then. Returns the failures' times, classes and which are real, and
        the starts (inf pads). A Poisson class's corruptions come from their blocks (:meth:`_sdc_block_starts`), node
        lives' from the lives."""
        m = self.m
        is_sdc = real & (cls == m.sdc_class)
        starts = np.where(is_sdc, ft, np.inf)
        found_new = starts
        if is_sdc.any():  # (node lives of the class: their delays, drawn only where they fail)
            delay = stream(self.seed, STREAM_SDC, self.index - 1).standard_exponential(ft.shape)
            found_new = starts + delay * m.sdc_detect
        if self.sdc_blocks:
            block_t, block_d = self._sdc_block_starts(t0, t1, h1)
            starts = np.concatenate([starts, block_t], axis=1)
            found_new = np.concatenate([found_new, block_t + block_d], axis=1)
        carried = self.sdc_found
        every = np.concatenate([carried, found_new], axis=1)
        here = every < t1
        (found,) = _compact(here, [every], [np.inf])
        (self.sdc_found,) = _compact(~here & np.isfinite(every), [every], [np.inf])
        (starts,) = _compact(np.isfinite(starts), [starts], [np.inf])
        if self.sdc_due and (self.window or t0 >= 0.0):
            self.sdc_due = False
            starts = np.concatenate([np.where(np.isfinite(carried), t0, np.inf), starts], axis=1)
        ft = np.concatenate([np.where(is_sdc, np.inf, ft), found], axis=1)
        cls = np.concatenate([cls, np.full(found.shape, m.sdc_class, dtype=cls.dtype)], axis=1)
        return ft, cls, np.isfinite(ft), starts

    def _sdc_block_starts(self, t0: float, t1: float, h1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The corruptions of a Poisson class that start in ``[t0, t1)`` (wall clock; ``h1`` the profile's clock at
        ``t1``, per row) and their delays. They are drawn in blocks of SDC_BLOCK_HOURS of the profile's clock, each
        block from its own stream: a Poisson number at the row's rate, uniform in the block, each with an exponential
        delay, and none before the world's start."""
        m, n = self.m, self.n
        rate = self.rates[:, m.sdc_class]
        top = float(h1.max(initial=-np.inf))
        while self.sdc_block * SDC_BLOCK_HOURS < top:
            rng = stream(self.seed, STREAM_SDC, SDC_BLOCK_STREAM + self.sdc_block)
            lo = self.sdc_block * SDC_BLOCK_HOURS
            counts = rng.poisson(rate * SDC_BLOCK_HOURS)
            width = int(counts.max(initial=0))
            pos = lo + SDC_BLOCK_HOURS * rng.random((n, width))
            delays = rng.standard_exponential((n, width)) * m.sdc_detect
            ok = (np.arange(width)[None, :] < counts[:, None]) & (pos >= self.sdc_floor[:, None])
            self.sdc_h = np.concatenate([self.sdc_h, np.where(ok, pos, np.inf)], axis=1)
            self.sdc_d = np.concatenate([self.sdc_d, delays], axis=1)
            self.sdc_block += 1
        take = self.sdc_h < h1[:, None]
        h, d = _compact(take, [self.sdc_h, self.sdc_d], [np.inf, 0.0])
        self.sdc_h, self.sdc_d = _compact(~take & np.isfinite(self.sdc_h), [self.sdc_h, self.sdc_d], [np.inf, 0.0])
        t = self._inverse(h) if self.shifted or self.knots_t.size > 1 or self.mults[0] != 1.0 else h
        real = np.isfinite(t)
        np.minimum(t, np.nextafter(t1, -np.inf), out=t, where=real)
        np.maximum(t, t0, out=t, where=real)
        return t, d

    def _fail_draws(self, shape: tuple[int, ...]) -> np.ndarray:
        """Per point of this chunk, what fails of the checkpoints (:attr:`Chunk.fail`), from their own stream."""
        u = stream(self.seed, STREAM_FAIL, self.index - 1).random((3, *shape))
        u[:2] = failed_in_a_row(u[:2], self.m.save_fail)
        u[2] = u[2] < self.m.restore_fail
        return u

    def _repairs(self, rng: np.random.Generator, means: np.ndarray) -> np.ndarray:
        sigma = self.m.sigma
        if sigma is None:
            return means * rng.standard_exponential(means.shape)
        return means * np.exp(sigma * rng.standard_normal(means.shape) - 0.5 * sigma * sigma)

    def _count(
        self,
        times: np.ndarray,
        tags: np.ndarray,
        kinds: np.ndarray,
        fail: np.ndarray,
        delta: np.ndarray | None,
        away: np.ndarray | None,
        short: np.ndarray,
        t0: float,
        t1: float,
    ) -> None:
        """The window's counts of this chunk's points, and the nodes in repair over the window."""
        window = self.m.hours
        if not self.window or t1 <= 0 or t0 >= window:
            return
        n, nclass = self.n, self.nclass
        inwin = (times >= 0) & (times < window)
        f = fail & inwin
        self.unplanned += f.sum(axis=1)
        self.planned += ((tags == 2 * nclass) & inwin).sum(axis=1)
        if self.slow:
            self.slow_drains += ((tags == self.tag_drain) & inwin).sum(axis=1)
        slot = (np.arange(n)[:, None] * nclass + self.cls_t[tags])[f]
        self.by_class += np.bincount(slot, minlength=n * nclass).reshape(n, nclass)
        if self.racks is not None:
            self.covered += (f & (tags >= self.tag_cover)).sum(axis=1)
        if delta is None or away is None:
            self.node_failures += (f & self.took_t[tags]).sum(axis=1)
            return
        self.node_failures += (f & (delta > 0)).sum(axis=1)
        self.no_spare += (short & inwin).sum(axis=1)
        lost = f & (delta > 0)
        if lost.any():
            self.need_hist = padded_sum(self.need_hist, np.bincount(away[lost].astype(np.int64)))
        # Time at each count of nodes in repair: between two points the count after the first (before the
        # chunk's first point, the count it starts with); after the last point, to the chunk's end.
        lo, hi = max(t0, 0.0), min(t1, window)
        if times.shape[1] == 0:  # no point: the count holds all the chunk's time in the window
            self.area += self.away * (hi - lo)
            self.hist = padded_sum(self.hist, np.bincount(self.away.astype(np.int64), weights=np.full(n, hi - lo)))
            g = (self.grid >= t0) & ((self.grid < t1) | ((self.grid == window) & (t1 >= window)))
            self.over_time[:, g] = self.away[:, None]
            return
        ends = np.minimum(np.maximum(times, lo), hi)  # (pads: inf -> hi)
        starts = np.concatenate([np.full((n, 1), lo), ends[:, :-1]], axis=1)
        span = ends - starts
        before = np.concatenate([self.away[:, None], away[:, :-1]], axis=1)
        after = away[:, -1] if away.shape[1] else self.away
        tail = hi - (ends[:, -1] if ends.shape[1] else np.full(n, lo))
        self.area += (before * span).sum(axis=1) + after * tail
        h = np.bincount(
            np.concatenate([before.ravel(), after]).astype(np.int64), weights=np.concatenate([span.ravel(), tail])
        )
        self.hist = padded_sum(self.hist, h)
        # Nodes in repair at the grid's moments that fall in this chunk: the count after the last point at or
        # before each (before the first: the count before it).
        g = (self.grid >= t0) & ((self.grid < t1) | ((self.grid == window) & (t1 >= window)))
        if g.any():
            moments = self.grid[g]
            idx = (times[:, None, :] <= moments[None, :, None]).sum(axis=2)
            padded = np.concatenate([self.away[:, None], away], axis=1)
            self.over_time[:, g] = np.take_along_axis(padded, idx, axis=1)

    def _continue(
        self,
        times: np.ndarray,
        tags: np.ndarray,
        kinds: np.ndarray,
        fail: np.ndarray,
        delta: np.ndarray | None,
        away: np.ndarray | None,
        short: np.ndarray,
        carried: np.ndarray | None,
        t1: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Continue mode: the replicas out after each point, so the throughput (docs/model.md, "Replicas").

        Every continuing failure's return is in the stream already, and the returns scheduled in earlier chunks
        that fall in this one (``carried``: their replicas, at their places); those of failures that found no spare
        are taken out here. A failure that found no spare returns ``rejoin`` after the nodes paid to waiting
        replicas reach the nodes owed up to its own: those that fall in this chunk are sorted in."""
        m, n = self.m, self.n
        rep_delta = self.rep_t_table[tags]  # +replicas at failures, -replicas at returns
        cont = kinds == CONTINUE
        out_change = np.where(fail & ~(cont | short), 0.0, rep_delta)
        if carried is not None:
            here = tags == self.tag_carried
            out_change[here] = -carried[here]
            kinds = np.where(here, np.where(carried > 0.0, _RETURN, PAD), kinds).astype(kinds.dtype)
        width = times.shape[1]
        provisional = (kinds == _RETURN) & (tags != self.tag_carried)
        back = times + m.cont_out + m.rack_move * self.moved_t[tags]  # (at the continuing failures: their return)
        if short.any():
            # The returns put in for continuing failures that found no spare: none (they wait for nodes). A
            # row's k-th provisional return is its k-th continuing failure's that returns inside the chunk (both
            # in time order, a failure before its return), so the flattened masks pair them.
            inside = cont & (back < t1)
            shorted = short[inside]
            if shorted.any():
                idx = np.flatnonzero(provisional)[shorted]
                out_change.ravel()[idx] = 0.0
                kinds = kinds.copy()
                kinds.ravel()[idx] = PAD
        # Returns due after this chunk, of the continuing failures that found their spares.
        later = cont & ~short & (back >= t1)
        if later.any():
            fl, fc = np.nonzero(later)
            self._schedule(fl, back[fl, fc], rep_delta[fl, fc])
        # Waiting replicas: carried over, and this chunk's failures that found no spare.
        fifo_rows = fifo_t = fifo_r = None
        if width and (self.thr.shape[1] or short.any()):
            assert delta is not None and away is not None
            lacking = np.maximum(away - m.spare_nodes, 0.0)
            before = np.concatenate([np.maximum(self.away - m.spare_nodes, 0.0)[:, None], lacking[:, :-1]], axis=1)
            owed = self.owed[:, None] + np.cumsum(np.maximum(lacking - before, 0.0), axis=1)
            paid = self.paid[:, None] + np.cumsum(np.maximum(before - lacking, 0.0), axis=1)
            # The queue: those carried over first, then this chunk's, each row's in order.
            ol, oc = np.nonzero(np.isfinite(self.thr))
            sl, sc = np.nonzero(short)
            ql = np.concatenate([ol, sl])
            order = np.argsort(ql, kind="stable")
            ql = ql[order]
            targets = np.concatenate([self.thr[ol, oc], owed[sl, sc]])[order]
            reps = np.concatenate([self.thr_rep[ol, oc], rep_delta[sl, sc]])[order]
            at = _first_reaching(paid, targets, ql)
            found = at < width
            self.thr, self.thr_rep = _from_entries(n, ql[~found], [targets[~found], reps[~found]], [np.inf, 0.0])
            fr, fr_reps = ql[found], reps[found]
            rejoin = times[fr, at[found]] + m.rejoin
            now = (rejoin < t1) & (fr_reps > 0.0)
            self._schedule(fr[~now], rejoin[~now], fr_reps[~now])
            if now.any():
                fifo_rows, fifo_t, fifo_r = fr[now], rejoin[now], fr_reps[now]
            self.owed, self.paid = owed[:, -1], paid[:, -1]
        elif delta is not None and away is not None and width:
            lacking = np.maximum(away - m.spare_nodes, 0.0)
            before = np.concatenate([np.maximum(self.away - m.spare_nodes, 0.0)[:, None], lacking[:, :-1]], axis=1)
            self.owed = self.owed + np.maximum(lacking - before, 0.0).sum(axis=1)
            self.paid = self.paid + np.maximum(before - lacking, 0.0).sum(axis=1)
        took = fail & self.took_t[tags]
        if fifo_rows is not None:  # returns of waiting replicas that fall in this chunk, sorted in
            assert fifo_t is not None and fifo_r is not None
            rt, rr = _from_entries(n, fifo_rows, [fifo_t, fifo_r], [np.inf, 0.0])
            xk = np.where(np.isfinite(rt), _RETURN, PAD).astype(np.int8)
            times, out_change, kinds, took, tags = _sort_rows(
                np.concatenate([times, rt], axis=1),
                [
                    np.concatenate([out_change, -rr], axis=1),
                    np.concatenate([kinds, xk], axis=1),
                    np.concatenate([took, np.zeros(rt.shape, dtype=bool)], axis=1),
                    np.concatenate([tags, np.full(rt.shape, self.tag_pad, dtype=tags.dtype)], axis=1),
                ],
            )
        out = self.out[:, None] + np.cumsum(out_change, axis=1)
        if times.shape[1]:
            self.out = out[:, -1]
        cap = np.clip(1.0 - out * m.rep_share, 0.0, 1.0)
        return times, kinds, cap, took, tags

    def _schedule(self, rows: np.ndarray, at: np.ndarray, reps: np.ndarray) -> None:
        """Add returns (``reps`` replicas back at ``at``, in rows ``rows``, non-decreasing) to those scheduled."""
        if not len(rows):
            return
        rt, rr = _from_entries(self.n, rows, [at, reps], [np.inf, 0.0])
        self.ret_t = np.concatenate([self.ret_t, rt], axis=1)
        self.ret_rep = np.concatenate([self.ret_rep, rr], axis=1)
