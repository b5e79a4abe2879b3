"""Background computation for the window: the newest request wins, stale results are dropped.

The Monte Carlo runs in a child process (:mod:`planner_gui.core.session.server`), not a thread: the engine
makes many short numpy calls, and in a thread they contend with the GUI thread for the GIL while it
paints. Every request carries a generation number; a newer one makes the running computation stop at
its next chunk.

The GUI thread never waits for the compute process (only :meth:`~ComputeController.shutdown` waits, a
bounded few hundred milliseconds). Two threads per process do the waiting:

- a writer thread starts the child (a fork and exec can take tens of milliseconds on a loaded
  machine), then feeds its stdin. It holds only the newest unsent message (a request or a cancel; a
  newer one replaces it), so when the child is stopped or slow and the pipe is full, only the writer
  blocks and at most one request waits in memory;
- a reader thread takes answers from the child's stdout and forwards them as queued signals, so every
  slot runs on the GUI thread. When the child dies, the reader reports it and then reaps it.

The app may start the first process before it builds the window (:func:`adopt_early_process`), so the
process imports numpy and scipy while the window is being built; the first link takes it over.

A dead process is replaced at once (the newest unanswered request is sent again) unless processes keep
dying: more than :attr:`ComputeController.MAX_DEATHS` deaths within
:attr:`ComputeController.DEATH_WINDOW_S` seconds give up (``gaveUp``) until :meth:`~ComputeController.restart`.
:meth:`~ComputeController.shutdown` asks the child to quit, waits a few hundred milliseconds at most,
then kills it (SIGKILL ends a stopped process too).
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import BinaryIO, cast

from PySide6.QtCore import QObject, Qt, Signal, Slot

from ..core.analysis.sensitivity import DEFAULT_FACTOR
from ..core.model.scenario import Scenario
from ..core.session.jobs import Job
from ..core.session.plan import FULL, PREVIEW, MainPart, PlanRequest, PlanResult, Quality
from ..core.session.server import FrameError, encode_frame, loads, read_frame_bytes
from ..core.session.spawn import server_command, spawn

log = logging.getLogger(__name__)

__all__ = ["FULL", "PREVIEW", "ComputeController", "PlanRequest", "PlanResult", "Quality"]

#: Seconds :meth:`ComputeController.shutdown` gives the compute process to quit before killing it.
QUIT_GRACE_S = 0.3
#: Seconds to wait for a process to exit, or a thread to end, once the process has been killed or has
#: closed its output; never spent on the GUI thread except in shutdown, where it is not reached in practice
#: (a killed process ends within milliseconds, and its threads right after).
REAP_TIMEOUT_S = 1.0


_early: list[subprocess.Popen[bytes]] = []


def adopt_early_process(process: subprocess.Popen[bytes]) -> None:
    """Hand a compute process started early (:func:`planner_gui.core.session.spawn.spawn`) to the first link
    that needs one, instead of starting another."""
    _early[:] = [process]


def _start_process() -> subprocess.Popen[bytes]:
    """The early process if it is still running, else a new one (OSError if it cannot start)."""
    while _early:
        process = _early.pop()
        if process.poll() is None:
            return process
        process.wait()  # it ended by itself (it is reaped here; nobody else knows it)
    return spawn(server_command())


def _write_all(stream, pieces: list[bytes | memoryview]) -> None:
    for piece in pieces:
        view = memoryview(piece)
        while view:  # an unbuffered pipe write may take only part of the data
            view = view[stream.write(view) :]


def _ignore(*_message: object) -> None:
    """Where a detached link's messages go."""


def _close_in_background(links: list[_Link]) -> threading.Thread:
    """:meth:`_Link.close` each of ``links`` on a thread of its own (see :meth:`ComputeController.release`)."""

    def close() -> None:
        deadline = time.monotonic() + QUIT_GRACE_S + REAP_TIMEOUT_S
        for link in links:
            link.close(QUIT_GRACE_S, deadline)
        if any(link.alive for link in links):
            log.error("the compute process or its threads did not stop")

    thread = threading.Thread(target=close, daemon=True, name="planner-compute-closer")
    thread.start()
    return thread


class _Link:
    """One compute process and the threads that talk to it (plain Python; no Qt here).

    The writer thread starts the process (so the GUI thread never waits for a fork and exec, which
    takes tens of milliseconds on a loaded machine), starts the reader thread, then feeds the
    process's input. ``deliver(number, kind, generation, payload)`` is called on those threads for
    every answer, once with kind ``"gone"`` when the process has ended (or its output became
    unreadable), or once with kind ``"unstartable"`` when it could not be started. Methods called from
    the GUI thread (``post``, ``stop``, ``abandon``) never block.
    """

    def __init__(self, number: int, deliver: Callable[[int, str, int, object], None]) -> None:
        self.number = number
        self.process: subprocess.Popen[bytes] | None = None  # set by the writer thread once started
        self._deliver = deliver
        self._delivering = threading.Lock()  # held while ``deliver`` runs, so that detach() is final
        self._cond = threading.Condition()
        self._outbox: list[bytes | memoryview] | None = None  # the newest unsent frame
        self._quitting = False
        self._abandoned = False
        self._started = threading.Event()  # the start has succeeded or failed
        self._reader: threading.Thread | None = None
        self._writer = threading.Thread(target=self._run, daemon=True, name=f"planner-compute-writer-{number}")
        self._writer.start()

    # -- GUI thread -------------------------------------------------------------------
    def post(self, message: object) -> None:
        """Queue ``message`` for the process, replacing any message not yet written."""
        frame = encode_frame(message)  # here, so a message that cannot be pickled fails its caller
        with self._cond:
            self._outbox = frame
            self._cond.notify()

    def stop(self) -> None:
        """Ask the process to quit: the writer sends "quit" and closes its input."""
        with self._cond:
            self._quitting = True
            self._cond.notify()

    def abandon(self) -> None:
        """Stop and kill the process (as soon as it exists, if it is still starting); the reader reaps it."""
        with self._cond:
            self._quitting = self._abandoned = True
            self._cond.notify()
            process = self.process
        if process is not None:
            process.kill()  # a no-op once the process has been reaped

    def detach(self) -> None:
        """Never call ``deliver`` again (its controller is about to be deleted); waits only for a call under way,
        which is quick (a queued signal)."""
        with self._delivering:
            self._deliver = _ignore

    def _say(self, kind: str, generation: int, payload: object) -> None:
        with self._delivering:
            self._deliver(self.number, kind, generation, payload)

    def close(self, grace_s: float, deadline: float) -> None:
        """Ask the process to quit, kill it after ``grace_s``, and wait for the threads until ``deadline``
        (a ``time.monotonic`` value)."""
        self.stop()
        if not self._exited_by(time.monotonic() + grace_s):
            log.info("the compute process did not quit within %.2f s; killing it", grace_s)
            self.abandon()
        self._writer.join(max(0.0, deadline - time.monotonic()))
        if self._reader is not None:  # the writer thread starts it, so it is known once the writer ended
            self._reader.join(max(0.0, deadline - time.monotonic()))

    def _exited_by(self, when: float) -> bool:
        """Wait until ``when`` (a ``time.monotonic`` value) for the process to exit; True if it did."""
        if not self._started.wait(max(0.0, when - time.monotonic())) or self.process is None:
            return False
        try:
            self.process.wait(max(0.0, when - time.monotonic()))
        except subprocess.TimeoutExpired:
            return False
        return True

    @property
    def alive(self) -> bool:
        reader = self._reader
        return (
            self._writer.is_alive()
            or (reader is not None and reader.is_alive())
            or (self.process is not None and self.process.poll() is None)
        )

    # -- writer thread ----------------------------------------------------------------
    def _run(self) -> None:
        try:
            # Unbuffered pipes: only this thread touches stdin and only the reader stdout, so no buffer
            # lock is ever shared between threads.
            process = _start_process()
        except OSError as exc:
            log.error("cannot start the compute process: %s", exc)
            self._started.set()
            self._say("unstartable", -1, str(exc))
            return
        with self._cond:
            self.process = process
            if self._abandoned:  # abandoned while starting: abandon() could not kill it
                process.kill()
        self._reader = threading.Thread(
            target=self._read_loop, daemon=True, name=f"planner-compute-reader-{self.number}"
        )
        self._reader.start()
        self._started.set()
        self._write_loop(process.stdin)

    def _next_frame(self) -> list[bytes | memoryview] | None:
        with self._cond:
            while self._outbox is None and not self._quitting:
                self._cond.wait()
            if self._quitting:
                return None
            frame, self._outbox = self._outbox, None
            return frame

    def _write_loop(self, stream) -> None:
        try:
            while (frame := self._next_frame()) is not None:
                _write_all(stream, frame)  # blocks while the pipe is full: only this thread waits
            _write_all(stream, encode_frame("quit"))
        except OSError:
            pass  # the process has died (EPIPE); the reader reports it
        finally:
            try:
                stream.close()  # end of input also tells the server to quit
            except OSError:
                pass

    # -- reader thread ----------------------------------------------------------------
    def _read_loop(self) -> None:
        # Started by the writer thread once the process runs, so the process and its pipe exist.
        assert self.process is not None and self.process.stdout is not None
        stream = cast(BinaryIO, self.process.stdout)
        while True:
            try:
                data = read_frame_bytes(stream)
            except (EOFError, OSError, FrameError):  # the process ended, or its output is corrupt
                break
            received = time.perf_counter()
            try:
                kind, gen, payload = loads(data)
                if kind in ("result", "part") and isinstance(payload, (PlanResult, MainPart)):
                    payload.stamps.update(received=received, unpickled=time.perf_counter())
            except Exception:  # a result that cannot be unpickled: report it, keep reading
                log.exception("unreadable message from the compute process")
                self._say("failed", -1, ("unreadable result", ""))
                continue
            if kind == "bye":
                break
            self._say(kind, gen, payload)
        self._say("gone", -1, None)  # first, so a replacement starts without waiting
        self._reap()
        stream.close()

    def _reap(self) -> None:
        # With a timeout, Popen.wait polls instead of holding its lock, so poll() elsewhere stays usable.
        assert self.process is not None
        try:
            self.process.wait(REAP_TIMEOUT_S)
        except subprocess.TimeoutExpired:  # it closed its output but did not exit
            self.process.kill()
            try:
                self.process.wait(REAP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                log.error("the compute process %s did not end after SIGKILL", self.process.pid)


class ComputeController(QObject):
    """Owns the compute process; call it from the GUI thread, results arrive as signals on it.

    Signals carry only the newest generation's outcome: anything older is dropped here. After giving
    up (see the module docstring), ``submit`` records the request, emits ``gaveUp`` again and stays
    idle; :meth:`restart` computes it.
    """

    resultReady = Signal(object)  # PlanResult (or a job's value) for the newest request
    partReady = Signal(object)  # MainPart: the newest plan request's main run, ahead of its result
    failed = Signal(str)
    cancelled = Signal()
    progress = Signal(float)
    busyChanged = Signal(bool)
    #: The compute process kept dying and is no longer restarted; one line for the window to show.
    gaveUp = Signal(str)
    _message = Signal(int, str, int, object)  # from the link threads; connected queued

    #: Give up when the compute process dies more than this many times ...
    MAX_DEATHS = 3
    #: ... within this many seconds. Deaths spread over a long session never give up.
    DEATH_WINDOW_S = 60.0

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._latest = 0
        self._busy = False
        self._closed = False
        self._gave_up = False
        self._gave_up_reason = ""
        self._unanswered: PlanRequest | Job | None = None  # the newest request until its outcome is delivered
        self._deaths: deque[float] = deque()
        self._clock: Callable[[], float] = time.monotonic  # tests replace it
        self._links_made = 0
        self._dying: list[_Link] = []  # replaced processes, until their reader threads have reaped them
        self._message.connect(self._on_message, Qt.ConnectionType.QueuedConnection)
        self._link: _Link | None = self._new_link()

    # -- GUI thread API ---------------------------------------------------------
    def submit(self, scenario: Scenario, quality: Quality = FULL, factor: float = DEFAULT_FACTOR) -> int:
        """Ask for results for ``scenario``; any older request is abandoned. Returns its generation.

        After giving up, the request is kept for :meth:`restart`, ``gaveUp`` is emitted again and
        ``busy`` stays False.
        """
        return self._ask(lambda generation: PlanRequest(scenario, quality, generation, factor))

    def submit_job(self, kind: str, *args: object) -> int:
        """Ask for a view's computation (:data:`planner_gui.core.session.jobs.JOBS`); as :meth:`submit`, the newest wins
        and ``resultReady`` carries its value."""
        return self._ask(lambda generation: Job(kind, args, generation))

    def _ask(self, request: Callable[[int], PlanRequest | Job]) -> int:
        """Make the request of the next generation the newest, and send it (see :meth:`submit`)."""
        if self._closed:
            return self._latest
        self._latest += 1
        self._unanswered = request(self._latest)
        if self._link is None:
            self.gaveUp.emit(self._gave_up_reason)
            return self._latest
        self._link.post(self._unanswered)
        self._set_busy(True)
        return self._latest

    def cancel(self) -> None:
        """Stop the running computation (its result is never shown)."""
        self._latest += 1
        self._unanswered = None
        if self._link is not None and not self._closed:
            self._link.post(("cancel", self._latest))
        self._set_busy(False)
        self.cancelled.emit()

    def restart(self) -> None:
        """Start a fresh compute process (killing the current one, if any), forget past deaths, and
        resend the newest request whose result has not been delivered."""
        if self._closed:
            return
        if self._link is not None:
            self._retire(self._link)
        self._deaths.clear()
        self._gave_up = False
        self._start_and_resend()

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def pending(self) -> PlanRequest | Job | None:
        """The newest request, while its result has not come (None once it has, or was cancelled)."""
        return self._unanswered

    @property
    def generation(self) -> int:
        return self._latest

    @property
    def gave_up(self) -> bool:
        """True after the compute process kept dying, until :meth:`restart`."""
        return self._gave_up

    @property
    def alive(self) -> bool:
        """Whether any compute process, or any thread talking to one, is still running."""
        return any(link.alive for link in self._links())

    @property
    def _process(self) -> subprocess.Popen | None:
        """The current compute process; None while it is starting, and after giving up (for tests)."""
        return self._link.process if self._link is not None else None

    def shutdown(self, timeout_s: float = QUIT_GRACE_S) -> bool:
        """Stop the compute process: ask it to quit, kill it after ``timeout_s`` seconds (it may be in
        the middle of a chunk, or stopped), and wait briefly for it and its threads to end.
        Returns True if everything stopped."""
        self._closed = True
        self._set_busy(False)
        deadline = time.monotonic() + timeout_s + REAP_TIMEOUT_S
        for link in self._dying:
            link.abandon()
        for link in self._links():
            link.close(timeout_s if link is self._link else 0.0, deadline)
        self._dying = [link for link in self._dying if link.alive]
        stopped = not self.alive
        if not stopped:
            log.error("the compute process or its threads did not stop")
        return stopped

    def release(self) -> list[_Link]:
        """:meth:`shutdown` without waiting (a view closing, or done with its process): every process is asked to
        quit and killed if it has not after :data:`QUIT_GRACE_S`, on a thread of its own. Nothing from them reaches
        this controller again, so it may be deleted at once. Returns the links still ending."""
        self._closed = True
        self._set_busy(False)
        links = self._links()
        self._link, self._dying = None, []
        for link in links:
            link.detach()
            link.stop()
        if links:
            _close_in_background(links)
        return links

    # -- internals ----------------------------------------------------------------
    def _links(self) -> list[_Link]:
        return [*self._dying, *([self._link] if self._link is not None else [])]

    def _new_link(self) -> _Link:
        self._links_made += 1
        return _Link(self._links_made, self._deliver)

    def _deliver(self, number: int, kind: str, gen: int, payload: object) -> None:
        """Called on a link's thread: hand the message to the GUI thread (the connection is queued)."""
        try:
            self._message.emit(number, kind, gen, payload)
        except RuntimeError:  # the controller was deleted without shutdown; nobody is listening
            pass

    def _retire(self, link: _Link | None) -> None:
        """Kill ``link``'s process without waiting; its reader thread reaps it."""
        if link is None:
            return
        link.abandon()
        self._dying = [old for old in self._dying if old.alive]
        self._dying.append(link)
        self._link = None

    def _start_and_resend(self) -> None:
        self._link = self._new_link()  # it starts the process on its own thread
        if self._unanswered is not None:
            self._link.post(self._unanswered)
            self._set_busy(True)

    def _on_lost(self, kind: str, payload: object) -> None:
        if kind == "unstartable":  # starting again would fail the same way (no program, no memory)
            self._retire(self._link)
            self._give_up(f"Cannot start the compute process ({payload}).")
        else:
            self._on_death()

    def _on_death(self) -> None:
        """The compute process died (killed, out of memory): replace it at once, unless it keeps dying."""
        self._retire(self._link)
        now = self._clock()
        self._deaths.append(now)
        while now - self._deaths[0] > self.DEATH_WINDOW_S:
            self._deaths.popleft()
        if len(self._deaths) > self.MAX_DEATHS:
            log.error(
                "the compute process died %d times within %.0f s; giving up", len(self._deaths), self.DEATH_WINDOW_S
            )
            self._give_up(self._gave_up_message())
            return
        log.warning("the compute process ended unexpectedly; restarting it")
        self._start_and_resend()

    def _give_up(self, message: str) -> None:
        self._gave_up = True
        self._gave_up_reason = message
        self._set_busy(False)  # the newest request stays in _unanswered for restart()
        self.gaveUp.emit(message)

    def _gave_up_message(self) -> str:
        return (
            f"The compute process stopped {self.MAX_DEATHS + 1} times within {self.DEATH_WINDOW_S:.0f} s; "
            "computation is paused until it is restarted."
        )

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    @Slot(int, str, int, object)
    def _on_message(self, number: int, kind: str, gen: int, payload: object) -> None:
        if self._closed:
            return
        current = self._link is not None and number == self._link.number
        if kind in ("gone", "unstartable"):
            if current:  # a replaced process's end was expected
                self._on_lost(kind, payload)
            return
        if gen == -1 and current:
            gen = self._latest  # a message that could not be read belongs to the current request
        if self._unanswered is None or gen != self._unanswered.generation:
            return  # stale: a newer request (or a cancel) has been made since, or it was answered
        if kind == "progress":
            self.progress.emit(min(max(float(cast(float, payload)), 0.0), 1.0))
        elif kind == "part":
            if isinstance(payload, MainPart):
                payload.stamps["delivered"] = time.perf_counter()
                self.partReady.emit(payload)
        elif kind in ("result", "failed"):
            self._unanswered = None
            self._set_busy(False)
            if kind == "result":
                if isinstance(payload, PlanResult):
                    payload.stamps["delivered"] = time.perf_counter()
                self.resultReady.emit(payload)
            else:
                message, details = cast(tuple[str, str], payload)
                if details:  # a failure of the program, with its traceback
                    log.error("computation failed: %s\n%s", message, details)
                else:  # inputs refused (a view's job): what the view shows, not a failure of the program
                    log.info("computation refused its inputs: %s", message)
                self.failed.emit(message)
