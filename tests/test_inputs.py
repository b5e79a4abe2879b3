"""The window's one source of inputs, without Qt: every edit changes exactly what it names."""

from __future__ import annotations

import math

import pytest

from planner_gui.core.files.presets import load_preset, preset_names
from planner_gui.core.model.scenario import Component, llama3_components
from planner_gui.core.session.inputs import HISTORY_STEPS, MERGE_SECONDS, Inputs


def rates(sc) -> dict[str, float]:
    return {c.name: c.rate_per_gpu_hour for c in sc.components}


@pytest.mark.parametrize("preset", preset_names())
def test_each_component_multiplier_changes_that_component_only(preset):
    inputs = Inputs(load_preset(preset))
    for comp in inputs.scenario.components:
        before = rates(inputs.scenario)
        m = inputs.multiplier(comp.name)
        inputs.set_multiplier(comp.name, 3.0 * m if m > 0 else 3.0)
        after = rates(inputs.scenario)
        changed = {n for n in before if after[n] != before[n]}
        assert changed == {comp.name}, (preset, comp.name, changed)
        assert after[comp.name] == pytest.approx(
            3.0 * before[comp.name] if before[comp.name] > 0 else 3.0 * inputs.reference_rate(comp.name), rel=1e-12
        )
        inputs.set_multiplier(comp.name, m)
        assert rates(inputs.scenario)[comp.name] == pytest.approx(before[comp.name], rel=1e-12)


@pytest.mark.parametrize("preset", preset_names())
def test_each_category_multiplier_changes_exactly_its_category(preset):
    inputs = Inputs(load_preset(preset))
    cats = {c.name: c.category for c in inputs.scenario.components}
    for cat in inputs.scenario.categories:
        before = rates(inputs.scenario)
        m = inputs.category_multiplier(cat)
        inputs.set_category_multiplier(cat, 2.0 * m)
        after = rates(inputs.scenario)
        for name in before:
            if cats[name] == cat:
                assert after[name] == pytest.approx(2.0 * before[name], rel=1e-12), (cat, name)
            else:
                assert after[name] == before[name], (cat, name)
        assert inputs.category_multiplier(cat) == pytest.approx(2.0 * m, rel=1e-12)


def test_total_multiplier_scales_every_rate_and_keeps_the_mix():
    inputs = Inputs(load_preset("llama3-405b"))
    before = rates(inputs.scenario)
    inputs.set_total_multiplier(4.0)
    after = rates(inputs.scenario)
    assert all(after[n] == pytest.approx(4 * before[n], rel=1e-12) for n in before)
    assert inputs.total_multiplier() == pytest.approx(4.0, rel=1e-12)
    inputs.reset_rates()
    assert rates(inputs.scenario) == pytest.approx(before, rel=1e-12)


def test_multipliers_are_against_the_llama3_rates_so_a_saved_file_reads_the_same():
    """Item 12: after reopening a saved 'GPU x2', the GPU category still reads x2."""
    inputs = Inputs(load_preset("llama3-405b"))
    inputs.set_category_multiplier("GPU", 2.0)
    reopened = Inputs(inputs.scenario)  # as a file opened again
    assert reopened.category_multiplier("GPU") == pytest.approx(2.0, rel=1e-12)
    assert reopened.category_multiplier("Host") == pytest.approx(1.0, rel=1e-12)
    faulty = next(c for c in llama3_components() if c.name == "Faulty GPU")
    assert reopened.reference_rate("Faulty GPU") == faulty.rate_per_gpu_hour


def test_an_unknown_component_is_relative_to_its_rate_as_opened():
    sc = load_preset("llama3-405b")
    sc = sc.replace(components=(*sc.components, Component("Cosmic rays", "Other", 1e-6)))
    inputs = Inputs(sc)
    assert inputs.multiplier("Cosmic rays") == 1.0
    inputs.set_multiplier("Cosmic rays", 5.0)
    assert rates(inputs.scenario)["Cosmic rays"] == pytest.approx(5e-6)


def test_a_category_with_no_rate_left_goes_back_to_its_reference_mix():
    inputs = Inputs(load_preset("llama3-405b"))
    inputs.set_category_multiplier("Host", 0.0)
    assert inputs.category_multiplier("Host") == 0.0
    inputs.set_category_multiplier("Host", 1.0)
    ref = {c.name: c.rate_per_gpu_hour for c in llama3_components() if c.category == "Host"}
    assert {n: r for n, r in rates(inputs.scenario).items() if n in ref} == pytest.approx(ref, rel=1e-12)


def test_changed_names_the_fields_and_dirty_compares_with_the_saved_scenario():
    inputs = Inputs(load_preset("llama3-405b"))
    seen = []
    inputs.changed.connect(seen.append)
    inputs.update(detect_min=7.0)
    assert seen[-1] == {"detect_min", "name"} and inputs.dirty
    inputs.update(detect_min=7.0)  # no change, no event
    assert len(seen) == 1
    inputs.update(detect_min=load_preset("llama3-405b").detect_min, name=load_preset("llama3-405b").name)
    assert not inputs.dirty  # back to what was saved: nothing unsaved
    inputs.update(gpus=2048)
    inputs.mark_saved()
    assert not inputs.dirty


def test_an_edited_preset_gets_a_name_that_follows_its_inputs():
    """A preset's name describes its inputs; once edited, "(edited)" left "1,048,576 GPUs ... 54 days" on a
    94,000-GPU x 365-day scenario. The name is made from the inputs and follows them until somebody names it."""
    preset = load_preset("h100-1m")
    inputs = Inputs(preset)
    inputs.update(gpus=94_000)
    assert inputs.scenario.name == "94,000 GPUs, 54 days (edited from H100 at 1,048,576 GPUs)"
    inputs.update(days=365.0)
    assert inputs.scenario.name == "94,000 GPUs, 365 days (edited from H100 at 1,048,576 GPUs)"
    inputs.update(days=1.0, detect_min=2.0)
    assert inputs.scenario.name == "94,000 GPUs, 1 day (edited from H100 at 1,048,576 GPUs)"
    inputs.update(name="Our 94k plan")
    inputs.update(days=11.0)
    assert inputs.scenario.name == "Our 94k plan"  # a chosen name stays
    for slug in preset_names():  # every preset's edit names its origin and its inputs
        edited = Inputs(load_preset(slug))
        edited.update(gpus=12_345)
        assert edited.scenario.name.startswith("12,345 GPUs, ") and "(edited from " in edited.scenario.name


def test_optimal_toggle_keeps_the_interval_it_had():
    inputs = Inputs(load_preset("llama3-405b"))
    daly = inputs.interval_minutes()
    inputs.set_use_optimal(False)
    assert inputs.scenario.checkpoint_interval_min == daly
    inputs.set_use_optimal(True)
    assert inputs.scenario.uses_optimal_interval and math.isclose(inputs.interval_minutes(), daly)


def test_load_resets_the_reference_and_the_saved_state():
    inputs = Inputs(load_preset("llama3-405b"))
    inputs.update(gpus=4096)
    other = load_preset("h100-1m")
    inputs.load(other)
    assert inputs.scenario == other and not inputs.dirty


def test_changes_of_rate_uncertainty_and_profile_are_described():
    from planner_gui.core.session.inputs import describe_changes

    sc = load_preset("llama3-405b")
    assert describe_changes(sc, sc) == ""
    assert describe_changes(sc, sc.replace(rate_uncertainty=True)) == "rate uncertainty on"
    assert describe_changes(sc.replace(rate_uncertainty=True), sc) == "rate uncertainty off"
    burn = sc.replace(rate_profile=((0.0, 2.0), (10.0, 1.0)))
    assert describe_changes(sc, burn) == "rate profile changed"
    assert describe_changes(burn, sc) == "rate profile removed"


def test_changes_of_spares_are_described():
    from planner_gui.core.model.spares import Spares
    from planner_gui.core.session.inputs import describe_changes

    sc = load_preset("llama3-405b")
    assert describe_changes(sc, sc.replace(spares=Spares(spare_nodes=89, swap_min=10))) == (
        "spare nodes unlimited -> 89; swap 0 -> 10 min"
    )
    assert (
        describe_changes(
            sc.replace(spares=Spares(spare_nodes=89)),
            sc.replace(spares=Spares(spare_nodes=89, recovery_mode="continue")),
        )
        == "recovery mode continue"
    )
    assert describe_changes(sc, sc.replace(spares=Spares(repair_sigma=1.0))) == "spares changed"


# --------------------------------------------------------------------------------------------------------
# Undo and redo: a history of the input states
# --------------------------------------------------------------------------------------------------------
class Clock:
    """A hand-moved clock for the undo history's merging of quick changes."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_undo_and_redo_walk_the_states_and_say_what_changed():
    clock = Clock()
    first = load_preset("llama3-405b")
    inputs = Inputs(first, clock=clock)
    seen: list[frozenset] = []
    inputs.changed.connect(seen.append)
    assert not inputs.can_undo and not inputs.can_redo and not inputs.undo()
    inputs.update(detect_min=4.0)
    clock.now += 5
    inputs.update(gpus=100_000)
    second = inputs.scenario
    assert inputs.undo_text.startswith("GPUs 16,384 -> 100,000")
    assert inputs.undo() and inputs.scenario.gpus == first.gpus and inputs.scenario.detect_min == 4.0
    assert seen[-1] == {"gpus", "name"}  # the name follows the GPUs
    assert inputs.redo_text.startswith("GPUs") and inputs.undo_text == "detection 5 -> 4 min"
    assert inputs.undo() and inputs.scenario == first and not inputs.dirty
    assert seen[-1] == {"detect_min", "name"}
    assert not inputs.can_undo and inputs.redo() and inputs.redo() and inputs.scenario == second
    assert not inputs.can_redo
    inputs.undo()
    inputs.update(restart_min=3.0)  # a new change forgets what was undone
    assert not inputs.can_redo and inputs.scenario.gpus == first.gpus


def test_quick_changes_of_the_same_input_are_one_step():
    clock = Clock()
    first = load_preset("llama3-405b")
    inputs = Inputs(first, clock=clock)
    inputs.update(detect_min=5.5)  # the preset's name is made from its inputs: a step of its own (other fields)
    for value in (6.0, 6.5, 7.0):
        clock.now += 0.3
        inputs.update(detect_min=value)
    assert inputs.undo_text == "detection 5.5 -> 7 min"
    inputs.undo()
    assert inputs.scenario.detect_min == 5.5
    inputs.undo()
    assert inputs.scenario == first
    inputs.redo()
    inputs.redo()
    clock.now += 0.3
    inputs.update(detect_min=8.0)
    clock.now += MERGE_SECONDS + 0.1  # a pause: a new step
    inputs.update(detect_min=9.0)
    inputs.undo()
    assert inputs.scenario.detect_min == 8.0
    inputs.update(detect_min=10.0)
    inputs.close_step()  # a slider let go: the next change is a step even at once
    inputs.update(detect_min=11.0)
    inputs.undo()
    assert inputs.scenario.detect_min == 10.0
    clock.now += 0.1
    inputs.update(restart_min=1.0)  # another input at once: a new step
    inputs.undo()
    assert inputs.scenario.detect_min == 10.0 and inputs.scenario.restart_min == first.restart_min


def test_undoing_an_open_returns_to_the_scenario_file_and_rates_edited_before():
    clock = Clock()
    own = Component("Cosmic ray", "Other", 1e-7)  # not a Llama 3 cause: its multiplier is against its own rate
    start = load_preset("llama3-405b")
    inputs = Inputs(start.replace(components=(*start.components, own)), path="a.json", clock=clock)
    inputs.set_category_multiplier("GPU", 2.0)
    clock.now += 5
    inputs.set_multiplier("Cosmic ray", 2.0)
    edited = inputs.scenario
    other = load_preset("h100-1m").scale_rates(3.0)
    inputs.load(other, path="b.json", what="open b.json")
    assert inputs.path == "b.json" and not inputs.dirty and inputs.undo_text == "open b.json"
    assert inputs.category_multiplier("GPU") == pytest.approx(3.0)  # Llama 3 causes: against Llama 3's rates
    inputs.update(days=30.0)
    inputs.mark_saved()  # b.json saved with 30 days
    assert inputs.undo() and inputs.scenario == other and inputs.dirty  # b.json on disk has 30 days now
    assert inputs.undo()
    assert inputs.scenario == edited and inputs.path == "a.json" and inputs.dirty
    assert inputs.category_multiplier("GPU") == pytest.approx(2.0)
    assert inputs.multiplier("Cosmic ray") == pytest.approx(2.0)  # against the rate it was opened with
    inputs.redo()
    inputs.redo()
    assert inputs.path == "b.json" and inputs.scenario.days == 30.0 and not inputs.dirty
    inputs.load(load_preset("epoch-100k"), saved=False, what="rates fitted from log.csv")  # a fit: untitled
    assert inputs.path is None and inputs.dirty
    inputs.undo()
    assert inputs.path == "b.json" and not inputs.dirty


def test_the_history_keeps_its_last_steps():
    clock = Clock()
    inputs = Inputs(load_preset("llama3-405b"), clock=clock)
    for k in range(HISTORY_STEPS + 20):
        clock.now += 10
        inputs.update(trials=100 + k)
    undone = 0
    while inputs.undo():
        undone += 1
    assert undone == HISTORY_STEPS and inputs.scenario.trials == 100 + 19
