"""Vectorized Monte Carlo of the two-tier model (docs/tiers.md explains it step by step).

A trial's window holds ``N ~ Poisson(Lambda T)`` interruptions, each independently a fast restore, a
persistent restore or a planned one (``Lambda`` is their total rate), and ``N + 1`` spacings between them:
normalised exponentials filling the window, the first extended back to the spacing's start (``a``) and the
last forward to the next interruption (``b``), both drawn in steady state by :mod:`.tiers_outside`. A chunk of
trials is one matrix, a row per trial and its spacings in time order. Every hour follows from whole-array
operations and a few sparse ones; there is no loop over interruptions:

* each spacing's time after its downtime, in snapshot cycles of ``s = tau + c``: ``x = (g - D) / s``. Its
  whole cycles ``m = floor(x)`` are completed fast snapshots (nothing of the persistent cadence stalls the
  fast one), and the rest of it is lost at an unplanned end and kept at a planned one. ``D`` is the fast
  restore's except after a full renewal and in the chains of fast-tier failures during a persistent restore
  (which restore from the persistent tier, the worse of the two): sparse corrections;
* ``J``, the cumulative sum of ``m`` over the chunk, numbers every completed snapshot once. A cycle between
  full renewals starts at ``J = base``, and its persistent points are ``base`` plus multiples of ``k``;
* at a persistent restore the work since the bank is lost. The bank is the last persistent point whose
  upload finished: within one spacing the uploads start at its first point and every ``q``-th after it
  (one at a time, an unplanned end aborts the one in flight), so the last one to finish is arithmetic
  (:func:`_walk`); from the restore's spacing back, usually in one step. With ``k = 1`` every snapshot is a
  point and no phase is needed: :func:`_walk_k1` counts back from the restore's spacing with ``m`` alone,
  and ``J`` (a cumulative sum over the whole chunk, the costliest pass) is not formed;
* the window's edges: the first and the last spacing are clipped to the window (``interval_parts``); the
  compute a rollback removes is counted only inside the window, through the completed-snapshot position at
  the window's start and end (``p0``, ``pT``); whether the work running at the window's end is later rolled
  back is decided by simulating on after the window only as far as it takes.

Persistent restores and planned interruptions are full renewals (the job resumes at the bank, which a
planned drain first moves to the current position). Fast restores are not: the job resumes at its last fast
snapshot, and its distance from the bank and its phase in the persistent cadence carry over (``J`` simply
continues).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..model.scenario import Scenario
from ..model.tiers import TierHours, TierParams, Tiers
from ..theory.tiers import tier_params, tier_rates
from ..util.streams import stream
from .engine import Cancelled, RawTrials
from .intervals import interval_parts
from .rows import poisson_by_inversion, split_by_rates, uniforms
from .tiers_outside import FAST, PERSISTENT, PLANNED, PROMOTED, Lookback, downtimes, draw_forward, draw_lookback

__all__ = [
    "CHUNK_ELEMENTS",
    "MAX_TRIAL_EVENTS",
    "TierHours",
    "TierTrials",
    "simulate_tier_params",
    "simulate_tiers",
    "tier_trials",
]

STREAM_COUNTS, STREAM_SPACINGS, STREAM_MARKS, STREAM_AFTER, STREAM_COMPONENTS = 21, 24, 25, 26, 27

#: Spacings per chunk (a chunk's two float64 arrays are 4 MB each; the passes over them go by blocks of rows).
CHUNK_ELEMENTS = 1 << 19
#: Steps back from a spacing, looked at together (:func:`_walk_k1`).
_BACK = np.arange(1, 17)
#: Spacings per block of rows in the passes that follow one another over a chunk.
_BLOCK_ELEMENTS = 1 << 16
#: A trial is one row: more interruptions than this in one window are refused (memory).
MAX_TRIAL_EVENTS = 1 << 23
#: Above this share of renewals among interruptions, their positions are drawn per interruption.
_DENSE_MARKS = 0.25


@dataclass
class TierTrials:
    """Per-trial results of :func:`simulate_tiers` (hours in the window), as :class:`.engine.RawTrials`
    plus the unplanned interruptions by the tier they restored from."""

    unplanned: np.ndarray
    planned: np.ndarray
    by_component: np.ndarray
    useful: np.ndarray
    checkpoint: np.ndarray
    lost_work: np.ndarray
    recovery: np.ndarray
    planned_restart: np.ndarray
    restores_fast: np.ndarray
    restores_persistent: np.ndarray

    @property
    def restores(self) -> dict[str, np.ndarray]:
        """Unplanned interruptions by the tier they restored from (they add up to ``unplanned``)."""
        return {"fast": self.restores_fast, "persistent": self.restores_persistent}

    def raw(self) -> RawTrials:
        """The arrays the single-tier engine returns."""
        return RawTrials(
            unplanned=self.unplanned,
            planned=self.planned,
            by_component=self.by_component,
            useful=self.useful,
            checkpoint=self.checkpoint,
            lost_work=self.lost_work,
            recovery=self.recovery,
            planned_restart=self.planned_restart,
        )


@dataclass(frozen=True)
class _Outside:
    """Per trial: the look-back spacing and what follows the window."""

    look: Lookback
    after: np.ndarray  # b, capped
    capped: np.ndarray
    end_kind: np.ndarray

    def take(self, idx: np.ndarray) -> _Outside:
        lk = self.look
        return _Outside(
            Lookback(lk.kind[idx], lk.down[idx], lk.phase[idx], lk.age[idx]),
            self.after[idx],
            self.capped[idx],
            self.end_kind[idx],
        )


@dataclass(frozen=True)
class _Marks:
    """A chunk's full renewals (persistent restores and planned interruptions), in (row, event) order."""

    row: np.ndarray
    pos: np.ndarray  # among the chunk's interruptions laid end to end: row r's event i is offsets[r] + i
    kind: np.ndarray  # PERSISTENT or PLANNED
    bounds: np.ndarray  # (rows + 1,): row r's renewals are [bounds[r], bounds[r + 1])

    def row_sums(self, values: np.ndarray) -> np.ndarray:
        """Per row, the sum of ``values`` (one per renewal)."""
        out = np.zeros(len(self.bounds) - 1)
        some = np.flatnonzero(self.bounds[:-1] < self.bounds[1:])
        if some.size:  # a row's sum runs to the next row with renewals (rows between have none)
            out[some] = np.add.reduceat(values, self.bounds[some])
        return out


def _sum_by_row(rows: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per row (``n`` of them), the sum of ``values`` (one per entry of ``rows``, in any order)."""
    out: np.ndarray = np.bincount(rows, weights=values, minlength=n) if len(rows) else np.zeros(n)
    return out


def _draw_marks(tp: TierParams, n: np.ndarray, rng: np.random.Generator) -> _Marks:
    """Which of the chunk's interruptions are full renewals (each independently, probability ``nu / Lambda``),
    and of which kind (persistent with probability ``lam_persistent / nu``).

    The rows' interruptions are laid end to end and the renewals placed by geometric skips over all of them
    at once (independent marks do not care where a row ends); dense renewals take a draw each.
    """
    rows = len(n)
    total = int(n.sum())
    p = tp.nu / tp.big if tp.big > 0 else 0.0
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(n, out=offsets[1:])
    if p == 0.0 or total == 0:
        empty = np.zeros(0, dtype=np.int64)
        return _Marks(empty, empty, empty, np.zeros(rows + 1, dtype=np.int64))
    if p >= 1.0:
        pos = np.arange(total)
    elif p > _DENSE_MARKS:
        pos = np.flatnonzero(rng.random(total) < p)
    else:
        # Gaps between renewals, in interruptions: 1 + floor(E / -log(1 - p)) is Geometric(p) on {1, 2, ...}.
        per_gap = -1.0 / -math.log1p(-p)
        parts = []
        last = -1.0
        while last < total - 1:
            need = (total - 1 - last) * p
            g = rng.random(int(need + 6.0 * math.sqrt(need) + 8))
            np.subtract(1.0, g, out=g)
            np.log(g, out=g)
            g *= per_gap
            np.floor(g, out=g)
            g += 1.0
            g[0] += last  # whole numbers: the sums are exact in any order
            np.cumsum(g, out=g)
            parts.append(g)
            last = float(g[-1])
        pos_f = parts[0] if len(parts) == 1 else np.concatenate(parts)
        pos = pos_f[: np.searchsorted(pos_f, total)].astype(np.int64)
    bounds = np.searchsorted(pos, offsets)
    row = np.repeat(np.arange(rows), np.diff(bounds))
    kind = np.add(rng.random(len(pos)) >= tp.lam_persistent / tp.nu, PERSISTENT, dtype=np.int64)
    return _Marks(row, pos, kind, bounds)


class _Work:
    """Buffers reused by every chunk (fresh large arrays fault on every page when first written)."""

    def __init__(self, size: int) -> None:
        self.x = np.empty(size)
        self.j = np.empty(size)
        self.ends_fast = np.empty(size, dtype=bool)


@dataclass
class _Chunk:
    """One chunk: a row per trial, its spacings in time order at the end of the row: spacings 0 to ``n`` in
    slots ``first_interior - 1`` to the last (``first_interior`` is the slot of spacing 1); the slots before
    them are zero."""

    tp: TierParams
    n: np.ndarray
    out: _Outside
    marks: _Marks
    slots: int
    first_flat: np.ndarray  # flat index of each row's first spacing
    first_interior: np.ndarray
    last_flat: np.ndarray  # flat index of each row's last spacing (the first when n == 0)
    has: np.ndarray  # n > 0
    piece0: np.ndarray  # hours of the first spacing inside the window
    piece_n: np.ndarray  # ... of the last (0 when n == 0: the first is the last)
    first_len: np.ndarray  # the first spacing's whole length (from its start before the window)
    end_flat: np.ndarray  # per renewal: the spacing it ends
    start_flat: np.ndarray  # ... and the spacing it starts
    xs: np.ndarray  # ... and x there
    at_first: np.ndarray  # the renewals at event 0, ending the first spacing (indices; at most one per row)
    at_last: np.ndarray  # the renewals that start their row's last spacing (indices; at most one per row)
    planned: np.ndarray  # the planned renewals (indices)
    x: np.ndarray  # flat: (g - D) / s, negative for a spacing shorter than its downtime; read as max(x, 0)
    # (clamped in place only where J is formed)
    j: np.ndarray  # flat, only with persistent restores and k > 1: the snapshots each spacing completes,
    # m = floor(max(x, 0)), then their cumulative sum J. Where m is wanted after that: from x.
    ends_fast: np.ndarray  # flat: the spacing ends with a fast-tier failure (set by _downtimes)


def _log_row_sums(u: np.ndarray, unused: np.ndarray) -> np.ndarray:
    """Replace uniforms ``u`` (rows of a chunk) by their logs, minus standard exponentials, with the ``unused``
    slots (1 to ``unused.shape[1]``) zero, and return each row's sum (not finite if the row has a U of 0: call
    it with numpy's divide and invalid warnings off)."""
    np.log(u, out=u)
    if unused.shape[1]:
        u[:, 1 : 1 + unused.shape[1]] *= ~unused
    total: np.ndarray = u @ np.ones(u.shape[1])
    return total


def _fill(tp: TierParams, n: np.ndarray, out: _Outside, marks: _Marks, rng: np.random.Generator, work: _Work) -> _Chunk:
    """Draw the chunk's spacings: ``x = (g - D_fast) / s`` for every one, and the edges' lengths."""
    rows = len(n)
    slots = int(n.max()) + 1
    size = rows * slots
    s = tp.s
    x2 = work.x[:size].reshape(rows, slots)
    x = work.x[:size]
    first_interior = slots - n
    top = int(first_interior.max())
    unused = np.arange(1, top)[None, :] < first_interior[:, None]  # slots between the first spacing and spacing 1
    has = n > 0
    row_flat = np.arange(rows) * slots
    first_flat = row_flat + first_interior - 1
    last_flat = row_flat + (slots - 1)
    # The renewals' spacings: the one at event i (0-based) ends spacing i and starts the next.
    offsets = np.zeros(rows, dtype=np.int64)
    np.cumsum(n[:-1], out=offsets[1:])
    end_flat = (first_flat - offsets).take(marks.row)
    end_flat += marks.pos
    start_flat = end_flat + 1
    shifts = ((tp.r_fast - downtimes(tp)) / s).take(marks.kind)
    xs = np.empty(len(end_flat))  # x of the spacings after renewals
    piece0, piece_n = np.empty(rows), np.empty(rows)
    # In blocks of rows, each drawn and finished while it is in cache.
    step = max(1, _BLOCK_ELEMENTS // slots)
    for r in range(0, rows, step):
        rb = slice(r, min(r + step, rows))
        xb = x2[rb]
        rng.random(out=xb)
        with np.errstate(divide="ignore", invalid="ignore"):
            total = _log_row_sums(xb, unused[rb])
            while not math.isfinite(total.sum()):  # a row drew U = 0 (once in 2^53 draws): draw it again
                bad = np.flatnonzero(~np.isfinite(total))
                again = rng.random((bad.size, slots))
                total[bad] = _log_row_sums(again, unused[rb][bad])
                xb[bad] = again
        xb *= (tp.hours / s / total)[:, None]  # minus snapshot cycles per unit: the spacings fill the window
        piece0[rb] = xb[:, 0] * s
        piece_n[rb] = xb[:, slots - 1] * s * has[rb]
        if top > 1:  # spacing 0 (drawn at slot 0) next to spacing 1: each row's spacings are contiguous
            moved = np.flatnonzero(first_interior[rb] > 1)
            xb[moved, first_interior[rb][moved] - 1] = xb[moved, 0]
            xb[moved, 0] = 0.0
        # x after the fast restore's downtime; after a renewal, its own downtime (the last spacing's x is set
        # again later, from its whole length).
        xb -= tp.r_fast / s
        block = slice(marks.bounds[rb.start], marks.bounds[rb.stop])
        after = start_flat[block]
        xr = x.take(after)
        xr += shifts[block]
        x[after] = xr
        xs[block] = xr
    lo, hi = marks.bounds[:-1], marks.bounds[1:]
    some = np.flatnonzero(hi > lo)  # rows with renewals
    last_mark = hi[some] - 1
    return _Chunk(
        tp=tp,
        n=n,
        out=out,
        marks=marks,
        slots=slots,
        first_flat=first_flat,
        first_interior=first_interior,
        last_flat=last_flat,
        has=has,
        piece0=piece0,
        piece_n=piece_n,
        first_len=out.look.age + np.where(has, piece0, tp.hours + out.after),
        end_flat=end_flat,
        start_flat=start_flat,
        xs=xs,
        at_first=lo[some].compress(end_flat.take(lo[some]) == first_flat.take(some)),
        at_last=last_mark.compress(end_flat.take(last_mark) + 1 == last_flat.take(some)),
        planned=np.flatnonzero(marks.kind == PLANNED),
        x=x,
        j=work.j[:size],
        ends_fast=work.ends_fast[:size],
    )


def _downtimes(ch: _Chunk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Give the first spacing and every spacing after a fast-tier failure during a persistent restore their
    own downtime (the spacings after renewals have theirs from :func:`_fill`). Returns what starts each row's
    last spacing, per row the fast-tier failures that restored from the persistent tier, and the planned
    restarts' downtime in interior spacings (per row)."""
    tp, o, marks = ch.tp, ch.out, ch.marks
    s, x, slots, rows = tp.s, ch.x, ch.slots, len(ch.n)
    start_last = np.where(ch.has, FAST, o.look.kind)
    start_last[marks.row.take(ch.at_last)] = marks.kind.take(ch.at_last)
    xs = ch.xs  # after a renewal, its own downtime is in x already (_fill)
    # A planned restart's downtime in an interior spacing: min(g, r) = r + s min(x, 0).
    planned = ch.planned
    restart_each = np.minimum(xs.take(planned), 0.0)
    restart_each *= s
    restart_each += tp.r_planned
    last_planned = ch.at_last.compress(marks.kind.take(ch.at_last) == PLANNED)
    restart_each[np.searchsorted(planned, last_planned)] = 0.0  # the last spacing's is counted with it
    restart = _sum_by_row(marks.row.take(planned), restart_each, rows)
    x[ch.first_flat] = (ch.first_len - o.look.down) / s
    # Fast-tier failures during a persistent restore keep its downtime (the worse tier): chains from each
    # persistent restore, while a spacing is shorter than that downtime (x < 0) and ends with a fast failure.
    ends_fast = ch.ends_fast
    ends_fast.fill(True)
    ends_fast[ch.end_flat] = False
    ends_fast[ch.last_flat] = False  # a chain stops at the window's end (what follows does not matter)
    shift = (tp.r_fast - tp.r_persistent) / s
    look = np.flatnonzero((o.look.kind == PERSISTENT) | (o.look.kind == PROMOTED))
    look = look[(x.take(ch.first_flat[look]) < 0) & ends_fast.take(ch.first_flat[look])]
    spacing1 = ch.first_flat[look] + 1  # spacing 1 of those rows: promoted
    x[spacing1] += shift
    promoted = [spacing1]
    chain = ch.start_flat.take(np.flatnonzero((xs < 0) & (marks.kind == PERSISTENT)))  # (x there: xs)
    chain = np.concatenate((chain.compress(ends_fast.take(chain)), spacing1))
    while chain.size:
        if len(promoted) > 1:
            chain = chain.compress((x.take(chain) < 0) & ends_fast.take(chain))
        else:  # the persistent restores' spacings were already found short: check only the promoted ones
            keep = (x.take(spacing1) < 0) & ends_fast.take(spacing1)
            chain = chain.compress(np.concatenate((np.ones(len(chain) - len(spacing1), dtype=bool), keep)))
        chain += 1  # the next spacing starts with a fast-tier failure during the persistent restore
        promoted.append(chain)
        x[chain] += shift  # (a last spacing's x is set again from its whole length)
    flat = np.concatenate(promoted)
    row = flat // slots
    start_last[row.compress(flat == ch.last_flat.take(row))] = PROMOTED
    return start_last, np.bincount(row, minlength=rows), restart


def _walk(tp: TierParams, ch: _Chunk, flat: np.ndarray, at: np.ndarray, base: np.ndarray, y: np.ndarray) -> np.ndarray:
    """With ``k > 1``: the bank (absolute snapshot count) at the end of spacings ``flat`` (``J`` there: ``at``;
    ``x`` there: ``y``, overwritten) of cycles that start at ``base``.

    A spacing's uploads start at its first persistent point ``F`` and at every ``q``-th after it (one at a
    time); the last to finish before the spacing ends, ``x`` cycles after its downtime, is
    ``F + q k floor((x - u - (F - jr)) / (q k))``, with ``jr`` the count at the spacing's start and ``u`` the
    upload in cycles. If none finishes, the previous point ``F - k`` was passed by an earlier spacing: the one
    just before, or else a few more steps back, or else found by binary search in ``J``. No point left in the
    cycle: its base (a base of ``at`` or more asks for nothing).
    """
    j, x = ch.j, ch.x
    k, qk, u = float(tp.k), float(tp.skip * tp.k), tp.upload / tp.s
    bank = np.empty(len(flat))
    active: np.ndarray | None = None  # all of them
    f, b = flat, base
    while True:
        start = at - np.floor(y)  # the count at the spacing's start
        jr = start - b  # relative to the cycle's base
        first = np.floor(jr / k)
        first += 1.0
        first *= k
        y -= first - jr + u
        found = b + first + np.floor(y / qk) * qk
        # found where an upload finished (y >= 0), else the base (whole numbers: exact)
        found -= b
        found *= y >= 0
        found += b
        if active is None:
            bank = found
        else:
            bank[active] = found
        back = np.flatnonzero((y < 0) & (first > k))  # a previous point of the cycle: base + F - k
        if not back.size:
            break
        active = back if active is None else active.take(back)
        point = b.take(back) + first.take(back) - k
        b = b.take(back)
        # Step back to the spacing that passed the point (J at its start < point <= J at its end).
        f = f.take(back) - 1
        at = start.take(back)  # J at the end of the spacing before is J at the start of this one
        todo = np.arange(len(f))
        for _ in range(3):  # usually the spacing just before
            begin = at.take(todo) - np.floor(x.take(f.take(todo)))
            more = begin >= point.take(todo)
            todo = todo.compress(more)
            if not todo.size:
                break
            f[todo] -= 1
            at[todo] = begin.compress(more)
        else:
            f[todo] = np.searchsorted(j, point.take(todo), side="left")
            at[todo] = j.take(f.take(todo))
        y = x.take(f)
    return bank


def _skips(y: np.ndarray, q: int) -> np.ndarray:
    """``q floor(y / q)``: the snapshots of the whole upload periods in ``y`` cycles."""
    if q & (q - 1):
        out = np.floor(y / q)
    else:  # a power of two: dividing is multiplying by 1 / q, exactly
        out = np.floor(y * (1.0 / q))
    if q > 1:
        out *= q
    return out


def _walk_k1(
    tp: TierParams, ch: _Chunk, flat: np.ndarray, lo: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """With ``k = 1`` (every snapshot a persistent point), without ``J``: for spacings ``flat`` (``x`` there:
    ``y``, overwritten) of cycles whose spacings are those after ``lo``, ``R``: the snapshots from the bank to
    the end of the spacing. Also where the walk stopped (the cycle's first spacing when the bank is the
    cycle's base) and ``T``, the snapshots from that spacing's start to the end.

    A spacing's uploads start at its first snapshot and at every ``q``-th after it (one at a time): the last to
    finish before the spacing ends, ``x`` cycles after its downtime, is snapshot ``1 + q floor((x - 1 - u) /
    q)`` of the spacing. If none finishes, the previous snapshot was completed by the last spacing before with
    one (``m >= 1``); if there is none in the cycle, the bank is the cycle's base. Once few are left, the
    spacings before are looked at sixteen at a time (:func:`_walk_k1_window`).
    """
    x = ch.x  # not clamped: a spacing completed no snapshot (m = 0) if x < 1
    u1 = 1.0 + tp.upload / tp.s
    rolled, tail, stop = np.empty(len(flat)), np.empty(len(flat)), flat.copy()
    active: np.ndarray | None = None  # all of them
    f, done = flat, None  # done: snapshots after the spacing f
    while True:
        t = np.floor(y)
        if done is not None:
            t += done  # snapshots from the start of spacing f to the end
        y -= u1
        found = _skips(y, tp.skip)
        found += 1.0  # the last upload to finish, counted from the spacing's start (if y >= 0)
        np.subtract(t, found, out=found)
        if active is None:
            rolled, tail = found, t
        else:
            rolled[active], tail[active], stop[active] = found, t, f
        back = np.flatnonzero(y < 0)
        if not back.size:
            break
        where = back if active is None else active.take(back)
        if where.size <= 1024:
            _walk_k1_window(tp, ch, where, f.take(back), lo.take(back), t.take(back), (rolled, tail, stop))
            break
        g, low, done = f.take(back) - 1, lo.take(back), t.take(back)
        # Step back over the cycle's spacings that completed no snapshot: one at a time while many are left,
        # then sixteen at a time.
        todo = np.flatnonzero(g > low)
        todo = todo.compress(x.take(g.take(todo)) < 1.0)
        steps = 0
        while todo.size:
            steps += 1
            if steps > 16:  # a long run of spacings shorter than their downtime: find it by the count
                jc = np.cumsum(np.floor(np.maximum(x, 0.0)))
                last = np.searchsorted(jc, jc.take(g.take(todo)), side="left")  # the last spacing with m >= 1
                g[todo] = np.where(x.take(last) >= 1.0, last, low.take(todo))
                break
            if todo.size > 256:
                g[todo] -= 1
                todo = todo.compress(g.take(todo) > low.take(todo))
                todo = todo.compress(x.take(g.take(todo)) < 1.0)
                continue
            gt, lt = g.take(todo), low.take(todo)
            before = gt[:, None] - _BACK
            some = x.take(before, mode="clip") >= 1.0
            some &= before > lt[:, None]
            nearest = some.argmax(axis=1)
            found = some[np.arange(todo.size), nearest]
            gt -= np.where(found, _BACK.take(nearest), _BACK[-1])  # (none of them had one: on from the last)
            out = ~found & (gt <= lt)  # the cycle's start passed: none in the cycle
            gt[out] = lt[out]
            g[todo] = gt
            todo = todo.compress(~found & ~out)
        passed = g > low
        base = np.flatnonzero(~passed)  # no snapshot before in the cycle: the bank is its base
        at_base = where.take(base)
        rolled[at_base] = tail[at_base] = done.take(base)
        stop[at_base] = low.take(base) + 1
        hit = np.flatnonzero(passed)
        active, f, lo, done = where.take(hit), g.take(hit), low.take(hit), done.take(hit)
        y = x.take(f)
    return rolled, tail, stop


def _walk_k1_window(
    tp: TierParams,
    ch: _Chunk,
    where: np.ndarray,
    f: np.ndarray,
    low: np.ndarray,
    done: np.ndarray,
    out: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """:func:`_walk_k1` for entries ``where`` of its results ``out``, whose spacings ``f`` (``done`` snapshots
    from their start to the end) finished no upload: the bank is in the nearest spacing before, in the cycle
    (after ``low``), where an upload finishes, found sixteen spacings at a time; else the cycle's base."""
    x, (rolled, tail, stop) = ch.x, out
    u1 = 1.0 + tp.upload / tp.s
    while where.size:
        before = f - _BACK[:, None]  # (16, count): the spacings before f, nearest first
        inside = before > low
        y = x.take(before, mode="clip")
        t = np.floor(np.maximum(y, 0.0))
        t *= inside
        t[0] += done
        for i in range(1, len(_BACK)):
            t[i] += t[i - 1]  # snapshots from the start of each spacing to the end
        y -= u1
        ok = y >= 0
        ok &= inside
        nearest = ok.argmax(axis=0)
        cols = np.arange(where.size)
        found_here = ok[nearest, cols]
        hit = np.flatnonzero(found_here)
        at, row = where.take(hit), nearest.take(hit)
        yh = y[row, hit]
        found = _skips(yh, tp.skip)
        found += 1.0
        tail[at] = t[row, hit]
        rolled[at] = tail[at] - found
        stop[at] = before[row, hit]
        base = np.flatnonzero(~found_here & ~inside[-1])  # none in the cycle: its base (t from its start)
        at = where.take(base)
        rolled[at] = tail[at] = t[-1].take(base)
        stop[at] = low.take(base) + 1
        more = np.flatnonzero(~found_here & inside[-1])
        where, f, low, done = where.take(more), before[-1].take(more), low.take(more), t[-1].take(more)


def _window_positions(
    ch: _Chunk, d_last: np.ndarray, first: np.ndarray, last: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``p0`` and ``pT``: per row, the completed-snapshot position at the window's start and end (with the
    fraction of the snapshot being computed, if that attempt completes), on the scale where the first and
    the last spacing start at counts ``first`` and ``last``. Of the completed snapshots numbered up to ``J``,
    the window holds ``tau clip(J - p0, 0, pT - p0)`` hours of compute."""
    tp, o = ch.tp, ch.out
    s, tau = tp.s, tp.tau

    def position(flat: np.ndarray, start: np.ndarray, offset: np.ndarray, down: np.ndarray) -> np.ndarray:
        done = np.floor(np.maximum(ch.x[flat], 0.0))
        y = np.maximum(offset - down, 0.0)
        whole = np.floor(y / s)
        out: np.ndarray = start + np.where(whole < done, whole + np.minimum(y - whole * s, tau) / tau, done)
        return out

    p0 = position(ch.first_flat, first, o.look.age, o.look.down)
    end_offset = np.where(ch.has, ch.piece_n, o.look.age + tp.hours)
    pt = position(ch.last_flat, last, end_offset, np.where(ch.has, d_last, o.look.down))
    return p0, np.maximum(pt, p0)


def _run_chunk(tp: TierParams, ch: _Chunk, acc: TierHours, trials: np.ndarray, rng_after: np.random.Generator) -> None:
    """Simulate one chunk of trials (rows ``trials`` of the outputs)."""
    n, o, marks = ch.n, ch.out, ch.marks
    rows, slots = len(n), ch.slots
    s, tau, c = tp.s, tp.tau, tp.c
    has = ch.has
    x, m = ch.x, ch.j
    start_last, promoted, restart = _downtimes(ch)
    d_last = downtimes(tp)[start_last]
    x[ch.last_flat[has]] = (ch.piece_n[has] + o.after[has] - d_last[has]) / s
    # Planned interruptions: the spacing before one keeps its work in progress (the job is drained).
    x_end = x.take(ch.end_flat)  # x of the spacings that renewals end (their lines are still cached)
    np.maximum(x_end, 0.0, out=x_end)
    drained = ch.planned.compress(ch.end_flat.take(ch.planned) > ch.first_flat.take(marks.row.take(ch.planned)))
    work = x_end.take(drained)
    work -= np.floor(work)
    work *= s
    # The snapshots each spacing completes, m = floor(max(x, 0)), and the row sums of max(x, 0) and m, over
    # blocks of rows that stay in cache. Only J (persistent restores with k > 1) needs x clamped and m kept.
    keep = tp.lam_persistent > 0 and tp.k > 1
    ones = np.ones(slots)
    sum_x, sum_m = np.empty(rows), np.empty(rows)
    x2, m2 = x.reshape(rows, slots), m.reshape(rows, slots)
    step = max(1, _BLOCK_ELEMENTS // slots)
    for r in range(0, rows, step):
        rb = slice(r, r + step)
        xb, mb = (x2[rb], m2[rb]) if keep else (np.maximum(x2[rb], 0.0), None)
        if keep:
            np.maximum(xb, 0.0, out=xb)
        sum_x[rb] = xb @ ones
        mb = np.floor(xb, out=mb if keep else xb)
        sum_m[rb] = mb @ ones
    # -- interior spacings: all but the first and the last ---------------------------------------------------
    x_first, x_last = np.maximum(x.take(ch.first_flat), 0.0), np.maximum(x.take(ch.last_flat), 0.0)
    m_first, m_last = np.floor(x_first), np.floor(x_last)
    in_x = sum_x - x_first - x_last * has
    in_m = sum_m - m_first - m_last * has
    if keep:
        np.cumsum(m, out=m)  # J: m is read no more, but as floor(x)
    useful = tau * in_m
    checkpoint = c * in_m
    lost = s * (in_x - in_m)
    recovery = (tp.hours - ch.piece0 - ch.piece_n) * has - s * in_x - restart
    planned = restart
    if drained.size:
        drained_rows = marks.row.take(drained)
        lost -= _sum_by_row(drained_rows, work, rows)
        useful += _sum_by_row(drained_rows, np.minimum(work, tau), rows)
        checkpoint += _sum_by_row(drained_rows, np.maximum(work - tau, 0.0), rows)
    # -- the first and the last spacing, clipped to the window ----------------------------------------------
    first_planned = np.zeros(rows, dtype=bool)
    first_planned[marks.row.take(ch.at_first.compress(marks.kind.take(ch.at_first) == PLANNED))] = True
    after_saved = o.capped | (o.end_kind == PLANNED)
    first_hi = np.where(has, ch.first_len, o.look.age + tp.hours)
    parts = interval_parts(  # the first spacings, then the last ones (counted where n > 0)
        np.concatenate((ch.first_len, ch.piece_n + o.after)),
        np.concatenate((o.look.down, d_last)),
        np.concatenate((np.where(has, first_planned, after_saved), after_saved)),
        np.concatenate((o.look.age, np.zeros(rows))),
        np.concatenate((first_hi, ch.piece_n)),
        tau,
        c,
    )
    mask = np.concatenate((np.ones(rows), has))
    is_planned = np.concatenate((o.look.kind, start_last)) == PLANNED
    dt, ut, wt, lt = (v * mask for v in parts)
    dt_recovery, dt_planned = dt * ~is_planned, dt * is_planned
    for part in (slice(None, rows), slice(rows, None)):
        recovery += dt_recovery[part]
        planned += dt_planned[part]
        useful += ut[part]
        checkpoint += wt[part]
        lost += lt[part]
    # -- persistent restores: the work since the bank is lost (its part inside the window) ------------------
    if tp.lam_persistent > 0:
        rolled = _rollbacks(tp, ch, d_last, sum_m - m_last, x_end, rng_after)
        useful -= rolled
        lost += rolled
    # -- counts ---------------------------------------------------------------------------------------------
    n_ren = np.diff(marks.bounds)
    n_planned = np.bincount(marks.row.take(ch.planned), minlength=rows)
    acc.useful[trials] = np.clip(useful, 0.0, tp.hours)
    acc.checkpoint[trials] = np.clip(checkpoint, 0.0, tp.hours)
    acc.lost[trials] = np.clip(lost, 0.0, tp.hours)
    acc.recovery[trials] = np.clip(recovery, 0.0, tp.hours)
    acc.planned[trials] = np.clip(planned, 0.0, tp.hours)
    acc.n_fast[trials] = n - n_ren
    acc.n_persistent[trials] = n_ren - n_planned
    acc.n_planned[trials] = n_planned
    acc.promoted[trials] = promoted


def _rollbacks(
    tp: TierParams,
    ch: _Chunk,
    d_last: np.ndarray,
    last_start: np.ndarray,
    x_end: np.ndarray,
    rng_after: np.random.Generator,
) -> np.ndarray:
    """Per row, the window's compute since the bank at every persistent restore in the window and at the one
    that may end the cycle running at the window's end: lost, not useful. ``last_start``: per row, the
    snapshots completed from the first spacing's start to the last's; ``x_end``: x of the spacings the
    renewals end."""
    marks = ch.marks
    lo, hi = marks.bounds[:-1], marks.bounds[1:]
    some = np.flatnonzero(hi > lo)
    count = len(marks.row)
    if tp.k == 1:  # without J: counts relative to each row's first spacing
        # Each renewal's cycle holds the spacings after the one the row's previous renewal ended (the
        # first: from the row's first spacing; k = 1 has no phase).
        cycle_lo = np.empty(count, dtype=np.int64)
        cycle_lo[1:] = ch.end_flat[:-1]
        cycle_lo[lo[some]] = ch.first_flat.take(some) - 1
        last_lo = ch.first_flat - 1
        last_lo[some] = ch.end_flat.take(hi[some] - 1)
        ends = np.flatnonzero(_last_cycle_ends_persistent(tp, ch, np.zeros(len(ch.n)), rng_after))
        ends_flat = ch.last_flat.take(ends)
        ends_x = np.maximum(ch.x.take(ends_flat), 0.0)
        y = np.concatenate((x_end, ends_x))
        y[ch.planned] = 1e15  # a planned renewal keeps its work: its "upload" finishes, nothing to look for
        rolled, tail, stop = _walk_k1(
            tp, ch, np.concatenate((ch.end_flat, ends_flat)), np.concatenate((cycle_lo, last_lo.take(ends))), y
        )
        p0, pt = _window_positions(ch, d_last, np.zeros(len(ch.n)), last_start)
        # A renewal's count is inside the window, and so is its bank unless the walk reached the row's first
        # spacing (which began before the window): then what the window holds of the rollback is from p0.
        first = lo[some].compress(stop.take(lo[some]) == ch.first_flat.take(some))
        rolled[first] = np.minimum(rolled.take(first), tail.take(first) - p0.take(marks.row.take(first)))
        # The cycle at the window's end: its count at the end of the last spacing is last_start + m there.
        total = last_start.take(ends) + np.floor(ends_x)
        low = p0.take(ends)
        span = pt.take(ends) - low
        total -= low
        bank = total - rolled[count:]
        end_rolled = np.minimum(np.maximum(total, 0.0), span) - np.minimum(np.maximum(bank, 0.0), span)
    else:
        j = ch.j
        # Each renewal's cycle starts at the previous renewal of its row (the count at the end of the spacing
        # it ended), or at the look-back's base (its phase before the first spacing's start).
        first_start = j.take(ch.first_flat) - np.floor(ch.x.take(ch.first_flat))
        look_base = first_start - ch.out.look.phase
        renewal_j = j.take(ch.end_flat)
        base = np.empty(count)
        base[1:] = renewal_j[:-1]
        base[lo[some]] = look_base[some]
        last_base = look_base.copy()
        last_base[some] = renewal_j[hi[some] - 1]
        base[ch.planned] = renewal_j.take(ch.planned)  # a planned renewal keeps its work: no bank to look for
        jrel = j.take(ch.last_flat) - last_base  # the count at the next spacing's start, in its cycle
        ends = np.flatnonzero(_last_cycle_ends_persistent(tp, ch, jrel, rng_after))
        ends_flat = ch.last_flat.take(ends)
        end_j = np.concatenate((renewal_j, j.take(ends_flat)))
        flat = np.concatenate((ch.end_flat, ends_flat))
        bank = _walk(
            tp,
            ch,
            flat,
            end_j,
            np.concatenate((base, last_base.take(ends))),
            np.concatenate((x_end, ch.x.take(ends_flat))),
        )
        p0, pt = _window_positions(ch, d_last, first_start, first_start + last_start)
        end_rows = np.concatenate((marks.row, ends))
        low = p0.take(end_rows)
        span = pt.take(end_rows)
        span -= low
        end_j -= low
        rolled = np.minimum(np.maximum(end_j, 0.0, out=end_j), span, out=end_j)
        bank -= low
        rolled -= np.minimum(np.maximum(bank, 0.0, out=bank), span, out=bank)
        end_rolled = rolled[count:]
    rolled = rolled[:count]
    rolled[ch.planned] = 0.0
    out: np.ndarray = tp.tau * marks.row_sums(rolled)
    out[ends] += tp.tau * end_rolled
    return out


def _last_cycle_ends_persistent(tp: TierParams, ch: _Chunk, jrel: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row: whether the cycle running at the window's end ends with a persistent restore before any
    upload finishes after its last spacing (the bank is then the one at that spacing's end). ``jrel``: the
    cycle's count at the end of the last spacing (only its phase modulo ``k`` matters).

    The spacing after the window ends with the interruption drawn for it; after a fast restore the next
    spacings are simulated (each ``Exp(Lambda)``, with the fast restore's downtime) until one finishes an
    upload (its snapshot is after the window: nothing inside it can be rolled back any more) or a full
    renewal comes. A capped spacing has finished such an upload itself.
    """
    o = ch.out
    fate = (~o.capped) & (o.end_kind == PERSISTENT)
    active = np.flatnonzero((~o.capped) & (o.end_kind == FAST))
    k, u, s, big = float(tp.k), tp.upload / tp.s, tp.s, tp.big
    jrel = jrel[active]  # the count at the next spacing's start, in its cycle
    block = 4
    while active.size:  # a block of spacings per round: ``block`` of them for each undecided row
        x = rng.standard_exponential((active.size, block))
        x *= 1.0 / (big * s)
        x -= tp.r_fast / s
        kind_u = rng.random((active.size, block))
        if tp.k > 1:
            done = np.maximum(np.floor(x), 0.0)
            start = np.cumsum(done, axis=1)
            start -= done
            start += jrel[:, None]  # each spacing's count at its start
            uploaded = x - u - ((np.floor(start / k) + 1.0) * k - start) >= 0
        else:  # every snapshot is a point: the first is the next one
            uploaded = x - u - 1.0 >= 0
        renewal = ~uploaded & (kind_u < tp.nu / big)
        decided = uploaded | renewal
        first = np.argmax(decided, axis=1)
        any_decided = decided[np.arange(active.size), first]
        persistent = any_decided & renewal[np.arange(active.size), first]
        persistent &= kind_u[np.arange(active.size), first] < tp.lam_persistent / big
        fate[active[persistent]] = True
        go = ~any_decided
        if tp.k > 1:
            jrel = start[go, -1] + done[go, -1]
        active = active[go]
        block = min(2 * block, 256)
    return np.asarray(fate)


def simulate_tier_params(
    tp: TierParams,
    trials: int,
    seed: int,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TierHours:
    """Simulate ``trials`` windows of the model ``tp``; per-trial hours and counts (no components).

    Without a persistent stall beside the fast tier only (``tp.c_point == 0``): with one the snapshot cycles are
    uneven and the whole-window passes here do not apply; the general engine (:mod:`..sim`) runs those.
    """
    if tp.c_point > 0.0:
        raise ValueError("the vectorized two-tier engine has no persistent stall beside the fast tier (see core/sim)")
    big = tp.big
    u = uniforms(stream(seed, STREAM_COUNTS), (trials,))
    counts = poisson_by_inversion(u, big * tp.hours)
    if counts.size and counts.max() >= MAX_TRIAL_EVENTS:
        raise ValueError(
            f"a window with about {big * tp.hours:,.0f} interruptions is more than the two-tier engine simulates "
            f"in one trial ({MAX_TRIAL_EVENTS:,}); shorten the window"
        )
    look = draw_lookback(tp, trials, seed)
    after, capped, end_kind = draw_forward(tp, trials, seed)
    outside = _Outside(look, after, capped, end_kind)
    order = np.argsort(counts, kind="stable")
    acc = TierHours.zeros(trials)
    rng_after = stream(seed, STREAM_AFTER)
    work = _Work(2 * CHUNK_ELEMENTS + int(counts.max(initial=0)) + 1)
    start, chunk = 0, 0
    while start < trials:
        width = int(counts[order[start]]) + 1
        rows = max(1, CHUNK_ELEMENTS // max(width, 1))
        stop = min(trials, start + rows)
        while stop > start + 1 and (stop - start) * (int(counts[order[stop - 1]]) + 1) > 2 * CHUNK_ELEMENTS:
            stop = start + (stop - start) // 2
        if should_stop is not None and should_stop():
            raise Cancelled()
        idx = order[start:stop]
        n = counts[idx]
        sub = outside.take(idx)
        marks = _draw_marks(tp, n, stream(seed, STREAM_MARKS, chunk))
        ch = _fill(tp, n, sub, marks, stream(seed, STREAM_SPACINGS, chunk), work)
        _run_chunk(tp, ch, acc, idx, rng_after)
        start, chunk = stop, chunk + 1
        if progress is not None:
            progress(start / trials)
    return acc


def simulate_tiers(
    scenario: Scenario,
    tiers: Tiers,
    fast_interval_min: float,
    persistent_interval_min: float,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    components: bool = True,
) -> TierTrials:
    """Simulate ``scenario.trials`` windows of the scenario under the recovery strategy ``tiers``.

    ``fast_interval_min`` and ``persistent_interval_min`` are the intervals in use (resolve "optimal" with
    :func:`..theory.tiers.optimal_tier_intervals` first); with the fast tier off the first is ignored.
    """
    tp = tier_params(scenario, tiers, fast_interval_min, persistent_interval_min)
    acc = simulate_tier_params(tp, scenario.trials, scenario.seed, progress=progress, should_stop=should_stop)
    return tier_trials(scenario, tiers, acc, components=components)


def tier_trials(scenario: Scenario, tiers: Tiers, acc: TierHours, *, components: bool = True) -> TierTrials:
    """A run's per-trial results from its hours and counts: the unplanned interruptions shared among the
    components of each tier in proportion to their rates (a multinomial draw from the scenario's seed)."""
    by_comp = np.zeros((scenario.trials, len(scenario.components)), dtype=np.int64)
    if components and scenario.components:
        rates = np.array([c.rate_per_gpu_hour for c in scenario.components])
        fast = np.array(tier_rates(scenario, tiers).fast_components) & tiers.fast_enabled
        rng = stream(scenario.seed, STREAM_COMPONENTS)
        for mask, count in ((fast, acc.n_fast), (~fast, acc.n_persistent)):
            by_comp[:, mask] = split_by_rates(rng, count, rates[mask])
    unplanned = acc.n_fast + acc.n_persistent
    return TierTrials(
        unplanned=unplanned,
        planned=acc.n_planned,
        by_component=by_comp,
        useful=acc.useful,
        checkpoint=acc.checkpoint,
        lost_work=acc.lost,
        recovery=acc.recovery,
        planned_restart=acc.planned,
        restores_fast=acc.n_fast - acc.promoted,
        restores_persistent=acc.n_persistent + acc.promoted,
    )
