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
  closed form. In time from the last persistent point, the snapshots complete at ``s, 2 s, ..., (k - 1) s``
  and the point at ``L = k s + c_p``, and so on every ``L``: a spacing that starts ``phi`` snapshots after a
  point and runs ``x`` hours after its downtime reaches ``z = phi s + x``; with ``Q = floor(z / L)`` and
  ``i = min(floor((z - Q L) / s), k - 1)`` it ends ``i`` snapshots after a point, having completed
  ``Q k + i - phi`` snapshots and ``Q`` points. Uploads start at its first point (``L - phi s`` after its
  downtime) and every ``q``-th after it (one at a time; ``q = ceil(u / L)``); the bank is the last of them
  to finish before the spacing ends;
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

from collections.abc import Callable

import numpy as np

from ..engine import Cancelled
from ..rows import stream
from .model import TierParams
from .outside import FAST, PERSISTENT, PLANNED

__all__ = ["simulate_stepped"]

STREAM_STEPPED = 28
#: A trial's start when there are no full renewals: this many fast-tier failures before the window.
BURN_IN_FAILURES = 60.0
#: Steps between two looks at ``should_stop`` and two progress reports.
_REPORT_EVERY = 64
_NONE = 3  # the trial's start after a burn-in: no downtime
#: Rows of the running trials' state (:func:`simulate_stepped`).
(_T, _KIND, _POS, _BANK, _PHI, _M0, _M_END, _COMPUTE, _CHECKPOINT, _CUT, _RECOVERY, _PLANNED) = range(12)
(_N_FAST, _N_PERSISTENT, _N_PLANNED, _PROMOTED) = range(12, 16)
_ROWS = 16


def _in_window(a: np.ndarray, b: np.ndarray, hours: float) -> np.ndarray:
    """Length of ``[a, b)`` inside ``[0, hours)``."""
    out: np.ndarray = np.maximum(np.minimum(b, hours) - np.maximum(a, 0.0), 0.0)
    return out


def _trivial(tp: TierParams, trials: int) -> tuple[np.ndarray, np.ndarray]:
    """No interruptions at all: the job runs through the window (compute and stalls in their long-run shares)."""
    cycle = tp.k * tp.s + tp.c_point
    compute = tp.hours * tp.k * tp.tau / cycle
    return np.full(trials, compute), np.full(trials, tp.hours - compute)


def simulate_stepped(
    tp: TierParams,
    trials: int,
    seed: int,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[np.ndarray, ...]:
    """Simulate ``trials`` windows of ``tp``: per trial, the hours ``useful, checkpoint, lost, recovery, planned``
    and the counts ``n_fast, n_persistent, n_planned, promoted`` (interruptions inside the window by the tier
    of their scope, planned ones, and fast-tier failures that restored from the persistent tier)."""
    window, k = tp.hours, tp.k
    tau, s, cp = tp.tau, tp.s, tp.c_point
    cycle = k * s + cp
    u, q = tp.upload, tp.skip
    lam_f, lam_p = tp.lam_fast, tp.lam_persistent
    big, nu = tp.big, tp.nu
    hours_out = [np.zeros(trials) for _ in range(5)]
    counts_out = [np.zeros(trials, dtype=np.int64) for _ in range(4)]
    if big == 0.0:
        hours_out[0], hours_out[1] = _trivial(tp, trials)
        return (*hours_out, *counts_out)
    down = np.array([tp.r_fast, tp.r_persistent, tp.r_planned, 0.0])
    rng = stream(seed, STREAM_STEPPED)

    def compute_to(z: np.ndarray) -> np.ndarray:
        """Compute time from a persistent point to ``z`` hours after it."""
        cycles = np.floor(z / cycle)
        rem = np.maximum(z - cycles * cycle, 0.0)
        i = np.minimum(np.floor(rem / s), k - 1)
        out: np.ndarray = (cycles * k + i) * tau + np.minimum(rem - i * s, tau)
        return out

    # The trials still running, compacted: where their results go (ids), and per trial one column of ``st``:
    # the state at the interruption that starts its current spacing (its time, its kind: the downtime under
    # way, the position, the bank, the phase), the running minima of the position after 0 and after T, and
    # its hours and counts so far (kept with the state, so a step writes no scattered results).
    ids = np.arange(trials)
    st = np.zeros((_ROWS, trials))
    st[_M0 : _M_END + 1] = np.inf
    if nu > 0.0:
        st[_T] = -rng.standard_exponential(trials) / nu
        st[_KIND] = np.where(rng.random(trials) < lam_p / nu, PERSISTENT, PLANNED)
        before_only_fast = True
    else:
        st[_T] = -BURN_IN_FAILURES / lam_f
        st[_KIND] = _NONE
        before_only_fast = False
    out = np.empty((_ROWS, trials))
    p_fast, p_unplanned = lam_f / big, (lam_f + lam_p) / big
    step = 0
    while ids.size:
        step += 1
        t, pos, bank, phi = st[_T], st[_POS], st[_BANK], st[_PHI]
        kind = st[_KIND].astype(np.intp)
        if step % _REPORT_EVERY == 0:
            if should_stop is not None and should_stop():
                raise Cancelled()
            if progress is not None:
                progress(float(np.clip(t / window, 0.0, 1.0).sum() + (trials - ids.size)) / trials)
        n = ids.size
        # The next interruption: before the window only fast-tier failures (rate lam_f), from 0 all of them.
        e = rng.standard_exponential(n)
        if before_only_fast:
            pre = t < 0.0
            with np.errstate(divide="ignore"):
                t_next = t + e / np.where(pre, lam_f, big)
            crossed = pre & (t_next >= 0.0)
            t_next[crossed] = rng.standard_exponential(int(crossed.sum())) / big
            pre_event = t_next < 0.0
            r = rng.random(n)
            r[pre_event] = 0.0  # fast
        else:
            t_next = t + e / big
            r = rng.random(n)
        ev = np.where(r < p_fast, FAST, np.where(r < p_unplanned, PERSISTENT, PLANNED))
        # The spacing [t, t_next): downtime, then x hours running from phase phi.
        g = t_next - t
        d = down.take(kind)
        start = t + d
        x = np.maximum(g - d, 0.0)
        offset = phi * s
        base = phi * tau
        z = offset + x
        cycles = np.floor(z / cycle)
        rem = np.maximum(z - cycles * cycle, 0.0)
        i = np.minimum(np.floor(rem / s), k - 1)
        last_fast = (cycles * k + i - phi) * tau  # (from pos)
        done_compute = np.minimum(rem - i * s, tau)
        done_compute += last_fast  # all of the spacing's compute
        tail = np.maximum(rem - i * s - tau, 0.0)  # a stall under way at its end
        last_fast += pos
        # In the window: running hours [y0, y1) of it, and the compute c0, c1 before them (most spacings lie
        # wholly inside: [0, x)).
        y0, y1, c0, c1 = np.zeros(n), x.copy(), np.zeros(n), done_compute.copy()
        edge = np.flatnonzero((start < 0.0) | (t_next > window))
        if edge.size:
            xe, se, oe, be = x.take(edge), start.take(edge), offset.take(edge), base.take(edge)
            y0e, y1e = np.clip(-se, 0.0, xe), np.clip(window - se, 0.0, xe)
            y0[edge], y1[edge] = y0e, y1e
            c0[edge] = compute_to(oe + y0e) - be
            c1[edge] = compute_to(oe + y1e) - be
        unplanned = ev != PLANNED
        cut = np.maximum(y1 - np.maximum(x - tail, y0), 0.0)
        cut *= unplanned
        compute = c1 - c0
        st[_COMPUTE] += compute
        st[_CHECKPOINT] += (y1 - y0) - compute - cut
        st[_CUT] += cut
        downtime = _in_window(t, t + np.minimum(d, g), window)
        st[_RECOVERY] += downtime * (kind <= PERSISTENT)
        st[_PLANNED] += downtime * (kind == PLANNED)
        at0 = np.flatnonzero((t <= 0.0) & (t_next > 0.0))
        st[_M0, at0] = pos.take(at0) + c0.take(at0)
        at_end = np.flatnonzero((t <= window) & (t_next > window))
        st[_M_END, at_end] = pos.take(at_end) + c1.take(at_end)
        # The bank: the last upload to finish in the spacing (uploads start at its first point, every q-th).
        after_first = x - (cycle - offset) - u
        j = np.floor(np.maximum(after_first, 0.0) / (q * cycle))
        j *= q
        j += 1.0
        bank = np.where(after_first >= 0.0, np.maximum(bank, pos + (j * k - phi) * tau), bank)
        # The interruption: which tier restores, and where the job resumes.
        promoted = (ev == FAST) & (g < d) & (kind == PERSISTENT)
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
        # Finished: past the window, and nothing can take the job below m(T) any more.
        floor = st[_BANK] if lam_p > 0.0 else new_pos
        finished = past & (floor >= st[_M_END])
        if finished.any():
            out[:, ids[finished]] = st[:, finished]
            keep = ~finished
            ids, st = ids.compress(keep), st[:, keep]
    m_end = out[_M_END]
    useful = m_end - np.minimum(out[_M0], m_end)
    hours_out = [useful, out[_CHECKPOINT], out[_COMPUTE] - useful + out[_CUT], out[_RECOVERY], out[_PLANNED]]
    counts_out = [out[r].astype(np.int64) for r in (_N_FAST, _N_PERSISTENT, _N_PLANNED, _PROMOTED)]
    return (*hours_out, *counts_out)
