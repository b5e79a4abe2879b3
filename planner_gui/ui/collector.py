"""Garbage collection on the GUI thread only.

The window runs Python threads beside the GUI thread (the compute link's reader and writer, incident-log fits,
study loading, the spares views). Python's cyclic garbage collector runs in whichever thread happens to
allocate when a threshold is crossed; if that is a worker thread and the garbage holds Qt objects (a closed
dialog, replaced plot items), their C++ destructors run there: Qt's object lock is taken in the worker while
the GUI thread, holding the interpreter lock, waits for it, and both wait for ever (seen as a hung test).
So automatic collection is turned off and the GUI thread collects on a timer instead
(:class:`pyqtgraph.util.garbage_collector.GarbageCollector`, the generations' thresholds kept).
"""

from __future__ import annotations

from pyqtgraph.util.garbage_collector import GarbageCollector

__all__ = ["collect_on_gui_thread"]

_collector: list[GarbageCollector] = []


def collect_on_gui_thread(interval_s: float = 0.5) -> None:
    """From now on, collect cyclic garbage only on the GUI thread (call it there, with a QApplication)."""
    if not _collector:
        _collector.append(GarbageCollector(interval=interval_s))
