"""Recovery tiers in scenarios: the file format, validation, the run's results and JSON, the preset."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from planner_gui.core.analysis.results import simulate
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, dumps, loads, scenario_to_dict
from planner_gui.core.model.scenario import Component, Scenario, Tiers
from planner_gui.core.model.tiers import DEFAULT_SCOPES
from planner_gui.core.sim.tiers_run import plan_tiers
from planner_gui.core.theory.exact import time_fractions

Z = 4.0


def test_a_scenario_without_the_new_parts_gives_todays_numbers_exactly():
    sc = load_preset("h100-100k").replace(trials=300)
    today = simulate(sc).to_json_dict()
    for tiers in (None, Tiers(), Tiers(fast_placement="same-domain", nodes_per_domain=7)):
        again = simulate(sc.replace(tiers=tiers)).to_json_dict()
        for key in today:
            if key != "scenario":
                assert again[key] == today[key], key
    assert today["restores"] == {"fast": 0.0, "persistent": today["interruptions"]["mean"]}
    assert today["optimal_interval_min"]["fast"] is None
    assert today["optimal_interval_min"]["persistent"] == today["optimal_interval_min"]["exact"]
    assert "tiers" not in today
    assert scenario_to_dict(sc)["format_version"] == 1


def test_tiers_and_scopes_round_trip_as_version_2_and_version_1_still_reads():
    comps = list(Scenario().components)
    comps[0] = dataclasses.replace(comps[0], scope="domain")
    sc = Scenario(components=tuple(comps), tiers=Tiers(fast_enabled=True, persistent_upload_min=2.0))
    doc = scenario_to_dict(sc)
    assert doc["format_version"] == 2 and doc["components"][0]["scope"] == "domain"
    assert "scope" not in doc["components"][1]
    assert doc["tiers"]["fast_restore_min"] == Tiers().fast_restore_min
    assert loads(dumps(sc)) == sc
    v1 = scenario_to_dict(Scenario())
    assert loads(json.dumps(v1)) == Scenario()
    v1["tiers"] = doc["tiers"]
    with pytest.raises(ScenarioError, match=r"^tiers: needs format_version 2 \(this file says 1\)$"):
        loads(json.dumps(v1))


def _with_tiers(**changes):
    doc = scenario_to_dict(Scenario(gpus=64, tiers=Tiers(fast_enabled=True)))
    doc["tiers"].update(changes)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"fast_stall_s": -1}, "tiers.fast_stall_s: must be a number from 0 to 86,400"),
        ({"fast_interval_min": "soon"}, "tiers.fast_interval_min: must be 'optimal' or a number"),
        ({"fast_interval_min": 0}, "tiers.fast_interval_min: must be 'optimal' or a number from 0.01"),
        ({"fast_replicas": 1.5}, "tiers.fast_replicas: must be a whole number"),
        ({"fast_placement": "elsewhere"}, "tiers.fast_placement: must be one of same-domain, other-domain"),
        ({"nodes_per_domain": 0}, "tiers.nodes_per_domain: must be a whole number from 1"),
        ({"persistent_upload_min": float("1e9")}, "tiers.persistent_upload_min: must be a number from 0 to 10,080"),
        ({"fast_enabled": "yes"}, "tiers.fast_enabled: must be true or false"),
        ({"fast_replicas": 3, "fast_placement": "same-domain", "nodes_per_domain": 2}, "room for 1 replica on its"),
        ({"fast_replicas": 1, "fast_placement": "same-domain", "nodes_per_domain": 1}, "1 node has no other node for"),
        ({"nodes_per_domain": 5000}, "other-domain needs two failure domains"),
        ({"fast_replicas": 60, "nodes_per_domain": 1}, "60 replicas of it need 61 nodes; the job has 8"),
    ],
)
def test_bad_tiers_are_refused_in_one_line(changes, message):
    with pytest.raises(ScenarioError, match=message) as err:
        loads(_with_tiers(**changes))
    assert "\n" not in str(err.value)


def test_bad_scope_and_missing_keys_are_refused():
    doc = scenario_to_dict(Scenario(tiers=Tiers()))
    doc["components"][0]["scope"] = "rack"
    with pytest.raises(ScenarioError, match=r"components\[0\].scope: must be one of process, node, domain"):
        loads(json.dumps(doc))
    doc = scenario_to_dict(Scenario(tiers=Tiers()))
    del doc["tiers"]["nodes_per_domain"]
    with pytest.raises(ScenarioError, match=r"tiers\.nodes_per_domain: missing$"):
        loads(json.dumps(doc))
    doc["tiers"] = {"fast_enabled": True}  # a section written by hand: every key it lacks, at once
    with pytest.raises(
        ScenarioError, match=r"^tiers\.fast_interval_min: missing, with fast_stall_s, .* and 2 more \(each is needed\)$"
    ):
        loads(json.dumps(doc))
    doc = scenario_to_dict(Scenario(tiers=Tiers()))
    doc["format_version"] = 1  # the sections came with version 2
    with pytest.raises(ScenarioError, match=r"^tiers: needs format_version 2 \(this file says 1\)$"):
        loads(json.dumps(doc))
    both = Scenario(tiers=Tiers(fast_enabled=True), rate_uncertainty=True)  # (every part combines with every other)
    assert loads(dumps(both)) == both


def test_every_llama3_cause_has_its_scope_in_the_data_file():
    assert {c.name for c in Scenario().components} == set(DEFAULT_SCOPES)
    assert sum(s == "domain" for s, _ in DEFAULT_SCOPES.values()) == 1


def test_the_run_reports_tiers_and_agrees_with_the_closed_form():
    """The in-memory preset: every failure restores from the fast tier (replicas in another domain), so
    the exact goodput is today's formula with the fast interval, stall and restore, and the restore a planned
    interruption keeps when it comes in a failure's downtime (docs/model.md 2.4)."""
    sc = load_preset("h100-100k-inmemory").replace(trials=400)
    res = simulate(sc)
    d = res.to_json_dict()
    plan = plan_tiers(sc)
    lam = sc.failure_rate_per_hour
    r_fast = (sc.detect_min + sc.restart_min + sc.tiers.fast_restore_min) / 60.0
    mu, tau, c = sc.planned_per_day / 24.0, plan.fast_min / 60.0, sc.tiers.fast_stall_s / 3600.0
    f = time_fractions(lam, mu, tau, c, r_fast, sc.restart_min / 60.0, sc.tiers.fast_restore_min / 60.0)
    assert d["goodput_expected"] == pytest.approx(float(f.useful), rel=1e-12)
    z = (d["goodput"]["mean"] - d["goodput_expected"]) / d["goodput"]["sem"]
    assert abs(z) < Z
    assert d["restores"]["persistent"] == 0.0
    assert d["restores"]["fast"] == pytest.approx(d["interruptions"]["mean"])
    assert d["optimal_interval_min"]["fast"] == pytest.approx(plan.optimal.fast_min)
    assert d["tiers"]["fast_interval_min"] == d["checkpoint_interval_min"] == plan.fast_min
    assert set(d["hours"]) == {"useful", "checkpoint", "lost_work", "recovery", "planned_restart"}
    # published-figure plausibility: better than the blocking 66.6 %, short of the 80 % FT-HSDP reports
    assert 0.70 < d["goodput"]["mean"] < 0.80


def test_same_domain_replicas_restore_domain_failures_from_storage():
    """Restores from storage: every switch failure (scope domain, replicas in the same rack), and every
    fast-tier failure during a persistent restore (the worse tier). Each persistent restore starts a chain:
    the next interruption comes within its downtime ``D`` and is a fast-tier failure with probability
    ``a = (1 - exp(-Lambda D)) lam_fast / Lambda``, and then the downtime starts again; so each brings
    ``a / (1 - a)`` more."""
    sc = load_preset("h100-100k-inmemory").replace(trials=400)
    sc = sc.replace(tiers=dataclasses.replace(sc.tiers, fast_placement="same-domain"))
    res = simulate(sc)
    d = res.to_json_dict()
    assert DEFAULT_SCOPES["Network Switch/Cable"][0] == "domain"
    lam_p = next(c for c in sc.components if c.name == "Network Switch/Cable").rate_per_gpu_hour * sc.gpus
    lam_f = sc.failure_rate_per_hour - lam_p
    big = sc.failure_rate_per_hour + sc.planned_per_day / 24.0
    down = (sc.detect_min + sc.restart_min + sc.tiers.persistent_restore_min) / 60.0
    a = -np.expm1(-big * down) * lam_f / big
    expected = lam_p * sc.hours * (1.0 + a / (1.0 - a))
    per = res.trials.unplanned - res.restores_fast
    z = (per.mean() - expected) / (per.std(ddof=1) / np.sqrt(per.size))
    assert abs(z) < Z, z
    assert d["restores"]["persistent"] == pytest.approx(per.mean())
    assert d["goodput_expected"] is None  # both tiers restore: no closed form
    assert d["hours_expected"] is None
    assert np.isfinite(d["goodput"]["mean"])


def test_a_component_scope_changes_the_tier_it_restores_from():
    base = Scenario(
        gpus=100_000,
        days=5,
        trials=200,
        components=(Component("a", "GPU", 1e-5), Component("b", "Host", 1e-5)),
        tiers=Tiers(fast_enabled=True, fast_replicas=0),
    )
    d0 = simulate(base).to_json_dict()
    comps = (Component("a", "GPU", 1e-5, scope="process"), base.components[1])
    d1 = simulate(base.replace(components=comps)).to_json_dict()
    assert d0["restores"]["fast"] == 0.0  # no replicas: node failures restore from storage
    assert d1["restores"]["fast"] > 0.4 * d1["interruptions"]["mean"]


def test_the_fast_optimum_is_only_the_formulas_where_both_tiers_restore_with_uploads():
    """The caveat the run report and the window's summary give beside the fast optimum (one property says when)."""
    sc = load_preset("h100-100k-inmemory")

    def with_tiers(**changes):
        return plan_tiers(sc.replace(tiers=dataclasses.replace(sc.tiers, **changes)))

    assert not plan_tiers(sc).fast_optimum_is_formulas  # other-domain: every failure restores from memory
    same = with_tiers(fast_placement="same-domain")
    assert same.params.lam_persistent > 0 and same.fast_optimum_is_formulas
    assert not with_tiers(fast_placement="same-domain", persistent_upload_min=0.0).fast_optimum_is_formulas
    assert not with_tiers(fast_enabled=False).fast_optimum_is_formulas  # one tier: its optimum is exact
