"""The model's description and the sources of its defaults, as HTML text without Qt.

The report (:mod:`.document`) shows it; the window's Help (``planner_gui/ui/docs.py``) states the same
model. The markup is the small subset that both a browser and Qt's rich text render: ``p``, ``ul``,
``li``, ``b``, ``i``, ``sup`` and character entities.
"""

from __future__ import annotations

from html import escape

from ..core.model.scenario import DEFAULT_NOTES
from ..core.model.specs import SPECS

__all__ = ["DEFAULT_FIELDS", "MODEL_HTML", "SOURCES", "defaults_html", "input_label", "sources_html"]

#: The published sources behind the defaults and the formulas: (source, what it gives).
SOURCES: tuple[tuple[str, str], ...] = (
    (
        "Meta, 'The Llama 3 Herd of Models', arXiv 2407.21783 (2024), sec. 3.3.4 and Table 5",
        "419 unexpected and 47 planned interruptions in 54 days on up to 16,384 H100 GPUs; effective "
        "training time above 90%. The component rates are Table 5's counts (the printed 30.1% for faulty GPUs "
        "is a misprint: 148/419 = 35.3%).",
    ),
    (
        "Jiang et al., 'MegaScale', NSDI 2024, arXiv 2402.15627",
        "Restart initialisation under 30 s at more than 10,000 GPUs; detection and diagnosis under 10 minutes; "
        "checkpoint first stage to host memory in several seconds.",
    ),
    (
        "Wan et al., 'ByteCheckpoint', NSDI 2025, arXiv 2407.20143",
        "405B model on 8,960 GPUs: 0.59 s training stall, 51 s full save, 129 s load.",
    ),
    ("Epoch AI, 'Hardware failures won't limit AI scaling' (2024)", "One H100 failure per 50,000 GPU-hours."),
    ("BigScience BLOOM-176B training notes", "Checkpoints every 3 hours on about 400 A100 GPUs."),
    (
        "NVIDIA GB200 NVL72 product documentation",
        "72 GPUs in one NVLink domain: 18 compute trays of 4 GPUs, the tray the replaceable unit (the Racks inputs).",
    ),
    (
        "SemiAnalysis, 'H100 vs GB200 NVL72 training benchmarks' (2025; paywalled, read through secondary digests)",
        "Mean time between interruptions per GPU: H100 2,000-5,000 GPU-days, GB200 NVL72 1,000-3,000; blast radius "
        "72 GPUs against 8. The GB200 presets take the middle, 2,000 GPU-days: an estimate.",
    ),
    (
        "Lablup, 504 B200 GPUs for 55 days, huggingface.co/papers/2605.09370",
        "10 GPU failures where Llama 3's GPU rate predicts 8.4: Blackwell GPUs at about Llama 3's rate, for scale.",
    ),
    (
        "Dixit et al., 'Silent Data Corruptions at Scale', arXiv 2102.11245 (Meta, 2021); Hochschild et al., 'Cores "
        "that don't count', HotOS 2021 (Google)",
        "Silent data corruption from defective processors is seen at fleet scale and often surfaces long after it "
        "starts. No published distribution of the delay for training jobs: the delay is a planner's estimate.",
    ),
    (
        "AIReSim, arXiv 2603.07041 (DSN 2026), github.com/karthikp-ubc/airesim",
        "Bad servers (15 % at 5x the random rate in systematic failures), failed diagnoses and two-stage repairs that "
        "can fail (auto 40 %, manual 20 %, 80 % escalated): the bad-node inputs' illustrative values.",
    ),
    (
        "clockwork.io, 'Common approaches to fault-tolerant AI training' (a secondary source)",
        "Operators of NVL72 racks hold 8 of 72 GPUs (2 trays) as warm spares: the GB200 presets' warm spare trays.",
    ),
    ("Young, CACM 17(9), 1974", "Optimal interval sqrt(2 C M)."),
    ("Daly, FGCS 22(3), 2006", "Higher-order optimal interval and exact expected wall time."),
)

#: The inputs a planner sets, in the window's order (the failure rates between planned and interval).
DEFAULT_FIELDS: tuple[str, ...] = (
    "gpus",
    "days",
    "planned_per_day",
    "components",
    "checkpoint_interval_min",
    "checkpoint_write_s",
    "detect_min",
    "restart_min",
    "restart_per_log2_gpus_min",
    "slow_rate_per_gpu_hour",
    "slow_factor",
    "slow_detect_min",
    "save_fail_p",
    "restore_fail_p",
    "correlated_rate_per_day",
    "correlated_domains",
    "correlated_repair_hours",
    "nvlink_gpus",
    "rack_spare_trays",
    "rack_move_min",
    "sdc_detect_hours",
    "retained_checkpoints",
    "bad_share",
    "bad_multiplier",
    "diagnosis_p",
    "repair_fail_p",
    "trials",
    "seed",
    "gpu_hour_cost_usd",
)


def input_label(field: str) -> str:
    """An input's label, as the window's controls show it."""
    return "Failure rates" if field == "components" else SPECS[field].label


#: What the model assumes and how its results are computed (no heading: the caller adds its own).
MODEL_HTML = """\
<p>A synchronous training job runs on <i>N</i> GPUs for a wall-clock window. The window is a snapshot of a
long job in its steady state, as Meta's 54-day Llama 3 snapshot was.</p>
<ul>
<li><b>Unplanned interruptions</b> come from components. Each has a rate per GPU-hour; the job's rate is
<i>N</i> times their sum, and its mean time between interruptions is <i>M</i> = 1 / rate. They arrive as a
Poisson process at any time: while computing, while writing a checkpoint, while detecting or restarting.</li>
<li><b>Planned interruptions</b> arrive at a rate per day. The job is drained first, so they lose no work;
each costs the restart time.</li>
<li><b>Checkpointing</b>: the job computes for the interval &tau;, then writes a blocking checkpoint for
<i>C</i>, and repeats. An unplanned interruption loses the work since the last completed checkpoint.</li>
<li><b>Recovery</b>: after an unplanned interruption the job is down for <i>R</i> = detection + restart;
after a planned one, for the restart time (with detection by cause, each cause noticed after its own time).
An interruption during a downtime starts a new one. With
Restart growth on, the restart is the one at the job's size: the restart at 16,384 GPUs plus the growth for
each doubling of the GPU count from there.</li>
<li><b>Fail-slow nodes</b> (when their rate is above 0): a node turns slow at a rate per GPU-hour; while any
node is slow the whole synchronous job computes at the slow speed, until the node is drained with a planned
restart the slow-node detection after it turned slow. Their hours are those the slow pace withheld.</li>
<li><b>Checkpoints that fail</b> (when their chances are above 0): a save fails at its chance and the checkpoint
before it stays the one an interruption returns to, so more work is lost; a restore from memory that fails its
validation is followed by a restore from storage, back to the last persistent checkpoint.</li>
<li><b>Bad nodes</b> (when their share is above 0): a share of the job's nodes and the pool's is bad at the
job's start and fails by every cause that takes one node the multiplier's times as often; a failure pulls the
failed node at the chance of a right diagnosis, else a healthy one (the bad one stays and fails again); a bad
node's repair may leave it bad, and the node that takes a pulled one's place is bad with the pool's share.</li>
<li><b>Silent data corruption found late</b> (when its delay is above 0): a failure of the Silent Data
Corruption component starts a corruption that the job does not see; it is found an exponential delay later, a
failure like any other then. Every checkpoint taken since it started is poisoned, so the job rolls back to the
newest clean one the persistent tier still keeps (the last <i>K</i> saves); with none kept the run starts over.
Their hours are the work those rollbacks took back, a label of its own (the lost work keeps the rest).</li>
<li><b>Correlated failures</b> (when their rate is above 0): events at a rate per day of the whole job take
several failure domains at once (a power feed, a PDU row, a cooling loop); every node they take is lost with its
memory, so the job restores from storage, and the nodes are away together until their repair ends. Their rate
adds to the job's, and so to 1 / <i>M</i>.</li>
<li><b>Node lives</b> (when a component has a Weibull shape other than 1): each of the job's nodes fails of that
component after a Weibull life, renewed at each failure, so infant mortality (a shape below 1) and wear-out (above 1)
belong to the nodes. The component's rate is the lives' long-run rate; on a new cluster, whose nodes are all new at
the start, the first weeks fail more (or less) than that, as the renewal function of the lives says.</li>
<li><b>Goodput</b> = compute time never rolled back / wall-clock window (Meta's "effective training
time").</li>
</ul>
<p>Every interruption restarts the process, so renewal-reward theory gives the exact expected goodput.
Without planned interruptions it is Daly's (2006) expression
&tau; / (<i>M</i> e<sup><i>R</i>/<i>M</i></sup> (e<sup>(&tau;+<i>C</i>)/<i>M</i></sup> &minus; 1)).
The plots show it as a dashed line beside the Monte Carlo mean; the two agree within sampling error
(the test suite checks this from 1,024 to 1,000,000 GPUs).</p>
<p><b>Optimal intervals</b>: Young (1974) &tau;* = &radic;(2<i>CM</i>); Daly (2006)
&tau;* = &radic;(2<i>CM</i>) [1 + (1/3)&radic;(<i>C</i>/2<i>M</i>) + (1/9)(<i>C</i>/2<i>M</i>)] &minus; <i>C</i>
for <i>C</i> &lt; 2<i>M</i>, else <i>M</i>. "Use the optimal interval" follows Daly's. The results
also show the exact model's optimum (the interval that maximises the exact goodput, planned
interruptions and restarts included) and the goodput points it would add.</p>
"""


def defaults_html() -> str:
    """The source of every default, one list item per input."""
    return "".join(
        f"<li><b>{escape(input_label(key))}</b>: {escape(DEFAULT_NOTES[key])}</li>" for key in DEFAULT_FIELDS
    )


def sources_html() -> str:
    """The sources, one list item each."""
    return "".join(f"<li><b>{escape(a)}</b>: {escape(b)}</li>" for a, b in SOURCES)
