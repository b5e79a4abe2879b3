"""The recovery strategy's optimal intervals: the persistent tier's search on a whole grid at once agrees
with the formula point by point, and remembering the optimum changes nothing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from planner_gui.core.files.presets import load_preset
from planner_gui.core.model.scenario import Tiers
from planner_gui.core.theory.params import _optimal_intervals, optimal_intervals
from planner_gui.core.theory.tiers import (
    _goodput_no_fast,
    _goodput_no_fast_grid,
    _optimal_tier_intervals,
    optimal_tier_intervals,
    tier_params,
)


@pytest.mark.parametrize("preset", ["llama3-405b", "h100-100k", "h100-1m"])
@pytest.mark.parametrize(("upload", "restore", "write"), [(0.0, 0.0, 5.0), (0.85, 2.15, 0.0), (60.0, 0.0, 600.0)])
def test_the_grid_goodput_is_the_formula_at_each_interval(preset, upload, restore, write):
    sc = load_preset(preset).replace(checkpoint_write_s=write)
    tp = tier_params(sc, Tiers(persistent_upload_min=upload, persistent_restore_min=restore), 60.0, 60.0)
    taus = np.geomspace(1e-6, 1e4, 300)
    one_by_one = np.array([_goodput_no_fast(tp, float(t)) for t in taus])
    np.testing.assert_allclose(_goodput_no_fast_grid(tp, taus), one_by_one, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    "tiers",
    [
        Tiers(persistent_upload_min=0.85, persistent_restore_min=2.15),
        Tiers(fast_enabled=True, fast_interval_min=3.0, fast_placement="same-domain"),
        Tiers(fast_enabled=True),
    ],
)
def test_remembered_optima_are_the_optima(tiers):
    sc = load_preset("h100-100k").replace(tiers=tiers)
    for changed in (sc, sc.replace(checkpoint_interval_min=7.0, trials=11, seed=3, name="x"), sc.replace(gpus=50_000)):
        assert optimal_tier_intervals(changed, changed.tiers) == _optimal_tier_intervals(changed, changed.tiers)
        assert optimal_intervals(changed) == _optimal_intervals(changed)
    other = sc.replace(tiers=dataclasses.replace(tiers, fast_interval_min=9.0))
    assert optimal_tier_intervals(other, other.tiers) == _optimal_tier_intervals(other, other.tiers)
