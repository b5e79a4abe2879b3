"""The callbacks long computations take: ``progress(fraction done)`` and ``should_stop()``."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "StopCheck", "progress_part"]

Progress = Callable[[float], None]
StopCheck = Callable[[], bool]


def progress_part(progress: Progress | None, lo: float, hi: float) -> Progress | None:
    """The progress of one part of a computation, the part from ``lo`` to ``hi`` of the whole (fractions): a part's
    fraction ``f`` is the whole's ``lo + (hi - lo) f``, ``f`` clipped to [0, 1]. None without a ``progress``."""
    if progress is None:
        return None
    report = progress
    return lambda f: report(lo + (hi - lo) * min(max(f, 0.0), 1.0))
