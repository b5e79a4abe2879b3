"""Uncaught exceptions in the window, on any thread: a log entry each, and one dialog, never silence.

``sys.excepthook`` sees what the window's thread (and Qt's slots) did not catch; ``threading.excepthook``
what a worker thread did not. Both write the traceback to the log and pass one line to the window's thread
through a queued signal (a dialog must never be opened from a worker), where :class:`ErrorDialogs` shows it:
one dialog at a time, and what arrives while one is open is counted in it ("2 more since: see the log"),
so that a fault that repeats cannot bury the window in dialogs.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QWidget

from ..core.util import fmt

__all__ = ["ErrorDialogs", "install_error_dialogs"]

log = logging.getLogger(__name__)

#: The title of the dialog.
TITLE = "planner-gui: unexpected error"


class ErrorDialogs(QObject):
    """Shows uncaught errors reported from any thread, one dialog at a time, on the thread it lives in."""

    reported = Signal(str)

    def __init__(self, log_file: Path | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.log_file = log_file
        self.showing = False
        self.more = 0
        self.shown: list[str] = []  # every text a dialog showed (what tests read)
        self.reported.connect(self._show, Qt.ConnectionType.QueuedConnection)

        self._hooks: tuple[Any, Any, Any, Any] | None = None  # (sys's old, threading's old, ours, ours)

    def uninstall(self) -> None:
        """Put back the hooks in force before :func:`install_error_dialogs` (where they are still ours)."""
        if self._hooks is None:
            return
        old_sys, old_thread, ours_sys, ours_thread = self._hooks
        if sys.excepthook is ours_sys:
            sys.excepthook = old_sys
        if threading.excepthook is ours_thread:
            threading.excepthook = old_thread
        self._hooks = None

    def report(self, exc_type: type[BaseException], exc: BaseException | None, tb: TracebackType | None) -> None:
        """Log the error with its traceback and show it (from any thread)."""
        log.error("unexpected error:\n%s", "".join(traceback.format_exception(exc_type, exc, tb)))
        try:
            self.reported.emit(fmt.clean(f"{exc_type.__name__}: {exc}", 300))
        except RuntimeError:  # the window's objects are gone (shutting down): the log has it
            pass

    @Slot(str)
    def _show(self, text: str) -> None:
        if self.showing:
            self.more += 1
            return
        self.showing = True
        try:
            where = f"\n\nDetails are in {self.log_file}." if self.log_file else ""
            self.shown.append(text)
            parent = self.parent()
            QMessageBox.critical(parent if isinstance(parent, QWidget) else None, TITLE, f"{text}{where}")
        finally:
            self.showing = False
        if self.more:
            n, self.more = self.more, 0
            self._show(f"{n:,} more unexpected error{'s' if n != 1 else ''} since; the log has each")


def install_error_dialogs(log_file: Path | None = None, parent: QObject | None = None) -> ErrorDialogs:
    """Route ``sys.excepthook`` and ``threading.excepthook`` to one :class:`ErrorDialogs`, made here (on the
    window's thread); its :meth:`~ErrorDialogs.uninstall` puts back the hooks that were in force."""
    dialogs = ErrorDialogs(log_file, parent)
    old_sys, old_thread = sys.excepthook, threading.excepthook

    def sys_hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            old_sys(exc_type, exc, tb)
            return
        dialogs.report(exc_type, exc, tb)

    def thread_hook(args: Any) -> None:
        if issubclass(args.exc_type, SystemExit):
            return
        dialogs.report(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = sys_hook
    threading.excepthook = thread_hook
    dialogs._hooks = (old_sys, old_thread, sys_hook, thread_hook)
    return dialogs
