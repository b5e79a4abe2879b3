"""Goal seek: the cheapest setup meeting a deadline at a quantile, against an exhaustive search written here from
the scenarios' own simulations; the front non-dominated; no setup meeting the goal said so; a stop keeps the best."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from planner_gui.core.analysis.results import simulate
from planner_gui.core.decisions.optimize import OptimizeError, Vary, optimize, pareto_front
from planner_gui.core.model.scenario import Scenario, Training
from planner_gui.core.model.spares import Spares

BASE = Scenario(
    gpus=16_384, days=10.0, trials=120, training=Training(train_flops=None, compute_gpu_hours=16_384 * 24 * 8.0)
)
GPUS = (8_192, 16_384, 32_768, 65_536)
POOL = Spares(spare_nodes=8, swap_min=10.0)


def by_hand(sc: Scenario, q: float) -> tuple[float, float]:
    """A setup's days at ``q`` and its cost in all, from its own run: GPUs x hours x price, plus the pool's GPUs
    over the same hours."""
    res = simulate(sc)
    hours = res.time_to_train.hours
    pool = 0.0 if sc.spares is None or sc.spares.spare_nodes is None else sc.spares.spare_nodes * sc.gpus_per_node
    cost = (sc.gpus + pool) * hours * sc.gpu_hour_cost_usd
    return float(np.quantile(hours / 24.0, q)), float(cost.mean())


def test_the_choice_is_the_exhaustive_searchs_and_the_front_is_non_dominated():
    deadline, q = 6.0, 0.9
    got = optimize(BASE, [Vary("gpus", values=GPUS)], deadline, q)
    assert got.evaluated == len(GPUS) and not got.stopped
    truth = {n: by_hand(BASE.replace(gpus=n), q) for n in GPUS}
    for s in got.setups:
        days, cost = truth[s.inputs["gpus"]]
        assert s.days_quantile == pytest.approx(days, rel=1e-12) and s.cost_usd == pytest.approx(cost, rel=1e-12)
    meeting = {n: v for n, v in truth.items() if v[0] <= deadline}
    assert meeting and len(meeting) < len(GPUS)  # the deadline matters on this grid
    cheapest = min(meeting, key=lambda n: meeting[n][1])
    assert got.meets and got.chosen.inputs == {"gpus": cheapest}
    front = got.front
    for a in front:
        for b in front:
            if a is not b:  # neither is both faster and cheaper
                assert not (a.days_quantile <= b.days_quantile and a.cost_usd <= b.cost_usd)
    for s in got.setups:
        if s not in front:  # every setup off the front is beaten on both by one on it
            assert any(f.days_quantile <= s.days_quantile and f.cost_usd <= s.cost_usd for f in front)
    assert [f.days_quantile for f in front] == sorted(f.days_quantile for f in front)


def test_a_range_on_its_first_grid_is_the_list_of_its_values_and_refining_never_loses():
    """Ranges of the pool and the interval: with no refinement, the same setups as lists of their grid values, so
    the same choice; refining can only find one at least as cheap."""
    base = BASE.replace(spares=POOL)
    ranges = [Vary("spares.spare_nodes", lo=2, hi=26), Vary("checkpoint_interval_min", lo=2.0, hi=32.0, log=True)]
    coarse = optimize(base, ranges, 9.5, 0.9, points=3, rounds=0)
    lists = [Vary("spares.spare_nodes", values=(2, 14, 26)), Vary("checkpoint_interval_min", values=(2.0, 8.0, 32.0))]
    same = optimize(base, lists, 9.5, 0.9)
    assert coarse.evaluated == same.evaluated == 9
    assert coarse.chosen.inputs == pytest.approx(same.chosen.inputs)
    assert coarse.chosen.cost_usd == pytest.approx(same.chosen.cost_usd, rel=1e-12)
    assert coarse.meets
    fine = optimize(base, ranges, 9.5, 0.9, points=3, rounds=2)
    assert fine.evaluated > coarse.evaluated
    assert fine.chosen.meets and fine.chosen.cost_usd <= coarse.chosen.cost_usd
    assert all(isinstance(s.inputs["spares.spare_nodes"], int) for s in fine.setups)  # a whole-number field


def test_a_deadline_no_setup_meets_is_said_and_the_fastest_given():
    got = optimize(BASE, [Vary("gpus", values=GPUS)], 0.5, 0.9)
    assert not got.meets and got.chosen is not None and not got.runners_up
    assert got.chosen.days_quantile == min(s.days_quantile for s in got.setups)
    d = got.to_dict()
    assert d["meets_goal"] is False and d["chosen"]["inputs"] == got.chosen.inputs
    assert "The fastest" in got.verdict() and not got.over_budget
    # A budget no setup fits, where some meet the deadline: the cheapest of those, said to be over the budget (the
    # fastest would be the furthest over it).
    poor = optimize(BASE, [Vary("gpus", values=GPUS)], 30.0, 0.9, budget_usd=1.0)
    assert not poor.meets and poor.over_budget and poor.to_dict()["over_budget"] is True
    in_time = [s for s in poor.setups if s.days_quantile <= 30.0]
    assert poor.chosen == min(in_time, key=lambda s: s.cost_usd)
    assert "within the budget" in poor.verdict() and "over it" in poor.verdict()


def test_a_choice_at_the_end_of_its_values_is_said():
    got = optimize(BASE, [Vary("gpus", values=GPUS)], 6.0, 0.9)
    inside = got.chosen.inputs["gpus"] not in (min(GPUS), max(GPUS))
    assert (got.at_edges == ()) == inside and got.to_dict()["at_range_end"] == list(got.at_edges)
    low = optimize(BASE, [Vary("gpus", values=(16_384, 32_768, 65_536))], 30.0, 0.9)  # the fewest GPUs is cheapest
    assert low.chosen.inputs == {"gpus": 16_384} and low.at_edges == ("gpus",)
    assert "gpus 16,384" in low.edges_text()


def test_every_setup_runs_from_one_seed():
    """Two setups that differ only in the price run the same draws: the same days, costs in proportion."""
    got = optimize(BASE, [Vary("gpu_hour_cost_usd", values=(2.0, 4.0))], 30.0, 0.5)
    a, b = sorted(got.setups, key=lambda s: s.inputs["gpu_hour_cost_usd"])
    assert a.days_quantile == b.days_quantile and b.cost_usd == pytest.approx(2 * a.cost_usd, rel=1e-12)


def test_a_stop_keeps_the_best_found_so_far():
    asked = {"stop": False}  # asked once the first batch has reported its progress
    many = tuple(range(8_192, 8_192 + 16 * 1024, 1024))
    got = optimize(
        BASE,
        [Vary("gpus", values=many)],
        30.0,
        0.9,
        progress=lambda f: asked.update(stop=True),
        should_stop=lambda: asked["stop"],
    )
    assert got.stopped and 0 < got.evaluated < len(many) and got.chosen is not None


def test_bad_searches_are_refused_in_words():
    with pytest.raises(OptimizeError, match="needs a training run"):
        optimize(BASE.replace(training=None), [Vary("gpus", values=GPUS)], 10, 0.9)
    with pytest.raises(OptimizeError, match="--quantile"):
        optimize(BASE, [Vary("gpus", values=GPUS)], 10, 1.5)
    with pytest.raises(OptimizeError, match="nope"):
        optimize(BASE, [Vary("nope", values=(1, 2))], 10, 0.9)
    with pytest.raises(OptimizeError, match="seed: cannot be varied"):  # picking the luckiest draws is no plan
        optimize(BASE, [Vary("seed", values=(1, 2))], 10, 0.9)
    with pytest.raises(OptimizeError, match="varied more than once"):
        optimize(BASE, [Vary("gpus", values=(1024,)), Vary("gpus", values=(2048,))], 10, 0.9)
    with pytest.raises(OptimizeError, match="gpus: 0 gives an invalid scenario"):
        optimize(BASE, [Vary("gpus", values=(16_384, 0))], 30.0, 0.9)
    # A setup that cannot run (no spare in restart mode: the job waits for repairs for ever) is listed as failed;
    # the others still count.
    pool = BASE.replace(spares=Spares(spare_nodes=40, swap_min=10.0))
    got = optimize(pool, [Vary("spares.spare_nodes", values=(0, 40))], 30.0, 0.9)
    failed = [s for s in got.setups if s.error is not None]
    assert [s.inputs for s in failed] == [{"spares.spare_nodes": 0}] and "never finish" in failed[0].error
    assert got.chosen.inputs == {"spares.spare_nodes": 40}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "planner_gui", *args], capture_output=True, text=True, timeout=600)


def test_the_command_prints_the_contracts_json():
    out = cli(
        "optimize", "--gpus", "16384", "--days", "10", "--trials", "100", "--compute-gpu-hours", str(16_384 * 24 * 8),
        "--deadline-days", "6", "--quantile", "0.9", "--vary", "gpus=8192,16384,32768", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert {"inputs", "days_quantile", "cost_usd"} <= set(d["chosen"])
    assert all({"inputs", "days_quantile", "cost_usd"} <= set(f) for f in d["front"])
    assert d["evaluated"] == 3 and d["chosen"]["days_quantile"] <= 6
    text = cli(
        "optimize", "--gpus", "16384", "--days", "10", "--trials", "100", "--compute-gpu-hours", str(16_384 * 24 * 8),
        "--deadline-days", "6", "--vary", "gpus=8192,16384,32768",
    )  # fmt: skip
    assert text.returncode == 0 and "Chosen: gpus" in text.stdout and "The front" in text.stdout
    for bad, words in (
        (["--vary", "gpus"], "INPUT=V1,V2"),
        (["--range", "gpus=1:2:lin"], "LO:HI"),
        (["--vary", "spares.spare_nodes=1,2"], "--vary spares.spare_nodes: the base scenario has no 'spares' section"),
        (["--range", "tiers.fast_interval_min=1:10"], "--range tiers.fast_interval_min: the base scenario has no"),
    ):
        out = cli("optimize", "--preset", "h100-100k", "--mfu", "0.4", "--deadline-days", "9", *bad)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and words in out.stderr, (bad, out.stderr)
        assert "[set]" not in out.stderr  # (a study file's words, not the command line's)


def test_the_pareto_front_of_hand_made_setups():
    from planner_gui.core.decisions.optimize import Setup

    def s(d: float, c: float) -> Setup:
        return Setup({"x": (d, c)}, d, c, d, False)

    pts = [s(1, 10), s(2, 8), s(2, 9), s(3, 8), s(4, 5), s(5, 6), s(math.inf, 1)]
    assert [(f.days_quantile, f.cost_usd) for f in pareto_front(pts)] == [(1, 10), (2, 8), (4, 5)]
    assert dataclasses.replace(pts[0], error="x") not in pareto_front([dataclasses.replace(pts[0], error="x")])


def test_a_search_run_as_a_study_gives_the_same_answer(tmp_path, monkeypatch):
    """--as-study writes the search's grid as a study from one seed; the study's results, summarised for the
    cheapest setup meeting the goal, are the search's choice, to the dollar."""

    from planner_gui.cli import main as cli_main
    from planner_gui.core.decisions.optimize import summary_flags

    monkeypatch.chdir(tmp_path)
    flags = ["--gpus", "16384", "--days", "10", "--trials", "100", "--compute-gpu-hours", str(16_384 * 24 * 8)]
    goal = ["--deadline-days", "6", "--quantile", "0.9", "--vary", "gpus=8192,16384,32768"]
    local = json.loads(_run(cli_main, ["optimize", *flags, *goal, "--json"]))
    _run(cli_main, ["optimize", *flags, *goal, "--as-study", "search.toml"])
    _run(cli_main, ["study", "search.toml", "-o", "search.csv", "--workers", "1"])
    picked = json.loads(_run(cli_main, ["study", "--summary", "search.csv", *summary_flags(6.0, 0.9, None), "--json"]))
    best = picked["best"]["scenarios"][0]
    assert best["gpus"] == local["chosen"]["inputs"]["gpus"]
    assert best["time_to_train.days.p90"] == pytest.approx(local["chosen"]["days_quantile"], rel=1e-12)
    assert best["total_cost_usd"] == pytest.approx(local["chosen"]["cost_usd"], rel=1e-12)
    # A quantile the study's results do not give is refused in words.
    out = cli(
        "optimize", *flags, "--deadline-days", "6", "--quantile", "0.8", "--vary", "gpus=8192", "--as-study", "x.toml"
    )
    assert out.returncode == 2 and "--quantile 0.8 is not one" in out.stderr


def _run(main, argv: list[str]) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0, argv
    return buf.getvalue()
