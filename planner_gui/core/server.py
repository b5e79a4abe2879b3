"""The compute server: a child process that runs :func:`.plan.compute_plan` for the window.

Protocol (both directions): frames of an 8-byte big-endian length followed by a pickle. The parent
sends :class:`.plan.PlanRequest` objects, ``("cancel", generation)`` or ``"quit"``; the server answers
``(kind, generation, payload)`` with kind ``result``, ``failed``, ``cancelled`` or ``progress``, and
``("bye", 0, None)`` before it exits. A reader thread takes requests as they come, so a running
computation sees a newer generation and stops at its next chunk; only the newest request is run.
Pickle is safe here: both ends are this program, talking over the pipes of a process it started.

The server never outlives the window: the end of its input (the window closed the pipe, or died) stops
it like ``"quit"``, and an answer it cannot deliver (the window's end of the pipe is closed) ends it at
once. While the window does not read (it is stopped), the server blocks on its next answer instead of
computing ahead; it never polls, so it uses no CPU while it waits.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import threading
import time
import traceback
from typing import BinaryIO

from .engine import Cancelled
from .plan import GpuSweepCache, PlanRequest, compute_plan

__all__ = [
    "MAX_FRAME_BYTES",
    "SERVE_ARG",
    "FrameError",
    "encode_frame",
    "main",
    "read_frame",
    "read_frame_bytes",
    "write_frame",
]

#: The command-line argument that turns ``planner-gui`` into this server.
SERVE_ARG = "_compute-server"
_HEADER = struct.Struct(">Q")
#: Larger frames are a corrupt stream, not a message: refuse them rather than try to allocate them.
MAX_FRAME_BYTES = 1 << 30


def encode_frame(obj: object) -> bytes:
    """One whole frame: the length header and the pickle."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def write_frame(stream: BinaryIO, obj: object) -> None:
    """Write one frame to a buffered stream (a raw one may write only part of it)."""
    stream.write(encode_frame(obj))
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


class FrameError(ValueError):
    """The stream is corrupt: what follows cannot be split into frames."""


def read_frame_bytes(stream: BinaryIO) -> bytes:
    """The next frame's pickle, unread; EOFError when the stream ends, FrameError when it is corrupt."""
    head = _read_exact(stream, _HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(head)[0]
    if size > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {size} bytes")
    data = _read_exact(stream, size)
    if len(data) < size:
        raise EOFError
    return data


def read_frame(stream: BinaryIO) -> object:
    """The next object, or raise EOFError when the stream ends."""
    return pickle.loads(read_frame_bytes(stream))


class _Gone(Exception):
    """The window's end of the answer pipe is closed: nobody will read another answer."""


class _Inbox:
    """Holds only the newest request; ``latest`` is the newest generation announced (-1 once stopping)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.pending: PlanRequest | None = None
        self.latest = 0
        self.stopping = False

    def reader(self, stream: BinaryIO) -> None:
        while not self.stopping:
            try:
                data = read_frame_bytes(stream)
            except (EOFError, OSError, FrameError):  # the window closed the pipe or died: stop
                self.put("quit")
                return
            try:
                msg = pickle.loads(data)
            except Exception as exc:
                print(f"compute server: unreadable request ({type(exc).__name__}: {exc})", file=sys.stderr)
                continue
            self.put(msg)

    def put(self, msg: object) -> None:
        with self.cond:
            if isinstance(msg, str) and msg == "quit":
                self.stopping = True
                self.latest = -1  # makes a running computation stop at its next chunk
            elif isinstance(msg, tuple) and msg[:1] == ("cancel",):
                self.latest = msg[1]
                self.pending = None
            elif isinstance(msg, PlanRequest):
                self.latest = msg.generation
                self.pending = msg
            self.cond.notify()

    def take(self) -> PlanRequest | None:
        """The newest request, waiting for one; None once the server should stop."""
        with self.cond:
            while self.pending is None and not self.stopping:
                self.cond.wait()
            if self.stopping:
                return None
            req, self.pending = self.pending, None
            return req


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


def _serve_one(req: PlanRequest, inbox: _Inbox, answers: _Answers, cache: GpuSweepCache) -> None:
    gen = req.generation
    last = [0.0]

    def progress(f: float) -> None:
        now = time.perf_counter()
        if now - last[0] > 0.1:  # a few updates a second are plenty for a progress bar
            last[0] = now
            answers.send(("progress", gen, f))

    try:
        res = compute_plan(req, lambda: inbox.latest != gen, progress, cache)
    except Cancelled:
        answers.send(("cancelled", gen, None))
    except _Gone:
        raise
    except Exception as exc:
        answers.send(("failed", gen, (f"{type(exc).__name__}: {exc}", traceback.format_exc())))
    else:
        answers.send(("result", gen, res))


def main() -> int:
    """Serve requests on stdin, answer on stdout; stray prints go to stderr."""
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
    try:
        while (req := inbox.take()) is not None:
            _serve_one(req, inbox, answers, cache)
        answers.send(("bye", 0, None))
    except _Gone:
        pass  # the window has gone away
    finally:
        try:
            answers_stream.close()
        except OSError:
            pass  # an answer left in the buffer cannot be delivered; say nothing at exit either
    return 0
