"""The scenario being edited in the window: one observable source of inputs.

Every control of the window writes to an :class:`Inputs` and follows it; the window subscribes to
:attr:`Inputs.changed`. The scenario is the only state: the rate multipliers the controls show are
derived from it, relative to *reference rates* (the Llama 3 rate of a component of that name, or the
rate it had when the scenario was opened), so a saved "GPU x2" still reads x2 when the file is opened
again. "Unsaved changes" is a comparison with the scenario as last opened or saved.

Every change is a step of an undo history (:meth:`Inputs.undo`, :meth:`Inputs.redo`): a state is the scenario,
its reference rates and the *document* it belongs to (the file it was opened from or saved to, and the
scenario as saved there), so undoing an open, a preset or a fit goes back to the scenario and the file that
were being edited before. Changes of the same inputs in quick succession (a slider dragged, a box stepped
with its arrows, a name typed) are one step.

Qt-free (events by psygnal), so it is tested without a display.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from psygnal import Signal

from ..files.presets import preset_titles
from ..model.scenario import OPTIMAL, Component, Scenario, Scope, Tiers, llama3_components
from ..model.spares import Spares, restart_scenario
from ..model.tiers import scope_of
from ..sim.tiers_run import plan_tiers
from ..theory.params import daly_minutes
from ..util import fmt

__all__ = [
    "COMPUTED_FIELDS",
    "EDITED_FROM",
    "HISTORY_STEPS",
    "MERGE_SECONDS",
    "Document",
    "Inputs",
    "describe_changes",
    "edited_preset_name",
    "reference_rates",
]

#: Fields whose change needs a new Monte Carlo run (the name and the price do not).
COMPUTED_FIELDS = frozenset(f.name for f in dataclasses.fields(Scenario)) - {
    "name",
    "gpu_hour_cost_usd",
    "lever_prices",
}
#: The name of an edited preset, made from the inputs so that it follows them: "100,000 GPUs, 54 days (edited
#: from Llama 3 405B)". A preset's own name describes its inputs ("Llama 3 405B (16,384 H100, 54 days)"), which
#: would go stale ("... (edited)" on a 100,000-GPU file, a 94,000-GPU x 365-day scenario called "1,048,576
#: GPUs ... 54 days" in the quit dialog).
EDITED_FROM = "{gpus:,} GPUs, {days:g} {day_word} (edited from {origin})"
_EDITED_FROM = re.compile(r"^[\d,]+ GPUs?, [\d.e+-]+ days? \(edited from (?P<origin>.+)\)$")
#: Changes of the same inputs closer together than this (seconds) are one undo step.
MERGE_SECONDS = 1.0
#: Undo steps kept (the oldest are forgotten).
HISTORY_STEPS = 200


@lru_cache(maxsize=1)
def _llama3_rates() -> dict[str, float]:
    return {c.name: c.rate_per_gpu_hour for c in llama3_components()}


@lru_cache(maxsize=1)
def _preset_names() -> frozenset[str]:
    return frozenset(preset_titles().values())


def _origin(name: str) -> str | None:
    """The preset an automatic name comes from ("Llama 3 405B"), or None for a name somebody chose."""
    if name in _preset_names():
        return name.split(" (", 1)[0]  # the preset's title without its description of the inputs
    m = _EDITED_FROM.match(name)
    return m["origin"] if m else None


def edited_preset_name(scenario: Scenario, origin: str) -> str:
    """The name of ``scenario``, an edit of the preset titled ``origin`` (its short title)."""
    day_word = "day" if scenario.days == 1 else "days"
    return EDITED_FROM.format(gpus=scenario.gpus, days=scenario.days, day_word=day_word, origin=origin)


def reference_rates(components: Iterable[Component]) -> dict[str, float]:
    """The rate each component's multiplier is relative to: Llama 3's for a Llama 3 cause, else its own."""
    llama = _llama3_rates()
    return {c.name: llama.get(c.name, c.rate_per_gpu_hour) for c in components}


#: How each computed input is named and shown in a description of changes.
_LABELS = (
    ("gpus", "GPUs", "{:,.0f}"),
    ("gpus_per_node", "GPUs per node", "{:,}"),
    ("days", "days", "{:g}"),
    ("planned_per_day", "planned per day", "{:.3g}"),
    ("checkpoint_interval_min", "interval", "{} min"),
    ("checkpoint_write_s", "write", "{:g} s"),
    ("detect_min", "detection", "{:g} min"),
    ("restart_min", "restart", "{:g} min"),
    ("restart_per_log2_gpus_min", "restart growth", "{:g} min per doubling"),
    ("slow_rate_per_gpu_hour", "fail-slow rate", "{:.3g} per GPU-hour"),
    ("slow_factor", "speed while slow", "{:g}"),
    ("slow_detect_min", "slow-node detection", "{:g} min"),
    ("save_fail_p", "failed saves", "{:.3g}"),
    ("restore_fail_p", "failed fast restores", "{:.3g}"),
    ("correlated_rate_per_day", "correlated failures", "{:.3g} per day"),
    ("correlated_domains", "domains per correlated event", "{:,}"),
    ("correlated_repair_hours", "correlated repair", "{:g} h"),
    ("nvlink_gpus", "NVLink domain", "{:,} GPUs"),
    ("rack_spare_trays", "warm spare trays", "{:,} per rack"),
    ("rack_move_min", "rack move", "{:g} min"),
    ("sdc_detect_hours", "corruption found after", "{:g} h"),
    ("retained_checkpoints", "checkpoints kept", "{:,}"),
    ("bad_share", "bad nodes", "{:.3g}"),
    ("bad_multiplier", "bad node's failures", "{:g}x"),
    ("diagnosis_p", "right node pulled", "{:.3g}"),
    ("repair_fail_p", "repairs that fail", "{:.3g}"),
    ("trials", "trials", "{:,}"),
    ("seed", "seed", "{}"),
)


def parse_detect_by(text: str) -> tuple[tuple[str, float], ...]:
    """Detection by cause as typed in the window or a flag: "NCCL Watchdog Timeouts=15; GPU=0.1" (entries separated
    by ';', each NAME=MINUTES, each name once; numbers as the number boxes read them); empty: none. Raises ValueError
    with a one-line reason. The names and ranges are the scenario's to check (:func:`.scenario_io.validate`)."""
    out: dict[str, float] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        name, eq, value = part.rpartition("=")
        if not eq or not name.strip():
            raise ValueError(f"give NAME=MINUTES, e.g. NCCL Watchdog Timeouts=15 (got '{part.strip()[:40]}')")
        if "=" in name:
            raise ValueError(f"separate entries with ';' (got '{part.strip()[:40]}')")
        if name.strip() in out:
            raise ValueError(f"{name.strip()[:40]}: given twice (each name once)")
        minutes = fmt.read_number(value.strip()) if value.strip().isascii() else None
        if minutes is None or not math.isfinite(minutes):
            raise ValueError(f"{name.strip()[:40]}: minutes must be a number (got '{value.strip()[:20]}')")
        out[name.strip()] = float(minutes)
    return tuple(out.items())


def parse_weibull(text: str) -> tuple[tuple[str, float, float | None], ...]:
    """Node lives as typed in the window or a flag: "Faulty GPU=0.7,200000; GPU HBM3 Memory=2" (entries separated by
    ';', each COMPONENT=SHAPE or COMPONENT=SHAPE,SCALE_HOURS, each name once; without a scale the component's rate
    gives it); empty: none. Raises ValueError with a one-line reason. The names and ranges are the scenario's to check
    (:func:`.scenario_io.validate`)."""
    out: dict[str, tuple[float, float | None]] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        name, eq, value = part.rpartition("=")
        name = name.strip()
        if not eq or not name:
            raise ValueError(
                f"give COMPONENT=SHAPE,SCALE_HOURS, e.g. Faulty GPU=0.7,200000 (got '{part.strip()[:40]}')"
            )
        if "=" in name:
            raise ValueError(f"separate entries with ';' (got '{part.strip()[:40]}')")
        if name in out:
            raise ValueError(f"{name[:40]}: given twice (each name once)")
        shape_text, comma, scale_text = value.partition(",")
        shape = _number(shape_text)
        if shape is None:
            raise ValueError(f"{name[:40]}: the shape must be a number (got '{shape_text.strip()[:20]}')")
        scale = _number(scale_text) if comma else None
        if comma and scale is None:
            raise ValueError(f"{name[:40]}: the scale must be a number of hours (got '{scale_text.strip()[:20]}')")
        out[name] = (shape, scale)
    return tuple((name, shape, scale) for name, (shape, scale) in out.items())


def _number(text: str) -> float | None:
    """A finite number as the number boxes read it, or None."""
    value = fmt.read_number(text.strip()) if text.strip().isascii() else None
    return float(value) if value is not None and math.isfinite(value) else None


def weibull_entry(sc: Scenario) -> str:
    """The text :func:`parse_weibull` reads back to the scenario's node lives (scales to 6 significant digits)."""
    comps = {c.name: c for c in sc.components}
    parts = []
    for name, shape in sc.weibull:
        if name not in comps:
            continue
        scale = sc.weibull_scale_hours(comps[name])
        parts.append(f"{name}={shape:g}" + (f",{scale:.6g}" if math.isfinite(scale) else ""))
    return "; ".join(parts)


def detect_by_entry(pairs: Iterable[tuple[str, float]]) -> str:
    """The text :func:`parse_detect_by` reads back to ``pairs``."""
    return "; ".join(f"{name}={minutes:g}" for name, minutes in pairs)


def _spares_changes(old: Scenario, new: Scenario) -> list[str]:
    """The spares inputs that differ, for people: "spare nodes unlimited -> 89; recovery mode continue"."""
    a, b = old.spares or Spares(), new.spares or Spares()
    items = []
    if a.spare_nodes != b.spare_nodes:
        shown = ["unlimited" if v is None else f"{v:,}" for v in (a.spare_nodes, b.spare_nodes)]
        items.append(f"spare nodes {shown[0]} -> {shown[1]}")
    if a.swap_min != b.swap_min:
        items.append(f"swap {a.swap_min:g} -> {b.swap_min:g} min")
    if a.recovery_mode != b.recovery_mode:
        items.append(f"recovery mode {b.recovery_mode}")
    if not items:
        items.append("spares changed")
    return items


def describe_changes(old: Scenario, new: Scenario, limit: int = 4) -> str:
    """What differs between two scenarios' computed inputs, for people: "detection 5.4 -> 5.5 min;
    Faulty GPU rate x2". At most ``limit`` items, then "and N more"."""
    items = []
    if old.detect_by != new.detect_by:
        old_by, new_by = detect_by_entry(old.detect_by) or "none", detect_by_entry(new.detect_by) or "none"
        items.append(f"detection by cause {old_by} -> {new_by}")
    if old.weibull != new.weibull:
        items.append(f"node lives {new.weibull_text(short=True) or 'exponential'}")
    for field, label, form in _LABELS:
        a, b = getattr(old, field), getattr(new, field)
        if a != b:
            shown = ["optimal" if v == OPTIMAL else form.format(v) for v in (a, b)]
            items.append(f"{label} {shown[0].split(' ')[0]} -> {shown[1]}")
    if old.rate_uncertainty != new.rate_uncertainty:
        items.append(f"rate uncertainty {'on' if new.rate_uncertainty else 'off'}")
    if old.rate_profile != new.rate_profile:
        items.append("rate profile " + ("removed" if new.rate_profile is None else "changed"))
    if old.new_cluster != new.new_cluster:
        items.append(f"new cluster {'on' if new.new_cluster else 'off'}")
    if old.training != new.training:
        on = [t is not None for t in (old.training, new.training)]
        items.append(f"training run {'on' if on[1] else 'off'}" if on[0] != on[1] else "training run changed")
    if old.storage != new.storage:
        on = [t is not None for t in (old.storage, new.storage)]
        items.append(f"storage model {'on' if on[1] else 'off'}" if on[0] != on[1] else "storage changed")
    if old.tiers != new.tiers:
        on = [t is not None and t.fast_enabled for t in (old.tiers, new.tiers)]
        items.append(f"fast tier {'on' if on[1] else 'off'}" if on[0] != on[1] else "recovery tiers changed")
    if old.spares != new.spares:
        items += _spares_changes(old, new)
    scopes = {c.name: scope_of(c) for c in old.components}
    before = {c.name: c.rate_per_gpu_hour for c in old.components}
    for c in new.components:
        was = before.pop(c.name, None)
        if was is None:
            items.append(f"{c.name} added")
        elif was != c.rate_per_gpu_hour:
            items.append(f"{c.name} rate x{c.rate_per_gpu_hour / was:.3g}" if was > 0 else f"{c.name} rate from 0")
        if was is not None and scopes[c.name] != scope_of(c):
            items.append(f"{c.name} scope {scopes[c.name]} -> {scope_of(c)}")
    items += [f"{name} removed" for name in before]
    more = len(items) - limit
    return "; ".join(items[:limit]) + (f"; and {more} more" if more > 0 else "")


def _differing(a: Scenario, b: Scenario) -> frozenset[str]:
    """The fields of two scenarios that differ."""
    return frozenset(f.name for f in dataclasses.fields(Scenario) if getattr(a, f.name) != getattr(b, f.name))


def _step_text(old: Scenario, new: Scenario) -> str:
    """A step of the undo history, for people: "detection 5 -> 4 min", "name", "price"."""
    text = describe_changes(old, new, limit=2)
    if text:
        return text
    if old.name != new.name:
        return "name"
    return "price" if old.gpu_hour_cost_usd != new.gpu_hour_cost_usd else "inputs"


def _ratio(value: float, reference: float) -> float:
    if reference > 0:
        return value / reference
    return 1.0 if value == 0 else math.inf


@dataclasses.dataclass(eq=False)
class Document:
    """Where the scenario being edited belongs: ``path`` (the window's file, None when untitled) and the
    scenario as last opened from or saved there. Mutable: saving updates the document of every undo state
    that shares it."""

    saved: Scenario
    path: Any = None


@dataclasses.dataclass(frozen=True)
class _State:
    scenario: Scenario
    reference: dict[str, float]
    document: Document


class Inputs:
    """The scenario being edited, with its undo history.

    ``changed`` is emitted with the frozenset of field names that changed (after the change, an undo or a
    redo); ``historyChanged`` after any change of what can be undone or redone.
    """

    changed = Signal(frozenset)
    historyChanged = Signal()

    def __init__(self, scenario: Scenario, *, path: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._scenario = scenario
        self._document = Document(saved=scenario, path=path)
        self._reference = reference_rates(scenario.components)
        self._clock = clock
        self._undo: list[tuple[_State, str]] = []  # (the state before a step, the step), oldest first
        self._redo: list[tuple[_State, str]] = []  # (the state after an undone step, the step), last undone last
        self._last_step: tuple[frozenset[str], float] | None = None  # (fields, time) of a step that may grow

    # -- reading ---------------------------------------------------------------------------
    @property
    def scenario(self) -> Scenario:
        return self._scenario

    @property
    def saved(self) -> Scenario:
        """The scenario as last opened or saved."""
        return self._document.saved

    @property
    def path(self) -> Any:
        """The file of the scenario being edited (the window's), None when untitled."""
        return self._document.path

    @path.setter
    def path(self, value: Any) -> None:
        self._document.path = value

    @property
    def dirty(self) -> bool:
        return self._scenario != self._document.saved

    def interval_minutes(self) -> float:
        """The (persistent) checkpoint interval in use: the fixed one, or Daly's optimum when 'optimal'.
        With a recovery strategy, the one its plan uses (docs/tiers.md: 'optimal' is that model's optimum,
        and with the fast tier on the interval is a whole number of fast intervals)."""
        sc = self._scenario
        if sc.uses_tiers:
            try:
                return plan_tiers(sc).persistent_min
            except ValueError:  # a strategy that cannot be (replicas that do not fit): the window says why
                pass
        if not sc.uses_optimal_interval:
            return float(sc.checkpoint_interval_min)
        return daly_minutes(restart_scenario(sc) if sc.uses_spares else sc)  # continue mode: the restarts' Daly

    def fast_interval_minutes(self) -> float | None:
        """The fast tier's interval in use (its optimum when 'optimal'); None with the fast tier off."""
        sc = self._scenario
        if sc.tiers is None or not sc.tiers.fast_enabled:
            return None
        try:
            return plan_tiers(sc).fast_min
        except ValueError:  # a strategy that cannot be: the interval as set (or None when 'optimal')
            t = sc.tiers.fast_interval_min
            return None if isinstance(t, str) else float(t)

    def reference_rate(self, name: str) -> float:
        return self._reference[name]

    def multiplier(self, name: str) -> float:
        """A component's rate over its reference rate."""
        return _ratio(self._rate(name), self._reference[name])

    def category_multiplier(self, category: str) -> float:
        """The category's total rate over its total reference rate."""
        comps = [c for c in self._scenario.components if c.category == category]
        return _ratio(math.fsum(c.rate_per_gpu_hour for c in comps), math.fsum(self._reference[c.name] for c in comps))

    def total_multiplier(self) -> float:
        """The total rate over the total reference rate."""
        return _ratio(self._scenario.rate_per_gpu_hour, math.fsum(self._reference.values()))

    def _rate(self, name: str) -> float:
        return next(c.rate_per_gpu_hour for c in self._scenario.components if c.name == name)

    # -- history -------------------------------------------------------------------------------
    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    @property
    def undo_text(self) -> str:
        """The step an undo takes back, for people ("detection 5 -> 4 min"; "" when there is none)."""
        return self._undo[-1][1] if self._undo else ""

    @property
    def redo_text(self) -> str:
        """The step a redo makes again ("" when there is none)."""
        return self._redo[-1][1] if self._redo else ""

    def undo(self) -> bool:
        """Go back one step (False when there is none)."""
        return self._travel(self._undo, self._redo)

    def redo(self) -> bool:
        """Make the last undone step again (False when there is none)."""
        return self._travel(self._redo, self._undo)

    def close_step(self) -> None:
        """The next change starts a new undo step even if it follows at once (a slider let go)."""
        self._last_step = None

    def _travel(self, source: list[tuple[_State, str]], target: list[tuple[_State, str]]) -> bool:
        if not source:
            return False
        state, what = source.pop()
        target.append((self._state(), what))
        old = self._scenario
        self._scenario, self._reference, self._document = state.scenario, state.reference, state.document
        self._last_step = None
        self.changed.emit(_differing(old, self._scenario))
        self.historyChanged.emit()
        return True

    def _state(self) -> _State:
        return _State(self._scenario, self._reference, self._document)

    def _merges(self, fields: frozenset[str]) -> bool:
        """Whether a change of ``fields`` now is part of the last step."""
        last = self._last_step
        return bool(self._undo) and last is not None and last[0] == fields and self._clock() - last[1] < MERGE_SECONDS

    def _record(self, fields: frozenset[str], new: Scenario, what: str = "", *, merge: bool) -> None:
        """Record the state before a change of ``fields`` to ``new`` as an undo step (or let the last step
        grow, when ``merge`` and it changed the same inputs a moment ago)."""
        if merge and self._merges(fields):
            before = self._undo[-1][0]
        else:
            before = self._state()
            self._undo.append((before, ""))
            del self._undo[:-HISTORY_STEPS]
        self._undo[-1] = (before, what or _step_text(before.scenario, new))
        self._last_step = (fields, self._clock()) if merge else None
        self._redo.clear()
        self.historyChanged.emit()

    # -- writing ---------------------------------------------------------------------------
    def load(self, scenario: Scenario, *, saved: bool = True, path: Any = None, what: str = "") -> None:
        """Start editing ``scenario`` (opened from ``path``, a preset, or new): it is the reference, and the
        saved state unless ``saved`` is false (a scenario made from elsewhere, such as an incident log, is
        unsaved and untitled). One undo step (``what`` names it: "open my.json")."""
        old = self._scenario
        self._record(frozenset(), scenario, what or f"open {scenario.name}", merge=False)
        self._scenario = scenario
        self._document = Document(saved=scenario if saved else self._document.saved, path=path)
        self._reference = reference_rates(scenario.components)
        self.changed.emit(frozenset(f.name for f in dataclasses.fields(Scenario)) if old != scenario else frozenset())

    def mark_saved(self) -> None:
        self._document.saved = self._scenario

    def update(self, **fields: Any) -> None:
        """Set scenario fields (an undo step, or part of the last one when it changed the same inputs
        less than :data:`MERGE_SECONDS` ago). Changing anything of a preset but its name gives it a name made
        from its inputs (:data:`EDITED_FROM`), which follows them until somebody names it."""
        new = dataclasses.replace(self._scenario, **fields)
        changed = frozenset(k for k in fields if getattr(new, k) != getattr(self._scenario, k))
        if not changed:
            return
        origin = _origin(self._scenario.name) if "name" not in fields else None
        if origin is not None and edited_preset_name(new, origin) != new.name:  # the name follows the inputs
            new = dataclasses.replace(new, name=edited_preset_name(new, origin))
            changed |= {"name"}
        self._record(changed, new, merge=True)
        self._scenario = new
        self.changed.emit(changed)

    def set_use_optimal(self, on: bool) -> None:
        """'optimal' follows Daly (a recovery strategy's own optimum); turning it off keeps the interval it
        had then."""
        if on != self._scenario.uses_optimal_interval:
            self.update(checkpoint_interval_min=OPTIMAL if on else self.interval_minutes())

    def set_tiers(self, **fields: Any) -> None:
        """Set fields of the recovery strategy (:class:`.scenario.Tiers`; a scenario without one starts from
        its defaults, with the fast tier off)."""
        tiers = self._scenario.tiers if self._scenario.tiers is not None else Tiers()
        self.update(tiers=dataclasses.replace(tiers, **fields))

    def set_use_optimal_fast(self, on: bool) -> None:
        """The fast interval 'optimal', or (off) the interval it had then."""
        tiers = self._scenario.tiers
        if tiers is None or on == (tiers.fast_interval_min == OPTIMAL):
            return
        fast = self.fast_interval_minutes()
        self.set_tiers(fast_interval_min=OPTIMAL if on else (fast if fast is not None else 1.0))

    def set_scope(self, name: str, scope: Scope) -> None:
        """Set one component's failure scope (its default scope is stored as None, so files stay minimal)."""
        comps = []
        for c in self._scenario.components:
            if c.name == name:
                c = dataclasses.replace(c, scope=None)
                if scope_of(c) != scope:
                    c = dataclasses.replace(c, scope=scope)
            comps.append(c)
        self.update(components=tuple(comps))

    def set_multiplier(self, name: str, value: float) -> None:
        """Set one component's rate to ``value`` times its reference rate."""
        self._scale(lambda c: c.name == name, value, per_component=True)

    def set_category_multiplier(self, category: str, value: float) -> None:
        """Scale a category's rates (keeping their mix) so its total is ``value`` times its reference."""
        self._scale(lambda c: c.category == category, value)

    def set_total_multiplier(self, value: float) -> None:
        """Scale every rate (keeping the mix) so the total is ``value`` times the reference total."""
        self._scale(lambda c: True, value)

    def reset_rates(self) -> None:
        """Every component back to its reference rate."""
        self._scale(lambda c: True, 1.0, per_component=True)

    def _scale(self, chosen: Callable[[Component], bool], value: float, per_component: bool = False) -> None:
        comps = [c for c in self._scenario.components if chosen(c)]
        total = math.fsum(c.rate_per_gpu_hour for c in comps)
        # A group with no rate left cannot keep its mix: it goes back to its reference mix.
        if per_component or total == 0:
            rates = {c.name: self._reference[c.name] * value for c in comps}
        else:
            target = value * math.fsum(self._reference[c.name] for c in comps)
            rates = {c.name: c.rate_per_gpu_hour * (target / total) for c in comps}
        self.update(
            components=tuple(
                dataclasses.replace(c, rate_per_gpu_hour=rates[c.name]) if c.name in rates else c
                for c in self._scenario.components
            )
        )
