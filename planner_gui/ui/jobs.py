"""A view's computations, in a compute process of the view's own (:mod:`planner_gui.core.session.jobs`).

The same controller as the window's plan (:class:`.compute.ComputeController`): the newest request wins and a
newer one stops the running one at its next check, a process that dies is replaced, nothing of it runs on the
window's interpreter (a thread computing there holds the lock the window paints with: with both spares dialogs
computing on threads, the window stalled for 280 ms at a time), and the GUI thread never waits for it.

The controller has no Qt parent: it lives until :meth:`JobRunner.shutdown`, or until its owner is destroyed
(then it is shut down first). Shutting down never waits: the process is asked to quit (and killed if it has not
soon after) on a thread of its own, and nothing from it reaches the controller again, so no thread ever talks to
a deleted object.
"""

from __future__ import annotations

from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QObject

from .compute import ComputeController, _Link

__all__ = ["JobFailed", "JobRunner"]

#: The controllers of views not shut down yet (they have no Qt parent to keep them).
_LIVE: set[ComputeController] = set()


class JobFailed(Exception):
    """A job that could not be computed; ``str()`` is the one line to show."""


def _end(controller: ComputeController, ending: list[_Link]) -> None:
    """Release the controller's processes without waiting for them (they end on a thread of their own; their
    links are added to ``ending``) and delete it: the GUI thread never waits for a process to quit."""
    if controller in _LIVE:
        _LIVE.discard(controller)
        if shiboken6.isValid(controller):  # (not when the application itself is being torn down)
            ending.extend(controller.release())
            controller.deleteLater()


class JobRunner:
    """Runs ``JOBS[kind](*args)`` in a compute process; ``on_done(request, value or JobFailed)`` runs on the GUI
    thread for the newest request only; :attr:`request` numbers them."""

    def __init__(
        self,
        owner: QObject,
        on_done: Callable[[int, object], None],
        on_progress: Callable[[float], None] | None = None,
    ) -> None:
        self._controller = c = ComputeController()
        #: Its processes once shut down, until they have ended (for :attr:`alive`).
        self._ending: list[_Link] = []
        ending = self._ending
        _LIVE.add(c)
        c.resultReady.connect(lambda value: on_done(c.generation, value))
        c.failed.connect(lambda message: on_done(c.generation, JobFailed(message)))
        c.gaveUp.connect(lambda message: on_done(c.generation, JobFailed(message)))
        if on_progress is not None:
            c.progress.connect(on_progress)
        owner.destroyed.connect(lambda *_: _end(c, ending))  # (nothing of the owner or of self in the slot)

    def run(self, kind: str, *args: object) -> int:
        """Ask for ``JOBS[kind](*args)``; the request before it is abandoned. After :meth:`shutdown`, nothing.
        After the compute process kept dying (the view was told so), a new request starts a fresh one: it is the
        user's own retry (a changed input)."""
        c = self._controller
        if c not in _LIVE:
            return self.request
        if c.gave_up:
            c.restart()
        return c.submit_job(kind, *args)

    @property
    def request(self) -> int:
        return self._controller.generation

    @property
    def gave_up(self) -> bool:
        """Whether its compute process kept dying and is not restarted until the next request."""
        return self._controller in _LIVE and self._controller.gave_up

    @property
    def busy(self) -> bool:
        return self._controller in _LIVE and self._controller.busy

    @property
    def alive(self) -> bool:
        """Whether its compute process, or a thread talking to it, still runs (after :meth:`shutdown`: until they
        have ended)."""
        c = self._controller
        return c.alive if c in _LIVE else any(link.alive for link in self._ending)

    def cancel(self) -> None:
        """Stop the running job; no result comes for it."""
        if self._controller in _LIVE:
            self._controller.cancel()

    def shutdown(self) -> None:
        """Stop the compute process and forget every request, without waiting: the process is asked to quit, and
        killed if it has not after :data:`.compute.QUIT_GRACE_S`, on a thread of its own."""
        _end(self._controller, self._ending)
