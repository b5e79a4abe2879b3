"""The fit of a log: rates with intervals, the trend, the Weibull shape, and the scenario they make."""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..files.scenario_io import MAX_COMPONENTS, validate
from ..files.values import NAME_MAX_LEN
from ..model.scenario import Component, Profile, Scenario
from ..theory.profiles import power_law_profile
from ..util.fmt import clean
from .logs import (
    _HOURS_PER_SECOND,
    _UTC,
    LEVEL,
    MIN_POINTS,
    IncidentLogError,
    _decode,
    _iso,
    _key_name,
    _llama3,
    _Log,
    _parse,
    _read_bytes,
    parse_time,
)
from .prior import Prior
from .stats import PowerLawFit, TrendTest, WeibullFit, fit_weibull, laplace_test, mil_hdbk_189_test, rate_interval

# -- the fit ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComponentFit:
    """One component's rate, fitted from its ``count`` of incidents in the log over ``exposure_gpu_hours``, and
    the prior's weighted evidence ``prior_count`` over ``prior_exposure_gpu_hours`` (both 0 without a prior, or
    for a cause the prior does not know: :mod:`.prior`).

    The rate is ``(count + prior_count) / (exposure_gpu_hours + prior_exposure_gpu_hours)``, the evidence behind
    it (kept for a model of rate uncertainty) those sums; ``rate_low``/``rate_high`` its 90 % interval;
    ``llama3_rate`` the rate of the Llama 3 cause of the same name (None for another name); ``gpus_affected``
    the GPUs its incidents took out, summed (None when the log has no such column).
    """

    name: str
    category: str
    count: int
    exposure_gpu_hours: float
    rate_per_gpu_hour: float
    rate_low: float
    rate_high: float
    llama3_rate: float | None = None
    gpus_affected: int | None = None
    prior_count: float = 0.0
    prior_exposure_gpu_hours: float = 0.0

    @classmethod
    def of(
        cls,
        name: str,
        category: str,
        count: int,
        exposure: float,
        llama3_rate: float | None = None,
        gpus_affected: int | None = None,
        prior: tuple[float, float] = (0.0, 0.0),
    ) -> ComponentFit:
        """The fit of ``count`` incidents over ``exposure`` GPU-hours, with the prior's weighted ``(count,
        exposure)``."""
        n, e = count + prior[0], exposure + prior[1]
        low, high = rate_interval(n, e)
        return cls(name, category, count, exposure, n / e, low, high, llama3_rate, gpus_affected, *prior)

    @property
    def log_rate(self) -> float:
        """The log's rate alone: its count over its exposure."""
        return self.count / self.exposure_gpu_hours

    @property
    def prior_share(self) -> float:
        """The prior's share of the rate: its exposure's share of the evidence (0 without one)."""
        return self.prior_exposure_gpu_hours / (self.exposure_gpu_hours + self.prior_exposure_gpu_hours)

    @property
    def evidence(self) -> tuple[float, float]:  # (an int count for the log alone)
        """The count and exposure behind the rate: the log's and the prior's together."""
        if not self.prior_exposure_gpu_hours:
            return self.count, self.exposure_gpu_hours
        return self.count + self.prior_count, self.exposure_gpu_hours + self.prior_exposure_gpu_hours

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "category": self.category,
            "count": self.count,
            "exposure_gpu_hours": self.exposure_gpu_hours,
            "rate_per_gpu_hour": self.rate_per_gpu_hour,
            "rate_low": self.rate_low,
            "rate_high": self.rate_high,
            "log_rate_per_gpu_hour": self.log_rate,
            "prior_count": self.prior_count,
            "prior_exposure_gpu_hours": self.prior_exposure_gpu_hours,
            "prior_share": self.prior_share,
            "llama3_rate_per_gpu_hour": self.llama3_rate,
            "gpus_affected": self.gpus_affected,
        }


@dataclass(frozen=True)
class FitResult:
    """What an incident log says: the window, each component's rate, the trend and the Weibull shape.

    ``start_given``/``end_given`` say whether an end of the window was given or is an incident (the first
    or the last); ``notes`` are what the reader should know (a window from the incidents is too short).
    """

    source: str
    gpus: int
    start: datetime
    end: datetime
    start_given: bool
    end_given: bool
    zoned: bool
    components: tuple[ComponentFit, ...]
    total: ComponentFit
    trend: TrendTest
    power_law: PowerLawFit
    weibull: WeibullFit
    notes: tuple[str, ...]
    #: The prior the log was combined with (None: the log alone).
    prior: Prior | None = None

    @property
    def hours(self) -> float:
        return (self.end - self.start).total_seconds() * _HOURS_PER_SECOND

    @property
    def exposure_gpu_hours(self) -> float:
        return self.gpus * self.hours

    def window_text(self, which: str) -> str:
        """The window's ``"start"`` or ``"end"`` as ISO 8601."""
        return _iso(self.start if which == "start" else self.end, self.zoned)

    def scenario_name(self, base_name: str) -> str:
        days = f"{self.hours / 24.0:,.1f}".removesuffix(".0")
        head = f"Fitted from {clean(self.source, 60)} ({self.gpus:,} GPUs, {days} days)"
        _, sep, rest = base_name.partition(_OTHER_INPUTS)
        if sep and base_name.startswith("Fitted from "):  # refitting a fitted scenario: name its base once
            base_name = rest
        name = f"{head}{_OTHER_INPUTS}{base_name}"
        return name if len(name) <= NAME_MAX_LEN else name[: NAME_MAX_LEN - 3].rstrip() + "..."

    def scenario(self, base: Scenario) -> Scenario:
        """``base`` with this log's components, rates and the evidence behind them (each one's count and
        exposure, for rate uncertainty); every other input (GPUs, days, checkpointing, detection, restart,
        planned interruptions, trials) stays the base's. Validated: raises
        :class:`~.scenario_io.ScenarioError` if a rate is out of range."""
        comps = tuple(Component(c.name, c.category, c.rate_per_gpu_hour, *c.evidence) for c in self.components)
        return validate(base.replace(name=self.scenario_name(base.name), components=comps))

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "window": {
                "start": self.window_text("start"),
                "end": self.window_text("end"),
                "hours": self.hours,
                "start_from": "given" if self.start_given else "first incident",
                "end_from": "given" if self.end_given else "last incident",
            },
            "gpus": self.gpus,
            "level": LEVEL,
            "prior": None if self.prior is None else self.prior.to_dict(),
            "components": [c.to_dict() for c in self.components],
            "total": self.total.to_dict(),
            "trend": self.trend.to_dict(),
            "power_law": self.power_law.to_dict(),
            "weibull": self.weibull.to_dict(),
            "notes": list(self.notes),
        }


_OTHER_INPUTS = ", other inputs from "


def _shape_words(low: float, high: float) -> str:
    if high < 1.0:
        return "below 1"
    if low > 1.0:
        return "above 1"
    return "consistent with 1"


def _trend(
    hours: NDArray[np.float64], window: float, start_given: bool, end_given: bool
) -> tuple[TrendTest, PowerLawFit]:
    # An end of the window that is an incident is where the observation stopped, not an observation
    # (given it, the others are uniform under a constant rate), so it is left out.
    u = hours / window
    u = u[1:] if not start_given else u
    u = u[:-1] if not end_given else u
    m = int(u.size)
    if m < MIN_POINTS:
        words = f"too few incidents ({m} inside the window) to test for a trend"
        return TrendTest("Laplace", None, None, m, words), PowerLawFit(None, None, None, None, None, None, m)
    stat_u, p = laplace_test(u)
    # An incident at the very start (tied with the first one) has ln u = -inf: no power law puts one there.
    inside = u[u > 0]
    pl = PowerLawFit(None, None, None, None, None, None, int(inside.size))
    if inside.size >= MIN_POINTS:
        chi2, p_pl, shape, low, high = mil_hdbk_189_test(inside)
        n_counted = inside.size + (0 if end_given else 1)
        scale = window * math.exp(-math.log(n_counted) / shape)  # (T / scale) ** shape = n, without overflow
        pl = PowerLawFit(shape, low, high, scale, chi2, p_pl, int(inside.size))
    if p < 1.0 - LEVEL:
        direction = "rate falling" if stat_u < 0 else "rate rising"
        meaning = "burn-in" if stat_u < 0 else "ageing or wear-out"
    else:
        direction, meaning = "no trend", "constant rate"
    words = f"{direction} (Laplace p = {p:.2g})"
    shown = pl.shape is not None and pl.shape_low is not None and pl.shape_high is not None
    if shown:
        words += f", power-law shape {pl.shape:.2f} ({pl.shape_low:.2f}-{pl.shape_high:.2f})"
    if direction == "no trend" and shown and not (pl.shape_low or 0.0) <= 1.0 <= (pl.shape_high or 0.0):
        # The tests weigh the times differently (Laplace their mean, the power law their logarithms: the first
        # incidents most): a burst, or a change part-way, can fail one and not the other.
        its_p = f" (its test p = {pl.p_value:.2g})" if pl.p_value is not None else ""
        words = (
            f"no steady trend: the Laplace test finds none (p = {p:.2g}) but the power law's shape, {pl.shape:.2f} "
            f"({pl.shape_low:.2f}-{pl.shape_high:.2f}), is not 1{its_p}; the times are not one trend (a burst, or "
            "a change part-way through): read the rates as the window's averages"
        )
        return TrendTest("Laplace", stat_u, p, m, words), pl
    words += f": {meaning}"
    if direction != "no trend" and pl.shape is not None:
        words += f"; the rate at the window's end is about {pl.shape:.2f}x its average"
    return TrendTest("Laplace", stat_u, p, m, words), pl


#: Above this Weibull shape the gaps are all about equal: no shape is given (the fit of equal gaps has none).
MAX_SHAPE = 50.0


def _weibull(hours: NDArray[np.float64], window: float, end_given: bool, trend: bool) -> tuple[WeibullFit, int]:
    gaps = np.diff(hours)
    ties = int(np.count_nonzero(gaps <= 0))
    gaps = gaps[gaps > 0]
    open_gap = window - float(hours[-1]) if end_given else 0.0
    cens = np.array([open_gap]) if open_gap > 0 else np.empty(0)
    if gaps.size < MIN_POINTS:
        words = f"too few times between incidents ({gaps.size}) to fit a shape"
        return WeibullFit(None, None, None, None, int(gaps.size), int(cens.size), words), ties
    k, scale, low, high = (
        fit_weibull(gaps, cens) if float(gaps.min()) < float(gaps.max()) else (math.inf, 0.0, math.inf, math.inf)
    )
    if k > MAX_SHAPE:  # all the gaps about equal: the likelihood has no useful maximum (it ran to 1,000,000)
        words = (
            f"times between incidents all about equal ({gaps.size} from {float(gaps.min()):.3g} to "
            f"{float(gaps.max()):.3g} h): far more regular than at random (a Weibull shape above {MAX_SHAPE:g}); "
            "incidents at set times (a schedule, or times rounded to a grid) rather than failures?"
        )
        return WeibullFit(None, None, None, None, int(gaps.size), int(cens.size), words), ties
    where = _shape_words(low, high)
    meaning = {
        "below 1": "incidents come in bursts (one is often soon followed by another)",
        "above 1": "incidents are more regular than at random",
        "consistent with 1": "as at random",
    }[where]
    words = f"times between incidents: Weibull shape {k:.2f} ({low:.2f}-{high:.2f}), {where}: {meaning}"
    if trend:
        words += " (a trend alone spreads the gaps a little, pulling the shape below 1)"
    return WeibullFit(k, low, high, scale, int(gaps.size), int(cens.size), words), ties


def _window_time(value: datetime | str | None, what: str) -> datetime | None:
    if value is None or isinstance(value, datetime):
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=_UTC)
        return value
    try:
        return parse_time(value)[0]
    except ValueError as exc:
        raise IncidentLogError(f"{what}: '{clean(value, 40)}' {exc}") from None


def _read_source(path_or_text: str | bytes | os.PathLike[str]) -> tuple[str, str | None]:
    """The log's text and its file's name (None for a log given as text or bytes).

    A ``str`` with a line break is the log itself, any other a path.
    """
    if isinstance(path_or_text, (bytes, bytearray)):
        return _decode(bytes(path_or_text)), None
    if isinstance(path_or_text, str) and ("\n" in path_or_text or "\r" in path_or_text):
        # Through bytes, so that text and files meet the same size limit and byte-order mark rule.
        return _decode(path_or_text.encode("utf-8", "surrogatepass")), None
    data = _read_bytes(path_or_text)
    name = Path(os.fsdecode(os.fspath(path_or_text))).name
    try:
        return _decode(data), name
    except IncidentLogError as exc:
        raise IncidentLogError(f"{clean(name, 80)}: {exc}") from None


def fit_log(
    path_or_text: str | bytes | os.PathLike[str],
    gpus: int,
    start: datetime | str | None = None,
    end: datetime | str | None = None,
    prior: Prior | None = None,
) -> FitResult:
    """Fit an incident log of a cluster of ``gpus`` GPUs over the window ``[start, end]``, combined with
    ``prior`` (None: the log alone; :func:`.prior.llama3_prior` is the command line's and the window's default).

    Parameters
    ----------
    path_or_text
        A path, or the log itself (bytes, or text with at least one line break).
    gpus
        GPUs in the cluster the log watched: the exposure is ``gpus`` x the window's hours.
    start, end
        The window (ISO 8601 text or datetimes; no zone means UTC). Each defaults to the first or last
        incident, which makes the window too short by about two gaps between incidents (noted).

    Raises
    ------
    IncidentLogError
        With one line naming the problem (and its line in the file): missing columns, a bad timestamp,
        no incidents, an end not after the start, an incident outside the window, not UTF-8, too large.
    """
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= 10_000_000:
        raise IncidentLogError(f"gpus: must be a whole number from 1 to 10,000,000 (got {clean(repr(gpus), 30)})")
    t0, t1 = _window_time(start, "start"), _window_time(end, "end")
    if t0 is not None and t1 is not None and t1 <= t0:
        raise IncidentLogError(f"the window's end ({_iso(t1, True)}) is not after its start ({_iso(t0, True)})")
    text, name = _read_source(path_or_text)
    try:
        return _fit(_parse(text, gpus), name or "incident log", gpus, t0, t1, prior)
    except IncidentLogError as exc:
        if name is None:
            raise
        raise IncidentLogError(f"{clean(name, 80)}: {exc}") from None


def _outside(times: list[datetime], t0: datetime | None, t1: datetime | None) -> tuple[int, datetime, str] | None:
    """The first incident (in file order) outside the window, its bound and which side, or None."""
    for i, t in enumerate(times):
        if t0 is not None and t < t0:
            return i, t0, "before the window's start"
        if t1 is not None and t > t1:
            return i, t1, "after the window's end"
    return None


def _component_fits(log: _Log, exposure: float, prior: Prior | None) -> tuple[tuple[ComponentFit, ...], ComponentFit]:
    """Each component's fit, the log's first (most incidents first, then in Llama 3's order, then the log's), then
    the prior's causes the log never saw (in the prior's order), and the total."""
    counts: dict[str, int] = {}
    hit: dict[str, int] = {}
    for i, key in enumerate(log.keys):
        counts[key] = counts.get(key, 0) + 1
        if log.gpus_hit is not None:
            hit[key] = hit.get(key, 0) + (log.gpus_hit[i] or 0)
    llama = _llama3()
    rank = {k: i for i, k in enumerate(llama)}
    first_seen = {k: i for i, k in reversed(list(enumerate(log.keys)))}
    known = {_key_name(c.name): c for c in prior.causes} if prior is not None else {}
    fits = []
    for key in sorted(counts, key=lambda k: (-counts[k], rank.get(k, len(rank)), first_seen[k])):
        ref = llama.get(key)
        cause = known.get(key)
        fits.append(
            ComponentFit.of(
                log.names[key],
                log.categories.get(key) or (ref.category if ref is not None else "Unknown"),
                counts[key],
                exposure,
                ref.rate_per_gpu_hour if ref is not None else None,
                hit.get(key) if log.gpus_hit is not None else None,
                prior.weighted(cause) if prior is not None and cause is not None else (0.0, 0.0),
            )
        )
    if prior is not None:
        for key, cause in known.items():
            if key in counts:
                continue
            ref = llama.get(key)
            fits.append(
                ComponentFit.of(
                    cause.name,
                    cause.category,
                    0,
                    exposure,
                    ref.rate_per_gpu_hour if ref is not None else None,
                    0 if log.gpus_hit is not None else None,
                    prior.weighted(cause),
                )
            )
    if len(fits) > MAX_COMPONENTS:  # a scenario holds at most MAX_COMPONENTS: said here, where the count is known
        raise IncidentLogError(
            f"the log's {len(counts)} components and the {len(fits) - len(counts)} causes of the prior it never saw "
            f"make {len(fits)}; a scenario holds at most {MAX_COMPONENTS}: fit the log alone (prior none) or fold "
            "some of its components into fewer"
        )
    llama_total = math.fsum(c.rate_per_gpu_hour for c in llama.values())
    all_hit = sum(hit.values()) if log.gpus_hit is not None else None
    # The total: the sum of the components' rates (what the scenario made of them has), its evidence their summed
    # counts at the exposure that keeps that rate (the pooled ratio of all counts to all exposures said 0.556 per
    # 1,000 GPU-days beside components adding up to 0.559). Without a prior it is the log's count over its exposure.
    n_all = math.fsum(c.count + c.prior_count for c in fits)
    rate_all = math.fsum(c.rate_per_gpu_hour for c in fits)
    e_all = n_all / rate_all if rate_all > 0 else exposure
    prior_total = (n_all - len(log.keys), max(e_all - exposure, 0.0))
    total = ComponentFit.of("All components", "", len(log.keys), exposure, llama_total, all_hit, prior_total)
    return tuple(fits), total


def _fit(log: _Log, source: str, gpus: int, t0: datetime | None, t1: datetime | None, prior: Prior | None) -> FitResult:
    zoned = log.zoned
    outside = _outside(log.times, t0, t1)
    if outside is not None:
        i, bound, word = outside
        raise IncidentLogError(
            f"line {log.lines[i]}: the incident at {_iso(log.times[i], zoned)} is {word} ({_iso(bound, zoned)}); "
            "widen the window or leave the incident out"
        )
    first, last = min(log.times), max(log.times)
    start = t0 if t0 is not None else first
    end = t1 if t1 is not None else last
    if end <= start:
        why = "one incident" if len(log.times) == 1 else f"all {len(log.times)} incidents at one time"
        raise IncidentLogError(f"{why} and no window: give the window's start and end")
    window = (end - start).total_seconds() * _HOURS_PER_SECOND
    exposure = gpus * window
    order = sorted(range(len(log.times)), key=lambda i: log.times[i])
    hours = np.array([(log.times[i] - start).total_seconds() * _HOURS_PER_SECOND for i in order])

    fits, total = _component_fits(log, exposure, prior)
    trend, power_law = _trend(hours, window, t0 is not None, t1 is not None)
    weibull, ties = _weibull(hours, window, t1 is not None, trend.p_value is not None and trend.p_value < 1 - LEVEL)
    notes = _notes(log, t0 is not None, t1 is not None, ties, prior, exposure, total.rate_per_gpu_hour)
    quiet = _quiet_stretch(sorted(log.times), start, end, log.zoned)
    if quiet:
        notes = (quiet, *notes)
    return FitResult(
        source,
        gpus,
        start,
        end,
        t0 is not None,
        t1 is not None,
        zoned,
        fits,
        total,
        trend,
        power_law,
        weibull,
        notes,
        prior,
    )


def _disagreement(count: int, exposure: float, prior: Prior, fitted: float) -> str:
    """A note when the log's own total rate and the prior's disagree (the prior's outside the log's 90% interval)
    and the fit, ``fitted``, has been pulled out of the log's interval by it: the fit then holds neither."""
    low, high = rate_interval(count, exposure)
    prior_rate = math.fsum(c.count / c.exposure_gpu_hours for c in prior.causes if c.exposure_gpu_hours > 0)
    if low <= prior_rate <= high or low <= fitted <= high:
        return ""
    per = 24_000.0  # GPU-hours in 1,000 GPU-days
    own = count / exposure
    word = "higher" if prior_rate < low else "lower"
    share = prior.exposure_gpu_hours / (prior.exposure_gpu_hours + exposure)
    return (
        f"The log and the prior disagree: the log's own rate, {own * per:.3g} per 1,000 GPU-days (90% interval "
        f"{low * per:.3g}-{high * per:.3g}), is {word} than the prior's, {prior_rate * per:.3g}, and the fit, "
        f"{fitted * per:.3g}, is {fitted / own:.0%} of the log's own, outside its interval: the prior holds "
        f"{share:.0%} of the evidence. If this cluster is unlike the prior's, weigh the prior less (--prior-weight) "
        "or fit the log alone (--prior none)."
    )


#: A stretch without incidents longer than this share of the window is worth a look (a mistyped year, a window
#: far from the incidents): among n incidents at a constant rate, one of the n + 1 stretches exceeds half the
#: window with probability (n + 1) / 2^n, 0.3% at 12 incidents and less beyond.
QUIET_SHARE = 0.5
QUIET_MIN_INCIDENTS = 12


def _quiet_stretch(times: list[datetime], start: datetime, end: datetime, zoned: bool) -> str:
    """A note when one stretch without incidents (between two, or from an end of the window to the nearest) is
    more than :data:`QUIET_SHARE` of the window: the rates are spread over it."""
    if len(times) < QUIET_MIN_INCIDENTS:
        return ""
    marks = [start, *times, end]
    gaps = [(b - a, a, b) for a, b in itertools.pairwise(marks)]
    longest, a, b = max(gaps, key=lambda g: g[0])
    window = end - start
    if longest <= window * QUIET_SHARE:
        return ""
    return (
        f"{longest / window:.0%} of the window ({_span(longest)} of {_span(window)}) has no incident: from "
        f"{_iso(a, zoned)} to {_iso(b, zoned)}. If a timestamp is mistyped or the window's start or end is far from "
        "the incidents, the rates are spread over time nobody watched."
    )


def _span(d: timedelta) -> str:
    days = d.total_seconds() / 86_400.0
    return f"{days / 365.25:,.1f} years" if days > 730 else f"{days:,.1f} days"


def _notes(
    log: _Log, start_given: bool, end_given: bool, ties: int, prior: Prior | None, exposure: float, fitted: float
) -> tuple[str, ...]:
    """What the reader of a fit should know: a window that is too short, times read as UTC, and so on."""
    notes = []
    n = len(log.times)
    if not (start_given and end_given):
        which = {
            (False, False): "runs from the first incident to the last",
            (True, False): "ends at the last incident",
            (False, True): "starts at the first incident",
        }[(start_given, end_given)]
        # For a constant rate, the first and last of n incidents fall on average 1/(n+1) of the window
        # inside its ends, so a window from the first to the last is short by 2/(n+1) and its rates high
        # by about 2/(n-1); half that with one end given.
        bias = (1.0 if start_given or end_given else 2.0) / max(n - 1, 1)
        by = f"{bias:.0%}" if bias >= 0.095 else f"{bias:.1%}" if bias >= 0.001 else "less than 0.1%"
        notes.append(
            f"The window {which}, so it is too short and the rates too high by about {by}; "
            "give its start and end when you know them (--start and --end on the command line; Window start and "
            "Window end in Import Incident Log)."
        )
    if not log.zoned:
        notes.append("The timestamps have no time zone: read as UTC.")
    if ties:
        # Ties are gaps shorter than the timestamps' resolution; leaving them out leaves out the shortest gaps.
        notes.append(
            f"{ties:,} incident(s) at the same time as the one before: left out of the Weibull fit, which makes "
            "its shape a little too high when they are many (finer timestamps avoid it)."
        )
    if log.ignored:
        notes.append(f"Columns ignored: {', '.join(log.ignored)}.")
    llama = _llama3()
    seen = set(log.keys)
    if prior is not None:
        share = prior.exposure_gpu_hours / (prior.exposure_gpu_hours + exposure)
        unseen = [c.name for c in prior.causes if _key_name(c.name) not in seen]
        notes.append(
            f"Prior: {prior.describe()} beside the log's {exposure / 24.0:,.0f} GPU-days, so each cause both know "
            f"is {share:.0%} the prior's rate and {1 - share:.0%} the log's"
            + (f"; the {len(unseen)} causes the log never saw keep the prior's weighted rate" if unseen else "")
            + " (--prior none: the log alone)."
        )
        disagree = _disagreement(n, exposure, prior, fitted)
        if disagree:
            notes.append(disagree)
        moved = [
            (c, log.categories[_key_name(c.name)])
            for c in prior.causes
            if (log.categories.get(_key_name(c.name)) or c.category) != c.category
        ]
        if moved:
            shown = "; ".join(f"'{clean(c.name, 40)}' is {clean(cat or '', 30)}, {clean(c.category, 30)} in the prior"
                              for c, cat in moved[:3])  # fmt: skip
            more = f" (and {len(moved) - 3} more)" if len(moved) > 3 else ""
            notes.append(
                f"The log puts causes the prior knows in other categories: {shown}{more}. The log's category is "
                "kept, with the prior's evidence (a category sets the default repair time)."
            )
        return tuple(notes)
    missing = [k for k in llama if k not in seen]
    if len(missing) == len(llama):
        notes.append("No component is named as a Llama 3 cause (Table 5), so there are no Llama 3 rates beside them.")
    elif missing:
        notes.append(
            f"Llama 3 causes not in the log (no rate fitted, so rate 0): {', '.join(llama[k].name for k in missing)}; "
            "a prior keeps them (--prior llama3)."
        )
    return tuple(notes)


def profile_from_fit(fit: FitResult, days: float, start_day: float = 0.0) -> Profile:
    """:func:`..theory.profiles.power_law_profile` of an incident log's fit (its power-law shape and window).

    Raises
    ------
    ValueError
        When the fit found no power law (too few incidents).
    """
    shape = fit.power_law.shape
    if shape is None:
        raise ValueError("the incident log's fit has no power law (too few incidents for a trend)")
    return power_law_profile(shape, fit.hours, days, start_day)
