"""Which lever buys the most: each lever's effect against Daly's closed form and hand arithmetic."""

from __future__ import annotations

import dataclasses
import math

import pytest

from planner_gui.core.analysis.sensitivity import expected_goodput, has_closed_form, sensitivity
from planner_gui.core.model.scenario import Scenario, Training
from planner_gui.core.theory.exact import daly_goodput


def daly(sc: Scenario, interval_min: float) -> float:
    """Daly's exact goodput (no planned interruptions), written out from its formula."""
    m = 1.0 / sc.failure_rate_per_hour
    return float(daly_goodput(interval_min / 60, sc.checkpoint_write_s / 3600, sc.recovery_min / 60, m))


def test_each_lever_changes_goodput_as_dalys_formula_says():
    sc = Scenario(gpus=100_000, planned_per_day=0.0, checkpoint_interval_min=10.0, checkpoint_write_s=30.0)
    effects = {e.lever: e for e in sensitivity(sc, factor=0.5)}
    base = daly(sc, 10.0)
    assert expected_goodput(sc) == pytest.approx(base, rel=1e-12)
    expect = {
        "detection": daly(sc.replace(detect_min=2.5), 10.0) - base,
        "restart": daly(sc.replace(restart_min=2.5), 10.0) - base,
        "checkpoint write": daly(sc.replace(checkpoint_write_s=15.0), 10.0) - base,
        "all failure rates": daly(sc.scale_rates(0.5), 10.0) - base,
        "GPU failures": daly(sc.scale_rates(0.5, "GPU"), 10.0) - base,
    }
    for lever, delta in expect.items():
        assert effects[lever].goodput_delta == pytest.approx(delta, rel=1e-9), lever
        assert effects[lever].goodput_delta > 0, lever
    assert "planned interruptions" not in effects  # there are none to halve
    # Without a training compute the cost is the window's GPU-hours not spent training.
    e = effects["detection"]
    assert e.days_delta is None
    assert e.cost_delta_usd == pytest.approx(-sc.gpus * sc.hours * e.goodput_delta * sc.gpu_hour_cost_usd, rel=1e-9)
    deltas = [x.goodput_delta for x in sensitivity(sc)]
    assert deltas == sorted(deltas, reverse=True)  # the most goodput gained first


def test_with_a_training_compute_levers_are_days_and_dollars():
    sc = Scenario(gpus=100_000, training=Training(), checkpoint_interval_min=30.0)
    effects = sensitivity(sc)
    costs = [e.cost_delta_usd for e in effects]
    assert costs == sorted(costs)  # the biggest saving first
    by = {e.lever: e for e in effects}
    g0 = expected_goodput(sc)
    work_hours = sc.training.gpu_hours / sc.gpus
    g1 = g0 + by["restart"].goodput_delta
    assert by["restart"].days_delta == pytest.approx((work_hours / g1 - work_hours / g0) / 24, rel=1e-9)
    assert by["restart"].cost_delta_usd == pytest.approx(
        (work_hours / g1 - work_hours / g0) * sc.gpus * sc.gpu_hour_cost_usd, rel=1e-9
    )
    # The optimal interval is a lever when the interval is fixed, and it never loses goodput.
    assert by["checkpoint interval"].goodput_delta >= 0
    # Halving the GPUs: more goodput, but a longer run.
    assert by["GPU count"].goodput_delta > 0 and by["GPU count"].days_delta > 0


def test_bad_factor_is_refused():
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            sensitivity(Scenario(), bad)


def test_sensitivity_command_prints_the_json_contract(capsys):
    import json

    from planner_gui.cli import main

    assert main(["sensitivity", "--preset", "h100-100k", "--json"]) == 0
    effects = json.loads(capsys.readouterr().out)
    keys = {"lever", "change", "goodput_delta", "days_delta", "cost_delta_usd"}
    keys |= {"goodput_delta_se", "days_delta_se", "cost_delta_se", "price_usd", "saved_per_usd"}
    assert effects and all(set(e) == keys for e in effects)
    assert all(e["goodput_delta_se"] is None for e in effects)  # exact expectations: no standard error
    direct = sensitivity(_preset("h100-100k"))
    assert [e["goodput_delta"] for e in effects] == [d.goodput_delta for d in direct]
    assert main(["sensitivity", "--factor", "1"]) == 2
    assert main(["sensitivity", "--factor", "-2"]) == 2
    assert main(["sensitivity", "--factor", "1e300"]) == 2  # beyond the ranges the levers' inputs take
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("planner-gui: error: ") for line in err)
    assert err[-1].endswith("--factor: must be a number from 0.01 to 100 other than 1 (got 1e+300)")


def test_a_priced_lever_says_the_dollars_it_saves_per_dollar_paid(tmp_path, capsys):
    """--price and a file's lever_prices attach a price to a lever; its saving per dollar is its cost delta over
    the price, in the JSON and the table; the flag overrides the file; bad prices and unknown levers are said in one
    line, and a file's price for a lever the scenario lacks is noted, not fatal."""
    import json

    from planner_gui.cli import main
    from planner_gui.core.files.scenario_io import load, save

    assert main(["sensitivity", "--preset", "h100-100k", "--price", "detection=2e6", "--price", "restart=$500,000",
                 "--json"]) == 0  # fmt: skip
    by = {e["lever"]: e for e in json.loads(capsys.readouterr().out)}
    plain = {e.lever: e for e in sensitivity(_preset("h100-100k"))}
    assert by["detection"]["price_usd"] == 2e6 and by["restart"]["price_usd"] == 5e5
    for lever, price in (("detection", 2e6), ("restart", 5e5)):
        assert by[lever]["cost_delta_usd"] == plain[lever].cost_delta_usd  # a price changes no effect
        assert by[lever]["saved_per_usd"] == pytest.approx(-plain[lever].cost_delta_usd / price, rel=1e-12)
        assert by[lever]["saved_per_usd"] > 0
    assert by["all failure rates"]["price_usd"] is None and by["all failure rates"]["saved_per_usd"] is None
    # In a file, saved and read back; a flag overrides the file's price for the same lever.
    sc = _preset("h100-100k").replace(lever_prices=(("detection", 1e6), ("in-memory tier", 3e6)))
    path = tmp_path / "priced.json"
    save(sc, path)
    assert load(path).lever_prices == sc.lever_prices
    assert main(["sensitivity", "--scenario", str(path), "--price", "detection=4e6"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("detection x0.5"))
    ratio = -plain["detection"].cost_delta_usd / 4e6
    assert f"${ratio:,.2f} saved per $ paid ($4 M)" in line
    tier = next(x for x in out.splitlines() if x.startswith("add an in-memory tier"))
    assert f"${-plain['in-memory tier'].cost_delta_usd / 3e6:,.2f} saved per $ paid ($3 M)" in tier
    # One line each: a malformed price, a negative one, a lever this scenario does not have.
    assert main(["sensitivity", "--price", "detection"]) == 2
    assert main(["sensitivity", "--price", "detection=-5"]) == 2
    assert main(["sensitivity", "--price", "detection=1,5"]) == 2  # not 15 (1.5 in many locales)
    assert main(["sensitivity", "--price", "detecton=5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("planner-gui: error: --price") for line in err)
    assert "its levers: detection, restart" in err[-1]
    # A file's price for a lever the scenario no longer has: noted on stderr, the rest priced.
    save(sc.replace(lever_prices=(("spare pool", 1e6), ("restart", 1e6))), path)
    assert main(["sensitivity", "--scenario", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert "no lever 'spare pool' here; its price is not used" in captured.err
    assert {e["lever"]: e["price_usd"] for e in json.loads(captured.out)}["restart"] == 1e6


def test_lever_prices_in_a_file_are_checked():
    from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict

    doc = scenario_to_dict(Scenario())
    for bad, says in (
        ([1, 2], "must be an object"),
        ({"detection": -1}, "from 0 to 1e13"),
        ({"detection": "a lot"}, "from 0 to 1e13"),
        ({"detection": True}, "from 0 to 1e13"),
        ({"detection": 1e14}, "from 0 to 1e13"),
    ):
        with pytest.raises(ScenarioError, match=says):
            scenario_from_dict(doc | {"format_version": 2, "lever_prices": bad})
    sc = scenario_from_dict(doc | {"format_version": 2, "lever_prices": {"detection": 2000000}})
    assert sc.lever_prices == (("detection", 2e6),)
    assert "lever_prices" not in scenario_to_dict(Scenario())  # written only when set
    assert scenario_to_dict(sc)["lever_prices"] == {"detection": 2e6}


def _preset(name):
    from planner_gui.core.files.presets import load_preset

    return load_preset(name)


def test_compare_command_lines_up_inputs_and_outputs(tmp_path, capsys):
    import json

    from planner_gui.cli import main
    from planner_gui.core.analysis.results import simulate
    from planner_gui.core.files.scenario_io import save

    a, b = _preset("llama3-405b").replace(trials=100), _preset("h100-100k").replace(trials=100)
    save(a, tmp_path / "a.json")
    save(b, tmp_path / "b.json")
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["report"] for s in doc["scenarios"]] == [
        json.loads(json.dumps(simulate(s).to_json_dict())) for s in (a, b)
    ]
    assert {"input": "GPUs", "values": ["16,384", "100,000"]} in doc["inputs"]
    assert all(r["input"] != "days" for r in doc["inputs"])  # the same in both: not listed
    goodput = next(r for r in doc["outputs"] if r["output"] == "goodput (exact)")
    assert goodput["differences"][1] == pytest.approx(goodput["values"][1] - goodput["values"][0])
    assert main(["compare", str(tmp_path / "a.json")]) == 2
    assert "give 2 to 8 scenario files" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    table = capsys.readouterr().out
    assert "GPUs" in table and "16,384" in table and "100,000" in table and "points)" in table


def test_compare_names_both_tiers_intervals_and_what_the_write_is():
    """With the fast tier on, the write is the persistent points' stall and the fast interval is listed beside
    the (persistent) checkpoint interval."""
    import dataclasses

    from planner_gui.core.analysis.compare import comparison, input_differences

    a = _preset("h100-100k-inmemory").replace(trials=30)
    b = a.replace(tiers=dataclasses.replace(a.tiers, fast_placement="same-domain"), checkpoint_write_s=5.0)
    rows = dict(input_differences([a, b]))
    assert rows["blocking write"] == ["0 s per persistent point", "5 s per persistent point"]
    plain = dict(input_differences([_preset("llama3-405b"), _preset("llama3-405b").replace(checkpoint_write_s=9.0)]))
    assert plain["blocking write"] == ["5 s", "9 s"]
    from planner_gui.core.analysis.results import simulate

    reports = [simulate(s).to_json_dict() for s in (a, b)]
    doc = comparison(["a", "b"], [a, b], reports)
    fast = next(r for r in doc["outputs"] if r["output"] == "fast (in-memory) interval")
    assert fast["values"] == [pytest.approx(r["tiers"]["fast_interval_min"]) for r in reports]
    assert all(r["output"] != "fast (in-memory) interval" for r in comparison(["x"], [a.replace(tiers=None)],
               [simulate(a.replace(tiers=None)).to_json_dict()])["outputs"])  # fmt: skip


def test_compare_lists_rate_uncertainty_profile_and_evidence_differences():
    """Scenarios differing only in their rate uncertainty, rate profile or evidence are not "the same"."""
    import dataclasses

    from planner_gui.core.analysis.compare import input_differences, profile_text
    from planner_gui.core.theory.profiles import burn_in_profile

    a = _preset("llama3-405b")
    assert input_differences([a, a]) == []
    on = a.replace(rate_uncertainty=True)
    assert input_differences([a, on]) == [("rate uncertainty", ["off", "on"])]
    burn = a.replace(rate_profile=burn_in_profile(0.7, 30.0, a.days))
    rows = dict(input_differences([a, burn]))
    assert list(rows) == ["rate profile"]
    first, last = burn.rate_profile[0][1], burn.rate_profile[-1][1]
    mean = sum((b[0] - p[0]) * p[1] for p, b in zip(burn.rate_profile, [*burn.rate_profile[1:], (a.days, 0)])) / a.days
    assert rows["rate profile"] == ["none", f"24 pieces, x{first:.3g} to x{last:.3g}, x{mean:.3g} on average"]
    # Two profiles the words cannot tell apart are still listed, and told apart.
    p1, p2 = ((0.0, 2.0), (10.0, 1.0)), ((0.0, 2.0), (10.0, 1.0000001), (12.0, 1.0))
    assert (
        profile_text(a.replace(rate_profile=p1)).split(",")[1:]
        == profile_text(a.replace(rate_profile=p2)).split(",")[1:]
    )
    rows = dict(input_differences([a.replace(rate_profile=p1), a.replace(rate_profile=p2)]))
    assert len(set(rows["rate profile"])) == 2
    # With rate uncertainty on, the evidence behind a rate is an input: a component's own count differs.
    gpu = a.components[0]
    own = dataclasses.replace(gpu, count=296, exposure_gpu_hours=2 * 16_384 * 54 * 24)
    b = on.replace(components=(own, *a.components[1:]))
    rows = dict(input_differences([on, b]))
    assert rows == {f"{gpu.name} evidence": ["148 in 21.2 M GPU-h", "296 in 42.5 M GPU-h"]}
    assert input_differences([a, a.replace(components=(own, *a.components[1:]))]) == []  # off: not used


# -- recovery tiers -------------------------------------------------------------------------------------------


def test_tier_levers_follow_the_two_tier_model_and_the_monte_carlo_agrees():
    """With an in-memory tier (replicas in another domain: every failure restores from memory) the levers
    include each tier's times; their effects are the two-tier closed form's differences, and the Monte Carlo
    of the changed scenario agrees with the goodput the lever promises (within its standard error)."""
    import dataclasses

    import numpy as np

    from planner_gui.core.analysis.results import simulate
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.sim.tiers_run import plan_tiers

    sc = load_preset("h100-100k-inmemory").replace(trials=300)
    base = plan_tiers(sc).expected()
    assert base is not None
    effects = {e.lever: e for e in sensitivity(sc)}
    t = sc.tiers
    stall = sc.replace(tiers=dataclasses.replace(t, fast_stall_s=t.fast_stall_s / 2))
    restore = sc.replace(tiers=dataclasses.replace(t, fast_restore_min=t.fast_restore_min / 2))
    for lever, changed in (("in-memory snapshot stall", stall), ("in-memory restore", restore)):
        after = plan_tiers(changed).expected()
        assert after is not None
        assert effects[lever].goodput_delta == pytest.approx(after.useful - base.useful, rel=1e-12), lever
        assert effects[lever].goodput_delta > 0, lever
    # The blocking write is not a stall with the fast tier on (its snapshots replace it): no bar.
    assert "checkpoint write" not in effects
    # The Monte Carlo of the detection lever's scenario agrees with the goodput it promises.
    changed = sc.replace(detect_min=sc.detect_min / 2)
    g = simulate(changed).goodput
    promised = base.useful + effects["detection"].goodput_delta
    assert abs(g.mean() - promised) < 4 * g.std(ddof=1) / np.sqrt(len(g))


def test_adding_an_in_memory_tier_is_a_lever_and_both_tier_scenarios_have_no_ranking():
    from planner_gui.core.analysis.sensitivity import NoClosedForm
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.model.scenario import Tiers
    from planner_gui.core.sim.tiers_run import plan_tiers

    sc = load_preset("h100-100k")
    effects = {e.lever: e for e in sensitivity(sc)}
    with_tier = plan_tiers(sc.replace(checkpoint_write_s=0.0, tiers=Tiers(fast_enabled=True))).expected()
    assert with_tier is not None
    assert effects["in-memory tier"].goodput_delta == pytest.approx(with_tier.useful - expected_goodput(sc), rel=1e-12)
    assert effects["in-memory tier"].change == "add an in-memory tier, no blocking write"
    fixed = load_preset("h100-100k-inmemory")
    fixed = fixed.replace(tiers=dataclasses.replace(fixed.tiers, fast_interval_min=10.0))
    lever = {e.lever: e for e in sensitivity(fixed)}["in-memory interval"]
    best = plan_tiers(load_preset("h100-100k-inmemory")).expected()
    now = plan_tiers(fixed).expected()
    assert best is not None and now is not None and lever.change == "the optimal in-memory interval"
    assert lever.goodput_delta == pytest.approx(best.useful - now.useful, rel=1e-12) and lever.goodput_delta > 0.05
    same = sc.replace(tiers=Tiers(fast_enabled=True, fast_placement="same-domain"), checkpoint_write_s=0.0)
    for no_closed_form in (same, sc.replace(tiers=Tiers(fast_enabled=True))):  # both tiers restore; a 5 s stall
        with pytest.raises(NoClosedForm):
            expected_goodput(no_closed_form)
        assert not has_closed_form(no_closed_form)


def test_scenarios_without_a_closed_form_are_ranked_by_paired_monte_carlo():
    """Rates that vary, spares, continuing on replicas: each lever's effect is the mean of per-trial differences
    against the scenario on the same draws, with its standard error; it agrees with the same two runs made apart,
    and a training run with varying rates is simulated (no refusal)."""
    from planner_gui.core.analysis.results import simulate_scenarios
    from planner_gui.core.files.scenario_io import validate
    from planner_gui.core.model.scenario import Training
    from planner_gui.core.model.spares import Spares

    base = Scenario(trials=200)
    for sc in (
        base.replace(rate_profile=((0.0, 3.0), (10.0, 1.0))),
        base.replace(rate_uncertainty=True),
        base.replace(gpus=100_000, days=5.0, spares=Spares(spare_nodes=89, swap_min=10.0, recovery_mode="continue")),
    ):
        assert not has_closed_form(sc)
        effects = {e.lever: e for e in sensitivity(sc)}
        detect = effects["detection"]
        assert detect.goodput_delta_se is not None and detect.goodput_delta_se > 0
        assert detect.goodput_delta > 5 * detect.goodput_delta_se  # a faster detection buys goodput
        pair = simulate_scenarios([sc, sc.replace(detect_min=sc.detect_min * 0.5)], general=True)
        diff = pair[1].goodput - pair[0].goodput
        assert detect.goodput_delta == pytest.approx(float(diff.mean()), rel=1e-12)
        validate(sc.replace(training=Training()))  # a time to train with these rates: simulated, not refused
