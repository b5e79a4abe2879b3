"""Deliberate mutations of the general engine, each of which the grid against the reference simulator must catch.

Run from the repository root: ``python scripts/check_mutations.py``. Each mutation is applied to a copy of the
engine's source in place, the grid of tests/test_sim.py runs, and the source is put back; every line should say
"failed" (a mutation that passes is a rule of docs/model.md the grid cannot see). Takes about six minutes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent
J = str(ROOT / "planner_gui/core/sim/job.py")
W = str(ROOT / "planner_gui/core/sim/world.py")
muts = {
    "psnap not reset at a storage restore": (
        J,
        "st[PSNAP] = np.where(drain, p_end, np.where(pers, bank, p_snap))",
        "st[PSNAP] = np.where(drain, p_end, p_snap)",
    ),
    "uploads never skip a point": (
        J,
        "j_last = j0 + q * np.floor(np.maximum(starts, 0.0) / q)",
        "j_last = j0 + np.floor(np.maximum(starts, 0.0))",
    ),
    "no promotion": (J, "tier = np.maximum(pend, kind)", "tier = kind * 1.0"),
    "planned persists during a restart": (J, "drain = planned & ~in_restart", "drain = planned"),
    "swap not held": (J, "np.maximum(base, swap, out=base)", "pass"),
    "continue stall not extended": (
        J,
        "np.copyto(down_end, np.maximum(down_end, g_new + st[STALL]), where=cont)",
        "np.copyto(down_end, g_new + st[STALL], where=cont)",
    ),
    "return without rejoin": (
        W,
        "back[ql[found], qc[found]] = times[ql[found], at[found]] + m.rejoin",
        "back[ql[found], qc[found]] = times[ql[found], at[found]]",
    ),
    "restore time forgotten": (
        J,
        "np.copyto(down_end, base + restore, where=restart)",
        "np.copyto(down_end, base, where=restart)",
    ),
}
for name, (f, a, b) in muts.items():
    src = open(f).read()
    assert a in src, name
    shutil.copy(f, "/tmp/mut.bak")
    open(f, "w").write(src.replace(a, b))
    try:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-x",
                "tests/test_sim.py",
                "-k",
                "agrees_with_the_reference and (stress or 100k or 1M)",
            ],
            capture_output=True,
            text=True,
            cwd=str(ROOT),
            timeout=1500,
        )
        last = [l for l in r.stdout.splitlines() if "passed" in l or "failed" in l][-1:]
        fails = [l for l in r.stdout.splitlines() if l.startswith("FAILED")][:1]
        print(f"{name:40s} {last} {fails}")
    finally:
        shutil.copy("/tmp/mut.bak", f)
