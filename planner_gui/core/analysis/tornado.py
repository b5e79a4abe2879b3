"""Which unsure input moves the answer most: a tornado of every input that is an estimate.

Sensitivity (:mod:`.sensitivity`) asks what an improvement a planner could buy is worth. A tornado asks how sure
the answer is: each input that nobody measured for the planner's own cluster (detection, restart, the writes, the
repairs, the failure rates, the training's efficiency) is set in turn to the low and the high end of what it
could be, every other input as it is, and the time to train (or, without a training run, the goodput) is read
at each end. The inputs are sorted by how far apart their two ends are: the widest bar is the estimate to check
first.

The ends, each with its reason (:func:`unsure_inputs`; a planner may give others):

* times a planner enters with no published source for their cluster (detection, restart, the writes and
  restores, swaps, repairs, the continue stall): half to twice the value entered;
* a category's failure rate with evidence behind it (the Llama 3 causes' counts, or a fitted log's): the 5th and
  95th percentiles of its posterior (:mod:`.rates`); without evidence, half to twice;
* planned interruptions: half to twice (one run's count);
* the training's model FLOPs utilization: five points either way (Llama 3 405B reports 38-43 %).

Where the scenario has a closed form (:func:`.sensitivity.has_closed_form`), each end is its exact expectation
(the days are the work over the exact goodput); elsewhere every end is simulated on the general engine with the
scenario's own seed, so that the ends differ from the scenario by their input alone (paired Monte Carlo, each
end's difference from the scenario with its standard error).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model.scenario import RESTART_REFERENCE_GPUS, WEIBULL_SHAPES, Scenario
from ..model.specs import SPECS
from ..theory.rates import RatePosterior
from ..util import fmt, special
from .sensitivity import NoClosedForm, days_and_cost, expected_goodput, has_closed_form, per_trial_days_and_cost

if TYPE_CHECKING:
    from .results import SimulationResult

__all__ = ["Bar", "Tornado", "Unsure", "end_text", "parse_bounds", "tornado", "unsure_inputs"]

#: The percentiles of a rate's posterior that make its ends.
RATE_QUANTILES = (0.05, 0.95)
#: The ends of a time with no published source: this factor below and above the value entered.
TIME_FACTOR = 2.0
#: The ends of the model FLOPs utilization: this far either side (Llama 3 405B: 38-43 % on 8k-16k H100s).
MFU_POINTS = 0.05


@dataclass(frozen=True)
class Unsure:
    """An input that is an estimate: its value in the scenario, the low and high ends to try, and why those."""

    key: str  # the scenario's field by its path ("detect_min", "tiers.fast_stall_s", "rates.GPU", ...)
    label: str
    unit: str
    value: float
    low: float
    high: float
    why: str
    #: The scenario with this input at ``v`` (in the input's unit).
    at: Callable[[Scenario, float], Scenario]
    #: An estimate of 0 (none assumed) whose ends only ``--bounds`` gives: left out without them.
    needs_bounds: bool = False


@dataclass(frozen=True)
class Bar:
    """One input's two ends and what each gives (days and cost None without a training run)."""

    input: str
    label: str
    unit: str
    value: float
    low: float
    high: float
    why: str
    goodput_low: float
    goodput_high: float
    days_low: float | None
    days_high: float | None
    cost_low: float
    cost_high: float
    #: Paired Monte Carlo: the standard error of each end's difference from the scenario (None where exact).
    days_low_se: float | None = None
    days_high_se: float | None = None
    goodput_low_se: float | None = None
    goodput_high_se: float | None = None
    #: Why an end could not be simulated (a time to train the engine refuses: it never finishes, or would take
    #: too many interruptions to simulate); its numbers are then not finite. None: it ran.
    refused_low: str | None = None
    refused_high: str | None = None

    @property
    def spread(self) -> float:
        """How far apart the two ends are: in days with a training run, else in goodput (an end that never finishes
        or cannot run: infinite, the widest)."""
        if self.refused_low is not None or self.refused_high is not None:
            return math.inf
        if self.days_low is not None and self.days_high is not None:
            if math.isinf(self.days_low) or math.isinf(self.days_high):
                return math.inf
            return abs(self.days_high - self.days_low)
        return abs(self.goodput_high - self.goodput_low)

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "label": self.label,
            "unit": self.unit,
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "days_low": fmt.finite_or_none(self.days_low),
            "days_high": fmt.finite_or_none(self.days_high),
            "goodput_low": fmt.finite_or_none(self.goodput_low),
            "goodput_high": fmt.finite_or_none(self.goodput_high),
            "cost_low_usd": fmt.finite_or_none(self.cost_low),
            "cost_high_usd": fmt.finite_or_none(self.cost_high),
            "days_low_se": self.days_low_se,
            "days_high_se": self.days_high_se,
            "goodput_low_se": self.goodput_low_se,
            "goodput_high_se": self.goodput_high_se,
            "why": self.why,
            "refused_low": self.refused_low,
            "refused_high": self.refused_high,
        }


#: Days beyond which an end's time to train is shown in powers of ten ("1.9e+35 days"), not digit by digit.
BIG_DAYS = 1e6


def end_text(t: Tornado, b: Bar, which: str, *, se: bool = True) -> str:
    """What an end gives, in words: "16.32 days" ("± 0.05" with paired Monte Carlo), "87.12 %", "never finishes",
    "1.9e+35 days", or "cannot run: <why>". ``which`` is "low" or "high"."""
    refused = b.refused_low if which == "low" else b.refused_high
    if refused is not None:
        return f"cannot run: {refused}"
    if t.days is not None:
        d = b.days_low if which == "low" else b.days_high
        err = b.days_low_se if which == "low" else b.days_high_se
        if d is None:
            return "-"
        if math.isinf(d):
            return "never finishes (goodput 0)"
        shown = f"{d:,.2f}" if d < BIG_DAYS else f"{d:.3g}"
        return shown + ("" if err is None or not se else f" ± {err:.2f}") + " days"
    g = b.goodput_low if which == "low" else b.goodput_high
    err = b.goodput_low_se if which == "low" else b.goodput_high_se
    return f"{100 * g:.2f}" + ("" if err is None or not se else f" ± {100 * err:.2f}") + " %"


@dataclass(frozen=True)
class Tornado:
    """The bars, widest first, beside the scenario's own goodput, days and cost."""

    bars: tuple[Bar, ...]
    goodput: float
    days: float | None
    cost: float
    exact: bool
    trials: int | None  # paired Monte Carlo's trials (None where exact)

    @property
    def outcome(self) -> str:
        return "days" if self.days is not None else "goodput"


def _times(
    key: str, label: str, unit: str, why: str, *, zero_is_estimate: bool = False
) -> Callable[[Scenario], Unsure | None]:
    """A time of the scenario (``key`` a field, or ``section.field``) from half to twice its value. At 0 it has no
    ends, unless ``zero_is_estimate`` (0 assumes none, e.g. no growth of the restart): then it is an input whose ends
    only ``--bounds`` can give (:func:`unsure_inputs` leaves it out without them)."""
    section, _, field = key.rpartition(".")

    def get(sc: Scenario) -> Unsure | None:
        holder: Any = sc if not section else getattr(sc, section)
        if holder is None:
            return None
        v = float(getattr(holder, field))
        if not v > 0 and not (zero_is_estimate and v == 0.0):
            return None

        def at(s: Scenario, x: float) -> Scenario:
            if not section:
                return s.replace(**{field: x})
            return s.replace(**{section: dataclasses.replace(getattr(s, section), **{field: x})})

        return Unsure(key, label, unit, v, v / TIME_FACTOR, v * TIME_FACTOR, why, at, needs_bounds=v == 0.0)

    return get


def _every_detection(s: Scenario, x: float) -> Scenario:
    """``s`` with its detection at ``x`` minutes and each cause's own detection scaled alike."""
    f = x / s.detect_min if s.detect_min > 0 else 1.0
    return s.replace(detect_min=x, detect_by=tuple((n, min(v * f, 10_080.0)) for n, v in s.detect_by))


def _when_slow(get: Callable[[Scenario], Unsure | None]) -> Callable[[Scenario], Unsure | None]:
    """An input of fail-slow nodes: unsure only where nodes run slow (its value means nothing otherwise)."""
    return lambda sc: get(sc) if sc.uses_slow else None


def _when_correlated(get: Callable[[Scenario], Unsure | None]) -> Callable[[Scenario], Unsure | None]:
    """An input of how long correlated events keep their nodes: unsure only where they happen and the nodes are
    followed (a pool, a swap or continue mode: otherwise its value moves nothing)."""
    return lambda sc: get(sc) if sc.uses_correlated and sc.uses_spares else None


def _when_sdc(get: Callable[[Scenario], Unsure | None]) -> Callable[[Scenario], Unsure | None]:
    """An input of silent corruption found late: unsure only where a component's failures are corruptions."""
    return lambda sc: get(sc) if sc.sdc_component is not None else None


_NO_SOURCE = "no published figure for your cluster: half to twice the value entered"
#: The times that are estimates, in the order the help lists them.
_TIMES = (
    _times(
        "detect_min",
        "detection",
        "min",
        "from seconds (a GPU error the driver sees) to a watchdog's timeout (15-minute silent hangs on GB200 racks, "
        "Marin): half to twice the value entered",
    ),
    _times(
        "restart_min",
        "restart",
        "min",
        "MegaScale restarts in under 30 s at over 10,000 GPUs after work that took it from 1,047 s: half to twice "
        "the value entered",
    ),
    _times(
        "restart_per_log2_gpus_min",
        "restart growth",
        "min per doubling",
        "no published figure for how your restart grows with the job: half to twice the value entered",
        zero_is_estimate=True,
    ),
    _times(
        "checkpoint_write_s",
        "checkpoint write",
        "s",
        "storage shared with other jobs writes slower than its rated bandwidth: half to twice the value entered",
    ),
    _times(
        "planned_per_day", "planned interruptions", "per day", "one run's count (Llama 3: 47 in 54 days): half to twice"
    ),
    _times(
        "tiers.fast_stall_s", "in-memory snapshot stall", "s", _NO_SOURCE + " (ByteCheckpoint: 0.59 s at 8,960 GPUs)"
    ),
    _times("tiers.fast_restore_min", "restore from memory", "min", _NO_SOURCE),
    _times("tiers.persistent_upload_min", "background upload", "min", _NO_SOURCE),
    _times("tiers.persistent_restore_min", "restore from storage", "min", _NO_SOURCE),
    _times(
        "storage.storage_gb_s",
        "storage bandwidth",
        "GB/s",
        "storage shared with other jobs delivers less than its rated bandwidth: half to twice the value entered",
    ),
    _times("spares.swap_min", "swap time", "min", _NO_SOURCE),
    _times("spares.continue_stall_min", "continue stall", "min", _NO_SOURCE),
    _times(
        "slow_rate_per_gpu_hour",
        "fail-slow rate",
        "per GPU-hour",
        "no published rate of nodes turning slow per GPU-hour (Falcon, arXiv 2410.12588, finds them common): half "
        "to twice the value entered",
        zero_is_estimate=True,  # (none assumed: --bounds slow_rate_per_gpu_hour=0:HIGH brackets it)
    ),
    _when_slow(
        _times(
            "slow_detect_min",
            "slow-node detection",
            "min",
            "automated per-rank timing finds a slow node in minutes, by hand it takes hours: half to twice the value "
            "entered",
        )
    ),
    _times(
        "correlated_rate_per_day",
        "correlated failures",
        "per day",
        "no published rate of power, cooling or fabric events that take several domains at once: half to twice the "
        "value entered",
        zero_is_estimate=True,  # (none assumed: --bounds correlated_rate_per_day=0:HIGH brackets it)
    ),
    _when_correlated(_times("correlated_repair_hours", "correlated repair", "h", _NO_SOURCE)),
    _when_sdc(
        _times(
            "sdc_detect_hours",
            "silent corruption found after",
            "h",
            "no published delay from a silent corruption's start to its detection in training (fleet studies find "
            "them hours to days late, Dixit et al. arXiv 2102.11245): half to twice the value entered",
            zero_is_estimate=True,  # (found at once assumed: --bounds sdc_detect_hours=0:HIGH brackets it)
        )
    ),
)


def _slow_factor(sc: Scenario) -> Unsure | None:
    """The job's speed while a node is slow, from twice its slowdown to half of it (a speed of 0.5: 0 to 0.75)."""
    if not sc.uses_slow or sc.slow_factor >= 1.0:
        return None
    f = sc.slow_factor
    return Unsure(
        "slow_factor",
        "speed while slow",
        "of full speed",
        f,
        max(0.0, 1.0 - 2.0 * (1.0 - f)),
        1.0 - 0.5 * (1.0 - f),
        "a planner's estimate (Falcon, arXiv 2410.12588: slowdowns from a few percent to several times): half to "
        "twice the slowdown entered",
        lambda s, x: s.replace(slow_factor=x),
    )


def _chance(sc: Scenario, key: str, label: str, why: str) -> Unsure:
    """A chance of the scenario from half to twice its value (at most its range's top). At 0 it assumes none: an
    input whose ends only ``--bounds`` can give."""
    v = float(getattr(sc, key))
    hi = min(v * TIME_FACTOR, SPECS[key].hi)
    return Unsure(key, label, "", v, v / TIME_FACTOR, hi, why, lambda s, x: s.replace(**{key: x}), needs_bounds=v == 0)


def _chances(sc: Scenario) -> list[Unsure]:
    """Checkpoints that fail: the chance a save fails, and, with the in-memory tier on, a restore from it."""
    why = "no published rate of failed checkpoints: half to twice the value entered"
    out = [_chance(sc, "save_fail_p", "failed saves", why)]
    if sc.fast_tier_on:
        out.append(_chance(sc, "restore_fail_p", "failed restores from memory", why))
    return out


def _bad(sc: Scenario) -> list[Unsure]:
    """Bad nodes (docs/model.md, "Bad nodes"): their share at the start and their multiplier from half to twice (the
    multiplier at least 1), the chance a pull is of a healthy node and a repair's failure likewise."""
    if not sc.uses_bad:
        return []
    why = "AIReSim's illustrative case (arXiv 2603.07041), no fleet's published figure: half to twice the value entered"
    m = sc.bad_multiplier
    mult = Unsure(
        "bad_multiplier", "bad node's failures", "x", m, max(1.0, m / TIME_FACTOR), min(m * TIME_FACTOR,
        SPECS["bad_multiplier"].hi), why, lambda s, x: s.replace(bad_multiplier=x),
    )  # fmt: skip
    out = [_chance(sc, "bad_share", "bad nodes", why), mult]
    wrong = 1.0 - sc.diagnosis_p
    out.append(
        Unsure(
            "diagnosis_p", "right node pulled", "", sc.diagnosis_p, max(0.0, 1.0 - wrong * TIME_FACTOR),
            1.0 - wrong / TIME_FACTOR, why + " (of the wrong pulls)", lambda s, x: s.replace(diagnosis_p=x),
            needs_bounds=wrong == 0,
        )
    )  # fmt: skip
    if sc.finite_pool:  # (unlimited: a pulled node leaves the books)
        out.append(_chance(sc, "repair_fail_p", "failed repairs", why))
    return out


#: How far a node life's shape is unsure: from this factor below it to this factor above (within the shapes allowed).
SHAPE_FACTOR = 1.25


def _life_shapes(sc: Scenario) -> list[Unsure]:
    """Each node life's Weibull shape (docs/model.md, "Node lives"), divided and multiplied by 1.25, the rate kept: a
    shape fitted to a fleet's log is that unsure."""
    lo, hi = WEIBULL_SHAPES
    out = []
    for c, k in sc.lived_components:
        if k == 1.0 or c.rate_per_gpu_hour <= 0:
            continue
        name = c.name
        out.append(
            Unsure(
                f"weibull.{name}.shape",
                f"{name} life's shape",
                "",
                k,
                max(lo, k / SHAPE_FACTOR),
                min(hi, k * SHAPE_FACTOR),
                "a planner's estimate (Schroeder and Gibson, DSN 2006, fit shapes of 0.7-0.8 to HPC systems): a "
                "shape fitted to a fleet's log, divided and multiplied by 1.25, the rate kept",
                _shape_at(name),
            )
        )
    return out


def _shape_at(name: str) -> Callable[[Scenario, float], Scenario]:
    """The scenario with the node life of component ``name`` at shape ``x``, its rate kept."""

    def at(s: Scenario, x: float) -> Scenario:
        return s.with_weibull(((name, x, None),))

    return at


def _repairs(sc: Scenario) -> Unsure | None:
    """Every repair time together (a node's repair takes hours to days: SemiAnalysis), half to twice."""
    sp = sc.spares
    if sp is None or sp.is_todays:
        return None
    from ..model.spares import component_scope, node_categories, repair_hours_of

    cats = node_categories(sc)
    if not cats:
        return None
    hours = {c: repair_hours_of(c, sp) for c in cats}
    # The mean repair a failure starts: each category's weighted by how often its nodes fail (a plain mean of the
    # categories would weigh a rare category's repair as much as the GPUs').
    weights = {
        c: math.fsum(x.rate_per_gpu_hour for x in sc.components if x.category == c and component_scope(x) != "process")
        for c in cats
    }
    total = math.fsum(weights.values())
    if not total > 0:
        return None
    mean = math.fsum(hours[c] * weights[c] for c in cats) / total
    if not mean > 0:
        return None

    def at(s: Scenario, x: float) -> Scenario:
        assert s.spares is not None
        return s.replace(
            spares=dataclasses.replace(s.spares, repair_hours=tuple((c, h * x / mean) for c, h in hours.items()))
        )

    return Unsure(
        "spares.repair_hours",
        "repair times (mean per failure)",
        "h",
        mean,
        mean / TIME_FACTOR,
        mean * TIME_FACTOR,
        "repairs take hours to days (SemiAnalysis, 100,000 H100 clusters): every category's, half to twice (the value: "
        "their mean weighted by how often each category's nodes fail)",
        at,
    )


def _category_rate(sc: Scenario, category: str) -> Unsure | None:
    """A category's failure rate (per 1,000 GPU-days): its posterior's 5th and 95th percentiles where its
    components carry evidence, else half to twice."""
    comps = tuple(c for c in sc.components if c.category == category)
    rate = math.fsum(c.rate_per_gpu_hour for c in comps)
    if not rate > 0:
        return None
    per_kday = rate * 24_000.0
    post = RatePosterior.of(comps)
    if post.uncertain.all() and not post.fixed.any():
        scales, shapes = post.groups()
        shape = float(shapes.sum())
        if len(scales) == 1:
            scale = float(scales[0])
            worth = f"{shape - 0.5 * len(comps):,.0f}"
            how = "the 5th and 95th percentiles of its rate given its evidence"
        else:  # a Gamma with the total's mean and variance (several scales: no closed form for the sum)
            scale = post.variance() / post.mean()
            shape = post.mean() / scale
            worth = f"{shape:,.0f} effective"
            how = "about the 5th and 95th percentiles of its rate given its evidence"
        lo, hi = (float(special.gammaincinv(shape, q)) * scale * 24_000.0 for q in RATE_QUANTILES)
        # (worth, not seen: a fitted rate's evidence holds the prior's weighted counts beside the log's own)
        why = f"{how} (worth {worth} interruptions)"
    else:
        lo, hi = per_kday / TIME_FACTOR, per_kday * TIME_FACTOR
        why = "no evidence of how often it fails behind it: half to twice"

    def at(s: Scenario, x: float) -> Scenario:
        return s.scale_rates(x / per_kday, category)

    return Unsure(f"rates.{category}", f"{category} failures", "per 1,000 GPU-days", per_kday, lo, hi, why, at)


def _mfu(sc: Scenario) -> Unsure | None:
    t = sc.training
    if t is None or t.train_flops is None:
        return None
    v = t.mfu
    lo, hi = max(0.01, v - MFU_POINTS), min(1.0, v + MFU_POINTS)

    def at(s: Scenario, x: float) -> Scenario:
        assert s.training is not None
        return s.replace(training=dataclasses.replace(s.training, mfu=x))

    why = "Llama 3 405B ran at 38-43 % BF16 MFU on 8,000-16,000 H100s (Table 4): five points either way"
    return Unsure("training.mfu", "model FLOPs utilization", "share", v, lo, hi, why, at)


def unsure_inputs(sc: Scenario, bounds: Mapping[str, tuple[float, float]] | None = None) -> list[Unsure]:
    """The scenario's inputs that are estimates, each with its ends (``bounds``: other ends by key, in the
    input's unit). A time of 0, or a part of the model the scenario does not use, has none."""
    out: list[Unsure] = []
    for make in _TIMES:
        u = make(sc)
        if u is not None and (u.key != "checkpoint_write_s" or sc.storage is None):
            out.append(u)
    if sc.detect_by:  # every detection moves together, those by cause in proportion
        why = (
            "every cause's detection together, those by cause in proportion (the ends are the detection of the "
            "other causes): half to twice"
        )
        out = [dataclasses.replace(u, label="detection (every cause)", at=_every_detection, why=why)
               if u.key == "detect_min" else u for u in out]  # fmt: skip
    if sc.restart_per_log2_gpus_min:  # the restart entered is then the one at the anchor's size
        label = f"restart at {RESTART_REFERENCE_GPUS:,} GPUs"
        out = [dataclasses.replace(u, label=label) if u.key == "restart_min" else u for u in out]
    out += [u for u in (_repairs(sc), _slow_factor(sc)) if u is not None]
    out += _chances(sc)
    out += _bad(sc)
    out += _life_shapes(sc)
    out += [u for c in sc.categories if (u := _category_rate(sc, c)) is not None]
    out += [u for u in (_mfu(sc),) if u is not None]
    if sc.tiers is None or not sc.tiers.fast_enabled:
        out = [u for u in out if u.key not in ("tiers.fast_stall_s", "tiers.fast_restore_min")]
    if sc.spares is None or sc.spares.recovery_mode != "continue":  # (the stall of a mode not in use moves nothing)
        out = [u for u in out if u.key != "spares.continue_stall_min"]
    bounds = dict(bounds or {})
    every = out
    out = [u for u in out if not u.needs_bounds or u.key in bounds]
    unknown = [k for k in bounds if k not in {u.key for u in every}]
    if unknown:
        names = ", ".join(u.key for u in every)
        raise ValueError(f"--bounds: no unsure input '{unknown[0]}' in this scenario (its inputs: {names})")
    given = []
    for u in out:
        if u.key not in bounds:
            given.append(u)
            continue
        lo, hi = bounds[u.key]
        if not (lo <= u.value * (1 + 1e-12) and hi >= u.value * (1 - 1e-12)):
            raise ValueError(
                f"--bounds {u.key}: the ends must hold the value entered, {u.value:.6g} {u.unit} (got {lo:g} to {hi:g})"
            )
        ends = f"{lo:g} to {hi:g} {u.unit}".strip()
        given.append(dataclasses.replace(u, low=lo, high=hi, why=f"the ends given ({ends})"))
    return given


def parse_bounds(items: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``KEY=LOW:HIGH`` items (the command line's ``--bounds``) as a mapping; ValueError in words."""
    out: dict[str, tuple[float, float]] = {}
    for item in items:
        key, eq, rest = item.partition("=")
        lo_s, colon, hi_s = rest.partition(":")
        if not eq or not colon or not key.strip():
            raise ValueError(f"--bounds: give INPUT=LOW:HIGH, e.g. detect_min=2:20 (got '{item[:60]}')")
        try:
            lo, hi = float(lo_s), float(hi_s)
        except ValueError:
            raise ValueError(f"--bounds {key.strip()}: LOW and HIGH must be numbers (got '{rest[:40]}')") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo < hi):
            raise ValueError(f"--bounds {key.strip()}: needs 0 <= LOW < HIGH, both finite (got {lo:g} and {hi:g})")
        out[key.strip()] = (lo, hi)
    return out


def tornado(
    sc: Scenario,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    *,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Tornado:
    """Every unsure input of ``sc`` at its two ends, widest bar first (see the module's docstring). An end the
    scenario checks refuse (a time beyond its limit) is left at the scenario's value, with its reason."""
    from ..files.scenario_io import ScenarioError, validate

    inputs = unsure_inputs(sc, bounds)
    ends: list[tuple[Scenario, Scenario]] = []
    for u in inputs:
        try:
            ends.append((validate(u.at(sc, u.low)), validate(u.at(sc, u.high))))
        except ScenarioError as exc:
            raise ValueError(f"{u.key}: an end gives a scenario the model refuses: {exc}") from None
    # (an end may leave the closed form's reach, e.g. slow nodes bracketed from a rate of 0: then all are simulated)
    exact = has_closed_form(sc) and all(has_closed_form(a) and has_closed_form(b) for a, b in ends)
    if exact:
        try:
            return _exact(sc, inputs, ends)
        except NoClosedForm:  # an end leaves the closed form's reach: simulate them all, alike
            pass
    return _paired(sc, inputs, ends, progress, should_stop)


def _bar(
    u: Unsure, g: tuple[float, float], d: tuple[float | None, float | None], c: tuple[float, float], **se: Any
) -> Bar:
    return Bar(u.key, u.label, u.unit, u.value, u.low, u.high, u.why, g[0], g[1], d[0], d[1], c[0], c[1], **se)


def _exact(sc: Scenario, inputs: list[Unsure], ends: list[tuple[Scenario, Scenario]]) -> Tornado:
    base_g = expected_goodput(sc)
    base_d, base_c = days_and_cost(sc, base_g)
    bars = []
    for u, (lo, hi) in zip(inputs, ends):
        g_lo, g_hi = expected_goodput(lo), expected_goodput(hi)
        (d_lo, c_lo), (d_hi, c_hi) = days_and_cost(lo, g_lo), days_and_cost(hi, g_hi)
        bars.append(_bar(u, (g_lo, g_hi), (d_lo, d_hi), (c_lo, c_hi)))
    return Tornado(_sorted(bars), base_g, base_d, base_c, True, None)


def _paired(
    sc: Scenario,
    inputs: list[Unsure],
    ends: list[tuple[Scenario, Scenario]],
    progress: Callable[[float], None] | None,
    should_stop: Callable[[], bool] | None,
) -> Tornado:
    from ..files.scenario_io import ScenarioError
    from .results import simulate_scenarios

    scenarios = [sc, *(s for pair in ends for s in pair)]
    said: list[str | None] = [None] * len(scenarios)  # an end the engine refuses (it would never finish): why
    ran = simulate_scenarios(scenarios, progress=progress, should_stop=should_stop, general=True, refused=said)
    if said[0] is not None:
        raise ScenarioError(said[0])
    runs: list[SimulationResult | str] = [r if why is None else why for r, why in zip(ran, said)]
    base = ran[0]
    base_days, base_cost = per_trial_days_and_cost(base)
    bars = []
    nan = math.nan
    for i, u in enumerate(inputs):
        days: list[float | None] = []
        goodputs: list[float] = []
        costs: list[float] = []
        se_d: list[float | None] = []
        se_g: list[float | None] = []
        refused: list[str | None] = []
        for r in (runs[1 + 2 * i], runs[2 + 2 * i]):
            if isinstance(r, str):
                days.append(None if base_days is None else nan)
                goodputs.append(nan)
                costs.append(nan)
                se_d.append(None)
                se_g.append(None)
                refused.append(r)
                continue
            d, c = per_trial_days_and_cost(r)
            days.append(None if d is None else float(d.mean()))
            goodputs.append(float(r.goodput.mean()))
            costs.append(float(c.mean()))
            se_d.append(None if d is None or base_days is None else _se(d - base_days))
            se_g.append(_se(r.goodput - base.goodput))
            refused.append(None)
        bars.append(
            _bar(
                u,
                (goodputs[0], goodputs[1]),
                (days[0], days[1]),
                (costs[0], costs[1]),
                days_low_se=se_d[0],
                days_high_se=se_d[1],
                goodput_low_se=se_g[0],
                goodput_high_se=se_g[1],
                refused_low=refused[0],
                refused_high=refused[1],
            )
        )
    d0 = None if base_days is None else float(base_days.mean())
    return Tornado(_sorted(bars), float(base.goodput.mean()), d0, float(base_cost.mean()), False, sc.trials)


def _se(values: np.ndarray) -> float:
    return float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0


def _sorted(bars: list[Bar]) -> tuple[Bar, ...]:
    return tuple(sorted(bars, key=lambda b: -b.spread))
