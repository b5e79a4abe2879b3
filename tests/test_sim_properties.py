"""Properties of the general engine over every feature at once, checked by hypothesis: goodput in [0, 1], every
hours category >= 0 and all of them adding up to the window in every trial, the time to train never shorter than
at 100 % goodput, p05 <= mean <= p95 in the report, and no NaN or infinity in its JSON.

Each example turns every feature on or off (the fast tier with either placement and maybe a persistent stall,
uploads, restores, a spare pool with a swap, shrinking or continuing on replicas, lognormal repairs, rate
uncertainty, a rate profile, a new cluster, a training run) and is sized to at most ``POINT_BUDGET`` points;
``derandomize`` makes the examples the same on every run.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner_gui.core.analysis.results import simulate
from planner_gui.core.files.scenario_io import ScenarioError, validate
from planner_gui.core.model.scenario import Scenario, Tiers, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.sim.capabilities import general_points, window_engine

pytestmark = pytest.mark.slow

#: Points of one example's window, all trials together.
POINT_BUDGET = 4e5
SETTINGS = settings(
    deadline=None, derandomize=True, database=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow]
)


def log_uniform(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: min(max(10.0**e, lo), hi))


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    gpus = draw(st.sampled_from([1024, 4096, 16_384, 100_000]))
    days = draw(log_uniform(0.05, 20.0))
    rate_scale = draw(log_uniform(0.1, 10.0))
    sc = Scenario(gpus=gpus, days=days, trials=draw(st.integers(2, 40)), seed=draw(st.integers(0, 2**31)))
    sc = sc.scale_rates(rate_scale)
    sc = sc.replace(
        checkpoint_interval_min=draw(st.one_of(st.just("optimal"), log_uniform(0.5, 600.0))),
        checkpoint_write_s=draw(st.one_of(st.just(0.0), log_uniform(0.1, 300.0))),
        detect_min=draw(log_uniform(0.1, 30.0)),
        restart_min=draw(log_uniform(0.1, 30.0)),
        planned_per_day=draw(st.one_of(st.just(0.0), log_uniform(0.1, 10.0))),
    )
    if draw(st.booleans()):
        sc = sc.replace(
            tiers=Tiers(
                fast_enabled=draw(st.booleans()),
                fast_interval_min=draw(st.one_of(st.just("optimal"), log_uniform(0.2, 60.0))),
                fast_stall_s=draw(log_uniform(0.05, 10.0)),
                fast_restore_min=draw(log_uniform(0.01, 5.0)),
                fast_replicas=draw(st.sampled_from([0, 1])),
                fast_placement=draw(st.sampled_from(["same-domain", "other-domain"])),
                nodes_per_domain=draw(st.sampled_from([2, 4, 8])),
                persistent_upload_min=draw(st.one_of(st.just(0.0), log_uniform(0.1, 30.0))),
                persistent_restore_min=draw(st.one_of(st.just(0.0), log_uniform(0.1, 10.0))),
            )
        )
    if draw(st.booleans()):
        nodes = gpus // 8
        mode = draw(st.sampled_from(["restart", "continue"]))
        pool = draw(st.one_of(st.none(), st.integers(0, max(1, nodes // 50))))
        replica = draw(st.sampled_from([64, 256, 1024]))
        sc = sc.replace(
            spares=Spares(
                spare_nodes=pool,
                swap_min=draw(st.one_of(st.just(0.0), log_uniform(0.5, 60.0))),
                repair_sigma=draw(st.one_of(st.none(), st.floats(0.0, 2.0))),
                min_gpus=(
                    draw(st.one_of(st.none(), st.integers(gpus // 2, gpus)))
                    if mode == "restart" and pool is not None
                    else None
                ),
                recovery_mode=mode,
                replica_gpus=replica,
                continue_stall_min=draw(st.one_of(st.just(0.0), log_uniform(0.1, 10.0))),
                max_replicas_lost=draw(st.integers(0, 3)),
            )
        )
    if draw(st.booleans()):
        sc = sc.replace(rate_uncertainty=True)
    profile = draw(st.sampled_from(["none", "table", "burn-in"]))
    if profile == "table":
        sc = sc.replace(rate_profile=((0.0, draw(log_uniform(0.2, 5.0))), (days / 2, draw(log_uniform(0.2, 5.0)))))
    elif profile == "burn-in":
        from planner_gui.core.theory.profiles import burn_in_profile

        sc = sc.replace(rate_profile=burn_in_profile(0.7, 30.0, days), new_cluster=True)
    if draw(st.booleans()):
        sc = sc.replace(training=Training(compute_gpu_hours=gpus * draw(log_uniform(1.0, 24.0 * days))))
    return sc


def _finite(doc: object) -> bool:
    if isinstance(doc, float):
        return math.isfinite(doc)
    if isinstance(doc, dict):
        return all(_finite(v) for v in doc.values())
    if isinstance(doc, list):
        return all(_finite(v) for v in doc)
    return True


@SETTINGS
@given(scenarios())
def test_every_feature_at_once_keeps_the_invariants(sc):
    try:
        sc = validate(sc)
    except ScenarioError:
        return  # a value the files refuse (a replica larger than the job, a meaningless setting...)
    if general_points(sc) > POINT_BUDGET or (
        sc.training is not None and general_points(sc, sc.training.gpu_hours / sc.gpus * 4) > POINT_BUDGET
    ):
        return
    try:
        res = simulate(sc)
    except ScenarioError as exc:  # a time to train that would never finish is refused in words, not run
        assert "training" in str(exc)
        return
    hours = res.hours_per_trial()
    total = sum(hours.values())
    assert np.all(np.isfinite(total))
    assert np.allclose(total, sc.hours, rtol=0, atol=1e-7 * sc.hours + 1e-9)
    for key, v in hours.items():
        assert np.all(v >= -1e-9 * sc.hours), key
    g = res.goodput
    assert np.all((g >= -1e-12) & (g <= 1 + 1e-12))
    doc = res.to_json_dict()
    json.dumps(doc, allow_nan=False)  # no NaN or infinity anywhere
    assert _finite(doc)
    # Percentiles in order, and the mean within the trials' range (not within p05-p95: one interruption in
    # 21 trials has a mean of 0.048 above a p95 of 0).
    per_trial = {"interruptions": res.trials.unplanned, "goodput": g, "lost_gpu_hours": res.lost_gpu_hours()}
    for key, values in per_trial.items():
        s, tol = doc[key], 1e-9 * max(1.0, abs(doc[key]["mean"]))
        assert s["p05"] <= s["p50"] + tol and s["p50"] <= s["p95"] + tol, (key, s)
        assert values.min() - tol <= s["mean"] <= values.max() + tol, (key, s)
        assert s["mean"] == pytest.approx(float(np.mean(values)), rel=1e-9, abs=1e-9), key
    if res.time_to_train is not None:
        t = res.time_to_train
        assert np.all(t.hours >= t.work_hours * (1 - 1e-12))
        days = doc["time_to_train"]["days"]
        assert days["p05"] <= days["p95"]
        assert t.hours.min() / 24 * (1 - 1e-12) <= days["mean"] <= t.hours.max() / 24 * (1 + 1e-12)
    assert res.engine == window_engine(sc).key
