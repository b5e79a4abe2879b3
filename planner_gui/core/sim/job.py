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

import numpy as np

from .model import CONTINUE, RESTART_FAST, RESTART_PERSISTENT, SimModel
from .world import CHANGE, PAD, PLANNED

__all__ = ["ROWS", "advance", "compute_at", "initial_state", "step"]

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
(TAU, C, S, K, CP, L, U, Q, DR, RP, RF, RPERS, SWAPLEN, STALL, WINDOW, WORK, FLOOR) = range(30, 47)
ROWS = 47

#: What can roll a job back (the floor below which m(T) can no longer fall): the bank, the last snapshot, or
#: nothing (every failure continues).
FLOOR_BANK, FLOOR_SNAP, FLOOR_NONE = 2.0, 1.0, 0.0


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
    if m.restarts_persistent:
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
    }


def initial_state(
    m: SimModel, trials: int, start: float, rng: np.random.Generator, *, steady: bool, work: float | None,
    theta: np.ndarray, blocked: np.ndarray,
) -> np.ndarray:
    """The columns of one model's trials at ``start``: fresh (progress 0 at a persistent point, running), or with
    ``steady`` in the steady state of the cycle without failures (a uniform place in the cycle of ``q``
    persistent points, with the upload and the bank it implies)."""
    st = np.zeros((ROWS, trials))
    for row, value in model_rows(m, work).items():
        st[row] = value
    st[T] = start
    st[G] = start
    st[DOWN] = -np.inf
    st[PLAN_END] = -np.inf
    st[SWAP] = -np.inf
    st[UPEND] = -np.inf
    st[M0] = np.inf
    st[MEND] = np.inf
    st[DONE] = np.nan
    st[THETA] = theta
    st[BLOCKED] = blocked
    q, L_, s, k = m.points_per_upload, m.cycle, m.s, m.k
    base = (q * k * m.tau + m.tau) if steady else 0.0  # so that every checkpoint of a steady start is >= 0
    st[P] = base
    st[PSNAP] = base
    st[PBANK] = base
    if not steady:
        return st
    phase = rng.random(trials) * q * L_  # running time since the last upload started
    j = np.floor(phase / L_)  # persistent points passed since then
    rho = phase - j * L_
    phi = np.minimum(np.floor(rho / s), k - 1)
    e = rho - phi * s
    st[PHI], st[E] = phi, e
    since_snap = np.minimum(e, m.tau)
    since_start = j * k * m.tau + phi * m.tau + since_snap  # compute since the upload's point
    st[PSNAP] = base - since_snap
    in_flight = phase < m.upload
    st[UPEND] = np.where(in_flight, start + (m.upload - phase), -np.inf)
    st[UPP] = np.where(in_flight, base - since_start, 0.0)
    st[PBANK] = np.where(in_flight, base - since_start - q * k * m.tau, base - since_start)
    return st


def step(
    st: np.ndarray,
    ev_t: np.ndarray,
    ev_kind: np.ndarray,
    ev_took: np.ndarray,
    ev_cap: np.ndarray,
    ev_blk: np.ndarray,
    *,
    window: bool,
    uploads: bool,
    waits: bool,
) -> np.ndarray:
    """Move every column of ``st`` to its next point (``ev_*``, one per column; PAD: no point, the column waits)
    and apply it. Returns which columns are finished (past the window with nothing left to roll them below
    m(T), or, for a time to train, done)."""
    live = ev_kind != PAD
    t, g = st[T], st[G]
    ev_t = np.where(live, ev_t, t)
    dt = ev_t - t
    blocked = st[BLOCKED] > 0
    dg = np.where(blocked, 0.0, dt) if waits else dt
    down_end = st[DOWN]
    down = np.clip(down_end - g, 0.0, dg)
    x = dg - down
    g_new = g + dg
    t_run = t + down
    tau, s, cyc, k, cp = st[TAU], st[S], st[L], st[K], st[CP]
    phi, e = st[PHI], st[E]
    theta = st[THETA]
    p0 = st[P]
    e_tau = np.minimum(e, tau)
    m, i, rem, w = advance(phi, e + x, s, cyc, k)
    comp = m * tau + np.minimum(rem, tau) - e_tau
    done_some = m >= 1.0
    # The stall under way at the spacing's end, the part of it in this spacing.
    tail = np.maximum(rem - tau, 0.0) - np.where(done_some, 0.0, np.maximum(e - tau, 0.0))
    p_end = p0 + theta * comp
    p_snap = np.where(done_some, p0 + theta * (m * tau - e_tau), st[PSNAP])
    # Persistent points reached and the bank.
    n_pts = np.where(w >= 0.0, 1.0 + np.floor(np.maximum(w, 0.0) / cyc), 0.0)
    first_pt = t_run + ((k - phi) * s + cp - e)  # wall time of the first point
    p_first = p0 + theta * ((k - phi) * tau - e_tau)  # progress at it (point j: + j k tau theta)
    step_p = theta * k * tau
    bank, upend, upp = st[PBANK], st[UPEND], st[UPP]
    if uploads:
        u, q = st[U], st[Q]
        old_done = (upend > -np.inf) & (upend <= ev_t)  # the upload in flight at the start finishes
        bank = np.where(old_done, np.maximum(bank, upp), bank)
        with np.errstate(invalid="ignore"):
            j0 = np.where(upend > first_pt, np.ceil((upend - first_pt) / cyc * (1.0 - 1e-12)), 0.0)
        j0 = np.maximum(j0, 0.0)
        starts = n_pts - 1.0 - j0
        any_start = starts >= 0.0
        j_last = j0 + q * np.floor(np.maximum(starts, 0.0) / q)
        end_last = first_pt + j_last * cyc + u
        p_last = p_first + j_last * step_p
        finished = any_start & (end_last <= ev_t)
        bank = np.where(finished, np.maximum(bank, p_last), bank)
        flying = any_start & ~finished
        prev_ok = flying & (j_last - q >= j0)
        bank = np.where(prev_ok, np.maximum(bank, p_last - q * step_p), bank)
        upend = np.where(flying, end_last, np.where(old_done, -np.inf, upend))
        upp = np.where(flying, p_last, upp)
    else:
        bank = np.where(n_pts >= 1.0, p_first + (n_pts - 1.0) * step_p, bank)
    kind = ev_kind
    restart = (kind == RESTART_FAST) | (kind == RESTART_PERSISTENT)
    planned = kind == PLANNED
    cont = kind == CONTINUE
    if window:
        _label(st, t, ev_t, t_run, down, x, dt, blocked, phi, e, tau, s, cyc, k, comp, tail, p0, theta, restart,
               planned, done_some, live)
    else:
        _train(st, t_run, x, phi, e, e_tau, tau, s, cp, k, p0, theta, comp, live)
    # The point itself.
    pend = np.where(down_end > g_new, st[PEND], 0.0)
    in_restart = pend > 0.0
    tier = np.where(in_restart, np.maximum(pend, kind), kind)  # RESTART_PERSISTENT is the worse
    fast = restart & (tier == RESTART_FAST)
    pers = restart & (tier == RESTART_PERSISTENT)
    promoted = restart & in_restart & (kind == RESTART_FAST) & (pend == RESTART_PERSISTENT)
    phi_snap = np.where(done_some, i, phi)
    swap = st[SWAP]
    dr = st[DR]
    took = ev_took & restart & (st[SWAPLEN] > 0.0)
    base_down = np.maximum(g_new + dr + np.where(took, st[SWAPLEN], 0.0), swap)
    restore = np.where(tier == RESTART_FAST, st[RF], st[RPERS])
    intact = ~in_restart
    drain = planned & intact
    rp = st[RP]
    new_p = np.where(fast, p_snap, np.where(pers, bank, p_end))
    new_phi = np.where(fast, phi_snap, np.where(pers | drain, 0.0, i))
    new_e = np.where(restart | drain, 0.0, rem)
    st[P] = new_p
    st[PHI] = new_phi
    st[E] = new_e
    st[PSNAP] = np.where(drain, p_end, np.where(pers, bank, p_snap))  # a restored bank is the cycle's first snapshot
    st[PBANK] = np.where(drain, p_end, bank)
    st[UPEND] = np.where(restart | drain, -np.inf, upend)
    st[UPP] = np.where(restart | drain, -np.inf, upp)
    plan_down = np.maximum(g_new + rp, swap) + np.where(in_restart, np.where(pend == RESTART_FAST, st[RF], st[RPERS]), 0.0)
    cont_down = np.maximum(down_end, g_new + st[STALL])
    st[DOWN] = np.where(restart, base_down + restore, np.where(planned, plan_down, np.where(cont, cont_down, down_end)))
    st[PLAN_END] = np.where(planned, g_new + rp, np.where(restart, -np.inf, st[PLAN_END]))
    st[PEND] = np.where(restart, tier, pend)
    st[SWAP] = np.where(took, np.maximum(swap, g_new + dr + st[SWAPLEN]), swap)
    st[T] = ev_t
    st[G] = g_new
    st[THETA] = np.where(live, ev_cap, theta)
    st[BLOCKED] = np.where(live, ev_blk, st[BLOCKED])
    if window:
        window_t = st[WINDOW]
        inside = live & (ev_t >= 0.0) & (ev_t < window_t)
        st[N_FAST] += fast & inside
        st[N_PERSISTENT] += pers & inside
        st[N_PROMOTED] += promoted & inside
        st[N_CONTINUED] += cont & inside
        np.minimum(st[M0], np.where(inside, new_p, np.inf), out=st[M0])
        past = live & (ev_t >= window_t)
        np.minimum(st[MEND], np.where(past, new_p, np.inf), out=st[MEND])
        fl = st[FLOOR]
        floor = np.where(fl == FLOOR_BANK, st[PBANK], np.where(fl == FLOOR_SNAP, st[PSNAP], new_p))
        out: np.ndarray = past & (floor >= st[MEND]) & (st[OPEN] <= 0.0)
        return out
    done: np.ndarray = ~np.isnan(st[DONE])
    return done


def _label(
    st: np.ndarray,
    t: np.ndarray,
    ev_t: np.ndarray,
    t_run: np.ndarray,
    down: np.ndarray,
    x: np.ndarray,
    dt: np.ndarray,
    blocked: np.ndarray,
    phi: np.ndarray,
    e: np.ndarray,
    tau: np.ndarray,
    s: np.ndarray,
    cyc: np.ndarray,
    k: np.ndarray,
    comp: np.ndarray,
    tail: np.ndarray,
    p0: np.ndarray,
    theta: np.ndarray,
    restart: np.ndarray,
    planned: np.ndarray,
    done_some: np.ndarray,
    live: np.ndarray,
) -> None:
    """Label the spacing's hours inside the window ``[0, T)`` (docs/model.md 2.6)."""
    window = st[WINDOW]
    # Running hours [y0, y1) of the spacing inside the window, and the compute before them: most spacings lie
    # wholly inside ([0, x)), the few that cross an edge get the closed form at each edge.
    y0 = np.zeros_like(x)
    y1 = x.copy()
    c0 = np.zeros_like(x)
    c1 = comp.copy()
    edge = np.flatnonzero(live & ((t <= 0.0) | (ev_t > window)))
    if edge.size:
        xe, tr, we = x[edge], t_run[edge], window[edge]
        y0e, y1e = np.clip(-tr, 0.0, xe), np.clip(we - tr, 0.0, xe)
        y0[edge], y1[edge] = y0e, y1e
        pe, ee = phi[edge], e[edge]
        args = (tau[edge], s[edge], cyc[edge], k[edge])
        base = np.minimum(ee, tau[edge])
        c0[edge] = compute_at(pe, ee + y0e, *args) - base
        c1[edge] = compute_at(pe, ee + y1e, *args) - base
        # m(0) and m(T): progress at the window's start and end, in the spacing that holds them.
        at0 = (t[edge] <= 0.0) & (ev_t[edge] > 0.0)
        if at0.any():
            cols = edge[at0]
            st[M0, cols] = p0[cols] + theta[cols] * c0[edge][at0]
        at_end = (t[edge] <= we) & (ev_t[edge] > we)
        if at_end.any():
            cols = edge[at_end]
            st[MEND, cols] = p0[cols] + theta[cols] * c1[edge][at_end]
    comp_w = c1 - c0
    run_w = y1 - y0
    st[GAIN] += theta * comp_w
    st[REDUCED] += (1.0 - theta) * comp_w
    stall_w = run_w - comp_w
    tail_w = np.maximum(np.minimum(x, y1) - np.maximum(x - tail, y0), 0.0)
    opened = st[OPEN]
    kept = np.where(done_some, opened, 0.0)
    opened = opened - kept
    ended = restart | planned
    st[CKPT] += kept + (stall_w - tail_w) + np.where(planned, opened + tail_w, 0.0)
    st[CUT] += np.where(restart, opened + tail_w, 0.0)
    st[OPEN] = np.where(ended, 0.0, opened + tail_w)
    # Downtime [t, t + down) and waiting, inside the window; the planned restart's part first.
    lo = np.maximum(t, 0.0)
    plan = np.clip(st[PLAN_END] - st[G], 0.0, down)
    d_in = np.maximum(np.minimum(t + down, window) - lo, 0.0)
    p_in = np.maximum(np.minimum(t + plan, window) - lo, 0.0)
    st[PLANNED_H] += p_in
    st[RECOVERY] += d_in - p_in
    st[WAIT] += np.where(blocked, np.maximum(np.minimum(t + dt, window) - lo, 0.0), 0.0)


def _train(
    st: np.ndarray,
    t_run: np.ndarray,
    x: np.ndarray,
    phi: np.ndarray,
    e: np.ndarray,
    e_tau: np.ndarray,
    tau: np.ndarray,
    s: np.ndarray,
    cp: np.ndarray,
    k: np.ndarray,
    p0: np.ndarray,
    theta: np.ndarray,
    comp: np.ndarray,
    live: np.ndarray,
) -> None:
    """A time to train ends the first moment progress reaches the work (docs/model.md 2.7)."""
    need = st[WORK] - p0
    reach = live & (theta > 0.0) & (theta * comp >= need) & np.isnan(st[DONE])
    if not reach.any():
        return
    cols = np.flatnonzero(reach)
    c_star = need[cols] / theta[cols] + e_tau[cols]
    tc = tau[cols]
    n = np.maximum(np.ceil(c_star / tc) - 1.0, 0.0)
    r = c_star - n * tc
    y_star = n * s[cols] + cp[cols] * np.floor((phi[cols] + n) / k[cols]) + r
    st[DONE, cols] = t_run[cols] + (y_star - e[cols])

