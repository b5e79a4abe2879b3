"""Standard output that tells when it cannot be written.

A command's output that cannot be written is an error, not a success: with standard output closed
(``>&-``, where Python leaves ``sys.stdout`` as None and ``print`` says nothing), on a full disk
(``>/dev/full``) or on a failing device, the command says so in one line on stderr and exits with status 1,
as coreutils do. A reader that went away (``| head``) is not an error: the command stops quietly.

:func:`guarded` puts a :class:`GuardedOutput` in ``sys.stdout`` for the length of a command and flushes it
at the end, so that an error in the last, buffered write is caught too; :class:`OutputError` carries the
reason out of wherever the write happened.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["EXIT_OUTPUT", "GuardedOutput", "OutputError", "guarded", "quiet_stdout"]

#: Exit status when the output could not be written.
EXIT_OUTPUT = 1


class OutputError(Exception):
    """Standard output could not be written; ``str(err)`` is the reason (e.g. "No space left on device")."""


def _reason(exc: OSError) -> str:
    return exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))


class GuardedOutput:
    """A stream whose write and flush raise :class:`OutputError` instead of OSError (a broken pipe stays
    BrokenPipeError, which the command line ends quietly); ``inner`` None is a closed standard output."""

    def __init__(self, inner: Any, binary: bool = False) -> None:
        self._inner = inner
        self._binary = binary

    def _closed(self) -> OutputError:
        return OutputError("standard output is closed")

    def write(self, data: Any) -> int:
        if self._inner is None:
            if not data:
                return 0
            raise self._closed()
        try:
            return int(self._inner.write(data))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(_reason(exc)) from None

    def flush(self) -> None:
        if self._inner is None:
            return
        try:
            self._inner.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(_reason(exc)) from None
        except ValueError:  # flushed after it was closed: nothing is waiting
            pass

    @property
    def buffer(self) -> GuardedOutput:
        inner = getattr(self._inner, "buffer", None) if self._inner is not None else None
        if inner is None and self._inner is not None:
            raise AttributeError("buffer")
        return GuardedOutput(inner, binary=True)

    def isatty(self) -> bool:
        try:
            return bool(self._inner is not None and self._inner.isatty())
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, ...
        if self._inner is None:
            raise AttributeError(name)
        return getattr(self._inner, name)


def quiet_stdout() -> None:
    """Point file descriptor 1 at the null device, so that what is still buffered for a reader that went
    away, or for a full disk, does not make Python complain when it flushes at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
        finally:
            os.close(devnull)
    except OSError:
        pass


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """``sys.stdout`` guarded for the length of the block, flushed at its end (a failure raises
    :class:`OutputError`); the stream in force before comes back afterwards, whatever happened."""
    saved = sys.stdout
    guard = GuardedOutput(saved)
    sys.stdout = guard
    try:
        try:
            yield
        except SystemExit:  # (argparse after --help or a usage error: what it printed must reach its reader)
            guard.flush()
            raise
        guard.flush()
    finally:
        sys.stdout = saved
