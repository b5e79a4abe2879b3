"""The compute server: a child process that runs :func:`.plan.compute_plan` for the window.

Protocol (both directions): frames of an 8-byte big-endian length followed by a pickle. The parent
sends :class:`.plan.PlanRequest` objects, ``("cancel", generation)`` or ``"quit"``; the server answers
``(kind, generation, payload)`` with kind ``result``, ``failed``, ``cancelled`` or ``progress``, and
``("bye", 0, None)`` before it exits. A reader thread takes requests as they come, so a running
computation sees a newer generation and stops at its next chunk; only the newest request is run.
Pickle is safe here: both ends are this program, talking over the pipes of a process it started.
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

__all__ = ["main", "read_frame", "write_frame", "SERVE_ARG"]

#: The command-line argument that turns ``planner-gui`` into this server.
SERVE_ARG = "_compute-server"
_HEADER = struct.Struct(">Q")


def write_frame(stream: BinaryIO, obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: BinaryIO) -> object:
    """The next object, or raise EOFError when the stream ends."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class _Inbox:
    """Holds only the newest request; ``latest`` is the newest generation announced."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.pending: PlanRequest | None = None
        self.latest = 0
        self.stopping = False

    def reader(self, stream: BinaryIO) -> None:
        while True:
            try:
                msg = read_frame(stream)
            except (EOFError, OSError, pickle.UnpicklingError):
                msg = "quit"
            with self.cond:
                if msg == "quit":
                    self.stopping = True
                    self.latest = -1
                elif isinstance(msg, tuple) and msg[0] == "cancel":
                    self.latest = msg[1]
                    self.pending = None
                elif isinstance(msg, PlanRequest):
                    self.latest = msg.generation
                    self.pending = msg
                self.cond.notify()
            if self.stopping:
                return

    def take(self) -> PlanRequest | None:
        with self.cond:
            while self.pending is None and not self.stopping:
                self.cond.wait()
            if self.stopping:
                return None
            req, self.pending = self.pending, None
            return req


def main() -> int:
    """Serve requests on stdin, answer on stdout; stray prints go to stderr."""
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # keep the answer stream clean of anything a library prints
    sys.stdout = sys.stderr
    inbox = _Inbox()
    threading.Thread(target=inbox.reader, args=(requests,), daemon=True, name="requests").start()
    cache = GpuSweepCache()
    lock = threading.Lock()

    def send(obj: object) -> None:
        with lock:
            write_frame(answers, obj)

    try:
        while True:
            req = inbox.take()
            if req is None:
                break
            gen = req.generation
            last = [0.0]

            def progress(f: float, gen: int = gen) -> None:
                now = time.perf_counter()
                if now - last[0] > 0.1:  # a few updates a second are plenty for a progress bar
                    last[0] = now
                    send(("progress", gen, f))

            try:
                res = compute_plan(req, lambda gen=gen: inbox.latest != gen, progress, cache)
            except Cancelled:
                send(("cancelled", gen, None))
                continue
            except Exception as exc:  # report with details for the log, and keep serving
                send(("failed", gen, (f"{type(exc).__name__}: {exc}", traceback.format_exc())))
                continue
            send(("result", gen, res))
        send(("bye", 0, None))
    except (BrokenPipeError, OSError):
        pass  # the window has gone away
    return 0
