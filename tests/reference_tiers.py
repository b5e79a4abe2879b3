"""A slow, readable, event-by-event simulator of the two-tier recovery model: the reference the vectorized
engine (``planner_gui/core/sim/tiers.py``) is checked against in ``tests/test_tiers.py``.

It is written from the model's words (docs/tiers.md, "The model"), not from the engine: one trial at a
time, the job is moved forward through its downtimes, computing, stalls and uploads, one interruption
after the other, and every hour of the window gets its label when nothing can change it any more.

* Each component fails as a Poisson process of its rate times the GPUs and has a scope: ``process``,
  ``node`` or ``domain``. A failure restores from the fast tier when every lost node's snapshot has a
  replica on a surviving node (process: the fast tier is on; node: one replica or more; domain: replicas
  only in other domains), else from the persistent tier. Planned interruptions
  are a Poisson process of their own.
* Fast tier on: every ``fast_tau`` of compute the job stalls ``fast_stall`` and completes a fast
  snapshot; every ``k``-th snapshot of a cycle (``k = persistent_tau / fast_tau``, rounded) is a
  persistent point: if no upload is running, its snapshot starts uploading, taking ``upload`` hours of
  wall-clock time, and counts (moves the bank) when the upload finishes. A persistent point's stall is
  ``fast_stall + persistent_stall`` (the persistent tier's own blocking part, whether or not an upload
  starts; the fast stall alone with ``persistent_stall = 0``). Fast tier off: every
  ``persistent_tau`` of compute the job stalls ``persistent_stall`` and the snapshot uploads.
* An unplanned failure aborts the upload in flight, loses the compute since the last completed fast
  snapshot (fast restore) or since the bank (persistent restore), and costs detect + restart + the
  tier's restore. During a downtime the worse of the two tiers restores (persistent after fast, or fast
  during a persistent restore). A planned interruption drains the job: nothing is lost, the bank moves to
  the current position, and it costs the restart. A persistent restore or a planned interruption starts a
  new cycle: the restored (or drained) state is the cycle's first snapshot, in memory, and the persistent
  points are counted from it. A fast restore resumes at its snapshot and keeps the cycle's count.
* A stall that completes is checkpoint time; one cut short by a failure produced nothing and is lost
  (one cut short by a planned interruption is drained: checkpoint).
* The window ``[0, T)`` is a snapshot of a long job: the simulation starts at the last full renewal
  before it, ``A ~ Exp(nu)`` hours earlier (``nu``: persistent-tier failures plus planned ones; only
  fast-tier failures happen in between), or after a burn-in from a fresh start, and runs until every
  hour of the window has its final label.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

HOURS = ("useful", "checkpoint", "lost", "recovery", "planned_restart")


@dataclass(frozen=True)
class Model:
    """Inputs in hours and per hour. ``components``: (name, rate per GPU-hour, scope)."""

    gpus: int
    components: tuple[tuple[str, float, str], ...]
    mu: float
    hours: float
    fast_on: bool
    fast_tau: float
    fast_stall: float
    replicas: int
    placement: str
    nodes_per_domain: int
    persistent_tau: float
    persistent_stall: float
    upload: float
    detect_restart: float
    restart: float
    fast_restore: float
    persistent_restore: float

    def tier(self, scope: str) -> str:
        """Which tier a failure of ``scope`` restores from (before any other failure interferes)."""
        if not self.fast_on:
            return "persistent"
        if scope == "process":
            return "fast"
        if self.replicas == 0:
            return "persistent"
        if scope == "node" or self.placement == "other-domain":
            return "fast"
        return "persistent"

    @property
    def tau(self) -> float:
        return self.fast_tau if self.fast_on else self.persistent_tau

    @property
    def stall(self) -> float:
        return self.fast_stall if self.fast_on else self.persistent_stall

    def stall_of(self, snapshot: int) -> float:
        """The stall of a cycle's ``snapshot``-th snapshot (1, 2, ...): a persistent point's is longer."""
        if self.fast_on and snapshot % self.k == 0:
            return self.fast_stall + self.persistent_stall
        return self.stall

    @property
    def k(self) -> int:
        return max(1, round(self.persistent_tau / self.fast_tau)) if self.fast_on else 1

    def rate(self, tier: str) -> float:
        return sum(r * self.gpus for _, r, scope in self.components if self.tier(scope) == tier)


@dataclass
class Job:
    """The job's state and the window's hours."""

    model: Model
    t: float
    down_kind: str | None  # "fast", "persistent", "planned" while down; None while running
    down_end: float
    position: float = 0.0  # compute done (hours of training progress)
    next_snapshot: float = 0.0  # the position at which the next snapshot's compute ends
    stall_start: float | None = None  # while stalling
    last_fast: float = 0.0  # position of the last completed snapshot (in host memory)
    bank: float = 0.0  # position of the last snapshot whose upload finished (or drained, or restored)
    count: int = 0  # snapshots completed in this cycle
    upload: tuple[float, float] | None = None  # (finish time, snapshot position)
    live: list[list[float]] = field(default_factory=list)  # compute not yet safe: [t0, t1, position at t0]
    hours: dict[str, float] = field(default_factory=lambda: dict.fromkeys(HOURS, 0.0))

    def add(self, kind: str, a: float, b: float) -> None:
        """Count the part of ``[a, b)`` inside the window."""
        self.hours[kind] += max(0.0, min(b, self.model.hours) - max(a, 0.0))

    # -- moving forward without interruptions -------------------------------------------------------------
    def advance(self, until: float) -> None:
        """Move the job to time ``until``: downtime, compute, stalls, snapshots, uploads in time order."""
        m = self.model
        while self.t < until:
            upload_end = self.upload[0] if self.upload is not None else math.inf
            if self.down_kind is not None:
                end = min(self.down_end, until)
                self.add("planned_restart" if self.down_kind == "planned" else "recovery", self.t, end)
                self.t = end
                if end == self.down_end:
                    self.down_kind = None
                continue
            if self.stall_start is not None:
                stall_end = self.stall_start + m.stall_of(self.count + 1)
                if upload_end <= stall_end and upload_end <= until:  # an upload finishing first frees the uploader
                    self.finish_upload()
                    continue
                if stall_end > until:
                    self.t = until
                    return
                self.t = stall_end
                self.add("checkpoint", self.stall_start, stall_end)
                self.stall_start = None
                self.snapshot()
                continue
            compute_end = self.t + (self.next_snapshot - self.position)
            if upload_end <= min(compute_end, until):
                self.compute(upload_end)
                self.finish_upload()
                continue
            if compute_end > until:
                self.compute(until)
                return
            self.compute(compute_end)
            self.position = self.next_snapshot  # exactly, against rounding
            self.stall_start = self.t
            if m.stall_of(self.count + 1) == 0:
                self.stall_start = None
                self.snapshot()

    def compute(self, end: float) -> None:
        if end > self.t:
            self.live.append([self.t, end, self.position])
            self.position += end - self.t
            self.t = end

    def snapshot(self) -> None:
        """A snapshot completes: it is the last fast snapshot, and every k-th of a cycle may upload."""
        m = self.model
        self.last_fast = self.position
        self.next_snapshot = self.position + m.tau
        self.count += 1
        if self.count % m.k == 0 and self.upload is None:  # a persistent point; skipped while uploading
            if m.upload == 0:
                self.set_bank(self.position)
            else:
                self.upload = (self.t + m.upload, self.position)

    def finish_upload(self) -> None:
        assert self.upload is not None
        finish, position = self.upload
        self.t = max(self.t, finish)
        self.upload = None
        self.set_bank(position)

    def set_bank(self, position: float) -> None:
        """The bank moves: compute up to it can never be rolled back; it is useful."""
        self.bank = max(self.bank, position)
        keep = []
        for t0, t1, p0 in self.live:
            safe = min(t1 - t0, self.bank - p0)
            if safe > 0:
                self.add("useful", t0, t0 + safe)
            if safe < t1 - t0:
                keep.append([t0 + max(safe, 0.0), t1, p0 + max(safe, 0.0)])
        self.live = keep

    def roll_back(self, position: float) -> None:
        """Compute above ``position`` is lost."""
        while self.live and self.live[-1][2] + (self.live[-1][1] - self.live[-1][0]) > position:
            t0, t1, p0 = self.live.pop()
            cut = max(position - p0, 0.0)
            self.add("lost", t0 + cut, t1)
            if cut > 0:
                self.live.append([t0, t0 + cut, p0])
                break
        self.position = position

    # -- interruptions ------------------------------------------------------------------------------------
    def fail(self, tier: str) -> str:
        """An unplanned failure restoring (by its scope) from ``tier``; returns the tier it restores from."""
        m = self.model
        if self.down_kind == "persistent" or (self.down_kind == "fast" and tier == "persistent"):
            tier = "persistent"
        if self.stall_start is not None:
            self.add("lost", self.stall_start, self.t)
            self.stall_start = None
        self.upload = None
        if tier == "fast":
            self.roll_back(self.last_fast)
            down = m.detect_restart + m.fast_restore
        else:
            self.roll_back(self.bank)
            self.new_cycle()
            down = m.detect_restart + m.persistent_restore
        self.next_snapshot = self.position + m.tau
        self.down_kind, self.down_end = tier, self.t + down
        return tier

    def drain(self) -> None:
        """A planned interruption: nothing is lost, the drained state is persisted, a new cycle starts."""
        if self.stall_start is not None:
            self.add("checkpoint", self.stall_start, self.t)
            self.stall_start = None
        self.upload = None
        self.set_bank(self.position)
        self.new_cycle()
        self.next_snapshot = self.position + self.model.tau
        self.down_kind, self.down_end = "planned", self.t + self.model.restart

    def new_cycle(self) -> None:
        self.last_fast = self.position
        self.count = 0
        self.set_bank(self.position)

    def settled(self) -> bool:
        """Nothing inside the window can change any more: no compute of it can be rolled back, and no stall
        that began in it is still running."""
        if self.stall_start is not None and self.stall_start < self.model.hours:
            return False
        return not any(t0 < self.model.hours for t0, _, _ in self.live)


def simulate_trial(model: Model, rng: np.random.Generator, burn_in: bool = False) -> dict[str, float]:
    """One trial: the window's hours of each kind, its interruptions (by component and by the tier they
    restored from)."""
    lam_fast, lam_persistent = model.rate("fast"), model.rate("persistent")
    nu = lam_persistent + model.mu
    rates = np.array([r * model.gpus for _, r, _ in model.components])
    fast_mask = np.array([model.tier(scope) == "fast" for _, _, scope in model.components])
    if burn_in or nu == 0:
        scale = nu if nu > 0 else lam_fast
        start = -40.0 / scale if scale > 0 else -10.0 * (model.tau + model.stall)
        job = Job(model, start, None, start)
        renewals_from = start
    else:  # the last full renewal before the window, and its kind
        start = -rng.exponential(1.0 / nu)
        kind = "persistent" if rng.random() < lam_persistent / nu else "planned"
        down = model.detect_restart + model.persistent_restore if kind == "persistent" else model.restart
        job = Job(model, start, kind, start + down)
        renewals_from = 0.0
    job.next_snapshot = model.tau
    counts = {"unplanned": 0, "planned": 0, "fast": 0, "persistent": 0}
    by_component = np.zeros(len(model.components), dtype=int)

    def next_after(t: float, rate: float) -> float:
        return t + rng.exponential(1.0 / rate) if rate > 0 else math.inf

    # Before ``renewals_from`` only fast-tier failures happen (the start is the last full renewal).
    next_fast_only = next_after(start, lam_fast) if renewals_from > start else math.inf
    next_any = next_after(renewals_from, rates.sum())
    next_planned = next_after(renewals_from, model.mu)
    safe_level = "bank" if lam_persistent > 0 else "last_fast"
    while True:
        t = min(next_fast_only if next_fast_only < renewals_from else math.inf, next_any, next_planned)
        if job.t >= model.hours and job.settled():
            break
        if t == math.inf:
            job.advance(job.t + 100.0 * (model.tau + model.stall) + 10.0 * model.upload + 1.0)
            if safe_level == "last_fast":
                job.set_bank(job.last_fast)
            continue
        job.advance(t)
        inside = 0.0 <= t < model.hours
        if t == next_planned:
            job.drain()
            counts["planned"] += inside
            next_planned = next_after(t, model.mu)
        else:
            if t == next_fast_only:
                comp = rng.choice(np.flatnonzero(fast_mask), p=rates[fast_mask] / rates[fast_mask].sum())
                next_fast_only = next_after(t, lam_fast)
            else:
                comp = rng.choice(len(rates), p=rates / rates.sum())
                next_any = next_after(t, rates.sum())
            tier = job.fail(model.tier(model.components[comp][2]))
            if inside:
                counts["unplanned"] += 1
                counts[tier] += 1
                by_component[comp] += 1
        if safe_level == "last_fast":  # no persistent restore can happen: snapshots are safe
            job.set_bank(job.last_fast)
    return {**job.hours, **counts, "by_component": by_component}


def simulate(model: Model, trials: int, seed: int, burn_in: bool = False) -> dict[str, np.ndarray]:
    """``trials`` independent trials: per-trial arrays of every quantity."""
    rng = np.random.default_rng(seed)
    rows = [simulate_trial(model, rng, burn_in) for _ in range(trials)]
    return {key: np.array([r[key] for r in rows]) for key in rows[0]}
