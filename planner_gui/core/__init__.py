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
Below are the names most scripts need.
"""

from .analysis.results import SimulationResult, Summary, simulate, summarize
from .analysis.sweep import SweepResult, sweep_gpus, sweep_interval
from .files.presets import load_preset, preset_names
from .files.scenario_io import ScenarioError, load, save
from .model.scenario import OPTIMAL, Component, Scenario

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
