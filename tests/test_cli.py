"""The command line, run as a user would: a subprocess."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner_gui.core.model.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "planner_gui", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_run_json_has_the_documented_keys_and_round_trips(tmp_path):
    out = cli("run", "--preset", "llama3-405b", "--trials", "300", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    for key in ("interruptions", "planned_interruptions", "goodput"):
        assert set(doc[key]) == {"mean", "sem", "p05", "p50", "p95"}
    assert set(doc["optimal_interval_min"]) >= {"young", "daly"}
    assert set(doc["hours"]) >= {"useful", "checkpoint", "lost_work", "recovery"}
    assert len(doc["by_component"]) == 18
    assert doc["cluster_mtbf_hours"] == pytest.approx(3.09, abs=0.01)
    assert doc["checkpoint_interval_min"] == doc["optimal_interval_min"]["daly"]
    assert abs(doc["goodput"]["mean"] - doc["goodput_expected"]) < 4.5 * doc["goodput"]["sem"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc["scenario"]))
    again = json.loads(cli("run", "--scenario", str(path), "--json").stdout)
    assert again == doc


def test_overrides_apply():
    out = cli(
        "run",
        "--gpus",
        "100,000",
        "--days",
        "10",
        "--checkpoint-interval",
        "30",
        "--checkpoint-write",
        "60",
        "--detect",
        "2",
        "--restart",
        "3",
        "--planned-per-day",
        "0",
        "--gpu-mtbf-hours",
        "50000",
        "--trials",
        "100",
        "--seed",
        "5",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    sc = doc["scenario"]
    assert (sc["gpus"], sc["days"], sc["checkpoint_interval_min"], sc["checkpoint_write_s"]) == (100_000, 10, 30, 60)
    assert (sc["detect_min"], sc["restart_min"], sc["planned_per_day"], sc["trials"], sc["seed"]) == (2, 3, 0, 100, 5)
    assert doc["gpu_mtbf_hours"] == pytest.approx(50_000)
    assert doc["cluster_mtbf_hours"] == pytest.approx(0.5)
    assert doc["planned_interruptions"]["mean"] == 0


def test_readable_report():
    out = cli("run", "--preset", "h100-100k", "--trials", "100")
    assert out.returncode == 0, out.stderr
    assert "one every 30 minutes" in out.stdout
    assert "100,000 GPUs" in out.stdout and "Goodput" in out.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["run", "--gpus", "0"], "--gpus: must be a whole number from 1 to 10,000,000 (got 0)"),
        (["run", "--gpus", "lots"], "argument --gpus: must be a whole number (got 'lots')"),
        (["run", "--days", "nan"], "argument --days: must be a finite number"),
        (["run", "--checkpoint-interval", "0"], "--checkpoint-interval: must be 'optimal' or a number from 0.01"),
        (["run", "--checkpoint-interval", "often"], "must be a number of minutes or 'optimal'"),
        (["run", "--detect", "-1"], "--detect: must be a number from 0 to 10,080 (got -1)"),
        (["run", "--trials", "100000", "--gpus", "10000000", "--days", "3650"], "--trials: about"),
        (["run", "--gpu-mtbf-hours", "0"], "--gpu-mtbf-hours: must be more than 0"),
        (
            ["run", "--gpu-mtbf-hours", "1e-9"],
            "--gpu-mtbf-hours: must be at least 0.354 hours with this component mix (got 1e-09)",
        ),
        (["run", "--preset", "nope"], "--preset: unknown preset 'nope' (available: "),
        (["run", "--scenario", "/does/not/exist.json"], "cannot read"),
        (["run", "--preset", "llama3-405b", "--scenario", "x.json"], "not allowed with"),
        (["run", "--bogus"], "unrecognized arguments"),
        (["sweep", "--points", "1"], "--points: must be from 2 to 401"),
        (["sweep", "--over", "days"], "invalid choice"),
        (
            ["run", "--gpu-mtbf-hours", "1e-310"],
            "--gpu-mtbf-hours: must be at least 0.354 hours with this component mix (got 1e-310)",
        ),
        (["run", "--gpu-mtbf-hours", "5e-324"], "--gpu-mtbf-hours: must be at least 0.354 hours"),
        (["run", "--scenario", "/dev/zero"], "/dev/zero: is a character device, not a regular file"),
        (["run", "--scenario", ""], "argument --scenario: must be a file name (got an empty value)"),
        (["run", "--preset", ""], "--preset: unknown preset '' (available: llama3-405b, "),
        (["sweep", "-o", ""], "argument --output/-o: must be a file name (got an empty value)"),
        (["run", "--gpus", "1,5"], "argument --gpus: must be a whole number; ',' and '_' may only separate groups"),
        (["run", "--days", "1,5"], "argument --days: must be a number; ',' and '_' may only separate groups"),
        (["run", "--gpus", "\u0661\u0662\u0663"], "argument --gpus: must be a whole number written with the ASCII"),
        (["run", "--name", "x" * 201], "--name: must be a non-empty text of at most 200 characters"),
        (
            ["sweep", "--over", "interval", "--points", "41", "--gpus", "10000000", "--days", "365"],
            "--points: a sweep over 41 checkpoint intervals costs as much as simulating about",
        ),
        (["sweep", "--points", "401", "--days", "840"], "--points: a sweep over 401 GPU counts costs"),
        (
            ["sweep", "--over", "spares", "--gpus", "1000000", "--days", "365", "--spare-nodes", "50"],
            "spare counts x about 3.24e+08 interruptions, repairs and returns each",
        ),
        (
            ["sweep", "--over", "spares", "--gpus", "10000000", "--days", "3650", "--trials", "60"],
            "interruptions and repairs to simulate, over the limit of 4e+08",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(args, message):
    args = [a.encode().decode("unicode_escape") if "\\u" in a else a for a in args]
    out = cli(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def test_bad_value_in_a_file_names_the_file_not_a_flag(tmp_path):
    doc = json.loads((ROOT / "planner_gui/core/data/presets/llama3-405b.json").read_text())
    doc["detect_min"] = -2
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(doc))
    out = cli("run", "--scenario", str(path), "--gpus", "2048")
    assert out.returncode == 2
    assert out.stderr.strip() == "planner-gui: error: mine.json: detect_min: must be a number from 0 to 10,080 (got -2)"


def test_bad_scenario_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe not json")
    out = cli("run", "--scenario", str(bad))
    assert out.returncode == 2 and "not UTF-8" in out.stderr and "Traceback" not in out.stderr


def test_sweep_writes_csv(tmp_path):
    target = tmp_path / "sweep.csv"
    out = cli("sweep", "--points", "9", "--trials", "50", "--output", str(target))
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[-1] == f"planner-gui: wrote 9 points over gpus (CSV) to {target}"  # where it went
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert len(rows) == 9 and rows[0]["gpus"] == "1024" and rows[-1]["gpus"] == "1048576"
    out = cli("sweep", "--over", "interval", "--points", "5", "--trials", "50")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert float(rows[0]["checkpoint_interval_min"]) == 1.0 and len(rows) == 5


def test_sweep_to_unwritable_place_fails_cleanly(tmp_path):
    out = cli("sweep", "--points", "2", "--trials", "5", "--output", str(tmp_path / "no" / "such" / "dir.csv"))
    assert out.returncode == 2 and "cannot write" in out.stderr and "Traceback" not in out.stderr


def test_the_smallest_gpu_mtbf_named_in_the_error_is_accepted():
    out = cli("run", "--gpu-mtbf-hours", "0.354", "--trials", "5", "--days", "0.1", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["gpu_mtbf_hours"] == pytest.approx(0.354)


def test_the_name_says_when_flags_changed_the_scenario(tmp_path):
    out = cli("run", "--gpus", "100000", "--days", "10", "--trials", "20")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "Llama 3 405B (16,384 H100, 54 days), edited: --gpus 100,000 --days 10"
    out = cli("run", "--gpus", "100000", "--trials", "20", "--name", "My 100k plan", "--json")
    assert json.loads(out.stdout)["scenario"]["name"] == "My 100k plan"
    # Trials and seed change how precisely the question is answered, not the question: no edit mark.
    out = cli("run", "--trials", "20", "--seed", "3", "--json")
    assert json.loads(out.stdout)["scenario"]["name"] == "Llama 3 405B (16,384 H100, 54 days)"


def test_run_save_writes_the_scenario_after_every_flag(tmp_path):
    path = tmp_path / "edited.json"
    out = cli(
        "run",
        "--preset",
        "h100-100k",
        "--days",
        "3",
        "--gpu-mtbf-hours",
        "80000",
        "--trials",
        "50",
        "--checkpoint-interval",
        "40",
        "--save",
        str(path),
        "--json",
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert json.loads(path.read_text()) == doc["scenario"]
    assert "edited: --days 3 --checkpoint-interval 40 --gpu-mtbf-hours 80,000" in doc["scenario"]["name"]
    again = cli("run", "--scenario", str(path), "--json")
    assert json.loads(again.stdout) == doc
    assert [p.name for p in tmp_path.iterdir()] == ["edited.json"]
    bad = cli("run", "--trials", "5", "--save", str(tmp_path / "missing" / "x.json"))
    assert bad.returncode == 2 and bad.stderr.startswith("planner-gui: error: --save: ") and bad.stdout == ""


def test_long_jobs_print_an_estimate_and_a_few_progress_lines(capfd, monkeypatch):
    from planner_gui import cli as cli_module
    from planner_gui.cli import flags

    monkeypatch.setattr(flags, "ESTIMATE_AFTER_S", 0.0)
    monkeypatch.setattr(flags, "PROGRESS_AFTER_S", 0.0)
    assert cli_module.main(["run", "--gpus", "1000000", "--trials", "400"]) == 0
    err = capfd.readouterr().err.splitlines()
    sc = Scenario(gpus=1_000_000, trials=400)
    events = (sc.failure_rate_per_hour + sc.planned_per_day / 24) * sc.hours * sc.trials
    assert err[0].startswith(f"planner-gui: simulating about {events / 1e6:.3g} M interruptions: about ")
    assert err[0].endswith(" s on a 2-core machine (Ctrl-C stops it)")
    assert 1 <= len(err[1:]) <= 3 and all(" done after " in line for line in err[1:]), err
    assert cli_module.main(["sweep", "--over", "interval", "--points", "5", "--trials", "20"]) == 0
    err = capfd.readouterr().err.splitlines()
    assert err[0].startswith("planner-gui: sweeping 5 points: about ") and len(err) <= 4, err


def test_progress_on_a_terminal_is_one_line_rewritten_and_cleared(monkeypatch):
    from planner_gui.cli import flags as cli_module
    from planner_gui.core.analysis.sweep import Cost

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(cli_module, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(cli_module, "PROGRESS_EVERY_S", 0.0)
    term = Terminal()
    with cli_module.Progress(Cost(4e9, 38.0), "simulating", term) as progress:
        for f in (0.1, 0.5, 0.9):
            progress(f)
    text = term.getvalue()
    first, rest = text.split("\n", 1)
    assert "about 40 s" in first and "\n" not in rest  # the estimate, then one line
    updates = rest.split("\r")[1:]  # three updates of the same line, then spaces to clear it
    assert [u.split("%")[0].split()[-1] for u in updates[:3]] == ["10", "50", "90"]
    assert updates[3].strip() == "" and len(updates[3]) >= len(updates[2]) and updates[4] == ""


def test_scenario_without_a_command_opens_the_window(tmp_path):
    """`planner-gui --scenario FILE` means the window (here: no display, so it says so)."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = subprocess.run(
        [sys.executable, "-m", "planner_gui", "--scenario", str(tmp_path / "x.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=env,
    )
    assert out.returncode == 2 and "no display available" in out.stderr


def test_sweep_to_dash_writes_standard_output(tmp_path):
    out = cli("sweep", "--points", "2", "--trials", "5", "-o", "-", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("gpus,") and not (tmp_path / "-").exists()


def test_a_file_with_a_byte_order_mark_is_read(tmp_path):
    doc = (ROOT / "planner_gui/core/data/presets/llama3-405b.json").read_bytes()
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + doc)
    out = cli("run", "--scenario", str(path), "--trials", "5")
    assert out.returncode == 0, out.stderr


def test_the_spares_report_reads_like_the_run_report():
    """Its money was unrounded ('64,894,439 ($162,236,097)'), one label ran into its value, and the scenario's
    name was cut in the middle of a flag."""
    out = cli("run", "--gpus", "100000", "--spare-nodes", "89", "--swap", "10", "--trials", "30")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].endswith("edited: --gpus 100,000 --spare-nodes 89 --swap 10")
    labelled = [x for x in lines[1:] if x and not x.startswith((" ", "Where the "))]  # (not the name, the sentence)
    assert len(labelled) >= 10
    for line in labelled:
        assert line[24] == " " and line[25] != " ", line  # a 25-character label column, then the value
    lost = next(x for x in lines if x.startswith("Not spent training"))  # the window's and report's words
    assert " M GPU-hours ($" in lost and " M at $2.50 per GPU-hour)" in lost
    assert next(x for x in lines if x.startswith("Spare pool")).endswith("GPU-hours ($2.31 M at $2.50 per GPU-hour)")


def _main_out(argv, capsys) -> tuple[int, str, str]:
    from planner_gui.cli import main

    try:
        code = main(argv)
    except SystemExit as exc:  # --help exits from argparse
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_help_shows_the_window_its_file_every_sweep_and_the_defaults(capsys):
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.model.scenario import Tiers

    code, out, _ = _main_out(["--help"], capsys)
    assert code == 0 and "--scenario FILE" in out and "\n    gui " in out and "opens the desktop app" in out
    code, out, _ = _main_out(["sweep", "--help"], capsys)
    assert "gpus|interval|spares" in out and "(default: gpus)" in out and "(default: 41)" in out
    code, out, _ = _main_out(["run", "--help"], capsys)
    flat = " ".join(out.split())
    sc = load_preset("llama3-405b")
    assert f"GPUs in the job (default: {sc.gpus:,})" in flat
    assert f"detection time, minutes (default: {sc.detect_min:g})" in flat
    assert f"domain failure (default: {Tiers().nodes_per_domain})" in flat and "(default unlimited:" in flat
    assert "keeps the value of the scenario it starts from" in flat
    code, out, _ = _main_out(["compare", "--help"], capsys)  # (each file's trials, not the defaults' 1,000)
    assert "every scenario (default: each file's own)" in " ".join(out.split()) and "1,000" not in out


@pytest.mark.parametrize(
    ("argv", "suggested"),
    [(["run", "--detct", "4"], "--detect"), (["sweep", "--pionts", "5"], "--points"), (["--verison"], "--version")],
)
def test_a_misspelt_flag_gets_the_nearest_one(capsys, argv, suggested):
    code, _, err = _main_out(argv, capsys)
    assert code == 2 and err.strip().endswith(f"did you mean {suggested}?") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "--spare-nodes", "-1"], "--spare-nodes: must be a whole number from 0 to 10,000,000 (got -1)"),
        (["run", "--swap", "-1"], "--swap: must be from 0 to 100,000 minutes (got -1)"),
        (["run", "--spare-nodes", "1e308"], "--spare-nodes: must be a whole number from 0 to 10,000,000 (got 1e+308)"),
        (
            ["run", "--repair-hours", "\u202eGPU=5"],
            "--repair-hours: no category '\\u202eGPU' in the scenario (categories: Dependency, GPU, Host, Network, "
            "Unknown, Unplanned Maintenance)",
        ),
    ],
)
def test_a_refused_flag_is_named_as_the_flag_once(capsys, argv, expected):
    """It said "--spare-nodes: spare_nodes must be ...": the flag, then the file's field name."""
    code, _, err = _main_out(argv, capsys)
    assert code == 2 and err == f"planner-gui: error: {expected}\n"


def test_a_burn_in_says_its_first_day_beside_its_start(capsys):
    """ "x8.45 at the start" read as day 1's rate; day 1 averages x3.56: both are said, in the CLI and the window."""
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.theory.profiles import burn_in_profile, mean_multiplier
    from planner_gui.ui.rates_panel import profile_summary

    code, out, _ = _main_out(["run", "--gpus", "100000", "--burn-in", "0.7,30", "--trials", "20"], capsys)
    profile = burn_in_profile(0.7, 30.0, 54.0)
    day1 = mean_multiplier(profile, 1.0)
    assert code == 0 and 2.0 < day1 < profile[0][1]
    assert f"x{profile[0][1]:.3g} at the start (x{day1:.3g} over day 1)" in out
    sc = load_preset("llama3-405b").replace(rate_profile=profile)
    assert f"x{profile[0][1]:.3g} at the start (x{day1:.3g} over day 1)" in profile_summary(sc)


def test_the_storage_flag_is_spelt_as_the_file_key_too(capsys):
    """--storage-gbps sat beside the file key storage_gb_s: --storage-gb-s is the same flag."""
    runs = []
    for flag in ("--storage-gbps", "--storage-gb-s"):
        argv = ["run", "--gpus", "100000", "--checkpoint-gb-per-gpu", "4", flag, "2000", "--trials", "20", "--json"]
        code, out, _ = _main_out(argv, capsys)
        assert code == 0
        runs.append(json.loads(out))
    assert runs[0] == runs[1] and runs[0]["scenario"]["storage"]["storage_gb_s"] == 2000


def test_one_gpus_time_between_interruptions_is_on_the_jobs_footing_when_rates_vary(capsys):
    """With a burn-in, "one every 23 minutes for the job" stood beside "one GPU: one every 5.8 years" (the base
    rates): 23 minutes x 100,000 GPUs is 4.4 years. One GPU's is the job's gap times its GPUs."""
    import re

    from planner_gui.core.analysis.results import simulate
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.util import fmt

    code, out, _ = _main_out(["run", "--gpus", "100000", "--burn-in", "0.7,30", "--trials", "20"], capsys)
    assert code == 0
    job, gpu = re.search(
        r"(one every [^;]+) for the job on average over the window; one GPU: (one every .+)", out
    ).groups()
    from planner_gui.core.theory.profiles import burn_in_profile

    sc = load_preset("llama3-405b").replace(gpus=100_000, trials=20, rate_profile=burn_in_profile(0.7, 30, 54.0))
    gap = sc.hours / simulate(sc).expected.unplanned
    assert job == fmt.every(gap) and gpu == fmt.every(gap * sc.gpus) and gpu != fmt.every(sc.gpu_mtbf_hours)
    code, out, _ = _main_out(["run", "--gpus", "100000", "--trials", "20"], capsys)
    assert f"one GPU: {fmt.every(load_preset('llama3-405b').gpu_mtbf_hours)}" in out
