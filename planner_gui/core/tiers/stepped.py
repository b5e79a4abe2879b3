"""The two-tier model with a persistent stall beside the fast tier: one interruption at a time, all trials at once.

With the fast tier on, a persistent point (every ``k``-th snapshot of a cycle) may block the job for the
persistent tier's own stall ``c_p`` on top of the fast stall ``c_f``: its snapshot cycle is ``s + c_p``
long, the others ``s = tau + c_f``. The snapshots are then no longer evenly spaced in time, and how many a
spacing completes depends on where in the persistent cadence it starts, which carries over every fast
restore. :mod:`.engine` counts completed snapshots as ``floor(x)`` of even cycles and fills a whole window
with whole-array passes; that shortcut does not hold here, so this engine steps:

* every trial starts at its last full renewal before the window, ``A ~ Exp(nu)`` hours earlier (only
  fast-tier failures happen in between), or, when there are no full renewals (``nu = 0``), after a burn-in
  of many fast-tier failures from a fresh start;
* each step moves every trial that is not finished over one spacing, from an interruption to the next, in
  closed form. A spacing that starts ``phi`` snapshots after a persistent point and runs ``x`` hours after its
  downtime reaches the next point after ``(k - phi) s + c_p`` (``w = x - that`` is the time past it); before
  it, it completes ``min(floor(x / s), k - 1 - phi)`` snapshots; past it, ``W = floor(w / L)`` more points
  (``L = k s + c_p``) and ``i = min(floor((w - W L) / s), k - 1)`` snapshots after the last, its phase at
  the end. (Counted from the spacing's own start, so a spacing that never runs keeps its phase exactly.)
  Uploads start at its first point and every ``q``-th after it (one at a time; ``q = ceil(u / L)``); the bank
  is the last of them to finish before the spacing ends;
* the next interruption rolls the job back (fast: to its last fast snapshot, keeping the phase; persistent,
  or a fast-tier failure during a persistent restore: to the bank, phase 0; planned: nothing lost, the bank
  moves to the position, phase 0);
* hours are labelled by time inside the window ``[0, T)``: downtimes, compute and stalls (a stall cut by a
  failure is lost work; by a planned interruption, checkpoint). Which compute is useful follows from the
  position ``P(t)`` alone: the compute of ``[0, T)`` never rolled back is ``m(T) - m(0)``, with
  ``m(t) = min(P(u), u >= t)`` (a level of progress between the two was reached for the last time inside the
  window). A trial is finished once it has passed ``T`` and nothing can take the job below ``m(T)`` any more:
  the bank has reached it (or, with no persistent restores, its last fast snapshot has).

A step is a few dozen numpy operations over the trials still running, so a run costs about as many steps as
a trial has interruptions (a few thousand at 100,000 GPUs over 54 days): slower than :mod:`.engine`, which
:func:`.engine.simulate_tier_params` uses whenever ``c_p = 0``. ``tests/test_tiers.py`` checks this engine
against the event-by-event reference simulator, and against :mod:`.engine` where both apply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..engine import Cancelled
from ..rows import stream
from .model import TierHours, TierParams
from .outside import FAST, PERSISTENT, PLANNED

__all__ = ["simulate_stepped", "simulate_stepped_many"]

STREAM_STEPPED = 28
#: A trial's start when there are no full renewals: this many fast-tier failures before the window.
BURN_IN_FAILURES = 60.0
#: Steps between two looks at ``should_stop`` and two progress reports.
_REPORT_EVERY = 64
_NONE = 3  # the trial's start after a burn-in: no downtime

#: Rows of the running trials' array (one column per trial, :func:`simulate_stepped_many`): the state at the
#: interruption that starts the current spacing (its time, its kind: the downtime under way, the position, the
#: bank, the phase), the running minima of the position after 0 and after T, the hours and counts so far ...
(_T, _KIND, _POS, _BANK, _PHI, _M0, _M_END, _COMPUTE, _CHECKPOINT, _CUT, _RECOVERY, _PLANNED) = range(12)
(_N_FAST, _N_PERSISTENT, _N_PLANNED, _PROMOTED) = range(12, 16)
#: ... and the trial's model (a sweep's points run together, each trial with its own): times in hours.
(_TAU, _S, _CYCLE, _K, _Q, _U, _LAM_F, _BIG, _P_FAST, _P_UNPLANNED) = range(16, 26)
(_D_FAST, _D_PERSISTENT, _D_PLANNED, _WINDOW, _BANK_FLOOR, _PRE, _GROUP) = range(26, 33)
_ROWS = 33


def _trivial(tp: TierParams, trials: int) -> TierHours:
    """No interruptions at all: the job runs through the window (compute and stalls in their long-run shares)."""
    out = TierHours.zeros(trials)
    out.useful[:] = tp.hours * tp.k * tp.tau / tp.persistent_cycle
    out.checkpoint[:] = tp.hours - out.useful
    return out


def simulate_stepped(
    tp: TierParams,
    trials: int,
    seed: int,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TierHours:
    """Simulate ``trials`` windows of ``tp``: per trial, the hours and the interruptions inside the window (by
    the tier of their scope, planned ones, and fast-tier failures that restored from the persistent tier)."""
    return simulate_stepped_many([(tp, trials, seed)], progress=progress, should_stop=should_stop)[0]


def _columns(tp: TierParams, trials: int, group: int, rng: np.random.Generator) -> np.ndarray:
    """The running-trials array's columns of one model: its trials at their starts."""
    st = np.zeros((_ROWS, trials))
    st[_M0 : _M_END + 1] = np.inf
    lam_f, nu, big = tp.lam_fast, tp.nu, tp.big
    if nu > 0.0:  # the last full renewal before the window, and its kind
        st[_T] = -rng.standard_exponential(trials) / nu
        st[_KIND] = np.where(rng.random(trials) < tp.lam_persistent / nu, PERSISTENT, PLANNED)
    else:
        st[_T] = -BURN_IN_FAILURES / lam_f
        st[_KIND] = _NONE
    model = {
        _TAU: tp.tau,
        _S: tp.s,
        _CYCLE: tp.persistent_cycle,
        _K: tp.k,
        _Q: tp.skip,
        _U: tp.upload,
        _LAM_F: lam_f,
        _BIG: big,
        _P_FAST: lam_f / big,
        _P_UNPLANNED: (lam_f + tp.lam_persistent) / big,
        _D_FAST: tp.r_fast,
        _D_PERSISTENT: tp.r_persistent,
        _D_PLANNED: tp.r_planned,
        _WINDOW: tp.hours,
        _BANK_FLOOR: tp.lam_persistent > 0.0,
        _PRE: nu > 0.0,
        _GROUP: group,
    }
    for row, value in model.items():
        st[row] = value
    return st


def _advance(
    phi: np.ndarray, y: np.ndarray, s: np.ndarray, cycle: np.ndarray, k: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Running ``y`` hours from ``phi`` snapshots after a persistent point: the snapshots completed ``m``, the
    phase at the end ``i``, the time since the last of them ``rem`` and ``w``, the time past the first point
    (negative if it was not reached). Counted from the spacing's own start, never from a point before it, so a
    spacing that does not run (``y = 0``) keeps its phase exactly."""
    w = y - (cycle - phi * s)  # the first point completes (k - phi) snapshot cycles and the point's stall on
    before = np.minimum(np.floor(y / s), k - 1 - phi)  # snapshots completed before reaching it
    past = np.maximum(w, 0.0)
    whole = np.floor(past / cycle)  # persistent cycles after the first point
    r = np.maximum(past - whole * cycle, 0.0)
    after = np.minimum(np.floor(r / s), k - 1)
    reached = w >= 0.0
    m = np.where(reached, (k - phi) + whole * k + after, before)
    i = np.where(reached, after, phi + before)
    rem = np.where(reached, r - after * s, y - before * s)
    return m, i, rem, w


def _compute_in(
    phi: np.ndarray, y: np.ndarray, tau: np.ndarray, s: np.ndarray, cycle: np.ndarray, k: np.ndarray
) -> np.ndarray:
    """Compute time in the first ``y`` hours of running from phase ``phi``: each snapshot's, and then the
    compute of the one under way (its stall follows it)."""
    m, _, rem, _ = _advance(phi, y, s, cycle, k)
    out: np.ndarray = m * tau + np.minimum(rem, tau)
    return out


def simulate_stepped_many(
    runs: Sequence[tuple[TierParams, int, int]],
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[TierHours]:
    """:func:`simulate_stepped` of each ``(model, trials, seed)``, all stepped together (a sweep's points cost
    about as many steps as its longest). Each run draws from its own seed's stream, so its result is the one it
    gives alone, and runs of one seed share their draws (common random numbers across a sweep)."""
    results: list[TierHours | None] = [None] * len(runs)
    rngs, parts = [], []
    for g, (tp, trials, seed) in enumerate(runs):
        rng = stream(seed, STREAM_STEPPED)
        rngs.append(rng)
        if tp.big == 0.0:
            results[g] = _trivial(tp, trials)
        else:
            parts.append(_columns(tp, trials, g, rng))
    total = sum(t for _, t, _ in runs) or 1
    st = np.concatenate(parts, axis=1) if parts else np.zeros((_ROWS, 0))
    ids = np.arange(st.shape[1])  # where each column's results go
    out = np.empty_like(st)
    step = 0
    while ids.size:
        step += 1
        t, pos, bank, phi = st[_T], st[_POS], st[_BANK], st[_PHI]
        tau, s, cycle, k, window = st[_TAU], st[_S], st[_CYCLE], st[_K], st[_WINDOW]
        kind = st[_KIND].astype(np.intp)
        if step % _REPORT_EVERY == 0:
            if should_stop is not None and should_stop():
                raise Cancelled()
            if progress is not None:
                done = np.clip(t / window, 0.0, 1.0).sum() + (total - ids.size)
                progress(float(done) / total)
        n = ids.size
        # The draws of each run still running, from its own stream (its columns are contiguous).
        group = st[_GROUP].astype(np.intp)
        sizes = np.bincount(group, minlength=len(runs))
        e2, r = np.empty((2, n)), np.empty(n)
        at = 0
        for run in np.flatnonzero(sizes).tolist():
            size = int(sizes[run])
            e2[:, at : at + size] = rngs[run].standard_exponential((2, size))
            r[at : at + size] = rngs[run].random(size)
            at += size
        # The next interruption: before the window only fast-tier failures (rate lam_f), from 0 all of them.
        big = st[_BIG]
        pre = (t < 0.0) & (st[_PRE] > 0.0)
        with np.errstate(divide="ignore"):
            t_next = t + e2[0] / np.where(pre, st[_LAM_F], big)
        crossed = pre & (t_next >= 0.0)
        t_next = np.where(crossed, e2[1] / big, t_next)
        r[pre & ~crossed] = 0.0  # (a fast-tier failure)
        ev = np.where(r < st[_P_FAST], FAST, np.where(r < st[_P_UNPLANNED], PERSISTENT, PLANNED))
        # The spacing [t, t_next): downtime, then x hours running from phase phi.
        g_len = t_next - t
        d = np.choose(np.minimum(kind, 3), (st[_D_FAST], st[_D_PERSISTENT], st[_D_PLANNED], np.zeros(n)))
        start = t + d
        x = np.maximum(g_len - d, 0.0)
        m, i, rem, w = _advance(phi, x, s, cycle, k)
        last_fast = m * tau  # (from pos)
        done_compute = np.minimum(rem, tau)
        done_compute += last_fast  # all of the spacing's compute
        tail = np.maximum(rem - tau, 0.0)  # a stall under way at its end
        last_fast += pos
        # In the window: running hours [y0, y1) of it, and the compute c0, c1 before them (most spacings lie
        # wholly inside: [0, x)).
        y0, y1, c0, c1 = np.zeros(n), x.copy(), np.zeros(n), done_compute.copy()
        edge = np.flatnonzero((start < 0.0) | (t_next > window))
        if edge.size:
            xe, se, we, pe = x.take(edge), start.take(edge), window.take(edge), phi.take(edge)
            y0e, y1e = np.clip(-se, 0.0, xe), np.clip(we - se, 0.0, xe)
            y0[edge], y1[edge] = y0e, y1e
            model = (tau.take(edge), s.take(edge), cycle.take(edge), k.take(edge))
            c0[edge] = _compute_in(pe, y0e, *model)
            c1[edge] = _compute_in(pe, y1e, *model)
        unplanned = ev != PLANNED
        cut = np.maximum(y1 - np.maximum(x - tail, y0), 0.0)
        cut *= unplanned
        compute = c1 - c0
        st[_COMPUTE] += compute
        st[_CHECKPOINT] += (y1 - y0) - compute - cut
        st[_CUT] += cut
        downtime = np.maximum(np.minimum(t + np.minimum(d, g_len), window) - np.maximum(t, 0.0), 0.0)
        st[_RECOVERY] += downtime * (kind <= PERSISTENT)
        st[_PLANNED] += downtime * (kind == PLANNED)
        at0 = np.flatnonzero((t <= 0.0) & (t_next > 0.0))
        st[_M0, at0] = pos.take(at0) + c0.take(at0)
        at_end = np.flatnonzero((t <= window) & (t_next > window))
        st[_M_END, at_end] = pos.take(at_end) + c1.take(at_end)
        # The bank: the last upload to finish in the spacing (uploads start at its first point, every q-th).
        after_first = w - st[_U]
        q = st[_Q]
        j = np.floor(np.maximum(after_first, 0.0) / (q * cycle))
        j *= q
        j += 1.0
        bank = np.where(after_first >= 0.0, np.maximum(bank, pos + (j * k - phi) * tau), bank)
        # The interruption: which tier restores, and where the job resumes.
        promoted = (ev == FAST) & (g_len < d) & (kind == PERSISTENT)
        tier = np.where(promoted, PERSISTENT, ev)
        drained = pos + done_compute
        new_pos = np.where(tier == FAST, last_fast, np.where(tier == PERSISTENT, bank, drained))
        st[_BANK] = np.where(tier == PLANNED, drained, bank)
        st[_PHI] = np.where(tier == FAST, i, 0.0)
        st[_POS] = new_pos
        st[_T] = t_next
        st[_KIND] = tier
        inside = (t_next >= 0.0) & (t_next < window)
        st[_N_FAST] += (ev == FAST) & inside
        st[_N_PERSISTENT] += (ev == PERSISTENT) & inside
        st[_N_PLANNED] += (ev == PLANNED) & inside
        st[_PROMOTED] += promoted & inside
        np.minimum(st[_M0], np.where(inside, new_pos, np.inf), out=st[_M0])
        past = t_next >= window
        np.minimum(st[_M_END], np.where(past, new_pos, np.inf), out=st[_M_END])
        # Finished: past the window, and nothing can take the job below m(T) any more (the bank, or without
        # restores from storage the last fast snapshot, has reached it).
        floor = np.where(st[_BANK_FLOOR] > 0.0, st[_BANK], new_pos)
        finished = past & (floor >= st[_M_END])
        if finished.any():
            out[:, ids[finished]] = st[:, finished]
            keep = ~finished
            ids, st = ids.compress(keep), st[:, keep]
    column = 0
    for g, (_, trials, _) in enumerate(runs):
        if results[g] is not None:
            continue
        o = out[:, column : column + trials]
        column += trials
        m_end = o[_M_END]
        useful = m_end - np.minimum(o[_M0], m_end)
        counts = (o[r].astype(np.int64) for r in (_N_FAST, _N_PERSISTENT, _N_PLANNED, _PROMOTED))
        lost = o[_COMPUTE] - useful + o[_CUT]
        results[g] = TierHours(useful, o[_CHECKPOINT], lost, o[_RECOVERY], o[_PLANNED], *counts)
    return [r for r in results if r is not None]
