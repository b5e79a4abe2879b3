"""The engine's parts, each alone: the arrangement of interruptions (rows.py), a chunk's matrix and
sums (engine.py), the draws and the joining at the window's edges (edges.py), and the worked example
of docs/engine.md.

Statistical checks use fixed seeds and a tolerance of Z standard errors (see test_engine.py).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2

from planner_gui.core.sim import engine, rows
from planner_gui.core.sim.chunk_sums import multiply_columns
from planner_gui.core.sim.edges import EdgeDraws, draw_edges, edge_hours, truncated_exponential
from planner_gui.core.sim.intervals import HoursAccumulator, interval_parts
from planner_gui.core.theory.params import Params
from planner_gui.core.util.streams import stream

Z = 4.5
#: Chi-square tests reject at this false-alarm probability (as Z = 4.5 does for one normal check).
P_FALSE_ALARM = 7e-6


def spacing_counts(seq: str) -> tuple[bool, bool, int, int, int]:
    """Brute force, for one order of interruptions (U unplanned, P planned): whether the first and the
    last are planned, and how many neighbours are UP, PP and PU."""
    pairs = [seq[i : i + 2] for i in range(len(seq) - 1)]
    return seq[:1] == "P", seq[-1:] == "P", pairs.count("UP"), pairs.count("PP"), pairs.count("PU")


def exact_law(m: int, k: int) -> dict[tuple[bool, bool, int, int, int], float]:
    """The law of :func:`spacing_counts` over all C(m + k, k) orders, each equally likely: what shuffling
    the kinds many times would give, without its noise."""
    law: Counter[tuple[bool, bool, int, int, int]] = Counter()
    for planned in itertools.combinations(range(m + k), k):
        law[spacing_counts("".join("P" if i in planned else "U" for i in range(m + k)))] += 1
    return {key: count / math.comb(m + k, k) for key, count in law.items()}


def arranged(m: int, k: int, draws: int, seed: int) -> rows.Arrangement:
    full = np.full(draws, m, dtype=np.int64), np.full(draws, k, dtype=np.int64)
    return rows.draw_arrangement(np.random.default_rng(seed), *full)


def outcomes(a: rows.Arrangement) -> list[tuple[bool, bool, int, int, int]]:
    columns = (a.first_planned, a.last_planned, a.n_up, a.n_pp, a.n_pu)
    return [(bool(f), bool(la), int(u), int(p), int(q)) for f, la, u, p, q in zip(*columns)]


@pytest.mark.parametrize("m,k", [(3, 1), (1, 1), (0, 3), (4, 0), (0, 0), (5, 3), (2, 6), (6, 2), (1, 5), (7, 7)])
def test_arrangement_has_the_law_of_a_random_order(m, k):
    """The joint law of (first planned, last planned, UP, PP, PU) equals the exact one, cell by cell
    and by a chi-square test, and nothing impossible is ever drawn."""
    draws = 40_000
    law = exact_law(m, k)
    seen = Counter(outcomes(arranged(m, k, draws, seed=m * 100 + k)))
    assert set(seen) <= set(law), f"impossible outcomes: {set(seen) - set(law)}"
    stat = 0.0
    for key, prob in law.items():
        expected = draws * prob
        se = math.sqrt(draws * prob * (1.0 - prob))
        assert abs(seen[key] - expected) <= Z * se + 1e-9, f"{key}: {seen[key]} drawn, {expected:.1f} expected"
        stat += (seen[key] - expected) ** 2 / expected
    if len(law) > 1:
        assert stat <= chi2.ppf(1.0 - P_FALSE_ALARM, len(law) - 1)


def test_arrangement_matches_shuffles_where_enumeration_is_too_long():
    """40 unplanned and 12 planned (6e11 orders): the law of (first, last, runs of planned ones) from
    draw_arrangement and from shuffling the kinds, cell by cell within the two-sample standard error."""
    m, k, draws = 40, 12, 30_000
    kinds = np.zeros((draws, m + k), dtype=bool)
    kinds[:, :k] = True
    kinds = np.random.default_rng(3).permuted(kinds, axis=1)
    a, b = kinds[:, :-1], kinds[:, 1:]
    up, pp, pu = (a < b).sum(axis=1), (a & b).sum(axis=1), (a > b).sum(axis=1)
    first, last = kinds[:, 0], kinds[:, -1]
    runs = up + first
    np.testing.assert_array_equal(pp, k - runs)  # the brute force agrees with the identities used
    np.testing.assert_array_equal(pu, runs - last)
    shuffled = Counter(zip(first.tolist(), last.tolist(), runs.tolist()))
    got = arranged(m, k, draws, seed=4)
    drawn = Counter(zip(got.first_planned.tolist(), got.last_planned.tolist(), (got.n_up + got.first_planned).tolist()))
    for key in set(shuffled) | set(drawn):
        pooled = (shuffled[key] + drawn[key]) / (2 * draws)
        se = math.sqrt(pooled * (1 - pooled) * 2 / draws)
        assert abs(shuffled[key] - drawn[key]) / draws <= Z * se + 1e-9, key


def assert_mean_within_se(values: np.ndarray, expected: float, what: str) -> None:
    se = float(np.std(values, ddof=1)) / math.sqrt(len(values))
    assert abs(float(np.mean(values)) - expected) <= Z * se + 1e-12, what


def assert_share_within_se(flags: np.ndarray, prob: float, what: str) -> None:
    """The share of True in ``flags`` is ``prob`` within Z binomial standard errors."""
    se = math.sqrt(prob * (1.0 - prob) / len(flags))
    assert abs(float(np.mean(flags)) - prob) <= Z * se + 1e-12, what


@pytest.mark.parametrize("m,k", [(100_000, 47), (200, 150), (3, 400)])
def test_arrangement_of_many_interruptions_has_the_exact_means(m, k):
    """Each of the n - 1 neighbouring pairs is UP (or PU) with probability m k / (n (n - 1)) and PP
    with k (k - 1) / (n (n - 1)); the first is planned with k / n, the first and last with
    k (k - 1) / (n (n - 1))."""
    draws, n = 20_000, m + k
    got = arranged(m, k, draws, seed=5)
    assert_mean_within_se(got.n_up, m * k / n, "UP")
    assert_mean_within_se(got.n_pu, m * k / n, "PU")
    assert_mean_within_se(got.n_pp, k * (k - 1) / n, "PP")
    assert_share_within_se(got.first_planned, k / n, "first")
    assert_share_within_se(got.last_planned, k / n, "last")
    assert_share_within_se(got.first_planned & got.last_planned, k * (k - 1) / (n * (n - 1)), "first and last")


def test_draw_rows_is_counts_then_arrangement():
    """Counts by inversion from the counts stream, the arrangement from its own stream, and every row's
    kinds of spacing add up to its n - 1 interior spacings."""
    p = Params(lam=0.4, mu=0.3, hours=10.0, tau=1.0, c=0.1, r_unplanned=0.2, r_planned=0.1)
    got = rows.draw_rows(p, seed=9, rows=5000, sub_hours=5.0)
    u = rows.uniforms(stream(9, rows.STREAM_COUNTS), (5000, 2))
    np.testing.assert_array_equal(got.n_unplanned, rows.poisson_by_inversion(u[:, 0], 2.0))
    np.testing.assert_array_equal(got.n_planned, rows.poisson_by_inversion(u[:, 1], 1.5))
    again = rows.draw_arrangement(stream(9, rows.STREAM_ARRANGE), got.n_unplanned, got.n_planned)
    for name in ("first_planned", "last_planned", "n_up", "n_pp", "n_pu"):
        np.testing.assert_array_equal(getattr(got, name), getattr(again, name), err_msg=name)
    uu = got.n - 1 - got.n_up - got.n_pp - got.n_pu
    assert np.all(uu[got.n > 0] >= 0) and np.all(uu[got.n == 0] == -1)
    only_planned = (got.n_unplanned == 0) & (got.n_planned > 0)
    assert np.all(got.first_planned[only_planned] & got.last_planned[only_planned])
    np.testing.assert_array_equal(got.n_pp[only_planned], got.n_planned[only_planned] - 1)
    assert not np.any(got.first_planned[got.n_planned == 0] | got.last_planned[got.n_planned == 0])
    assert np.all(u[got.order[1:], 0] >= u[got.order[:-1], 0])


def hand_rows(orders: list[str]) -> rows.Rows:
    """Rows with the given orders of interruptions (U unplanned, P planned), the arrangement by brute force."""
    counts = [spacing_counts(seq) for seq in orders]
    first, last, up, pp, pu = (np.array(column) for column in zip(*counts))
    return rows.Rows(
        first_planned=first,
        last_planned=last,
        n_up=up,
        n_pp=pp,
        n_pu=pu,
        n_unplanned=np.array([seq.count("U") for seq in orders]),
        n_planned=np.array([seq.count("P") for seq in orders]),
        order=np.arange(len(orders)),
    )


def test_draw_chunk_puts_each_spacing_in_its_band():
    """Each column keeps its draws exactly in its own slots (first, last, then the first n_up, n_pp,
    n_pu slots of each band and n_uu of the bulk) and is zero elsewhere."""
    orders = ["UUUUU", "UPUPU", "PPUU", "", "UUUP", "PUUUUUUP", "P", "U"]
    hand = hand_rows(orders)
    chunks = engine._Chunks.plan(hand, len(orders))
    slots, m = int(chunks.slots[0]), len(orders)
    h_up, h_pp, h_pu = (int(h) for h in chunks.bands[0])
    assert (h_up, h_pp, h_pu) == (hand.n_up.max(), hand.n_pp.max(), hand.n_pu.max())
    assert slots == 2 + h_up + h_pp + h_pu + max(
        len(q) - 1 - hand.n_up[i] - hand.n_pp[i] - hand.n_pu[i] for i, q in enumerate(orders)
    )
    e, total = engine._draw_chunk(chunks, 0, stream(1, 2), engine._Workspace(slots * m, slots))
    raw = np.log(stream(1, 2).random((slots, m)))  # log U = -E: the engine keeps exponentials negated
    band_start = (2, 2 + h_up, 2 + h_up + h_pp, 2 + h_up + h_pp + h_pu)
    for col, seq in enumerate(orders):
        pairs = [seq[i : i + 2] for i in range(len(seq) - 1)]
        used = [0] + ([1] if seq else [])
        for start, kind in zip(band_start, ("UP", "PP", "PU", "UU")):
            used += range(start, start + pairs.count(kind))
        want = np.zeros(slots)
        want[used] = raw[used, col]
        np.testing.assert_array_equal(e[:, col], want, err_msg=seq)
    np.testing.assert_allclose(total, e.sum(axis=0), rtol=1e-12)  # the column sums it returns


def test_draw_chunk_draws_again_a_column_whose_uniform_is_zero():
    """log 0 is infinite: a column that drew U = 0 (in a used slot or an unused one) is drawn again from
    the generator's next numbers, and the column sums are those of the final matrix."""
    orders = ["UUUUU", "UPUPU", "PPUU", "UUUP"]
    hand = hand_rows(orders)
    chunks = engine._Chunks.plan(hand, len(orders))
    slots, m = int(chunks.slots[0]), len(orders)

    class ZeroFirst:
        """Uniforms from a real stream, with zeros put into columns 1 and 3 of the first matrix."""

        def __init__(self) -> None:
            self.rng, self.calls = stream(3, 4), 0

        def random(self, size=None, out=None):
            self.calls += 1
            u = self.rng.random(size if out is None else out.shape)
            if self.calls == 1:
                u[2, 1] = 0.0  # a used slot (UP band of "UPUPU")
                u[-1, 3] = 0.0  # the last slot: unused by "UUUP"
            if out is None:
                return u
            out[...] = u
            return out

    gen = ZeroFirst()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide or invalid warnings escape
        e, total = engine._draw_chunk(chunks, 0, gen, engine._Workspace(slots * m, slots))
    assert gen.calls == 2  # one matrix, then the two bad columns together
    assert np.isfinite(e).all() and np.isfinite(total).all()
    np.testing.assert_allclose(total, e.sum(axis=0), rtol=1e-12)
    first = np.log(stream(3, 4).random((slots, m)))
    np.testing.assert_array_equal(e[0, [0, 2]], first[0, [0, 2]])  # the good columns keep their draws
    assert e[0, 1] != first[0, 1] and e[0, 3] != first[0, 3]


def test_chunk_of_rows_without_interruptions_is_one_slot():
    hand = hand_rows(["", "", ""])
    chunks = engine._Chunks.plan(hand, 2)
    np.testing.assert_array_equal(chunks.slots, [1, 1])


@pytest.mark.parametrize("slots,m", [(1, 1), (3, 1), (7, 5), (40, 3), (5, 5000), (2, 4096), (9, 4097)])
def test_multiply_columns_is_a_broadcast_multiply(slots, m):
    a = np.random.default_rng(slots * m).random((slots, m))
    b = np.random.default_rng(m).random(m)
    out = np.empty_like(a)
    multiply_columns(a, b, out)
    np.testing.assert_array_equal(out, a * b)


def test_truncated_exponential_inverts_its_distribution_function():
    """F(q) = v for F(x) = (1 - e^(-rate x)) / (1 - e^(-rate width)), from nearly uniform to nearly
    all mass at 0; and q stays in [0, width)."""
    v = np.linspace(0.0, 1.0 - 1e-12, 101)
    for rate, width in [(1e-300, 5.0), (1e-9, 2.0), (0.4, 2.0), (3.0, 2.0), (50.0, 2.0)]:
        q = truncated_exponential(v, rate, width)
        assert np.all((q >= 0) & (q < width))
        cdf = -np.expm1(-rate * q) / -np.expm1(-rate * width) if rate * width > 1e-100 else q / width
        np.testing.assert_allclose(cdf, v, rtol=1e-9, atol=1e-12, err_msg=f"rate {rate}")


def test_draw_edges_has_the_steady_state_law():
    """The kinds are planned with probability mu / Lambda; the time from the last interruption to the
    window, A if it is under the downtime D and D + (A - D) mod s otherwise, for A ~ Exp(Lambda), has
    distribution function 1 - e^(-Lambda x) below D and, above,
    (1 - e^(-Lambda D)) + e^(-Lambda D) (1 - e^(-Lambda (x - D))) / (1 - e^(-Lambda s)); B ~ Exp(Lambda)."""
    p = Params(lam=0.3, mu=0.1, hours=10.0, tau=1.5, c=0.5, r_unplanned=1.0, r_planned=0.5)
    big, s, trials = 0.4, 2.0, 200_000
    edges = draw_edges(p, trials, seed=12)
    for flags, what in ((edges.start_planned, "start"), (edges.end_planned, "end")):
        assert abs(flags.mean() - 0.25) <= Z * math.sqrt(0.25 * 0.75 / trials), what
    before = edges.before(s)
    for planned, d in ((False, p.r_unplanned), (True, p.r_planned)):
        sample = before[edges.start_planned == planned]
        for x in np.array([0.2, 0.6, 0.999, 1.0, 1.3, 1.9, 2.4, 2.9]) * d:
            if x < d:
                want = -math.expm1(-big * x)
            else:
                want = -math.expm1(-big * d) + math.exp(-big * d) * -math.expm1(-big * (x - d)) / -math.expm1(-big * s)
            got = float(np.mean(sample <= x))
            assert abs(got - want) <= Z * math.sqrt(want * (1 - want) / len(sample)) + 1e-12, (planned, x)
        assert np.all(sample < d + s)
    for x in (0.5, 2.0, 5.0):
        want = -math.expm1(-big * x)
        got = float(np.mean(edges.until_next <= x))
        assert abs(got - want) <= Z * math.sqrt(want * (1 - want) / trials), x


def test_interval_hours_depend_on_whole_cycles_before_and_long_times_after_only_through_a_phase():
    """Why edges.py may draw a phase instead of A and cap B: shifting the window by whole cycles past
    the downtime, or moving the end of the interval by more than a cycle past the window, leaves its
    hours alone."""
    rng = np.random.default_rng(8)
    size, tau, c = 2000, 1.5, 0.5
    s = tau + c
    down = rng.choice([0.5, 1.0], size)
    saved = rng.random(size) < 0.5
    lo = down + rng.random(size) * s  # the window starts after the downtime, at a phase in the cycle
    hi = lo + rng.random(size) * 10.0
    after = s + rng.random(size) * 3.0  # at least one cycle after the window's end
    base = interval_parts(hi + after, down, saved, lo, hi, tau, c)
    cycles = rng.integers(1, 50, size) * s
    shifted = interval_parts(hi + after + cycles, down, saved, lo + cycles, hi + cycles, tau, c)
    longer = interval_parts(hi + after * 1e3, down, saved, lo, hi, tau, c)
    for a, b, x in zip(base, shifted, longer):
        np.testing.assert_allclose(b, a, atol=1e-9)
        np.testing.assert_allclose(x, a, atol=1e-12)


# The edges by hand. tau = 1.5 h, c = 0.5 h (cycles of s = 2 h), R = 1 h after an unplanned interruption,
# r = 0.5 h after a planned one. Each trial is two sub-windows of 5 h.
EDGE_PARAMS = Params(lam=0.3, mu=0.1, hours=10.0, tau=1.5, c=0.5, r_unplanned=1.0, r_planned=0.5)
# Trial 0, row 0: one unplanned interruption at 2 h into the window (first piece 2, last piece 3);
#   row 1: none (one piece of 5 h).
# Trial 1, row 2: planned then unplanned (first piece 1, interior 2.5 for the chunk, last piece 1.5);
#   row 3: one planned interruption (first piece 4, last piece 1).
EDGE_ROWS = ["U", "", "PU", "P"]
EDGE_PIECES = np.array([[2.0, 5.0, 1.0, 4.0], [3.0, 0.0, 1.5, 1.0]])


def hand_edges(until_next_0: float, end_planned_1: bool) -> EdgeDraws:
    """Trial 0: the last interruption before the window was unplanned (D = 1) and 0.25 h before it (in
    its downtime); the next comes ``until_next_0`` after the window, unplanned. Trial 1: it was planned
    (D = 0.5) and the window starts 0.75 h into the checkpoint cycle; the next comes 0.3 h after the
    window, planned or not."""
    big, s, phase_hours = 0.4, 2.0, 0.75
    phase = -math.expm1(-big * phase_hours) / -math.expm1(-big * s)  # the uniform that draws 0.75 h
    return EdgeDraws(
        big=big,
        start_planned=np.array([False, True]),
        end_planned=np.array([False, end_planned_1]),
        down=np.array([1.0, 0.5]),
        in_down=np.array([True, False]),
        age_in_down=np.array([0.25, np.inf]),
        phase=np.array([0.0, phase]),
        until_next=np.array([until_next_0, 0.3]),
    )


def edge_sums(edges: EdgeDraws) -> np.ndarray:
    (acc,) = edge_hours(EDGE_PARAMS, hand_rows(EDGE_ROWS), EDGE_PIECES, 2, edges, np.array([EDGE_PARAMS.tau]))
    return np.array([acc.useful, acc.checkpoint, acc.lost, acc.recovery, acc.planned]).T


def test_edge_hours_by_hand():
    # Trial 0 has two gaps in the window.
    #   Gap 1 starts at the unplanned interruption 0.25 h before the window: [0, 1) down, compute from 1.
    #   The window sees [0.25, 2.25): 0.75 h down, then 1.25 h of compute that the unplanned interruption
    #   at 2.25 rolls back (lost).
    #   Gap 2 starts at that interruption and holds 3 + 5 h of the window, then B = 10 h (capped at
    #   R + 2 s = 5 h): [0, 1) down, cycles [1, 3), [3, 5), [5, 7) complete (3 x 1.5 compute, 3 x 0.5
    #   written), and [7, 8) is compute of a cycle that completes at 9, before the gap ends: kept.
    #   Useful 4.5 + 1 = 5.5, checkpoint 1.5, lost 1.25, recovery 0.75 + 1 = 1.75, planned 0.
    # Trial 1 has three gaps in the window.
    #   Gap 1 starts at the planned interruption 0.5 + 0.75 = 1.25 h before the window: [0, 0.5) down,
    #   [0.5, 2) compute, [2, 2.5) write. The window sees [1.25, 2.25): 0.75 compute and 0.25 of the
    #   write, ended by row 2's planned interruption, which keeps both.
    #   Gap 2 starts at row 2's unplanned interruption: 1.5 + 4 h to row 3's planned one: [0, 1) down,
    #   [1, 2.5) compute, [2.5, 3) write, [3, 4.5) compute, [4.5, 5) write, [5, 5.5) compute, kept.
    #   Gap 3 starts at row 3's planned interruption: 1 h of the window, then 0.3 h to the next one:
    #   [0, 0.5) planned restart, [0.5, 1) compute, kept if the next one is planned, else lost.
    #   Useful 0.75 + 3.5 + 0.5 = 4.75, checkpoint 0.25 + 1 = 1.25, recovery 1, planned 0.5.
    # (The chunk holds the rest of the window: row 2's interior 2.5 h.)
    want_0 = [5.5, 1.5, 1.25, 1.75, 0.0]
    np.testing.assert_allclose(edge_sums(hand_edges(10.0, True)), [want_0, [4.75, 1.25, 0.0, 1.0, 0.5]], atol=1e-12)
    np.testing.assert_allclose(edge_sums(hand_edges(10.0, False)), [want_0, [4.25, 1.25, 0.5, 1.0, 0.5]], atol=1e-12)
    # B matters only while the cycle running at the window's end can still be cut short: from 1 h
    # after the window's end on (the end of that cycle) it makes no difference, capped or not.
    for until_next in (1.0 + 1e-9, 3.0, 5.0, 1e300, np.inf):
        np.testing.assert_allclose(edge_sums(hand_edges(until_next, True))[0], want_0, atol=1e-12)
    # Cut short 0.5 h after the window, by an unplanned interruption: the compute in [7, 8) is lost.
    np.testing.assert_allclose(edge_sums(hand_edges(0.5, True))[0], [4.5, 1.5, 2.25, 1.75, 0.0], atol=1e-12)


class GivenDraws:
    """Stands in for the generator: fills a chunk's one-column matrix with chosen numbers."""

    def __init__(self, column: list[float]) -> None:
        self.column = column

    def random(self, out: np.ndarray) -> None:
        out[:, 0] = np.exp(-np.array(self.column))  # uniforms whose logs are minus the column


def test_worked_example_of_docs_engine_md():
    """docs/engine.md's example: one row of 12 h, U P U U, with the draws chosen so that the spacings are
    round numbers of hours. The derivation is in the document; the sums are worked out here again.

    Slots: first piece, last piece, UP, PU, UU (no PP). Draws 0.6, 1.2, 2.4, 1.5, 0.3 sum to 6, so
    scale = 12 / 6 = 2 h per unit and the spacings are 1.2, 2.4, 4.8, 3.0, 0.6 h.
    UP, 4.8 h: R = 1 down, x = 3.8 / 2 = 1.9 cycles: one complete (1.5 compute, 0.5 write), then
    0.9 x 2 = 1.8 h of a cycle kept by the planned end: 1.5 compute, 0.3 write.
    PU, 3.0 h: r = 0.5 planned restart, x = 1.25: one cycle (1.5 + 0.5), 0.5 h lost.
    UU, 0.6 h: all downtime (shorter than R).
    """
    p = Params(lam=0.3, mu=0.1, hours=12.0, tau=1.5, c=0.5, r_unplanned=1.0, r_planned=0.5)
    row = hand_rows(["UPUU"])
    chunks = engine._Chunks.plan(row, 1)
    assert int(chunks.slots[0]) == 5
    acc, pieces = HoursAccumulator(1), np.zeros((2, 1))
    draws = GivenDraws([0.6, 1.2, 2.4, 1.5, 0.3])
    engine._run_chunk(p, chunks, 0, p.hours, draws, [acc], np.array([p.tau]), pieces, engine._Workspace(5, 5))
    np.testing.assert_allclose(pieces[:, 0], [1.2, 2.4], rtol=1e-12)
    got = [acc.useful[0], acc.checkpoint[0], acc.lost[0], acc.recovery[0], acc.planned[0]]
    np.testing.assert_allclose(got, [3.0 + 1.5, 0.8 + 0.5, 0.5, 1.0 + 0.6, 0.5], rtol=1e-12, atol=1e-12)


def test_the_snippet_of_docs_engine_md_prints_what_the_document_says():
    """The example's snippet runs on the engine as it is and prints the block shown after it."""
    text = (Path(__file__).parents[1] / "docs" / "engine.md").read_text("utf-8")
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    shown = text.split("```text\n", 1)[1].split("```", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/engine.md", "exec"), {"__name__": "engine_md"})
    assert out.getvalue() == shown


def test_counts_split_by_rates_keep_their_sum_and_follow_the_rates():
    counts = np.array([0, 5, 40_000])
    got = rows.split_by_rates(stream(4, 1), counts, np.array([1.0, 3.0, 0.0]))
    assert got.tolist()[0] == [0, 0, 0] and (got.sum(axis=1) == counts).all() and (got[:, 2] == 0).all()
    share = got[2, 1] / counts[2]  # binomial: 0.75 within 5 standard errors
    assert abs(share - 0.75) < 5 * np.sqrt(0.75 * 0.25 / counts[2])
    per_trial = rows.split_by_rates(stream(4, 1), counts, np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 2.0], [1.0, 1.0, 0.0]]))
    assert per_trial[1].tolist() == [0, 0, 5] and (per_trial.sum(axis=1) == counts).all()
    # Rates of 0 draw nothing: the generator's next number is as if the split had not happened.
    rng = stream(4, 1)
    assert rows.split_by_rates(rng, counts, np.zeros(3)).sum() == 0
    assert rng.random() == stream(4, 1).random()
