"""Regenerate the preset JSON files shipped in planner_gui/core/data/presets/.

Run from the repository root: ``python scripts/make_presets.py``. The tests check that the
shipped files equal what this script writes, so edit presets here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from planner_gui.core.files.scenario_io import dumps
from planner_gui.core.model.scenario import Scenario, Tiers, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.theory.profiles import burn_in_profile

OUT = Path(__file__).resolve().parent.parent / "planner_gui" / "core" / "data" / "presets"


def presets() -> dict[str, Scenario]:
    base = Scenario()
    return {
        # Meta's Llama 3 405B run: 16,384 H100 GPUs, 54 days, Table 5 rates (arXiv 2407.21783).
        "llama3-405b": base,
        # The same hardware and operations at 100,000 GPUs: one interruption every ~30 minutes.
        "h100-100k": base.replace(name="H100 at 100,000 GPUs (Llama 3 per-GPU rates, 54 days)", gpus=100_000),
        # h100-100k with a fast tier as published: 0.59 s stall (ByteCheckpoint, NSDI 2025), restore from
        # CPU memory 13x faster than ByteCheckpoint's 129 s load (Gemini, SOSP 2023), one replica in another
        # rack (a Llama 3 rack: two servers under one switch), a background upload of 51 s (ByteCheckpoint's
        # full save). The 129 s load moves out of the 5 min restart into the persistent restore. A persistent
        # checkpoint uploads the snapshot already in host memory: no blocking write of its own (0 s).
        "h100-100k-inmemory": base.replace(
            name="H100 at 100,000 GPUs, in-memory checkpoints (Gemini, ByteCheckpoint; Llama 3 rates, 54 days)",
            gpus=100_000,
            checkpoint_write_s=0.0,
            restart_min=2.85,
            tiers=Tiers(
                fast_enabled=True,
                fast_interval_min="optimal",
                fast_stall_s=0.59,
                fast_restore_min=0.17,
                fast_replicas=1,
                fast_placement="other-domain",
                nodes_per_domain=2,
                persistent_upload_min=0.85,
                persistent_restore_min=2.15,
            ),
        ),
        # The plan a 100k buyer has, every feature at once (docs/model.md): h100-100k-inmemory's tiers; a pool of
        # 89 hot spare nodes (0.7 % of the job: where 99 % of failures find a spare at Llama 3 rates, M/G/infinity)
        # with a 10-minute swap; continuing on data-parallel replicas of 1,024 GPUs with a 3-minute stall (Meta's
        # FT-HSDP, arXiv 2602.00277); a new cluster's burn-in (Weibull node lives of shape 0.7, characteristic life
        # 30 days: x8.4 the burnt-in rate at first); the Llama 3 rates uncertain by their Table 5 evidence; and
        # Llama 3 405B's training compute (3.8e25 FLOPs at 989 TFLOP/s and 40 % MFU).
        "h100-100k-plan": _plan(base),
        # A million GPUs with the same per-GPU rates: one interruption every ~3 minutes.
        "h100-1m": base.replace(
            name="H100 at 1,048,576 GPUs (Llama 3 per-GPU rates, 54 days)", gpus=1_048_576, trials=200
        ),
        # GB200 NVL72 racks (docs/cli.md, "Racks"), estimates: Llama 3's causes at 2,000 GPU-days between
        # interruptions (the middle of SemiAnalysis's GB200 NVL72 band of 1,000-3,000, 2025), racks of 72 GPUs in
        # trays of 4 with 2 warm spare trays each (clockwork.io), NCCL hangs seen after 15 minutes (Marin's GB200
        # run), no swap time (the warm spare is in the rack), and a pool of 2 or 6 spare racks.
        "gb200-nvl72-16k": _gb200(base, 16_384, 2),
        "gb200-nvl72-100k": _gb200(base, 100_000, 6),
        # Epoch AI's assumption of one failure per 50,000 GPU-hours, Llama 3 mix, at 100,000 GPUs.
        "epoch-100k": base.replace(
            name="100,000 GPUs, one failure per 50,000 GPU-hours (Epoch AI, 2024)", gpus=100_000
        ).with_gpu_mtbf_hours(50_000.0),
        # BLOOM-176B's 3-hour checkpoint cadence on ~400 GPUs, with Llama 3 per-GPU rates.
        "bloom-3h-384": base.replace(
            name="384 GPUs, checkpoint every 3 hours (BLOOM-176B cadence)",
            gpus=384,
            checkpoint_interval_min=180.0,
        ),
    }


#: GPU-days between interruptions of the GB200 NVL72 presets: the middle of SemiAnalysis's band (1,000-3,000).
GB200_GPU_DAYS = 2_000.0


def _gb200(base: Scenario, gpus: int, spare_racks: int) -> Scenario:
    """A GB200 NVL72 preset of ``gpus`` GPUs and ``spare_racks`` spare racks (see :func:`presets`)."""
    scale = 1.0 / (GB200_GPU_DAYS * 24.0) / base.rate_per_gpu_hour
    # (the rates are an estimate, not Llama 3's counts: they carry no evidence)
    comps = tuple(
        dataclasses.replace(c, rate_per_gpu_hour=c.rate_per_gpu_hour * scale, count=None, exposure_gpu_hours=None)
        for c in base.components
    )
    name = f"GB200 NVL72 at {gpus:,} GPUs, {spare_racks} spare racks, 2 warm trays a rack (estimated rates)"
    return base.replace(
        name=name,
        gpus=gpus,
        gpus_per_node=4,
        components=comps,
        nvlink_gpus=72,
        rack_spare_trays=2,
        detect_by=(("NCCL Watchdog Timeouts", 15.0),),
        spares=Spares(spare_nodes=spare_racks * 18, swap_min=0.0),
    )


def _plan(base: Scenario) -> Scenario:
    """The h100-100k-plan preset (see :func:`presets`)."""
    inmemory = base.replace(
        gpus=100_000,
        checkpoint_write_s=0.0,
        restart_min=2.85,
        tiers=Tiers(
            fast_enabled=True,
            fast_interval_min="optimal",
            fast_stall_s=0.59,
            fast_restore_min=0.17,
            fast_replicas=1,
            fast_placement="other-domain",
            nodes_per_domain=2,
            persistent_upload_min=0.85,
            persistent_restore_min=2.15,
        ),
    )
    return inmemory.replace(
        name="H100 at 100,000 GPUs, the whole plan: in-memory tier, 89 spares, continue on replicas, burn-in, "
        "uncertain rates, Llama 3 405B's training",
        spares=Spares(
            spare_nodes=89, swap_min=10.0, recovery_mode="continue", replica_gpus=1024, continue_stall_min=3.0
        ),
        rate_profile=burn_in_profile(0.7, 30.0, 54.0),
        new_cluster=True,
        rate_uncertainty=True,
        training=Training(),
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, sc in presets().items():
        (OUT / f"{name}.json").write_text(dumps(sc), encoding="utf-8")
        print(f"wrote {name}.json")


if __name__ == "__main__":
    main()
