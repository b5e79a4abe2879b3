"""The reference simulator of docs/model.md (tests/reference_model.py) against closed forms that need no engine.

Every statistical check compares a Monte Carlo mean over independent trials with its exact expectation,
within ``Z`` standard errors of that mean (the trials' own spread; fixed seeds, so the outcome is
reproducible). The cases are small (short windows, intervals of 10-60 minutes) so that the whole module runs
in well under a minute on two cores.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest
from reference_model import HOURS_KEYS, ReferenceTrials, reference_model, simulate_reference

from planner_gui.core.model.scenario import Scenario, Tiers, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.theory.exact import time_fractions
from planner_gui.core.theory.spares import nodes_in_repair_pmf

#: Standard errors allowed between a Monte Carlo mean and its expectation.
Z = 4.0
#: The hours keys of the one-tier exact model and the matching fields of ``time_fractions``.
EXACT_KEYS = {
    "useful": "useful",
    "checkpoint": "checkpoint",
    "lost_work": "lost_work",
    "recovery": "recovery",
    "planned_restart": "planned",
}


def z_score(sample: np.ndarray, expected: float) -> float:
    """``(mean - expected) / SE`` of the mean of independent trials (0 when both are exact)."""
    se = float(np.std(sample, ddof=1)) / math.sqrt(len(sample))
    diff = float(np.mean(sample)) - expected
    if se == 0:
        return 0.0 if abs(diff) < 1e-12 else math.inf
    return diff / se


def assert_hours_match_exact(res: ReferenceTrials, sc: Scenario, lam: float, r_unplanned: float, r_planned: float):
    """Every hours key against the one-tier fractions x T (and the spares keys at 0)."""
    assert not isinstance(sc.checkpoint_interval_min, str)
    f = time_fractions(
        lam, sc.planned_per_day / 24.0, sc.checkpoint_interval_min / 60.0, sc.write_s / 3600.0, r_unplanned, r_planned
    )
    zs = {}
    for key, field in EXACT_KEYS.items():
        zs[key] = z_score(res.hours[key], float(getattr(f, field)) * sc.hours)
    bad = {k: round(z, 2) for k, z in zs.items() if abs(z) > Z}
    assert not bad, f"z-scores beyond {Z}: {bad} (all: { {k: round(z, 2) for k, z in zs.items()} })"
    for key in ("waiting_for_spares", "reduced_throughput"):
        np.testing.assert_allclose(res.hours[key], 0.0, atol=1e-12)
    return zs


# --------------------------------------------------------------------------------------------------------
# 1. One tier, no spares, constant rates: the renewal formula
# --------------------------------------------------------------------------------------------------------
ONE_TIER = {
    "1k-60min": Scenario(
        gpus=1024, days=1.0, checkpoint_interval_min=60.0, checkpoint_write_s=120.0, planned_per_day=5.0
    ).scale_rates(20.0),
    "16k-10min": Scenario(
        gpus=16_384,
        days=0.5,
        checkpoint_interval_min=10.0,
        checkpoint_write_s=30.0,
        detect_min=10.0,
        planned_per_day=10,
    ),
    "16k-30min-busy": Scenario(
        gpus=16_384, days=0.25, checkpoint_interval_min=30.0, checkpoint_write_s=90.0, planned_per_day=60.0
    ).scale_rates(4.0),
}


@pytest.mark.parametrize("name", list(ONE_TIER))
def test_one_tier_matches_the_renewal_formula(name):
    sc = ONE_TIER[name]
    res = simulate_reference(sc, 3000, seed=101, warmup_hours=40.0)
    assert_hours_match_exact(res, sc, sc.failure_rate_per_hour, sc.recovery_min / 60.0, sc.restart_min / 60.0)
    # The counts are Poisson means.
    assert abs(z_score(res.unplanned, sc.failure_rate_per_hour * sc.hours)) < Z
    assert abs(z_score(res.planned, sc.planned_per_day / 24.0 * sc.hours)) < Z
    np.testing.assert_array_equal(res.restores_persistent, res.unplanned)
    assert res.restores_fast.sum() == 0 and res.continued.sum() == 0 and res.no_spare.sum() == 0


# --------------------------------------------------------------------------------------------------------
# 2. Unlimited spares, no swap, restart: the same model
# --------------------------------------------------------------------------------------------------------
def test_unlimited_spares_without_swap_is_the_one_tier_model():
    base = ONE_TIER["16k-10min"]
    # Lognormal repairs of other means draw other numbers, so the two runs are independent samples.
    sp = Spares(
        spare_nodes=None, swap_min=0.0, recovery_mode="restart", repair_sigma=1.0, repair_hours=(("GPU", 12.0),)
    )
    with_spares = simulate_reference(base.replace(spares=sp), 3000, seed=202, warmup_hours=40.0)
    without = simulate_reference(base, 3000, seed=101, warmup_hours=40.0)
    assert_hours_match_exact(
        with_spares, base, base.failure_rate_per_hour, base.recovery_min / 60, base.restart_min / 60
    )
    for key in HOURS_KEYS:
        a, b = with_spares.hours[key], without.hours[key]
        se = math.hypot(np.std(a, ddof=1) / math.sqrt(len(a)), np.std(b, ddof=1) / math.sqrt(len(b)))
        diff = float(a.mean() - b.mean())
        assert abs(diff) <= Z * se + 1e-12, (key, diff / se if se else diff)
    assert with_spares.no_spare.sum() == 0


# --------------------------------------------------------------------------------------------------------
# 3. The pool: M/G/infinity
# --------------------------------------------------------------------------------------------------------
def _pool_law(sc: Scenario) -> SimpleNamespace:
    """The stand-in for the M/G/infinity closed form: per class, nodes, rates per hour (whole job), mean repair."""
    m = reference_model(sc)
    return SimpleNamespace(
        nodes=np.array(m.nodes), rates=np.array(m.rates) * sc.gpus, repair=np.array(m.repair_mean, dtype=float)
    )


def test_derived_classes_of_the_llama3_components():
    """Nodes, repair means, tiers and continuation of the Llama 3 causes, by hand from docs/model.md."""
    sp = Spares(recovery_mode="continue", replica_gpus=16)  # replicas of 2 nodes: a 4-node domain spans 2
    tiers = Tiers(fast_enabled=True, fast_interval_min=5.0, fast_placement="same-domain", nodes_per_domain=4)
    m = reference_model(Scenario(checkpoint_interval_min=30.0, spares=sp, tiers=tiers))
    by = {c.name: i for i, c in enumerate(Scenario().components)}
    cases = {  # name: (nodes, repair mean, tier, continues)
        "Faulty GPU": (1, 48.0, "fast", True),
        "Software Bug": (0, 0.0, "fast", False),
        "Network Switch/Cable": (4, 4.0, "persistent", False),
        "Host Maintenance": (1, 8.0, "fast", True),
        "NIC": (1, 24.0, "fast", True),
        "NCCL Watchdog Timeouts": (0, 0.0, "fast", False),
        "Dependency": (0, 0.0, "fast", False),
    }
    for name, (nodes, repair, tier, cont) in cases.items():
        j = by[name]
        assert (m.nodes[j], m.repair_mean[j], m.tier[j], m.continues[j]) == (nodes, repair, tier, cont), name
    assert m.replicas[by["Network Switch/Cable"]] == 2 and m.k == 6 and m.replica_share == 16 / 16_384
    # Without a tiers section: the one default domain of 2 nodes, every failure restores from the persistent tier.
    plain = reference_model(Scenario(checkpoint_interval_min=30.0))
    assert plain.nodes[by["Network Switch/Cable"]] == Tiers().nodes_per_domain == 2
    assert set(plain.tier) == {"persistent"}


POOLS = {
    # name: (scenario, spare nodes, warm-up: None for the default)
    "exponential": (
        Scenario(gpus=16_384, days=1.0, checkpoint_interval_min=60.0).scale_rates(4.0),
        44,
        None,
    ),
    "lognormal": (
        Scenario(gpus=16_384, days=1.0, checkpoint_interval_min=60.0).scale_rates(6.0),
        11,
        None,
    ),
}


@pytest.mark.parametrize("name", list(POOLS))
def test_pool_follows_m_g_infinity(name):
    sc, spares, warm = POOLS[name]
    if name == "lognormal":
        sp = Spares(spare_nodes=spares, repair_sigma=1.0, repair_hours=(("GPU", 4.0), ("Host", 3.0)), swap_min=5.0)
    else:
        sp = Spares(spare_nodes=spares, swap_min=5.0)
    sc = sc.replace(spares=sp)
    res = simulate_reference(sc, 1000, seed=303, warmup_hours=warm)
    law = _pool_law(sc)
    pmf = nodes_in_repair_pmf(law)  # type: ignore[arg-type]
    mean_exact = float((law.rates * law.nodes * law.repair).sum())
    assert float(np.arange(len(pmf)) @ pmf) == pytest.approx(mean_exact, rel=1e-9)
    z_mean = z_score(res.nodes_in_repair, mean_exact)
    # By PASTA a class-j failure finds no spare with probability P(A + k_j > S); the share of node-taking
    # failures that do is the rate-weighted mean.
    cdf = np.cumsum(pmf)
    node = law.nodes > 0
    p_class = np.array([1.0 - (cdf[min(spares - k, len(cdf) - 1)] if spares - k >= 0 else 0.0) for k in law.nodes])
    p_exact = float((law.rates[node] * p_class[node]).sum() / law.rates[node].sum())
    x, y = res.node_failures.astype(float), res.no_spare.astype(float)
    ratio = y.sum() / x.sum()
    se = math.sqrt(((y - ratio * x) ** 2).sum() / (len(x) * (len(x) - 1))) / x.mean()
    z_p = (ratio - p_exact) / se
    assert 0.05 < p_exact < 0.95
    assert abs(z_mean) < Z and abs(z_p) < Z, (z_mean, z_p, mean_exact, p_exact)
    # The node-taking failures are a Poisson count of the node classes' rate.
    assert abs(z_score(res.node_failures, float(law.rates[node].sum()) * sc.hours)) < Z


# --------------------------------------------------------------------------------------------------------
# 4. Continue mode with no stall, restart or swap: only the restarting failures cost anything
# --------------------------------------------------------------------------------------------------------
def test_continue_mode_without_costs_is_the_formula_of_the_restarting_failures():
    # Replicas of 1 node: a 2-node domain (the default) spans 2 replicas and restarts, so only node-scope failures
    # continue.
    sp = Spares(recovery_mode="continue", replica_gpus=8, continue_stall_min=0.0, swap_min=0.0, max_replicas_lost=1)
    sc = Scenario(
        gpus=16_384,
        days=0.5,
        checkpoint_interval_min=20.0,
        checkpoint_write_s=10.0,
        detect_min=5.0,
        restart_min=0.0,
        planned_per_day=10.0,
        spares=sp,
    ).scale_rates(3.0)
    m = reference_model(sc)
    rates = np.array(m.rates) * sc.gpus
    cont = np.array(m.continues)
    assert cont.any() and not cont.all()
    assert all(m.nodes[j] == 1 for j in np.flatnonzero(cont))
    lam_restart = float(rates[~cont].sum())
    res = simulate_reference(sc, 3000, seed=404, warmup_hours=30.0)
    assert_hours_match_exact(res, sc, lam_restart, sc.detect_min / 60.0, 0.0)
    assert abs(z_score(res.continued, float(rates[cont].sum()) * sc.hours)) < Z
    np.testing.assert_array_equal(res.continued + res.restores_persistent, res.unplanned)


# --------------------------------------------------------------------------------------------------------
# 5. The hours add up to T in every trial, with everything on
# --------------------------------------------------------------------------------------------------------
#: Short repairs, so that the pool runs short at times but the job still makes progress.
_REPAIRS = (("GPU", 3.0), ("Host", 2.0), ("Unplanned Maintenance", 1.0), ("Network", 1.0))
EVERYTHING = {
    # Replicas of one node: a 2-node domain spans 2 replicas and restarts (from storage), a node continues.
    "continue": Spares(
        spare_nodes=4,
        swap_min=4.0,
        recovery_mode="continue",
        replica_gpus=8,
        continue_stall_min=3.0,
        repair_sigma=0.8,
        repair_hours=_REPAIRS,
    ),
    "restart-wait": Spares(spare_nodes=4, swap_min=6.0, repair_hours=_REPAIRS),
    "restart-shrink": Spares(spare_nodes=2, swap_min=6.0, min_gpus=4000, repair_hours=_REPAIRS),
}


@pytest.mark.parametrize("new_cluster", [False, True])
@pytest.mark.parametrize("name", list(EVERYTHING))
def test_hours_add_up_with_everything_on(name, new_cluster):
    tiers = Tiers(
        fast_enabled=True,
        fast_interval_min=6.0,
        fast_stall_s=20.0,
        fast_restore_min=1.0,
        fast_replicas=1,
        fast_placement="same-domain",
        nodes_per_domain=2,
        persistent_upload_min=9.0,
        persistent_restore_min=4.0,
    )
    sc = Scenario(
        gpus=4096,
        days=0.5,
        checkpoint_interval_min=20.0,  # k = 3 fast snapshots per persistent point
        checkpoint_write_s=40.0,  # the persistent points' own stall
        planned_per_day=30.0,
        rate_profile=((0.0, 2.0), (0.1, 8.0), (0.3, 1.0)),
        rate_uncertainty=True,
        new_cluster=new_cluster,
        tiers=tiers,
        spares=EVERYTHING[name],
    ).scale_rates(12.0)
    res = simulate_reference(sc, 150, seed=505, warmup_hours=40.0)
    total = sum(res.hours[key] for key in HOURS_KEYS)
    np.testing.assert_allclose(total, sc.hours, rtol=0, atol=1e-9)
    for key in HOURS_KEYS:
        assert np.all(res.hours[key] >= -1e-9), key
    # Every feature is exercised, and the counts are consistent.
    assert res.restores_fast.sum() > 0 and res.restores_persistent.sum() > 0 and res.promoted.sum() > 0
    assert res.no_spare.sum() > 0 and res.planned.sum() > 0
    assert np.all(res.promoted <= res.restores_persistent) and np.all(res.no_spare <= res.node_failures)
    np.testing.assert_array_equal(res.restores_fast + res.restores_persistent + res.continued, res.unplanned)
    np.testing.assert_array_equal(res.by_component.sum(axis=1), res.unplanned)
    if name == "continue":
        assert res.continued.sum() > 0 and res.hours["reduced_throughput"].sum() > 0
    elif name == "restart-wait":
        assert res.hours["waiting_for_spares"].sum() > 0
    else:
        assert res.hours["reduced_throughput"].sum() > 0


# --------------------------------------------------------------------------------------------------------
# 6. A time to train: W / g within the renewal bound
# --------------------------------------------------------------------------------------------------------
def test_time_to_train_within_the_renewal_bound():
    work = 24.0  # hours of progress
    sc = Scenario(
        gpus=16_384,
        checkpoint_interval_min=30.0,
        checkpoint_write_s=60.0,
        planned_per_day=0.0,
        training=Training(train_flops=None, compute_gpu_hours=work * 16_384),
    ).scale_rates(3.0)
    tau = 0.5
    g = float(
        time_fractions(
            sc.failure_rate_per_hour, 0.0, tau, sc.write_s / 3600, sc.recovery_min / 60, sc.restart_min / 60
        ).useful
    )
    res = simulate_reference(sc, 3000, seed=606, training=True, warmup_hours=10.0)
    assert res.train_hours is not None
    t = res.train_hours
    se = float(np.std(t, ddof=1)) / math.sqrt(len(t))
    c = float(t.mean()) - work / g
    # -tau / g <= E[T] - W / g <= 0 (docs/model.md section 3), allowing Z standard errors.
    assert -tau / g - Z * se <= c <= Z * se, (c, -tau / g, se)
    assert np.all(t >= work)


# --------------------------------------------------------------------------------------------------------
# 7. Two tiers, restores from storage with replicas in the same domain: lam_p T (1 + a / (1 - a))
# --------------------------------------------------------------------------------------------------------
def test_promoted_restores_from_storage_follow_the_chain_formula():
    tiers = Tiers(
        fast_enabled=True,
        fast_interval_min=10.0,
        fast_stall_s=5.0,
        fast_restore_min=1.0,
        fast_placement="same-domain",
        nodes_per_domain=2,
        persistent_restore_min=30.0,
    )
    sc = Scenario(
        gpus=16_384, days=0.5, checkpoint_interval_min=30.0, checkpoint_write_s=0.0, planned_per_day=0.0, tiers=tiers
    ).scale_rates(4.0)
    m = reference_model(sc)
    rates = np.array(m.rates) * sc.gpus
    persistent = np.array([tier == "persistent" for tier in m.tier])
    lam, lam_p = float(rates.sum()), float(rates[persistent].sum())
    lam_f = lam - lam_p
    down = sc.recovery_min / 60 + tiers.persistent_restore_min / 60
    a = -math.expm1(-lam * down) * lam_f / lam
    res = simulate_reference(sc, 3000, seed=707, warmup_hours=30.0)
    z_p = z_score(res.restores_persistent, lam_p * sc.hours * (1 + a / (1 - a)))
    z_promoted = z_score(res.promoted, lam_p * sc.hours * a / (1 - a))
    assert abs(z_p) < Z and abs(z_promoted) < Z, (z_p, z_promoted)


# --------------------------------------------------------------------------------------------------------
# 8. Every failure restoring from storage, with a background upload: the renewal formula less the completed
#    compute after the last finished upload (docs/tiers.md "Formulas")
# --------------------------------------------------------------------------------------------------------
def _upload_case(name: str) -> tuple[Scenario, float, float, int, float, float]:
    """The scenario, its cycle (tau, c, k), the upload and the downtime after a failure (hours)."""
    base = Scenario(gpus=16_384, days=0.5, planned_per_day=20.0).scale_rates(3.0)
    if name == "one-tier":  # uploads start at every 3rd checkpoint
        tiers = Tiers(persistent_upload_min=25.0)
        sc = base.replace(checkpoint_interval_min=10.0, checkpoint_write_s=30.0, tiers=tiers)
        return sc, 10 / 60, 30 / 3600, 1, 25 / 60, sc.recovery_min / 60
    # The fast tier with no replica and every failure taking a node: every restore is from storage; points
    # are every 3rd snapshot (no stall of their own), uploads start at every 2nd point. (No restore time: a
    # planned interruption during a failure's downtime keeps the pending restore (2.4), which the renewal
    # formula, where every interruption starts afresh, does not have.)
    tiers = Tiers(
        fast_enabled=True,
        fast_interval_min=4.0,
        fast_stall_s=12.0,
        fast_replicas=0,
        persistent_upload_min=20.0,
    )
    comps = tuple(dataclasses.replace(c, scope="node") for c in base.components)
    sc = base.replace(components=comps, checkpoint_interval_min=12.0, checkpoint_write_s=0.0, tiers=tiers)
    return sc, 4 / 60, 12 / 3600, 3, 20 / 60, sc.recovery_min / 60


@pytest.mark.parametrize("name", ["one-tier", "fast-tier-all-from-storage"])
def test_upload_lag_matches_the_tiers_formula(name):
    sc, tau, c, k, u, r_u = _upload_case(name)
    m = reference_model(sc)
    assert m.k == k and set(m.tier) == {"persistent"} and m.c_p == 0
    lam, mu = sc.failure_rate_per_hour, sc.planned_per_day / 24
    r_p = sc.restart_min / 60
    f = time_fractions(lam, mu, tau, c, r_u, r_p)
    big = lam + mu
    s = tau + c
    x, q, u_cycles = big * s, math.ceil(u / (k * s)), u / s
    assert q >= 2
    e_lag = 1 / math.expm1(x) - math.exp(-x * (k + u_cycles)) * (k + q * k / math.expm1(x * q * k))
    survive = (lam * math.exp(-big * r_u) + mu * math.exp(-big * r_p)) / big
    moved = tau * lam * survive * e_lag  # from useful to lost work, a share of time
    assert moved > 0.01
    res = simulate_reference(sc, 3000, seed=808, warmup_hours=30.0)
    expected = {
        "useful": float(f.useful) - moved,
        "checkpoint": float(f.checkpoint),
        "lost_work": float(f.lost_work) + moved,
        "recovery": float(f.recovery),
        "planned_restart": float(f.planned),
    }
    zs = {key: z_score(res.hours[key], value * sc.hours) for key, value in expected.items()}
    assert all(abs(z) < Z for z in zs.values()), zs


# --------------------------------------------------------------------------------------------------------
# 9. Rates that are uncertain or change: the posterior mean of the exact formula, and the expected counts
# --------------------------------------------------------------------------------------------------------
def test_rate_uncertainty_is_the_posterior_mean_of_the_formula():
    sc = Scenario(
        gpus=16_384,
        days=0.5,
        checkpoint_interval_min=20.0,
        checkpoint_write_s=30.0,
        planned_per_day=10.0,
        rate_uncertainty=True,
    ).scale_rates(3.0)
    m = reference_model(sc)
    shapes, scales = np.array(m.shapes), np.array(m.scales)
    assert np.all(shapes > 0) and np.all(scales > 0)
    # The posterior of the total rate by many draws (its own fixed stream): its error is far below the trials'.
    draws = np.random.default_rng(99).standard_gamma(shapes, size=(200_000, len(shapes))) @ scales * sc.gpus
    f = time_fractions(draws, sc.planned_per_day / 24, 20 / 60, sc.write_s / 3600, sc.recovery_min / 60, 5 / 60)
    res = simulate_reference(sc, 3000, seed=909, warmup_hours=30.0)
    zs = {
        key: z_score(res.hours[key], float(np.mean(getattr(f, field))) * sc.hours) for key, field in EXACT_KEYS.items()
    }
    zs["unplanned"] = z_score(res.unplanned, float(draws.mean()) * sc.hours)
    assert all(abs(z) < Z for z in zs.values()), zs
    # Half the variance of the counts comes from the rates at the evidence's exposure; here (3 x the rates,
    # 1/72 of the exposure) almost all of it is chance, but the rates' part is there.
    lam_mean = float(draws.mean()) * sc.hours
    assert np.var(res.unplanned, ddof=1) > lam_mean * 0.9


def test_rate_profile_counts_and_its_first_piece_before_the_window():
    # One piece: the same model as constant rates three times higher (also through the warm-up).
    flat = Scenario(gpus=16_384, days=0.5, checkpoint_interval_min=20.0, checkpoint_write_s=30.0, planned_per_day=10.0)
    res = simulate_reference(flat.replace(rate_profile=((0.0, 3.0),)), 2000, seed=1001, warmup_hours=30.0)
    assert_hours_match_exact(res, flat, 3 * flat.failure_rate_per_hour, flat.recovery_min / 60, flat.restart_min / 60)
    # Several pieces: failures of each component follow x_j G m(t).
    profile = ((0.0, 4.0), (0.1, 0.5), (0.25, 2.0))
    sc = flat.replace(rate_profile=profile, checkpoint_interval_min=60.0)
    res = simulate_reference(sc, 2000, seed=1002, warmup_hours=10.0)
    edges = [0.0, 0.1 * 24, 0.25 * 24, sc.hours]
    integral = sum(mult * (b - a) for (_, mult), a, b in zip(profile, edges[:-1], edges[1:]))
    per_component = np.array([c.rate_per_gpu_hour for c in sc.components]) * sc.gpus * integral
    assert abs(z_score(res.unplanned, float(per_component.sum()))) < Z
    big = np.argsort(per_component)[-3:]
    for j in big:
        assert abs(z_score(res.by_component[:, j], float(per_component[j]))) < Z
