"""The compute core: scenario model, exact formulas, Monte Carlo engine, sweeps.

This package never imports Qt (a test checks it), so it can run headless, in
scripts and in worker threads.
"""

from .analysis.results import SimulationResult, Summary, simulate, summarize
from .analysis.sweep import SweepResult, sweep_gpus, sweep_interval
from .files.scenario_io import ScenarioError, load, load_preset, preset_names, save
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
