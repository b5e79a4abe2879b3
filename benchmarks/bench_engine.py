"""Engine speed and memory, as ratios to a baseline measured in the same run.

Prints:
* the cost of numpy drawing one exponential random number (the baseline);
* the cost per interruption of the h100-100k-inmemory preset (replicas in another or the same domain; floor:
  >= 0.25), on the engine the table gives it (the general one: its planned interruptions may meet a restore,
  docs/model.md 2.4), and without planned interruptions (the vectorized two-tier engine's domain); with a
  persistent stall beside the fast tier (the general engine, as a multiple of the same run without it);
* the general engine with everything on at 100,000 GPUs (fast tier in another domain, 89 spare nodes, a
  10 min swap, continue mode, a 0.7/30-day burn-in, a 30-day training run): its window and its time to train
  (floor: >= 0.02 for the window);
* the engine's cost per simulated interruption at 16,384, 100,000 and 1,048,576 GPUs
  (54 days, 1,000 trials), and the ratio baseline / engine (floor: >= 0.5 at 100,000); at 100,000
  GPUs also with rate uncertainty on and with a 10-piece rate profile;
* wall times of those runs and of 41-point GPU-count sweeps at several trial counts;
* with ``--big``: the 1,000,000 GPUs x 365 days x 2,000 trials run and its peak memory
  (floor: under 400 MB), measured in a child process so the figure is that run's own.

Run: ``python benchmarks/bench_engine.py [--big] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import time

import numpy as np

from planner_gui.core.analysis.results import simulate
from planner_gui.core.analysis.sizing import run_spares
from planner_gui.core.analysis.sweep import gpu_counts, interval_points, sweep_gpus, sweep_interval
from planner_gui.core.model.scenario import Scenario
from planner_gui.core.model.spares import Spares


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def baseline_ns(repeat: int) -> float:
    rng = np.random.default_rng(1)
    n = 4_000_000
    out = np.empty(n)
    rng.standard_exponential(out=out)  # (first touch of the buffer's pages: not a draw's cost)
    return best_of(lambda: rng.standard_exponential(out=out), max(repeat, 3)) / n * 1e9


#: A profile of 10 pieces over the 54 days (x2 and x0.5 in turn), for the varying-rate lines.
TEN_PIECES = tuple((5.4 * i, 2.0 if i % 2 == 0 else 0.5) for i in range(10))


def engine_run(gpus: int, repeat: int, **changes: object) -> tuple[float, float]:
    sc = Scenario(gpus=gpus).replace(**changes)
    res = simulate(sc)
    events = float(res.trials.unplanned.sum() + res.trials.planned.sum())
    seconds = best_of(lambda: simulate(sc), repeat)
    return seconds, seconds / events * 1e9


def spares_run(gpus: int, repeat: int, spares: Spares) -> tuple[float, float]:
    sc = Scenario(gpus=gpus)
    res = run_spares(sc, spares)
    events = float(res.trials.unplanned.sum() + res.trials.planned.sum())
    seconds = best_of(lambda: run_spares(sc, spares), repeat)
    return seconds, seconds / events * 1e9


def tiers_run(repeat: int, write_s: float = 0.0, planned: bool = True, **tiers: object) -> tuple[float, float, str]:
    """The h100-100k-inmemory preset (both tiers on), with its tiers changed by ``tiers``, a persistent stall
    of ``write_s`` seconds at each persistent point, and its planned interruptions or none; the seconds, the
    ns per interruption and the engine that ran it."""
    from planner_gui.core.files.presets import load_preset

    sc = load_preset("h100-100k-inmemory").replace(checkpoint_write_s=write_s)
    sc = sc.replace(tiers=dataclasses.replace(sc.tiers, **tiers))
    if not planned:
        sc = sc.replace(planned_per_day=0.0)
    res = simulate(sc)
    events = float(res.trials.unplanned.sum() + res.trials.planned.sum())
    seconds = best_of(lambda: simulate(sc), repeat)
    return seconds, seconds / events * 1e9, res.engine


def general_line(sc: Scenario, base: float, repeat: int) -> str:
    """A window on the general engine: its time, per interruption of the job (unplanned, planned and slow nodes'
    drains), and the ratio of the baseline to it."""
    res = simulate(sc)
    assert res.engine == "general"
    drains = 0.0 if res.slow_drains is None else float(res.slow_drains.sum())
    events = float(res.trials.unplanned.sum() + res.trials.planned.sum()) + drains
    seconds = best_of(lambda: simulate(sc), repeat)
    per = seconds / events * 1e9
    return f"{seconds * 1e3:8.1f} ms, {per:6.1f} ns per interruption, ratio baseline/engine {base / per:6.4f}"


def everything_on() -> Scenario:
    """The general engine's line: every feature a 100,000-GPU plan needs at once."""
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.model.scenario import Training
    from planner_gui.core.theory.profiles import burn_in_profile

    sc = load_preset("h100-100k-inmemory")
    return sc.replace(
        spares=Spares(spare_nodes=89, swap_min=10.0, recovery_mode="continue"),
        rate_profile=burn_in_profile(0.7, 30, sc.days),
        new_cluster=True,
        training=Training(compute_gpu_hours=100_000 * 24.0 * 30.0),
        trials=1000,
    )


PEAK_RSS = """
def peak_rss_mb():
    # VmHWM is this process's own peak. (ru_maxrss is not: a child started by fork + exec inherits
    # its parent's peak.)
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
    except OSError:
        import resource, sys
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 1024
"""

BIG_CHILD = (
    PEAK_RSS
    + """
import time
from planner_gui.core.model.scenario import Scenario
from planner_gui.core.analysis.results import simulate
sc = Scenario(gpus=1_000_000, days=365.0, trials=2000)
t0 = time.perf_counter()
res = simulate(sc)
dt = time.perf_counter() - t0
events = int(res.trials.unplanned.sum() + res.trials.planned.sum())
print(f"{events} {dt} {peak_rss_mb()} {res.goodput.mean()} {res.expected.goodput}")
"""
)

IDLE_CHILD = (
    PEAK_RSS
    + """
from planner_gui.core.model.scenario import Scenario
from planner_gui.core.analysis.results import simulate
simulate(Scenario(gpus=1024, trials=10))
print(peak_rss_mb())
"""
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="also run 1M GPUs x 365 days x 2,000 trials")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    base = baseline_ns(args.repeat)
    print(f"baseline: numpy standard_exponential  {base:6.2f} ns per draw")
    for gpus in (16_384, 100_000, 1_048_576):
        seconds, per = engine_run(gpus, args.repeat)
        print(
            f"engine {gpus:>9,} GPUs x 54 d x 1,000 trials: {seconds * 1e3:8.1f} ms, "
            f"{per:6.2f} ns per interruption, ratio baseline/engine {base / per:5.2f}"
            + ("  (floor 0.5)" if gpus == 100_000 else "")
        )
    for what, changes in (
        ("rate uncertainty on", {"rate_uncertainty": True}),
        ("10-piece rate profile", {"rate_profile": TEN_PIECES}),
    ):
        seconds, per = engine_run(100_000, args.repeat, **changes)
        print(
            f"engine   100,000 GPUs x 54 d x 1,000 trials, {what}: {seconds * 1e3:8.1f} ms, "
            f"{per:6.2f} ns per interruption, ratio baseline/engine {base / per:5.2f}"
        )
    for what, spares in (
        ("spares (89 nodes, swap 10 min)", Spares(spare_nodes=89, swap_min=10)),
        ("spares + continue", Spares(spare_nodes=89, swap_min=10, recovery_mode="continue")),
    ):
        seconds, per = spares_run(100_000, args.repeat, spares)
        print(
            f"spares   100,000 GPUs x 54 d x 1,000 trials, {what}: {seconds * 1e3:8.1f} ms, "
            f"{per:6.2f} ns per interruption, ratio baseline/engine {base / per:5.3f}  (general engine)"
        )
    for what, planned, tiers in (
        ("two tiers, replicas in another domain", True, {}),
        ("two tiers, replicas in the same domain", True, {"fast_placement": "same-domain"}),
        ("two tiers, another domain, no planned interruptions", False, {}),
        ("two tiers, same domain, no planned interruptions", False, {"fast_placement": "same-domain"}),
    ):
        seconds, per, engine = tiers_run(args.repeat, planned=planned, **tiers)
        print(
            f"tiers    100,000 GPUs x 54 d x 1,000 trials, {what} ({engine} engine): {seconds * 1e3:8.1f} ms, "
            f"{per:6.2f} ns per interruption, ratio baseline/engine {base / per:5.3f}  (floor 0.25)"
        )
    same = tiers_run(max(1, args.repeat // 3), fast_placement="same-domain")[0]
    seconds, per, engine = tiers_run(max(1, args.repeat // 3), write_s=5.0, fast_placement="same-domain")
    print(
        f"tiers    100,000 GPUs x 54 d x 1,000 trials, same domain, 5 s persistent stall ({engine} engine): "
        f"{seconds * 1e3:8.1f} ms, {per:6.2f} ns per interruption, {seconds / same:4.1f} x the run without the stall"
    )
    sc = everything_on()
    res = simulate(sc)
    assert res.engine == "general" and res.time_to_train is not None
    window_sc = sc.replace(training=None)
    with_train = best_of(lambda: simulate(sc), max(1, args.repeat // 3))
    line = general_line(window_sc, base, max(1, args.repeat // 3))
    print(
        f"general  100,000 GPUs x 54 d x 1,000 trials, everything on (tiers + pool + continue + burn-in): {line}  "
        f"(floor 0.02); with the 30-day training run too: {with_train * 1e3:8.1f} ms"
    )
    # Issue 24's line: everything on, and every failure mode built since (a restart that grows with the job,
    # fail-slow nodes, detection by cause, checkpoints that fail, correlated failures, node lives, racks: NVLink domains
    # of 72 GPUs, 9 nodes of 8, 2 of them warm spares; silent corruption found a day late, 2,000 checkpoints kept).
    deep = window_sc.with_weibull((("Faulty GPU", 0.7, None), ("GPU HBM3 Memory", 2.0, None))).replace(
        restart_per_log2_gpus_min=0.25,
        slow_rate_per_gpu_hour=2e-6,
        slow_detect_min=60.0,
        detect_by=(("NCCL Watchdog Timeouts", 15.0), ("GPU", 0.1)),
        save_fail_p=0.05,
        restore_fail_p=0.1,
        correlated_rate_per_day=1.0,
        correlated_domains=16,
        nvlink_gpus=72,
        rack_spare_trays=2,
        sdc_detect_hours=24.0,
        retained_checkpoints=2000,
    )
    line = general_line(deep, base, max(1, args.repeat // 3))
    print(
        "general  100,000 GPUs x 54 d x 1,000 trials, everything on + restart growth + fail-slow + detection by "
        f"cause + checkpoints that fail + correlated failures + node lives + racks + silent corruption: {line}"
    )
    print("         (floor 0.015)")
    # Bad nodes are not modelled on racks: the same line with a bad batch (15 %, 5x, 80 % diagnosed, repairs failing
    # 24 %) in place of the racks.
    batch = deep.replace(nvlink_gpus=0, rack_spare_trays=0, bad_share=0.15, diagnosis_p=0.8, repair_fail_p=0.24)
    line = general_line(batch, base, max(1, args.repeat // 3))
    print(f"general  the same with bad nodes in place of racks: {line}  (floor 0.015)")
    xs = gpu_counts(41)
    for trials in (50, 200, 1000):
        sc = Scenario(trials=trials)
        seconds = best_of(lambda sc=sc: sweep_gpus(sc, xs), max(1, args.repeat // 2))
        print(f"sweep 41 GPU counts (1,024 to 1,048,576) x {trials:>5,} trials: {seconds * 1e3:8.1f} ms")
    for gpus in (16_384, 100_000):
        sc = Scenario(gpus=gpus, trials=200)
        seconds = best_of(lambda sc=sc: sweep_interval(sc, interval_points(41)), args.repeat)
        single = best_of(lambda sc=sc: simulate(sc), args.repeat)
        print(
            f"sweep 41 intervals at {gpus:,} GPUs x 200 trials: {seconds * 1e3:8.1f} ms "
            f"(one interval alone: {single * 1e3:.1f} ms; draws are shared across intervals)"
        )
    if args.big:
        idle = float(
            subprocess.run([sys.executable, "-c", IDLE_CHILD], capture_output=True, text=True, check=True).stdout
        )
        out = subprocess.run([sys.executable, "-c", BIG_CHILD], capture_output=True, text=True, check=True)
        events, dt, peak, mc, exact = out.stdout.split()
        print(
            f"big: 1,000,000 GPUs x 365 d x 2,000 trials: {int(events):,} interruptions in {float(dt):.1f} s, "
            f"peak RSS {float(peak):.0f} MB (interpreter + libraries alone: {idle:.0f} MB; floor 400 MB); "
            f"goodput MC {float(mc):.6f} exact {float(exact):.6f}"
        )


if __name__ == "__main__":
    main()
