"""Numbers for people (planner_gui/core/util/fmt.py): large sums in thousands, millions, billions and trillions."""

from __future__ import annotations

import pytest

from planner_gui.core.util import fmt


@pytest.mark.parametrize(
    ("usd", "shown"),
    [
        (950.0, "$950"),
        (12_345.0, "$12.3 k"),
        (1_770_000.0, "$1.77 M"),
        (4.42e9, "$4.42 B"),
        (2.19e12, "$2.19 T"),  # ten million GPUs for ten years: not "$2.19e+03 B"
        (0.004, "$0"),
    ],
)
def test_money_reads_in_the_unit_of_its_size(usd, shown):
    assert fmt.money(usd) == shown


def test_a_trillion_is_said_as_one():
    assert fmt.compact(8.76e11) == "876 B"
    assert fmt.compact(1e12) == "1 T" and fmt.signed_money(-3.5e12) == "-$3.5 T"


def test_a_share_that_rounds_to_nothing_has_no_sign():
    assert fmt.percent(-2.2e-18) == "0.0%" and fmt.percent(-0.0004, 1) == "0.0%"  # hours summed to a residue
    assert fmt.percent(-0.0006, 1) == "-0.1%" and fmt.percent(0.9167, 2) == "91.67%"


def test_how_often_is_said_in_whole_counts_never_every_1():
    assert fmt.each(1, "snapshot") == "each snapshot"
    assert fmt.each(4, "snapshot") == "every 4 snapshots" and fmt.each(1200, "checkpoint") == "every 1,200 checkpoints"
