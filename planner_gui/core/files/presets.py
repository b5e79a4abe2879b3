"""The shipped presets (planner_gui/core/data/presets): their slugs, titles and scenarios."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from ..model.scenario import Scenario
from ..util.fmt import clean
from .checks import ScenarioError
from .scenario_io import loads

__all__ = ["DEFAULT_PRESET", "load_preset", "preset_names", "preset_titles"]

#: The preset the app and the command line start from.
DEFAULT_PRESET = "llama3-405b"

#: The order of the shipped presets in menus and help: the default first, then the same hardware at
#: larger sizes, other failure rates, other cadences. Presets not listed here follow, by name.
_PRESET_ORDER = (
    DEFAULT_PRESET,
    "h100-100k",
    "h100-100k-inmemory",
    "h100-1m",
    "gb200-nvl72-16k",
    "gb200-nvl72-100k",
    "epoch-100k",
    "bloom-3h-384",
)


def _preset_dir() -> Any:
    return resources.files("planner_gui.core").joinpath("data/presets")


@functools.lru_cache(maxsize=1)
def _preset_slugs() -> tuple[str, ...]:
    found = {f.name[:-5] for f in _preset_dir().iterdir() if f.name.endswith(".json")}
    first = [s for s in _PRESET_ORDER if s in found]
    return (*first, *sorted(found - set(first)))


def preset_names() -> list[str]:
    """Slugs of the shipped presets, the default (:data:`DEFAULT_PRESET`) first, then larger clusters of the
    same hardware, other failure rates and other cadences."""
    return list(_preset_slugs())


def preset_titles() -> dict[str, str]:
    """Each preset's slug and its display name (its file's ``name``), in :func:`preset_names` order."""
    return {slug: load_preset(slug).name for slug in preset_names()}


@functools.cache
def _load_preset(name: str) -> Scenario:
    return loads(_preset_dir().joinpath(f"{name}.json").read_bytes())


def load_preset(name: str) -> Scenario:
    """Load a shipped preset by slug (see :func:`preset_names`)."""
    if not isinstance(name, str) or name not in _preset_slugs():
        shown = clean(name, 40) if isinstance(name, str) else type(name).__name__
        raise ScenarioError(f"preset: unknown preset '{shown}' (available: {', '.join(preset_names())})")
    return _load_preset(name)
