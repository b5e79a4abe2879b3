"""A slow, readable, event-by-event simulator of the spares model alone: the reference the general engine
(``planner_gui/core/sim/``) is checked against on spares scenarios in ``tests/test_spares.py`` (beside
``tests/reference_model.py``, the whole model's reference).

It is written from the model's words (docs/spares.md), one trial at a time, with a heap of the pool's
repairs and a clock that walks the job through waiting, downtime, compute and checkpoint writes:

* Each failure class fails as a Poisson process; a failure takes ``nodes`` nodes into repair (0 for
  process scope) for a repair time of mean ``repair`` (exponential, or lognormal with ``sigma``).
  Planned interruptions are a Poisson process of their own.
* The job needs ``job_nodes`` nodes and owns ``spares`` more. While more nodes are in repair than there
  are spares, in ``restart`` mode the job is blocked (every clock stops; the time is waiting for spares),
  unless it may shrink (``min_nodes``): then it runs on what it has, at that share of its throughput,
  and is blocked only below ``min_nodes``.
* A restart failure loses the compute since the last completed checkpoint (and a write in progress) and
  costs detect + restart, plus the swap when it took nodes; a planned interruption drains the job (no
  loss) and costs the restart. Any interruption during a downtime starts a new one, but a node's swap
  still running goes on: the downtime lasts at least until the replacement node is in (after a planned
  interruption, the restart's own time is planned, the rest of the wait for the swap recovery).
* ``continue`` mode: a failure of a continue class stalls the job for ``stall`` (nothing lost) and takes
  its replicas out (each ``share`` of the throughput) until ``stall + restart + swap`` later, or, if the
  pool could not give all its nodes, until ``restart + swap`` after it has them all: repaired nodes go
  to the replicas waiting longest (first come, first served); restart failures that find no spare keep
  their replicas out likewise.
* The window is ``[0, T)``. The reference starts ``warm`` hours earlier with an empty pool and a fresh job
  (no stationary start: a long warm-up instead) and runs on after ``T`` until the work done in the window
  has been committed or lost.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

HOURS = (
    "useful",
    "checkpoint",
    "lost_work",
    "recovery",
    "planned_restart",
    "waiting_for_spares",
    "reduced_throughput",
)


@dataclass(frozen=True)
class Model:
    rates: tuple[float, ...]  # per hour, whole job, per class
    nodes: tuple[int, ...]
    repair: tuple[float, ...]
    cont: tuple[bool, ...]
    replicas: tuple[int, ...]
    mu: float
    hours: float
    tau: float
    c: float
    r_unplanned: float
    r_planned: float
    swap: float
    job_nodes: int
    spares: float
    min_nodes: int | None
    sigma: float | None
    mode: str
    share: float
    stall: float
    restart: float


@dataclass
class Trial:
    hours: dict[str, float]
    node_failures: int
    no_spare: int
    node_hours_in_repair: float


def simulate_trial(m: Model, rng: np.random.Generator, warm: float) -> Trial:
    T = m.hours
    lam = sum(m.rates)
    # Events: failures and planned interruptions, drawn one after the other.
    events: list[tuple[float, str, int]] = []
    t = -warm
    end = T + 2 * (m.tau + m.c) + m.r_unplanned + m.swap + m.stall + m.restart + 48.0
    while lam > 0:
        t += rng.exponential(1.0 / lam)
        if t >= end:
            break
        j = int(rng.choice(len(m.rates), p=np.array(m.rates) / lam))
        events.append((t, "fail", j))
    t = -warm
    while m.mu > 0:
        t += rng.exponential(1.0 / m.mu)
        if t >= end:
            break
        events.append((t, "planned", -1))
    events += [(0.0, "mark", -1), (T, "mark", -1)]
    events.sort(key=lambda e: e[0])

    acc = dict.fromkeys(HOURS, 0.0)
    pool: list[tuple[float, int]] = []  # (repair done, nodes)
    away = 0
    replicas_back: list[tuple[float, int]] = []  # (return time, replicas)
    waiting: list[list[int]] = []  # [replicas, nodes still lacking], first come first served
    out = 0
    # Job state.
    down, planned_left, swap_left = 0.0, 0.0, 0.0
    phase = 0.0  # time into the current cycle (compute, then write)
    unck = 0.0  # work since the last completed checkpoint (in full-job hours)
    wpend = 0.0  # write time of the current cycle so far
    now = -warm
    node_failures = no_spare = 0
    repair_node_hours = 0.0

    def blocked() -> bool:
        if m.mode == "continue":
            return False
        deficit = max(0.0, away - m.spares)
        if m.min_nodes is None:
            return deficit > 0
        return m.job_nodes - deficit < m.min_nodes

    def capacity() -> float:
        if m.mode == "continue":
            return min(1.0, max(0.0, 1.0 - out * m.share))
        deficit = max(0.0, away - m.spares)
        return (m.job_nodes - deficit) / m.job_nodes

    def advance(until: float) -> None:
        nonlocal now, down, planned_left, swap_left, phase, unck, wpend, repair_node_hours
        inside = 1.0 if (now >= 0 and until <= T) else 0.0
        repair_node_hours += inside * away * (until - now)
        left = until - now
        if blocked():
            acc["waiting_for_spares"] += inside * left
            now = until
            return
        cap = capacity()
        while left > 1e-15:
            if down > 0:
                d = min(down, left)
                planned = min(d, planned_left)
                acc["planned_restart"] += inside * planned
                acc["recovery"] += inside * (d - planned)
                down -= d
                planned_left -= planned
                swap_left = max(0.0, swap_left - d)
                left -= d
            elif phase < m.tau:
                d = min(m.tau - phase, left)
                unck += inside * cap * d
                acc["reduced_throughput"] += inside * (1 - cap) * d
                phase += d
                left -= d
            else:
                d = min(m.tau + m.c - phase, left)
                wpend += inside * d
                phase += d
                left -= d
                if phase >= m.tau + m.c - 1e-12:
                    acc["useful"] += unck
                    acc["checkpoint"] += wpend
                    unck = wpend = 0.0
                    phase = 0.0
        now = until

    def next_change() -> float:
        return min(
            pool[0][0] if pool else math.inf,
            replicas_back[0][0] if replicas_back else math.inf,
        )

    for t_ev, kind, j in events:
        # Repairs and replica returns before this event.
        while next_change() <= t_ev:
            tc = next_change()
            advance(tc)
            if pool and pool[0][0] == tc:
                _, k = heapq.heappop(pool)
                lacking_before = max(0, away - m.spares)
                away -= k
                # The repaired nodes go to the replicas waiting longest; a replica with all it lacked
                # comes back after a restart and a swap.
                freed = lacking_before - max(0, away - m.spares)
                while freed > 0 and waiting:
                    given = min(freed, waiting[0][1])
                    waiting[0][1] -= given
                    freed -= given
                    if waiting[0][1] == 0:
                        r, _ = waiting.pop(0)
                        heapq.heappush(replicas_back, (tc + m.restart + m.swap, r))
            else:
                _, r = heapq.heappop(replicas_back)
                out -= r
        advance(t_ev)
        if kind == "mark":
            continue
        if kind == "planned":
            acc["useful"] += unck
            acc["checkpoint"] += wpend
            unck = wpend = phase = 0.0
            down, planned_left = max(m.r_planned, swap_left), m.r_planned
            continue
        k = m.nodes[j]
        in_window = 0 <= t_ev < T
        found_short = False
        if k > 0:
            if m.sigma is None:
                d = rng.exponential(m.repair[j])
            else:
                d = m.repair[j] * math.exp(m.sigma * rng.standard_normal() - m.sigma**2 / 2)
            heapq.heappush(pool, (t_ev + d, k))
            lacking = max(0, away + k - m.spares) - max(0, away - m.spares)  # nodes the pool could not give
            away += k
            found_short = lacking > 0
            if in_window:
                node_failures += 1
                no_spare += found_short
        is_continue = m.mode == "continue" and m.cont[j]
        if m.mode == "continue" and k > 0:
            if found_short:
                out += m.replicas[j]
                waiting.append([m.replicas[j], lacking])
            elif is_continue:
                out += m.replicas[j]
                heapq.heappush(replicas_back, (t_ev + m.stall + m.restart + m.swap, m.replicas[j]))
        if is_continue:
            if planned_left <= 0:  # a continue during a planned restart waits it out with the job
                down = max(down, m.stall)
            continue
        acc["lost_work"] += unck + wpend
        unck = wpend = phase = 0.0
        if k > 0:
            swap_left = max(swap_left, m.r_unplanned + m.swap)
        down, planned_left = max(m.r_unplanned, swap_left), 0.0
    # Whatever is pending after the tail commits at its cycle's end.
    acc["useful"] += unck
    acc["checkpoint"] += wpend
    return Trial(acc, node_failures, no_spare, repair_node_hours)


def simulate(m: Model, trials: int, seed: int, warm: float) -> list[Trial]:
    rng = np.random.default_rng(seed)
    return [simulate_trial(m, rng, warm) for _ in range(trials)]


def model_of(p: object) -> Model:
    """The reference's inputs from the engine's :class:`SparesParams` (plain numbers only)."""
    q = p  # SparesParams; attributes read by name
    return Model(
        rates=tuple(float(x) for x in q.rates),  # type: ignore[attr-defined]
        nodes=tuple(int(x) for x in q.nodes),  # type: ignore[attr-defined]
        repair=tuple(float(x) for x in q.repair),  # type: ignore[attr-defined]
        cont=tuple(bool(x) for x in q.cont),  # type: ignore[attr-defined]
        replicas=tuple(int(x) for x in q.replicas),  # type: ignore[attr-defined]
        mu=q.mu,  # type: ignore[attr-defined]
        hours=q.hours,  # type: ignore[attr-defined]
        tau=q.tau,  # type: ignore[attr-defined]
        c=q.c,  # type: ignore[attr-defined]
        r_unplanned=q.r_unplanned,  # type: ignore[attr-defined]
        r_planned=q.r_planned,  # type: ignore[attr-defined]
        swap=q.swap,  # type: ignore[attr-defined]
        job_nodes=q.job_nodes,  # type: ignore[attr-defined]
        spares=q.spare_nodes,  # type: ignore[attr-defined]
        min_nodes=q.min_nodes,  # type: ignore[attr-defined]
        sigma=q.sigma,  # type: ignore[attr-defined]
        mode=q.mode,  # type: ignore[attr-defined]
        share=q.share,  # type: ignore[attr-defined]
        stall=q.stall,  # type: ignore[attr-defined]
        restart=q.restart,  # type: ignore[attr-defined]
    )
