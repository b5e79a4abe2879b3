"""The closed-form expectations against Daly, Young, limits and hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner_gui.core.exact import (
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


def test_fractions_add_to_one_and_are_nonnegative():
    lam = np.geomspace(1e-3, 50, 7)[:, None]
    f = time_fractions(lam, 0.9 / 24, np.geomspace(0.01, 10, 5)[None, :], 0.02, 0.2, 0.1)
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
    g = lambda t: float(time_fractions(lam, 0.0, t, c, r, r).useful)  # noqa: E731
    assert g(best) >= g(best * 1.05) and g(best) >= g(best / 1.05)
    assert best == pytest.approx(float(daly_interval(c, 3.09)), rel=0.02)


def test_optimal_intervals_at_the_edges():
    from planner_gui.core.model import Scenario
    from planner_gui.core.params import MAX_INTERVAL_MIN, MIN_INTERVAL_MIN, optimal_intervals

    never_fails = optimal_intervals(Scenario().scale_rates(0.0))
    assert never_fails.exact == MAX_INTERVAL_MIN and never_fails.daly == MAX_INTERVAL_MIN
    free_checkpoints = optimal_intervals(Scenario(checkpoint_write_s=0.0))
    assert free_checkpoints.exact == MIN_INTERVAL_MIN and free_checkpoints.young == MIN_INTERVAL_MIN
