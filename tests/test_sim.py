"""The general engine (planner_gui/core/sim) against the event-by-event reference simulator of docs/model.md
(tests/reference_model.py, written from that page, not from the engine), on a grid of combinations of every
feature from 16,384 to 1,000,000 GPUs, both recovery modes and both placements; and each fast engine against
the general one on its own domain (docs/model.md, "Engines").

Every comparison is a two-sample z of the per-trial means, with the standard error of both; fixed seeds make
each run the same every time. The grid has a few hundred comparisons, so the bound is 4 standard errors (a
chance of about 2 % that one true agreement fails somewhere, with these seeds: none does).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np
import pytest
from reference_model import simulate_reference

from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import validate
from planner_gui.core.model.scenario import Scenario, Tiers, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.sim.capabilities import train_engine, window_engine
from planner_gui.core.sim.model import sim_model
from planner_gui.core.sim.run import simulate_train, simulate_windows
from planner_gui.core.theory.profiles import burn_in_profile

pytestmark = pytest.mark.slow

Z = 4.0
#: The reference's job starts this long before the window (its world, with the pool, warms up from empty before).
JOB_WARMUP = 48.0
KEYS = (
    "useful",
    "checkpoint",
    "lost_work",
    "recovery",
    "planned_restart",
    "waiting_for_spares",
    "reduced_throughput",
)
COUNTS = ("unplanned", "planned", "restores_fast", "restores_persistent", "continued", "node_failures", "no_spare")

IM = load_preset("h100-100k-inmemory").tiers
assert IM is not None
SAME = dataclasses.replace(IM, fast_interval_min=1.0, fast_placement="same-domain")
OTHER = dataclasses.replace(IM, fast_interval_min=1.0, fast_placement="other-domain")
OFF = Tiers(persistent_upload_min=0.0)


def _sc(gpus: int, days: float, interval: float, **changes: object) -> Scenario:
    return Scenario(name="grid", gpus=gpus, days=days, checkpoint_interval_min=interval).replace(**changes)


def _pool(n: int, swap: float = 10.0, **more: object) -> Spares:
    return Spares(spare_nodes=n, swap_min=swap, **more)  # type: ignore[arg-type]


def _cont(n: int | None, swap: float = 10.0, **more: object) -> Spares:
    return Spares(spare_nodes=n, swap_min=swap, recovery_mode="continue", **more)  # type: ignore[arg-type]


BURN = burn_in_profile(0.7, 30, 2.0)
TABLE = ((0.0, 3.0), (0.5, 1.0))

#: (name, scenario, reference trials, reference warm-up hours or None for the default, which fills the pool).
GRID = [
    ("16k one tier", _sc(16_384, 2, 10.0, checkpoint_write_s=30.0), 300, 48.0),
    ("16k same-domain, uploads, k=3", _sc(16_384, 2, 3.0, tiers=dataclasses.replace(SAME, persistent_upload_min=1.5)), 300, 48.0),
    ("16k other-domain + pool", _sc(16_384, 2, 1.0, tiers=OTHER, spares=_pool(3)), 200, None),
    ("16k continue + pool", _sc(16_384, 2, 10.0, spares=_cont(3)), 200, None),
    ("16k continue + same-domain + uploads", _sc(16_384, 2, 2.0, tiers=SAME, spares=_cont(4)), 200, None),
    ("16k short pool, waiting", _sc(16_384, 2, 10.0, spares=_pool(1, 20.0)), 200, None),
    ("16k shrink", _sc(16_384, 2, 10.0, spares=_pool(1, 5.0, min_gpus=15_000)), 200, None),
    ("16k burn-in + continue + pool", _sc(16_384, 2, 10.0, rate_profile=BURN, new_cluster=True, spares=_cont(3)), 300, None),
    ("16k uncertainty + other-domain + pool", _sc(16_384, 2, 1.0, rate_uncertainty=True, tiers=OTHER, spares=_pool(14)), 200, None),
    ("16k profile + same-domain + 5 s stall", _sc(16_384, 2, 6.0, rate_profile=TABLE, tiers=SAME, checkpoint_write_s=5.0), 300, 48.0),
    ("100k one tier + pool", _sc(100_000, 1, 2.2, spares=_pool(89)), 150, None),
    ("100k other-domain + pool", _sc(100_000, 1, 1.0, tiers=OTHER, spares=_pool(89)), 150, None),
    ("100k same-domain + continue + pool", _sc(100_000, 1, 1.0, tiers=SAME, spares=_cont(89)), 150, None),
    ("100k burn-in + pool", _sc(100_000, 1, 2.2, rate_profile=burn_in_profile(0.7, 30, 1.0), new_cluster=True, spares=_pool(89)), 300, None),
    ("100k uncertainty + pool", _sc(100_000, 1, 2.2, rate_uncertainty=True, spares=_pool(89)), 150, None),
    ("100k same-domain + 5 s stall + uploads", _sc(100_000, 1, 6.0, tiers=SAME, checkpoint_write_s=5.0), 200, 48.0),
    ("100k continue, lognormal repairs, short pool", _sc(100_000, 1, 5.0, spares=_cont(60, repair_sigma=1.0)), 150, None),
    (
        "100k everything, other-domain",
        _sc(100_000, 1, 4.0, tiers=OTHER, checkpoint_write_s=5.0, rate_profile=burn_in_profile(0.7, 30, 1.0), new_cluster=True,
            rate_uncertainty=True, spares=_cont(89)),
        300,
        None,
    ),
    (
        "100k everything, same-domain",
        _sc(100_000, 1, 4.0, tiers=SAME, checkpoint_write_s=5.0, rate_profile=TABLE, rate_uncertainty=True, spares=_cont(89)),
        150,
        None,
    ),
    ("100k short pool + same-domain", _sc(100_000, 1, 1.0, tiers=SAME, spares=_pool(70)), 150, None),
    (
        "100k restart growing with the job + continue + same-domain + planned",
        _sc(100_000, 1, 1.0, restart_min=1.0, restart_per_log2_gpus_min=0.5, planned_per_day=4.0, tiers=SAME,
            spares=_cont(89)),
        150,
        None,
    ),
    ("100k shrink + other-domain + uploads", _sc(100_000, 1, 1.0, tiers=OTHER, spares=_pool(60, min_gpus=95_000)), 150, None),
    (
        "100k continue, 512-GPU replicas, 4-node domains, 2 may be lost",
        _sc(100_000, 1, 5.0, tiers=dataclasses.replace(OFF, nodes_per_domain=4), spares=_cont(89, replica_gpus=512, max_replicas_lost=2)),
        150,
        None,
    ),
    ("100k planned 5 a day + continue + same-domain", _sc(100_000, 1, 1.0, planned_per_day=5.0, tiers=SAME, spares=_cont(None, 0.0)), 200, 48.0),
    ("100k new cluster (a table) + same-domain + uploads", _sc(100_000, 1, 1.0, rate_profile=TABLE, new_cluster=True, tiers=SAME), 300, None),
    ("100k other-domain, no replicas, + pool", _sc(100_000, 1, 2.0, tiers=dataclasses.replace(OTHER, fast_replicas=0), spares=_pool(89)), 150, None),
    ("100k persistent restore + uploads + continue", _sc(100_000, 1, 5.0, tiers=Tiers(persistent_upload_min=2.0, persistent_restore_min=2.0), spares=_cont(89)), 150, None),
    ("16k continue, no stall, no swap", _sc(16_384, 2, 10.0, planned_per_day=0.0, spares=_cont(None, 0.0, continue_stall_min=0.0)), 300, 48.0),
    ("262k short pool + shrink", _sc(262_144, 0.5, 1.5, spares=_pool(180, min_gpus=250_000)), 100, None),
    ("1M one tier + pool", _sc(1_000_000, 0.25, 0.8, spares=_pool(890)), 60, None),
    ("1M same-domain + uploads + continue + pool", _sc(1_000_000, 0.25, 0.5, tiers=dataclasses.replace(SAME, fast_interval_min=0.3), spares=_cont(900)), 60, None),
    (
        "1M everything, other-domain",
        _sc(1_000_000, 0.25, 0.5, tiers=dataclasses.replace(OTHER, fast_interval_min=0.3), checkpoint_write_s=2.0,
            rate_uncertainty=True, rate_profile=((0.0, 2.0), (0.1, 1.0)), spares=_cont(900)),
        60,
        None,
    ),
    (
        "1M burn-in + uncertainty + same-domain + stall",
        _sc(1_000_000, 0.25, 1.0, tiers=dataclasses.replace(SAME, fast_interval_min=0.3), checkpoint_write_s=2.0,
            rate_uncertainty=True, rate_profile=burn_in_profile(0.7, 30, 0.25), new_cluster=True),
        80,
        None,
    ),
    # Stress cases: the model's finer rules made to matter (each fails on a deliberate mutation of the engine).
    (
        "16k stress: same-domain, slow uploads, restores from storage, planned 24 a day",
        _sc(16_384, 4, 30.0, planned_per_day=24.0, tiers=Tiers(fast_enabled=True, fast_interval_min=10.0, fast_stall_s=5.0,
            fast_restore_min=1.0, fast_placement="same-domain", nodes_per_domain=4, persistent_upload_min=45.0,
            persistent_restore_min=2.0),
            components=tuple(dataclasses.replace(c, rate_per_gpu_hour=c.rate_per_gpu_hour * 6) for c in Scenario().components)),
        400,
        None,
    ),
    (
        "16k stress: continue, short pool, long swap",
        _sc(16_384, 4, 20.0, spares=_cont(12, 60.0, replica_gpus=512, repair_hours=(("GPU", 12.0), ("Host", 6.0))),
            components=tuple(dataclasses.replace(c, rate_per_gpu_hour=c.rate_per_gpu_hour * 3) for c in Scenario().components)),
        300,
        None,
    ),
    (
        "16k stress: planned 24 a day, restores, swap",
        _sc(16_384, 4, 20.0, planned_per_day=24.0, tiers=Tiers(persistent_restore_min=5.0), spares=_pool(40, 15.0),
            components=tuple(dataclasses.replace(c, rate_per_gpu_hour=c.rate_per_gpu_hour * 4) for c in Scenario().components)),
        300,
        None,
    ),
]  # fmt: skip


def _z(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample z of the means. Where one sample has no spread (a rare event neither seen nor seen once),
    the other's variance stands for both: a sample of zeros is not evidence of an exact zero."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    va, vb = a.var(ddof=1), b.var(ddof=1)
    va, vb = (va if va > 0 else vb), (vb if vb > 0 else va)
    se = np.sqrt(va / len(a) + vb / len(b))
    diff = float(a.mean() - b.mean())
    if se == 0:
        return 0.0 if abs(diff) < 1e-9 else float("inf")
    return diff / float(se)


def disagreements(got, ref, hours: Iterable[str], counts: Iterable[str]) -> list[str]:
    """The hours and counts whose means the engine's trials ``got`` and the reference's ``ref`` disagree on by more
    than Z standard errors, in words."""
    bad = []
    pairs = [(k, got.hours[k], ref.hours[k]) for k in hours] + [(k, getattr(got, k), getattr(ref, k)) for k in counts]
    for key, a, b in pairs:
        z = _z(a, b)
        if abs(z) > Z:
            bad.append(f"{key}: engine {np.mean(a):.4g} reference {np.mean(b):.4g} z={z:.1f}")
    return bad


def against_reference(sc: Scenario, ref_trials: int, seed: int, counts: Iterable[str] = COUNTS):
    """The general engine's window (1,500 trials, seed ``seed + 1``) and the reference's (``ref_trials``, seed
    ``seed``, its job warming up :data:`JOB_WARMUP` hours), and where they disagree (:func:`disagreements`, on every
    hours label the reference gives). Every hour of the engine's window has one label."""
    ref = simulate_reference(sc, ref_trials, seed, job_warmup_hours=JOB_WARMUP)
    got = _engine(sc, 1500, seed + 1)
    total = sum(got.hours[k] for k in got.hours)
    np.testing.assert_allclose(total, sc.hours, rtol=0, atol=1e-6 * sc.hours)
    return got, ref, disagreements(got, ref, ref.hours, counts)


def _engine(sc: Scenario, trials: int, seed: int):
    validate(sc)  # every combination is a scenario the files and the flags take
    fast = None if sc.tiers is None or not sc.tiers.fast_enabled else float(sc.tiers.fast_interval_min)
    m = sim_model(sc.replace(trials=trials, seed=seed), fast, float(sc.checkpoint_interval_min), trials=trials)
    return simulate_windows([(m, trials, seed)])[0]


@pytest.mark.parametrize("name,sc,ref_trials,warm", GRID, ids=[g[0] for g in GRID])
def test_the_general_engine_agrees_with_the_reference(name, sc, ref_trials, warm):
    # The reference's world warms up from an empty pool for as long as its pool needs (its default), the job for
    # JOB_WARMUP hours before the window.
    ref = simulate_reference(sc, ref_trials, 11, job_warmup_hours=JOB_WARMUP)
    got = _engine(sc, 1500, 12)
    bad = disagreements(got, ref, KEYS, COUNTS)
    if sc.uses_spares:
        z = _z(got.nodes_in_repair, ref.nodes_in_repair)
        if abs(z) > Z:
            bad.append(
                f"nodes in repair: engine {got.nodes_in_repair.mean():.4g} reference {ref.nodes_in_repair.mean():.4g}"
            )
    assert not bad, "; ".join(bad)
    # Every hour of the window has one label.
    total = sum(got.hours[k] for k in KEYS)
    assert np.allclose(total, sc.hours, rtol=0, atol=1e-6 * sc.hours)


TRAIN = [
    ("16k everything", GRID[7][1].replace(training=Training(compute_gpu_hours=16_384 * 30.0)), 200, None),
    ("100k same-domain + stall", GRID[15][1].replace(training=Training(compute_gpu_hours=100_000 * 12.0)), 200, 48.0),
    (
        "100k burn-in + pool",
        GRID[13][1].replace(spares=_pool(150), training=Training(compute_gpu_hours=100_000 * 10.0)),
        150,
        None,
    ),
    ("100k continue + uncertainty", _sc(100_000, 1, 5.0, rate_uncertainty=True, spares=_cont(89), training=Training(compute_gpu_hours=100_000 * 10.0)), 150, None),
]  # fmt: skip


@pytest.mark.parametrize("name,sc,ref_trials,warm", TRAIN, ids=[t[0] for t in TRAIN])
def test_the_general_time_to_train_agrees_with_the_reference(name, sc, ref_trials, warm):
    ref = simulate_reference(sc, ref_trials, 21, training=True, warmup_hours=warm)
    fast = None if sc.tiers is None or not sc.tiers.fast_enabled else float(sc.tiers.fast_interval_min)
    m = sim_model(sc.replace(trials=1500, seed=22), fast, float(sc.checkpoint_interval_min), trials=1500)
    work = sc.training.gpu_hours / sc.gpus
    got = simulate_train([(m, 1500, 22, work)])[0]
    assert np.all(got >= work - 1e-9)  # never faster than at 100 % goodput
    assert abs(_z(got, ref.train_hours)) < Z, (got.mean(), ref.train_hours.mean())


# -- the fast engines equal the general one on their domains (|z| < 3 on a grid) --------------------------


FAST_GRID = [
    Scenario(gpus=16_384, trials=2000),
    Scenario(gpus=100_000, trials=2000),
    Scenario(gpus=100_000, trials=2000, checkpoint_interval_min=30.0, checkpoint_write_s=60.0),
    Scenario(gpus=1_000_000, days=5.0, trials=1000),
    Scenario(gpus=100_000, trials=2000, rate_uncertainty=True),
    Scenario(gpus=100_000, trials=2000, rate_profile=burn_in_profile(0.7, 30, 54)),
    Scenario(gpus=16_384, trials=2000, rate_profile=((0.0, 3.0), (10.0, 1.0)), rate_uncertainty=True),
    # (The two-tier engine's domain has no planned interruption meeting a restore: see the table.)
    load_preset("h100-100k-inmemory").replace(trials=2000, planned_per_day=0.0),
    load_preset("h100-100k-inmemory").replace(trials=2000, planned_per_day=0.0, tiers=dataclasses.replace(IM, fast_placement="same-domain")),
    load_preset("h100-100k-inmemory").replace(
        trials=2000, tiers=dataclasses.replace(IM, fast_placement="same-domain", fast_interval_min=1.0, persistent_upload_min=3.0),
        checkpoint_interval_min=5.0, planned_per_day=0.0,
    ),
    Scenario(gpus=100_000, trials=2000, tiers=Tiers(persistent_upload_min=2.0)),
    Scenario(gpus=100_000, trials=2000, planned_per_day=0.0, tiers=Tiers(persistent_upload_min=2.0, persistent_restore_min=2.0)),
]  # fmt: skip


@pytest.mark.parametrize("sc", FAST_GRID, ids=[f"{s.gpus}-{window_engine(s).key}-{i}" for i, s in enumerate(FAST_GRID)])
def test_each_fast_engine_equals_the_general_one_on_its_domain(sc):
    from planner_gui.core.analysis.results import simulate_scenarios

    fast_res, general = simulate_scenarios([sc, sc.replace(seed=sc.seed + 1)], general=False)[0], None
    assert fast_res.engine in ("renewal", "tiers")
    general = simulate_scenarios([sc.replace(seed=sc.seed + 1)], general=True)[0]
    assert general.engine == "general"
    fh, gh = fast_res.hours_per_trial(), general.hours_per_trial()
    for key in ("useful", "checkpoint", "lost_work", "recovery", "planned_restart"):
        z = _z(fh[key], gh[key])
        assert abs(z) < 3.0, (key, fh[key].mean(), gh[key].mean(), z)
    assert abs(_z(fast_res.trials.unplanned, general.trials.unplanned)) < 3.0
    if fast_res.restores_fast is not None and general.restores_fast is not None:
        assert abs(_z(fast_res.restores_fast, general.restores_fast)) < 3.0


@pytest.mark.parametrize(
    "sc",
    [
        load_preset("h100-100k-inmemory"),
        Scenario(gpus=100_000, tiers=Tiers(persistent_upload_min=2.0, persistent_restore_min=2.0)),
    ],
    ids=["fast tier", "restore time"],
)
def test_planned_interruptions_meeting_restores_go_to_the_general_engine(sc):
    """The two-tier engine takes every planned interruption for a full renewal; one during a restarting
    failure's downtime keeps the pending restore (docs/model.md 2.4), so with planned interruptions the table
    sends a fast tier, or a restore time, to the general engine; without them, to the two-tier engine."""
    assert sc.planned_per_day > 0 and window_engine(sc).key == "general"
    assert window_engine(sc.replace(planned_per_day=0.0)).key == "tiers"


@pytest.mark.parametrize("gpus", [16_384, 100_000])
def test_the_first_passage_equals_the_general_time_to_train(gpus):
    from planner_gui.core.analysis.results import simulate_scenarios

    sc = Scenario(gpus=gpus, trials=2000, training=Training(compute_gpu_hours=gpus * 200.0))
    assert train_engine(sc).key == "first-passage"
    fast = simulate_scenarios([sc])[0].time_to_train
    general = simulate_scenarios([sc.replace(seed=sc.seed + 1)], general=True)[0].time_to_train
    assert fast is not None and general is not None
    assert abs(_z(fast.hours, general.hours)) < 3.0, (fast.hours.mean(), general.hours.mean())


# -- the pool for 99 % of failures never contradicts the simulated chance of finding none ------------------


@pytest.mark.parametrize(
    "sc",
    [
        _sc(100_000, 1, 2.2, spares=_pool(89)),
        _sc(100_000, 1, 2.2, rate_profile=burn_in_profile(0.7, 30, 1.0), new_cluster=True, spares=_cont(89)),
    ],
    ids=["steady", "burn-in"],
)
def test_the_simulated_pool_for_a_share_of_failures_counts_the_failures_that_found_spares(sc):
    from planner_gui.core.analysis.results import simulate

    res = simulate(sc.replace(trials=200, seed=3))
    t = res.spares_run.trials
    n = int(sc.spares.spare_nodes)
    found = t.need_hist[: n + 1].sum() / t.need_hist.sum()
    assert found == pytest.approx(1.0 - t.p_no_spare(), abs=1e-12)
    assert t.pool_for(found) == n or t.need_hist[n] == 0  # the smallest pool that gives that share
    assert t.pool_for(1.0) == len(t.need_hist) - 1
    s = res.to_json_dict()["spares"]
    if s["p_no_spare_expected"] is None:  # no closed form: the recommendation is the simulated one
        assert s["recommended_simulated"] and s["recommended_for_99pct"] == t.pool_for(0.99)
        assert (s["recommended_for_99pct"] > n) == (t.p_no_spare() > 0.01)
    else:  # M/G/infinity's
        from planner_gui.core.theory.spares import recommended_spares

        assert not s["recommended_simulated"]
        assert s["recommended_for_99pct"] == recommended_spares(res.spares_run.params, 0.99)


# -- the two-tier closed form with planned interruptions that keep a pending restore (docs/model.md 2.4) -----

PENDING = {
    "fast tier, other domain": Scenario(
        gpus=100_000, days=5.0, trials=1500, seed=4, planned_per_day=24.0, restart_min=6.0, checkpoint_write_s=0.0,
        tiers=Tiers(fast_enabled=True, fast_interval_min=2.0, fast_restore_min=8.0, fast_placement="other-domain",
                    persistent_upload_min=1.0),
    ),
    "restores from storage": Scenario(
        gpus=100_000, days=5.0, trials=1500, seed=4, planned_per_day=24.0, restart_min=6.0,
        checkpoint_interval_min=5.0, tiers=Tiers(persistent_restore_min=8.0, persistent_upload_min=2.0),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", PENDING)
def test_the_closed_form_keeps_the_restore_a_planned_interruption_finds_pending(name):
    """24 planned interruptions a day and an 8-minute restore: the general engine agrees with the closed form
    (a Markov chain of the intervals' kinds, planner_gui/core/theory/exact.py), and is far from the one that takes every
    planned interruption for a full renewal (about 60 standard errors), so the check can fail."""
    from planner_gui.core.analysis.results import simulate
    from planner_gui.core.theory.tiers import expected_fractions

    res = simulate(PENDING[name])
    assert res.engine == "general"
    g = res.goodput
    se = float(g.std(ddof=1)) / np.sqrt(len(g))
    new = res.expected.fractions
    assert new is not None and abs(g.mean() - float(new.useful)) < Z * se
    for key, got in res.hours_per_trial().items():  # every hour's label, not only the goodput
        want = float(getattr(new, "planned" if key == "planned_restart" else key)) * res.scenario.hours
        assert abs(got.mean() - want) < Z * float(got.std(ddof=1)) / np.sqrt(len(got)) + 1e-9, key
    old = expected_fractions(dataclasses.replace(res.tier_plan.params, restore_fast=0.0, restore_persistent=0.0))
    assert abs(g.mean() - float(old.useful)) > 20 * se


def test_a_sweeps_intervals_see_the_same_failures_whatever_their_warm_up():
    """Common random numbers across a sweep's checkpoint intervals: a longer interval warms up longer (here
    46 h against 70 h, the second over two chunks), and the window's failures stayed paired only while both
    warm-ups fitted in one chunk."""
    sc = _sc(
        8192,
        2.0,
        3.0,
        spares=_cont(2),
        components=tuple(
            dataclasses.replace(c, rate_per_gpu_hour=c.rate_per_gpu_hour * 8) for c in Scenario().components
        ),
    )
    short, long = (sim_model(sc.replace(trials=200), None, x) for x in (3.0, 240.0))
    assert long.warm_hours() > short.warm_hours() + 12.0
    a, b = simulate_windows([(short, 200, 9), (long, 200, 9)])
    assert np.array_equal(a.unplanned, b.unplanned) and np.array_equal(a.by_component, b.by_component)
    assert np.array_equal(a.planned, b.planned) and a.unplanned.sum() > 0
    assert not np.allclose(a.hours["checkpoint"], b.hours["checkpoint"])  # (the intervals do differ)


def test_a_time_to_train_that_waits_for_spares_forever_is_refused_in_words():
    """A new cluster's window starts with the pool full, so it looked well; the time to train then stepped on
    for ever, the job waiting for spares nearly always (10 spares for about 70 nodes in repair)."""
    from planner_gui.core.analysis.results import simulate
    from planner_gui.core.files.scenario_io import ScenarioError

    sc = load_preset("h100-100k-plan").replace(
        trials=10,
        days=2.0,
        spares=dataclasses.replace(load_preset("h100-100k-plan").spares, spare_nodes=10, recovery_mode="restart"),
    )
    with pytest.raises(ScenarioError, match="would never finish: 10 spare nodes cover the nodes in repair"):
        simulate(sc)
    enough = sc.replace(spares=dataclasses.replace(sc.spares, spare_nodes=200), training=Training(1e6))
    assert simulate(enough).time_to_train is not None  # a pool that covers them trains
