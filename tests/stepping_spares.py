"""The job's hours over a block of the spares engine's points, stepped one point after another.

The engine (planner_gui/core/spares/engine.py) gets the hours of all points at once in closed form
(``_hours_closed``). This steps the same points the plain way, one lane and one point at a time, carrying
the job's state (downtime left and whether it is a planned one, position in the checkpoint cycle, compute
and writes not yet checkpointed), so the two can be compared on the same draws, to rounding.

Between two points the job, in this order: waits (while too few nodes are back to run), sits out the rest
of its downtime, then computes and writes checkpoints, cycle after cycle. At a point:

* a restart loses the work since the last completed checkpoint and starts a downtime of detect + restart
  (+ swap when the failure took nodes), from the start of a cycle; a swap still running (from an earlier
  failure) goes on: the downtime lasts at least until it ends;
* a planned interruption keeps everything (the job is drained) and starts the planned restart (planned
  hours), or waits for a swap still running (recovery hours after the restart's own);
* a continue stalls the job (its downtime becomes at least the stall), except during a planned restart,
  which it waits out with the job;
* a repair or a replica's return only changes the capacity (and whether the job is blocked).
"""

from __future__ import annotations

import math

import numpy as np

from planner_gui.core.spares.engine import _CONTINUE, _PAD, _PLANNED, _RESTART, HOURS_KEYS


def step_lane(p, start, times, types, caps, blocked, swapped, blocked0, cap0, phase0, tau):
    """Hours (by :data:`HOURS_KEYS`) of one lane stepped point by point at compute ``tau`` per checkpoint."""
    s = tau + p.c
    acc = dict.fromkeys(HOURS_KEYS, 0.0)
    t_prev, blk, cap, phase = start, bool(blocked0), float(cap0), float(phase0)
    down, planned_left, swap_left, pending_compute, pending_write = 0.0, 0.0, 0.0, 0.0, 0.0
    for t, ty, c_after, b_after, sw in zip(times, types, caps, blocked, swapped):
        if ty == _PAD:
            break
        dt = t - t_prev
        inside = 1.0 if (t_prev >= 0 and t <= p.hours) else 0.0
        if blk:
            acc["waiting_for_spares"] += inside * dt
            rest = 0.0
        else:
            d = min(dt, down)
            planned = min(d, planned_left)
            acc["planned_restart"] += inside * planned
            acc["recovery"] += inside * (d - planned)
            down -= d
            planned_left -= planned
            swap_left = max(0.0, swap_left - d)
            rest = dt - d
        # Cycles of compute then write, from the position ``phase``.
        x = phase + rest
        cycles = math.floor(x / s)
        end_phase = min(max(x - cycles * s, 0.0), s)
        compute = cycles * tau + min(end_phase, tau) - min(phase, tau)
        write = rest - compute
        acc["reduced_throughput"] += inside * (1.0 - cap) * compute
        if cycles >= 1:  # a checkpoint completed: everything before the current cycle is safe
            tail_compute = inside * cap * min(end_phase, tau)
            tail_write = inside * max(end_phase - tau, 0.0)
            acc["useful"] += pending_compute + inside * cap * compute - tail_compute
            acc["checkpoint"] += pending_write + inside * write - tail_write
            pending_compute, pending_write = tail_compute, tail_write
        else:
            pending_compute += inside * cap * compute
            pending_write += inside * write
        phase = end_phase
        if ty == _RESTART:
            acc["lost_work"] += pending_compute + pending_write
            pending_compute = pending_write = phase = 0.0
            if sw:
                swap_left = max(swap_left, p.r_unplanned + p.swap)
            down = max(p.r_unplanned, swap_left)
            planned_left = 0.0
        elif ty == _PLANNED:
            acc["useful"] += pending_compute
            acc["checkpoint"] += pending_write
            pending_compute = pending_write = phase = 0.0
            down = max(p.r_planned, swap_left)
            planned_left = p.r_planned
        elif ty == _CONTINUE and planned_left <= 0:
            down = max(down, p.stall)
        cap, blk = float(c_after), bool(b_after)
        t_prev = t
    # Work still pending after the stretch would complete its cycle: counted where it was heading.
    acc["useful"] += pending_compute
    acc["checkpoint"] += pending_write
    return acc


def step_stream(st, taus=None):
    """Per hours key, an ``(intervals, lanes)`` array for a block (an engine ``_Stream``), as the engine's
    ``_step`` gives it."""
    taus = [st.p.tau] if taus is None else list(taus)
    out = {k: np.zeros((len(taus), st.lanes)) for k in HOURS_KEYS}
    for i, tau in enumerate(taus):
        for lane in range(st.lanes):
            h = step_lane(
                st.p,
                st.start,
                st.times[lane],
                st.types[lane],
                st.cap[lane],
                st.blocked[lane],
                st.swapped[lane],
                st.blocked0[lane],
                st.cap0[lane],
                st.phase_u[lane] * (tau + st.p.c),
                tau,
            )
            for k in HOURS_KEYS:
                out[k][i, lane] = h[k]
    return out
