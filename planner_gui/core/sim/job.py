"""The job of docs/model.md section 2, stepped over the world's points: every trial one column, one point a step.

A step takes every running trial from its last point to its next one (:mod:`.world`) in closed form, then
applies that point. Between two points nothing changes for the job but its own cycle, so a *spacing* is a
downtime (until the job's clock reaches ``DOWN``), then running: ``x`` hours of compute and stalls from where
the cycle stood (``PHI`` snapshots after the last persistent point, ``E`` hours into the current snapshot
cycle), at the throughput ``THETA``. While the job is blocked its clock (``G``) stands still.

Within a spacing, from the start of the current snapshot cycle (a *virtual start* ``E`` hours before the
spacing's running begins), snapshots complete at ``s, 2 s, ...`` and persistent points at ``(k - phi) s +
c_p + j L`` (``L = k s + c_p``): :func:`advance` counts them and the compute done (as the stepped two-tier
engine did, from a clean cycle start, so a spacing that does not run keeps its place exactly). Progress grows
at ``THETA`` times the compute. The uploads of the spacing follow from the points' wall-clock times: the
first starts at the first point at or after the end of the upload in flight, then every ``q``-th; the bank is
the last to finish.

Hours are labelled by time inside the window (docs/model.md 2.6): downtime (its planned restart part
``PLAN_END``), waiting, compute (useful or lost by what happens to it, through ``m(t)``), stalls (checkpoint,
or lost when a restart ends them; a stall cut by a point that does not end it stays *open*).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .model import CONTINUE, RESTART_FAST, SimModel
from .world import PLANNED, SDC_FOUND, failed_in_a_row

__all__ = ["ROWS", "Flags", "advance", "compute_at", "initial_state", "step"]

# Rows of the state array (one column per trial).
# The job at its last point: wall time, job clock, downtime end (job clock), its planned part's end, the restore
# pending (0: none; RESTART_FAST or RESTART_PERSISTENT while a restart's downtime runs), the latest swap's end,
# the cycle (snapshots since the last point, hours into the current snapshot cycle), progress, the fast tier's
# and the persistent tier's checkpoints, the upload in flight (its wall-clock end, -inf: none; its progress),
# the throughput and whether the job is blocked.
(T, G, DOWN, PLAN_END, PEND, SWAP, PHI, E, P, PSNAP, PBANK, UPEND, UPP, THETA, BLOCKED) = range(15)
# What the window has seen: compute's progress and lost throughput, stalls kept / cut / still open, downtime,
# waiting, m(0) and m(T), the counts, and the time to train's end (nan until reached).
(GAIN, REDUCED, CKPT, CUT, OPEN, RECOVERY, PLANNED_H, WAIT, M0, MEND) = range(15, 25)
(N_FAST, N_PERSISTENT, N_PROMOTED, N_CONTINUED, DONE) = range(25, 30)
# The model of the column (a sweep's points step together, each with its own).
(TAU, C, S, K, CP, L, U, Q, DR, RP, RF, RPERS, SWAPLEN, STALL, WINDOW, WORK, FLOOR, SETTLE) = range(30, 48)
# Fail-slow nodes: the job's speed now (1, or the slow factor while a node is slow), and the window's computing
# hours lost to it (docs/model.md, "Fail-slow nodes").
(SPEED, SLOW_H) = range(48, 50)
# Checkpoints that fail (docs/model.md 2.1, 2.2): the phase of the fast tier's checkpoint (the count at its
# snapshot, which a failed save can leave behind the job's), and the window's restores from the fast tier that
# failed their validation.
(SPHI, N_FAILED) = range(50, 52)
# Silent data corruption (docs/model.md, "Silent data corruption"): corruptions under way, the lowest progress since
# the first of them started (the mark: a checkpoint at or below it is clean), the newest clean persistent checkpoint
# and the persistent saves since it, an upload in flight when they started (its progress, clean; NEVER: none) and
# whether it would save, the persistent saves since the bank (for every column: where a corruption finds it), the
# saves the persistent tier keeps, and the window's rollback hours, corruptions found and those with no clean
# checkpoint kept.
(SDC_ON, SDC_M, SDC_C, SDC_N, SDC_FLY, SDC_FATE, ABANK, RETAIN, SDC_H, N_SDC, N_LOST) = range(52, 63)
ROWS = 63
#: The mark while no corruption is under way (above every progress).
NO_MARK = np.inf
#: How long after its window a trial is followed at most before it is settled by force (docs/model.md 2.7): the
#: window's end plus the model's tail and this many hours.
SETTLE_HOURS = 24.0

#: The kind a finished column is stepped with: a point that changes nothing.
CHANGE_KIND = 5

#: What can roll a job back (the floor below which m(T) can no longer fall): the bank, the last snapshot, or
#: nothing (every failure continues).
FLOOR_BANK, FLOOR_SNAP, FLOOR_NONE = 2.0, 1.0, 0.0

#: A time before every time: no downtime, no swap, no upload in flight (finite, so that masks by arithmetic
#: stay exact: ``NEVER * 0.0`` is 0).
NEVER = -1e30


def advance(
    phi: np.ndarray, y: np.ndarray, s: np.ndarray, cycle: np.ndarray, k: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Running ``y`` hours from the start of a snapshot cycle ``phi`` snapshots after a persistent point: the
    snapshots completed ``m``, the phase at the end ``i``, the time since the last of them (or the start)
    ``rem``, and ``w``, the time past the first persistent point (negative if not reached)."""
    w = y - (cycle - phi * s)
    before = np.minimum(np.floor(y / s), k - 1 - phi)
    past = np.maximum(w, 0.0)
    whole = np.floor(past / cycle)
    r = np.maximum(past - whole * cycle, 0.0)
    after = np.minimum(np.floor(r / s), k - 1)
    reached = w >= 0.0
    m = np.where(reached, (k - phi) + whole * k + after, before)
    i = np.where(reached, after, phi + before)
    rem = np.where(reached, r - after * s, y - before * s)
    return m, i, rem, w


def compute_at(
    phi: np.ndarray, y: np.ndarray, tau: np.ndarray, s: np.ndarray, cycle: np.ndarray, k: np.ndarray
) -> np.ndarray:
    """Compute done in the first ``y`` hours of running from the start of a snapshot cycle at phase ``phi``."""
    m, _, rem, _ = advance(phi, y, s, cycle, k)
    out: np.ndarray = m * tau + np.minimum(rem, tau)
    return out


def model_rows(m: SimModel, work: float | None) -> dict[int, float]:
    """The model's rows of a column."""
    if m.restarts_persistent or m.restores_can_fail:
        floor = FLOOR_BANK
    elif m.restarts_fast:
        floor = FLOOR_SNAP
    else:
        floor = FLOOR_NONE
    return {
        TAU: m.tau,
        C: m.c,
        S: m.s,
        K: float(m.k),
        CP: m.c_p,
        L: m.cycle,
        U: m.upload,
        Q: float(m.points_per_upload),
        DR: m.detect_restart,
        RP: m.restart,
        RF: m.restore_fast,
        RPERS: m.restore_persistent,
        SWAPLEN: m.swap,
        STALL: m.stall,
        WINDOW: m.hours,
        WORK: np.inf if work is None else work,
        FLOOR: floor,
        SETTLE: m.hours + m.tail_hours() + SETTLE_HOURS,
        RETAIN: m.retained,
    }


def initial_state(
    m: SimModel,
    trials: int,
    start: float,
    rng: np.random.Generator,
    *,
    steady: bool,
    work: float | None,
    theta: np.ndarray,
    blocked: np.ndarray,
    speed: np.ndarray | None = None,
) -> np.ndarray:
    """The columns of one model's trials at ``start``: fresh (progress 0 at a persistent point, running), or with
    ``steady`` in the steady state of the cycle without failures (a uniform place in the cycle of ``q``
    persistent points, with the upload and the bank it implies)."""
    st = np.zeros((ROWS, trials))
    for row, value in model_rows(m, work).items():
        st[row] = value
    st[T] = start
    st[G] = start
    st[DOWN] = NEVER
    st[PLAN_END] = NEVER
    st[SWAP] = NEVER
    st[UPEND] = NEVER
    st[UPP] = NEVER
    st[M0] = np.inf
    st[MEND] = np.inf
    st[DONE] = np.nan
    st[THETA] = theta
    st[BLOCKED] = blocked.astype(float)
    st[SPEED] = 1.0 if speed is None else speed
    st[SDC_M] = NO_MARK
    st[SDC_FLY] = NEVER
    q, cyc, s, k = m.points_per_upload, m.cycle, m.s, m.k
    base = (q * k * m.tau + m.tau) if steady else 0.0  # so that every checkpoint of a steady start is >= 0
    st[P] = base
    st[PSNAP] = base
    st[PBANK] = base
    if not steady:
        return st
    phase = rng.random(trials) * q * cyc  # running time since the last upload started
    j = np.floor(phase / cyc)  # persistent points passed since then
    rho = phase - j * cyc
    phi = np.minimum(np.floor(rho / s), k - 1)
    e = rho - phi * s
    st[PHI], st[E] = phi, e
    since_snap = np.minimum(e, m.tau)
    since_start = j * k * m.tau + phi * m.tau + since_snap  # compute since the upload's point
    st[PSNAP] = base - since_snap
    in_flight = phase < m.upload
    st[UPEND] = np.where(in_flight, start + (m.upload - phase), NEVER)
    st[UPP] = np.where(in_flight, base - since_start, NEVER)
    st[PBANK] = np.where(in_flight, base - since_start - q * k * m.tau, base - since_start)
    st[SPHI] = phi
    if m.save_fail > 0.0:  # the saves that failed: the last kept snapshot and upload lie further back
        back_snap, back_up = failed_in_a_row(rng.random((2, trials)), m.save_fail)
        st[PSNAP] -= back_snap * m.tau
        st[SPHI] = np.mod(phi - back_snap, k)
        st[PBANK] -= back_up * q * k * m.tau
        st[ABANK] = back_up
    return st


@dataclass(frozen=True)
class Flags:
    """What a run's columns can need, so that a step skips the rest."""

    window: bool  # windows (label hours) rather than times to train
    uploads: bool  # some upload takes time
    waits: bool  # some column can be blocked waiting for spares
    unit_k: bool  # every column has k = 1 (every snapshot a persistent point)
    throughput: bool  # some column can run below full throughput
    swaps: bool  # some column has a swap time
    continues: bool  # some column can continue after a failure
    fast: bool  # some column restores from the fast tier
    #: Every column's persistent points stall no longer than its snapshots (c_p = 0), so its snapshots complete
    #: every ``s`` of running time (with k = 1 the cycle ``L`` is the snapshots' period whatever c_p).
    even: bool = False
    slow: bool = False  # some column has fail-slow nodes (its speed changes at points)
    detect_by: bool = False  # some column's detection differs by cause (each failure brings its own)
    failing: bool = False  # some column's checkpoints can fail (each point brings its draws)
    sdc: bool = False  # some column's silent corruptions are found late (points start and find them)


def _blend(a: np.ndarray, b: np.ndarray | float, mask: np.ndarray, not_mask: np.ndarray) -> np.ndarray:
    """``b`` where ``mask`` (1.0) else ``a`` (``mask`` 0.0, ``not_mask`` = 1 - mask), exactly, for finite values:
    arithmetic rather than a select, which costs several times more over masks that change from column to
    column."""
    out: np.ndarray = a * not_mask
    out += b * mask
    return out


def step(
    st: np.ndarray,
    ev_t: np.ndarray,
    kind: np.ndarray,
    ev_took: np.ndarray,
    ev_cap: np.ndarray,
    ev_blk: np.ndarray,
    f: Flags,
    window_lo: float,
    window_hi: float,
    ev_speed: np.ndarray | None = None,
    ev_dr: np.ndarray | None = None,
    ev_fail: Sequence[np.ndarray] | None = None,
    ev_sdc: np.ndarray | None = None,
) -> np.ndarray:
    """Move every column of ``st`` to its next point (``ev_*``, one per column) and apply it.

    ``window_lo`` and ``window_hi`` are the shortest and the longest window of the columns. Returns which
    columns are finished: past the window with nothing left to roll them below m(T) (a time to train: done).
    Columns already finished may be stepped on: their results were taken when they finished.

    Masks are carried as 0.0 / 1.0 and applied by arithmetic (:func:`_blend`); the times that mean "none"
    (no downtime, no upload, no swap) are :data:`NEVER`, a finite number below every time, so that the
    arithmetic stays exact.

    ``ev_fail`` (checkpoints that fail, docs/model.md 2.1): per point, how many of the spacing's last snapshots
    failed to save, how many of its last persistent saves failed (both counted back from the latest, geometric),
    and 1.0 where a restore from the fast tier at the point fails its validation.

    ``ev_sdc`` (silent data corruption, docs/model.md): per point, what :attr:`.world.Chunk.sdc` says."""
    t, g = st[T], st[G]
    dt = ev_t - t
    dg = dt * (1.0 - st[BLOCKED]) if f.waits else dt
    down_end = st[DOWN]
    down = down_end - g
    np.maximum(down, 0.0, out=down)
    np.minimum(down, dg, out=down)
    x = dg - down
    t_run = t + down
    g_new = g + dg
    tau = st[TAU]
    e, theta, p0 = st[E], st[THETA], st[P]
    if f.slow:  # progress at the throughput times the speed (docs/model.md, "Fail-slow nodes")
        theta = theta * st[SPEED]
    e_tau = np.minimum(e, tau)
    y = e + x
    # The cycle: snapshots completed (m), the time since the last (rem), the phase at the end (i, None with
    # k = 1), and the persistent points passed (n_pts).
    phi = k = None
    if f.unit_k:
        cyc = st[L]
        m = y / cyc
        np.floor(m, out=m)
        rem = y - m * cyc
        i = None
        n_pts = m
    elif f.even:
        s = st[S]
        phi, k = st[PHI], st[K]
        m = y / s
        np.floor(m, out=m)
        rem = y - m * s
        i = phi + m
        n_pts = i / k
        np.floor(n_pts, out=n_pts)
        i -= n_pts * k
    else:
        phi, k = st[PHI], st[K]
        m, i, rem, w = advance(phi, y, st[S], st[L], k)
        n_pts = np.floor(np.maximum(w, 0.0) / st[L]) + 1.0
        n_pts *= w >= 0.0
    mtau = m * tau
    comp = np.minimum(rem, tau)
    comp += mtau
    comp -= e_tau
    ds = np.minimum(m, 1.0)  # 1.0 where a snapshot completed
    nds = 1.0 - ds
    p_end = theta * comp
    p_end += p0
    failing = f.failing and ev_fail is not None
    back_snap = back_up = sphi = None
    if failing:  # the last snapshot saved in the spacing lies back_snap snapshots before the last completed
        assert ev_fail is not None
        back_snap, back_up = ev_fail[0], ev_fail[1]
        got = (m > back_snap).astype(np.float64)
        p_snap = _blend(st[PSNAP], p0 + theta * ((m - back_snap) * tau - e_tau), got, 1.0 - got)
        if i is not None and k is not None:
            sphi = _blend(st[SPHI], np.mod(i - back_snap, k), got, 1.0 - got)
    else:
        p_snap = mtau - e_tau
        p_snap *= theta
        p_snap += p0
        p_snap = _blend(st[PSNAP], p_snap, ds, nds)
    bank = st[PBANK]
    upend = upp = None
    n_saves: np.ndarray | float = n_pts  # (the persistent saves finished in the spacing; with uploads, theirs)
    fly_done: np.ndarray | None = None  # (with uploads: the upload in flight at the spacing's start finished)
    if f.unit_k and not f.uploads:
        if back_up is not None:  # every snapshot a persistent point: the last whose copy was saved
            got_u = (m > back_up).astype(np.float64)
            bank = _blend(bank, p0 + theta * ((m - back_up) * tau - e_tau), got_u, 1.0 - got_u)
        else:
            bank = _blend(bank, p_snap, ds, nds)
    else:
        kk = 1.0 if k is None else k
        ph = 0.0 if phi is None else phi
        step_p = theta * kk * tau
        p_first = p0 + theta * ((kk - ph) * tau - e_tau)  # progress at the spacing's first point (point j: + j step_p)
        if not f.uploads:
            last = n_pts - 1.0 if back_up is None else n_pts - 1.0 - back_up  # (the last point saved)
            some = (last >= 0.0).astype(np.float64)
            bank = _blend(bank, p_first + last * step_p, some, 1.0 - some)
        else:
            # (wall time of the first point)
            first_pt = t_run + ((kk - ph) * st[S] + st[CP] - e) if k is not None else t_run + (st[L] - e)
            bank, upend, upp, n_saves, fly_done = _uploads(
                st, ev_t, n_pts, first_pt, p_first, step_p, st[L], bank, back_up
            )
    kf = kind.astype(np.float64)
    restart = kf <= 2.0
    rs = restart.astype(np.float64)
    nrs = 1.0 - rs
    planned = kind == PLANNED
    pl_cols = np.flatnonzero(planned) if planned.any() else None
    if f.window:
        lo_t, hi_t = float(t.min()), float(ev_t.max())
        if hi_t > 0.0:
            _label(
                st,
                t,
                ev_t,
                t_run,
                down,
                x,
                dt,
                phi,
                e,
                tau,
                k,
                comp,
                rem,
                ds,
                nds,
                p0,
                theta,
                rs,
                pl_cols,
                f,
                lo_t <= 0.0 or hi_t > window_lo,
            )
    else:
        _train(st, t_run, x, phi, e, e_tau, tau, st[S], st[CP], k, p0, theta, comp)
    # The point itself: a restarting failure (rs), a continuing one, a planned interruption (pl_cols), a change.
    pend = st[PEND] * (down_end > g_new)  # the restore pending, while a restart's downtime runs
    tier = np.maximum(pend, kf)  # (for restarts) RESTART_PERSISTENT is the worse
    pers = tier - 1.0
    pers *= rs  # 1.0 where a restart restores from the persistent tier
    promoted = pers * (2.0 - kf) if f.fast else None  # a fast-tier failure during a restore from storage
    failed = None
    if failing and f.fast:
        assert ev_fail is not None
        # A restore from the fast tier goes to storage when the bank is newer than the fast tier's checkpoint
        # (the saves since the bank's failed), or when it fails its validation (after the fast restore's time).
        want_fast = rs - pers
        # (newer by more than rounding: the two are sums taken in different orders where they are one point)
        older = want_fast * (p_snap < bank - 1e-9 * (1.0 + np.abs(bank)))
        failed = (want_fast - older) * ev_fail[2]
        pers = pers + older + failed
    fast = rs - pers
    sdc = None
    if f.sdc and ev_sdc is not None:  # silent corruptions: a found one rolls back to the last clean checkpoint
        sdc = _sdc_before(st, ev_sdc, rs, fast, pers, p_end, p_snap, bank, upp, n_saves, fly_done, back_up)
        pers = pers + sdc.to_pers
        fast = rs - pers
        bank = np.where(sdc.found * pers > 0.0, sdc.target, bank)
    # Where the job resumes.
    new_p = _blend(p_end, p_snap, fast, 1.0 - fast)
    new_p = _blend(new_p, bank, pers, 1.0 - pers)
    if sdc is not None and f.window:
        _sdc_rollback(st, sdc, ev_t, p_end, new_p)
    st[P] = new_p
    if i is not None:
        if sphi is not None:  # a restore from the fast tier resumes the count at its snapshot
            i = _blend(i, sphi, fast, 1.0 - fast)
            st[SPHI] = sphi * (1.0 - pers)
        i *= 1.0 - pers
        st[PHI] = i
    rem *= nrs
    st[E] = rem
    st[PSNAP] = _blend(p_snap, bank, pers, 1.0 - pers)
    st[PBANK] = bank
    if upend is not None and upp is not None:
        st[UPEND] = _blend(upend, NEVER, rs, nrs)
        st[UPP] = _blend(upp, NEVER, rs, nrs)
    # The downtime that follows.
    restore = st[RPERS]
    if f.fast:
        restore = restore + fast * (st[RF] - restore)
        if failed is not None:
            restore = restore + failed * st[RF]  # (the fast restore that failed, then the one from storage)
    dr = ev_dr if f.detect_by and ev_dr is not None else st[DR]  # (read only at restarting failures)
    base = g_new + dr
    swap = st[SWAP]
    if f.swaps:
        took = ev_took * rs
        swapped = st[SWAPLEN] * took
        base += swapped
        np.maximum(base, swap, out=base)
        # The latest swap: g + detect + restart + swap of the node-taking restarts.
        np.maximum(swap, (g_new + dr + st[SWAPLEN]) * took + NEVER * (1.0 - took), out=swap)
    base += restore
    down_new = _blend(down_end, base, rs, nrs)
    if f.continues:
        cont = kind == CONTINUE
        reach = g_new + st[STALL]
        reach += NEVER * ~cont
        np.maximum(down_new, reach, out=down_new)
    else:
        cont = None
    st[DOWN] = down_new
    plan_end = st[PLAN_END]
    np.minimum(plan_end, g_new + NEVER * -nrs, out=plan_end)  # (a restart: the planned part is over)
    st[PEND] = pend * nrs + rs + pers
    st[T] = ev_t
    st[G] = g_new
    if f.throughput or f.waits:
        st[THETA] = ev_cap
    if f.waits:
        st[BLOCKED] = ev_blk
    if f.slow and ev_speed is not None:
        st[SPEED] = ev_speed
    if pl_cols is not None:  # planned interruptions (rare): drain, or keep the pending restore (docs/model.md 2.4)
        _planned(st, pl_cols, g_new, pend, p_end, swap, f)
    if sdc is not None:
        _sdc_after(st, sdc, rs, pers, planned & (pend <= 0.0), new_p)
    if not f.window:
        done: np.ndarray = ~np.isnan(st[DONE])
        return done
    # The window's counts, m(0) and m(T), and whether the column is finished.
    lo_e, hi_e = float(ev_t.min()), float(ev_t.max())
    if hi_e < 0.0:
        return np.zeros(len(ev_t), dtype=bool)
    new_p = st[P]
    window = st[WINDOW]
    if sdc is not None:
        inside_sdc = (ev_t >= 0.0) & (ev_t < window)
        st[N_SDC] += sdc.found * inside_sdc
        st[N_LOST] += sdc.lost * inside_sdc
    if lo_e >= 0.0 and hi_e < window_lo:  # every point inside the window
        st[N_FAST] += fast
        st[N_PERSISTENT] += pers
        if promoted is not None:
            st[N_PROMOTED] += promoted
        if failed is not None:
            st[N_FAILED] += failed
        if cont is not None:
            st[N_CONTINUED] += cont
        np.minimum(st[M0], new_p, out=st[M0])
        return np.zeros(len(ev_t), dtype=bool)
    inside = (ev_t >= 0.0) & (ev_t < window)
    st[N_FAST] += fast * inside
    st[N_PERSISTENT] += pers * inside
    if promoted is not None:
        st[N_PROMOTED] += promoted * inside
    if failed is not None:
        st[N_FAILED] += failed * inside
    if cont is not None:
        st[N_CONTINUED] += cont & inside
    np.minimum(st[M0], np.where(inside, new_p, np.inf), out=st[M0])
    if hi_e < window_lo:
        return np.zeros(len(ev_t), dtype=bool)
    past = ev_t >= window
    np.minimum(st[MEND], np.where(past, new_p, np.inf), out=st[MEND])
    fl = st[FLOOR]
    floor = np.where(fl == FLOOR_BANK, st[PBANK], np.where(fl == FLOOR_SNAP, st[PSNAP], new_p))
    if sdc is not None:  # (a corruption under way will roll the job back to its clean checkpoint, or further)
        floor = np.where(st[SDC_ON] > 0.0, np.minimum(floor, _sdc_target(st)), floor)
    out: np.ndarray = past & (floor >= st[MEND]) & (st[OPEN] <= 0.0)
    late = past & ~out & (ev_t >= st[SETTLE])
    if late.any():  # a job that barely runs: what it has above its last checkpoint counts as lost
        cols = np.flatnonzero(late)
        st[MEND, cols] = np.minimum(st[MEND, cols], floor[cols])
        st[CUT, cols] += st[OPEN, cols]
        st[OPEN, cols] = 0.0
        out = out | late
    return out


def _planned(
    st: np.ndarray, cols: np.ndarray, g_new: np.ndarray, pend: np.ndarray, p_end: np.ndarray, swap: np.ndarray, f: Flags
) -> None:
    """The planned interruptions of this step (columns ``cols``; docs/model.md 2.4): one that finds the job intact
    drains it (progress becomes both tiers' checkpoint, the count restarts, an upload in flight is dropped); one
    during a restarting failure's downtime persists nothing and keeps the pending restore. Either way the job is
    down until ``max(t + restart, the latest swap)`` (plus that restore), the first ``restart`` hours planned."""
    gc, pc = g_new[cols], pend[cols]
    in_restart = pc > 0.0
    drain = cols[~in_restart]
    if len(drain):
        pe = p_end[drain]
        st[PSNAP, drain] = pe
        st[PBANK, drain] = pe
        st[E, drain] = 0.0
        if not f.unit_k:
            st[PHI, drain] = 0.0
            st[SPHI, drain] = 0.0
        if f.uploads:
            st[UPEND, drain] = NEVER
            st[UPP, drain] = NEVER
    pending = np.where(pc == RESTART_FAST, st[RF, cols], st[RPERS, cols]) * in_restart
    st[DOWN, cols] = np.maximum(gc + st[RP, cols], swap[cols]) + pending
    st[PLAN_END, cols] = gc + st[RP, cols]


def _uploads(
    st: np.ndarray,
    ev_t: np.ndarray,
    n_pts: np.ndarray,
    first_pt: np.ndarray,
    p_first: np.ndarray,
    step_p: np.ndarray,
    cyc: np.ndarray,
    bank: np.ndarray,
    back: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The uploads of a spacing: the one in flight at its start finishes, then uploads start at the first point at
    or after its end and every ``q``-th after that (one at a time); the bank is the last to finish, or with
    ``back`` (failed saves) the one ``back`` uploads before the last to finish. (No upload in flight: its end and
    its progress are :data:`NEVER`.) Returns the bank, the upload in flight at the spacing's end (its end and
    progress), the uploads that finished in the spacing, and 1.0 where the one in flight at its start did."""
    u, q = st[U], st[Q]
    upend, upp = st[UPEND], st[UPP]
    od = (upend <= ev_t).astype(np.float64)  # the upload in flight (if any) has finished
    cand = upp + NEVER * (1.0 - od)
    j0 = upend - first_pt
    j0 /= cyc
    j0 *= 1.0 - 1e-12
    np.ceil(j0, out=j0)
    np.maximum(j0, 0.0, out=j0)  # (no upload in flight: NEVER, so 0)
    starts = n_pts - 1.0 - j0
    any_start = (starts >= 0.0).astype(np.float64)
    j_last = j0 + q * np.floor(np.maximum(starts, 0.0) / q)
    end_last = first_pt + j_last * cyc
    end_last += u
    p_last = p_first + j_last * step_p
    finished = any_start * (end_last <= ev_t)
    flying = any_start - finished
    # (the uploads finished in the spacing, in order: the one in flight, then those started here but the last if it
    # still flies)
    done_here = any_start * (np.floor(np.maximum(starts, 0.0) / q) + 1.0) - flying
    fly_done = od * (upp > 0.5 * NEVER)
    if back is None:
        prev_ok = flying * (j_last - q >= j0)
        np.maximum(cand, p_last + NEVER * (1.0 - finished), out=cand)
        np.maximum(cand, (p_last - q * step_p) + NEVER * (1.0 - prev_ok), out=cand)
    else:
        # The one ``back`` before the last of them was saved.
        j_fin = j_last - q * flying
        from_here = (back < done_here).astype(np.float64)
        cand = cand + NEVER * (back != done_here)  # (the one in flight, only when it is the one)
        np.maximum(cand, (p_first + (j_fin - back * q) * step_p) + NEVER * (1.0 - from_here), out=cand)
    bank = np.maximum(bank, cand)
    # (an upload in flight goes on; one that finished leaves none, or the last started)
    not_flying = 1.0 - flying
    idle = od * not_flying
    keep = (1.0 - od) * not_flying
    upend = upend * keep + end_last * flying + NEVER * idle
    upp_end = upp * keep + p_last * flying + NEVER * idle
    return bank, upend, upp_end, done_here + fly_done, fly_done


def _label(
    st: np.ndarray,
    t: np.ndarray,
    ev_t: np.ndarray,
    t_run: np.ndarray,
    down: np.ndarray,
    x: np.ndarray,
    dt: np.ndarray,
    phi: np.ndarray | None,
    e: np.ndarray,
    tau: np.ndarray,
    k: np.ndarray | None,
    comp: np.ndarray,
    rem: np.ndarray,
    ds: np.ndarray,
    nds: np.ndarray,
    p0: np.ndarray,
    theta: np.ndarray,
    rs: np.ndarray,
    pl_cols: np.ndarray | None,
    f: Flags,
    edges: bool,
) -> None:
    """Label the spacing's hours inside the window ``[0, T)`` (docs/model.md 2.6)."""
    # The stall under way at the spacing's end: the part of it in this spacing (before the first snapshot the
    # spacing completes, the stall was under way already).
    tail = rem - tau
    np.maximum(tail, 0.0, out=tail)
    tail -= np.maximum(e - tau, 0.0) * nds
    if not edges:  # the whole spacing inside the window
        comp_w, run_w, tail_w = comp, x, tail
    else:
        window = st[WINDOW]
        y0 = np.zeros_like(x)
        y1 = x.copy()
        c0 = np.zeros_like(x)
        c1 = comp.copy()
        edge = np.flatnonzero((t <= 0.0) | (ev_t > window))
        xe, tr, we = x[edge], t_run[edge], window[edge]
        y0e, y1e = np.clip(-tr, 0.0, xe), np.clip(we - tr, 0.0, xe)
        y0[edge], y1[edge] = y0e, y1e
        ee = e[edge]
        pe = np.zeros(len(edge)) if phi is None else phi[edge]
        ke = np.ones(len(edge)) if k is None else k[edge]
        args = (tau[edge], st[S, edge], st[L, edge], ke)
        base = np.minimum(ee, tau[edge])
        c0e = compute_at(pe, ee + y0e, *args) - base
        c1e = compute_at(pe, ee + y1e, *args) - base
        c0[edge], c1[edge] = c0e, c1e
        # m(0) and m(T): progress at the window's start and end, in the spacing that holds them.
        at0 = (t[edge] <= 0.0) & (ev_t[edge] > 0.0)
        st[M0, edge[at0]] = p0[edge[at0]] + theta[edge[at0]] * c0e[at0]
        at_end = (t[edge] <= we) & (ev_t[edge] > we)
        st[MEND, edge[at_end]] = p0[edge[at_end]] + theta[edge[at_end]] * c1e[at_end]
        comp_w = c1 - c0
        run_w = y1 - y0
        tail_w = np.maximum(np.minimum(x, y1) - np.maximum(x - tail, y0), 0.0)
    gain = theta * comp_w
    st[GAIN] += gain
    if f.slow:  # computing time at the throughput, the part of it lost to a slow node
        at_cap = st[THETA] * comp_w
        st[SLOW_H] += at_cap - gain
        if f.throughput:
            st[REDUCED] += comp_w - at_cap
    elif f.throughput:
        st[REDUCED] += comp_w - gain
    # Stalls: the one open before the spacing is kept once a snapshot completes in it; those completed in the
    # spacing are kept; the one under way at its end stays open, unless a restart cuts it or a drain keeps it.
    opened = st[OPEN]
    kept = opened * ds
    opened = opened * nds
    ended_w = opened + tail_w
    ckpt = run_w - comp_w
    ckpt -= tail_w
    ckpt += kept
    cut = rs * ended_w
    st[CUT] += cut
    still = ended_w - cut
    if pl_cols is not None:  # a drain keeps the stall it ends as checkpoint
        ckpt[pl_cols] += still[pl_cols]
        still[pl_cols] = 0.0
    st[CKPT] += ckpt
    st[OPEN] = still
    # Downtime [t, t + down) and waiting, inside the window; the planned restart's part first.
    plan = st[PLAN_END] - st[G]
    np.maximum(plan, 0.0, out=plan)
    np.minimum(plan, down, out=plan)
    if edges:
        window = st[WINDOW]
        lo = np.maximum(t, 0.0)
        d_in = np.maximum(np.minimum(t + down, window) - lo, 0.0)
        p_in = np.maximum(np.minimum(t + plan, window) - lo, 0.0)
    else:
        d_in, p_in = down, plan
    st[PLANNED_H] += p_in
    st[RECOVERY] += d_in - p_in
    if f.waits:
        blocked = st[BLOCKED]
        if edges:
            lo = np.maximum(t, 0.0)
            st[WAIT] += blocked * np.maximum(np.minimum(t + dt, st[WINDOW]) - lo, 0.0)
        else:
            st[WAIT] += blocked * dt


def _train(
    st: np.ndarray,
    t_run: np.ndarray,
    x: np.ndarray,
    phi: np.ndarray | None,
    e: np.ndarray,
    e_tau: np.ndarray,
    tau: np.ndarray,
    s: np.ndarray,
    cp: np.ndarray,
    k: np.ndarray | None,
    p0: np.ndarray,
    theta: np.ndarray,
    comp: np.ndarray,
) -> None:
    """A time to train ends the first moment progress reaches the work (docs/model.md 2.7): inside the spacing,
    after the compute still needed and the stalls of the snapshots (and persistent points) on the way."""
    need = st[WORK] - p0
    reach = (theta * comp >= need) & (theta > 0.0) & np.isnan(st[DONE])
    reach &= st[SDC_ON] <= 0.0  # (not done while a corruption is under way: docs/model.md 2.7)
    if not reach.any():
        return
    cols = np.flatnonzero(reach)
    c_star = need[cols] / theta[cols] + e_tau[cols]
    tc = tau[cols]
    n = np.maximum(np.ceil(c_star / tc) - 1.0, 0.0)
    r = c_star - n * tc
    ph = 0.0 if phi is None else phi[cols]
    kc = 1.0 if k is None else k[cols]
    y_star = n * s[cols] + cp[cols] * np.floor((ph + n) / kc) + r
    st[DONE, cols] = t_run[cols] + (y_star - e[cols])


@dataclass
class _Sdc:
    """What a step's point does about silent corruptions (docs/model.md, "Silent data corruption"): 1.0 where it finds
    one under way (a restarting failure), where that restore goes to storage rather than to a poisoned snapshot,
    where no clean checkpoint is kept (the run starts over), and the progress the restore returns to."""

    found: np.ndarray
    to_pers: np.ndarray
    lost: np.ndarray
    target: np.ndarray


def _sdc_target(st: np.ndarray) -> np.ndarray:
    """The progress a corruption found now rolls back to from storage: the newest clean checkpoint while kept, else
    the run's start (0)."""
    out: np.ndarray = np.where(st[SDC_N] < st[RETAIN], st[SDC_C], 0.0)
    return out


def _sdc_before(
    st: np.ndarray,
    ev_sdc: np.ndarray,
    rs: np.ndarray,
    fast: np.ndarray,
    pers: np.ndarray,
    p_end: np.ndarray,
    p_snap: np.ndarray,
    bank: np.ndarray,
    upp: np.ndarray | None,
    n_saves: np.ndarray | float,
    fly_done: np.ndarray | None,
    back_up: np.ndarray | None,
) -> _Sdc:
    """The spacing's persistent saves (the newest clean checkpoint, the saves since it and since the bank) and the
    point: a corruption that starts marks the progress, one found rolls back to the newest clean checkpoint."""
    act = st[SDC_ON] > 0.0
    saves = np.broadcast_to(np.asarray(n_saves, dtype=np.float64), act.shape)
    back = np.zeros(act.shape) if back_up is None else back_up
    st[ABANK] = np.where(saves > 0.0, np.where(back < saves, back, st[ABANK] + saves), st[ABANK])
    if fly_done is not None:  # the clean upload in flight when the corruption started: saved or not
        fly = act & (st[SDC_FLY] > 0.5 * NEVER) & (fly_done > 0.0)
        ok = fly if back_up is None else fly & (back < saves) & ((back == saves - 1.0) | (st[SDC_FATE] > 0.0))
        st[SDC_C] = np.where(ok, st[SDC_FLY], st[SDC_C])
        st[SDC_N] = np.where(act, np.where(ok, saves - 1.0, st[SDC_N] + saves), st[SDC_N])
        st[SDC_FLY] = np.where(fly, NEVER, st[SDC_FLY])
    else:
        st[SDC_N] = np.where(act, st[SDC_N] + saves, st[SDC_N])
    starts = (ev_sdc >= 1.0) & (ev_sdc < SDC_FOUND)
    new = starts & ~act
    if new.any():
        st[SDC_M] = np.where(new, p_end, st[SDC_M])
        st[SDC_C] = np.where(new, bank, st[SDC_C])
        st[SDC_N] = np.where(new, st[ABANK], st[SDC_N])
        st[SDC_FLY] = np.where(new, NEVER if upp is None else upp, st[SDC_FLY])
        st[SDC_FATE] = np.where(new, (ev_sdc >= 1.5).astype(np.float64), st[SDC_FATE])
    st[SDC_ON] += starts
    found = ((ev_sdc == SDC_FOUND) & act).astype(np.float64) * rs
    to_pers = fast * found * (p_snap > st[SDC_M])  # (a snapshot taken since the corruption started is poisoned)
    lost = found * (pers + to_pers) * (st[SDC_N] >= st[RETAIN])
    return _Sdc(found, to_pers, lost, _sdc_target(st))


def _sdc_rollback(st: np.ndarray, sdc: _Sdc, ev_t: np.ndarray, p_end: np.ndarray, new_p: np.ndarray) -> None:
    """The window's work a found corruption rolls back, each piece counted at its first rollback: progress above
    the lowest since the window opened (computed in it) and, past the window, at most the lowest since it closed."""
    loss = np.minimum(p_end, st[MEND]) - np.maximum(new_p, st[M0])
    st[SDC_H] += np.where((sdc.found > 0.0) & (ev_t >= 0.0) & (loss > 0.0), loss, 0.0)


def _sdc_after(
    st: np.ndarray, sdc: _Sdc, rs: np.ndarray, pers: np.ndarray, drained: np.ndarray, new_p: np.ndarray
) -> None:
    """After the point: a found corruption is over (its restore from storage the newest clean checkpoint from here);
    a restart aborts the upload in flight and a drain drops it and saves (a poisoned save while one is under way);
    the mark follows the lowest progress while any is under way."""
    st[SDC_ON] -= sdc.found
    active = st[SDC_ON] > 0.0
    restored = (sdc.found * pers) > 0.0
    st[SDC_C] = np.where(restored, sdc.target, st[SDC_C])
    st[SDC_N] = np.where(restored, 0.0, st[SDC_N]) + (drained & active)
    st[ABANK] = np.where(restored | drained, 0.0, st[ABANK])
    st[SDC_FLY] = np.where((rs > 0.0) | drained | ~active, NEVER, st[SDC_FLY])
    st[SDC_M] = np.where(active, np.minimum(st[SDC_M], new_p), NO_MARK)
