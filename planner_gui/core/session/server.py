"""The compute server: a child process that runs :func:`.plan.compute_plan` for the window.

Protocol (both directions): frames of an 8-byte big-endian length followed by a pickle (protocol 5), then a 4-byte
count of its out-of-band buffers and each with its 8-byte length (so that a large array is read straight into
memory of its own, never copied while the reading thread holds the interpreter lock). The parent sends
:class:`.plan.PlanRequest` or :class:`.jobs.Job` objects (a view's computation), ``("cancel", generation)`` or
``"quit"``; the server answers ``(kind, generation, payload)`` with kind ``result``, ``failed``, ``cancelled`` or
``progress``, and ``("bye", 0, None)`` before it exits. Before a full run's ``result`` it sends a ``part``: its
main run (:class:`.plan.MainPart`), unless a newer request has come. (Not a preview's: its main run takes a few
milliseconds, and on two cores, drawing it while the sweeps were computed slowed them by as much as it gained,
and a dragged slider's next part took the plots over from the sweeps of the preview before it.) A reader thread
takes requests as they come, so a running computation sees a newer generation and stops at its next chunk; only
the newest request is run. How the server is started: :mod:`.spawn`.
Pickle is safe here: both ends are this program, talking over the pipes of a process it started.

While it waits for its first request, the server computes the default preset (so the window's first
results are ready sooner, and its first run does not pay for cold caches); any other request stops that
at its next chunk. It keeps its last few results, so a request it has answered before is answered at
once (a run is a function of its scenario and quality: the same numbers).

The server never outlives the window: the end of its input (the window closed the pipe, or died) stops
it like ``"quit"``, a computation that has not stopped :data:`STOP_GRACE_S` after either is ended with the
process, and an answer it cannot deliver (the window's end of the pipe is closed) ends it at
once. While the window does not read (it is stopped), the server blocks on its next answer instead of
computing ahead; it never polls, so it uses no CPU while it waits.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import struct
import sys
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, BinaryIO

from ..files.presets import DEFAULT_PRESET, load_preset
from ..model.scenario import Scenario
from ..sim.engine import Cancelled
from .jobs import Job, run_job
from .plan import FULL, GpuSweepCache, MainPart, PlanRequest, PlanResult, Quality, compute_plan

__all__ = [
    "MAX_FRAME_BYTES",
    "FrameError",
    "encode_frame",
    "loads",
    "main",
    "read_frame",
    "read_frame_bytes",
    "write_frame",
]

_HEADER = struct.Struct(">Q")
_COUNT = struct.Struct(">I")
#: Larger frames are a corrupt stream, not a message: refuse them rather than try to allocate them.
MAX_FRAME_BYTES = 1 << 30
#: Results kept for requests that come again: at most this many, holding at most this many bytes of
#: per-trial arrays.
KEEP_RESULTS = 8
KEEP_BYTES = 64 << 20
#: Seconds the server still computes once told to stop (by "quit" or the end of its input) before it exits
#: anyway: a computation stops at its next check, but one that checks rarely (a study file read) must not keep
#: running, orphaned, after the window has gone.
STOP_GRACE_S = 2.0


def encode_frame(obj: object) -> list[bytes | memoryview]:
    """One whole frame, as the pieces to write in turn: the pickle with its length, then the count of its
    out-of-band buffers (protocol 5: numpy arrays' data, not copied into the pickle) and each with its length."""
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    pieces: list[bytes | memoryview] = [_HEADER.pack(len(data)) + data + _COUNT.pack(len(buffers))]
    for b in buffers:
        raw = b.raw()
        pieces += [_HEADER.pack(raw.nbytes), raw]
    return pieces


def write_frame(stream: BinaryIO, obj: object) -> None:
    """Write one frame to a buffered stream (a raw one may write only part of it)."""
    for piece in encode_frame(obj):
        stream.write(piece)
    stream.flush()


def _read_exact(stream: BinaryIO, size: int) -> bytes:
    """``size`` bytes; fewer only at the end of the stream. Unbuffered streams may return short reads."""
    parts, got = [], 0
    while got < size:
        part = stream.read(size - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _read_into(stream: BinaryIO, size: int) -> bytearray:
    """``size`` bytes read straight into a buffer of their own (the interpreter lock is free while the system
    fills it, the memory's first touch included); EOFError if the stream ends first."""
    out = bytearray(size)
    view, got = memoryview(out), 0
    while got < size:
        n = stream.readinto(view[got:])  # type: ignore[attr-defined]
        if not n:
            raise EOFError
        got += n
    return out


class FrameError(ValueError):
    """The stream is corrupt: what follows cannot be split into frames."""


#: A frame read, not unpickled yet: the pickle and its out-of-band buffers (:func:`loads`).
Frame = tuple[bytes, list[bytearray]]


def read_frame_bytes(stream: BinaryIO) -> Frame:
    """The next frame, unread; EOFError when the stream ends, FrameError when it is corrupt."""
    size = _read_size(stream, _HEADER)
    if size > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {size} bytes")
    data = _read_exact(stream, size)
    if len(data) < size:
        raise EOFError
    buffers: list[bytearray] = []
    total = size
    for _ in range(_read_size(stream, _COUNT)):
        size = _read_size(stream, _HEADER)
        total += size
        if total > MAX_FRAME_BYTES:
            raise FrameError(f"frame of over {total} bytes")
        buffers.append(_read_into(stream, size))
    return data, buffers


def _read_size(stream: BinaryIO, header: struct.Struct) -> int:
    head = _read_exact(stream, header.size)
    if len(head) < header.size:
        raise EOFError
    size: int = header.unpack(head)[0]
    return size


def loads(frame: Frame) -> Any:
    """The object of a frame read (its arrays use the frame's buffers: nothing is copied)."""
    return pickle.loads(frame[0], buffers=frame[1])


def read_frame(stream: BinaryIO) -> object:
    """The next object, or raise EOFError when the stream ends."""
    return loads(read_frame_bytes(stream))


class _Gone(Exception):
    """The window's end of the answer pipe is closed: nobody will read another answer."""


class _Inbox:
    """Holds only the newest request; ``latest`` is the newest generation announced (-1 once stopping)."""

    def __init__(self, exit_now: Callable[[int], object] = os._exit, grace_s: float = STOP_GRACE_S) -> None:
        self.cond = threading.Condition()
        self.pending: PlanRequest | Job | None = None
        self.latest = 0
        self.stopping = False
        self._exit_now = exit_now
        self._grace_s = grace_s

    def reader(self, stream: BinaryIO) -> None:
        while not self.stopping:
            try:
                data = read_frame_bytes(stream)
            except (EOFError, OSError, FrameError):  # the window closed the pipe or died: stop
                self.put("quit")
                return
            try:
                msg = loads(data)
            except Exception as exc:
                print(f"compute server: unreadable request ({type(exc).__name__}: {exc})", file=sys.stderr)
                continue
            self.put(msg)

    def put(self, msg: object) -> None:
        with self.cond:
            if isinstance(msg, str) and msg == "quit":
                if not self.stopping:
                    self._end_soon()
                self.stopping = True
                self.latest = -1  # makes a running computation stop at its next chunk
            elif isinstance(msg, tuple) and msg[:1] == ("cancel",):
                self.latest = msg[1]
                self.pending = None
            elif isinstance(msg, (PlanRequest, Job)):
                self.latest = msg.generation
                self.pending = msg
            self.cond.notify()

    def _end_soon(self) -> None:
        """Exit after :data:`STOP_GRACE_S` whatever runs (a normal exit before then ends this daemon thread)."""
        timer = threading.Timer(self._grace_s, self._exit_now, (0,))
        timer.daemon = True
        timer.name = "stop-deadline"
        timer.start()

    def take(self) -> PlanRequest | Job | None:
        """The newest request, waiting for one; None once the server should stop."""
        with self.cond:
            while self.pending is None and not self.stopping:
                self.cond.wait()
            if self.stopping:
                return None
            req, self.pending = self.pending, None
            return req

    def waiting_for(self, scenario: Scenario, quality: Quality) -> bool:
        """Whether nothing but a request for ``scenario`` at ``quality`` is waiting (or nothing at all)."""
        pending = self.pending
        return not self.stopping and (
            pending is None
            or (isinstance(pending, PlanRequest) and pending.scenario == scenario and pending.quality == quality)
        )


class _Answers:
    """Writes answers to the window; a closed pipe raises :class:`_Gone` and stops the inbox."""

    def __init__(self, stream: BinaryIO, inbox: _Inbox) -> None:
        self._stream = stream
        self._inbox = inbox
        self._lock = threading.Lock()

    def send(self, obj: object) -> None:
        with self._lock:
            try:
                write_frame(self._stream, obj)
            except (OSError, ValueError) as exc:  # EPIPE (SIGPIPE is ignored by Python) or a closed stream
                self._inbox.put("quit")
                raise _Gone from exc


def _trial_bytes(res: PlanResult) -> int:
    raw = res.main.trials
    return sum(int(getattr(raw, f.name).nbytes) for f in dataclasses.fields(raw))


class _Results:
    """The last few results, by request (scenario and quality)."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[Scenario, Quality], PlanResult] = OrderedDict()

    def get(self, req: PlanRequest) -> PlanResult | None:
        found = self._items.get((req.scenario, req.quality))
        if found is None:
            return None
        self._items.move_to_end((req.scenario, req.quality))
        return dataclasses.replace(found, request=req, stamps={}, from_cache=True)

    def put(self, res: PlanResult) -> None:
        self._items[(res.request.scenario, res.request.quality)] = res
        while len(self._items) > KEEP_RESULTS or sum(map(_trial_bytes, self._items.values())) > KEEP_BYTES:
            self._items.popitem(last=False)


def _warm_up(inbox: _Inbox, cache: GpuSweepCache, results: _Results) -> None:
    """Compute the default preset while no other request waits: most windows open on it, and a first
    run pays for cold caches (memory pages, code paths) that later runs do not."""
    sc = load_preset(DEFAULT_PRESET)
    try:
        results.put(compute_plan(PlanRequest(sc, FULL), lambda: not inbox.waiting_for(sc, FULL), None, cache))
    except Cancelled:
        pass
    except Exception as exc:  # never fatal: the requests themselves will say what is wrong
        print(f"compute server: warm-up failed ({type(exc).__name__}: {exc})", file=sys.stderr)


def _progress(answers: _Answers, gen: int) -> Callable[[float], None]:
    """Progress of request ``gen`` to the window: a few updates a second are plenty for a progress bar."""
    last = [0.0]

    def progress(f: float) -> None:
        now = time.perf_counter()
        if now - last[0] > 0.1:
            last[0] = now
            answers.send(("progress", gen, f))

    return progress


def _serve_job(job: Job, inbox: _Inbox, answers: _Answers) -> None:
    """A view's computation: its result, or the one line of its failure (a ValueError's text as it is: the
    view shows it to the user)."""
    gen = job.generation
    try:
        value = run_job(job, lambda: inbox.latest != gen, _progress(answers, gen))
    except Cancelled:
        answers.send(("cancelled", gen, None))
    except _Gone:
        raise
    except ValueError as exc:  # inputs the model refuses (a bad file, a value out of range): the user's one line
        answers.send(("failed", gen, (str(exc), "")))
    except Exception as exc:
        answers.send(("failed", gen, (f"{type(exc).__name__}: {exc}", traceback.format_exc())))
    else:
        answers.send(("result", gen, value))


def _serve_one(
    req: PlanRequest | Job, inbox: _Inbox, answers: _Answers, cache: GpuSweepCache, results: _Results
) -> None:
    if isinstance(req, Job):
        _serve_job(req, inbox, answers)
        return
    gen = req.generation
    known = results.get(req)
    if known is not None:
        known.stamps["sent"] = time.perf_counter()
        answers.send(("result", gen, known))
        return
    progress = _progress(answers, gen)

    def main_done(part: MainPart) -> None:
        if inbox.latest == gen:  # (not when the request is out of date: it stops at its next chunk)
            part.stamps["sent"] = time.perf_counter()
            answers.send(("part", gen, part))

    try:
        res = compute_plan(
            req, lambda: inbox.latest != gen, progress, cache, main_done if req.quality.budget_s is None else None
        )
    except Cancelled:
        answers.send(("cancelled", gen, None))
    except _Gone:
        raise
    except Exception as exc:
        answers.send(("failed", gen, (f"{type(exc).__name__}: {exc}", traceback.format_exc())))
    else:
        results.put(res)
        res.stamps["sent"] = time.perf_counter()
        answers.send(("result", gen, res))


#: How much lower than the window's the server's scheduling priority is (Unix niceness added): on a machine of
#: two cores, the window's compute process and those of two spares dialogs computing at once left the window a
#: part of a core, and a repaint of 40 ms took 160. The window is idle but for moments; computing loses little.
NICENESS = 10


def _yield_to_the_window() -> None:
    """Lower this process's priority by :data:`NICENESS` (where the system has niceness)."""
    nice = getattr(os, "nice", None)
    if nice is not None:
        try:
            nice(NICENESS)
        except OSError:
            pass  # (not allowed here: the same priority as the window)


def main() -> int:
    """Serve requests on stdin, answer on stdout; stray prints go to stderr."""
    _yield_to_the_window()
    # Unbuffered input: the reader thread may still be blocked in a read when the interpreter exits,
    # and a buffered reader's lock held at exit can abort the interpreter.
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    answers_stream = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # keep the answer stream clean of anything a library prints
    sys.stdout = sys.stderr
    inbox = _Inbox()
    threading.Thread(target=inbox.reader, args=(requests,), daemon=True, name="requests").start()
    answers = _Answers(answers_stream, inbox)
    cache = GpuSweepCache()
    results = _Results()
    try:
        _warm_up(inbox, cache, results)
        while (req := inbox.take()) is not None:
            _serve_one(req, inbox, answers, cache, results)
        answers.send(("bye", 0, None))
    except _Gone:
        pass  # the window has gone away
    finally:
        try:
            answers_stream.close()
        except OSError:
            pass  # an answer left in the buffer cannot be delivered; say nothing at exit either
    return 0
