"""The Monte Carlo against the exact expectation, hand-computed cases and the Llama 3 counts.

Statistical checks use fixed seeds and a tolerance of Z standard errors of the Monte Carlo mean.
Z = 4.5 makes a false alarm in any one check about 7e-6 likely, across the ~60 checks here < 1e-3.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import pdtr
from scipy.stats import poisson

from planner_gui.core.analysis.results import HOURS_KEYS, simulate
from planner_gui.core.model.scenario import LLAMA3_DAYS, LLAMA3_GPUS, Component, Scenario, llama3_components
from planner_gui.core.sim import engine, rows
from planner_gui.core.sim.intervals import HoursAccumulator, interval_parts
from planner_gui.core.theory.params import MAX_INTERVAL_MIN, Params
from planner_gui.core.util.streams import stream

Z = 4.5


def assert_within_se(values: np.ndarray, expected: float, what: str) -> None:
    mean = float(np.mean(values))
    se = float(np.std(values, ddof=1) / np.sqrt(len(values)))
    assert abs(mean - expected) <= Z * se + 1e-12, f"{what}: MC {mean:.6g} vs exact {expected:.6g}, SE {se:.3g}"


def check_against_exact(sc: Scenario) -> None:
    res = simulate(sc)
    hours = res.hours_per_trial()
    exp_hours = res.expected.hours()
    for key in HOURS_KEYS:
        assert_within_se(hours[key] / sc.hours, exp_hours[key] / sc.hours, key)
    assert_within_se(res.trials.unplanned, res.expected.unplanned, "unplanned")
    assert_within_se(res.trials.planned, res.expected.planned, "planned")
    total = sum(hours.values())
    np.testing.assert_allclose(total, sc.hours, rtol=1e-9)


GRID = [
    # gpus, days, interval (min), write (s), detect, restart, planned/day, trials
    (1024, 54, 60.0, 5.0, 5, 5, 47 / 54, 2000),
    (16_384, 54, "optimal", 5.0, 5, 5, 47 / 54, 1000),
    (16_384, 54, 1.0, 0.0, 5, 5, 0.0, 1000),
    (16_384, 54, 180.0, 600.0, 10, 20, 2.0, 1000),
    (100_000, 54, "optimal", 60.0, 5, 5, 47 / 54, 500),
    (100_000, 30, 5.0, 1800.0, 1, 2, 0.0, 400),
    (1_000_000, 10, 1.0, 5.0, 0.5, 0.5, 5.0, 200),
    (1_000_000, 5, 240.0, 30.0, 0, 0, 0.0, 200),
    (4096, 365, 30.0, 120.0, 15, 45, 0.2, 500),
    # Mostly planned interruptions: rows with none at all, or only planned ones (planned-to-planned spacings).
    (8, 3, 30.0, 60.0, 5, 5, 1.0, 4000),
    (256, 20, 10.0, 30.0, 2, 30, 24.0, 1000),
]


@pytest.mark.parametrize("gpus,days,interval,write,detect,restart,planned,trials", GRID)
def test_monte_carlo_matches_exact(gpus, days, interval, write, detect, restart, planned, trials):
    sc = Scenario(
        gpus=gpus,
        days=float(days),
        checkpoint_interval_min=interval,
        checkpoint_write_s=write,
        detect_min=detect,
        restart_min=restart,
        planned_per_day=planned,
        trials=trials,
        seed=7,
    )
    check_against_exact(sc)


# One GPU and a few interruptions per window, or fewer, with checkpoint cycles as long as the time
# between them: most of what happens is decided at the window's edges (the interval the window starts
# in, and whether the cycle running at its end completes).
# rate per GPU-hour, days, interval (min), write (s), detect, restart, planned/day, trials
FEW = [
    (3 / 24, 1.0, 480.0, 1800.0, 60, 60, 1.0, 4000),  # 3 a day, 8.5-hour cycles, 2-hour downtimes
    (0.25 / 24, 2.0, 1440.0, 3600.0, 120, 120, 0.0, 4000),  # one in 4 days, day-long cycles
    (1e-4, 30.0, 10_080.0, 600.0, 5, 5, 0.0, 4000),  # rare: 0.07 per window, week-long cycles
    (2.0, 0.5, 60.0, 600.0, 30, 30, 24.0, 2000),  # the window mostly starts in a downtime
    (0.1 / 24, 0.5, 600.0, 7200.0, 30, 30, 12.0, 4000),  # mostly planned, 2-hour writes: where in the cycle it starts
]


@pytest.mark.parametrize("rate,days,interval,write,detect,restart,planned,trials", FEW)
def test_monte_carlo_matches_exact_with_few_interruptions(
    rate, days, interval, write, detect, restart, planned, trials
):
    sc = Scenario(
        gpus=1,
        days=days,
        components=(Component("x", "GPU", rate),),
        checkpoint_interval_min=interval,
        checkpoint_write_s=write,
        detect_min=detect,
        restart_min=restart,
        planned_per_day=planned,
        trials=trials,
        seed=7,
    )
    check_against_exact(sc)


# Per GPU-hour: rare, then so rare that 1 / rate overflows, and none.
RARE = [1e-20, 1e-40, 1e-310, 5e-324, 0.0]


@pytest.mark.parametrize("rate", RARE)
@pytest.mark.parametrize("gpus", [1, 10_000_000])
def test_rare_failures_give_the_compute_share_in_every_trial(rate, gpus):
    """Issue 8: at 1e-20 per GPU-hour trials reported goodput above 100%, at 1e-40 of 4e21 %.

    A window of a whole number of checkpoint cycles (7 days of 60 + 10 minutes) without interruptions
    holds exactly that many cycles' compute and writes, wherever it starts in the cycle.
    """
    sc = Scenario(
        gpus=gpus,
        days=7.0,
        components=(Component("x", "GPU", rate),),
        planned_per_day=0.0,
        checkpoint_interval_min=60.0,
        checkpoint_write_s=600.0,
        trials=200,
    )
    res = simulate(sc)
    assert res.trials.unplanned.sum() == 0
    np.testing.assert_allclose(res.goodput, 60 / 70, rtol=1e-12)
    np.testing.assert_allclose(res.trials.checkpoint, sc.hours * 10 / 70, rtol=1e-12)
    for key, hours in res.hours_per_trial().items():
        assert np.all(hours >= 0), key
    assert res.trials.lost_work.max() <= 1e-12 * sc.hours
    assert res.trials.recovery.max() == 0 and res.trials.planned_restart.max() == 0
    assert res.expected.goodput == pytest.approx(60 / 70, rel=1e-12)


@pytest.mark.parametrize("rate", RARE)
def test_rare_failures_at_the_longest_interval(rate):
    """The CLI's case: the optimal interval is then a year, longer than the window: each trial computes
    the whole window but for at most one 5-second write."""
    sc = Scenario(gpus=1, components=(Component("x", "GPU", rate),), planned_per_day=0.0, trials=500)
    res = simulate(sc)
    assert res.interval_min == MAX_INTERVAL_MIN
    tau, c = MAX_INTERVAL_MIN / 60, 5 / 3600
    assert np.all(res.goodput <= 1.0)
    assert np.all(res.goodput >= 1.0 - c / sc.hours - 1e-12)
    assert np.all(res.lost_gpu_hours() >= 0)
    assert res.expected.goodput == pytest.approx(tau / (tau + c), rel=1e-12)
    assert_within_se(res.goodput, tau / (tau + c), "goodput")


@pytest.mark.parametrize("mean", [1e-6, 0.02, 0.5, 3.0, 47.0, 2557.0, 130_000.0])
def test_poisson_inversion_gives_the_quantile(mean):
    """Each count is the smallest k with CDF(k) >= u, and counts never fall as the mean rises."""
    u = np.concatenate([rows.uniforms(np.random.default_rng(11), (3000,)), [1e-15, 0.5, 1 - 1e-15]])
    k = rows.poisson_by_inversion(u, mean)
    assert np.all(u <= pdtr(k, mean))
    assert np.all((k == 0) | (pdtr(k - 1, mean) < u))
    mid = (u > 1e-9) & (u < 1 - 1e-9)
    np.testing.assert_array_equal(k[mid], poisson.ppf(u[mid], mean))
    assert np.all(rows.poisson_by_inversion(u, mean * 1.01) >= k)


def test_split_windows_match_exact(monkeypatch):
    """Trials cut into many sub-windows (as for huge runs) still agree with the exact expectation."""
    monkeypatch.setattr(engine, "ROW_EVENT_CAP", 64)
    sc = Scenario(gpus=100_000, days=10.0, trials=300, seed=3, planned_per_day=6.0)
    assert engine.plan_layout(sc.failure_rate_per_hour * sc.hours, sc.trials).subwindows > 5
    check_against_exact(sc)


def test_no_interruptions_is_exact():
    sc = Scenario(
        components=llama3_components()[:1],
        planned_per_day=0.0,
        checkpoint_interval_min=60.0,
        checkpoint_write_s=600.0,
        trials=20,
    ).scale_rates(0.0)
    res = simulate(sc)
    # Each trial enters the checkpoint cycle at a random phase: within one write of 60/70, exact on average.
    assert np.all(np.abs(res.goodput - 60 / 70) <= (10 / 60) / sc.hours + 1e-12)
    assert_within_se(res.goodput, 60 / 70, "goodput")
    assert res.trials.unplanned.sum() == 0 and res.trials.lost_work.max() < 1e-9


def test_whole_interval_by_hand():
    # 10 h interval: 1 h down, then 3 segments of 2 h compute + 1 h write fit exactly.
    g, down = np.array([10.0, 11.5, 11.5, 0.5]), np.array([1.0, 1.0, 1.0, 1.0])
    saved = np.array([False, False, True, False])
    dt, ut, wt, lt = interval_parts(g, down, saved, np.zeros(4), g, 2.0, 1.0)
    np.testing.assert_allclose(dt, [1, 1, 1, 0.5])
    np.testing.assert_allclose(ut, [6, 6, 7.5, 0])  # the saved one keeps its 1.5 h in progress
    np.testing.assert_allclose(wt, [3, 3, 3, 0])
    np.testing.assert_allclose(lt, [0, 1.5, 0, 0])


def test_partial_window_by_hand():
    # Interval of 10 h (1 h down, segments [1,3) compute, [3,4) write, ...), window [2.5, 7.5].
    args = (np.array([10.0]), np.array([1.0]), np.array([False]))
    dt, ut, wt, lt = interval_parts(*args, np.array([2.5]), np.array([7.5]), 2.0, 1.0)
    # [2.5,3) compute 0.5, [3,4) write 1, [4,6) compute 2, [6,7) write 1, [7,7.5) compute 0.5
    np.testing.assert_allclose([dt[0], ut[0], wt[0], lt[0]], [0, 3.0, 2.0, 0])


# Rows laid out by hand: the order of interruptions in each (U unplanned, P planned), and so its counts
# of each kind of interior spacing (UP, PP, PU in the bands, UU in the bulk).
HAND_ROWS = ["UUUUU", "UPUPU", "PPUU", "", "UUUP", "PUUUUUUP"]


def _kinds(seq: str) -> list[str]:
    return [seq[i : i + 2] for i in range(len(seq) - 1)]


def test_chunk_sums_equal_the_interval_formula_spacing_by_spacing():
    """The engine's band and bulk sums, on its own draws, equal interval_parts summed spacing by spacing."""
    hand = rows.Rows(
        n_unplanned=np.array([q.count("U") for q in HAND_ROWS]),
        n_planned=np.array([q.count("P") for q in HAND_ROWS]),
        first_planned=np.array([q[:1] == "P" for q in HAND_ROWS]),
        last_planned=np.array([q[-1:] == "P" for q in HAND_ROWS]),
        order=np.arange(len(HAND_ROWS)),
        **{f"n_{k.lower()}": np.array([_kinds(q).count(k) for q in HAND_ROWS]) for k in ("UP", "PP", "PU")},
    )
    p = Params(lam=0.5, mu=0.1, hours=30.0, tau=0.7, c=0.2, r_unplanned=0.4, r_planned=0.25)
    chunks = engine._Chunks.plan(hand, len(HAND_ROWS))
    slots, m = int(chunks.slots[0]), len(HAND_ROWS)
    taus = np.array([0.7, 2.5])
    accs = [HoursAccumulator(m) for _ in taus]
    pieces = np.zeros((2, m))
    engine._run_chunk(p, chunks, 0, p.hours, stream(5, 9), accs, taus, pieces, engine._Workspace(slots * m, slots))
    e = -np.log(stream(5, 9).random((slots, m)))  # the same draws (the engine holds log U = -E)
    h_up, h_pp, h_pu = (int(h) for h in chunks.bands[0])
    first_slot = {"UP": 2, "PP": 2 + h_up, "PU": 2 + h_up + h_pp, "UU": 2 + h_up + h_pp + h_pu}
    for col, seq in enumerate(HAND_ROWS):
        kinds = _kinds(seq)
        cells = [0] + ([1] if seq else [])
        for kind in ("UP", "PP", "PU", "UU"):
            cells += range(first_slot[kind], first_slot[kind] + kinds.count(kind))
        scale = p.hours / e[cells, col].sum()
        assert pieces[0, col] == pytest.approx(e[0, col] * scale)
        assert pieces[1, col] == pytest.approx(e[1, col] * scale if seq else 0.0)
        interior = [(e[first_slot[k] + kinds[:i].count(k), col] * scale, k) for i, k in enumerate(kinds)]
        g = np.array([length for length, _ in interior])
        starts_p = np.array([k[0] == "P" for _, k in interior], dtype=bool)
        down = np.where(starts_p, p.r_planned, p.r_unplanned)
        saved = np.array([k[1] == "P" for _, k in interior], dtype=bool)
        for acc, tau in zip(accs, taus):
            dt, ut, wt, lt = interval_parts(g, down, saved, np.zeros(len(g)), g, tau, p.c)
            got = [acc.useful[col], acc.checkpoint[col], acc.lost[col], acc.recovery[col], acc.planned[col]]
            want = [ut.sum(), wt.sum(), lt.sum(), dt[~starts_p].sum(), dt[starts_p].sum()]
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"row {seq!r}, tau {tau}")


def test_calibrated_to_llama3_counts():
    """Per component, the mean count over trials matches Table 5 within sampling error."""
    import csv
    from importlib import resources

    text = resources.files("planner_gui.core").joinpath("data/llama3_table5.csv").read_text("utf-8")
    counts = {r["component"]: int(r["interruptions"]) for r in csv.DictReader(text.splitlines())}
    assert sum(counts.values()) == 419
    sc = Scenario(gpus=LLAMA3_GPUS, days=float(LLAMA3_DAYS), trials=4000, seed=11)
    res = simulate(sc)
    for i, comp in enumerate(sc.components):
        assert_within_se(res.trials.by_component[:, i], counts[comp.name], comp.name)
    np.testing.assert_array_equal(res.trials.by_component.sum(axis=1), res.trials.unplanned)
    assert_within_se(res.trials.unplanned, 419.0, "total")
    assert_within_se(res.trials.planned, 47.0, "planned")


def test_same_seed_same_numbers_and_other_seed_differs():
    a, b = simulate(Scenario(trials=200)), simulate(Scenario(trials=200))
    np.testing.assert_array_equal(a.goodput, b.goodput)
    np.testing.assert_array_equal(a.trials.by_component, b.trials.by_component)
    c = simulate(Scenario(trials=200, seed=1))
    assert not np.array_equal(a.goodput, c.goodput)


def test_cancel_between_chunks():
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 1

    with pytest.raises(engine.Cancelled):
        simulate(Scenario(gpus=1_000_000, trials=200), should_stop=stop)
