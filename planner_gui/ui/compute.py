"""Background computation for the window: the newest request wins, stale results are dropped.

One worker thread runs :func:`compute_plan`. Submitting a request while another runs makes the running
one stop at its next chunk (the engine polls ``should_stop``), so a fast slider drag never queues up
work. Results and errors come back to the GUI thread through queued signals; the GUI thread never waits
for the worker.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QObject, QThread, Signal, Slot

from ..core.engine import Cancelled
from ..core.model import Scenario
from ..core.results import SimulationResult, simulate
from ..core.sweep import SweepResult, gpu_counts, interval_points, sweep_gpus, sweep_interval

log = logging.getLogger(__name__)

__all__ = ["Quality", "PREVIEW", "FULL", "PlanRequest", "PlanResult", "ComputeController", "compute_plan"]


@dataclass(frozen=True)
class Quality:
    """How much Monte Carlo to spend: a quick preview while dragging, the full run when the hand stops."""

    name: str
    max_trials: int | None  # main run; None = the scenario's own trial count
    interval_points: int
    interval_trials: int
    gpu_points: int
    gpu_trials: int


PREVIEW = Quality("preview", 200, 21, 100, 21, 30)
FULL = Quality("full", None, 41, 200, 41, 100)


@dataclass(frozen=True)
class PlanRequest:
    scenario: Scenario
    quality: Quality = FULL
    generation: int = 0


@dataclass
class PlanResult:
    """Everything the plots show for one scenario."""

    request: PlanRequest
    main: SimulationResult
    by_interval: SweepResult
    by_gpus: SweepResult
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


def _gpu_sweep_key(sc: Scenario, q: Quality) -> tuple:
    # The GPU sweep does not depend on the current GPU count (only on the range it must cover).
    return (sc.replace(gpus=1, name=""), q.gpu_points, q.gpu_trials, max(sc.gpus, 1_048_576))


class _GpuSweepCache:
    def __init__(self) -> None:
        self._items: dict[tuple, SweepResult] = {}

    def get(self, key: tuple) -> SweepResult | None:
        return self._items.get(key)

    def put(self, key: tuple, value: SweepResult) -> None:
        if len(self._items) > 16:
            self._items.clear()
        self._items[key] = value


def compute_plan(req: PlanRequest, should_stop=None, progress=None, cache: _GpuSweepCache | None = None
                 ) -> PlanResult:
    """Run the main simulation and both sweeps for a request (in the calling thread)."""
    t0 = time.perf_counter()
    q, sc = req.quality, req.scenario
    trials = sc.trials if q.max_trials is None else min(sc.trials, q.max_trials)
    timings: dict[str, float] = {}

    def step(name: str, weight0: float, weight1: float):
        def report(f: float) -> None:
            if progress is not None:
                progress(weight0 + (weight1 - weight0) * f)

        return report

    main = simulate(sc.replace(trials=trials), should_stop=should_stop, progress=step("main", 0.0, 0.5))
    timings["main"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    by_interval = sweep_interval(
        sc.replace(trials=min(trials, q.interval_trials)),
        interval_points(q.interval_points),
        should_stop=should_stop,
        progress=step("interval", 0.5, 0.7),
    )
    timings["interval"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    key = _gpu_sweep_key(sc, q)
    by_gpus = cache.get(key) if cache is not None else None
    if by_gpus is None:
        counts = gpu_counts(q.gpu_points, 1024, max(sc.gpus, 1_048_576))
        by_gpus = sweep_gpus(sc.replace(trials=min(trials, q.gpu_trials)), counts, should_stop=should_stop,
                             progress=step("gpus", 0.7, 1.0))
        if cache is not None:
            cache.put(key, by_gpus)
    timings["gpus"] = time.perf_counter() - t2
    return PlanResult(req, main, by_interval, by_gpus, time.perf_counter() - t0, timings)


class _Worker(QObject):
    finished = Signal(object)  # PlanResult
    failed = Signal(int, str)  # generation, one-line message
    cancelled = Signal(int)
    progress = Signal(int, float)

    def __init__(self, controller: "ComputeController") -> None:
        super().__init__()
        self._controller = controller
        self._cache = _GpuSweepCache()

    @Slot()
    def process(self) -> None:
        ctl = self._controller
        while True:
            req = ctl._take_pending()
            if req is None:
                return
            gen = req.generation

            def should_stop(gen: int = gen) -> bool:
                return ctl._latest_generation != gen or ctl._shutting_down

            try:
                res = compute_plan(req, should_stop, lambda f, gen=gen: self.progress.emit(gen, f), self._cache)
            except Cancelled:
                self.cancelled.emit(gen)
                continue
            except Exception as exc:  # a bug or an impossible scenario: tell the user, log the details
                log.error("computation failed:\n%s", traceback.format_exc())
                self.failed.emit(gen, f"{type(exc).__name__}: {exc}")
                continue
            self.finished.emit(res)


class ComputeController(QObject):
    """Owns the worker thread; ``submit`` from the GUI thread, results arrive as signals.

    Signals carry only the newest generation's outcome: anything older is dropped here.
    """

    resultReady = Signal(object)  # PlanResult for the newest request
    failed = Signal(str)
    cancelled = Signal()
    progress = Signal(float)
    busyChanged = Signal(bool)
    _wake = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._pending: PlanRequest | None = None
        self._latest_generation = 0
        self._shutting_down = False
        self._busy = False
        self._thread = QThread()
        self._thread.setObjectName("planner-compute")
        self._worker = _Worker(self)
        self._worker.moveToThread(self._thread)
        self._wake.connect(self._worker.process)
        self._worker.finished.connect(self._on_finished)
        self._worker.failed.connect(self._on_failed)
        self._worker.cancelled.connect(self._on_cancelled)
        self._worker.progress.connect(self._on_progress)
        self._thread.start()

    # -- GUI thread API ---------------------------------------------------------
    def submit(self, scenario: Scenario, quality: Quality = FULL) -> int:
        """Ask for results for ``scenario``; any older request is abandoned. Returns its generation."""
        with self._lock:
            self._latest_generation += 1
            gen = self._latest_generation
            self._pending = PlanRequest(scenario, quality, gen)
        self._set_busy(True)
        self._wake.emit()
        return gen

    def cancel(self) -> None:
        """Stop the running computation (its result is never shown)."""
        with self._lock:
            self._latest_generation += 1
            self._pending = None
        self._set_busy(False)
        self.cancelled.emit()

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def generation(self) -> int:
        return self._latest_generation

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop the worker thread (the running chunk finishes first). Returns True if it stopped."""
        self._shutting_down = True
        with self._lock:
            self._pending = None
        self._thread.quit()
        stopped = self._thread.wait(timeout_ms)
        self._set_busy(False)
        return bool(stopped)

    # -- internals ----------------------------------------------------------------
    def _take_pending(self) -> PlanRequest | None:
        with self._lock:
            req, self._pending = self._pending, None
            return req

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    def _is_current(self, gen: int) -> bool:
        return gen == self._latest_generation and not self._shutting_down

    @Slot(object)
    def _on_finished(self, res: PlanResult) -> None:
        if self._is_current(res.request.generation):
            self._set_busy(False)
            self.resultReady.emit(res)

    @Slot(int, str)
    def _on_failed(self, gen: int, message: str) -> None:
        if self._is_current(gen):
            self._set_busy(False)
            self.failed.emit(message)

    @Slot(int)
    def _on_cancelled(self, gen: int) -> None:
        del gen  # superseded requests cancel themselves silently

    @Slot(int, float)
    def _on_progress(self, gen: int, fraction: float) -> None:
        if self._is_current(gen):
            self.progress.emit(float(np.clip(fraction, 0.0, 1.0)))
