"""User files, written and read safely: atomic writes that keep modes and follow links, and the
checks that refuse names and special files before anything blocks or is replaced.

Qt-free and scenario-free: the command line, the scenario files and the window's exports use it.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from .fmt import clean

__all__ = ["FileRefused", "bad_path", "kind_of", "open_regular", "read_limited", "writable_target", "write_atomic"]


class FileRefused(ValueError):
    """A file that is not read: not a regular file, or over the size limit (the message says which)."""


def bad_path(path: Any) -> str | None:
    """Why ``path`` cannot name a file, or None."""
    try:
        text = os.fspath(path)
    except TypeError:
        return f"not a file name ({type(path).__name__})"
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text:
        return "the file name is empty"
    if "\0" in text:
        return "the file name contains a NUL byte"
    return None


def kind_of(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)  # the classic way: set and restore (not thread-safe, hence the above first)
    os.umask(old)
    return old


def writable_target(path: str | os.PathLike[str]) -> tuple[Path, int | None]:
    """Where :func:`write_atomic` would write ``path``, and the mode the file keeps (None for a new file).

    Symbolic links are followed to their target, which is the file replaced. Raises :class:`OSError`
    with a one-line ``strerror`` for a name that cannot be written: an empty name, a NUL byte, a
    missing folder, an existing target that is not a regular file (a device, a FIFO, a directory) or is
    read-only (no write permission for anyone, or for this user), or a loop of links.
    """
    why = bad_path(path)
    if why is not None:
        raise OSError(errno.EINVAL, why)
    p = Path(os.fsdecode(os.fspath(path)))
    target = p
    if p.is_symlink():
        target = Path(os.path.realpath(p))
        if target.is_symlink():  # realpath gives up on a loop and returns a link
            raise OSError(errno.ELOOP, "a loop of symbolic links")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EEXIST, f"it is {kind_of(st.st_mode)}; only regular files are replaced")
    if st is not None and (not st.st_mode & 0o222 or not os.access(target, os.W_OK)):
        # Renaming over it needs only the folder's permission: a file marked read-only would be replaced.
        raise OSError(errno.EACCES, "the file is read-only")
    parent = target.parent
    if not parent.is_dir():
        raise OSError(errno.ENOENT, f"no folder {clean(str(parent), 80)}")
    return target, (stat.S_IMODE(st.st_mode) if st is not None else None)


def write_atomic(path: str | os.PathLike[str], text: str | bytes) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename it over ``path``.

    A symbolic link is followed: its target is replaced and the link kept. An existing file keeps its
    permission bits; a new one gets ``0666 & ~umask``, as any program's new file would. A target that
    is not a regular file (a device, a FIFO, a directory) is refused. Every failure is an
    :class:`OSError` whose ``strerror`` is one line.
    """
    target, mode = writable_target(path)
    if isinstance(text, str):
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise OSError(errno.EILSEQ, f"the text cannot be written as UTF-8 (character {exc.start})") from None
    else:
        data = bytes(text)
    if mode is None:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if not hasattr(os, "fchmod"):
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable; not every system can open a folder
        dfd = os.open(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def open_regular(path: str | os.PathLike[str], limit: int) -> BinaryIO:
    """A regular file of at most ``limit`` bytes, opened for reading (binary, unbuffered reads of the caller's
    size); never blocks on a FIFO or a device. Raises :class:`FileRefused` (a one-line reason without the
    path) or OSError. A file that grows past ``limit`` while it is read is the caller's to catch."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(f"is {kind_of(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise FileRefused(f"file is {st.st_size:,} bytes; the limit is {limit:,}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_limited(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, reading at most ``limit + 1`` (a file that
    grows while read is caught); never blocks on a FIFO or a device. Raises :class:`FileRefused` (a one-line
    reason without the path) or OSError."""
    with open_regular(path, limit) as fh:
        fd = fh.fileno()  # (read unbuffered: never a byte past limit + 1)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, limit + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    if total > limit:
        raise FileRefused(f"file is more than {limit:,} bytes; the limit is {limit:,}")
    return b"".join(chunks)
