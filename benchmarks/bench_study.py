"""Design-study throughput: one process, the local process pool, and a two-worker Dask LocalCluster.

A 1,000-scenario Latin hypercube at 16,384 GPUs (54 days, 200 trials each; detection, restart and the
blocking write vary), written to Parquet. Prints scenarios per second for each backend, end to end (the
pool's and the cluster's start-up included; the cluster's own start is not), and the pool's speed-up over
one process (floor: >= 1.6 on two cores). Every backend's rows are checked to be the same numbers.

Run: ``python benchmarks/bench_study.py [--scenarios N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from planner_gui.core.study import Backend, ResultStore, design_size, loads_spec, read_results, run_study, study_meta

SPEC = """
[study]
name = "bench"
preset = "llama3-405b"
design = "lhs"
samples = {n}
trials = 200
seed = 1

[set]
gpus = 16384

[vary]
detect_min = {{ min = 1, max = 30, scale = "log" }}
restart_min = {{ min = 1, max = 30, scale = "log" }}
checkpoint_write_s = {{ min = 1, max = 600, scale = "log" }}
"""
FLOOR = 1.6


def run(spec, backend: Backend, out: Path) -> float:
    """Seconds to run the whole study on ``backend`` into a fresh ``out``."""
    t0 = time.perf_counter()
    store = ResultStore(out, study_meta(spec, design_size(spec)), fresh=True)
    if out.exists():
        out.unlink()
    run_study(spec, store, backend)
    store.close()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs for each backend (default 3)")
    args = ap.parse_args()
    spec = loads_spec(SPEC.format(n=args.scenarios))
    n = design_size(spec)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{n:,} scenarios x {spec.trials} trials at 16,384 GPUs; {cores} cores; best of {args.repeat}")
    tmp = Path(tempfile.mkdtemp(prefix="bench-study-"))
    pool = f"process pool ({cores} workers)"
    backends = {"one process": Backend(workers=1), pool: Backend(workers=0)}
    times: dict[str, float] = {}
    rows: dict[str, dict] = {}
    with contextlib.ExitStack() as stack:
        try:
            from distributed import LocalCluster
        except ImportError:
            print("  (distributed is not installed: no cluster measured)")
        else:
            cluster = stack.enter_context(
                LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40)
            )
            backends["LocalCluster (2 workers)"] = Backend(scheduler=cluster.scheduler_address)
        # The backends take turns, so that a load from elsewhere on a shared machine falls on each alike.
        for _ in range(args.repeat):
            for name, backend in backends.items():
                out = tmp / f"{name.split()[0]}.parquet"
                times[name] = min(times.get(name, float("inf")), run(spec, backend, out))
                res = read_results(out)
                rows[name] = {c: np.asarray(v) for c, v in res.columns.items()}
    for name, t in times.items():
        print(f"  {name:<28} {t:7.2f} s   {n / t:8.1f} scenarios/s")
    first = next(iter(rows.values()))
    for name, cols in rows.items():
        same = all(np.array_equal(cols[c], first[c], equal_nan=cols[c].dtype.kind == "f") for c in first)
        if not same:
            print(f"FAIL: {name} gave other numbers than one process")
            return 1
    speedup = times["one process"] / times[pool]
    ok = speedup >= FLOOR
    verdict = "ok" if ok else "BELOW FLOOR"
    print(f"pool speed-up over one process: {speedup:.2f}x (floor {FLOOR}x on two cores) {verdict}")
    print("every backend gave the same numbers")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
