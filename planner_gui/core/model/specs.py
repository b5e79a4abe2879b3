"""One table of the scenario's numeric inputs: what each is called, its unit, the values it may take,
the range its slider spans, and where its default comes from.

Validation (:mod:`.scenario_io`), the window's controls and its help all read this table, so a range
or a label is written once.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .scenario import DEFAULT_NOTES

__all__ = [
    "GPU_RANGE",
    "LIMITS",
    "MAX_INTERVAL_MIN",
    "MAX_PROFILE_PIECES",
    "MAX_TOTAL_EVENTS",
    "MAX_TOTAL_PIECES",
    "MIN_INTERVAL_MIN",
    "SECTION_LABELS",
    "SPECS",
    "InputSpec",
    "clamp_interval",
    "labelled",
]

#: Bounds on the checkpoint interval, minutes ('optimal' is clamped to them): 0.6 s to a year.
MIN_INTERVAL_MIN = 0.01
MAX_INTERVAL_MIN = 525_600.0


def clamp_interval(minutes: float) -> float:
    """A checkpoint interval (minutes) within the allowed ones; an infinite or undefined one (nothing fails, so
    nothing to checkpoint against) is the longest."""
    if not math.isfinite(minutes):
        return MAX_INTERVAL_MIN
    return float(min(max(minutes, MIN_INTERVAL_MIN), MAX_INTERVAL_MIN))


#: The GPU counts the GPU slider and the GPU sweeps span (the box takes up to the limit below).
GPU_RANGE = (1024, 1_048_576)
#: The most interruptions a run may simulate, summed over its trials (a sweep counts its whole work).
MAX_TOTAL_EVENTS = 4_000_000_000
#: The most pieces a rate profile may hold.
MAX_PROFILE_PIECES = 1000
#: The most (trial, profile piece) pairs a run may simulate: each is at least one row of the engine.
MAX_TOTAL_PIECES = 4_000_000


@dataclass(frozen=True)
class InputSpec:
    """One numeric input of a scenario.

    ``lo``/``hi`` bound the values a file, a flag or a box may hold (inclusive); ``slider`` is the usual
    range a log slider spans (None: no slider); ``decimals`` what a box shows.
    """

    field: str
    label: str
    unit: str
    lo: float
    hi: float
    integer: bool = False
    slider: tuple[float, float] | None = None
    decimals: int = 2
    help: str = ""

    @property
    def note(self) -> str:
        """Where the default comes from (empty for inputs without a default of their own)."""
        return DEFAULT_NOTES.get(self.field, "")


SPECS: dict[str, InputSpec] = {
    s.field: s
    for s in (
        InputSpec(
            "gpus",
            "GPUs",
            "",
            1,
            10_000_000,
            True,
            GPU_RANGE,
            0,
            "GPUs in the training job (the slider spans 1,024 to 1,048,576; type up to 10 million).",
        ),
        InputSpec(
            "gpus_per_node",
            "GPUs per node",
            "(a tray on NVL72: 4)",
            1,
            1024,
            True,
            slider=(1, 16),
            decimals=0,
            help="GPUs in one node, the unit a failure of scope node takes and a spare replaces (8 in an HGX H100 "
            "server; 4 in a GB200 compute tray).",
        ),
        InputSpec("days", "Run length", "days", 0.01, 3650, slider=(1, 3650), help="Wall-clock window simulated."),
        InputSpec(
            "planned_per_day",
            "Planned interruptions",
            "per day",
            0,
            1000,
            slider=(0.01, 100),
            decimals=3,
            help="Planned interruptions per day: the job is drained first (no work lost) but each costs "
            "the restart time.",
        ),
        InputSpec(
            "checkpoint_interval_min",
            "Interval (compute between checkpoints)",
            "min",
            MIN_INTERVAL_MIN,
            MAX_INTERVAL_MIN,
            slider=(1, 1440),
            help="Compute time between checkpoints (1 minute to 24 hours on the slider).",
        ),
        InputSpec(
            "checkpoint_write_s",
            "Blocking write",
            "s",
            0,
            86_400,
            slider=(0.1, 1800),
            help="Time training stalls to write each checkpoint (0.1 s to 30 min on the slider).",
        ),
        InputSpec(
            "detect_min",
            "Detection",
            "min",
            0,
            10_080,
            slider=(0.1, 1440),
            help="From an unplanned interruption to noticing it.",
        ),
        InputSpec(
            "restart_min",
            "Restart",
            "min",
            0,
            10_080,
            slider=(0.1, 1440),
            help="Reschedule, initialise and load the checkpoint (with Restart growth on: at 16,384 GPUs).",
        ),
        InputSpec(
            "restart_per_log2_gpus_min",
            "Restart growth",
            "min per doubling",
            0,
            1440,
            slider=(0.01, 60),
            decimals=3,
            help="The restart at N GPUs is Restart + this x log2(N / 16,384).",
        ),
        InputSpec(
            "slow_rate_per_gpu_hour",
            "Fail-slow rate",
            "per GPU-hour",
            0,
            1.0,
            slider=(1e-8, 1e-4),
            decimals=10,
            help="How often a node turns slow (a straggler): while one is slow the whole synchronous job runs at the "
            "speed below, until the node is drained with a planned restart.",
        ),
        InputSpec(
            "slow_factor",
            "Speed while slow",
            "",
            0.0,
            1.0,
            slider=(0.01, 1.0),
            decimals=2,
            help="The job's speed while a node is slow, as a share of full speed (0-1).",
        ),
        InputSpec(
            "slow_detect_min",
            "Slow-node detection",
            "min",
            0,
            10_080,
            slider=(0.1, 1440),
            help="From a node turning slow to its drain (a planned restart without it).",
        ),
        InputSpec(
            "save_fail_p",
            "Failed saves",
            "share, 0-0.99",
            0.0,
            0.99,
            slider=(0.001, 0.9),
            decimals=3,
            help="The chance that a checkpoint save fails (a snapshot, or a persistent point's copy to storage): "
            "the checkpoint before it stays the one a failure returns to, and the next save is the next chance.",
        ),
        InputSpec(
            "restore_fail_p",
            "Failed fast restores",
            "share, 0-1",
            0.0,
            1.0,
            slider=(0.001, 1.0),
            decimals=3,
            help="The chance that a restore from the in-memory (fast) tier fails its validation: the job then "
            "restores from persistent storage, after the fast restore's time was spent.",
        ),
        InputSpec(
            "sdc_detect_hours",
            "Corruption found after",
            "h (0: at once)",
            0.0,
            8766.0,
            slider=(0.1, 720.0),
            decimals=2,
            help="Mean hours from a silent data corruption's start to its detection (exponential; 0: found at once, "
            "as any failure). Checkpoints taken since it started are poisoned: the job rolls back to the last clean "
            "one.",
        ),
        InputSpec(
            "retained_checkpoints",
            "Checkpoints kept",
            "persistent (0: all)",
            0,
            100_000,
            True,
            slider=(1, 10_000),
            decimals=0,
            help="Persistent checkpoints kept in storage, the last K saves (0: every one). A corruption found later "
            "than the last K saves has no clean checkpoint left: the run starts over.",
        ),
        InputSpec(
            "bad_share",
            "Bad nodes",
            "share at start, 0-1",
            0.0,
            1.0,
            slider=(0.001, 1.0),
            decimals=3,
            help="The share of the job's nodes, and of the spare pool's, that are bad at the job's start (a bad "
            "batch): a bad node fails more often, by the multiplier below, until a repair fixes it.",
        ),
        InputSpec(
            "bad_multiplier",
            "Bad node's failures",
            "x a good node's",
            1.0,
            100.0,
            slider=(1.0, 50.0),
            decimals=2,
            help="How many times as often a bad node fails as a good one, by every cause that takes a node.",
        ),
        InputSpec(
            "diagnosis_p",
            "Right node pulled",
            "share, 0-1",
            0.0,
            1.0,
            slider=(0.01, 1.0),
            decimals=3,
            help="The chance that a node failure pulls the node that failed; otherwise a healthy node is pulled and "
            "repaired for nothing, and a bad node that failed stays in the job.",
        ),
        InputSpec(
            "repair_fail_p",
            "Repairs that fail",
            "share, 0-1",
            0.0,
            1.0,
            slider=(0.001, 1.0),
            decimals=3,
            help="The chance that a bad node's repair leaves it bad: with a finite pool it comes back to the pool "
            "still bad.",
        ),
        InputSpec(
            "correlated_rate_per_day",
            "Correlated failures",
            "per day",
            0,
            1000,
            slider=(0.001, 10.0),
            decimals=4,
            help="Events per day of the whole job that take several failure domains at once (a power feed, a PDU "
            "row, a cooling loop): every node taken is lost with its memory, so the job restores from storage.",
        ),
        InputSpec(
            "correlated_domains",
            "Domains per event",
            "domains",
            1,
            1_000_000,
            True,
            slider=(1, 1024),
            decimals=0,
            help="The failure domains one correlated event takes (never more nodes than the job's).",
        ),
        InputSpec(
            "correlated_repair_hours",
            "Back after",
            "hours",
            0,
            8760,
            slider=(0.1, 720),
            decimals=2,
            help="Mean hours until the nodes a correlated event took are back in the pool (exponential, or "
            "lognormal with the repairs' sigma).",
        ),
        InputSpec(
            "nvlink_gpus",
            "NVLink domain",
            "GPUs (0: none)",
            0,
            4096,
            True,
            slider=(4, 576),
            decimals=0,
            help="GPUs in one rack-scale NVLink domain (72 on GB200/GB300 NVL72; 0: none): a tray that fails stops "
            "its whole rack's part of the job until a warm spare tray of the rack, or a spare rack, takes its place.",
        ),
        InputSpec(
            "rack_spare_trays",
            "Warm spare trays",
            "per rack",
            0,
            1024,
            True,
            slider=(1, 16),
            decimals=0,
            help="Trays (nodes) of each rack held out of the job as warm spares (2 of 18 on an NVL72 rack): a failed "
            "tray is swapped within its rack while one is free; otherwise the rack moves to a spare rack of the pool.",
        ),
        InputSpec(
            "rack_move_min",
            "Rack move",
            "min more per move",
            0,
            10_080,
            slider=(0.1, 1440),
            help="Minutes a failure that moves its rack to a spare rack adds to the swap (setting the job's slice up "
            "on another rack); a failure a warm spare tray covers pays the swap alone.",
        ),
        InputSpec("trials", "Trials", "", 1, 100_000, True, decimals=0),
        InputSpec("seed", "Seed", "", 0, 2**63 - 1, True, decimals=0),
        InputSpec("gpu_hour_cost_usd", "Price per GPU-hour", "$", 0, 10_000, help="Price per GPU-hour."),
        InputSpec("rate_per_gpu_hour", "Failure rate", "per GPU-hour", 0, 1.0),
        InputSpec(
            "train_flops",
            "Training compute",
            "FLOPs",
            1e15,
            1e30,
            help="Total training compute (Llama 3 405B: 3.8e25).",
        ),
        InputSpec("peak_tflops", "Peak per GPU", "TFLOP/s", 1, 100_000, help="Peak dense throughput of one GPU."),
        InputSpec("mfu", "Utilisation (MFU)", "", 0.01, 1.0, help="Model FLOPs utilisation: achieved / peak."),
        InputSpec(
            "compute_gpu_hours",
            "Compute",
            "GPU-hours",
            1,
            1e12,
            help="GPU-hours of pure compute the run needs (at 100 % goodput).",
        ),
        InputSpec(
            "checkpoint_gb_per_gpu",
            "Checkpoint per GPU",
            "GB",
            0,
            10_000,
            help="What each GPU writes per checkpoint (Llama 3: 1 MB to 4 GB).",
        ),
        InputSpec(
            "storage_gb_s",
            "Storage bandwidth",
            "GB/s",
            0.001,
            10_000_000,
            help="Sustained write bandwidth of the whole storage (Llama 3: 2,000 GB/s, 7,000 at peak). With the "
            "checkpoint size it sets the blocking write: GPUs x size / bandwidth.",
        ),
        InputSpec(
            "count",
            "Interruptions seen",
            "",
            0,
            1e9,
            decimals=2,
            help="Interruptions of this component in the data its rate came from (with the exposure). A fit with "
            "a prior counts the prior's weighted interruptions too, so the count need not be whole.",
        ),
        InputSpec(
            "exposure_gpu_hours",
            "Exposure",
            "GPU-hours",
            1e-3,
            1e15,
            help="GPU-hours watched while the interruptions were counted (Llama 3: 16,384 x 54 x 24).",
        ),
        InputSpec(
            "day",
            "Day",
            "days",
            0,
            3650,
            help="Day of the window (0: its start) from which a rate multiplier holds.",
        ),
        InputSpec(
            "multiplier",
            "Rate multiplier",
            "",
            0,
            10_000,
            decimals=3,
            help="Multiplies every unplanned rate from its day to the next.",
        ),
        InputSpec(
            "fast_interval_min",
            "Fast interval (compute between snapshots)",
            "min",
            MIN_INTERVAL_MIN,
            MAX_INTERVAL_MIN,
            slider=(0.1, 240),
            help="Compute time between in-memory snapshots, or 'optimal' (6 s to 4 hours on the slider).",
        ),
        InputSpec(
            "fast_stall_s",
            "Fast stall",
            "s",
            0,
            86_400,
            slider=(0.01, 600),
            help="Time training stalls for each in-memory snapshot (copy to host memory and to the replicas).",
        ),
        InputSpec(
            "fast_restore_min",
            "Fast restore",
            "min",
            0,
            10_080,
            slider=(0.01, 120),
            help="Time to load the in-memory snapshot after detection and restart.",
        ),
        InputSpec(
            "fast_replicas",
            "Replicas",
            "",
            0,
            64,
            True,
            decimals=0,
            help="Peer nodes that hold a copy of each node's in-memory snapshot (0: only its own memory).",
        ),
        InputSpec(
            "nodes_per_domain",
            "Nodes per failure domain",
            "",
            1,
            1_000_000,
            True,
            decimals=0,
            help="Nodes lost together by a domain failure: a rack, a leaf switch, a power feed (1: a node). It sets "
            "whether the fast tier's replicas survive one and, with a finite spare pool, the nodes it sends to repair.",
        ),
        InputSpec(
            "persistent_upload_min",
            "Background upload",
            "min",
            0,
            10_080,
            slider=(0.01, 240),
            help="Wall-clock time to upload a checkpoint to persistent storage while training goes on; it counts "
            "only once finished (0: it counts when the blocking write ends).",
        ),
        InputSpec(
            "persistent_restore_min",
            "Persistent restore",
            "min",
            0,
            10_080,
            slider=(0.01, 240),
            help="Time to load a checkpoint from persistent storage after detection and restart (0: in the "
            "restart time).",
        ),
        InputSpec(
            "spare_nodes",
            "Spare nodes",
            "",
            0,
            10_000_000,
            True,
            slider=(1, 10_000),
            decimals=0,
            help="Hot spare nodes beside the job's own (none set: unlimited, a failed node is replaced at once). "
            "BLOOM kept 4 of 52 (7.7 %); NCSA's Delta study recommends 5-20 % over-provisioning.",
        ),
        InputSpec(
            "swap_min",
            "Swap",
            "min",
            0,
            100_000,
            slider=(0.1, 1440),
            help="Minutes added to a restart that brings spare nodes in.",
        ),
        InputSpec(
            "repair_hours",
            "Repair",
            "h",
            0,
            100_000,
            slider=(0.1, 2000),
            help="Mean hours a node lost to this category stays in repair before it rejoins the pool.",
        ),
        InputSpec(
            "repair_sigma",
            "Repair sigma",
            "",
            0,
            4,
            help="Sigma of the log of lognormal repair times (none: exponential repair times).",
        ),
        InputSpec(
            "min_gpus",
            "Shrink to",
            "GPUs",
            1,
            10_000_000,
            True,
            decimals=0,
            help="Without enough spares, run smaller down to this many GPUs instead of waiting.",
        ),
        InputSpec(
            "replica_gpus",
            "Replica",
            "GPUs",
            1,
            10_000_000,
            True,
            slider=(8, 131_072),
            decimals=0,
            help="GPUs per data-parallel replica in continue mode (a whole number of nodes).",
        ),
        InputSpec(
            "continue_stall_min",
            "Continue stall",
            "min",
            0,
            10_000,
            slider=(0.01, 120),
            help="Stall of the whole job when one replica fails in continue mode (FT-HSDP: about 3 min).",
        ),
        InputSpec(
            "max_replicas_lost",
            "Replicas lost at most",
            "",
            0,
            1_000_000,
            True,
            decimals=0,
            help="The most replicas one failure may take out and the job continue; more restart it.",
        ),
        InputSpec(
            "node_price_usd",
            "Spare node price",
            "$",
            0,
            1e9,
            slider=(1e4, 2e6),
            decimals=0,
            help="What one spare node costs to buy; the pool then costs its price over the years below for every hour "
            "it is held (empty: the pool is priced as its GPU-hours at the price per GPU-hour).",
        ),
        InputSpec(
            "depreciation_years",
            "Written off over",
            "years",
            0.25,
            30,
            slider=(1, 10),
            decimals=1,
            help="Years a bought spare node is written off over, straight line (large operators: four to six).",
        ),
        InputSpec(
            "rental_usd_per_node_hour",
            "Spare node rent",
            "$/h",
            0,
            1e6,
            slider=(0.5, 500),
            decimals=2,
            help="What one rented spare node costs per hour (with a price too, both are paid).",
        ),
        InputSpec(
            "burn_in_shape",
            "Burn-in shape",
            "",
            0.05,
            1.0,
            decimals=2,
            help="Weibull shape of a node's time to failure: below 1, new nodes fail more often (1: no burn-in).",
        ),
        InputSpec(
            "burn_in_life_days",
            "Characteristic life",
            "days",
            0.001,
            100_000,
            help="Weibull characteristic life of a node, days: how slowly the burn-in fades.",
        ),
    )
}

#: (low, high, integer) for each numeric field, inclusive: what validation checks.
LIMITS: dict[str, tuple[float, float, bool]] = {f: (s.lo, s.hi, s.integer) for f, s in SPECS.items()}


#: The window's name of each section of a scenario file, for a message about a field without a control of its
#: own there (the recovery mode is a list in "Spares and repairs").
SECTION_LABELS = {
    "spares": "Spares and repairs",
    "tiers": "Recovery tiers",
    "training": "Training run",
    "storage": "Checkpoint storage",
    "rate_uncertainty": "Rate uncertainty",
    "rate_profile": "Rates over the run",
    "components": "Failure rates",
}


def labelled(message: str) -> str:
    """A message that starts with a scenario field's path ("spares.min_gpus: ...", "trials: ...") with the
    path said as the window labels the input ("Shrink to: ..."); any other message as it is."""
    head, sep, rest = message.partition(": ")
    if not sep or not re.fullmatch(r"[a-z_]+(\.[a-z_]+)*", head):
        return message
    spec = SPECS.get(head.rsplit(".", 1)[-1])
    if spec is not None:
        return f"{spec.label}: {rest}"
    section = SECTION_LABELS.get(head.split(".", 1)[0])
    return f"{section}: {rest}" if section is not None else message
