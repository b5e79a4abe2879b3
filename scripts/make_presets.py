"""Regenerate the preset JSON files shipped in planner_gui/core/data/presets/.

Run from the repository root: ``python scripts/make_presets.py``. The tests check that the
shipped files equal what this script writes, so edit presets here.
"""

from __future__ import annotations

from pathlib import Path

from planner_gui.core.model import Scenario, Tiers
from planner_gui.core.scenario_io import dumps

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
        # A million GPUs with the same per-GPU rates: one interruption every ~3 minutes.
        "h100-1m": base.replace(
            name="H100 at 1,048,576 GPUs (Llama 3 per-GPU rates, 54 days)", gpus=1_048_576, trials=200
        ),
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


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, sc in presets().items():
        (OUT / f"{name}.json").write_text(dumps(sc), encoding="utf-8")
        print(f"wrote {name}.json")


if __name__ == "__main__":
    main()
