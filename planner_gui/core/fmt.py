"""Numbers for people: 16,384; 3.1 h; 91.2%; "one every 3.1 hours"."""

from __future__ import annotations

import math

__all__ = ["count", "percent", "duration_hours", "every", "money", "compact"]


def count(v: float, digits: int = 0) -> str:
    """Thousands separators: ``count(16384) == '16,384'``."""
    return f"{v:,.{digits}f}"


def percent(fraction: float, digits: int = 1) -> str:
    return f"{100.0 * fraction:.{digits}f}%"


def duration_hours(hours: float) -> str:
    """A duration in the largest sensible unit: 45 s, 12 min, 3.1 h, 5.8 years."""
    if not math.isfinite(hours):
        return "never"
    seconds = hours * 3600.0
    if seconds < 90:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    if hours < 1.5:
        return f"{seconds / 60:.0f} min" if seconds >= 600 else f"{seconds / 60:.1f} min"
    if hours < 48:
        return f"{hours:.1f} h"
    if hours < 24 * 365:
        return f"{hours / 24:.1f} days"
    return f"{hours / (24 * 365):.1f} years"


def every(hours: float) -> str:
    """``every(3.09) == 'one every 3.1 hours'``."""
    if not math.isfinite(hours):
        return "none expected"
    text = duration_hours(hours)
    for short, long in ((" s", " seconds"), (" min", " minutes"), (" h", " hours")):
        if text.endswith(short):
            text = text[: -len(short)] + long
            break
    return f"one every {text}"


def compact(v: float) -> str:
    """1.77 M, 12.3 k, 950."""
    a = abs(v)
    for div, suffix in ((1e9, " B"), (1e6, " M"), (1e3, " k")):
        if a >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def money(usd: float) -> str:
    return f"${compact(usd)}"
