"""One self-contained HTML report of a scenario: headline numbers, plots, levers, comparison, inputs,
sources and the model.

:func:`render_report` takes what the window already has (its :class:`.core.session.plan.PlanResult`, those of
the scenarios it compares, and the sensitivity effects it shows), and the command line computes the same
with :func:`.core.session.plan.compute_plan`, so both write the same report from the same data. Every headline
number is read from the JSON report (:meth:`.core.analysis.results.SimulationResult.to_json_dict`, what
``planner-gui run --json`` prints) and carries its key (``data-key``) and unit (``data-unit``), so a test
can check it against that report.

The file needs nothing else: no scripts, fonts, images or style sheets to fetch; the plots are inline SVG.
It prints on A4 and Letter: each section starts a page, no plot is split across pages, and plots scale to
the printable width.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
from collections.abc import Sequence
from html import escape
from typing import Any

from .. import __version__
from ..core.analysis.compare import comparison, show_value
from ..core.analysis.sensitivity import DEFAULT_FACTOR, Effect, cost_words, has_closed_form, sensitivity
from ..core.analysis.tornado import Tornado, tornado
from ..core.model.scenario import CORRELATED_NAME, DEFAULT_NOTES, OPTIMAL, Scenario, Tiers, Training
from ..core.model.spares import Spares
from ..core.model.specs import SPECS
from ..core.session.plan import PlanResult
from ..core.theory.expected import rates_vary
from ..core.theory.profiles import expected_by_component
from ..core.util import fmt
from . import charts
from .model_text import DEFAULT_FIELDS, MODEL_HTML, defaults_html, sources_html

__all__ = ["MAX_COMPARED", "SECTIONS", "render_report"]

#: The most scenarios a report compares with the main one (the compare command's limit, less the main).
MAX_COMPARED = 7


#: Section ids and headings, in order (the comparison only with compared scenarios).
SECTIONS = {
    "summary": "Headline numbers",
    "gpus": "Scaling with the GPU count",
    "interval": "The checkpoint interval",
    "levers": "Which change buys the most",
    "unsure": "What is unsure",
    "components": "Interruptions by component",
    "comparison": "Compared scenarios",
    "inputs": "Inputs and the sources of the defaults",
    "model": "The model",
}

CSS = """
@page { margin: 14mm 15mm 16mm; }
* { -webkit-print-color-adjust: exact; print-color-adjust: exact; box-sizing: border-box; }
html { background: #fff; color: #000; color-scheme: light; }
body { font: 10pt/1.4 "DejaVu Sans", Verdana, Helvetica, Arial, sans-serif; max-width: 180mm; margin: 0 auto;
  padding: 8mm 0; overflow-wrap: break-word; }
h1 { font-size: 17pt; margin: 0 0 1mm; line-height: 1.2; }
h2 { font-size: 13pt; margin: 0 0 3mm; padding-bottom: 1mm; border-bottom: 1.5px solid #000;
  break-after: avoid; page-break-after: avoid; }
h3 { font-size: 11pt; margin: 5mm 0 2mm; break-after: avoid; page-break-after: avoid; }
p { margin: 0 0 2.5mm; }
.meta { color: #333; margin-bottom: 5mm; }
section { margin: 0 0 10mm; }
section + section { break-before: page; page-break-before: always; }
section.same-page { break-before: auto; page-break-before: auto; }
figure { margin: 0 0 5mm; break-inside: avoid; page-break-inside: avoid; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { font-size: 8.5pt; color: #333; margin-top: 1mm; }
table { border-collapse: collapse; width: 100%; margin: 0 0 4mm; font-size: 9pt; table-layout: fixed; }
td, th { overflow-wrap: anywhere; }
th, td { text-align: left; vertical-align: top; padding: 1.2mm 2mm; border-bottom: 0.5px solid #999; }
thead th { border-bottom: 1.2px solid #000; }
tr { break-inside: avoid; page-break-inside: avoid; }
td.num, th.num { text-align: right; }
table.headline { font-size: 10pt; }
table.headline th { width: 30%; font-weight: normal; }
table.headline td.value { font-weight: bold; font-size: 12pt; width: 28%; }
table.compare, table.inputs { font-size: 8.5pt; }
.small { font-size: 8.5pt; }
.note { color: #333; font-size: 8.5pt; }
ul { margin: 0 0 3mm; padding-left: 5mm; }
li { margin-bottom: 1mm; }
@media print { body { max-width: none; padding: 0; } }
"""


def _t(text: Any, max_len: int = 200) -> str:
    """User text (a name) for HTML: control characters shown as escapes, then HTML-escaped."""
    return escape(fmt.clean(str(text), max_len), quote=True)


def _num(text: str, key: str, unit: str) -> str:
    """A number shown in the headline, with the JSON report's key and the unit it is shown in."""
    return f'<span class="num" data-key="{escape(key)}" data-unit="{unit}">{escape(text)}</span>'


def _summary(d: Any) -> tuple[Any, Any, Any]:
    """(mean, p05, p95) of a summary dict, or (value, None, None) for a plain number."""
    if isinstance(d, dict):
        return d.get("mean"), d.get("p05"), d.get("p95")
    if isinstance(d, (int, float)):
        return float(d), None, None
    return None, None, None


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def headline_rows(d: dict[str, Any], sc: Scenario) -> list[tuple[str, str, str]]:
    """The headline: (quantity, value, detail) rows of HTML, every number read from the JSON report ``d``."""
    it, gp, lost = d["interruptions"], d["goodput"], d["lost_gpu_hours"]
    it_p05, it_p95, expected = it["p05"], it["p95"], d["interruptions_expected"]
    planned = d["planned_interruptions"]["mean"]
    rows = [
        (
            "Unplanned interruptions",
            _num(f"{it['mean']:,.1f}", "interruptions/mean", "count"),
            f"p05–p95 {_num(f'{it_p05:,.0f}', 'interruptions/p05', 'count')}–"
            f"{_num(f'{it_p95:,.0f}', 'interruptions/p95', 'count')}; exact expectation "
            f"{_num(f'{expected:,.1f}', 'interruptions_expected', 'count')}. Planned: "
            f"{_num(f'{planned:,.1f}', 'planned_interruptions/mean', 'count')}",
        ),
    ]
    gap = d.get("mean_gap_hours")
    every_job = fmt.every(gap if gap is not None else math.inf)
    # Where the rates vary (a profile, rate uncertainty, a new cluster's node lives) one GPU's on the job's footing.
    gpu_key = "gpu_mean_gap_hours" if rates_vary(sc) or sc.nodes_vary else "gpu_mtbf_hours"
    every_gpu = fmt.every(d[gpu_key] if d.get(gpu_key) is not None else math.inf)
    rows.append(
        (
            "Time between interruptions",
            _num(every_job, "mean_gap_hours", "hours"),
            f"for the whole job; for one GPU: {_num(every_gpu, gpu_key, 'hours')}",
        )
    )
    exact = (
        f"exact expectation {_num(fmt.percent(d['goodput_expected'], 2), 'goodput_expected', 'percent')}"
        if d["goodput_expected"] is not None
        else "no closed form for this model: the Monte Carlo is the estimate"
    )
    rows.append(
        (
            "Goodput",
            f"{_num(fmt.percent(gp['mean'], 2), 'goodput/mean', 'percent')} ± "
            f"{_num(fmt.percent(gp['sem'], 2), 'goodput/sem', 'percent')}",
            f"Monte Carlo mean ± its standard error; p05–p95 "
            f"{_num(fmt.percent(gp['p05'], 2), 'goodput/p05', 'percent')}–"
            f"{_num(fmt.percent(gp['p95'], 2), 'goodput/p95', 'percent')}; {exact}",
        )
    )
    rows += _interval_rows(d, sc)
    rows += _strategy_rows(d, sc)
    slow = d.get("slow")
    if isinstance(slow, dict):
        drained, expected_drains = f"{slow['drains']['mean']:,.1f}", f"{slow['drains_expected']:,.1f}"
        rows.append(
            (
                "Fail-slow nodes",
                f"{_num(fmt.count(d['hours']['slow'], 1), 'hours/slow', 'count')} h at the slow pace",
                f"{_num(drained, 'slow/drains/mean', 'count')} slow nodes drained with a planned restart (expected "
                f"{_num(expected_drains, 'slow/drains_expected', 'count')}); the rate, speed and detection are "
                "in the inputs",
            )
        )
    bad = d.get("bad")
    if isinstance(bad, dict):
        fails, mis = f"{bad['bad_failures']['mean']:,.1f}", f"{d['spares']['misdiagnosed']['mean']:,.1f}"
        end = f"{bad['bad_at_end']['mean']:,.1f}"
        rows.append(
            (
                "Bad nodes",
                f"{_num(fails, 'bad/bad_failures/mean', 'count')} failures of bad nodes",
                f"{escape(sc.bad_text())}; {_num(mis, 'spares/misdiagnosed/mean', 'count')} healthy nodes pulled "
                f"instead; {_num(end, 'bad/bad_at_end/mean', 'count')} nodes bad at the end, "
                f"{bad['bad_at_start']:,} at the start",
            )
        )
    sdc = d.get("sdc")
    if isinstance(sdc, dict):
        found, unrec = f"{sdc['found']['mean']:,.1f}", f"{sdc['unrecoverable']['mean']:,.2f}"
        kept = (
            f"; {_num(unrec, 'sdc/unrecoverable/mean', 'count')} found no clean checkpoint kept and started the run "
            "over"
            if sc.retained_checkpoints > 0
            else ""
        )
        rows.append(
            (
                "Silent corruption",
                f"{_num(fmt.count(d['hours']['sdc_rollback'], 1), 'hours/sdc_rollback', 'count')} h of work rolled "
                "back",
                f"{_num(found, 'sdc/found/mean', 'count')} corruptions found, each "
                f"{fmt.duration_hours(sc.sdc_detect_hours)} late on average ({escape(sc.retained_text())}){kept}",
            )
        )
    rows.append(
        (
            "GPU-hours not spent training",
            f"{_num(fmt.compact(lost['mean']), 'lost_gpu_hours/mean', 'count')} GPU-hours",
            f"p05–p95 {_num(fmt.compact(lost['p05']), 'lost_gpu_hours/p05', 'count')}–"
            f"{_num(fmt.compact(lost['p95']), 'lost_gpu_hours/p95', 'count')}; they cost "
            f"{_num(fmt.money(d['lost_cost_usd']), 'lost_cost_usd', 'usd')} at "
            f"{_num(f'${sc.gpu_hour_cost_usd:,.2f}', 'scenario/gpu_hour_cost_usd', 'usd')} per GPU-hour",
        )
    )
    tt = d.get("time_to_train")
    if isinstance(tt, dict):
        mean, p05, p95 = _summary(tt.get("days"))
        days_key = "time_to_train/days" + ("/mean" if isinstance(tt.get("days"), dict) else "")
        cost_mean, _, _ = _summary(tt.get("cost_usd"))
        cost_key = "time_to_train/cost_usd" + ("/mean" if isinstance(tt.get("cost_usd"), dict) else "")
        if _finite(mean):
            value = f"{_num(f'{mean:,.1f}', days_key, 'days')} days"
            details = []
            if _finite(p05) and _finite(p95):
                details.append(
                    f"p05–p95 {_num(f'{p05:,.1f}', 'time_to_train/days/p05', 'days')}–"
                    f"{_num(f'{p95:,.1f}', 'time_to_train/days/p95', 'days')} days"
                )
            if _finite(cost_mean):
                details.append(f"it costs {_num(fmt.money(cost_mean), cost_key, 'usd')}")
            ideal = tt.get("ideal_days")
            if _finite(ideal):
                details.append(f"at 100% goodput: {_num(f'{ideal:,.1f}', 'time_to_train/ideal_days', 'days')} days")
            rows.append(("Time to train", value, "; ".join(details)))
    return rows


def _interval_rows(d: dict[str, Any], sc: Scenario) -> list[tuple[str, str, str]]:
    """The checkpoint interval (one tier), or both tiers' intervals, with the optima the report has."""
    opt = d["optimal_interval_min"]
    tiers = d.get("tiers")
    continuing = sc.spares is not None and sc.spares.recovery_mode == "continue"
    how = (
        ("Daly's, for the failures that restart" if continuing else "Daly's optimum")
        if sc.uses_optimal_interval
        else "fixed"
    )
    if tiers is not None and tiers.get("fast_interval_min") is not None:
        return [
            (
                "Fast tier (memory)",
                f"every {_num(fmt.duration_min(tiers['fast_interval_min']), 'tiers/fast_interval_min', 'minutes')}",
                f"optimum {_num(fmt.duration_min(opt['fast']), 'optimal_interval_min/fast', 'minutes')}"
                if opt.get("fast") is not None
                else "",
            ),
            (
                "Persistent tier",
                f"every {_num(fmt.duration_min(d['checkpoint_interval_min']), 'checkpoint_interval_min', 'minutes')}",
                f"{fmt.each(tiers['persistent_every_fast'], 'snapshot')}; uploads start "
                f"{fmt.each(tiers['upload_every_checkpoint'], 'checkpoint')}"
                + (
                    "; optimum "
                    + _num(fmt.duration_min(opt["persistent"]), "optimal_interval_min/persistent", "minutes")
                    if opt.get("persistent") is not None
                    else ""
                ),
            ),
        ]
    gain = (
        None
        if d["goodput_expected_at_optimal_interval"] is None or d["goodput_expected"] is None
        else 100.0 * (d["goodput_expected_at_optimal_interval"] - d["goodput_expected"])
    )
    best = (
        "best (the exact model's optimum): "
        f"{_num(fmt.duration_min(opt['exact']), 'optimal_interval_min/exact', 'minutes')}, "
        f"{_num(f'{gain:+.2f}', 'goodput_expected_at_optimal_interval - goodput_expected', 'points')}"
        " points available; "
        if gain is not None and opt.get("exact") is not None
        else ""
    )
    caveat = sc.sdc_interval_caveat()
    return [
        (
            "Checkpoint interval",
            f"{_num(fmt.duration_min(d['checkpoint_interval_min']), 'checkpoint_interval_min', 'minutes')} ({how})",
            f"{best}Young {_num(fmt.duration_min(opt['young']), 'optimal_interval_min/young', 'minutes')}, "
            f"Daly {_num(fmt.duration_min(opt['daly']), 'optimal_interval_min/daly', 'minutes')}"
            + (f"; {escape(caveat)}" if caveat is not None else ""),
        )
    ]


def _strategy_rows(d: dict[str, Any], sc: Scenario) -> list[tuple[str, str, str]]:
    """Restores by tier, the spare pool and the rates' uncertainty, where the scenario has them."""
    rows = []
    fast, stored = d["restores"]["fast"], d["restores"]["persistent"]
    if d.get("tiers") is not None:
        failed = d["restores"].get("failed")
        rows.append(
            (
                "Restores",
                f"{_num(f'{fast:,.1f}', 'restores/fast', 'count')} from memory",
                f"{_num(f'{stored:,.1f}', 'restores/persistent', 'count')} from storage"
                + (
                    ""
                    if failed is None
                    else f", {_num(f'{failed:,.1f}', 'restores/failed', 'count')} of them after a restore from "
                    "memory failed its validation"
                ),
            )
        )
    sp = d.get("spares")
    if sp is not None:
        in_repair = sp["nodes_in_repair"]["mean"]
        pool = sc.spares.spare_nodes if sc.spares is not None else None
        shown = "unlimited" if pool is None else f"{_num(f'{pool:,}', 'spares/inputs/spare_nodes', 'count')} nodes"
        detail = (
            f"a failure finds no spare {_num(fmt.percent(sp['p_no_spare'], 2), 'spares/p_no_spare', 'percent')} of "
            f"the time; nodes in repair {_num(f'{in_repair:,.1f}', 'spares/nodes_in_repair/mean', 'count')} on average"
        )
        if sp.get("idle_gpu_hours") is not None:
            detail += (
                f"; the pool's {_num(fmt.compact(sp['idle_gpu_hours']), 'spares/idle_gpu_hours', 'count')} GPU-hours "
                f"cost {_num(fmt.money(sp['idle_cost_usd']), 'spares/idle_cost_usd', 'usd')} at the price per GPU-hour"
            )
            if sc.spares is not None and sc.spares.priced:  # bought or rented: what it costs as such, beside
                detail += (
                    f"; as priced ({escape(str(sp['pool_cost_basis']))}) it costs "
                    f"{_num(fmt.money(sp['pool_cost_usd']), 'spares/pool_cost_usd', 'usd')} over the window"
                )
        rows.append(("Spare pool", shown, detail))
        if sc.spares is not None and sc.spares.recovery_mode == "continue":
            continued, restarted = sp["continued"], fast + stored
            rows.append(
                (
                    "Continuing on replicas",
                    f"{_num(f'{continued:,.1f}', 'spares/continued', 'count')} failures continued",
                    f"{_num(f'{restarted:,.1f}', 'restores/fast + restores/persistent', 'count')} restarted",
                )
            )
    r = d.get("racks")
    if r is not None:
        covered, moves = r["covered_in_rack"]["mean"], r["moves"]["mean"]
        racks, held, warm = f"{r['racks']:,}", f"{r['gpus_in_racks']:,}", f"{r['warm_spare_gpus']:,}"
        rows.append(
            (
                "Racks",
                f"{_num(racks, 'racks/racks', 'count')} racks of {sc.nvlink_gpus:,} GPUs, "
                f"{_num(held, 'racks/gpus_in_racks', 'count')} GPUs in them",
                f"{_num(f'{covered:,.1f}', 'racks/covered_in_rack/mean', 'count')} tray failures covered within their "
                f"rack, {_num(f'{moves:,.1f}', 'racks/moves/mean', 'count')} failures moved racks to spare racks; "
                f"the warm spares' {_num(warm, 'racks/warm_spare_gpus', 'count')} GPUs cost "
                f"{_num(fmt.money(r['warm_spare_cost_usd']), 'racks/warm_spare_cost_usd', 'usd')} over the window",
            )
        )
    u = d.get("uncertainty")
    if u is not None:
        goodput = fmt.percent(u["goodput"]["variance_share_rates"])
        interruptions = fmt.percent(u["interruptions"]["variance_share_rates"])
        rows.append(
            (
                "Rate uncertainty",
                f"{_num(goodput, 'uncertainty/goodput/variance_share_rates', 'percent')} of goodput's variance",
                "from the rates' uncertainty, chance the rest (of the interruptions': "
                f"{_num(interruptions, 'uncertainty/interruptions/variance_share_rates', 'percent')})",
            )
        )
    return rows


# -- inputs -----------------------------------------------------------------------------------------------


def _show_input(field: str, v: Any) -> str:
    if v is None:
        return "–"
    if field == "gpus":
        return fmt.count(v)
    if field == "gpus_per_node":
        return f"{v:,}"
    if field == "days":
        return f"{v:g} days"
    if field == "planned_per_day":
        return f"{v:.4g} per day"
    if field == "checkpoint_interval_min":
        if v == OPTIMAL:
            return "optimal (Daly)"
        shown, exact = fmt.duration_min(float(v)), f"{float(v):g} min"
        return exact if shown == exact else f"{shown} ({exact})"
    if field == "checkpoint_write_s":
        return f"{v:g} s"
    if field in ("detect_min", "restart_min"):
        return f"{v:g} min"
    if field == "restart_per_log2_gpus_min":
        return f"{fmt.number(v)} min per doubling of GPUs"
    if field == "slow_rate_per_gpu_hour":
        return "none" if v == 0 else f"{v:.3g} per GPU-hour ({v * 24_000:.3g} per 1,000 GPU-days)"
    if field == "slow_factor":
        return fmt.percent(v, 0) + " of full speed"
    if field == "slow_detect_min":
        return f"{v:g} min"
    if field == "save_fail_p":
        return "none" if v == 0 else f"{fmt.number(100.0 * v)} % of saves fail"
    if field == "restore_fail_p":
        return "none" if v == 0 else f"{fmt.number(100.0 * v)} % of restores from memory fail"
    if field == "correlated_rate_per_day":
        return "none" if v == 0 else f"{fmt.number(v)} per day (one every {fmt.duration_hours(24.0 / v)})"
    if field == "correlated_domains":
        return f"{v:,} failure domain{'' if v == 1 else 's'} an event"
    if field == "correlated_repair_hours":
        return f"{fmt.number(v)} h until its nodes are back"
    if field == "nvlink_gpus":
        return "none" if v == 0 else f"{v:,} GPUs a rack"
    if field == "rack_move_min":
        return "a move costs the swap alone" if v == 0 else f"{v:g} min beyond the swap"
    if field == "sdc_detect_hours":
        return "found at once" if v == 0 else f"found {fmt.duration_hours(v)} after it starts, on average"
    if field == "bad_share":
        return "none" if v == 0 else f"{100.0 * v:.3g}% of the nodes bad at the start"
    if field == "bad_multiplier":
        return f"a bad node fails {v:g}x as often"
    if field == "diagnosis_p":
        return f"the failed node pulled {100.0 * v:.3g}% of the time"
    if field == "repair_fail_p":
        return f"{100.0 * v:.3g}% of bad nodes' repairs leave them bad"
    if field == "retained_checkpoints":
        return "every one" if v == 0 else f"the last {v:,} persistent saves"
    if field == "rack_spare_trays":
        return f"{v:,} warm spare tray{'' if v == 1 else 's'} a rack"
    if field in ("trials",):
        return fmt.count(v)
    if field == "seed":
        return str(v)
    if field == "gpu_hour_cost_usd":
        return f"${v:,.2f}"
    if field == "train_flops":
        return f"{v:.3g} FLOPs"
    if field == "peak_tflops":
        return f"{v:,g} TFLOP/s"
    if field == "mfu":
        return fmt.percent(v, 0)
    if field == "compute_gpu_hours":
        return f"{fmt.compact(v)} GPU-hours"
    return str(v)


#: The inputs the report lists: the planner's inputs (the window's order) with the node size after the GPUs.
_INPUT_FIELDS = ("gpus", "gpus_per_node", *DEFAULT_FIELDS[1:])
_TRAINING_FIELDS = tuple(f.name for f in dataclasses.fields(Training))


def _rates_text(sc: Scenario) -> str:
    return f"{len(sc.components)} components; one GPU: {fmt.every(sc.gpu_mtbf_hours)}"


def inputs_html(sc: Scenario) -> str:
    """The inputs, labelled as the window labels them, beside the default and where it comes from."""
    default = Scenario()
    rows = []
    for field in _INPUT_FIELDS:
        if field == "components":
            label = "Failure rates"
            value, base = _rates_text(sc), _rates_text(default)
        else:
            spec = SPECS[field]
            label = spec.label
            value, base = _show_input(field, getattr(sc, field)), _show_input(field, getattr(default, field))
            if field == "restart_min" and sc.restart_per_log2_gpus_min:
                value = sc.restart_text()  # the restart in use at the job's size, and how it grows
        rows.append((label, value, base, DEFAULT_NOTES.get(field, "")))
        if field == "detect_min" and sc.detect_by:
            rows.append(("Detection by cause", sc.detect_by_text(), "none", DEFAULT_NOTES["detect_by"]))
        if field == "correlated_repair_hours" and sc.weibull_text():  # (the new cluster has its own row, below)
            rows.append(("Weibull lives", sc.weibull_text(), "exponential", DEFAULT_NOTES["weibull"]))
    if sc.training is not None:
        dflt = Training()
        for field in _TRAINING_FIELDS:
            v = getattr(sc.training, field)
            if field in ("peak_tflops", "mfu") and sc.training.train_flops is None:
                continue  # not used when the compute is given in GPU-hours
            if v is None:
                continue
            rows.append(
                (
                    SPECS[field].label,
                    _show_input(field, v),
                    _show_input(field, getattr(dflt, field)),
                    DEFAULT_NOTES.get(field, ""),
                )
            )
    rows += _strategy_inputs(sc)
    body = "".join(
        f"<tr><th>{escape(label)}</th><td>{escape(value)}</td><td>{escape(base)}</td>"
        f'<td class="small">{escape(note)}</td></tr>'
        for label, value, base, note in rows
    )
    return (
        '<table class="inputs"><colgroup><col style="width:21%"><col style="width:19%"><col style="width:18%">'
        '<col style="width:42%"></colgroup><thead><tr><th>Input</th><th>This scenario</th><th>Default (Llama 3)</th>'
        f"<th>Where the default comes from</th></tr></thead><tbody>{body}</tbody></table>"
    )


def _label(field: str) -> str:
    spec = SPECS.get(field)
    return spec.label if spec is not None else field.replace("_", " ").capitalize()


def _strategy_inputs(sc: Scenario) -> list[tuple[str, str, str, str]]:
    """The recovery tiers', the spares' and the rates' inputs, where the scenario has them: (label, value,
    default, note)."""
    rows = []
    if sc.tiers is not None:
        dflt = Tiers()
        for f in dataclasses.fields(Tiers):
            v, base = getattr(sc.tiers, f.name), getattr(dflt, f.name)
            rows.append((_label(f.name), _plain(v), _plain(base), DEFAULT_NOTES.get(f.name, "")))
    if sc.spares is not None:
        dflt_sp = Spares()
        for f in dataclasses.fields(Spares):
            v, base = getattr(sc.spares, f.name), getattr(dflt_sp, f.name)
            if f.name == "spare_nodes":
                v, base = ("unlimited" if v is None else f"{v:,}"), "unlimited"
            elif f.name == "repair_hours":
                v = ", ".join(f"{c} {h:g} h" for c, h in v) or "the defaults"
                base = "GPU 48 h, Host 24 h, Network 4 h, Unplanned Maintenance 8 h"
            rows.append((_label(f.name), _plain(v), _plain(base), ""))
    if sc.rate_uncertainty:
        rows.append(("Rate uncertainty", "on", "off", DEFAULT_NOTES["rate_uncertainty"]))
    if sc.rate_profile is not None:
        p = sc.rate_profile
        shown = f"{len(p)} pieces, x{p[0][1]:.3g} at first, x{p[-1][1]:.3g} from day {p[-1][0]:g}"
        rows.append(("Rates over the run", shown, "constant", DEFAULT_NOTES["rate_profile"]))
    if sc.new_cluster:
        rows.append(("New cluster", "yes: no node in repair at the start, the job fresh", "no (a steady state)", ""))
    return rows


def _plain(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def components_html(sc: Scenario, d: dict[str, Any]) -> str:
    """The failure rate of every component, with its expected and simulated interruptions."""
    mc = d["by_component"]
    expected = expected_by_component(sc)  # (the profile's and the posterior's means)
    rows = []
    for i, c in enumerate(sc.components):
        rows.append(
            f"<tr><td>{_t(c.name, 100)}</td><td>{_t(c.category, 100)}</td>"
            f'<td class="num">{c.per_1000_gpu_days:.3g}</td>'
            f'<td class="num">{escape(fmt.duration_hours(c.gpu_mtbf_hours))}</td>'
            f'<td class="num">{float(expected[i]):,.1f}</td>'
            f'<td class="num">{mc.get(c.name, 0.0):,.1f}</td></tr>'
        )
    n = len(sc.components)
    if sc.uses_correlated:  # (the last class: a rate of the whole job, not of one GPU)
        every = fmt.duration_hours(24.0 / sc.correlated_rate_per_day)
        rows.append(
            f"<tr><td>{CORRELATED_NAME} ({sc.correlated_domains:,} domains, back in "
            f"{escape(fmt.duration_hours(sc.correlated_repair_hours))})</td><td>{CORRELATED_NAME}</td>"
            f'<td class="num">&mdash;</td><td class="num">the job: one every {escape(every)}</td>'
            f'<td class="num">{float(expected[n]):,.1f}</td>'
            f'<td class="num">{mc.get(CORRELATED_NAME, 0.0):,.1f}</td></tr>'
        )
    total = sc.rate_per_gpu_hour
    comp_expected = d["interruptions_expected"] - float(expected[n:].sum())  # (the correlated events', if any)
    comp_simulated = d["interruptions"]["mean"] - mc.get(CORRELATED_NAME, 0.0)
    # (a new cluster's node lives: the rates are the long run's; one GPU over the window, as the headline has it)
    every_gpu = (
        f"{fmt.duration_hours(sc.hours * sc.gpus / comp_expected)} over the window"
        if sc.lives_vary and comp_expected > 0
        else fmt.duration_hours(sc.gpu_mtbf_hours)
    )
    rows.append(
        f'<tr><th>All components</th><td></td><td class="num">{total * 24_000:.3g}</td>'
        f'<td class="num">{escape(every_gpu)}</td>'
        f'<td class="num">{comp_expected:,.1f}</td>'
        f'<td class="num">{comp_simulated:,.1f}</td></tr>'
    )
    if sc.uses_correlated:  # (every cause: what the headline counts)
        rows.append(
            '<tr><th>All causes</th><td></td><td class="num">&mdash;</td>'
            f'<td class="num">the job: one every {escape(fmt.duration_hours(sc.cluster_mtbf_hours))}</td>'
            f'<td class="num">{d["interruptions_expected"]:,.1f}</td>'
            f'<td class="num">{d["interruptions"]["mean"]:,.1f}</td></tr>'
        )
    return (
        '<table class="rates"><colgroup><col style="width:27%"><col style="width:17%">'
        + '<col style="width:14%">' * 4
        + "</colgroup><thead>"
        "<tr><th>Component</th><th>Category</th>"
        '<th class="num">Per 1,000 GPU-days</th><th class="num">One GPU: one every</th>'
        '<th class="num">Expected in the window</th><th class="num">Monte Carlo mean</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


# -- comparison ---------------------------------------------------------------------------------------------


def _show(value: float | None, unit: str, signed: bool = False) -> str:
    """An output of the comparison, as the compare command shows it (a dash where there is none)."""
    return show_value(value, unit, signed, missing="\u2013")


def comparison_html(doc: dict[str, Any], labels: Sequence[str]) -> str:
    """The comparison: the inputs that differ, and the headline outputs with their differences from the
    first scenario."""
    head = "".join(f"<th>{_t(n, 60)}</th>" for n in labels)
    cols = '<colgroup><col style="width:22%">' + "<col>" * len(labels) + "</colgroup>"
    if doc["inputs"]:
        body = "".join(
            f"<tr><th>{_t(r['input'], 80)}</th>" + "".join(f"<td>{_t(v, 60)}</td>" for v in r["values"]) + "</tr>"
            for r in doc["inputs"]
        )
        inputs = (
            f'<table class="compare inputs-differ">{cols}<thead><tr><th>Input</th>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )
    else:
        inputs = "<p>The scenarios have the same inputs.</p>"
    out_rows = []
    for r in doc["outputs"]:
        cells = [f'<td class="num">{escape(_show(r["values"][0], r["unit"]))}</td>']
        cells += [
            f'<td class="num">{escape(_show(v, r["unit"]))}<br><span class="note">'
            f"{escape(_show(dv, r['unit'], signed=True))}</span></td>"
            for v, dv in zip(r["values"][1:], r["differences"][1:])
        ]
        out_rows.append(f"<tr><th>{escape(r['output'])}</th>{''.join(cells)}</tr>")
    outputs = (
        f'<table class="compare outputs">{cols}<thead><tr><th>Output</th>{head}</tr></thead>'
        f"<tbody>{''.join(out_rows)}</tbody></table>"
    )
    return (
        f"<h3>Inputs that differ</h3>{inputs}<h3>Outputs</h3>"
        f'<p class="note">Under each compared value: its difference from the first scenario.</p>{outputs}'
    )


# -- the document ---------------------------------------------------------------------------------------


def _labels(plans: Sequence[PlanResult], labels: Sequence[str] | None) -> list[str]:
    names = list(labels) if labels is not None else [p.main.scenario.name for p in plans]
    if len(names) != len(plans):
        raise ValueError(f"labels: one per scenario ({len(plans)}), got {len(names)}")
    seen: dict[str, int] = {}
    out = []
    for n in names:
        n = fmt.clean(n, 200)
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


def _unsure_html(t: Tornado | None) -> str:
    """The tornado and why each input's ends are what they are; without one, the command that computes it."""
    if t is None:
        return (
            "<p>Not computed for this report: this scenario's tornado needs paired Monte Carlo "
            "(<code>planner-gui tornado</code> prints it; <code>planner-gui report</code> computes it).</p>"
        )
    if not t.bars:
        return "<p>No input of this scenario is an estimate the tornado varies.</p>"
    how = (
        "exact expectations"
        if t.exact
        else f"paired Monte Carlo, {fmt.count(t.trials or 0)} trials (the same draws at every end)"
    )
    rows = "".join(
        f"<tr><th>{escape(b.label)}</th><td>{escape(b.input)}</td><td>{escape(b.why)}</td></tr>" for b in t.bars
    )
    return _figure(
        charts.tornado_chart(t),
        "Each input that is an estimate set to its low and its high end, every other input as entered "
        f"({how}). The widest bar is the estimate to pin down first.",
    ) + (
        '<table class="inputs"><thead><tr><th>input</th><th>its name for <code>--bounds</code></th>'
        f"<th>why these ends</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{caption}</figcaption></figure>"


def _section(key: str, body: str, same_page: bool = False) -> str:
    """A section; it starts a new page when printed unless ``same_page``."""
    cls = ' class="same-page"' if same_page else ""
    return f'<section id="{key}"{cls}><h2>{escape(SECTIONS[key])}</h2>{body}</section>'


def render_report(
    main: PlanResult,
    compared: Sequence[PlanResult] = (),
    effects: Sequence[Effect] | None = None,
    *,
    labels: Sequence[str] | None = None,
    reports: Sequence[dict[str, Any]] | None = None,
    factor: float = DEFAULT_FACTOR,
    generated: _dt.date | None = None,
    unsure: Tornado | None = None,
) -> str:
    """The report as one self-contained HTML document.

    ``main`` is the scenario reported on and ``compared`` the scenarios shown beside it (at most
    :data:`MAX_COMPARED`), each a :func:`.core.session.plan.compute_plan` result (the window passes the results
    it shows; the command line computes them at full quality). ``effects`` are the sensitivity effects
    to chart, in the order given (default: :func:`.core.analysis.sensitivity.sensitivity` of the main scenario
    with ``factor``). ``labels`` name the scenarios, the main one first (default: their names; a repeated
    name is numbered). ``reports`` are their JSON reports, main first, as ``planner-gui run --json``
    prints them (default: each main run's :meth:`~.core.analysis.results.SimulationResult.to_json_dict`); the
    headline and the comparison read their numbers from them, and a ``time_to_train`` key adds the time
    and cost to train. ``generated`` is the date printed (default: today). ``unsure`` is the tornado of the
    main scenario's estimates (default: computed here where the exact model gives it; a scenario ranked by paired
    Monte Carlo without one says which command computes it).
    """
    if len(compared) > MAX_COMPARED:
        raise ValueError(f"at most {MAX_COMPARED} compared scenarios (got {len(compared)})")
    plans = [main, *compared]
    names = _labels(plans, labels)
    sc = main.main.scenario
    docs = list(reports) if reports is not None else [p.main.to_json_dict() for p in plans]
    if len(docs) != len(plans):
        raise ValueError(f"reports: one per scenario ({len(plans)}), got {len(docs)}")
    d = docs[0]
    if effects is None:
        effects = main.effects if main.effects is not None else sensitivity(sc, factor)
    prices = dict(sc.lever_prices)  # (the prices the report's scenario has, whenever the effects were computed)
    effects = [dataclasses.replace(e, price_usd=prices.get(e.lever)) for e in effects]
    when = generated if generated is not None else _dt.date.today()
    date = when.strftime("%Y-%m-%d") if isinstance(when, _dt.date) else str(when)
    nodes = math.ceil(sc.gpus / sc.gpus_per_node)
    trials_note = (
        f"{fmt.count(sc.trials)} Monte Carlo trials (seed {sc.seed}); the sweeps use "
        f"{fmt.count(int(main.by_gpus.trials.max()))} trials per GPU count (fewer for the largest) and "
        f"{fmt.count(int(main.by_interval.trials.max()))} per interval."
    )
    quality = getattr(main.request.quality, "name", "full")
    if quality != "full":
        trials_note += f" These are {quality} results, computed quickly with fewer trials."

    headline = "".join(
        f'<tr><th>{escape(q)}</th><td class="value">{v}</td><td>{detail}</td></tr>'
        for q, v, detail in headline_rows(d, sc)
    )
    summary = (
        f'<table class="headline"><tbody>{headline}</tbody></table>'
        '<p class="note">Monte Carlo results give the mean over trials and the 5th-95th percentile range '
        "(nine trials in ten fall inside it); the exact expectation is the model's closed form. "
        "Goodput is compute never rolled back as a share of the wall-clock window.</p>"
        + _figure(
            charts.hours_chart(d),
            "Checkpoint writes, lost work (since the last checkpoint), detection and restart after unplanned "
            "interruptions (with the model's restores, swaps and continue stalls), restarts after planned ones, and "
            "where the scenario has them the hours waiting for spares and the throughput lost to replicas out or a "
            "smaller job; the rest is useful compute.",
        )
    )
    compare_note = (
        " Compared scenarios: their Monte Carlo means, each with a marker at its own size." if compared else ""
    )
    gpus = _figure(
        charts.interruptions_vs_gpus(plans, names),
        "Everything but the GPU count as in the scenario; dotted guides at 16,384 (Llama 3) and 100,000 GPUs."
        + compare_note,
    ) + _figure(
        charts.goodput_vs_gpus(plans, names),
        "Goodput at each GPU count"
        + (" with the optimal interval for that count." if sc.uses_optimal_interval else " at the fixed interval.")
        + compare_note,
    )
    interval = _figure(
        charts.goodput_vs_interval(main),
        "Goodput at each checkpoint interval, the rest of the scenario fixed. Young's (1974) and Daly's (2006) "
        "optima are marked beside the interval in use; the headline gives the exact model's optimum.",
    )
    components = _figure(
        charts.components_chart(main),
        "Bars and numbers: the exact expected count of each component (rate x GPUs x hours"
        + ("; on a new cluster, a component of node lives: its lives' renewals" if sc.lives_vary else "")
        + "). Dots and whiskers: the Monte Carlo mean and 5th-95th percentile over trials.",
    ) + components_html(sc, d)
    if effects:
        levers = _figure(
            charts.sensitivity_chart(effects, sc.training is not None, cost_words(sc)),
            "Each input changed alone, by the factor shown, with everything else fixed; "
            + (
                "paired Monte Carlo (the same draws with and without each change), ± one standard error. "
                if any(e.goodput_delta_se is not None for e in effects)
                else "exact expectations. "
            )
            + "Bars: the change in goodput; at the right, in words: it, and "
            + (
                "the change in the days and dollars to train the given compute."
                if sc.training is not None
                else f"the change in the {cost_words(sc)} in the window."
            ),
        )
    else:
        levers = "<p>No change of a single input changes this scenario.</p>"

    if unsure is None and has_closed_form(sc):
        unsure = tornado(sc)
    sections = [
        _section("summary", summary),
        _section("gpus", gpus),
        _section("interval", interval),
        _section("levers", levers, same_page=True),
        _section("unsure", _unsure_html(unsure), same_page=True),
        _section("components", components),
    ]
    if compared:
        doc = comparison(names, [p.main.scenario for p in plans], docs)
        sections.append(_section("comparison", comparison_html(doc, names)))
    sections.append(
        _section(
            "inputs",
            '<p class="note">The default column is the Llama 3 405B run each note describes. Failure rates by '
            "component are in the table under “Interruptions by component”.</p>" + inputs_html(sc),
        )
    )
    sections.append(
        _section(
            "model",
            MODEL_HTML + f"<h3>Defaults and their sources</h3><ul>{defaults_html()}</ul>"
            f"<h3>Sources</h3><ul>{sources_html()}</ul>",
        )
    )
    title = _t(sc.name)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="planner-gui {escape(__version__)}">'
        f"<title>{title}: planner-gui report</title><style>{CSS}</style></head>\n<body>"
        f'<header><h1 id="title">{title}</h1>'
        f'<p class="meta">planner-gui {escape(__version__)} report, {escape(date)}. '
        f"{fmt.count(sc.gpus)} GPUs ({fmt.count(nodes)} nodes of {sc.gpus_per_node}) for "
        f"{sc.days:g} day{'' if sc.days == 1 else 's'}. {escape(trials_note)}</p></header>\n"
        + "\n".join(sections)
        + "\n</body></html>\n"
    )
