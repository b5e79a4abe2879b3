"""Rack-scale NVLink domains (docs/model.md section 1, "Racks"): a tray failure stops its rack until a warm spare
tray of the rack covers it or the rack moves to a spare rack of the pool. Checked against the event-by-event
reference simulator, the rack's Markov chain (:mod:`planner_gui.core.theory.racks`) and the general engine without
racks; off by default, every number is today's."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from test_sim import Z, _engine, _z, against_reference

from planner_gui.cli import main
from planner_gui.core.analysis.results import simulate
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict, validate
from planner_gui.core.model.scenario import Scenario
from planner_gui.core.model.spares import Spares, failure_classes, spare_racks
from planner_gui.core.sim.capabilities import window_engine
from planner_gui.core.theory.racks import move_share, rack_moves_expected
from planner_gui.core.util import fmt


def _sem(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1) / math.sqrt(len(x)))


def _gb200(gpus: int = 2304, days: float = 3.0, times: float = 30.0, **changes: object) -> Scenario:
    """A small NVL72 layout whose racks run out of warm spares often: Llama 3's rates ``times`` over."""
    base = Scenario(name="racks", gpus=gpus, gpus_per_node=4, days=days, checkpoint_interval_min=10.0)
    comps = tuple(c.__class__(c.name, c.category, c.rate_per_gpu_hour * times) for c in base.components)
    return base.replace(components=comps, nvlink_gpus=72, rack_spare_trays=2).replace(**changes)


def test_the_layout_follows_the_trays():
    sc = _gb200(gpus=16_384)
    assert (sc.trays_per_rack, sc.job_trays_per_rack) == (18, 16)
    assert sc.racks == math.ceil(16_384 / 4 / 16) == 256
    fc = failure_classes(sc, Spares())
    assert fc.racks is not None and fc.in_rack is not None
    scopes = dict(zip(fc.scopes, zip(fc.racks, fc.in_rack, fc.nodes)))
    assert scopes["node"] == (1, True, 18)  # a tray: one rack, a warm spare may cover it, 18 trays if it moves
    assert scopes["domain"] == (1, False, 18)  # the rack is the failure domain
    assert scopes["process"] == (0, False, 0)
    assert "racks" in window_engine(sc).label or window_engine(sc).key == "general"
    # Without warm spares nothing is covered; the pool holds whole racks.
    assert failure_classes(sc.replace(rack_spare_trays=0), Spares()).in_rack.sum() == 0  # type: ignore[union-attr]
    assert spare_racks(sc.replace(spares=Spares(spare_nodes=40))) == 2


def test_racks_with_unlimited_spares_keep_the_closed_form():
    """Restart mode, unlimited spares, no swap: a failure restarts the job wherever it strikes, so the one-tier
    closed form holds with racks as without (docs/model.md 3), and the Monte Carlo agrees with it."""
    sc = _gb200(days=2.0, trials=800)
    plain = sc.replace(nvlink_gpus=0, rack_spare_trays=0)
    d, dp = simulate(sc).to_json_dict(), simulate(plain).to_json_dict()
    assert d["goodput_expected"] is not None and d["goodput_expected"] == pytest.approx(dp["goodput_expected"])
    g = d["goodput"]
    assert abs(g["mean"] - d["goodput_expected"]) <= Z * g["sem"], (g["mean"], d["goodput_expected"])
    assert d["racks"]["covered_in_rack"]["mean"] > 0 and "racks" not in dp


def test_off_by_default_nothing_changes_and_nothing_is_written():
    sc = Scenario()
    assert not sc.uses_nvlink and sc.racks == 0
    doc = scenario_to_dict(sc)
    assert "nvlink_gpus" not in doc and "rack_spare_trays" not in doc
    assert "racks" not in simulate(sc.replace(trials=50, days=2.0)).to_json_dict()


def test_the_keys_round_trip_and_misfits_are_refused_in_one_line():
    sc = _gb200()
    doc = scenario_to_dict(sc)
    assert (doc["nvlink_gpus"], doc["rack_spare_trays"]) == (72, 2)
    assert scenario_from_dict(json.loads(json.dumps(doc))) == sc
    # Without racks, warm spare trays are unused, not refused (racks turn off in one step).
    assert validate(sc.replace(nvlink_gpus=0)).rack_spare_trays == 2
    for bad, words in [
        (sc.replace(nvlink_gpus=70), "not whole trays of 4 GPUs"),
        (sc.replace(rack_spare_trays=18), "leave no tray for the job"),
        (
            sc.replace(spares=Spares(spare_nodes=10)),
            r"whole racks of 18 nodes on NVLink domains; 10 is not \(give a multiple of 18: 0 or 18\)",
        ),
        (sc.replace(spares=Spares(spare_nodes=40)), r"40 is not \(give a multiple of 18: 36 or 54\)"),
        (
            sc.replace(spares=Spares(recovery_mode="continue", replica_gpus=96)),
            "replicas of 96 GPUs do not line up with the job's 64 GPUs of a rack",
        ),
    ]:
        with pytest.raises(ScenarioError, match=words):
            validate(bad)


def test_the_move_share_is_the_chain_of_one_rack():
    # One spare: states 0 and 1; from 1 a tray failure moves the rack (back to 0), a repair frees it.
    lam, mu = 0.3, 0.5
    assert move_share(1, lam, 0.0, 1.0 / mu) == pytest.approx(lam / (2 * lam + mu), rel=1e-12)
    assert move_share(0, lam, 0.0, 2.0) == 1.0
    # Many spares and quick repairs: a move is rare; a reset from other causes makes it rarer still.
    assert move_share(4, 0.01, 0.0, 1.0) < 1e-8
    assert move_share(2, lam, 0.2, 2.0) < move_share(2, lam, 0.0, 2.0)


@pytest.mark.parametrize("spares", [1, 2])
def test_the_moves_agree_with_the_chain(spares):
    """Every tray's cause repaired in one mean (24 h): the share of tray failures that move their rack is the rack's
    chain's, and domain failures always move it."""
    sp = Spares(repair_hours=(("GPU", 24.0), ("Host", 24.0), ("Unplanned Maintenance", 24.0)))
    sc = _gb200(days=6.0, times=60.0, rack_spare_trays=spares, spares=sp, trials=600)
    expected = rack_moves_expected(sc)
    assert expected is not None
    got = _engine(sc, 600, 9)
    assert got.rack_moved is not None
    assert abs(got.rack_moved.mean() - expected) <= Z * _sem(got.rack_moved), (got.rack_moved.mean(), expected)
    # The expectation is not a formality: with one spare fewer, more racks move.
    fewer = rack_moves_expected(sc.replace(rack_spare_trays=spares - 1))
    assert fewer is not None and fewer > expected + 6 * _sem(got.rack_moved)


GRID = [
    ("restart, pool of 2 racks, swap", _gb200(spares=Spares(spare_nodes=36, swap_min=10.0)), 200),
    ("restart, shrink", _gb200(spares=Spares(spare_nodes=18, swap_min=5.0, min_gpus=2000)), 200),
    (
        "continue, replicas of 128 GPUs, pool",
        _gb200(spares=Spares(spare_nodes=36, swap_min=10.0, recovery_mode="continue", replica_gpus=128)),
        200,
    ),
    (
        "restart, moves take 40 min, pool, swap",
        _gb200(rack_move_min=40.0, spares=Spares(spare_nodes=36, swap_min=10.0)),
        200,
    ),
    (
        "continue, moves take 40 min, short pool",
        _gb200(
            rack_move_min=40.0,
            spares=Spares(spare_nodes=18, swap_min=5.0, recovery_mode="continue", replica_gpus=128),
        ),
        200,
    ),
    (
        "correlated rows of 3 racks, one spare",
        _gb200(rack_spare_trays=1, correlated_rate_per_day=4.0, correlated_domains=3, spares=Spares(spare_nodes=72)),
        200,
    ),
]


@pytest.mark.parametrize("name,sc,ref_trials", GRID, ids=[g[0] for g in GRID])
def test_the_general_engine_agrees_with_the_reference(name, sc, ref_trials):
    got, ref, bad = against_reference(sc, ref_trials, 31)
    z = _z(got.rack_covered, ref.covered)
    if abs(z) > Z:
        bad.append(f"covered: engine {got.rack_covered.mean():.4g} reference {ref.covered.mean():.4g}")
    z = _z(got.nodes_in_repair, ref.nodes_in_repair)
    if abs(z) > Z:
        bad.append(
            f"nodes in repair: engine {got.nodes_in_repair.mean():.4g} reference {ref.nodes_in_repair.mean():.4g}"
        )
    assert not bad, "; ".join(bad)
    # The racks did something here: some failures were covered and some racks moved.
    assert got.rack_covered.mean() > 1 and got.node_failures.mean() > 1


def test_the_json_and_the_run_line_say_what_the_racks_did(capsys):
    sc = _gb200(days=2.0, trials=200)
    d = simulate(sc).to_json_dict()
    r = d["racks"]
    assert (r["nvlink_gpus"], r["trays_per_rack"], r["job_trays_per_rack"], r["racks"]) == (72, 18, 16, 36)
    assert r["gpus_in_racks"] == 36 * 72
    assert r["covered_in_rack"]["mean"] > 0 and r["moves"]["mean"] > 0
    # Every failure that takes nodes was covered or moved racks.
    takes = sum(v for k, v in d["by_component"].items() if k not in ("Software Bug", "NCCL Watchdog Timeouts"))
    assert r["covered_in_rack"]["mean"] + r["moves"]["mean"] == pytest.approx(takes, rel=0.02)
    assert main(["run", "--preset", "gb200-nvl72-16k", "--trials", "20", "--days", "2"]) == 0
    out = capsys.readouterr().out
    assert "Racks                    NVLink domains of 72 GPUs: 18 trays of 4 GPUs" in out
    assert "moved racks to spare racks" in out


@pytest.mark.parametrize("slug,gpus", [("gb200-nvl72-16k", 16_384), ("gb200-nvl72-100k", 100_000)])
def test_the_presets_are_gb200_nvl72(slug, gpus):
    sc = load_preset(slug)
    assert (sc.gpus, sc.gpus_per_node, sc.nvlink_gpus, sc.rack_spare_trays) == (gpus, 4, 72, 2)
    # SemiAnalysis's GB200 NVL72 band: 1,000-3,000 GPU-days between interruptions; the preset takes its middle.
    gpu_days = 1.0 / (sc.rate_per_gpu_hour * 24.0)
    assert 1_000 <= gpu_days <= 3_000
    assert gpu_days == pytest.approx(2_000, rel=1e-9)


def test_the_window_group_sets_each_input_alone_and_says_what_the_racks_do(make_window, slide_alone, qtbot):
    from PySide6.QtWidgets import QLabel

    win = make_window()
    note = win.findChild(QLabel, "racksNote")
    assert note is not None and note.text().startswith("Off: each node stands alone")
    # A GB200 layout: trays of 4 GPUs, racks of 72, then each control moves its input alone.
    win.inputs.update(gpus_per_node=4, nvlink_gpus=72)
    qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)
    assert note.text().startswith("NVLink domains of 72 GPUs: 18 trays of 4 GPUs, no warm spare; the job on 228 racks")
    assert "a failed tray's rack moves to a spare rack (unlimited)" in note.text()
    # On racks the rack is the failure domain: the recovery strategy's nodes per domain is not used.
    from PySide6.QtWidgets import QWidget

    domain = win.findChild(QWidget, "nodesPerDomainSpin")
    assert domain is not None and not domain.isEnabled() and "the failure domain is the rack" in domain.toolTip()
    spares = slide_alone(win, "rackSpareTraysSlider", "rack_spare_trays", 100)
    assert spares >= 1
    sc = win.scenario()
    assert f"{sc.racks * sc.rack_spare_trays * 4:,} GPUs held as warm spares" in note.text()
    assert "swapped for a warm spare of its rack while one is free" in note.text()
    move = slide_alone(win, "rackMoveSlider", "rack_move_min", 300)
    assert move > 0 and note.text().endswith(f"a move to a spare rack takes {fmt.duration_min(move)} more than a swap")
    # What the window shows is the scenario's: its racks are in the results it draws.
    d = win.plots.result.main.to_json_dict()
    assert d["racks"]["spare_trays_per_rack"] == spares and d["racks"]["racks"] == sc.racks
    # A layout that does not fit says why, in the note.
    win.inputs.update(gpus_per_node=8, nvlink_gpus=36)
    assert note.text().startswith("Does not fit: an NVLink domain of 36 GPUs is not whole trays of 8 GPUs")


def test_sweeps_and_sizing_hold_whole_racks():
    from planner_gui.core.analysis.sensitivity import levers
    from planner_gui.core.analysis.sizing import sizing_counts
    from planner_gui.core.analysis.sweep import at_gpus

    sc = load_preset("gb200-nvl72-16k")
    assert sc.spares is not None and sc.spares.spare_nodes == 36
    counts = sizing_counts(sc, sc.spares)
    assert len(counts) > 3 and counts[0] == 0 and all(c % 18 == 0 for c in counts)
    # A sweep over GPU counts keeps the pool's share of the job's racks, in whole racks, at least one.
    for gpus, racks in ((1024, 1), (16_384, 2), (100_000, 12)):
        pool = at_gpus(sc, gpus).spares.spare_nodes  # type: ignore[union-attr]
        assert pool == racks * 18, (gpus, pool)
    # The levers: one more warm spare tray a rack, and a pool of whole racks.
    by = {lv.name: lv for lv in levers(sc, 0.5)}
    assert by["warm spare trays"].apply(sc).rack_spare_trays == 3
    assert by["spare pool"].apply(sc).spares.spare_nodes == 72  # type: ignore[union-attr]
    assert "rack move" not in by  # (no move time: nothing to shorten)
    moving = sc.replace(rack_move_min=30.0)
    assert {lv.name: lv for lv in levers(moving, 0.5)}["rack move"].apply(moving).rack_move_min == 15.0


def test_a_warm_spare_tray_costs_its_gpus_in_the_levers():
    from planner_gui.core.analysis.sensitivity import paired_sensitivity

    sc = load_preset("gb200-nvl72-16k").replace(days=2.0, trials=60)
    effects = {e.lever: e for e in paired_sensitivity(sc, 0.5)}
    warm = effects["warm spare trays"]
    more = sc.replace(rack_spare_trays=3)
    held = (more.warm_spare_gpus - sc.warm_spare_gpus) * sc.hours * sc.gpu_hour_cost_usd
    assert more.warm_spare_gpus - sc.warm_spare_gpus == 274 * 12 - 256 * 8 == 1240
    # The lever's cost is the extra warm spares' GPU-hours, less what the goodput it buys saves (a little here).
    lost_saved = warm.goodput_delta * sc.gpus * sc.hours * sc.gpu_hour_cost_usd
    assert warm.cost_delta_usd == pytest.approx(held - lost_saved, rel=1e-6, abs=1.0)
    assert warm.cost_delta_usd > 0.9 * held


def test_a_correlated_row_of_racks_is_back_after_its_repair():
    """Every rack of the job taken at once: back after the event's repair, so the nodes out over the window are
    the events' rate x their racks' trays x the repair (M/G/infinity), however many spares were in repair in them."""
    sc = _gb200(days=6.0, times=1.0, correlated_rate_per_day=2.0, correlated_domains=36, correlated_repair_hours=4.0)
    sc = sc.replace(rack_spare_trays=0, spares=Spares(spare_nodes=36 * 18 * 3))
    got = _engine(sc, 400, 3)
    fc = failure_classes(sc, sc.spares)  # type: ignore[arg-type]
    expected = float((fc.rates * fc.nodes * fc.repair).sum())
    assert abs(got.nodes_in_repair.mean() - expected) <= Z * _sem(got.nodes_in_repair), (
        got.nodes_in_repair.mean(),
        expected,
    )


def test_the_dense_and_the_sorted_count_of_racks_decide_alike(monkeypatch):
    import planner_gui.core.sim.racks as racks

    sc = _gb200(days=2.0, rack_spare_trays=1, spares=Spares(spare_nodes=36))
    dense = _engine(sc, 300, 4)
    monkeypatch.setattr(racks, "_DENSE_RACKS", 0)
    sparse = _engine(sc, 300, 4)
    np.testing.assert_array_equal(dense.rack_covered, sparse.rack_covered)
    np.testing.assert_array_equal(dense.hours["useful"], sparse.hours["useful"])
    assert dense.rack_covered.sum() > 0


def test_without_warm_spares_the_pool_of_racks_is_m_g_infinity():
    """No warm spare: every tray failure moves its rack for its repair alone, so the racks out are M/G/infinity with
    each failure taking a rack's trays (docs/model.md 3, "The pool"), and a move finds no spare rack as it says."""
    from planner_gui.core.model.spares import spares_params
    from planner_gui.core.theory.spares import p_no_spare

    sc = load_preset("gb200-nvl72-16k").replace(
        rack_spare_trays=0, spares=Spares(spare_nodes=20 * 18), days=20.0, checkpoint_interval_min=5.0
    )
    got = _engine(sc, 600, 8)
    p = spares_params(sc, sc.spares, 5.0)  # type: ignore[arg-type]
    assert got.nodes_in_repair.mean() == pytest.approx(
        p.mean_nodes_in_repair, rel=Z * _sem(got.nodes_in_repair) / p.mean_nodes_in_repair
    )
    # The share of moves that find no spare rack: a ratio of per-trial sums, its standard error by the delta method.
    x, y = got.no_spare.astype(float), got.node_failures.astype(float)
    share = x.sum() / y.sum()
    se = float(np.std(x - share * y, ddof=1) / math.sqrt(len(x)) / y.mean())
    assert abs(share - p_no_spare(p)) <= Z * se, (share, p_no_spare(p), se)
    assert p_no_spare(p) > 0.005  # (the pool is short now and then: the check means something)


def test_a_time_to_train_holds_the_warm_spares_for_its_length():
    from planner_gui.core.model.scenario import Training

    sc = load_preset("gb200-nvl72-16k").replace(trials=60, training=Training(compute_gpu_hours=16_384 * 24.0 * 3))
    d = simulate(sc).to_json_dict()
    hours = d["time_to_train"]["days"]["mean"] * 24.0
    assert d["racks"]["warm_spare_cost_to_train_usd"] == pytest.approx(2048 * hours * 2.5, rel=1e-9)
    assert simulate(sc.replace(training=None)).to_json_dict()["racks"]["warm_spare_cost_to_train_usd"] is None


def test_repair_times_count_on_racks_with_warm_spares_whatever_the_pool(capsys):
    """A warm spare is busy while its tray is repaired, so the repair's length decides whether the next failure of
    its rack moves it: with an unlimited pool the flag is taken (not refused as changing nothing) and moves more
    racks; without warm spares it still changes nothing there."""
    base = ["run", "--preset", "gb200-nvl72-16k", "--spare-nodes", "unlimited", "--trials", "100", "--days", "20"]
    moves = []
    for extra in ([], ["--repair-hours", "GPU=960"]):
        assert main([*base, *extra, "--json"]) == 0
        moves.append(json.loads(capsys.readouterr().out)["racks"]["moves"])
    se = math.hypot(moves[0]["sem"], moves[1]["sem"])
    assert moves[1]["mean"] > moves[0]["mean"] + Z * se, moves
    assert main([*base, "--rack-spare-trays", "0", "--repair-hours", "GPU=960"]) == 2
    assert "changes nothing with unlimited spares" in capsys.readouterr().err
    # Rack flags typed without racks say so.
    assert main(["run", "--rack-move", "30", "--trials", "10"]) == 2
    assert "--rack-move: changes nothing without NVLink racks" in capsys.readouterr().err
