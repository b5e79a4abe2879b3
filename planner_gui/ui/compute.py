"""Background computation for the window: the newest request wins, stale results are dropped.

The Monte Carlo runs in a child process (:mod:`planner_gui.core.server`), not a thread: the engine
makes many short numpy calls, and in a thread they contend with the GUI thread for the GIL while it
paints. Requests go down the child's stdin, results come back on its stdout, read by a small thread
that turns them into queued Qt signals. Every request carries a generation number; a newer one makes
the running computation stop at its next chunk. The GUI thread never waits for the computation.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QThread, Signal, Slot

from ..core.model import Scenario
from ..core.plan import FULL, PREVIEW, PlanRequest, PlanResult, Quality
from ..core.server import SERVE_ARG, read_frame, write_frame

log = logging.getLogger(__name__)

__all__ = ["Quality", "PREVIEW", "FULL", "PlanRequest", "PlanResult", "ComputeController"]


def server_command() -> list[str]:
    """How to start the compute server: this same program with a hidden argument."""
    if getattr(sys, "frozen", False):
        return [sys.executable, SERVE_ARG]
    return [sys.executable, "-m", "planner_gui", SERVE_ARG]


def _server_env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # so the child imports this very package
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


class _Reader(QThread):
    """Blocks on the results pipe and forwards every message as a signal."""

    message = Signal(str, int, object)

    def __init__(self, conn) -> None:
        super().__init__()
        self.setObjectName("planner-results-reader")
        self._conn = conn

    def run(self) -> None:
        while True:
            try:
                kind, gen, payload = read_frame(self._conn)
            except (EOFError, OSError, ValueError):
                self.message.emit("gone", -1, None)  # the process ended without saying goodbye
                return
            except Exception:  # a result that cannot be unpickled: report it, keep reading
                log.exception("unreadable message from the compute process")
                self.message.emit("failed", -1, ("unreadable result", ""))
                continue
            if kind == "bye":
                return
            self.message.emit(kind, gen, payload)


class ComputeController(QObject):
    """Owns the compute process; ``submit`` from the GUI thread, results arrive as signals.

    Signals carry only the newest generation's outcome: anything older is dropped here.
    """

    resultReady = Signal(object)  # PlanResult for the newest request
    failed = Signal(str)
    cancelled = Signal()
    progress = Signal(float)
    busyChanged = Signal(bool)

    #: How many times the compute process is restarted after dying before giving up.
    MAX_RESTARTS = 3

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._latest = 0
        self._busy = False
        self._closed = False
        self._restarts = 0
        self._last_request: PlanRequest | None = None
        self._send_lock = threading.Lock()
        self._start_process()

    def _start_process(self) -> None:
        self._process = subprocess.Popen(server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env=_server_env())
        self._reader = _Reader(self._process.stdout)
        self._reader.message.connect(self._on_message)
        self._reader.start()

    def _restart_process(self) -> None:
        """The compute process died (killed, out of memory): start a new one and resend the newest request."""
        self._reader.wait(2000)
        try:
            self._process.wait(5.0)
        except subprocess.TimeoutExpired:  # it closed its output but did not exit
            self._process.kill()
            self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self._restarts >= self.MAX_RESTARTS:
            self._set_busy(False)
            self.failed.emit("the compute process stopped repeatedly; restart the application")
            return
        self._restarts += 1
        log.warning("the compute process ended unexpectedly (exit %s); restarting it", self._process.returncode)
        self._start_process()
        if self._busy and self._last_request is not None:
            self._send(self._last_request)

    # -- GUI thread API ---------------------------------------------------------
    def submit(self, scenario: Scenario, quality: Quality = FULL) -> int:
        """Ask for results for ``scenario``; any older request is abandoned. Returns its generation."""
        if self._closed:
            return self._latest
        self._latest += 1
        self._set_busy(True)
        self._last_request = PlanRequest(scenario, quality, self._latest)
        self._send(self._last_request)
        return self._latest

    def cancel(self) -> None:
        """Stop the running computation (its result is never shown)."""
        self._latest += 1
        self._send(("cancel", self._latest))
        self._set_busy(False)
        self.cancelled.emit()

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def generation(self) -> int:
        return self._latest

    @property
    def alive(self) -> bool:
        """Whether the compute process or the reader thread is still running."""
        return self._process.poll() is None or self._reader.isRunning()

    def shutdown(self, timeout_s: float = 10.0) -> bool:
        """Stop the compute process (its running chunk finishes first). Returns True if it stopped."""
        if not self._closed:
            self._closed = True
            self._send("quit")
            try:
                self._process.stdin.close()
            except OSError:
                pass
        try:
            self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            log.warning("the compute process did not stop in %.0f s; killing it", timeout_s)
            self._process.kill()
            self._process.wait(5.0)
        self._reader.wait(int(timeout_s * 1000))
        self._process.stdout.close()
        self._set_busy(False)
        return not self.alive

    # -- internals ----------------------------------------------------------------
    def _send(self, obj: object) -> None:
        with self._send_lock:
            try:
                write_frame(self._process.stdin, obj)
            except (OSError, ValueError) as exc:  # the process is gone; the reader will notice and restart it
                log.warning("cannot reach the compute process: %s", exc)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    @Slot(str, int, object)
    def _on_message(self, kind: str, gen: int, payload: object) -> None:
        if kind == "gone":
            if not self._closed and self.sender() is self._reader:
                self._restart_process()
            return
        if gen == -1 and not self._closed:
            gen = self._latest  # a message that could not be read belongs to the current request
        if gen != self._latest or self._closed:
            return  # stale: a newer request has been made since
        if kind == "progress":
            self.progress.emit(float(np.clip(payload, 0.0, 1.0)))
        elif kind == "result":
            self._set_busy(False)
            self.resultReady.emit(payload)
        elif kind == "failed":
            message, details = payload
            log.error("computation failed: %s\n%s", message, details)
            self._set_busy(False)
            self.failed.emit(message)
