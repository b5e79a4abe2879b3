"""Run the general engine: worlds drawn chunk by chunk (:mod:`.world`), the job stepped over them (:mod:`.job`).

Several runs (a sweep's points, the strategies of a comparison) step together: every trial of every run is
one column of one state array, and each step moves every column to its next point. A run's world depends only
on its own model and seed, so each run gives the numbers it gives alone; runs of one seed whose worlds are the
same (a sweep over checkpoint intervals) share their draws.

The points of all columns wait in one buffer, a row per step (``buffer[j]``: every column's ``j``-th point
from the cursor). When a column has used all of its points, each run with such a column draws its next chunk
and the buffer is rebuilt from each column's points left and the new ones. Finished columns stay in the array, no longer
moved, until enough have finished to be worth removing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..util.streams import stream
from . import engine, job
from .model import SimModel
from .world import PAD, Chunk, World, padded_sum

__all__ = [
    "ALL_HOURS_KEYS",
    "HOURS_KEYS",
    "MAX_SEGMENTS",
    "SLOW_HOURS_KEY",
    "SPARES_HOURS_KEYS",
    "SimTrials",
    "segment_models",
    "simulate_train",
    "simulate_windows",
]

STREAM_JOB = 32
#: Steps between two looks at ``should_stop`` and two progress reports.
_REPORT_EVERY = 64
#: How far any trial may run (hours) before the run is called endless (a job that never progresses).
HORIZON_HOURS = 1e7

#: Where the hours of a window go (docs/model.md): those of every model, in display order ...
HOURS_KEYS = ("useful", "checkpoint", "lost_work", "recovery", "planned_restart")
#: ... those a spare pool or continuing on replicas adds ...
SPARES_HOURS_KEYS = ("waiting_for_spares", "reduced_throughput")
#: ... the hours fail-slow nodes take (computing at a slow node's pace) ...
SLOW_HOURS_KEY = "slow"
#: ... the work silent corruptions found late roll back (out of the lost work) ...
SDC_HOURS_KEY = "sdc_rollback"
#: ... and all of them, as the engine labels them.
ALL_HOURS_KEYS = (*HOURS_KEYS, *SPARES_HOURS_KEYS, SLOW_HOURS_KEY, SDC_HOURS_KEY)


#: The counts a window has only with their feature (None without), summed over a preview's stretches.
_OPTIONAL_COUNTS = (
    "slow_drains",
    "restores_failed",
    "rack_covered",
    "rack_moved",
    "sdc_found",
    "sdc_unrecoverable",
    "bad_failures",
    "misdiagnosed",
    "bad_fixed",
)


class Cancelled(engine.Cancelled):
    """Raised when the caller's ``should_stop`` callback asks the engine to stop (one of the engines'
    :class:`..engine.Cancelled`, so a caller of any of them catches one class)."""


class Endless(ValueError):
    """A trial that would never finish: the job makes no progress (e.g. always waiting for spares)."""


@dataclass
class SimTrials:
    """Per-trial results of a window (hours inside it, counts of its events) and the pool over it."""

    hours: dict[str, np.ndarray]
    unplanned: np.ndarray
    planned: np.ndarray
    by_component: np.ndarray
    restores_fast: np.ndarray
    restores_persistent: np.ndarray
    promoted: np.ndarray
    continued: np.ndarray
    node_failures: np.ndarray
    no_spare: np.ndarray
    nodes_in_repair: np.ndarray  # time average over the window
    repair_hist: np.ndarray  # pooled trial-hours at each count of nodes in repair
    repair_over_time: np.ndarray  # (trials, moments): nodes in repair at repair_grid
    repair_grid: np.ndarray
    #: Node-losing failures (all trials) by the nodes in repair just after them, their own included: a
    #: failure finds its spares in a pool of ``S`` nodes when that count is at most ``S``.
    need_hist: np.ndarray | None = None
    #: A window in stretches (docs/model.md 2.9): each trial's useful hours in each stretch, in time order
    #: (trials, stretches); None for a window stepped whole.
    useful_by_stretch: np.ndarray | None = None
    #: Slow nodes drained in the window (fail-slow nodes; None: none modelled).
    slow_drains: np.ndarray | None = None
    #: Restores from the fast tier that failed their validation, in the window (None: none can fail).
    restores_failed: np.ndarray | None = None
    #: Failures a rack's warm spare tray covered, in the window (docs/model.md, "Racks"; None: no warm spares).
    rack_covered: np.ndarray | None = None
    #: Failures that moved racks to spare racks, in the window (None: no racks).
    rack_moved: np.ndarray | None = None
    #: Silent corruptions found in the window, and those of them that found no clean checkpoint kept (the run
    #: started over); None: every corruption is found at once.
    sdc_found: np.ndarray | None = None
    sdc_unrecoverable: np.ndarray | None = None
    #: Bad nodes (docs/model.md, "Bad nodes"), in the window: failures of bad nodes, node failures that pulled a
    #: healthy node instead of the failed one, bad nodes pulled and fixed, and the job's bad nodes at the window's
    #: end (None: no bad nodes).
    bad_failures: np.ndarray | None = None
    misdiagnosed: np.ndarray | None = None
    bad_fixed: np.ndarray | None = None
    bad_end: np.ndarray | None = None

    def pool_for(self, share: float) -> int | None:
        """The smallest pool in which at least ``share`` of the simulated node-losing failures find their
        spares (None without a finite pool's counts, or without such failures)."""
        h = self.need_hist
        if h is None or h.sum() <= 0:
            return None
        return int(np.searchsorted(np.cumsum(h), share * h.sum() * (1 - 1e-12)))

    @property
    def restarts(self) -> np.ndarray:
        """Failures in the window that restarted the job (from either tier); the others continued."""
        out: np.ndarray = self.restores_fast + self.restores_persistent
        return out

    @property
    def by_class(self) -> np.ndarray:
        return self.by_component

    @property
    def goodput(self) -> np.ndarray:
        total = sum(self.hours.values())
        return np.asarray(self.hours["useful"] / np.where(total > 0, total, 1.0))

    def p_no_spare(self) -> float:
        n = float(self.node_failures.sum())
        return float(self.no_spare.sum()) / n if n else 0.0

    def repair_quantile(self, q: float) -> float:
        cum = np.cumsum(self.repair_hist)
        if not len(cum) or cum[-1] <= 0:
            return 0.0
        return float(np.searchsorted(cum, q * cum[-1] * (1 - 1e-12)))


#: The buffer's arrays: what a point carries (fill past a column's points, dtype). The first five every run has;
#: the others only where some run models them (:data:`_OPTIONAL_BUFFERS`: the flag that says so).
_BUFFERS: dict[str, tuple[object, type]] = {
    "times": (np.inf, np.float64),
    "kinds": (PAD, np.int8),
    "took": (False, np.bool_),
    "cap": (1.0, np.float64),
    "blocked": (False, np.bool_),
    "slow": (1.0, np.float64),
    "dr": (0.0, np.float64),
    "fail_snap": (0.0, np.float64),
    "fail_up": (0.0, np.float64),
    "fail_restore": (0.0, np.float64),
    "sdc": (0.0, np.float64),
}
_ALWAYS = ("times", "kinds", "took", "cap", "blocked")
_FAIL_BUFFERS = ("fail_snap", "fail_up", "fail_restore")
_OPTIONAL_BUFFERS = (
    ("slow", "slow"),
    ("dr", "detect_by"),
    *((name, "failing") for name in _FAIL_BUFFERS),
    ("sdc", "sdc"),
)


def _chunk_source(c: Chunk, name: str, m: SimModel) -> np.ndarray | None:
    """A chunk's array for the buffer's ``name`` (a run that does not model it: what stands for none)."""
    if name in _ALWAYS:
        out: np.ndarray = getattr(c, name)
        return out
    if name == "slow":
        return c.slow if c.slow is not None else np.ones(c.times.shape)
    if name == "dr":
        return c.dr if c.dr is not None else np.full(c.times.shape, m.detect_restart)
    if name == "sdc":
        return c.sdc
    if c.fail is None:
        return None
    return np.asarray(c.fail[_FAIL_BUFFERS.index(name)])


Progress = Callable[[float], None] | None
StopCheck = Callable[[], bool] | None


class _Stepper:
    """The columns of several runs and their buffer of points."""

    def __init__(self, worlds: list[World], states: list[np.ndarray], *, window: bool) -> None:
        self.worlds = worlds
        self.window = window
        self.st = np.concatenate(states, axis=1) if states else np.zeros((job.ROWS, 0))
        self.group = np.concatenate([np.full(s.shape[1], g) for g, s in enumerate(states)]).astype(np.intp)
        self.trial = np.concatenate([np.arange(s.shape[1]) for s in states]).astype(np.intp)
        n = self.st.shape[1]
        self.alive = np.ones(n, dtype=bool)
        self.count = np.zeros(n, dtype=np.int64)
        self.cursor = 0
        self.ids = np.arange(n)
        self.some_dead = False
        self.done_st: list[np.ndarray] = []
        self.done_ids: list[np.ndarray] = []
        ms = [w.m for w in worlds]
        self.flags = job.Flags(
            window=window,
            uploads=bool(np.any(self.st[job.U] > 0)),
            waits=any(m.finite_pool and not m.continue_mode for m in ms),
            unit_k=bool(np.all(self.st[job.K] == 1.0)),
            throughput=any(m.continue_mode or (m.finite_pool and m.min_nodes is not None) for m in ms),
            swaps=bool(np.any(self.st[job.SWAPLEN] > 0)),
            continues=any(bool(np.any(m.kinds == 3)) for m in ms),
            fast=any(bool(np.any(m.kinds == 1)) for m in ms),
            even=bool(np.all(self.st[job.CP] == 0.0)),
            slow=any(m.slow_rate > 0 for m in ms),
            detect_by=any(m.dr_class is not None or m.rack_move > 0 for m in ms),
            failing=any(m.failing for m in ms),
            sdc=any(m.sdc_class >= 0 and m.sdc_detect > 0 for m in ms),
        )
        # The buffer: one array per attribute of a point, each (steps, columns) (the failed checkpoints: one per
        # draw), only those some run models.
        used = [name for name, on in _OPTIONAL_BUFFERS if getattr(self.flags, on)]
        self.buf = {
            name: np.full((0, n), fill, dtype=dtype)
            for name, (fill, dtype) in _BUFFERS.items()
            if name in _ALWAYS or name in used
        }
        self.windows = (float(self.st[job.WINDOW].min(initial=np.inf)), float(self.st[job.WINDOW].max(initial=0.0)))

    def refill(self) -> None:
        """Draw the next chunk of every run with a live column that has used its points, and append each column's
        new points after its points left (the rows every column has used are dropped; a row of the buffer stays
        one step's points of every column). Runs whose columns all have points left wait (a run of a small
        cluster beside a large one draws its chunks as it needs them, not at the large one's pace); what a chunk
        draws depends only on its run and its index, so the numbers are the same."""
        rows = [np.flatnonzero(self.group == g) for g in range(len(self.worlds))]
        n = self.st.shape[1]
        c0 = self.cursor
        left = np.maximum(self.count - c0, 0)  # (a finished column may have used its points)
        out = self.alive & (left == 0)
        chunks = [w.chunk() if len(r) and out[r].any() else None for w, r in zip(self.worlds, rows)]
        added = np.zeros(n, dtype=np.int64)
        for r, c in zip(rows, chunks):
            if c is not None and len(r):
                added[r] = c.counts[self.trial[r]]
        width = int((left + added).max(initial=0))
        held = int(left.max(initial=0))
        new = {}
        for name, a in self.buf.items():
            b = np.empty((width, n), dtype=a.dtype)
            b[:held] = a[c0 : c0 + held]  # (past a column's own count: its pads)
            b[held:] = _BUFFERS[name][0]
            new[name] = b
        for r, c in zip(rows, chunks):
            if c is None or not len(r):
                continue
            tr = self.trial[r]
            w = c.times.shape[1]
            valid = np.arange(w)[None, :] < added[r][:, None]
            dest = ((left[r][:, None] + np.arange(w)[None, :]) * n + r[:, None])[valid]
            for name, b in new.items():
                src = _chunk_source(c, name, self.worlds[self.group[r[0]]].m)
                if src is not None:  # (None: the run does not model it; its fill stands)
                    b.ravel()[dest] = (src if len(tr) == src.shape[0] else src[tr])[valid]
        self.buf = new
        self.count = left + added
        self.cursor = 0

    def compact(self) -> None:
        """Remove the finished columns (their results were kept when they finished)."""
        keep = self.alive
        self.some_dead = False
        self.ids = self.ids[keep]
        self.st = self.st[:, keep]
        self.group = self.group[keep]
        self.trial = self.trial[keep]
        self.buf = {name: a[:, keep] for name, a in self.buf.items()}
        self.count = self.count[keep]
        self.alive = self.alive[keep]

    def run(self, total: int, progress: Progress, should_stop: StopCheck) -> np.ndarray:
        """Step until every column has finished; returns the final state of every column, in column order."""
        n0 = self.st.shape[1]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            self._loop(total, progress, should_stop)
        out = np.empty((job.ROWS, n0))
        for s, ids in zip(self.done_st, self.done_ids):
            out[:, ids] = s
        return out

    def _loop(self, total: int, progress: Progress, should_stop: StopCheck) -> None:
        steps = 0
        while self.alive.any():
            if self.cursor >= int(self.count[self.alive].min()):
                live_groups = set(self.group[self.alive].tolist())
                if any(self.worlds[g].t > self.worlds[g].horizon for g in live_groups):
                    raise Endless("the run would never finish: the job makes no progress at these inputs")
                self.refill()
                continue
            c = self.cursor
            buf = self.buf
            ev_t, kind = buf["times"][c], buf["kinds"][c]
            if self.some_dead:  # finished columns wait where they are (their results are kept)
                ev_t = np.where(self.alive, ev_t, self.st[job.T])
                kind = np.where(self.alive, kind, job.CHANGE_KIND)
            finished = job.step(
                self.st,
                ev_t,
                kind,
                buf["took"][c],
                buf["cap"][c],
                buf["blocked"][c],
                self.flags,
                *self.windows,
                buf["slow"][c] if self.flags.slow else None,
                buf["dr"][c] if self.flags.detect_by else None,
                tuple(buf[name][c] for name in _FAIL_BUFFERS) if self.flags.failing else None,
                buf["sdc"][c] if self.flags.sdc else None,
            )
            self.cursor += 1
            if finished.any():
                finished &= self.alive
                self.done_st.append(self.st[:, finished].copy())
                self.done_ids.append(self.ids[finished])
                self.alive &= ~finished
                self.some_dead = True
                if self.window:  # parked inside every window, so that no step takes them for its edges
                    self.st[job.T, finished] = 0.5 * self.windows[0]
            steps += 1
            dead = int(self.alive.size - np.count_nonzero(self.alive))
            if dead and (dead >= max(16, self.alive.size // 8) or dead == self.alive.size):
                self.compact()
            if steps % _REPORT_EVERY == 0:
                if should_stop is not None and should_stop():
                    raise Cancelled()
                if progress is not None:
                    progress(self._fraction(total))

    def _fraction(self, total: int) -> float:
        done = float(total - int(self.alive.sum()))
        a = self.alive
        if self.window:
            part, whole = self.st[job.T][a], self.st[job.WINDOW][a]
        else:
            part, whole = self.st[job.P][a], self.st[job.WORK][a]
        done += float(np.clip(part / np.where(whole > 0, whole, 1.0), 0.0, 1.0).sum())
        return min(1.0, done / max(total, 1))


#: A preview cuts a window into at most this many stretches (docs/model.md 2.9).
MAX_SEGMENTS = 64
#: A stretch after the first warms up for at most this many interruptions' worth of time (beside the longest
#: downtime and three snapshot cycles), and at most SEGMENT_WARM_CAP_HOURS of it.
SEGMENT_WARM_INTERRUPTIONS = 10.0
SEGMENT_WARM_CAP_HOURS = 12.0

#: One world stepped by :func:`_simulate_windows`: its model, rows, seed, start, and per row its place on the
#: profile and its row of drawn rates (None: the rows are the trials, at the profile's 0).
_Part = tuple[SimModel, int, int, float, "np.ndarray | None", "np.ndarray | None"]


def segment_models(m: SimModel, trials: int, seed: int, segments: int) -> list[_Part]:
    """A window cut into ``segments`` stretches of equal length ``L`` to be stepped side by side (docs/model.md
    2.9): the first, ``[0, L)``, starts as the window does; the others, ``[k L, (k + 1) L)``, are the rows of a
    second world, each trial's ``k``-th at ``k L`` on the profile with the trial's drawn rates, from the steady
    state of the rate in force there after a short warm-up. Without segments: the window itself."""
    start = 0.0 if m.new_cluster else -m.warm_hours()
    if segments <= 1:
        return [(m, trials, seed, start, None, None)]
    length = m.hours / segments
    first: _Part = (dataclasses.replace(m, hours=length), trials, seed, start, None, None)
    rest = dataclasses.replace(m, hours=length, new_cluster=False)
    offsets = np.repeat(np.arange(1, segments) * length, trials)
    at = np.searchsorted(m.profile_starts, np.arange(1, segments) * length, side="right") - 1
    big = m.interruption_rate(float(m.profile_mults[np.maximum(at, 0)].max()))
    settle = min(SEGMENT_WARM_INTERRUPTIONS / big, SEGMENT_WARM_CAP_HOURS) if big > 0 else 0.0
    warm = min(m.warm_hours(), m.max_downtime + 3.0 * m.s + settle)
    rest_seed = int(np.random.SeedSequence([seed, 0x5E6]).generate_state(1, np.uint32)[0])
    rows = np.tile(np.arange(trials), segments - 1)
    return [first, (rest, trials * (segments - 1), rest_seed, -warm, offsets, rows)]


def _joined(parts: list[SimTrials], trials: int, segments: int, length: float) -> SimTrials:
    """The stretches of one window (:func:`segment_models`) as the window: per trial, hours and counts added,
    the pool over time laid end to end."""
    if len(parts) == 1:
        return parts[0]
    first, rest = parts
    k = segments - 1

    def per_trial(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray(a + b.reshape(k, trials, *b.shape[1:]).sum(axis=0))

    def optional(name: str) -> np.ndarray | None:  # (a count modelled only with its feature: None without)
        a, b = getattr(first, name), getattr(rest, name)
        return None if a is None or b is None else per_trial(a, b)

    over = rest.repair_over_time.reshape(k, trials, -1)
    need = None if first.need_hist is None or rest.need_hist is None else padded_sum(first.need_hist, rest.need_hist)
    return SimTrials(
        hours={key: per_trial(first.hours[key], rest.hours[key]) for key in first.hours},
        unplanned=per_trial(first.unplanned, rest.unplanned),
        planned=per_trial(first.planned, rest.planned),
        by_component=per_trial(first.by_component, rest.by_component),
        restores_fast=per_trial(first.restores_fast, rest.restores_fast),
        restores_persistent=per_trial(first.restores_persistent, rest.restores_persistent),
        promoted=per_trial(first.promoted, rest.promoted),
        continued=per_trial(first.continued, rest.continued),
        node_failures=per_trial(first.node_failures, rest.node_failures),
        no_spare=per_trial(first.no_spare, rest.no_spare),
        nodes_in_repair=per_trial(first.nodes_in_repair, rest.nodes_in_repair) / segments,
        repair_hist=padded_sum(first.repair_hist, rest.repair_hist),
        repair_over_time=np.concatenate([first.repair_over_time, *over], axis=1),
        repair_grid=np.concatenate([first.repair_grid + j * length for j in range(segments)]),
        need_hist=need,
        **{name: optional(name) for name in _OPTIONAL_COUNTS},
        useful_by_stretch=np.column_stack([first.hours["useful"], rest.hours["useful"].reshape(k, trials).T]),
    )


def simulate_windows(
    runs: Sequence[tuple[SimModel, int, int]],
    *,
    segments: int = 1,
    progress: Progress = None,
    should_stop: StopCheck = None,
) -> list[SimTrials]:
    """Simulate each ``(model, trials, seed)``'s windows, all stepped together; each gives what it gives alone.

    ``segments`` > 1 (a preview, docs/model.md 2.9): each window is cut into that many stretches stepped side by
    side (:func:`segment_models`), about that many times fewer steps; each trial's the sum of its stretches'."""
    owners, parts = [], []
    for i, (m, trials, seed) in enumerate(runs):
        for part in segment_models(m, trials, seed, segments):
            owners.append(i)
            parts.append(part)
    pieces = _simulate_windows(parts, progress, should_stop)
    out = []
    for i, (m, trials, _) in enumerate(runs):
        mine = [p for j, p in zip(owners, pieces) if j == i]
        out.append(_joined(mine, trials, max(segments, 1), m.hours / max(segments, 1)))
    return out


def _simulate_windows(runs: Sequence[_Part], progress: Progress, should_stop: StopCheck) -> list[SimTrials]:
    worlds, states = [], []
    for m, trials, seed, start, offsets, rate_rows in runs:
        w = World(m, trials, seed, start, window=True, offsets=offsets, rate_rows=rate_rows)
        w.horizon = 1e6 + 1000.0 * (m.hours + m.tail_hours())
        rng = stream(seed, STREAM_JOB)
        states.append(
            job.initial_state(
                m,
                trials,
                start,
                rng,
                steady=not m.new_cluster,
                work=None,
                theta=w.cap,
                blocked=w.blocked,
                speed=w.speed,
            )
        )
        worlds.append(w)
    stepper = _Stepper(worlds, states, window=True)
    final = stepper.run(sum(r[1] for r in runs), progress, should_stop)
    out, col = [], 0
    for (_m, trials, *_), w in zip(runs, worlds):
        st = final[:, col : col + trials]
        col += trials
        mend = st[job.MEND]
        useful = mend - np.minimum(st[job.M0], mend)
        hours = {
            "useful": useful,
            "checkpoint": st[job.CKPT],
            "lost_work": st[job.GAIN] - useful + st[job.CUT] - st[job.SDC_H],
            "recovery": st[job.RECOVERY],
            "planned_restart": st[job.PLANNED_H],
            "waiting_for_spares": st[job.WAIT],
            "reduced_throughput": st[job.REDUCED],
            SLOW_HOURS_KEY: st[job.SLOW_H],
            SDC_HOURS_KEY: st[job.SDC_H],
        }
        late = w.m.sdc_class >= 0 and w.m.sdc_detect > 0.0
        out.append(
            SimTrials(
                hours=hours,
                unplanned=w.unplanned,
                planned=w.planned,
                by_component=w.by_class,
                restores_fast=st[job.N_FAST].astype(np.int64),
                restores_persistent=st[job.N_PERSISTENT].astype(np.int64),
                promoted=st[job.N_PROMOTED].astype(np.int64),
                continued=st[job.N_CONTINUED].astype(np.int64),
                node_failures=w.node_failures,
                no_spare=w.no_spare,
                nodes_in_repair=w.area / w.m.hours if w.m.hours > 0 else w.area,
                repair_hist=w.hist,
                repair_over_time=w.over_time,
                repair_grid=w.grid,
                need_hist=w.need_hist,
                slow_drains=w.slow_drains if w.slow else None,
                restores_failed=st[job.N_FAILED].astype(np.int64) if w.m.failing and w.m.restarts_fast else None,
                rack_covered=w.covered if w.m.racks else None,
                rack_moved=w.node_failures if w.m.racks else None,
                sdc_found=st[job.N_SDC].astype(np.int64) if late else None,
                sdc_unrecoverable=st[job.N_LOST].astype(np.int64) if late else None,
                bad_failures=w.bad_failures if w.bad else None,
                misdiagnosed=w.misdiagnosed if w.bad else None,
                bad_fixed=w.bad_fixed if w.bad else None,
                bad_end=w.bad_end if w.bad else None,
            )
        )
    return out


def simulate_train(
    runs: Sequence[tuple[SimModel, int, int, float]], *, progress: Progress = None, should_stop: StopCheck = None
) -> list[np.ndarray]:
    """Per ``(model, trials, seed, work)``: each trial's wall-clock hours from its first step until its progress
    reaches ``work`` hours (docs/model.md 2.7), all stepped together."""
    worlds, states = [], []
    for m, trials, seed, work in runs:
        start = 0.0 if m.new_cluster else -m.warm_hours()
        w = World(m, trials, seed, start, window=False)
        while w.t < 0.0:  # the world's warm-up: the job starts on the cluster as it left it
            w.chunk()
        w.end_marks = True  # a point at each chunk's end: a job that sees no failure still ends
        w.horizon = 1e6 + 1000.0 * work
        rng = stream(seed, STREAM_JOB, 1)
        states.append(
            job.initial_state(
                m,
                trials,
                0.0,
                rng,
                steady=False,
                work=work,
                theta=w.cap.copy(),
                blocked=w.blocked.copy(),
                speed=w.speed,
            )
        )
        worlds.append(w)
    stepper = _Stepper(worlds, states, window=False)
    final = stepper.run(sum(r[1] for r in runs), progress, should_stop)
    out, col = [], 0
    for _m, trials, _, _ in runs:
        out.append(final[job.DONE, col : col + trials].copy())
        col += trials
    return out
