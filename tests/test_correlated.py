"""Correlated failures (docs/model.md section 1, "Correlated failures"): events at ``correlated_rate_per_day`` of the
whole job that take ``correlated_domains`` failure domains at once, for a repair of mean ``correlated_repair_hours``,
and always restore from storage. Checked against the closed forms of docs/model.md section 3 (the renewal formulas
with the events' rate added, the pool's M/G/infinity) and the event-by-event reference simulator; off by default,
every number is today's."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from test_sim import COUNTS, Z, _engine, against_reference

from planner_gui.cli import main
from planner_gui.core.analysis.results import simulate
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict, validate
from planner_gui.core.model.scenario import CORRELATED_NAME, Component, Scenario, Tiers, Training
from planner_gui.core.model.spares import Spares, correlated_nodes, spares_params
from planner_gui.core.sim.capabilities import window_engine
from planner_gui.core.sim.model import CONTINUE, RESTART_PERSISTENT, sim_model

IM = load_preset("h100-100k-inmemory")
assert IM.tiers is not None
SAME = dataclasses.replace(IM.tiers, fast_interval_min=2.0, fast_placement="same-domain")
OTHER = dataclasses.replace(SAME, fast_placement="other-domain")


def _sem(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1) / math.sqrt(len(x)))


def _renewal_goodput(lam: float, tau: float, c: float, r: float) -> float:
    """docs/model.md 3, one tier without planned interruptions: Daly's exact expectation, ``tau / (M e^(R/M)
    (e^((tau + c)/M) - 1))`` with ``M = 1 / lam`` (every interruption starts the job afresh)."""
    m = 1.0 / lam
    return tau / (m * math.exp(r / m) * math.expm1((tau + c) / m))


@pytest.mark.parametrize("rate,interval", [(2.0, 30.0), (12.0, 10.0)])
def test_one_tier_goodput_is_the_renewal_closed_form_with_the_events_added(rate, interval):
    sc = Scenario(days=5.0, planned_per_day=0.0, checkpoint_interval_min=interval, checkpoint_write_s=30.0)
    sc = sc.replace(correlated_rate_per_day=rate)
    assert window_engine(sc).key == "renewal"  # (the general engine is checked here, directly)
    got = _engine(sc, 2000, 3)
    g = got.hours["useful"] / sc.hours
    lam = sum(c.rate_per_gpu_hour for c in sc.components) * sc.gpus + rate / 24.0
    expected = _renewal_goodput(lam, interval / 60.0, 30.0 / 3600.0, (sc.detect_min + sc.restart_min) / 60.0)
    assert abs(g.mean() - expected) <= Z * _sem(g), (g.mean(), expected)
    # The events are a Poisson count of mean a T, last in the classes.
    ev = got.by_component[:, -1]
    assert abs(ev.mean() - rate / 24.0 * sc.hours) <= Z * math.sqrt(rate / 24.0 * sc.hours / len(ev))
    # The results show the closed form beside the Monte Carlo, and the events against their expectation.
    res = simulate(sc.replace(trials=600))
    d = res.to_json_dict()
    assert d["goodput_expected"] == pytest.approx(expected, rel=1e-9)
    assert d["correlated"]["events_expected"] == pytest.approx(rate * sc.days, rel=1e-12)
    assert d["by_component"][CORRELATED_NAME] == pytest.approx(d["correlated"]["events"]["mean"])
    assert d["interruptions_expected"] == pytest.approx(sc.failure_rate_per_hour * sc.hours, rel=1e-12)


def test_the_profile_multiplies_the_events_and_the_expectation_follows():
    sc = Scenario(days=4.0, trials=800, correlated_rate_per_day=6.0, rate_profile=((0.0, 3.0), (1.0, 1.0)))
    d = simulate(sc).to_json_dict()
    expected = 6.0 * (3.0 * 1.0 + 1.0 * 3.0)  # three times the rate the first day
    assert d["correlated"]["events_expected"] == pytest.approx(expected, rel=1e-12)
    ev = d["correlated"]["events"]
    assert abs(ev["mean"] - expected) <= Z * ev["sem"]


GRID = [
    (
        "16k same-domain, uploads, planned",
        Scenario(days=2.0, checkpoint_interval_min=20.0, planned_per_day=4.0,
                 tiers=dataclasses.replace(SAME, persistent_upload_min=7.0), correlated_rate_per_day=3.0,
                 correlated_domains=3),
        250,
    ),
    (
        "100k other-domain + pool + swap",
        IM.replace(days=1.0, checkpoint_interval_min=30.0, tiers=OTHER, correlated_rate_per_day=4.0,
                   correlated_domains=16, correlated_repair_hours=6.0, spares=Spares(spare_nodes=40, swap_min=10.0)),
        120,
    ),
    (
        "16k continue: events of one replica continue",
        Scenario(days=2.0, checkpoint_interval_min=30.0, correlated_rate_per_day=6.0, correlated_domains=2,
                 correlated_repair_hours=3.0,
                 spares=Spares(spare_nodes=6, recovery_mode="continue", replica_gpus=512, swap_min=5.0)),
        200,
    ),
    (
        "16k burn-in, rate uncertainty, detection by cause, shrinking pool",
        Scenario(days=2.0, checkpoint_interval_min=20.0, new_cluster=True, rate_uncertainty=True,
                 rate_profile=((0.0, 4.0), (0.5, 1.0)), correlated_rate_per_day=5.0, correlated_domains=8,
                 correlated_repair_hours=12.0, detect_by=((CORRELATED_NAME, 20.0),),
                 spares=Spares(spare_nodes=12, min_gpus=15_000)),
        200,
    ),
]  # fmt: skip


@pytest.mark.parametrize("name,sc,ref_trials", GRID, ids=[g[0] for g in GRID])
def test_the_general_engine_agrees_with_the_reference_with_correlated_failures(name, sc, ref_trials):
    assert window_engine(sc).key == "general"
    got, ref, bad = against_reference(sc, ref_trials, 71, (*COUNTS, "promoted"))
    assert not bad, "; ".join(bad)
    # The events, last in the classes, agree too.
    a, b = got.by_component[:, -1], np.asarray(ref.by_component)[:, -1]
    assert abs(a.mean() - b.mean()) <= Z * math.hypot(_sem(a), _sem(b))
    assert a.mean() > 0


def test_the_one_tier_rule_sends_the_events_to_storage_for_the_engine_and_the_formulas_alike():
    from planner_gui.core.model.scenario import CORRELATED_SCOPE
    from planner_gui.core.model.tiers import class_scopes, restoring_tier
    from planner_gui.core.theory.tiers import tier_rates

    sc = IM.replace(tiers=OTHER, correlated_rate_per_day=3.0)
    assert class_scopes(sc)[-1] == CORRELATED_SCOPE and len(class_scopes(sc)) == len(sc.components) + 1
    assert all(restoring_tier(CORRELATED_SCOPE, t) == "persistent" for t in (SAME, OTHER))
    # With other-domain replicas every component restores from memory: the events are all the storage stream.
    rates = tier_rates(sc, OTHER)
    assert rates.persistent == pytest.approx(3.0 / 24.0, rel=1e-12) and len(rates.fast_components) == len(sc.components)
    assert rates.fast + rates.persistent == pytest.approx(sc.failure_rate_per_hour, rel=1e-12)


def test_what_each_event_does_follows_from_its_scope():
    # Every event restores from storage, whatever the placement; it takes D domains' nodes, at most the job's.
    for tiers in (SAME, OTHER):
        sc = IM.replace(tiers=tiers, correlated_rate_per_day=1.0, correlated_domains=5)
        m = sim_model(sc, 2.0, 30.0)
        assert m.kinds[-1] == RESTART_PERSISTENT and m.nodes[-1] == 5 * tiers.nodes_per_domain
        assert m.repair[-1] == sc.correlated_repair_hours
    big = IM.replace(correlated_rate_per_day=1.0, correlated_domains=1_000_000)
    assert correlated_nodes(big) == math.ceil(big.gpus / big.gpus_per_node)
    # In continue mode an event continues when it spans few enough replicas, and restarts otherwise.
    cont = Spares(recovery_mode="continue", replica_gpus=512, max_replicas_lost=1)
    small = Scenario(correlated_rate_per_day=1.0, correlated_domains=2, spares=cont)  # 4 nodes: half a replica
    large = small.replace(correlated_domains=64)  # 128 nodes: 2 replicas of 64
    assert sim_model(small, None, 30.0).kinds[-1] == CONTINUE
    assert sim_model(large, None, 30.0).kinds[-1] == RESTART_PERSISTENT


def test_the_pool_counts_the_events_nodes_by_m_g_infinity():
    sc = Scenario(days=6.0, trials=400, correlated_rate_per_day=8.0, correlated_domains=6, correlated_repair_hours=10.0,
                  spares=Spares(spare_nodes=30))  # fmt: skip
    p = spares_params(sc, sc.spares or Spares(), 30.0)
    # The events' share of the nodes in repair: a k D = 8/24 x 12 nodes x 10 h = 40 nodes on average.
    assert p.rates[-1] * p.nodes[-1] * p.repair[-1] == pytest.approx(8.0 / 24.0 * 12 * 10.0, rel=1e-12)
    res = simulate(sc)
    assert res.spares_run is not None
    got = res.spares_run.trials.nodes_in_repair
    mean_exact = p.mean_nodes_in_repair
    assert abs(got.mean() - mean_exact) <= Z * _sem(got), (got.mean(), mean_exact)
    # Big events find the pool short far more often than single nodes would: the chance follows M/G/infinity.
    d = res.to_json_dict()["spares"]
    assert d["p_no_spare"] == pytest.approx(d["p_no_spare_expected"], abs=0.02)


def test_restores_from_storage_make_the_persistent_interval_matter():
    # Without correlated failures nothing restores from storage with other-domain replicas: the persistent tier's
    # optimum is the daily policy. Correlated events restore from storage, one each, and shorten it.
    # (the persistent tier stalls 5 s at each of its points: its interval has an optimum of its own)
    base = Scenario(trials=200, days=4.0, checkpoint_interval_min="optimal", tiers=Tiers(fast_enabled=True))
    plain = simulate(base).to_json_dict()
    assert plain["restores"]["persistent"] == 0.0
    assert plain["optimal_interval_min"]["persistent"] == pytest.approx(1440.0, rel=0.01)
    hot = simulate(base.replace(correlated_rate_per_day=4.0)).to_json_dict()
    # (and the failures that met a restore from storage under way and were promoted to one: docs/model.md 2.2)
    events = hot["correlated"]["events"]["mean"]
    assert events <= hot["restores"]["persistent"] <= 1.1 * events
    assert hot["optimal_interval_min"]["persistent"] < 60.0
    assert hot["tiers"]["unplanned_per_hour"]["persistent"] == pytest.approx(4.0 / 24.0, rel=1e-12)


def test_off_by_default_every_number_is_todays():
    base = Scenario(trials=200, days=10.0)
    other = base.replace(correlated_domains=64, correlated_repair_hours=100.0)  # (no rate: nothing happens)
    a, b = simulate(base).to_json_dict(), simulate(other).to_json_dict()
    a.pop("scenario"), b.pop("scenario")
    assert a == b and "correlated" not in a and CORRELATED_NAME not in a["by_component"]
    assert window_engine(other).key == "renewal"
    im = IM.replace(trials=100, days=2.0, spares=Spares(spare_nodes=60, swap_min=10.0))
    a = simulate(im).to_json_dict()
    b = simulate(im.replace(correlated_domains=2, correlated_repair_hours=1.0)).to_json_dict()
    a.pop("scenario"), b.pop("scenario")
    assert a == b


def test_each_input_changes_its_own_quantity():
    sc = IM.replace(trials=150, days=1.0, spares=Spares(spare_nodes=80, swap_min=10.0), correlated_rate_per_day=6.0)
    plain = simulate(sc).to_json_dict()
    more = simulate(sc.replace(correlated_rate_per_day=12.0)).to_json_dict()
    wider = simulate(sc.replace(correlated_domains=16)).to_json_dict()
    longer = simulate(sc.replace(correlated_repair_hours=32.0)).to_json_dict()
    # The rate: twice the events, the same nodes an event.
    assert more["correlated"]["events_expected"] == 2 * plain["correlated"]["events_expected"]
    assert more["correlated"]["events"]["mean"] > 1.5 * plain["correlated"]["events"]["mean"]
    # The domains: the nodes an event takes, and so the nodes in repair; not the events.
    assert wider["correlated"]["nodes_per_event"] == 4 * plain["correlated"]["nodes_per_event"]
    assert wider["correlated"]["events"] == plain["correlated"]["events"]
    assert wider["spares"]["nodes_in_repair"]["mean"] > plain["spares"]["nodes_in_repair"]["mean"]
    # The repair: the nodes in repair; not the events nor the nodes an event.
    assert longer["correlated"]["events"] == plain["correlated"]["events"]
    assert longer["correlated"]["nodes_per_event"] == plain["correlated"]["nodes_per_event"]
    assert longer["spares"]["nodes_in_repair"]["mean"] > plain["spares"]["nodes_in_repair"]["mean"]


def test_file_round_trip_flags_and_errors(tmp_path, capsys):
    sc = IM.replace(correlated_rate_per_day=0.25, correlated_domains=9, correlated_repair_hours=5.5)
    doc = scenario_to_dict(sc)
    assert (doc["correlated_rate_per_day"], doc["correlated_domains"], doc["correlated_repair_hours"]) == (0.25, 9, 5.5)
    assert scenario_from_dict(json.loads(json.dumps(doc))) == sc
    assert "correlated_rate_per_day" not in scenario_to_dict(IM)
    for key, bad in (("correlated_rate_per_day", -1), ("correlated_domains", 0), ("correlated_domains", 2.5),
                     ("correlated_repair_hours", "8")):  # fmt: skip
        with pytest.raises(ScenarioError, match=key):
            scenario_from_dict(doc | {key: bad})
    rc = main(["run", "--preset", "h100-100k-inmemory", "--days", "1", "--trials", "40", "--correlated-rate", "3",
               "--correlated-domains", "5", "--correlated-repair-hours", "2", "--json"])  # fmt: skip
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["correlated_domains"] == 5 and out["correlated"]["nodes_per_event"] == 10
    assert out["correlated"]["events_expected"] == pytest.approx(3.0)
    rc = main(["run", "--preset", "llama3-405b", "--trials", "30", "--correlated-rate", "1"])
    assert rc == 0
    text = capsys.readouterr().out
    line = next(x for x in text.splitlines() if x.startswith("Correlated failures"))
    assert line.startswith(
        "Correlated failures      1 a day (one every 24.0 h), 4 domains each, back in 8.0 h: 8 nodes an event, each "
        "restores from storage; "
    )
    assert line.endswith("; with unlimited spares the domains and the repair move nothing")
    # With a profile the rate is multiplied; in continue mode the line says how many replicas an event spans.
    rc = main(["run", "--preset", "llama3-405b", "--trials", "30", "--days", "3", "--correlated-rate", "1",
               "--burn-in", "0.5,30", "--recovery-mode", "continue", "--replica-gpus", "1024"])  # fmt: skip
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Correlated failures"))
    assert ": 8 nodes an event, each spans 1 replica of 1,024 GPUs: the job continues on the others; " in line
    assert line.endswith("; the rate profile multiplies the rate")
    assert "unlimited spares" not in line  # (continue mode follows the nodes: the domains matter)
    for flags in (["--correlated-domains", "0"], ["--correlated-rate", "-2"], ["--correlated-repair-hours", "x"]):
        rc = main(["run", "--preset", "llama3-405b", *flags])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and flags[0] in err and "\n" not in err and "Traceback" not in err


def test_detection_by_cause_names_the_events_and_a_component_may_not_take_their_name():
    sc = Scenario(correlated_rate_per_day=2.0, detect_by=((CORRELATED_NAME, 30.0),))
    m = sim_model(sc, None, 30.0)
    assert m.dr_class is not None and m.dr_class[-1] == pytest.approx((30.0 + sc.restart_min) / 60.0)
    assert m.dr_class[0] == pytest.approx(sc.recovery_min / 60.0)
    assert scenario_from_dict(scenario_to_dict(sc)) == sc
    clash = sc.replace(components=(*sc.components, Component(CORRELATED_NAME, "Host", 1e-7)))
    with pytest.raises(ScenarioError, match="named 'Correlated'"):
        validate(clash)
    validate(clash.replace(correlated_rate_per_day=0.0))  # (off: the name is free)
    by_category = sc.replace(components=(*sc.components, Component("Other", CORRELATED_NAME, 1e-7)))
    with pytest.raises(ScenarioError, match="of that category"):
        validate(by_category)


def test_repairs_beyond_ten_clusters_are_refused_in_one_line(capsys):
    # A mean of nodes in repair far beyond the cluster (the failures would strike nodes already in repair): refused
    # before anything is drawn, by the flags, the files and the window alike.
    sc = IM.replace(days=2.0, trials=50, correlated_rate_per_day=1000.0, correlated_domains=1_000_000,
                    correlated_repair_hours=8760.0, spares=Spares(spare_nodes=0))  # fmt: skip
    with pytest.raises(ScenarioError, match="nodes would be in repair on average"):
        validate(sc)
    rc = main(["run", "--preset", "h100-100k-inmemory", "--days", "2", "--trials", "50", "--correlated-rate",
               "1000", "--correlated-domains", "1000000", "--correlated-repair-hours", "8760", "--spare-nodes",
               "0"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "repairs:" in err and "\n" not in err and "Traceback" not in err
    # Within ten clusters it runs, and its nodes in repair follow M/G/infinity.
    ok = sc.replace(correlated_rate_per_day=1.0, correlated_repair_hours=24.0, correlated_domains=64,
                    spares=Spares(spare_nodes=500))  # fmt: skip
    validate(ok)


def test_the_levers_and_the_tornado_name_the_events():
    from planner_gui.core.analysis.sensitivity import levers
    from planner_gui.core.analysis.tornado import unsure_inputs

    sc = Scenario(correlated_rate_per_day=2.0, correlated_domains=8)
    names = [lv.name for lv in levers(sc, 0.5)]
    assert "correlated failures" in names and "domains per correlated event" not in names  # (no pool: moves nothing)
    lever = next(lv for lv in levers(sc, 0.5) if lv.name == "correlated failures")
    assert lever.apply(sc) == sc.replace(correlated_rate_per_day=1.0)
    every = next(lv for lv in levers(sc, 0.5) if lv.name == "all failure rates").apply(sc)
    assert every.correlated_rate_per_day == 1.0  # "every rate" is every rate
    pooled = sc.replace(spares=Spares(spare_nodes=20))
    dom = next(lv for lv in levers(pooled, 0.5) if lv.name == "domains per correlated event")
    assert dom.apply(pooled).correlated_domains == 4 and dom.apply(pooled).replace(correlated_domains=8) == pooled
    keys = {u.key: u for u in unsure_inputs(pooled)}
    assert (keys["correlated_rate_per_day"].low, keys["correlated_rate_per_day"].high) == (1.0, 4.0)
    assert "correlated_repair_hours" in keys and "correlated_repair_hours" not in {u.key for u in unsure_inputs(sc)}


def test_compare_the_undo_and_the_report_name_the_events():
    from test_report import DATE, parse

    from planner_gui.core.analysis.compare import comparison
    from planner_gui.core.session.inputs import describe_changes
    from planner_gui.core.session.plan import FULL, PlanRequest, compute_plan
    from planner_gui.report import render_report

    a = Scenario(trials=40, days=2.0)
    b = a.replace(correlated_rate_per_day=2.0, correlated_domains=6)
    doc = comparison(["a", "b"], [a, b], [simulate(a).to_json_dict(), simulate(b).to_json_dict()])
    rows = {r["input"]: r["values"] for r in doc["inputs"]}
    assert rows["correlated failures"] == ["off", "2/day, 6 domains, back in 8.0 h"]
    out = {r["output"]: r["values"] for r in doc["outputs"]}
    assert out["correlated events"][0] is None and out["correlated events"][1] > 0
    assert describe_changes(a, b) == "correlated failures 0 -> 2 per day; domains per correlated event 4 -> 6"
    plan = compute_plan(PlanRequest(b, FULL))
    html = render_report(plan, generated=DATE)
    assert "2 per day (one every 12.0 h)" in html and "6 failure domains an event" in html
    assert "Correlated failures</b>" in html
    # The rates table lists the events as a cause of their own (a rate of the job, not of one GPU), with their
    # simulated count; its total is the components'.
    table = parse(html).root.find("table", class_="rates")
    cells = [r.find_all("td") for r in table.find_all("tr") if r.find_all("td")]
    row = next(c for c in cells if c[1].text() == CORRELATED_NAME)
    assert row[0].text() == "Correlated (6 domains, back in 8.0 h)"
    events = plan.main.to_json_dict()["correlated"]["events"]["mean"]
    assert float(row[-1].text().replace(",", "")) == pytest.approx(events, abs=0.05)
    assert row[2].text() == "\u2014" and row[3].text() == "the job: one every 12.0 h"
    total = next(r for r in table.find_all("tr") if "All components" in r.text()).find_all("td")
    components = plan.main.to_json_dict()["interruptions"]["mean"] - events
    assert float(total[-1].text().replace(",", "")) == pytest.approx(components, abs=0.05)
    every = next(r for r in table.find_all("tr") if "All causes" in r.text()).find_all("td")
    assert float(every[-1].text().replace(",", "")) == pytest.approx(events + components, abs=0.05)


def test_the_window_group_sets_each_input_alone(make_window, slide_alone, qtbot):
    from PySide6.QtWidgets import QLabel

    win = make_window()
    note = win.findChild(QLabel, "correlatedNote")
    assert note is not None and note.text().startswith("Off")
    rate = slide_alone(win, "correlatedRateSlider", "correlated_rate_per_day", 400)
    assert rate > 0
    for name, field in (("correlatedDomainsSlider", "correlated_domains"),
                        ("correlatedRepairSlider", "correlated_repair_hours")):  # fmt: skip
        slide_alone(win, name, field, 200)
    sc = win.scenario()
    nodes = correlated_nodes(sc)
    assert note.text().startswith("One every ") and f"taking {nodes:,} nodes" in note.text()
    # (the default scenario has unlimited spares: the note says the domains and the repair move nothing)
    assert " at every GPU count, taking " in note.text()
    assert note.text().endswith("storage; with unlimited spares the domains and the repair move nothing")
    # The note follows what changes the inputs' meaning: a pool makes the domains and the repair count, a profile
    # multiplies the rate; continue mode says what the job does after an event.
    win.inputs.update(spares=Spares(spare_nodes=40))
    assert "unlimited spares" not in note.text() and note.text().endswith("each restores from storage")
    win.inputs.update(rate_profile=((0.0, 3.0), (2.0, 1.0)))
    assert note.text().endswith("each restores from storage; the rate profile multiplies the rate")
    win.inputs.update(rate_profile=None, spares=Spares(recovery_mode="continue", replica_gpus=1024))
    assert "each spans 1 replica of 1,024 GPUs: the job continues on the others" in note.text()
    win.inputs.update(spares=None)
    qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)
    # What the window shows is the scenario's: the events are counted among the interruptions by component.
    main_result = win.plots.result.main
    assert main_result.scenario.correlated_rate_per_day == sc.correlated_rate_per_day
    d = main_result.to_json_dict()
    assert d["correlated"]["events_expected"] == pytest.approx(sc.correlated_rate_per_day * sc.days, rel=1e-9)


def test_the_fast_engines_take_correlated_failures_at_known_rates_and_equal_the_general_one():
    # One tier, no spares: the renewal engine (a window) and the first-passage time to train take the events as one
    # more class of restarts from storage; on their domain they agree with the general engine.
    from planner_gui.core.analysis.results import simulate_scenarios
    from planner_gui.core.sim.capabilities import train_engine

    sc = Scenario(days=6.0, trials=1500, checkpoint_interval_min=20.0, correlated_rate_per_day=6.0)
    assert window_engine(sc).key == "renewal"
    fast = simulate(sc)
    general = _engine(sc, 1500, 9)
    a, b = fast.goodput, general.hours["useful"] / sc.hours
    assert abs(a.mean() - b.mean()) <= Z * math.hypot(_sem(a), _sem(b))
    ev = fast.trials.by_component[:, -1]  # (the renewal engine splits its interruptions among the classes)
    assert abs(ev.mean() - 6.0 * 6.0) <= Z * math.sqrt(36.0 / len(ev))
    assert fast.to_json_dict()["correlated"]["events_expected"] == pytest.approx(36.0)
    # Beside rates drawn from their posteriors, the general engine runs it.
    assert window_engine(sc.replace(rate_uncertainty=True)).key == "general"
    train = sc.replace(trials=400, training=Training(compute_gpu_hours=16_384 * 48.0))
    assert train_engine(train).key == "first-passage"
    quick = simulate(train).time_to_train
    slow = simulate_scenarios([train], general=True)[0].time_to_train
    assert quick is not None and slow is not None
    x, y = quick.hours, slow.hours
    assert abs(x.mean() - y.mean()) <= Z * math.hypot(_sem(x), _sem(y)), (x.mean(), y.mean())


def test_every_repair_is_every_repair_and_the_events_have_a_colour_of_their_own():
    from planner_gui.core.analysis.sensitivity import levers
    from planner_gui.report.charts import CATEGORY_COLORS as REPORT_COLORS
    from planner_gui.ui.plots import CATEGORY_COLORS

    sc = Scenario(correlated_rate_per_day=2.0, correlated_repair_hours=24.0, spares=Spares(spare_nodes=40))
    every = next(lv for lv in levers(sc, 0.5) if lv.name == "repair times").apply(sc)
    assert every.correlated_repair_hours == 12.0 and every.spares is not None
    assert dict(every.spares.repair_hours)["GPU"] == 24.0  # (the GPU's 48 h halved too)
    for colors in (CATEGORY_COLORS, REPORT_COLORS):
        others = {v for k, v in colors.items() if k != CORRELATED_NAME}
        assert colors[CORRELATED_NAME] not in others
