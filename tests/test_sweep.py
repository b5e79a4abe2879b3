"""Sweeps: the GPU grid, agreement with the exact curve, common random numbers, CSV."""

from __future__ import annotations

import csv
import io

import numpy as np

from planner_gui.core.analysis.results import simulate
from planner_gui.core.analysis.sweep import gpu_counts, interval_points, sweep_gpus, sweep_interval
from planner_gui.core.model.scenario import Scenario


def test_gpu_grid():
    xs = gpu_counts(41)
    assert xs[0] == 1024 and xs[-1] == 1_048_576
    assert 16_384 in xs and 100_000 in xs
    assert len(xs) == 41 and np.all(np.diff(xs) > 0)


def test_gpu_sweep_matches_exact_and_points_match_single_runs():
    sc = Scenario(trials=300)
    xs = np.array([1024, 16_384, 100_000, 400_000])
    res = sweep_gpus(sc, xs)
    z = np.abs(res.goodput_mean - res.goodput_expected) / res.goodput_sem
    assert np.all(z < 4.5), z
    np.testing.assert_allclose(
        res.interruptions_expected, [sc.replace(gpus=int(n)).failure_rate_per_hour * sc.hours for n in xs]
    )
    assert np.all(np.diff(res.interruptions_mean) > 0)
    assert np.all(res.goodput_p05 <= res.goodput_mean) and np.all(res.goodput_mean <= res.goodput_p95)


def test_interval_sweep_uses_common_random_numbers():
    """Moving only the interval keeps the same random draws: the MC error barely changes between points."""
    sc = Scenario(trials=200)
    xs = interval_points(21, 2.0, 20.0)
    res = sweep_interval(sc, xs)
    err = res.goodput_mean - res.goodput_expected
    # Independent draws would make adjacent errors differ by about sqrt(2) SE (RMS); common ones by far less.
    rms = np.sqrt(np.mean(np.diff(err) ** 2))
    assert rms < 0.5 * np.mean(res.goodput_sem), (rms, np.mean(res.goodput_sem))
    # Interruption counts do not depend on the interval at all with shared draws.
    assert np.ptp(res.interruptions_mean) == 0


def test_gpu_sweep_is_smooth():
    sc = Scenario(trials=200)
    res = sweep_gpus(sc, np.arange(16_000, 16_800, 100))
    err = res.goodput_mean - res.goodput_expected
    rms = np.sqrt(np.mean(np.diff(err) ** 2))
    assert rms < 0.5 * np.mean(res.goodput_sem), (rms, np.mean(res.goodput_sem))


def test_same_seed_same_sweep_and_csv():
    sc = Scenario(trials=50)
    a = sweep_interval(sc, [5.0, 50.0])
    b = sweep_interval(sc, [5.0, 50.0])
    assert a.to_csv() == b.to_csv()
    rows = list(csv.DictReader(io.StringIO(a.to_csv())))
    assert len(rows) == 2 and float(rows[1]["checkpoint_interval_min"]) == 50.0
    single = simulate(sc.replace(checkpoint_interval_min=50.0))
    assert float(rows[1]["goodput_expected"]) == single.expected.goodput


def test_plan_exact_curve_passes_through_the_interval_sweep_and_peaks_at_the_exact_optimum():
    from planner_gui.core.session.plan import PREVIEW, PlanRequest, compute_plan

    res = compute_plan(PlanRequest(Scenario(gpus=100_000, trials=50), PREVIEW))
    x, exact = res.exact_curve
    step = (len(x) - 1) // (len(res.by_interval.x) - 1)
    np.testing.assert_allclose(x[::step], res.by_interval.x, rtol=1e-12)
    np.testing.assert_allclose(exact[::step], res.by_interval.goodput_expected, rtol=1e-12)
    i = int(np.argmax(exact))
    assert x[i - 1] <= res.main.optimal.exact <= x[i + 1]


# -- cost, limits, memory and progress -----------------------------------------------------------------------

import pytest  # noqa: E402

from planner_gui.core.analysis import sweep as sweep_module  # noqa: E402
from planner_gui.core.analysis.sweep import check_sweep_size, run_cost, sweep_cost  # noqa: E402
from planner_gui.core.files.scenario_io import ScenarioError  # noqa: E402
from planner_gui.core.model.specs import MAX_TOTAL_EVENTS  # noqa: E402


def test_an_interval_sweep_in_groups_gives_the_same_numbers(monkeypatch):
    sc = Scenario(trials=40)
    xs = interval_points(9)
    whole = sweep_interval(sc, xs).to_csv()
    monkeypatch.setattr(sweep_module, "MAX_ROW_INTERVALS", 100)  # 40 rows: 2 intervals per group
    seen = []
    grouped = sweep_interval(sc, xs, progress=seen.append).to_csv()
    assert grouped == whole
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0) and len(seen) >= 5


def test_gpu_sweep_progress_follows_the_work():
    seen = []
    xs = np.array([1024, 2048, 1_048_576])
    sweep_gpus(Scenario(trials=20), xs, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    # The first point is a sliver of the work: counted by points it would report a third done.
    assert seen[0] < 0.05


def test_the_cost_of_a_sweep_counts_every_point():
    sc = Scenario(trials=200)
    xs = gpu_counts(9)
    total = sweep_cost(sc, "gpus", xs)
    alone = sum(run_cost(sc.replace(gpus=int(n))).events for n in xs)
    assert total.events == pytest.approx(alone, rel=0.3)  # the same, up to the sweep's shared layout
    one = run_cost(sc).events
    few, many = sweep_cost(sc, "interval", interval_points(5)), sweep_cost(sc, "interval", interval_points(401))
    assert one < few.events < many.events
    assert many.events > 100 * (few.events - one) / 4 * 0.9  # each further interval adds its share


@pytest.mark.parametrize(
    "scenario,over,points",
    [
        (Scenario(gpus=10_000_000, days=365), "interval", 41),  # ran past 120 s unchecked
        (Scenario(days=840), "gpus", 401),  # ran past 300 s unchecked
        (Scenario(gpus=1024, trials=100_000), "interval", 401),  # tiny trials, many of them: per-row costs
    ],
)
def test_sweeps_over_the_limit_are_refused_before_running(scenario, over, points):
    xs = gpu_counts(points) if over == "gpus" else interval_points(points)
    assert run_cost(scenario).events < MAX_TOTAL_EVENTS  # each run alone is allowed
    with pytest.raises(ScenarioError, match=r"^--points: a sweep over \d+ .* over the limit of 4e\+09"):
        check_sweep_size(scenario, over, xs, "--points")


def test_ordinary_sweeps_are_allowed():
    for sc in (Scenario(), Scenario(gpus=100_000), Scenario(days=365)):
        for over, xs in (("gpus", gpu_counts(41)), ("interval", interval_points(41))):
            assert check_sweep_size(sc, over, xs).events < MAX_TOTAL_EVENTS


def test_a_parts_progress_is_its_share_of_the_whole():
    """One rule splits progress among the parts of a computation (four copies had drifted: two did not clip)."""
    from planner_gui.core.util.progress import progress_part

    seen: list[float] = []
    part = progress_part(seen.append, 0.25, 0.75)
    assert part is not None
    for f in (0.0, 0.5, 1.0, -1.0, 2.0):
        part(f)
    assert seen == [0.25, 0.5, 0.75, 0.25, 0.75]
    assert progress_part(None, 0.0, 1.0) is None
