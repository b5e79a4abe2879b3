"""Smoke-test a built bundle: start the app headless and run its command line.

Usage: ``python packaging/smoke_test.py DIST_DIR`` (e.g. dist/planner-gui). Fails (exit 1) when the app
exits non-zero, does not log "init finished", or prints an import error or a traceback; or when the
bundled ``planner-gui run --preset llama3-405b --json`` fails or prints something that does not parse.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BAD_MARKERS = (
    "Traceback (most recent call last)",
    "ImportError",
    "ModuleNotFoundError",
    "could not load the Qt platform plugin",
    "Segmentation fault",
)


def executable(dist: Path, name: str) -> Path:
    for candidate in (dist / name, dist / f"{name}.exe", dist / f"{name}-cli.exe"):
        if candidate.is_file():
            return candidate
    raise SystemExit(f"smoke test: no {name} executable in {dist}")


def check(label: str, ok: bool, detail: str = "") -> bool:
    print(f"{'ok  ' if ok else 'FAIL'} {label}" + (f": {detail}" if detail and not ok else ""))
    return ok


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    dist = Path(sys.argv[1]).resolve()
    exe = executable(dist, "planner-gui")
    cli = executable(dist, "planner-gui-cli") if (dist / "planner-gui-cli.exe").exists() else exe
    home = Path(tempfile.mkdtemp(prefix="planner-smoke-"))
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        PLANNER_GUI_QUIT_AFTER_START="1",
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
    )
    env.pop("PYTHONPATH", None)  # the bundle must not lean on a source tree
    ok = True

    start = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=180, cwd=home)
    output = start.stdout + start.stderr
    ok &= check("app exits 0", start.returncode == 0, f"exit {start.returncode}\n{output[-3000:]}")
    ok &= check('app logs "init finished"', "init finished" in output, output[-3000:])
    bad = [m for m in BAD_MARKERS if m in output]
    ok &= check("no import error or traceback", not bad, f"{bad}\n{output[-3000:]}")
    logs = list(home.rglob("planner-gui.log"))
    ok &= check(
        "log file written in the user's log directory",
        bool(logs) and "init finished" in logs[0].read_text(errors="replace"),
        str(logs),
    )

    run = subprocess.run(
        [str(cli), "run", "--preset", "llama3-405b", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=home,
    )
    ok &= check("command line exits 0", run.returncode == 0, run.stderr[-2000:])
    try:
        doc = json.loads(run.stdout)
        parsed = 0.85 < doc["goodput"]["mean"] < 1.0 and doc["scenario"]["gpus"] == 16_384
    except (ValueError, KeyError, TypeError) as exc:
        parsed, doc = False, exc
    ok &= check("command line JSON parses and is plausible", parsed, str(doc)[:500])

    bad_flag = subprocess.run(
        [str(cli), "run", "--gpus", "0"], capture_output=True, text=True, env=env, timeout=120, cwd=home
    )
    ok &= check(
        "bad flag: exit 2 with one line",
        bad_flag.returncode == 2 and len(bad_flag.stderr.strip().splitlines()) == 1,
        bad_flag.stderr,
    )
    print("smoke test passed" if ok else "smoke test FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
