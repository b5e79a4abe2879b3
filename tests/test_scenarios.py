"""Scenario documents: round trips, presets and every class of bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner_gui.cli import main as cli_main
from planner_gui.core.analysis.results import simulate
from planner_gui.core.files.names import edited_name
from planner_gui.core.files.presets import DEFAULT_PRESET, load_preset, preset_names, preset_titles
from planner_gui.core.files.scenario_io import MAX_FILE_BYTES, ScenarioError, dumps, load, loads, save, scenario_to_dict
from planner_gui.core.files.values import NAME_MAX_LEN
from planner_gui.core.model.scenario import Scenario
from planner_gui.core.util.userfiles import write_atomic

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
    (lambda d: d.update(checkpoint_interval_min=0), "checkpoint_interval_min: must be 'optimal' or a number from 0.01"),
    (lambda d: d.update(checkpoint_interval_min="sometimes"), "checkpoint_interval_min: must be 'optimal'"),
    (lambda d: d.update(checkpoint_write_s=-1), "checkpoint_write_s: must be a number from 0"),
    (lambda d: d.update(trials=0), "trials: must be a whole number from 1"),
    (lambda d: d.update(format_version=3), "format_version: must be 1 or 2 (got 3)"),
    (lambda d: d.update(training={"train_flops": 1e25}), "training: needs format_version 2 (this file says 1)"),
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
    with pytest.raises(ScenarioError, match=r"\(Unterminated string starting at line 1 column 10\)$"):
        loads(b'{"name": "abc')  # json says "starting at" and then gives the position: one "at"
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
    assert sorted(made) == sorted(preset_names())
    for name, sc in made.items():
        # Equal but for the last bits of computed floats (the burn-in profile's come out an ulp apart from one
        # numpy and libm to another: 5.654833035704733 and ...731, 1.4035746766361423 and ...144).
        _assert_same_document(json.loads(dumps(load_preset(name))), json.loads(dumps(sc)), name)


def _assert_same_document(a, b, where: str) -> None:
    """Two JSON documents alike: the same keys, lists and strings, numbers within 1e-12 relative (the profile's
    multipliers are differences of cumulative sums, which magnify the last bits)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert sorted(a) == sorted(b), where
        for k in a:
            _assert_same_document(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same_document(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), where
        assert a == pytest.approx(b, rel=1e-12, abs=0.0), where
    else:
        assert a == b, where


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


# -- saving: links, special files, modes, names ----------------------------------------------------------


def test_saving_onto_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "real.json"
    save(Scenario(gpus=1), target)
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    save(Scenario(gpus=2), link)
    assert link.is_symlink() and os.readlink(link) == "real.json"
    assert load(target).gpus == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def _special_file(tmp_path: Path) -> Path:
    """A character device (as root: a copy of /dev/null's node) or else a FIFO: neither is a regular file."""
    path = tmp_path / "special"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.mknod(path, 0o666 | __import__("stat").S_IFCHR, os.makedev(1, 3))
    else:
        os.mkfifo(path)
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX special files")
def test_saving_onto_a_device_or_fifo_is_refused_and_leaves_it_alone(tmp_path):
    import stat

    path = _special_file(tmp_path)
    kind = stat.S_IFMT(os.lstat(path).st_mode)
    with pytest.raises(ScenarioError, match=r"cannot write \(it is a (character device|FIFO)") as err:
        save(Scenario(), path)
    assert "\n" not in str(err.value)
    assert stat.S_IFMT(os.lstat(path).st_mode) == kind
    with pytest.raises(OSError, match="only regular files"):
        write_atomic(path, b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["special"]


def test_a_nul_byte_or_an_empty_name_is_a_clear_error(tmp_path):
    for bad in (str(tmp_path / "a\0b.json"), ""):
        with pytest.raises(ScenarioError, match=r"cannot write \(the file name (contains a NUL byte|is empty)\)"):
            save(Scenario(), bad)
        with pytest.raises(OSError):  # not a ValueError: every caller handles OSError
            write_atomic(bad, "text")
        with pytest.raises(ScenarioError, match=r"cannot read \(the file name"):
            load(bad)


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_new_files_follow_the_umask_and_existing_files_keep_their_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        fresh = tmp_path / "fresh.json"
        save(Scenario(), fresh)
        assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
        kept = tmp_path / "kept.csv"
        kept.write_text("old")
        kept.chmod(0o604)
        write_atomic(kept, "new")
        assert kept.stat().st_mode & 0o777 == 0o604 and kept.read_text() == "new"
    finally:
        os.umask(old)


def test_a_read_only_file_is_refused_and_left_as_it_was(tmp_path, capfd, monkeypatch):
    """Renaming over a file needs only the folder's permission: without this check a file marked read-only
    (even by its owner, even for root) was replaced."""
    path = tmp_path / "kept.json"
    save(Scenario(gpus=2048), path)
    path.chmod(0o444)
    before = path.read_bytes()
    with pytest.raises(OSError, match="read-only"):
        write_atomic(path, "new")
    with pytest.raises(ScenarioError, match=r"cannot write \(the file is read-only\)"):
        save(Scenario(gpus=1024), path)
    assert cli_main(["run", "--gpus", "1024", "--trials", "10", "--save", str(path)]) == 2
    err = capfd.readouterr().err
    assert "the file is read-only" in err and len(err.strip().splitlines()) == 1
    assert path.read_bytes() == before and path.stat().st_mode & 0o777 == 0o444
    path.chmod(0o644)  # writable by its owner; when the owner cannot write either, os.access says so
    monkeypatch.setattr(os, "access", lambda p, m: False)
    with pytest.raises(OSError, match="read-only"):
        write_atomic(path, "new")


def test_write_atomic_writes_bytes_as_they_are(tmp_path):
    path = tmp_path / "plot.png"
    write_atomic(path, b"\x89PNG\r\n\x00")
    assert path.read_bytes() == b"\x89PNG\r\n\x00"


def test_load_reads_no_more_than_the_limit_whatever_the_size_says(tmp_path, monkeypatch):
    """Files whose size stat does not tell (procfs, a growing file) are still read only up to the limit."""
    path = tmp_path / "growing.json"
    path.write_bytes(b" " * (3 * MAX_FILE_BYTES))
    real_fstat, real_read = os.fstat, os.read
    read = []

    class NoSize:
        def __init__(self, st):
            self.st_mode, self.st_size = st.st_mode, 0

    monkeypatch.setattr(os, "fstat", lambda fd: NoSize(real_fstat(fd)))
    monkeypatch.setattr(os, "read", lambda fd, n: read.append(real_read(fd, n)) or read[-1])
    with pytest.raises(ScenarioError, match="more than 1,000,000 bytes"):
        load(path)
    assert sum(map(len, read)) == MAX_FILE_BYTES + 1


def test_presets_list_the_default_first_with_their_titles():
    names = preset_names()
    assert names[0] == DEFAULT_PRESET == "llama3-405b"
    assert len(set(names)) == len(names) == len(list((ROOT / "planner_gui/core/data/presets").glob("*.json")))
    titles = preset_titles()
    assert list(titles) == names
    for slug, title in titles.items():
        assert title == json.loads((ROOT / f"planner_gui/core/data/presets/{slug}.json").read_text())["name"]


def test_edited_names_say_what_changed_once_and_fit_the_limit():
    base = "Llama 3 405B (16,384 H100, 54 days)"
    once = edited_name(base, "--gpus 100,000 --days 10")
    assert once == f"{base}, edited: --gpus 100,000 --days 10"
    assert edited_name(once, "--gpus 100,000 --days 10") == once
    again = edited_name(once, "--days 5 --detect 2")
    assert again == f"{base}, edited: --gpus 100,000 --days 5 --detect 2"
    assert again.count("edited") == 1
    assert edited_name(once, "doubled the GPUs") == f"{base}, edited: doubled the GPUs"
    assert edited_name(base, "  ") == base
    assert edited_name(base + " (edited)", "--gpus 5") == f"{base}, edited: --gpus 5"
    for name, what in (("x" * 200, "--gpus 5"), ("y" * 50, "--gpus 5 " * 60), ("z" * 199, "w" * 300)):
        out = edited_name(name, what)
        assert len(out) <= NAME_MAX_LEN and ", edited: " in out
        assert loads(json.dumps({**good_doc(), "name": out})).name == out


def test_gpu_mtbf_scaling_never_overflows():
    tiny = Scenario(components=tuple(c.__class__(c.name, c.category, 5e-324) for c in Scenario().components))
    scaled = tiny.with_gpu_mtbf_hours(100.0)
    assert all(0 < c.rate_per_gpu_hour < 1 for c in scaled.components)
    assert scaled.gpu_mtbf_hours == pytest.approx(100.0)
    with pytest.raises(ValueError):
        Scenario().with_gpu_mtbf_hours(0.0)


def test_the_training_section_round_trips_and_is_validated():
    from planner_gui.core.model.scenario import Training

    sc = Scenario(training=Training())
    doc = scenario_to_dict(sc)
    assert doc["format_version"] == 2 and doc["training"]["train_flops"] == 3.8e25
    assert loads(json.dumps(doc)) == sc
    # 3.8e25 FLOPs at 989 TFLOP/s and 40 % MFU: 2.668e7 GPU-hours of compute.
    assert sc.training.gpu_hours == pytest.approx(3.8e25 / (989e12 * 0.4 * 3600))
    assert Training(None, compute_gpu_hours=1e6).gpu_hours == 1e6
    assert scenario_to_dict(Scenario())["format_version"] == 1  # nothing new: readable by every release
    for change, message in [
        ({"train_flops": None}, "training: give exactly one of train_flops and compute_gpu_hours"),
        ({"compute_gpu_hours": 5e6}, "training: give exactly one"),
        ({"mfu": 1.5}, "training.mfu: must be a number from 0.01 to 1"),
        ({"mfu": None}, "training.mfu: must be a number"),
        ({"extra": 1}, "training.extra: unknown key"),
    ]:
        bad = json.loads(json.dumps(doc))
        bad["training"].update(change)
        with pytest.raises(ScenarioError, match=message.replace("(", r"\(").replace(".", r"\.")):
            loads(json.dumps(bad))


def test_huge_limits_read_as_written_not_as_float_digits():
    from planner_gui.core.files.scenario_io import ScenarioError
    from planner_gui.core.files.values import check_number

    with pytest.raises(ScenarioError, match=r"from 1e\+15 to 1e\+30 \(got -1\)"):
        check_number("training.train_flops", -1.0)
    with pytest.raises(ScenarioError, match=r"from 1 to 10,000,000"):
        check_number("gpus", 0)


@pytest.mark.parametrize("gpus,days", [(10_000_000, 3650.0), (1_048_576, 365.0)])
def test_a_simulation_too_large_names_the_most_trials_that_run(gpus, days):
    """A refusal names the nearest setting that runs: the most trials at these GPUs and days, which do run."""
    import re

    from planner_gui.core.files.scenario_io import validate

    sc = load_preset("llama3-405b").replace(gpus=gpus, days=days, trials=100_000)
    with pytest.raises(ScenarioError) as err:
        validate(sc)
    m = re.search(r"at most ([\d,]+) trials run at these GPUs and days", str(err.value))
    assert m, str(err.value)
    most = int(m[1].replace(",", ""))
    assert validate(sc.replace(trials=most)).trials == most
    with pytest.raises(ScenarioError):
        validate(sc.replace(trials=most + 1))


def test_a_general_run_too_long_for_even_one_trial_is_refused_up_front(capsys):
    """Each step of the general engine costs the same however few the trials: 10 million GPUs for ten years is
    about 17 million points a trial (half an hour for one trial), refused before anything runs, with what
    to shorten; a window under the limit a trial is accepted."""
    from planner_gui.cli import main
    from planner_gui.cli.flags import scenario_from_args
    from planner_gui.cli.program import build_parser
    from planner_gui.core.files.scenario_io import validate
    from planner_gui.core.sim.capabilities import MAX_GENERAL_STEPS, general_points, window_engine

    argv = ["run", "--gpus", "10000000", "--days", "3650", "--fast-replicas", "0", "--trials", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a trial to simulate for the window" in err and "use fewer days or GPUs" in err
    sc = scenario_from_args(build_parser().parse_args([*argv[:4], "1", *argv[5:]]))
    assert window_engine(sc).key == "general"
    per_day = general_points(sc.replace(days=2.0)) - general_points(sc.replace(days=1.0))
    fits = 0.9 * MAX_GENERAL_STEPS / per_day
    assert validate(sc.replace(days=fits)).days == fits
    with pytest.raises(ScenarioError, match="a trial to simulate"):
        validate(sc.replace(days=fits * 1.2))


def test_runs_that_each_fit_but_not_together_are_refused_before_anything_runs(tmp_path, capsys):
    """compare (and report --compare) cost their runs against the limit of one: three files each at 40 % of it
    are refused in one line naming the trials that fit; the same three at those trials are accepted."""
    from planner_gui.cli import main
    from planner_gui.core.files.checks import check_together, size_share
    from planner_gui.core.files.scenario_io import save

    base = load_preset("llama3-405b").replace(gpus=1_000_000, days=365.0)
    trials = int(0.4 * base.trials / size_share(base))
    files = []
    for k in range(3):
        sc = base.replace(trials=trials, seed=k + 1, name=f"big {k}")
        assert 0.39 < size_share(sc) < 0.41
        files.append(tmp_path / f"s{k}.json")
        save(sc, files[-1])
    assert main(["compare", *map(str, files)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the 3 scenarios each fit, but together they are 1.2 times" in err
    fit = int(err.split("use --trials ")[1].split()[0])
    assert fit < trials
    check_together([base.replace(trials=fit, seed=k) for k in range(3)])
    with pytest.raises(ScenarioError, match="together"):
        check_together([base.replace(trials=int(fit * 1.05), seed=k) for k in range(3)])
