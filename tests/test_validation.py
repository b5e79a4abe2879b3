"""The validation page: every published figure's command run again, its number where the page says, its verdict
still true, and docs/validation.md the page the rows make."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
from pathlib import Path

import pytest
from scipy import stats

from planner_gui.cli import main as cli_main
from planner_gui.core.analysis.validation import ROWS, holds, markdown, read

ROOT = Path(__file__).resolve().parent.parent


def run(command: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(shlex.split(command)) == 0, command
    return json.loads(out.getvalue())


@pytest.mark.parametrize("row", ROWS, ids=[r.key for r in ROWS])
def test_each_published_figure_is_where_the_page_says(row):
    value = read(row, run(row.command))
    assert abs(value - row.ours) <= row.drift + 1e-12, (row.key, value, row.ours)
    assert holds(row, value), (row.key, row.verdict, value, row.published)


def test_the_verdicts_are_what_their_words_say():
    for row in ROWS:
        if row.verdict in ("reproduced", "fitted"):
            assert abs(row.ours - row.published) <= row.tolerance, row.key
        if row.verdict == "not reproduced":  # far from it: more than a third of the published figure away
            assert abs(row.ours - row.published) > abs(row.published) / 3, row.key
    lablup = next(r for r in ROWS if r.key == "lablup-504")
    lo, hi = stats.poisson.ppf([0.05, 0.95], lablup.ours)
    assert f"{lo:.0f} to {hi:.0f}" in lablup.note
    # The Databricks and DLRover rows: the closed form 1 - exp(-N) of each row's own rate is the published figure.
    for key, gpus, hours, mtbf, published in (
        ("databricks-256", 256, 720, 876_000, 0.19),
        ("databricks-1024", 1024, 720, 876_000, 0.57),
        ("dlrover-1000", 1000, 24, 24 / 0.0027, 0.93),
    ):
        import math

        assert -math.expm1(-gpus * hours / mtbf) == pytest.approx(published, abs=0.005), key


def test_docs_validation_md_is_the_page_the_rows_make():
    assert (ROOT / "docs" / "validation.md").read_text(encoding="utf-8") == markdown()
