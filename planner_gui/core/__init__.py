"""The compute core: scenario model, exact formulas, Monte Carlo engine, analyses.

Its folders are its layers, top first; each imports only those below it (an import-linter contract and
tests/test_layers.py keep it; docs/development.md, "Layout", says what each holds):

- ``session``: the window's Qt-free services (inputs, plan, jobs, the compute server);
- ``decisions``: goal seek;
- ``study`` and ``incidents``, independent of each other;
- ``analysis``: results, sweeps, time to train, sensitivity, tornado, compare, spares sizing, strategies;
- ``files``: scenario files read, checked and written, presets;
- ``sim``: the general engine and the fast paths shown equal to it;
- ``theory``: closed forms, optima, rates and their posteriors, expectations;
- ``model``: what a scenario is;
- ``util``: formatting, user files, progress, random streams.

This package never imports Qt (a test checks it), so it can run headless, in scripts and in worker processes.
Below are the names most scripts need (``from planner_gui.core import Scenario, simulate``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .analysis.results import SimulationResult, Summary, simulate, summarize
    from .analysis.sweep import SweepResult, sweep_gpus, sweep_interval
    from .files.presets import load_preset, preset_names
    from .files.scenario_io import ScenarioError, load, save
    from .model.scenario import OPTIMAL, Component, Scenario

#: Where each of the names below lives. They are imported when first asked for, so that a module of the package
#: imports only what it needs: the app starts its compute process (:mod:`.session.spawn`) before importing the
#: engine.
_HOMES = {
    ".analysis.results": ("SimulationResult", "Summary", "simulate", "summarize"),
    ".analysis.sweep": ("SweepResult", "sweep_gpus", "sweep_interval"),
    ".files.presets": ("load_preset", "preset_names"),
    ".files.scenario_io": ("ScenarioError", "load", "save"),
    ".model.scenario": ("OPTIMAL", "Component", "Scenario"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name], __name__), name)


__all__ = [
    "OPTIMAL",
    "Component",
    "Scenario",
    "ScenarioError",
    "SimulationResult",
    "Summary",
    "SweepResult",
    "load",
    "load_preset",
    "preset_names",
    "save",
    "simulate",
    "summarize",
    "sweep_gpus",
    "sweep_interval",
]
