"""Compare the spares model and bad nodes with AIReSim (github.com/karthikp-ubc/airesim) on scenarios both express.

Needs ``simpy`` and a copy of AIReSim's ``airesim`` package: ``python scripts/airesim_compare.py DIR`` with
DIR the folder that holds ``airesim/``. docs/spares.md ("Against AIReSim") has the figures.

First, 512 servers of 8 GPUs, each failing once per 1,024 h, one-stage exponential repairs of 4 h, 10 minutes
from failure to computing again, no planned interruptions, no spare pool to preempt; the spares are warm
standbys (AIReSim) or the pool (here); checkpoints are free and every half minute, so almost nothing is lost.
The planner's side is the scenario with its spares section, run as every such scenario is: on the general
engine (planner_gui/core/sim, docs/model.md).

Then AIReSim's default case (its ``Params()``: 4,096 servers for 256 days of compute, 16 warm standbys, a working
pool of 4,160 and a spare pool of 200, 15 % bad servers failing at their random rate plus 5x it, a 20-minute recovery,
an automated repair of 2 h escalated 80 % of the time to a manual one of 2 days, failing 40 % and 20 %), with and
without its bad servers and with a fifth of failures blamed on the wrong server; here the same servers as nodes of 8
GPUs, bad nodes at 6x, repairs failing 24 % (0.2 x 0.4 + 0.8 x 0.2) and exponential of AIReSim's mean (2 + 0.8 x 48
h), 264 hot spares (every server beyond the job's), free checkpoints every half minute, and the time to train the
same compute: ETTR is the compute's days over the time to train's.
"""

from __future__ import annotations

import statistics
import sys

from planner_gui.core.analysis.results import simulate
from planner_gui.core.model.scenario import Component, Scenario
from planner_gui.core.model.spares import Spares, spares_params
from planner_gui.core.theory.spares import p_no_spare

RUNS = 20
#: AIReSim's default case is about 16 s a run: fewer of them.
DEFAULT_RUNS = 8


def airesim(spares: int, extra: int) -> tuple[float, float]:
    from airesim.params import Params
    from airesim.simulator import Simulator

    p = Params(
        job_size=512,
        warm_standbys=spares,
        working_pool_size=512 + spares + extra,
        spare_pool_size=0,
        random_failure_rate=1 / (1024 * 60),
        systematic_failure_fraction=0.0,
        recovery_time=10.0,
        host_selection_time=0.0,
        auto_repair_time=240.0,
        prob_auto_to_manual=0.0,
        auto_repair_fail_prob=0.0,
        manual_repair_fail_prob=0.0,
        job_length=30 * 24 * 60,
        preemption_wait_time=0.0,
    )
    ettr = [p.job_length / Simulator(p, seed=s).run().total_training_time for s in range(RUNS)]
    return statistics.mean(ettr), statistics.stdev(ettr) / RUNS**0.5


def _free_checkpoints(gpus: int, gpn: int, per_node_day: float, recovery_min: float, **changes: object) -> Scenario:
    """AIReSim's terms here: one cause taking a node at ``per_node_day`` failures a node a day, detection + restart of
    ``recovery_min``, no planned interruptions, free checkpoints every half minute (almost nothing lost)."""
    return Scenario(
        gpus=gpus,
        gpus_per_node=gpn,
        days=30.0,
        components=(Component("Server failure", "GPU", per_node_day / 24.0 / gpn),),
        planned_per_day=0.0,
        checkpoint_write_s=0.0,
        detect_min=recovery_min / 2.0,
        restart_min=recovery_min / 2.0,
        checkpoint_interval_min=0.5,
    ).replace(**changes)


def planner(spares: int) -> tuple[float, float, float]:
    sc = _free_checkpoints(
        4096,
        8,
        24.0 / 1024.0,
        10.0,
        trials=400,
        seed=1,
        spares=Spares(spare_nodes=spares, repair_hours=(("GPU", 4.0),)),
    )
    res = simulate(sc)
    assert res.engine == "general"
    g = res.goodput
    assert sc.spares is not None
    return float(g.mean()), float(g.std(ddof=1) / len(g) ** 0.5), p_no_spare(spares_params(sc, sc.spares, 0.5))


def airesim_default(bad: bool, wrong: float) -> dict[str, float]:
    """AIReSim's default case (its own ``Params()``), with or without its bad servers, a share ``wrong`` of the
    failures blamed on another server: the mean ETTR, its standard error, and the mean failures and failed repairs."""
    from airesim.params import Params
    from airesim.simulator import Simulator

    p = Params(diagnosis_uncertainty=wrong)
    if not bad:
        p = p.with_overrides(systematic_failure_fraction=0.0)
    runs = [Simulator(p, seed=s).run() for s in range(DEFAULT_RUNS)]
    ettr = [r.effective_training_ratio for r in runs]
    return {
        "ettr": statistics.mean(ettr),
        "se": statistics.stdev(ettr) / DEFAULT_RUNS**0.5,
        "failures": statistics.mean(r.total_failures for r in runs),
        "systematic": statistics.mean(r.systematic_failures for r in runs),
        "days": statistics.mean(r.training_time_hours for r in runs) / 24.0,
    }


#: AIReSim's default case in this model's terms (see the module docstring).
SERVERS, GPN, WORK_DAYS = 4096, 8, 256.0
RANDOM_PER_SERVER_DAY = 0.01
REPAIR_MEAN_HOURS = 2.0 + 0.8 * 48.0
REPAIR_FAIL = 0.2 * 0.4 + 0.8 * 0.2


def planner_default(bad: bool, wrong: float, trials: int = 100) -> dict[str, float]:
    """The same case here: ETTR (the compute's days over the time to train's), its standard error, and the mean
    days to train."""
    from planner_gui.core.model.scenario import Training

    gpus = SERVERS * GPN
    sc = _free_checkpoints(
        gpus,
        GPN,
        RANDOM_PER_SERVER_DAY,
        20.0,
        trials=trials,
        seed=3,
        spares=Spares(spare_nodes=4160 + 200 - SERVERS, repair_hours=(("GPU", REPAIR_MEAN_HOURS),)),
        training=Training(compute_gpu_hours=gpus * WORK_DAYS * 24.0),
        bad_share=0.15 if bad else 0.0,
        bad_multiplier=6.0,
        diagnosis_p=1.0 - wrong,
        repair_fail_p=REPAIR_FAIL if bad else 0.0,
    )
    ttt = simulate(sc).time_to_train
    assert ttt is not None
    ettr = WORK_DAYS * 24.0 / ttt.hours
    return {
        "ettr": float(ettr.mean()),
        "se": float(ettr.std(ddof=1) / len(ettr) ** 0.5),
        "days": float(ttt.hours.mean() / 24.0),
    }


def main() -> None:
    if len(sys.argv) > 1:
        sys.path.insert(0, sys.argv[1])
    for spares, extra, here in ((2, 0, 2), (4, 0, 4), (4, 8, 12)):
        a, a_se = airesim(spares, extra)
        g, g_se, miss = planner(here)
        print(
            f"standbys {spares} (+{extra} in the working pool) vs {here} spares: AIReSim ETTR {a:.4f} +/- {a_se:.4f}, "
            f"planner goodput {g:.4f} +/- {g_se:.4f}, failures finding no spare {miss:.3f}"
        )
    print("AIReSim's default case (4,096 servers, 256 days of compute):")
    for label, bad, wrong in (
        ("no bad servers", False, 0.0),
        ("15 % bad", True, 0.0),
        ("15 % bad, 20 % blamed wrong", True, 0.2),
    ):
        a = airesim_default(bad, wrong)
        g = planner_default(bad, wrong)
        print(
            f"  {label}: AIReSim ETTR {a['ettr']:.4f} +/- {a['se']:.4f} ({a['days']:.1f} days, {a['failures']:,.0f} "
            f"failures, {a['systematic']:,.0f} systematic); planner ETTR {g['ettr']:.4f} +/- {g['se']:.4f} "
            f"({g['days']:.1f} days)"
        )


if __name__ == "__main__":
    main()
