"""One computation at a time off the GUI thread, its result delivered on the GUI thread.

A job's thread touches no Qt object at all: it computes, and its result waits until a timer of the owner, on
the GUI thread, collects it; the thread ends with its job. Two earlier designs failed: a worker holding the last
reference to a Qt object ran the C++ destructor in the worker (a deadlock with the GUI thread, seen as a hung
test when a closed dialog's computation finished after the dialog was dropped); a worker emitting a signal of a
relay object that the GUI thread was deleting at that moment crashed the process. So a job sees only its inputs
and a :class:`threading.Event` to stop at; the timer is a child of the owner and goes with it, and with it
every result still to come.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

__all__ = ["COLLECT_MS", "Background"]

#: How often the owner's timer looks for a finished job while one runs (milliseconds): the delay a result
#: may wait, and nothing while no job runs.
COLLECT_MS = 15


class Background:
    """Runs ``job(should_stop)`` on a worker thread; ``on_done(request, result or exception)`` runs on the GUI
    thread. A new run stops the one before at its next check of ``should_stop``; :attr:`request` numbers them."""

    def __init__(self, owner: QObject, on_done: Callable[[int, object], None]) -> None:
        self._on_done = on_done
        self._stop = threading.Event()
        self._pending: list[tuple[int, _Job]] = []
        self._last: _Job | None = None
        self.request = 0
        self._timer = QTimer(owner)
        self._timer.setInterval(COLLECT_MS)
        self._timer.timeout.connect(self._collect)
        # Set by shutdown() or when the owner is deleted without being closed (a dialog never shown): the running
        # job stops at its next check, its thread ends, and nothing starts any more. (Nothing of self in the
        # slot: the timer must not keep this object alive.)
        self._ended = ended = threading.Event()
        self._end = lambda *_: ended.set()
        self._timer.destroyed.connect(self._end)

    def run(self, job: Callable[[Callable[[], bool]], object]) -> int:
        """Start ``job`` (after :meth:`shutdown`, or once the owner is gone, nothing starts: a timer of a dialog
        being closed may still ask)."""
        if self._ended.is_set():
            return self.request
        self._stop.set()
        self._stop = stop = threading.Event()
        self.request += 1
        ended = self._ended
        self._last = _Job(lambda: job(lambda: stop.is_set() or ended.is_set()), after=self._last)
        self._pending.append((self.request, self._last))
        self._timer.start()
        return self.request

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the last job's thread to end (True if it has); for tests and shutdown paths only."""
        if self._last is None:
            return True
        self._last.thread.join(timeout)
        return not self._last.thread.is_alive()

    def _collect(self) -> None:
        """On the GUI thread: hand each finished job's result to ``on_done``, in the order they were run."""
        while self._pending and self._pending[0][1].done.is_set():
            req, job = self._pending.pop(0)
            if not self._ended.is_set():
                self._on_done(req, job.result)
        if not self._pending:
            self._timer.stop()

    def cancel(self) -> None:
        """Stop the running job at its next check, and any result it still gives is for an old request."""
        self._stop.set()
        self.request += 1

    def shutdown(self) -> None:
        self.cancel()
        self._end()
        self._pending.clear()
        try:
            self._timer.stop()
        except RuntimeError:  # the owner, and its timer, are gone already
            pass


class _Job:
    """One job on a thread of its own, started once the job before it (told to stop) has ended, so one runs at a
    time; the thread ends with the job, and nothing waits idle after it."""

    def __init__(self, work: Callable[[], object], after: _Job | None) -> None:
        self.result: object = None
        self.done = threading.Event()
        self._after = after

        def run() -> None:
            if self._after is not None:
                self._after.thread.join()
                self._after = None  # (no chain of every job run before)
            try:
                self.result = work()
            except Exception as exc:  # shown by the owner, never raised in the thread
                self.result = exc
            self.done.set()

        self.thread = threading.Thread(target=run, daemon=True, name="planner-background")
        self.thread.start()
