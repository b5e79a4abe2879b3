"""Where the hours of one interval between interruptions go: downtime, compute, writes, lost work."""

from __future__ import annotations

import numpy as np

__all__ = ["HoursAccumulator", "interval_parts"]


def interval_parts(
    g: np.ndarray, down: np.ndarray, saved: np.ndarray, lo: np.ndarray, hi: np.ndarray, tau: float, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hours of (downtime, useful, checkpoint, lost) within ``[lo, hi]`` of intervals between interruptions.

    An interval of length ``g`` starts with ``down`` hours of downtime, then runs segments of ``tau``
    compute plus ``c`` write. If the interruption that ends it is planned (``saved``), the work in
    progress is kept; otherwise it is lost. ``lo``/``hi`` are offsets from the interval's start.
    """
    s = tau + c
    complete = np.floor(np.maximum(g - down, 0.0) / s)

    def cumulative(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        y = np.maximum(x - down, 0.0)
        k = np.minimum(np.floor(y / s), complete)
        w = np.maximum(y - k * s, 0.0)
        keep = (k < complete) | saved
        useful = k * tau + np.where(keep, np.minimum(w, tau), 0.0)
        write = k * c + np.where(keep, np.maximum(w - tau, 0.0), 0.0)
        return np.minimum(x, down), useful, write

    d1, u1, w1 = cumulative(hi)
    d0, u0, w0 = cumulative(lo)
    dt, ut, wt = d1 - d0, u1 - u0, w1 - w0
    return dt, ut, wt, np.maximum((hi - lo) - dt - ut - wt, 0.0)


class HoursAccumulator:
    """Sums of hours per row (trial or sub-window; per trial for the edges), filled chunk by chunk."""

    def __init__(self, rows: int) -> None:
        self.useful = np.zeros(rows)
        self.checkpoint = np.zeros(rows)
        self.lost = np.zeros(rows)
        self.recovery = np.zeros(rows)
        self.planned = np.zeros(rows)

    def reorder(self, index: np.ndarray) -> None:
        """Rearrange the rows: row ``k`` becomes the old row ``index[k]``."""
        for name in ("useful", "checkpoint", "lost", "recovery", "planned"):
            setattr(self, name, getattr(self, name)[index])

    def add(self, idx: np.ndarray, parts: tuple[np.ndarray, ...], starts_planned: np.ndarray) -> None:
        """Add the parts of intervals between interruptions to their rows (``idx``, one per interval),
        and their downtime to recovery or planned restart by ``starts_planned``; ``idx`` must keep each
        row's entries together (a row may also appear in several calls)."""
        if not len(idx):
            return
        first = np.flatnonzero(np.concatenate(([True], idx[1:] != idx[:-1])))
        rows = idx[first]
        dt, ut, wt, lt = parts
        planned_dt = dt * starts_planned  # multiplying by a mask beats np.where on random masks
        self.useful[rows] += np.add.reduceat(ut, first)
        self.checkpoint[rows] += np.add.reduceat(wt, first)
        self.lost[rows] += np.add.reduceat(lt, first)
        self.recovery[rows] += np.add.reduceat(dt - planned_dt, first)
        self.planned[rows] += np.add.reduceat(planned_dt, first)
