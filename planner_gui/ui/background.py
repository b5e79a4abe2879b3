"""One computation at a time off the GUI thread, its result delivered on the GUI thread.

A worker thread must never own the last reference to a Qt object: the object's C++ destructor would then run in
the worker, take Qt's object lock while the GUI thread, holding the interpreter lock, waits for it, and both
would wait for ever (seen as a hung test when a closed dialog's computation finished after the dialog was
dropped). So the worker sees only the job, a :class:`threading.Event` to stop at, and a relay that is a child of
the owner (deleted with it; emitting then raises RuntimeError, which is ignored): never the owner itself.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

__all__ = ["Background"]


class _Relay(QObject):
    done = Signal(int, object)


class Background:
    """Runs ``job(should_stop)`` on a worker thread; ``on_done(request, result or exception)`` runs on the GUI
    thread. A new run stops the one before at its next check of ``should_stop``; :attr:`request` numbers them."""

    def __init__(self, owner: QObject, on_done: Callable[[int, object], None]) -> None:
        self._relay = _Relay(owner)
        self._relay.done.connect(on_done)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self._stop = threading.Event()
        self.request = 0
        # Set by shutdown() or when the owner is deleted without being closed (a dialog never shown): the running
        # job stops at its next check, the worker thread ends, and nothing starts any more. (Nothing of self in
        # the slot: the relay must not keep this object alive.)
        self._ended = ended = threading.Event()
        pool = self._pool

        def end(*_: object) -> None:
            ended.set()
            pool.shutdown(wait=False, cancel_futures=True)

        self._end = end
        self._relay.destroyed.connect(end)

    def run(self, job: Callable[[Callable[[], bool]], object]) -> int:
        """Start ``job`` (after :meth:`shutdown`, or once the owner is gone, nothing starts: a timer of a dialog
        being closed may still ask)."""
        if self._ended.is_set():
            return self.request
        self._stop.set()
        self._stop = stop = threading.Event()
        self.request += 1
        req, relay, ended = self.request, self._relay, self._ended

        def work() -> None:
            try:
                out: object = job(lambda: stop.is_set() or ended.is_set())
            except Exception as exc:  # shown by the owner, never raised in the thread
                out = exc
            try:
                relay.done.emit(req, out)
            except RuntimeError:  # the owner is gone: nobody waits for this result
                pass

        self._pool.submit(work)
        return req

    def cancel(self) -> None:
        """Stop the running job at its next check, and any result it still gives is for an old request."""
        self._stop.set()
        self.request += 1

    def shutdown(self) -> None:
        self.cancel()
        self._end()
