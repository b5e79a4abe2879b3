"""The closed-form expectations against Daly, Young, limits and hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner_gui.core.theory.exact import (
    daly_goodput,
    daly_interval,
    exact_optimal_interval,
    time_fractions,
    young_interval,
)


@pytest.mark.parametrize("m,tau,c,r", [(3.09, 0.1, 5 / 3600, 10 / 60), (0.5, 0.04, 0.01, 0.2), (100.0, 3.0, 0.5, 1.0)])
def test_reduces_to_daly_without_planned(m, tau, c, r):
    f = time_fractions(1 / m, 0.0, tau, c, r, r)
    assert float(f.useful) == pytest.approx(float(daly_goodput(tau, c, r, m)), rel=1e-12)
    hand = tau / (m * math.exp(r / m) * (math.exp((tau + c) / m) - 1))
    assert float(f.useful) == pytest.approx(hand, rel=1e-12)


@pytest.mark.parametrize("mu", [0.0, 0.9 / 24, 40.0])
def test_fractions_add_to_one_and_are_nonnegative(mu):
    """Each fraction has its own closed form (lost work is not the remainder), so the sum is a check."""
    lam = np.concatenate(([0.0, 5e-324], np.geomspace(1e-300, 1e6, 21)))[:, None, None]
    c = np.array([0.0, 0.02, 24.0])[None, None, :]
    f = time_fractions(lam, mu, np.geomspace(0.01 / 60, 8760, 9)[None, :, None], c, 0.2, 0.1)
    total = f.useful + f.checkpoint + f.lost_work + f.recovery + f.planned
    np.testing.assert_allclose(total, 1.0, atol=1e-12)
    for part in (f.useful, f.checkpoint, f.lost_work, f.recovery, f.planned):
        assert np.all(part >= 0)


def test_no_interruptions_gives_compute_share_of_each_segment():
    f = time_fractions(0.0, 0.0, 1.0, 0.25, 0.3, 0.1)
    assert float(f.useful) == pytest.approx(0.8)
    assert float(f.checkpoint) == pytest.approx(0.2)
    assert float(f.lost_work) == 0 and float(f.recovery) == 0


def test_first_order_waste_for_rare_failures():
    # Waste ~ C/tau + (tau/2 + R)/M when tau, C, R << M.
    m, tau, c, r = 1000.0, 1.0, 0.01, 0.05
    f = time_fractions(1 / m, 0.0, tau, c, r, r)
    first_order = c / (tau + c) + (tau / 2 + r) / m
    assert 1 - float(f.useful) == pytest.approx(first_order, rel=2e-3)


def test_planned_only_costs_restart_and_nothing_is_lost():
    mu, r = 2.0 / 24, 0.25
    f = time_fractions(0.0, mu, 1.0, 0.0, 1.0, r)
    assert float(f.lost_work) == pytest.approx(0.0, abs=1e-12)
    # Every planned interruption (also one during a restart) starts a restart of r hours, so the
    # job is down exactly when the last planned interruption was less than r ago: 1 - e^(-mu r).
    assert float(f.planned) == pytest.approx(1 - math.exp(-mu * r), rel=1e-12)


def test_young_and_daly_intervals():
    assert float(young_interval(2.0, 100.0)) == pytest.approx(20.0)
    c, m = 2.0, 100.0
    x = c / (2 * m)
    expected = math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c
    assert float(daly_interval(c, m)) == pytest.approx(expected)
    assert float(daly_interval(300.0, 100.0)) == 100.0  # C >= 2M


def test_exact_optimum_beats_neighbours_and_is_near_daly():
    lam, c, r = 1 / 3.09, 5 / 3600, 10 / 60
    best = exact_optimal_interval(lam, 0.0, c, r, r, (1e-4, 100.0))
    g = lambda t: float(time_fractions(lam, 0.0, t, c, r, r).useful)
    assert g(best) >= g(best * 1.05) and g(best) >= g(best / 1.05)
    assert best == pytest.approx(float(daly_interval(c, 3.09)), rel=0.02)


def test_optimal_intervals_at_the_edges():
    from planner_gui.core.model.scenario import Scenario
    from planner_gui.core.theory.params import MAX_INTERVAL_MIN, MIN_INTERVAL_MIN, optimal_intervals

    never_fails = optimal_intervals(Scenario().scale_rates(0.0))
    assert never_fails.exact == MAX_INTERVAL_MIN and never_fails.daly == MAX_INTERVAL_MIN
    free_checkpoints = optimal_intervals(Scenario(checkpoint_write_s=0.0))
    assert free_checkpoints.exact == MIN_INTERVAL_MIN and free_checkpoints.young == MIN_INTERVAL_MIN


# Rates per hour, from rare to impossible to invert (1 / 1e-310 and 1 / 5e-324 overflow), and none.
RARE = [1e-20, 1e-40, 1e-310, 5e-324, 0.0]


@pytest.mark.parametrize("lam", RARE)
@pytest.mark.parametrize("tau,c", [(1.0, 10 / 60), (8760.0, 5 / 3600), (0.01 / 60, 24.0), (2.0, 0.0)])
def test_rare_failures_keep_full_precision(lam, tau, c):
    """Issue 8: as the rate goes to 0 goodput tends to tau / (tau + C); each kind of waste to its
    first-order term, not to the rounding error of a difference."""
    r_unplanned, r_planned = 10 / 60, 5 / 60
    f = time_fractions(lam, 0.0, tau, c, r_unplanned, r_planned)
    s = tau + c
    assert float(f.useful) == pytest.approx(tau / s, rel=1e-12)
    assert float(f.checkpoint) == pytest.approx(c / s, rel=1e-12)
    # Each failure loses half a cycle on average and costs its downtime (an absolute floor for subnormal rates).
    assert float(f.lost_work) == pytest.approx(lam * s / 2, rel=1e-12, abs=1e-300)
    assert float(f.recovery) == pytest.approx(lam * r_unplanned, rel=1e-12, abs=1e-300)
    assert float(f.planned) == 0.0
    for part in (f.useful, f.checkpoint, f.lost_work, f.recovery):
        assert np.isfinite(part) and part >= 0


def _reference(lam, mu, tau, c, ru, rp):
    """The fractions from their textbook forms (differences of exponentials) in decimal arithmetic,
    with enough digits that the differences keep 40 of them."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        big = lam + mu
        x = big * (tau + c)
        ctx.prec = 40 + 2 * max(0, int(-math.log10(x))) if x > 0 else 40
        ctx.Emin, ctx.Emax = -(10**9), 10**9
        lam, mu, tau, c, ru, rp = (Decimal(v) for v in (lam, mu, tau, c, ru, rp))
        big, s = lam + mu, tau + c
        p, q = lam / big, mu / big
        x, a, b = big * s, tau / s, c / s
        e_x = (-x).exp()
        survive = p * (-big * ru).exp() + q * (-big * rp).exp()
        segments = x / (x.exp() - 1)  # Lambda s E[whole cycles after the downtime]
        compute = ((1 - (-x * a).exp()) / x - a * e_x) / (1 - e_x)  # E[min(V, a)]
        write = (((-x * a).exp() - e_x) / x - b * e_x) / (1 - e_x)  # E[max(V - a, 0)]
        whole = 1 / x - 1 / (x.exp() - 1)  # E[V]
        return [
            survive * (a * segments + q * x * compute),
            survive * (b * segments + q * x * write),
            survive * p * x * whole,
            p * (1 - (-big * ru).exp()),
            q * (1 - (-big * rp).exp()),
        ]


@pytest.mark.parametrize("lam", [1e-300, 1e-40, 1e-9, 2e-3, 0.4, 30.0, 1e5])
@pytest.mark.parametrize(
    "mu,tau,c,ru,rp",
    [
        (0.0, 1.0, 5 / 3600, 10 / 60, 5 / 60),
        (1e-6, 0.01 / 60, 24.0, 336.0, 168.0),
        (40.0, 8760.0, 0.5, 0.0, 0.0),
        (0.04, 2.0, 0.0, 1.0, 0.1),
        (0.3, 0.05, 0.05, 0.2, 0.2),
    ],
)
def test_fractions_match_a_high_precision_reference(lam, mu, tau, c, ru, rp):
    """From rates of 1e-300 to 1e5 per hour and intervals of 0.6 s to a year, to 1e-12 relative
    (values below 1e-250 come from underflow of e^(-Lambda R) and are compared absolutely)."""
    f = time_fractions(lam, mu, tau, c, ru, rp)
    got = [f.useful, f.checkpoint, f.lost_work, f.recovery, f.planned]
    for name, value, want in zip(
        ("useful", "checkpoint", "lost", "recovery", "planned"), got, _reference(lam, mu, tau, c, ru, rp)
    ):
        assert float(value) == pytest.approx(float(want), rel=1e-12, abs=1e-250), name


def test_daly_goodput_for_an_mtbf_near_the_largest_float():
    tau, c, r = 1e-4, 1e-5, 0.1
    assert float(daly_goodput(tau, c, r, 1e305)) == pytest.approx(tau / (tau + c), rel=1e-12)
    assert float(daly_goodput(tau, c, r, math.inf)) == pytest.approx(tau / (tau + c), rel=1e-12)


@pytest.mark.parametrize("rate", [1e-20, 1e-310, 5e-324])
def test_optimal_intervals_for_very_rare_failures(rate):
    """However rare the failures, free checkpoints are best taken as often as allowed and costly ones
    as rarely as allowed; 1 / rate overflowing to inf changes nothing."""
    from planner_gui.core.model.scenario import Component, Scenario
    from planner_gui.core.theory.params import MAX_INTERVAL_MIN, MIN_INTERVAL_MIN, optimal_intervals

    sc = Scenario(gpus=1, components=(Component("x", "GPU", rate),), planned_per_day=0.0)
    free = optimal_intervals(sc.replace(checkpoint_write_s=0.0))
    assert (free.young, free.daly, free.exact) == (MIN_INTERVAL_MIN,) * 3
    costly = optimal_intervals(sc.replace(checkpoint_write_s=5.0))
    for value in (costly.young, costly.daly, costly.exact):
        assert value == pytest.approx(MAX_INTERVAL_MIN, rel=1e-9)
