"""A spare pool as a purchase: its price's share over the run (or its rent), beside the GPU-hours of today, in the
report's numbers, the totals that rank setups, the sizing and the scenario file."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from planner_gui.core.analysis.results import simulate
from planner_gui.core.analysis.sensitivity import per_trial_days_and_cost
from planner_gui.core.analysis.sizing import sizing
from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict
from planner_gui.core.model.scenario import HOURS_PER_YEAR, Scenario, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.study.worker import total_cost

POOL = Spares(spare_nodes=12, swap_min=10.0)
SC = Scenario(gpus=16_384, days=3.0, trials=60, spares=POOL)


def test_the_pool_costs_its_price_over_its_years_plus_its_rent_or_else_its_gpu_hours():
    bought = dataclasses.replace(POOL, node_price_usd=350_000.0, depreciation_years=4.0)
    assert bought.pool_cost_per_hour(8, 2.5) == pytest.approx(12 * 350_000 / (4 * 8766))
    both = dataclasses.replace(bought, rental_usd_per_node_hour=3.0)
    assert both.pool_cost_per_hour(8, 2.5) == pytest.approx(12 * (350_000 / (4 * HOURS_PER_YEAR) + 3.0))
    assert POOL.pool_cost_per_hour(8, 2.5) == pytest.approx(12 * 8 * 2.5)  # today's: its GPU-hours at the price
    assert Spares().pool_cost_per_hour(8, 2.5) == 0.0  # unlimited spares cost nothing
    assert "written off over 4 years" in bought.pool_basis() and "rented" in both.pool_basis()


def test_the_report_gives_both_and_the_totals_take_the_priced_pool():
    priced = SC.replace(spares=dataclasses.replace(POOL, node_price_usd=300_000.0))
    res = simulate(priced)
    sp = res.to_json_dict()["spares"]
    per_hour = 12 * 300_000 / (5 * HOURS_PER_YEAR)
    assert sp["pool_cost_per_hour_usd"] == pytest.approx(per_hour)
    assert sp["pool_cost_usd"] == pytest.approx(per_hour * SC.hours)
    assert sp["idle_cost_usd"] == pytest.approx(12 * 8 * SC.hours * SC.gpu_hour_cost_usd)  # today's, beside
    assert sp["inputs"]["node_price_usd"] == 300_000.0
    # The window's total (without a training run): its lost GPU-hours at the price plus the pool as priced.
    report = res.to_json_dict()
    assert total_cost(report) == pytest.approx(report["lost_cost_usd"] + per_hour * SC.hours)
    # With a training run: the GPU-hours it holds plus the pool over its days, per trial and in the study's column.
    trained = priced.replace(training=Training(train_flops=None, compute_gpu_hours=16_384 * 24 * 2.0))
    r2 = simulate(trained)
    _, cost = per_trial_days_and_cost(r2)
    hours = r2.time_to_train.hours
    np.testing.assert_allclose(cost, (16_384 * SC.gpu_hour_cost_usd + per_hour) * hours, rtol=1e-12)
    d2 = r2.to_json_dict()
    assert total_cost(d2) == pytest.approx(float(cost.mean()), rel=1e-12)


def test_a_cheaper_pool_moves_the_cheapest_pool_up_and_sizing_shows_its_cost():
    counts = [0, 4, 8, 16, 32]
    dear = sizing(SC, POOL, counts, trials=40)
    cheap_spares = dataclasses.replace(POOL, node_price_usd=1_000.0)  # nearly free spares
    cheap = sizing(SC, cheap_spares, counts, trials=40)
    np.testing.assert_allclose(cheap.pool_cost_usd, np.array(counts) * 1_000.0 / (5 * HOURS_PER_YEAR) * SC.hours)
    np.testing.assert_allclose(dear.pool_cost_usd, np.array(counts) * 8 * SC.hours * SC.gpu_hour_cost_usd)
    lost = dear.lost_gpu_hours * SC.gpu_hour_cost_usd
    np.testing.assert_allclose(dear.total_cost_usd, lost + dear.pool_cost_usd)
    np.testing.assert_allclose(cheap.lost_gpu_hours, dear.lost_gpu_hours)  # the same draws: the price costs only
    assert cheap.cheapest >= dear.cheapest
    assert "pool_cost_usd" in cheap.to_csv().splitlines()[0]


def test_the_scenario_file_keeps_the_prices_and_old_files_read_as_before():
    sc = SC.replace(spares=dataclasses.replace(POOL, node_price_usd=2e5, rental_usd_per_node_hour=1.5))
    doc = scenario_to_dict(sc)
    assert scenario_from_dict(doc) == sc
    plain = scenario_to_dict(SC)
    assert "node_price_usd" not in plain["spares"]  # a file without prices is as it was
    assert scenario_from_dict(plain) == SC
    for key, bad in (("node_price_usd", -5), ("depreciation_years", 0.0), ("rental_usd_per_node_hour", "x")):
        broken = json.loads(json.dumps(doc))
        broken["spares"][key] = bad
        with pytest.raises(ScenarioError, match=f"spares.{key}"):
            scenario_from_dict(broken)


def test_the_price_flags():
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "planner_gui", "run", "--gpus", "16384", "--days", "2", "--trials", "20", *args],
            capture_output=True,
            text=True,
            timeout=300,
        )

    ok = run("--spare-nodes", "12", "--spare-node-price", "300000", "--depreciation-years", "4", "--json")
    assert ok.returncode == 0, ok.stderr
    sp = json.loads(ok.stdout)["spares"]
    assert sp["pool_cost_per_hour_usd"] == pytest.approx(12 * 300_000 / (4 * HOURS_PER_YEAR))
    # The text says the pool as priced, beside its GPU-hours at the price per GPU-hour.
    text = run("--spare-nodes", "12", "--spare-node-price", "300000", "--depreciation-years", "4").stdout
    line = next(x for x in text.splitlines() if x.startswith("Pool as priced"))
    assert f"${12 * 300_000 / (4 * HOURS_PER_YEAR) * 48 / 1e3:.3g} k over the window" in line, line
    assert "written off over 4 years" in line
    assert "Pool as priced" not in run("--spare-nodes", "12").stdout
    for args, words in (
        (("--spare-node-price", "300000"), "--spare-node-price: prices a finite pool"),
        (("--spare-nodes", "12", "--depreciation-years", "4"), "give its price"),
        (("--spare-nodes", "12", "--spare-rental", "-3"), "--spare-rental"),
    ):
        out = run(*args)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and words in out.stderr, (args, out.stderr)
