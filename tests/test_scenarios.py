"""Scenario documents: round trips, presets and every class of bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner_gui.core.model import Scenario
from planner_gui.core.results import simulate
from planner_gui.core.scenario_io import (
    MAX_FILE_BYTES,
    ScenarioError,
    dumps,
    load,
    load_preset,
    loads,
    preset_names,
    save,
    scenario_to_dict,
)

ROOT = Path(__file__).resolve().parent.parent


def good_doc() -> dict:
    return scenario_to_dict(Scenario())


def test_round_trip_through_file(tmp_path):
    sc = Scenario(gpus=12_345, checkpoint_interval_min=33.5, seed=9)
    path = tmp_path / "s.json"
    save(sc, path)
    assert load(path) == sc
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_save_is_atomic_when_the_write_fails(tmp_path, monkeypatch):
    path = tmp_path / "s.json"
    save(Scenario(), path)
    before = path.read_bytes()

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(ScenarioError, match="cannot write"):
        save(Scenario(gpus=5), path)
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


BAD = [
    (lambda d: d.update(extra=1), "extra: unknown key"),
    (lambda d: d.pop("gpus"), "gpus: missing"),
    (lambda d: d.update(gpus="many"), "gpus: must be a whole number from 1 to 10,000,000"),
    (lambda d: d.update(gpus=0), "gpus: must be a whole number from 1 to 10,000,000 (got 0)"),
    (lambda d: d.update(gpus=10_000_001), "gpus: must be a whole number from 1 to 10,000,000"),
    (lambda d: d.update(gpus=1.5), "gpus: must be a whole number"),
    (lambda d: d.update(gpus=True), "gpus: must be a whole number"),
    (lambda d: d.update(days=-1), "days: must be a number from 0.01 to 3,650"),
    (lambda d: d.update(detect_min=-0.5), "detect_min: must be a number from 0"),
    (lambda d: d.update(restart_min=None), "restart_min: must be a number"),
    (lambda d: d.update(checkpoint_interval_min=0), "checkpoint_interval_min: must be a number from 0.01"),
    (lambda d: d.update(checkpoint_interval_min="sometimes"), "checkpoint_interval_min: must be 'optimal'"),
    (lambda d: d.update(checkpoint_write_s=-1), "checkpoint_write_s: must be a number from 0"),
    (lambda d: d.update(trials=0), "trials: must be a whole number from 1"),
    (lambda d: d.update(format_version=2), "format_version: must be 1"),
    (lambda d: d["components"][0].update(rate_per_gpu_hour=-1e-5), "components[0].rate_per_gpu_hour: must be"),
    (lambda d: d["components"][1].update(colour="red"), "components[1].colour: unknown key"),
    (lambda d: d["components"][2].update(name=d["components"][0]["name"]), "appears more than once"),
    (lambda d: d.update(components=[]), "components: must be a list of 1 to"),
    (lambda d: d.update(name=""), "name: must be a non-empty text"),
    (lambda d: d.update(trials=100_000, gpus=10_000_000, days=3650), "trials: about"),
]


@pytest.mark.parametrize("edit,message", BAD)
def test_bad_values_name_the_field(edit, message):
    doc = good_doc()
    edit(doc)
    with pytest.raises(ScenarioError) as err:
        loads(json.dumps(doc))
    text = str(err.value)
    assert message in text and "\n" not in text


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused(literal):
    text = json.dumps(good_doc()).replace('"days": 54.0', f'"days": {literal}')
    assert literal in text
    with pytest.raises(ScenarioError, match="numbers must be finite"):
        loads(text)


def test_huge_number_is_refused():
    text = json.dumps(good_doc()).replace('"days": 54.0', '"days": 1e999')
    with pytest.raises(ScenarioError, match="days"):
        loads(text)


def test_not_json_not_utf8_not_object_too_big(tmp_path):
    with pytest.raises(ScenarioError, match="not valid JSON"):
        loads(b"{")
    with pytest.raises(ScenarioError, match="not UTF-8"):
        loads(b'{"name": "\xff"}')
    with pytest.raises(ScenarioError, match="must be a JSON object"):
        loads(b"[1, 2]")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_FILE_BYTES + 1))
    with pytest.raises(ScenarioError, match="limit is 1,000,000"):
        load(big)
    with pytest.raises(ScenarioError, match="is a directory"):
        load(tmp_path)
    with pytest.raises(ScenarioError, match="cannot read"):
        load(tmp_path / "missing.json")


def test_presets_load_and_llama3_lands_in_published_range():
    names = preset_names()
    assert {"llama3-405b", "h100-100k"} <= set(names)
    for name in names:
        assert isinstance(load_preset(name), Scenario)
    llama = load_preset("llama3-405b")
    assert llama.gpus == 16_384 and llama.days == 54
    assert llama.cluster_mtbf_hours == pytest.approx(3.09, abs=0.005)
    res = simulate(llama)
    assert 0.90 <= res.goodput.mean() <= 0.96
    big = load_preset("h100-100k")
    assert big.gpus == 100_000 and big.rate_per_gpu_hour == pytest.approx(llama.rate_per_gpu_hour)
    assert big.cluster_mtbf_hours * 60 == pytest.approx(30.4, abs=0.1)
    with pytest.raises(ScenarioError, match="unknown preset"):
        load_preset("nope")


def test_shipped_presets_equal_the_generator(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import make_presets
    finally:
        sys.path.pop(0)
    made = make_presets.presets()
    assert sorted(made) == preset_names()
    for name, sc in made.items():
        assert dumps(load_preset(name)) == dumps(sc), name


def test_gpu_mtbf_scaling_keeps_the_mix():
    sc = Scenario().with_gpu_mtbf_hours(50_000)
    assert sc.gpu_mtbf_hours == pytest.approx(50_000)
    base = Scenario()
    ratios = [a.rate_per_gpu_hour / b.rate_per_gpu_hour for a, b in zip(sc.components, base.components)]
    assert max(ratios) == pytest.approx(min(ratios))


def test_core_imports_no_qt():
    code = (
        "import sys\n"
        "import planner_gui.core, planner_gui.cli\n"
        "from planner_gui.core import simulate, Scenario, sweep_gpus\n"
        "simulate(Scenario(trials=10))\n"
        "sweep_gpus(Scenario(trials=5), [1024, 2048])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph', 'superqt'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
