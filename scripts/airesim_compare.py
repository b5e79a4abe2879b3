"""Compare the spares model with AIReSim (github.com/karthikp-ubc/airesim) on a scenario both express.

Needs ``simpy`` and a copy of AIReSim's ``airesim`` package: ``python scripts/airesim_compare.py DIR`` with
DIR the folder that holds ``airesim/``. docs/spares.md ("Against AIReSim") has the figures.

512 servers of 8 GPUs, each failing once per 1,024 h, one-stage exponential repairs of 4 h, 10 minutes
from failure to computing again, no planned interruptions, no spare pool to preempt; the spares are warm
standbys (AIReSim) or the pool (here); checkpoints are free and every half minute, so almost nothing is lost.
The planner's side is the scenario with its spares section, run as every such scenario is: on the general
engine (planner_gui/core/sim, docs/model.md).
"""

from __future__ import annotations

import statistics
import sys

from planner_gui.core.model import Component, Scenario
from planner_gui.core.results import simulate
from planner_gui.core.spares import Spares, spares_params
from planner_gui.core.spares.exact import p_no_spare

RUNS = 20


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


def planner(spares: int) -> tuple[float, float, float]:
    comp = (Component("Faulty GPU", "GPU", 0.5 / 4096),)
    sc = Scenario(
        gpus=4096,
        days=30.0,
        components=comp,
        planned_per_day=0.0,
        checkpoint_write_s=0.0,
        detect_min=5.0,
        restart_min=5.0,
        checkpoint_interval_min=0.5,
        trials=400,
        seed=1,
        spares=Spares(spare_nodes=spares, repair_hours=(("GPU", 4.0),)),
    )
    res = simulate(sc)
    assert res.engine == "general"
    g = res.goodput
    assert sc.spares is not None
    return float(g.mean()), float(g.std(ddof=1) / len(g) ** 0.5), p_no_spare(spares_params(sc, sc.spares, 0.5))


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


if __name__ == "__main__":
    main()
