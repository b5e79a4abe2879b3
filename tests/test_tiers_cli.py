"""Recovery tiers on the command line: the issue's flags, their errors, the run's report and JSON, and the
strategy comparison."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from planner_gui.cli.flags import Parser, add_scenario_flags, scenario_from_args
from planner_gui.core.analysis.strategies import compare_strategies, comparison_cost, strategy_scenarios
from planner_gui.core.analysis.sweep import run_cost
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, save
from planner_gui.core.model.scenario import Tiers
from planner_gui.core.sim.capabilities import window_engine
from planner_gui.core.theory.exact import time_fractions

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "planner_gui", *args], capture_output=True, text=True, cwd=ROOT)


def scenario(*argv: str):
    p = Parser()
    add_scenario_flags(p)
    return scenario_from_args(p.parse_args(list(argv)))


def test_each_flag_sets_the_input_it_names():
    base = load_preset("h100-100k")
    sc = scenario(
        "--preset", "h100-100k",
        "--fast-interval", "3", "--fast-stall", "2", "--fast-restore", "0.5", "--fast-replicas", "2",
        "--fast-placement", "same-domain", "--nodes-per-domain", "4",
        "--persistent-interval", "30", "--persistent-upload", "4", "--persistent-restore", "2.5",
    )  # fmt: skip
    assert sc.tiers == Tiers(
        fast_enabled=True,
        fast_interval_min=3.0,
        fast_stall_s=2.0,
        fast_restore_min=0.5,
        fast_replicas=2,
        fast_placement="same-domain",
        nodes_per_domain=4,
        persistent_upload_min=4.0,
        persistent_restore_min=2.5,
    )
    assert sc.checkpoint_interval_min == 30.0 and sc.checkpoint_write_s == base.checkpoint_write_s
    assert "--fast-interval 3" in sc.name and "--fast-tier" not in sc.name  # (no such flag: --fast-* turn it on)
    off = scenario("--preset", "h100-100k-inmemory", "--no-fast-tier", "--persistent-stall", "40")
    assert off.tiers is not None and not off.tiers.fast_enabled and off.checkpoint_write_s == 40.0
    assert "--no-fast-tier" in off.name
    on = scenario("--preset", "h100-100k-inmemory", "--persistent-stall", "9")  # the persistent points' own stall
    assert on.tiers is not None and on.tiers.fast_enabled and on.checkpoint_write_s == 9.0
    assert "--persistent-stall 9" in on.name
    refused = cli("strategies", "--no-fast-tier")
    assert refused.returncode == 2 and "--no-fast-tier" in refused.stderr
    assert scenario("--preset", "h100-100k", "--checkpoint-interval", "optimal").tiers is None
    assert scenario("--persistent-interval", "optimal").checkpoint_interval_min == "optimal"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--fast-stall", "-1"), "--fast-stall: must be a number from 0 to 86,400"),
        (("--fast-interval", "0"), "--fast-interval: must be 'optimal' or a number from 0.01"),
        (
            ("--fast-replicas", "3", "--fast-placement", "same-domain"),
            "--fast-replicas: same-domain placement: a domain of 2 nodes has room for 1",
        ),
        (("--nodes-per-domain", "0"), "--nodes-per-domain: must be a whole number from 1"),
        (("--persistent-upload", "1e9"), "--persistent-upload: must be a number from 0 to 10,080"),
        (("--no-fast-tier", "--fast-stall", "1"), "--fast-stall: sets the fast tier, which --no-fast-tier"),
    ],
)
def test_bad_tier_flags_are_refused_in_one_line(argv, message):
    from planner_gui.cli.flags import UsageError

    with pytest.raises((ScenarioError, UsageError), match=message) as err:
        scenario(*argv)
    assert "\n" not in str(err.value)


def test_run_json_keys_and_report():
    out = cli("run", "--preset", "h100-100k", "--fast-interval", "optimal", "--fast-placement", "same-domain",
              "--trials", "100", "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert set(d["restores"]) == {"fast", "persistent"}
    assert d["restores"]["fast"] + d["restores"]["persistent"] == pytest.approx(d["interruptions"]["mean"])
    assert d["optimal_interval_min"]["fast"] > 0 and d["optimal_interval_min"]["persistent"] > 0
    assert {"young", "daly", "exact"} <= set(d["optimal_interval_min"])
    assert set(d["hours"]) == {"useful", "checkpoint", "lost_work", "recovery", "planned_restart"}
    text = cli("run", "--preset", "h100-100k-inmemory", "--trials", "50")
    assert text.returncode == 0 and "Restores                 from memory" in text.stdout
    assert ", detection + restart + restore " in text.stdout  # the recovery hours hold the tier's restore
    bad = cli("run", "--fast-placement", "rack")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_the_optimal_intervals_are_those_of_the_interval_reported():
    """optimal_interval_min's Young, Daly and exact belong to checkpoint_interval_min, the persistent tier's
    interval. With the fast tier on and no stall of that tier's own: no Young or Daly, and exact is the optimal
    pair's persistent interval. With a stall of its own (the write, 5 s on h100-100k): Young and Daly are that
    stall's against the restores from storage, the optimum is Young's as whole fast intervals, exact None."""

    def run(*args: str) -> dict:
        out = cli("run", *args, "--trials", "20", "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    on = run("--preset", "h100-100k", "--fast-interval", "optimal", "--persistent-stall", "0")
    opt, t = on["optimal_interval_min"], on["tiers"]
    assert opt["young"] is None and opt["daly"] is None
    assert opt["exact"] == opt["persistent"] == on["checkpoint_interval_min"] == t["persistent_interval_min"]
    mtbf = 60.0 / sum(t["unplanned_per_hour"].values())  # minutes
    assert t["fast_young_min"] == pytest.approx(math.sqrt(2 * (0.59 / 60) * mtbf), rel=1e-9)  # the fast tier's
    stalled = run("--preset", "h100-100k", "--fast-interval", "optimal", "--fast-placement", "same-domain")
    opt, t = stalled["optimal_interval_min"], stalled["tiers"]
    # Young against the running time between restores from storage: the share of time running by the fast
    # tier's exact fractions at its interval, over the rate of failures that restore from storage.
    lam = t["unplanned_per_hour"]
    f = time_fractions(
        lam["fast"] + lam["persistent"], 47 / (54 * 24), opt["fast"] / 60, 0.59 / 3600, (5 + 5 + 0.17) / 60, 5 / 60
    )
    running = 60.0 * (1.0 - float(f.recovery) - float(f.planned)) / lam["persistent"]  # minutes
    assert opt["young"] == pytest.approx(math.sqrt(2 * (5 / 60) * running), rel=1e-9)
    assert opt["exact"] is None and opt["daly"] < opt["young"]
    k, cycle = t["persistent_every_fast"], opt["fast"] + 0.59 / 60  # (no upload here: Young's, in whole cycles)
    assert k > 1 and abs(k * cycle - opt["young"]) <= cycle
    assert opt["persistent"] == stalled["checkpoint_interval_min"] == pytest.approx(k * opt["fast"], rel=1e-12)
    # beside a fast interval that is not the optimal one, the optimal persistent interval keeps its minutes
    fixed_fast = run("--preset", "h100-100k", "--fast-interval", "0.1", "--fast-placement", "same-domain")
    t = fixed_fast["tiers"]
    cycle = 0.1 + 0.59 / 60
    assert t["fast_interval_min"] == 0.1 and abs(t["persistent_every_fast"] * cycle - opt["young"]) <= cycle
    assert fixed_fast["checkpoint_interval_min"] == pytest.approx(0.1 * t["persistent_every_fast"], rel=1e-12)
    fixed = run("--preset", "h100-100k-inmemory", "--persistent-interval", "5")  # 7 fast intervals
    assert fixed["checkpoint_interval_min"] == fixed["tiers"]["persistent_interval_min"] > 5.0
    assert fixed["optimal_interval_min"]["exact"] == fixed["optimal_interval_min"]["persistent"] < 1.0
    both = run("--preset", "h100-100k-inmemory", "--fast-placement", "same-domain")  # uploads take time
    assert both["optimal_interval_min"]["exact"] is None and both["optimal_interval_min"]["fast"] > 0
    off = run("--preset", "h100-100k-inmemory", "--no-fast-tier", "--persistent-stall", "0.59")  # upload lag moves it
    opt = off["optimal_interval_min"]
    assert opt["exact"] == opt["persistent"] == off["checkpoint_interval_min"] and opt["fast"] is None
    assert opt["young"] == pytest.approx(math.sqrt(2 * (0.59 / 60) * mtbf), rel=1e-9)  # its 0.59 s write
    today = run("--preset", "h100-100k")
    assert today["optimal_interval_min"]["exact"] == today["optimal_interval_min"]["persistent"]
    assert today["optimal_interval_min"]["young"] == pytest.approx(math.sqrt(2 * (5 / 60) * 60 / 1.9730), rel=2e-3)


def test_run_says_how_it_rounded_the_persistent_interval_and_what_it_did_not_use():
    out = cli("run", "--preset", "h100-100k-inmemory", "--trials", "20", "--persistent-interval", "0.5")
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("Persistent tier"))
    assert "every 46 s (fixed, 30 s asked: the nearest whole number of fast intervals; every snapshot)" in line
    assert "no blocking of its own (its snapshot is the fast one)" in line
    stalled = cli("run", "--preset", "h100-100k-inmemory", "--trials", "20", "--persistent-stall", "5")
    line = next(x for x in stalled.stdout.splitlines() if x.startswith("Persistent tier"))
    assert "blocking 5 s at each (on top of the fast stall)" in line
    # replicas in another domain: nothing restores from storage, so a persistent point only costs its stall
    assert "every 24.0 h (never needed by this model's failures (none restores from storage): daily by policy" in line
    noted = compare_strategies(load_preset("h100-100k-inmemory").replace(checkpoint_write_s=5.0, trials=20), None)
    notes = {r["strategy"]: r["note"] for r in noted["at_scale"]}
    assert "nothing restores from storage" in (notes["+ fast tier, other-domain"] or "")
    assert "nothing restores from storage" not in (notes["+ fast tier, same-domain"] or "")
    short = cli("run", "--preset", "h100-100k-inmemory", "--trials", "20", "--days", "0.01")
    assert "Where the 0.24 hours went" in short.stdout
    storage = cli("run", "--checkpoint-gb-per-gpu", "1", "--storage-gbps", "100", "--persistent-stall", "3")
    assert storage.returncode == 2 and storage.stderr.startswith("planner-gui: error: --persistent-stall: this")
    plain = cli("run", "--preset", "h100-100k-inmemory", "--trials", "20")
    line = next(x for x in plain.stdout.splitlines() if x.startswith("Persistent tier"))
    assert "asked" not in line and "(optimal; every snapshot)" in line
    assert "outlasts the window" not in plain.stdout
    long = cli("run", "--preset", "h100-100k-inmemory", "--no-fast-tier", "--days", "1", "--persistent-upload", "5000")
    assert long.returncode == 0 and "an upload (3.5 days) outlasts the window (24.0 h)" in long.stdout
    slow = cli("run", "--preset", "h100-100k-inmemory", "--no-fast-tier", "--persistent-upload", "60", "--trials", "20")
    # 1.973 unplanned + 0.036 planned interruptions an hour: one every 29.9 min; an hour's upload finishes before
    # the next one with chance e^(-2.010) = 13 %
    assert "an upload (60 min) outlasts the mean time between interruptions (30 min): 13 % of uploads" in slow.stdout
    fast = next(x for x in plain.stdout.splitlines() if x.startswith("Fast tier"))
    assert "every 46 s (optimal; optimum 46 s" in fast  # every failure restores from memory: the exact optimum
    free = cli("run", "--preset", "h100-100k-inmemory", "--trials", "10", "--fast-stall", "0")
    fast = next(x for x in free.stdout.splitlines() if x.startswith("Fast tier"))
    assert "optimum 0.6 s (no stall: the shortest interval taken, 0.6 s)" in fast and "Young" not in fast
    both = cli("run", "--preset", "h100-100k-inmemory", "--trials", "20", "--fast-placement", "same-domain")
    fast = next(x for x in both.stdout.splitlines() if x.startswith("Fast tier"))
    assert "(optimal; optimum 46 s (the fast tier's formula's: it leaves out the upload cadence's effect" in fast
    fixed = cli("run", "--preset", "h100-100k-inmemory", "--trials", "20", "--fast-placement", "same-domain",
                "--fast-interval", "0.85")  # fmt: skip
    fast = next(x for x in fixed.stdout.splitlines() if x.startswith("Fast tier"))
    assert "every 51 s (fixed; optimum 46 s (the fast tier's formula's" in fast


def test_interval_sweep_with_the_fast_tier_names_and_spans_the_fast_interval():
    out = cli("sweep", "--over", "interval", "--preset", "h100-100k-inmemory", "--trials", "30", "--points", "9")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("fast_interval_min,")  # the interval varied is the fast one
    xs = [float(line.split(",")[0]) for line in lines[1:]]
    assert min(xs) < 0.767 < max(xs)  # the 46 s optimum is inside (the persistent tier's default started at 1 min)
    # at 1 minute the row is the run's with the fast interval fixed there (the persistent one follows, k = 1)
    one = cli("run", "--preset", "h100-100k-inmemory", "--trials", "30", "--fast-interval", "1", "--json")
    row = next(line for line in lines[1:] if float(line.split(",")[0]) == 1.0)
    assert float(row.split(",")[5]) == pytest.approx(json.loads(one.stdout)["goodput"]["mean"], rel=1e-12)
    both = cli("sweep", "--over", "interval", "--preset", "h100-100k-inmemory", "--fast-placement", "same-domain",
               "--trials", "20", "--points", "3")  # fmt: skip
    header, *rows = both.stdout.strip().splitlines()
    at = header.split(",").index("goodput_expected")
    assert all(row.split(",")[at] == "" for row in rows)  # no closed form: an empty cell (it said nan)
    off = cli("sweep", "--over", "interval", "--preset", "h100-100k", "--trials", "20", "--points", "3")
    assert off.stdout.splitlines()[0].startswith("checkpoint_interval_min,") and off.stdout.splitlines()[1][:2] == "1,"


def test_fast_tier_settings_left_behind_with_the_tier_off_are_not_checked(tmp_path):
    """Replicas that do not fit their same-domain placement are refused while the fast tier is on; with it off
    they are not used, so a scenario that keeps them (the window saves them as they are) runs."""
    sc = load_preset("h100-100k-inmemory")
    left = dataclasses.replace(sc.tiers, fast_enabled=False, fast_replicas=2, fast_placement="same-domain")
    path = tmp_path / "left.json"
    save(sc.replace(tiers=left), path)
    out = cli("run", "--scenario", str(path), "--trials", "30")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    on = cli("run", "--scenario", str(path), "--trials", "30", "--fast-interval", "optimal")
    assert on.returncode == 2 and "room for 1 replica" in on.stderr and len(on.stderr.strip().splitlines()) == 1


def test_strategies_compute_what_can_be_built_whatever_the_scenarios_own_fast_tier():
    # The scenario's own placement cannot be at 16 GPUs (one domain): 'run' refuses it, strategies names the row.
    refused = cli("run", "--preset", "h100-100k-inmemory", "--gpus", "16")
    assert refused.returncode == 2 and "other-domain needs two failure domains" in refused.stderr
    out = cli("strategies", "--preset", "h100-100k-inmemory", "--gpus", "16", "--trials", "40", "--scale-gpus",
              "1024", "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["at_scale"]
    assert [r["error"] is None for r in rows] == [True, True, True, False, False]
    assert "two replicas or more" in rows[4]["error"]  # 16 GPUs are one replica: nothing to continue on
    # The continue strategy's replica is the scenario's (1,024 GPUs by default), cut only where a job is smaller:
    # at 4,096 GPUs it is the same strategy whatever the scenario's own size.
    across = []
    for gpus in ("16", "100000"):
        got = cli("strategies", "--preset", "h100-100k-inmemory", "--fast-placement", "same-domain", "--gpus", gpus,
                  "--trials", "40", "--scale-gpus", "4096", "--json")  # fmt: skip
        across.append(json.loads(got.stdout)["across_gpus"]["continue on replicas (blocking persistent)"]["goodput"])
    assert across[0] == across[1] and across[0][0] is not None


def test_a_restore_from_memory_slower_than_from_storage_is_pointed_out():
    """h100-100k's restart already loads the checkpoint from storage (no persistent restore of its own): with the
    fast tier on, the fast restore comes on top of it, and replicas in another domain do no better than in the
    same one. run and strategies say why; the in-memory preset, which moved the load into the restore, does not."""
    out = cli("run", "--preset", "h100-100k", "--fast-interval", "optimal", "--trials", "20")
    assert out.returncode == 0, out.stderr
    note = "a restore from memory (0.17 min) takes longer than one from storage (0 min); if the restart time (5 min)"
    assert note in out.stdout
    for args in (("--preset", "h100-100k-inmemory"), ("--preset", "h100-100k")):  # fast tier off in the second
        assert "a restore from memory" not in cli("run", *args, "--trials", "20").stdout
    d = json.loads(cli("strategies", "--preset", "h100-100k", "--trials", "20", "--scale-gpus", "--json").stdout)
    notes = [r["note"] or "" for r in d["at_scale"]]
    assert [note in n for n in notes] == [False, False, True, True, False]
    inmemory = cli("strategies", "--preset", "h100-100k-inmemory", "--trials", "20", "--scale-gpus", "--json")
    assert not any("a restore from memory" in (r["note"] or "") for r in json.loads(inmemory.stdout)["at_scale"])


def test_strategies_command_puts_the_five_side_by_side():
    out = cli("strategies", "--preset", "h100-100k-inmemory", "--trials", "100", "--scale-gpus", "16384", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    names = [r["strategy"] for r in d["at_scale"]]
    assert names == [
        "persistent only (blocking)",
        "+ async upload",
        "+ fast tier, same-domain",
        "+ fast tier, other-domain",
        "continue on replicas (blocking persistent)",
    ]
    goodput = [r["goodput"] for r in d["at_scale"]]
    assert goodput[:4] == sorted(goodput[:4])  # each step buys something here
    assert d["at_scale"][3]["restores"]["persistent"] == 0.0
    # Continuing on replicas beats restarting from the same blocking checkpoint at 100,000 GPUs; it restarts
    # only after the failures that cannot continue, and its throughput lost to replicas out is a column.
    cont, blocking = d["at_scale"][4], d["at_scale"][0]
    assert cont["goodput"] > blocking["goodput"] + 0.05
    assert 0 < cont["restores"]["persistent"] < 0.5 * blocking["restores"]["persistent"]
    assert d["hours_keys"][-1] == "reduced_throughput" and cont["hours"]["reduced_throughput"] > 0
    for row in d["at_scale"]:
        assert sum(row["hours"][k] for k in d["hours_keys"]) == pytest.approx(54 * 24, rel=1e-9)
    assert d["across_gpus"]["gpus"] == [16384]
    text = cli("strategies", "--preset", "h100-100k", "--trials", "50", "--scale-gpus")
    assert text.returncode == 0 and "+ fast tier, other-domain" in text.stdout and "reduced" in text.stdout
    assert "Goodput across GPU counts:" not in text.stdout  # none: only the scenario's scale
    text = cli("strategies", "--preset", "h100-100k", "--trials", "20", "--scale-gpus", "1024", "1048576")
    lines = text.stdout.splitlines()
    head = lines[lines.index("Goodput across GPU counts:") + 1]
    assert head.split() == ["strategy", "1,024", "1,048,576"]  # the counts simulated, not rounded
    assert all(len(line) == len(lines[lines.index(head) + 1]) for line in lines[lines.index(head) + 1 :][:5])


def test_the_comparisons_progress_goes_by_each_runs_cost():
    """The general engine is far slower per interruption than the fast paths: its runs weigh more in the
    estimate and in the progress (a million GPUs for a year: the estimate was a tenth of the time taken)."""
    sc = load_preset("h100-100k-inmemory").replace(trials=20)
    cost = comparison_cost(sc, (1024, 4096))
    runs = [s for _, s in strategy_scenarios(sc)]
    assert cost.seconds > sum(run_cost(s).seconds for s in runs)  # the counts across scales add their part
    seen: list[float] = []
    compare_strategies(sc, (1024, 4096), scale_trials=20, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    big = sc.replace(gpus=1_048_576, days=365)
    rows = [s for _, s in strategy_scenarios(big)]
    general = [s for s in rows if window_engine(s).key == "general"]
    assert general
    heavy = sum(run_cost(s).seconds for s in general)
    assert heavy > 0.5 * comparison_cost(big, None).seconds
    assert heavy > 20 * run_cost(big.replace(tiers=None, spares=None)).seconds  # each weighs what it costs


def test_a_strategy_that_cannot_be_built_is_named_and_the_others_computed():
    """Two replicas in another domain of 2-node domains: 'run' takes it, but the same-domain strategy cannot hold
    them (a domain has one other node); at 1,024 GPUs every strategy can be built, at 16 GPUs (2 nodes, one
    domain) neither fast-tier strategy."""
    out = cli(
        "strategies", "--preset", "h100-100k-inmemory", "--fast-replicas", "2", "--trials", "60", "--scale-gpus",
        "1024", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    errors = [r["error"] for r in d["at_scale"]]
    assert errors[2] is not None and "room for 1 replica" in errors[2]
    assert [e is None for e in errors] == [True, True, False, True, True]
    assert d["at_scale"][2]["goodput"] is None and d["at_scale"][3]["goodput"] > 0.7
    assert d["across_gpus"]["+ fast tier, same-domain"]["goodput"] == [None]
    assert d["across_gpus"]["+ fast tier, other-domain"]["goodput"][0] > 0.9
    text = cli("strategies", "--preset", "h100-100k-inmemory", "--fast-replicas", "2", "--trials", "60",
               "--scale-gpus", "1024")  # fmt: skip
    assert text.returncode == 0 and "+ fast tier, same-domain" in text.stdout
    assert "cannot be built here: tiers.fast_replicas: same-domain placement" in text.stdout
    assert "Traceback" not in text.stderr
    # A scenario too small for replicas in other domains: those rows say so; 'run' refuses the same.
    small = cli("strategies", "--preset", "llama3-405b", "--gpus", "16", "--trials", "30", "--scale-gpus", "--json")
    assert small.returncode == 0, small.stderr
    rows = json.loads(small.stdout)["at_scale"]
    assert rows[0]["error"] is None and rows[1]["error"] is None
    assert "other-domain needs two failure domains" in rows[3]["error"]


def test_scale_gpus_are_taken_in_order_once_and_refused_in_a_short_line():
    out = cli("strategies", "--trials", "20", "--scale-gpus", "4096", "1024", "4096", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["across_gpus"]["gpus"] == [1024, 4096]
    bare = cli("strategies", "--preset", "h100-100k-inmemory", "--fast-replicas", "0", "--trials", "20", "--scale-gpus")
    assert "Note: no replicas" in bare.stdout and "(rows 3 and 4 are the same)" in bare.stdout
    assert "Note: no upload" not in bare.stdout  # the preset uploads in the background
    plain = cli("strategies", "--trials", "20", "--scale-gpus").stdout  # no tiers section: no upload time
    assert "Note: no upload time" in plain and "(rows 1 and 2 are the same)" in plain and "no replicas" not in plain
    rows = json.loads(cli("strategies", "--trials", "20", "--scale-gpus", "--json").stdout)["at_scale"]
    assert rows[0]["hours"] == rows[1]["hours"] and rows[0]["note"] == rows[1]["note"] != rows[2]["note"]
    bad = cli("strategies", "--scale-gpus", "1e300")
    assert bad.returncode == 2 and "(got 1e+300)" in bad.stderr and len(bad.stderr) < 200


def test_the_report_and_the_sensitivity_take_tier_scenarios():
    out = cli("report", "-o", "-", "--preset", "h100-100k-inmemory", "--trials", "40")
    assert out.returncode == 0 and "Fast tier (memory)" in out.stdout and "Restores" in out.stdout, out.stderr
    # sensitivity ranks levers by the two-tier model's exact expectation where it has one, and by paired Monte
    # Carlo where failures restore from both tiers (replicas in the same domain): no exact model to rank by.
    out = cli("sensitivity", "--preset", "h100-100k-inmemory", "--fast-placement", "same-domain", "--trials", "40")
    assert out.returncode == 0 and "paired Monte Carlo" in out.stdout, out.stderr


def test_each_strategies_note_is_said_once():
    """Row 4's note joined two notes, one of them row 3's: the third printed note repeated the first."""
    out = cli("strategies", "--preset", "h100-100k", "--trials", "20", "--scale-gpus")
    assert out.returncode == 0, out.stderr
    notes = [line for line in out.stdout.splitlines() if line.startswith("Note: ")]
    caveat = "a restore from memory (0.17 min) takes longer than one from storage"
    assert sum(caveat in n for n in notes) == 1 and any("nothing restores from storage" in n for n in notes)
    assert len(notes) == len(set(notes)) and not any(n.count("; ") > 2 for n in notes)
    d = json.loads(cli("strategies", "--preset", "h100-100k", "--trials", "20", "--scale-gpus", "--json").stdout)
    row4 = d["at_scale"][3]
    assert len(row4["notes"]) == 2 and row4["note"] == "; ".join(row4["notes"])


def test_a_strategy_that_cannot_run_at_a_count_says_why_there_and_in_the_json(capsys):
    """A "-" in the table across GPU counts said "e.g. too few nodes for its replicas" whatever the reason (at 10
    million GPUs it was the size limit) and the JSON's null said nothing. Each reason is said, with where."""
    from planner_gui.cli import main

    argv = ["strategies", "--trials", "20", "--scale-gpus", "1024", "100000"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "-: continue on replicas (blocking persistent) at 1,024 GPUs: spares.recovery_mode: continue needs" in out
    assert main([*argv, "--json"]) == 0
    across = json.loads(capsys.readouterr().out)["across_gpus"]
    row = across["continue on replicas (blocking persistent)"]
    assert row["goodput"][0] is None and "continue needs two replicas" in row["errors"][0]
    assert row["goodput"][1] is not None and row["errors"][1] is None
