"""The functions of :mod:`scipy.special`, imported when one is first asked for (``special.gammaincc``).

The window's process imports the closed forms and the engine's modules but seldom calls these functions, and
importing scipy.special takes a seventh of a second of the window's start; the compute process imports it with
its first run.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    import scipy.special  # (a plain import statement: the bundle's analysis finds it)

    value = getattr(scipy.special, name)
    globals()[name] = value  # (asked for again: found at once)
    return value
