"""Deliberate mutations of the general engine, each of which the grid against the reference simulator must catch.

Run: ``python scripts/check_mutations.py``. Each mutation is applied to a copy of the package and the tests in a
temporary folder (the working tree is never touched, so other runs meanwhile see the real engine), the grid of
tests/test_sim.py runs on the copy, and the copy goes; every line should say "caught" (a mutation that survives
is a rule of docs/model.md the grid cannot see). Takes about six minutes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JOB = Path("planner_gui/core/sim/job.py")
WORLD = Path("planner_gui/core/sim/world.py")

#: name: (file, the line as it is, the mutated line).
MUTATIONS = {
    "the fast checkpoint not reset at a storage restore": (
        JOB,
        "st[PSNAP] = _blend(p_snap, bank, pers, 1.0 - pers)",
        "st[PSNAP] = p_snap",
    ),
    "uploads never skip a point": (
        JOB,
        "j_last = j0 + q * np.floor(np.maximum(starts, 0.0) / q)",
        "j_last = j0 + np.floor(np.maximum(starts, 0.0))",
    ),
    "no promotion during a storage restore": (JOB, "tier = np.maximum(pend, kf)", "tier = kf * 1.0"),
    "a planned drain during a restart persists": (JOB, "drain = cols[~in_restart]", "drain = cols"),
    "a swap does not hold the job": (JOB, "np.maximum(base, swap, out=base)", "pass"),
    "a continue stall cuts a downtime short": (
        JOB,
        "np.maximum(down_new, reach, out=down_new)",
        "down_new = np.where(cont, g_new + st[STALL], down_new)",
    ),
    "a waiting replica returns without its rejoin": (
        WORLD,
        "rejoin = times[fr, at[found]] + m.rejoin",
        "rejoin = times[fr, at[found]]",
    ),
    "a restore takes no time": (
        JOB,
        "    base += restore\n",
        "    base += 0.0\n",
    ),
}
GRID = "agrees_with_the_reference and (stress or 100k or 1M)"


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    survived = 0
    for name, (path, line, mutated) in MUTATIONS.items():
        source = (ROOT / path).read_text(encoding="utf-8")
        if line not in source:
            print(f"{name}: the line is gone from {path.name} (update this script)")
            survived += 1
            continue
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp)
            for part in ("planner_gui", "tests"):
                shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
            (copy / path).write_text(source.replace(line, mutated), encoding="utf-8")
            env = {**os.environ, "PYTHONPATH": str(copy)}  # the copy before the installed package
            argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "tests/test_sim.py"]
            out = subprocess.run(
                [*argv, "-k", GRID], capture_output=True, text=True, cwd=copy, env=env, timeout=1800
            ).stdout
        failed = [ln.removeprefix("FAILED ") for ln in out.splitlines() if ln.startswith("FAILED")]
        print(f"{name:52s} {'caught by ' + failed[0] if failed else 'SURVIVED'}")
        survived += not failed
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main())
