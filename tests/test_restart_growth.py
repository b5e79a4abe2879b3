"""A restart that grows with the job (docs/model.md 2.2, "Restart at scale"): max(0, restart_min +
restart_per_log2_gpus_min x log2(GPUs / 16,384)), read from one place by every engine, closed form, sweep, lever and
file."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from planner_gui.cli import main
from planner_gui.core.analysis.results import simulate
from planner_gui.core.analysis.sensitivity import levers
from planner_gui.core.analysis.sweep import sweep_gpus
from planner_gui.core.analysis.tornado import unsure_inputs
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict, validate
from planner_gui.core.model.scenario import Scenario, Tiers, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.sim.capabilities import window_engine

GROWTH = 0.25


def _fixed(sc: Scenario) -> Scenario:
    """The same scenario with its restart at its own size written as a fixed restart (the hand calculation)."""
    at = max(0.0, sc.restart_min + sc.restart_per_log2_gpus_min * math.log2(sc.gpus / 16_384))
    return sc.replace(restart_min=at, restart_per_log2_gpus_min=0.0)


def test_the_restart_at_a_size_is_the_one_at_16k_plus_the_growth_per_doubling_from_there():
    sc = Scenario(restart_min=5.0, restart_per_log2_gpus_min=GROWTH)
    assert sc.restart_at_size_min == 5.0  # at 16,384 GPUs the restart entered: Llama 3's calibration holds
    assert sc.replace(gpus=65_536).restart_at_size_min == pytest.approx(5.5)  # two doublings
    assert sc.replace(gpus=100_000).restart_at_size_min == pytest.approx(5.0 + 0.25 * math.log2(100_000 / 16_384))
    assert sc.replace(gpus=4096).restart_at_size_min == pytest.approx(4.5)  # two halvings
    assert sc.replace(gpus=1024, restart_per_log2_gpus_min=2.0).restart_at_size_min == 0.0  # never below 0
    assert sc.replace(gpus=65_536).recovery_min == pytest.approx(5.0 + 5.5)
    assert Scenario().restart_at_size_min == Scenario().restart_min  # off by default
    big = sc.replace(gpus=100_000)
    assert big.restart_text() == "5.7 min at 100,000 GPUs (5 min at 16,384 + 0.25 min per doubling)"
    assert big.restart_text(short=True) == "5.7 min (+0.25 min per doubling)"
    assert sc.restart_text() == "5 min at 16,384 GPUs (+0.25 min per doubling)"  # at the anchor
    assert Scenario().restart_text() == "5 min"


SCENARIOS = [
    Scenario(gpus=50_000, trials=300, restart_per_log2_gpus_min=GROWTH),  # the renewal engine
    Scenario(gpus=100_000, days=2, trials=200, restart_per_log2_gpus_min=GROWTH, planned_per_day=3.0,
             tiers=dataclasses.replace(load_preset("h100-100k-inmemory").tiers, fast_placement="same-domain"),
             spares=Spares(spare_nodes=89, recovery_mode="continue", swap_min=10.0)),  # the general engine
    Scenario(gpus=65_536, days=2, trials=200, restart_per_log2_gpus_min=1.0,  # a time to train
             training=Training(train_flops=None, compute_gpu_hours=65_536 * 20.0), spares=Spares(spare_nodes=40)),
    load_preset("h100-100k-inmemory").replace(trials=300, restart_per_log2_gpus_min=GROWTH, planned_per_day=0.0),
    load_preset("h100-100k-inmemory").replace(trials=200, restart_per_log2_gpus_min=GROWTH, planned_per_day=6.0),
    Scenario(gpus=100_000, trials=200, restart_per_log2_gpus_min=GROWTH, tiers=Tiers(persistent_upload_min=2.0)),
]  # fmt: skip


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda s: f"{s.gpus}-{window_engine(s).key}")
def test_every_engine_and_closed_form_takes_the_restart_at_the_jobs_size(sc):
    """Growth on gives exactly the numbers of the same scenario with that restart fixed: every number of the run
    (Monte Carlo, exact expectations, optimal intervals, hours, time to train) reads the one restart."""
    validate(sc)
    grown, fixed = simulate(sc).to_json_dict(), simulate(_fixed(sc)).to_json_dict()
    for d in (grown, fixed):
        d.pop("scenario")
    assert grown.pop("restart_at_size_min") == pytest.approx(_fixed(sc).restart_min)  # said only with a growth
    assert grown == fixed
    # and the growth matters: without it the numbers differ
    assert simulate(sc.replace(restart_per_log2_gpus_min=0.0)).to_json_dict()["goodput"] != grown["goodput"]


def test_a_sweep_over_gpus_moves_the_restart_with_the_count():
    sc = Scenario(trials=200, restart_min=5.0, restart_per_log2_gpus_min=1.0)
    counts = [32_768, 131_072, 524_288]
    swept = sweep_gpus(sc, counts)
    for i, n in enumerate(counts):
        alone = simulate(_fixed(sc.replace(gpus=n)))
        assert swept.goodput_expected[i] == pytest.approx(alone.expected.goodput, rel=1e-12)
    flat = sweep_gpus(sc.replace(restart_per_log2_gpus_min=0.0), counts)
    loss = flat.goodput_expected - swept.goodput_expected
    assert np.all(loss > 0) and np.all(np.diff(loss) > 0)  # the larger the job, the more the growth costs


def test_the_file_keeps_the_growth_and_refuses_bad_values():
    sc = Scenario(restart_per_log2_gpus_min=GROWTH)
    doc = scenario_to_dict(sc)
    assert doc["restart_per_log2_gpus_min"] == GROWTH and doc["format_version"] == 2
    assert scenario_from_dict(json.loads(json.dumps(doc))) == sc
    plain = scenario_to_dict(Scenario())
    assert "restart_per_log2_gpus_min" not in plain and plain["format_version"] == 1  # off: today's file
    assert scenario_from_dict({**doc, "restart_per_log2_gpus_min": None}).restart_per_log2_gpus_min == 0.0
    for bad, words in ((-1, "must be a number from 0"), ("fast", "must be a number"), (1e9, "to 1,440")):
        with pytest.raises(ScenarioError, match=words):
            scenario_from_dict({**doc, "restart_per_log2_gpus_min": bad})
    with pytest.raises(ScenarioError, match="needs format_version 2"):
        scenario_from_dict({**plain, "restart_per_log2_gpus_min": GROWTH})


def test_the_flag_sets_it_names_it_and_says_the_restart(capsys):
    assert main(["run", "--gpus", "65536", "--restart-per-log2-gpus", "0.25", "--trials", "50"]) == 0
    out = capsys.readouterr().out
    assert "edited: --gpus 65,536 --restart-per-log2-gpus 0.25" in out
    assert "Restart                  5.5 min at 65,536 GPUs (5 min at 16,384 + 0.25 min per doubling)" in out
    assert main(["run", "--gpus", "65536", "--restart-per-log2-gpus", "0.25", "--trials", "50", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["restart_at_size_min"] == pytest.approx(5.5)
    assert main(["run", "--trials", "50", "--json"]) == 0
    assert "restart_at_size_min" not in json.loads(capsys.readouterr().out)  # off: today's report
    assert main(["run", "--restart-per-log2-gpus", "-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--restart-per-log2-gpus" in err[0] and "Traceback" not in err[0]


def test_a_faster_restart_lever_halves_both_parts_and_the_tornado_varies_the_growth():
    sc = Scenario(restart_per_log2_gpus_min=GROWTH)
    restart = next(lv for lv in levers(sc) if lv.name == "restart")
    changed = restart.apply(sc)
    assert (changed.restart_min, changed.restart_per_log2_gpus_min) == (2.5, GROWTH / 2)
    assert changed.replace(restart_min=sc.restart_min, restart_per_log2_gpus_min=GROWTH) == sc  # only the restart
    keys = [u.key for u in unsure_inputs(sc)]
    assert "restart_per_log2_gpus_min" in keys
    # at 0 (no growth assumed) only given ends bracket it
    assert "restart_per_log2_gpus_min" not in [u.key for u in unsure_inputs(Scenario())]
    given = {u.key: u for u in unsure_inputs(Scenario(), {"restart_per_log2_gpus_min": (0.0, 0.5)})}
    assert (given["restart_per_log2_gpus_min"].low, given["restart_per_log2_gpus_min"].high) == (0.0, 0.5)
    labels = {u.key: u.label for u in unsure_inputs(sc)}
    assert labels["restart_min"] == "restart at 16,384 GPUs"  # with a growth, the restart entered is the anchor's
    assert {u.key: u.label for u in unsure_inputs(Scenario())}["restart_min"] == "restart"
    growth = next(u for u in unsure_inputs(sc) if u.key == "restart_per_log2_gpus_min")
    assert (growth.low, growth.high) == (GROWTH / 2, GROWTH * 2)
    assert growth.at(sc, growth.high).restart_per_log2_gpus_min == GROWTH * 2


def test_off_by_default_every_number_is_todays():
    sc = Scenario(trials=200, tiers=Tiers(persistent_upload_min=2.0))
    assert sc.restart_per_log2_gpus_min == 0.0
    a = simulate(sc).to_json_dict()
    b = simulate(sc.replace(restart_per_log2_gpus_min=0.0)).to_json_dict()
    assert a == b
