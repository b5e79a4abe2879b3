"""Run every row of the validation page (planner_gui/core/analysis/validation.py) and list the model's numbers
beside the recorded ones; with ``--write``, also write docs/validation.md from the rows.

Usage: ``python scripts/make_validation.py [--write]``. Exits 1 if a number moved by more than its row's drift or
a verdict no longer holds (then update the row, or find out why it moved).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
import sys
from pathlib import Path

from planner_gui.cli import main as cli_main
from planner_gui.core.analysis.validation import ROWS, holds, markdown, read

ROOT = Path(__file__).resolve().parent.parent


def run(command: str) -> dict:
    """``planner-gui COMMAND`` in this process, its JSON output read."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli_main(shlex.split(command))
    if status != 0:
        raise RuntimeError(f"planner-gui {command}: exit status {status}")
    return json.loads(out.getvalue())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write docs/validation.md from the rows")
    args = ap.parse_args()
    bad = 0
    for row in ROWS:
        value = read(row, run(row.command))
        moved = abs(value - row.ours) > row.drift
        ok = holds(row, value)
        bad += moved or not ok
        flag = "" if not moved and ok else ("  MOVED" if moved else "") + ("  VERDICT FAILS" if not ok else "")
        print(f"{row.key:22s} published {row.published:<10g} recorded {row.ours:<12.6g} now {value:<12.6g}{flag}")
    if args.write:
        (ROOT / "docs" / "validation.md").write_text(markdown(), encoding="utf-8")
        print("wrote docs/validation.md")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
