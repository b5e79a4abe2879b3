"""Spares in scenarios: the file's spares section, its validation, the run through ``results.simulate`` (so
the window's plan shows it), ``run --save`` with spares flags, and today's numbers when the spares change
nothing."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from planner_gui.cli import main
from planner_gui.core.analysis.results import HOURS_KEYS, simulate
from planner_gui.core.analysis.sizing import check_spares_fit, run_spares
from planner_gui.core.analysis.sweep import at_gpus, sweep_gpus
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, dumps, load, loads, scenario_to_dict
from planner_gui.core.model.scenario import Scenario, Tiers
from planner_gui.core.model.spares import Spares
from planner_gui.core.session.plan import FULL, PREVIEW, PlanRequest, compute_plan


def test_spares_that_change_nothing_give_todays_numbers_exactly():
    sc = load_preset("h100-100k").replace(trials=200)
    today = simulate(sc).to_json_dict()
    for spares in (
        None,
        Spares(),
        Spares(repair_hours=(("GPU", 5.0),), repair_sigma=1.0, min_gpus=50_000, replica_gpus=4096),
    ):
        again = simulate(sc.replace(spares=spares))
        assert again.spares_run is None and again.hours_keys == HOURS_KEYS
        d = again.to_json_dict()
        for key in today:
            if key != "scenario":
                assert d[key] == today[key], key
        assert "spares" not in d
    assert scenario_to_dict(sc)["format_version"] == 1


def test_the_spares_section_round_trips_as_version_2():
    sp = Spares(
        spare_nodes=89,
        swap_min=10.0,
        repair_hours=(("GPU", 24.0), ("Network", 2.0)),
        repair_sigma=0.8,
        min_gpus=None,
        recovery_mode="continue",
        replica_gpus=2048,
        continue_stall_min=2.5,
        max_replicas_lost=2,
    )
    sc = Scenario(gpus=100_000, spares=sp)
    doc = scenario_to_dict(sc)
    assert doc["format_version"] == 2
    assert doc["spares"]["repair_hours"] == {"GPU": 24.0, "Network": 2.0}
    assert loads(dumps(sc)) == sc
    unlimited = Scenario(spares=Spares(swap_min=3.0))
    assert scenario_to_dict(unlimited)["spares"]["spare_nodes"] is None
    assert loads(dumps(unlimited)) == unlimited


def _doc(**spares: object) -> str:
    doc = scenario_to_dict(Scenario(gpus=16_384, spares=Spares(spare_nodes=8, swap_min=5.0)))
    doc["spares"].update(spares)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"spare_nodes": -1}, "spares.spare_nodes: must be a whole number from 0 to 10,000,000 (got -1)"),
        ({"spare_nodes": 2.5}, "spares.spare_nodes: must be a whole number"),
        ({"swap_min": None}, "spares.swap_min: must be a number from 0 to 100,000 (got null)"),
        ({"repair_hours": {"GPU": -1}}, "spares.repair_hours.GPU: must be a number from 0 to 100,000 (got -1)"),
        ({"repair_hours": {"Cosmic": 3}}, "spares.repair_hours.Cosmic: no such category"),
        ({"repair_hours": [1, 2]}, "spares.repair_hours: must be an object"),
        ({"repair_sigma": 9}, "spares.repair_sigma: must be a number from 0 to 4 (got 9)"),
        ({"min_gpus": 20_000}, "spares.min_gpus: must not exceed the job's 16,384 GPUs (got 20,000)"),
        ({"recovery_mode": "pray"}, "spares.recovery_mode: must be one of restart, continue"),
        ({"recovery_mode": "continue", "replica_gpus": 12}, "spares.replica_gpus: must be a whole number of 8-GPU"),
        ({"recovery_mode": "continue", "replica_gpus": 32_768}, "spares.replica_gpus: must not exceed"),
        ({"max_replicas_lost": -2}, "spares.max_replicas_lost: must be a whole number from 0"),
        ({"continue_stall_min": 1e9}, "spares.continue_stall_min: must be a number from 0 to 10,000"),
        ({"extra": 1}, "spares.extra: unknown key"),
    ],
)
def test_bad_spares_are_refused_in_one_line(changes, message):
    with pytest.raises(ScenarioError) as err:
        loads(_doc(**changes))
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("changes", "flags"),
    [
        ({"spare_nodes": 8, "min_gpus": 20_000}, ["--spare-nodes", "8", "--shrink-to", "20000"]),
        (
            {"recovery_mode": "continue", "replica_gpus": 12},
            ["--recovery-mode", "continue", "--replica-gpus", "12"],
        ),
        (
            {"recovery_mode": "continue", "replica_gpus": 32_768},
            ["--recovery-mode", "continue", "--replica-gpus", "32768"],
        ),
    ],
)
def test_a_pool_that_does_not_fit_its_job_is_worded_once_for_files_and_flags(changes, flags, capsys):
    """One check of a pool against its job: a scenario file names the field (spares.min_gpus), a flag names
    itself (--shrink-to), and what follows is the same words."""
    with pytest.raises(ScenarioError) as err:
        loads(_doc(**changes))
    field, _, why = str(err.value).partition(": ")
    assert field.startswith("spares.") and why
    assert main(["run", "--gpus", "16384", "--trials", "4", *flags]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line == f"planner-gui: error: {flags[-2]}: {why}"


def test_a_missing_key_is_refused_and_every_other_model_combines():
    doc = json.loads(_doc())
    del doc["spares"]["swap_min"]
    with pytest.raises(ScenarioError, match=r"^spares.swap_min: missing$"):
        loads(json.dumps(doc))
    # Every other part of the model combines with a pool: uncertain rates, a profile, a new cluster, tiers.
    doc = json.loads(_doc())
    doc["rate_uncertainty"] = True
    doc["rate_profile"] = [[0, 3.0], [10, 1.0]]
    doc["new_cluster"] = True
    doc["tiers"] = scenario_to_dict(Scenario(tiers=Tiers(fast_enabled=True, persistent_restore_min=2.15)))["tiers"]
    sc = loads(json.dumps(doc))
    assert sc.rate_uncertainty and sc.new_cluster and sc.uses_tiers and sc.uses_spares
    check_spares_fit(Scenario(tiers=Tiers(fast_enabled=True, persistent_restore_min=1.0)), Spares(spare_nodes=4))
    # What the one table refuses: shrinking while continuing on replicas, in its words.
    doc = json.loads(_doc(recovery_mode="continue", min_gpus=8000))
    with pytest.raises(ScenarioError, match=r"^spares.min_gpus: shrinking applies in restart mode"):
        loads(json.dumps(doc))


def test_simulate_runs_the_spares_engine_with_a_finite_pool():
    sp = Spares(spare_nodes=4, swap_min=10.0)
    sc = Scenario(gpus=16_384, trials=120, spares=sp)
    res = simulate(sc)
    direct = run_spares(sc, sp)
    assert res.spares_run is not None
    np.testing.assert_array_equal(res.goodput, direct.goodput)
    assert res.hours_keys == (*HOURS_KEYS, "waiting_for_spares")
    hours = res.hours_per_trial()
    total = sum(hours.values())
    np.testing.assert_allclose(total, sc.hours, rtol=1e-9)
    assert hours["waiting_for_spares"].mean() > 0
    # Interruptions by component add up to the trial's interruptions, and their means follow the rates.
    np.testing.assert_array_equal(res.trials.by_component.sum(axis=1), res.trials.unplanned)
    d = res.to_json_dict()
    assert d["spares"]["idle_gpu_hours"] == 4 * 8 * sc.hours
    assert d["goodput_expected"] is None and d["goodput_expected_at_optimal_interval"] is None
    assert d["scenario"]["spares"]["spare_nodes"] == 4
    rates = np.array([c.rate_per_gpu_hour for c in sc.components]) * sc.gpus * sc.hours
    by = res.trials.by_component
    z = (by.mean(axis=0) - rates) / np.sqrt(rates / by.shape[0])
    assert np.all(np.abs(z[rates > 0]) < 4.5)


def test_continue_mode_shows_reduced_throughput():
    sc = Scenario(gpus=16_384, trials=60, spares=Spares(spare_nodes=2, recovery_mode="continue"))
    res = simulate(sc)
    assert res.hours_keys == (*HOURS_KEYS, "reduced_throughput")
    assert res.hours_per_trial()["reduced_throughput"].mean() > 0


def test_nodes_in_repair_over_time_follow_m_g_infinity():
    # Stationary from the start: the mean at every moment is the node-loss rate x mean repair time.
    sc = Scenario(gpus=100_000, trials=300, spares=Spares(spare_nodes=89, swap_min=10.0))
    run = simulate(sc).spares_run
    assert run is not None
    over = run.trials.repair_over_time
    assert over is not None and over.shape == (300, len(run.trials.repair_grid))
    expected = run.params.mean_nodes_in_repair
    # Poisson at each moment: variance = mean; 49 moments of 300 trials each.
    z = (over.mean(axis=0) - expected) / np.sqrt(expected / over.shape[0])
    assert np.abs(z).max() < 4.5
    assert abs(over.mean() - run.trials.nodes_in_repair.mean()) < 0.5


def test_the_windows_plan_shows_spares(tmp_path):
    sc = Scenario(gpus=16_384, trials=60, spares=Spares(spare_nodes=2, swap_min=10.0))
    for q in (PREVIEW, FULL):
        res = compute_plan(PlanRequest(sc.replace(trials=30), q))
        assert res.main.spares_run is not None
        assert res.window_fraction == 1.0
        assert np.all(np.isnan(res.exact_curve[1]))
    today = compute_plan(PlanRequest(sc.replace(spares=None, trials=30), PREVIEW))
    assert res.main.goodput.mean() < today.main.goodput.mean()


def test_a_gpu_sweep_keeps_the_pool_and_fits_replicas_and_floors():
    sp = Spares(spare_nodes=8, min_gpus=8000, recovery_mode="restart", replica_gpus=4096)
    sc = Scenario(gpus=16_384, trials=20, spares=sp)
    cont = at_gpus(sc.replace(spares=dataclasses.replace(sp, recovery_mode="continue", min_gpus=None)), 2048)
    assert cont.spares is not None and cont.spares.replica_gpus == 2048
    small = at_gpus(sc, 2048)
    assert small.spares is not None  # the pool keeps its share of the nodes (8 of 2,048: 1 of 256)
    assert small.spares.spare_nodes == 1 and small.spares.min_gpus == 2048
    fixed = at_gpus(sc, 2048, fixed_pool=True)
    assert fixed.spares is not None and fixed.spares.spare_nodes == 8
    res = sweep_gpus(sc, [2048, 16_384])
    direct = simulate(sc)
    assert res.goodput_mean[1] == pytest.approx(direct.goodput.mean(), rel=1e-12)


def test_run_saves_the_spares_flags_and_the_file_runs_the_same(tmp_path, capsys):
    path = tmp_path / "s.json"
    argv = ["run", "--gpus", "16384", "--trials", "40", "--spare-nodes", "4", "--swap", "10", "--json"]
    assert main([*argv, "--save", str(path)]) == 0
    first = json.loads(capsys.readouterr().out)
    saved = load(path)
    assert saved.spares == Spares(spare_nodes=4, swap_min=10.0)
    assert main(["run", "--scenario", str(path), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["goodput"] == first["goodput"] and again["spares"] == first["spares"]
    # A flag changes the file's section; unlimited spares without swap is today's run.
    assert main(["run", "--scenario", str(path), "--swap", "0", "--spare-nodes", "unlimited", "--json"]) == 0
    today = json.loads(capsys.readouterr().out)
    assert "spares" not in today and today["goodput_expected"] is not None


def test_a_preview_with_spares_sweeps_half_as_many_points_over_the_same_range():
    """A preview with spares keeps to its time with about half the sweep points, over the same GPU and
    interval range (the full run has them all); without spares a preview keeps every point."""
    from planner_gui.core.session.plan import FULL, PREVIEW, PlanRequest, compute_plan

    sc = Scenario(gpus=16_384, trials=20, days=5.0).replace(spares=Spares(spare_nodes=4, swap_min=10))
    preview = compute_plan(PlanRequest(sc, PREVIEW))
    full = compute_plan(PlanRequest(sc.replace(trials=8), FULL))
    assert len(preview.by_gpus.x) == (PREVIEW.gpu_points + 1) // 2 and len(full.by_gpus.x) == FULL.gpu_points
    assert len(preview.by_interval.x) == (PREVIEW.interval_points + 1) // 2
    assert preview.by_gpus.x[[0, -1]].tolist() == full.by_gpus.x[[0, -1]].tolist()
    assert preview.by_interval.x[[0, -1]].tolist() == pytest.approx(full.by_interval.x[[0, -1]].tolist())
    plain = compute_plan(PlanRequest(sc.replace(spares=None), PREVIEW))
    assert len(plain.by_gpus.x) == PREVIEW.gpu_points


def test_a_finite_pool_is_a_pool_of_a_given_size_only():
    sc = Scenario()
    assert not sc.finite_pool  # no spares at all
    assert not sc.replace(spares=Spares(spare_nodes=None, swap_min=5.0)).finite_pool  # an unlimited pool
    assert not sc.replace(spares=Spares(spare_nodes=None, recovery_mode="continue", min_gpus=sc.gpus // 2)).finite_pool
    assert sc.replace(spares=Spares(spare_nodes=0)).finite_pool  # none ready is still a pool of a size
    assert sc.replace(spares=Spares(spare_nodes=64)).finite_pool
