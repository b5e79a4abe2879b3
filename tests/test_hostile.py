"""Hostile input: whatever a scenario file or a flag holds, the command line either runs (exit 0, results
within their invariants) or refuses it with exit status 2 and exactly one line on stderr starting
"planner-gui: error: " -- never a traceback, a hang, or a runaway allocation.

Most checks call ``planner_gui.cli.main`` in-process (fast); the special files (devices, FIFOs, loops of
links, unreadable files) and Ctrl-C are checked on a real subprocess.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import stat
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner_gui import cli
from planner_gui.cli import flags as cli_flags
from planner_gui.core.analysis import training
from planner_gui.core.files.scenario_io import ScenarioError, loads, scenario_to_dict
from planner_gui.core.model.scenario import Scenario
from planner_gui.core.model.specs import LIMITS
from planner_gui.core.util import fmt

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "planner-gui: error: "
SETTINGS = settings(
    derandomize=True,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# A small, fast, valid document to mutate.
SMALL = scenario_to_dict(Scenario(gpus=64, days=0.05, trials=3))


def call(capfd, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capfd.readouterr()
    return code, out, err


def assert_refused(code: int, err: str) -> str:
    lines = err.splitlines()
    assert code == 2, err
    assert len(lines) == 1 and err.endswith("\n"), repr(err)
    assert lines[0].startswith(PREFIX), repr(err)
    assert "Traceback" not in err and len(lines[0]) <= 500
    assert safe(lines[0]), repr(lines[0])  # no control characters reach the terminal
    return lines[0][len(PREFIX) :]


def safe(text: str) -> bool:
    """No control, format, surrogate, unassigned or separator characters."""
    return not any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Cn", "Zl", "Zp") for ch in text)


def assert_good_report(out: str) -> dict:
    """The JSON report of a good run, checked against the model's invariants."""
    doc = json.loads(out)
    hours = doc["scenario"]["days"] * 24.0
    for key in ("interruptions", "planned_interruptions", "goodput", "lost_gpu_hours"):
        s = doc[key]
        assert all(math.isfinite(v) for v in s.values()), (key, s)
        assert s["p05"] <= s["p50"] <= s["p95"] and s["sem"] >= 0, (key, s)
    assert 0.0 <= doc["goodput"]["mean"] <= 1.0
    # null where no closed form holds (a new cluster's start, spares, both tiers restoring: docs/model.md 3)
    assert doc["goodput_expected"] is None or 0.0 <= doc["goodput_expected"] <= 1.0
    assert doc["interruptions"]["p05"] >= 0 and doc["planned_interruptions"]["p05"] >= 0
    assert sum(doc["hours"].values()) == pytest.approx(hours, rel=1e-6, abs=1e-9)
    assert all(v >= -1e-9 * hours for v in doc["hours"].values()), doc["hours"]
    assert loads(json.dumps(doc["scenario"])) is not None  # the report's scenario is a valid file
    if "time_to_train" in doc:
        tt = doc["time_to_train"]
        assert all(math.isfinite(v) for v in (tt["ideal_days"], tt["gpu_hours"], tt["cost_usd"], *tt["days"].values()))
        assert 0 < tt["ideal_days"] <= tt["days"]["p05"] * (1 + 1e-12) and tt["days"]["p05"] <= tt["days"]["p95"]
        assert tt["cost_usd"] >= 0 and tt["lost_cost_usd"] >= -1e-9 * tt["cost_usd"]
    if "storage" in doc:
        assert doc["storage"]["checkpoint_write_s"] >= 0
        assert doc["storage"]["warning"] is None or "\n" not in doc["storage"]["warning"]
    if "uncertainty" in doc:
        for key in ("interruptions", "goodput"):
            shares = doc["uncertainty"][key]
            assert all(0.0 <= v <= 1.0 for v in shares.values()), shares
            assert sum(shares.values()) in (0.0, pytest.approx(1.0)), shares
    if "rate_profile" in doc:
        bound = doc["rate_profile"]["goodput_expected_bound"]
        assert (bound is None) == (doc["goodput_expected"] is None)  # a bound only beside an expectation
        assert bound is None or 0.0 <= bound < math.inf
    return doc


# -- scenario files -------------------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 1, -1, 2**63, 10**7 + 1, 3650, 100_000, 10**400]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 1e-320, 5e-324, 1e308, 0.01, 0.005, 1.0, 1.0000001]),
    st.text(max_size=30),
    st.sampled_from(["", " ", "optimal", "\n", "\x1b[2J", "\u202e", "a" * 5000, "\ud800"]),
)
json_values = st.recursive(
    json_scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4),
    max_leaves=10,
)
field_names = st.sampled_from([*SMALL, "extra", "gpus\nFAKE: all good", "x" * 5000, ""])
component_fields = st.sampled_from(["name", "category", "rate_per_gpu_hour", "colour", "\x1b]0;t\x07"])


#: Valid values for the numeric fields, small enough that a good file runs in milliseconds.
VALID_VALUES = {
    "gpus": st.integers(1, 100_000),
    "gpus_per_node": st.integers(1, 1024),
    "days": st.floats(0.01, 1.0),
    "planned_per_day": st.floats(0, 1000),
    "checkpoint_interval_min": st.floats(0.01, 525_600) | st.just("optimal"),
    "checkpoint_write_s": st.floats(0, 86_400),
    "detect_min": st.floats(0, 10_080),
    "restart_min": st.floats(0, 10_080),
    "trials": st.integers(1, 20),
    "seed": st.integers(0, 2**63 - 1),
    "gpu_hour_cost_usd": st.floats(0, 10_000),
    "name": st.text(min_size=1, max_size=200).filter(str.strip),  # control characters are allowed in names
}


@st.composite
def valid_documents(draw) -> dict:
    """The small document with a few valid changes: values, names, fewer or other components."""
    doc = json.loads(json.dumps(SMALL))
    for key in draw(st.lists(st.sampled_from(sorted(VALID_VALUES)), max_size=4, unique=True)):
        doc[key] = draw(VALID_VALUES[key])
    if draw(st.booleans()):
        names = draw(st.lists(st.text(min_size=1, max_size=100).filter(str.strip), min_size=1, max_size=8, unique=True))
        doc["components"] = [
            {
                "name": n,
                "category": draw(st.text(min_size=1, max_size=100).filter(str.strip)),
                "rate_per_gpu_hour": draw(st.floats(0, 1e-3)),
            }
            for n in names
        ]
    return doc


@st.composite
def mutated_documents(draw) -> str:
    """A valid document, or one with a few hostile edits: values replaced, keys removed, added or
    repeated, components changed, huge numbers, or its text cut or spliced."""
    doc = draw(valid_documents())
    if draw(st.booleans()):
        return json.dumps(doc)
    for _ in range(draw(st.integers(0, 3))):
        action = draw(st.sampled_from(["set", "set", "drop", "component", "components"]))
        if action == "set":
            doc[draw(field_names)] = draw(json_values)
        elif action == "drop":
            doc.pop(draw(field_names), None)
        elif action == "component" and isinstance(doc.get("components"), list) and doc["components"]:
            comps = doc["components"]
            i = draw(st.integers(0, len(comps) - 1))
            if isinstance(comps[i], dict):
                comps[i][draw(component_fields)] = draw(json_values)
        else:
            doc["components"] = draw(
                st.one_of(
                    json_values,
                    st.lists(
                        st.fixed_dictionaries(
                            {
                                "name": st.text(min_size=1, max_size=5),
                                "category": st.just("GPU"),
                                "rate_per_gpu_hour": st.floats(0, 2),
                            }
                        ),
                        max_size=5,
                    ),
                )
            )
    text = json.dumps(doc)
    edit = draw(st.sampled_from(["none", "cut", "splice", "dup", "huge"]))
    if edit == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    elif edit == "splice":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(max_size=8)) + text[at:]
    elif edit == "dup":  # repeat a key, at the top level or inside a component
        key = draw(st.sampled_from(["gpus", "name", "rate_per_gpu_hour"]))
        text = text.replace(f'"{key}": ', f'"{key}": 1, "{key}": ', 1)
    elif edit == "huge":  # an integer literal past Python's 4,300-digit conversion limit
        key = draw(st.sampled_from(["gpus", "trials", "seed", "format_version", "rate_per_gpu_hour"]))
        huge = draw(st.sampled_from(["", "-"])) + "1" + "0" * draw(st.integers(4300, 6000))
        text = re.sub(f'"{key}": [^,}}]+', f'"{key}": {huge}', text, count=1)
    return text


@SETTINGS
@given(doc=valid_documents())
def test_a_valid_scenario_file_runs_and_reads_back_the_same(tmp_path, capfd, doc):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = call(capfd, "run", "--scenario", str(path), "--json")
    assert code == 0, err
    report = assert_good_report(out)
    assert loads(json.dumps(report["scenario"])) == loads(json.dumps(doc))


@SETTINGS
@given(text=mutated_documents())
def test_a_mutated_scenario_file_runs_or_is_refused_in_one_line(tmp_path, capfd, text):
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        expected = loads(path.read_bytes())
    except ScenarioError as exc:
        expected = None
        assert "\n" not in str(exc)
    # Overrides keep good files fast; the file itself is still validated as written.
    code, out, err = call(capfd, "run", "--scenario", str(path), "--trials", "2", "--days", "0.01", "--json")
    if expected is None:
        assert_refused(code, err)
        assert out == ""
    else:
        assert code == 0, err
        assert_good_report(out)


@SETTINGS
@given(
    data=st.binary(max_size=300)
    | st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass"))
    | mutated_documents().map(lambda t: t.encode("utf-8", "surrogatepass"))
)
def test_loads_raises_only_one_line_scenario_errors(data):
    try:
        loads(data)
    except ScenarioError as exc:
        assert "\n" not in str(exc) and str(exc)


def test_a_duplicate_key_is_refused_at_any_level():
    text = json.dumps(SMALL)
    with pytest.raises(ScenarioError, match=r"^gpus: appears more than once"):
        loads(text.replace('"gpus": 64', '"gpus": 64, "gpus": 65'))
    with pytest.raises(ScenarioError, match=r"^components\[0\]\.rate_per_gpu_hour: appears more than once"):
        loads(text.replace('"rate_per_gpu_hour": ', '"rate_per_gpu_hour": 0, "rate_per_gpu_hour": ', 1))


def test_an_integer_over_4300_digits_is_refused_naming_its_field(tmp_path, capfd):
    text = json.dumps(SMALL).replace('"gpus": 64', '"gpus": 1' + "0" * 5000)
    with pytest.raises(ScenarioError, match=r"^gpus: must be a whole number .*a whole number of 5,001 digits"):
        loads(text)
    path = tmp_path / "big-int.json"
    path.write_text(text)
    code, _, err = call(capfd, "run", "--scenario", str(path))
    assert "gpus" in assert_refused(code, err)


# -- flags ----------------------------------------------------------------------------------------------

#: flag: (low, high, integer, a smaller high that keeps a good run fast)
FLAGS = {
    "--gpus": (*LIMITS["gpus"][:2], True, 100_000),
    "--days": (*LIMITS["days"][:2], False, 0.5),
    "--checkpoint-interval": (*LIMITS["checkpoint_interval_min"][:2], False, None),
    "--checkpoint-write": (*LIMITS["checkpoint_write_s"][:2], False, None),
    "--detect": (*LIMITS["detect_min"][:2], False, None),
    "--restart": (*LIMITS["restart_min"][:2], False, None),
    "--planned-per-day": (*LIMITS["planned_per_day"][:2], False, None),
    "--trials": (*LIMITS["trials"][:2], True, 20),
    "--seed": (*LIMITS["seed"][:2], True, None),
    "--gpu-mtbf-hours": (0.36, math.inf, False, None),  # 0.354 is the smallest for the Llama 3 mix
    "--train-flops": (*LIMITS["train_flops"][:2], False, 1e26),
    "--peak-tflops": (*LIMITS["peak_tflops"][:2], False, None),
    "--mfu": (*LIMITS["mfu"][:2], False, None),
    "--compute-gpu-hours": (*LIMITS["compute_gpu_hours"][:2], False, 1e9),
    "--checkpoint-gb-per-gpu": (*LIMITS["checkpoint_gb_per_gpu"][:2], False, None),
    "--storage-gbps": (*LIMITS["storage_gb_s"][:2], False, None),
}
#: The section each of the new flags writes to (the others set a top-level field of the scenario).
SECTION_FLAGS = {
    **{flag: ("training", f) for f, flag in cli_flags.TRAINING_FLAGS.items()},
    **{flag: ("storage", f) for f, flag in cli_flags.STORAGE_FLAGS.items()},
}
#: The other flag a storage flag needs (on a scenario without storage), with a value that keeps writes short.
STORAGE_PARTNER = {"--checkpoint-gb-per-gpu": "--storage-gbps=100000", "--storage-gbps": "--checkpoint-gb-per-gpu=1"}


def flags_fit_together(values: dict[str, float]) -> bool:
    """Whether flags with good values are accepted together: one of FLOPs and GPU-hours; peak and MFU only
    with FLOPs; both storage flags, never beside --checkpoint-write, and a write of at most a day."""
    given = set(values)
    if {"--train-flops", "--compute-gpu-hours"} <= given:
        return False
    if "--compute-gpu-hours" in given and given & {"--peak-tflops", "--mfu"}:
        return False
    storage = given & set(STORAGE_PARTNER)
    if len(storage) == 1 or (storage and "--checkpoint-write" in given):
        return False
    if storage:
        write = values.get("--gpus", 16_384) * values["--checkpoint-gb-per-gpu"] / values["--storage-gbps"]
        return write <= LIMITS["checkpoint_write_s"][1]
    return True


#: The flags of rates that vary, which are not numbers (a switch, a pair, a file): values that must run,
#: and values that must be refused in one line naming the flag. Files are made by ``rate_files``.
RATE_FLAGS = {
    "--rate-uncertainty": ([None], []),
    "--no-rate-uncertainty": ([None], []),
    "--burn-in": (
        ["0.7,30", "1,5", "0.2,0.001", "0.9,0.001", " 0.5 , 1 ", "+0.8,1e1", "0.95,1_000.5"],
        [
            "1.5,30",
            "0,30",
            "0.7,0",
            "0.7",
            "0.7,1,000",
            "0.7;30",
            "x,3",
            "nan,3",
            "0.7,inf",
            "",
            "0.7,",
            ",30",
            "\u0661,3",
            "0.7,30\n",
            "0.7,30,",
            "-0.5,30",
            "0.7,100001",
            "1" * 200 + ",3",
            "0.05,0.001",  # valid alone, but the first piece's rate would be 6.6e19 times the burnt-in one
            "0.3,1_000",
        ],
    ),
    "--rate-profile": (
        ["steps.csv", "steps.json", "scenario.json", "header.csv"],
        [
            "missing.csv",
            "empty.csv",
            "words.csv",
            "decreasing.csv",
            "late-start.csv",
            "three.csv",
            "nan.json",
            "null.json",
            "huge.csv",
            "binary.csv",
            "directory",
        ],
    ),
}


def rate_files(folder: Path) -> dict[str, Path]:
    """Profile files for ``RATE_FLAGS``, good and bad."""
    texts = {
        "steps.csv": "0,3\n0.01,1\n0.03,0.5\n",
        "steps.json": "[[0, 2], [0.02, 0.25]]",
        "scenario.json": json.dumps(dict(SMALL, format_version=2, rate_profile=[[0, 4.0]])),
        "header.csv": "# a comment\nday,multiplier\n\n0,1.5\n",
        "empty.csv": "",
        "words.csv": "day,multiplier\nzero,one\n",
        "decreasing.csv": "0,1\n2,1\n1,1\n",
        "late-start.csv": "1,2\n",
        "three.csv": "0,1,2\n",
        "nan.json": "[[0, NaN]]",
        "null.json": "null",
        "huge.csv": "0,1\n" * 600_000,
        "binary.csv": "\udcff0,1",
    }
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8", errors="surrogateescape")
    (folder / "directory").mkdir()
    return {name: folder / name for name in (*texts, "directory", "missing.csv")}


ARABIC = str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")


def _grouped(digits: str, sep: str) -> str:
    head = len(digits) % 3 or 3
    return sep.join([digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)])


@st.composite
def flag_values(draw, flag: str, good: bool = False) -> tuple[str, bool, float]:
    """(a value for ``flag`` as typed, whether it must be accepted, the number it means); with ``good``, one
    that must be accepted."""
    lo, hi, integer, fast_hi = FLAGS[flag]
    ok = good or draw(st.booleans())  # in range?
    if ok:
        top = min(fast_hi if fast_hi is not None else hi, 10**12 if lo < 10**12 else math.inf)
        value = draw(st.integers(math.ceil(lo), int(top)) if integer else st.floats(lo, top))
    else:
        outside = [lo - 1, -1, hi * 10 if math.isfinite(hi) else -2, lo / 2 if lo > 0 else -0.5]
        value = draw(st.sampled_from([int(v) for v in outside if int(v) < lo or int(v) > hi] if integer else outside))
    whole = isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e15)
    digits = str(abs(int(value))) if whole else ""
    sign = "-" if value < 0 else ""
    text = str(int(value)) if isinstance(value, int) else repr(float(value))
    styles = ["plain", "comma", "underscore", "spaces", "plus", "exponent"]
    if not good:
        styles += ["plain", "bad-comma", "arabic", "junk", "empty", "not-finite"]
    style = draw(st.sampled_from(styles))
    if style == "comma" and whole:
        text = sign + _grouped(digits, ",")  # 1,000,000: well-formed groups
    elif style == "underscore" and whole:
        text = sign + _grouped(digits, "_")
    elif style == "bad-comma" and whole:
        text, ok = sign + digits[:-2] + "," + digits[-2:], False  # 1,5 or 1,00 or ,15: never groups of three
    elif style == "spaces":
        text = f" {text} "
    elif style == "plus" and not sign:
        text = "+" + text
    elif style == "arabic":
        text, ok = text.translate(ARABIC), False
    elif style == "junk":
        text, ok = text + draw(st.sampled_from(["x", "\n", "\x1b[2J", "\u202e", "%", "1" * 5000])), False
    elif style == "empty":
        text, ok = draw(st.sampled_from(["", "   "])), False
    elif style == "not-finite":
        text, ok = draw(st.sampled_from(["nan", "inf", "-Infinity", "1e999"])), False
    elif style == "exponent" and value != 0:
        mantissa, exp = f"{float(value):.17e}".split("e")
        text = f"{mantissa}e{int(exp)}"
        ok = ok and (not integer or float(text) == value)
    return text, ok, value


@st.composite
def command_lines(draw) -> tuple[list[str], bool, dict[str, float]]:
    argv = ["run", "--json", "--days", "0.05", "--trials", "3"]  # small; a fuzzed flag given later wins
    ok, values = True, {}
    all_good = draw(st.booleans())
    for flag in draw(st.lists(st.sampled_from(sorted(FLAGS)), min_size=1, max_size=3, unique=True)):
        text, good, values[flag] = draw(flag_values(flag, all_good))
        ok = ok and good
        argv.append(f"{flag}={text}")  # with '=', a value starting with '-' is still the flag's value
    return argv, ok and flags_fit_together(values), values


@SETTINGS
@given(case=command_lines())
def test_flags_are_accepted_or_refused_alike_in_one_line(capfd, monkeypatch, case):
    argv, ok, values = case
    # A time to train is refused when it would draw too many spacings (or never end): a lower limit keeps
    # every accepted run fast, and the refusal is one line like any other.
    monkeypatch.setattr(training, "MAX_SPACINGS", 2e6)
    code, out, err = call(capfd, *argv)
    if not ok:
        assert_refused(code, err)
        return
    if code == 2 and set(values) & set(cli_flags.TRAINING_FLAGS.values()):
        assert assert_refused(code, err).startswith("training: "), err
        return
    assert code == 0, (argv, err)
    doc = assert_good_report(out)
    for flag, value in values.items():  # each flag means the number it was generated from
        if flag == "--gpu-mtbf-hours":
            assert doc["gpu_mtbf_hours"] == pytest.approx(value, rel=1e-9), argv
        elif flag in SECTION_FLAGS:
            section, field = SECTION_FLAGS[flag]
            assert doc["scenario"][section][field] == value, (argv, field)
        else:
            field = next(f for f, name in cli_flags.FLAG_FIELDS.items() if name == flag)
            assert doc["scenario"][field] == value, (argv, field)


@pytest.mark.parametrize("flag", sorted(FLAGS))
def test_every_numeric_flag_reads_separators_alike(capfd, flag):
    lo, hi, _, fast_hi = FLAGS[flag]
    good = "1,000" if min(hi, fast_hi or hi) >= 1000 else "1"
    if lo > 1000:  # the training compute: its smallest value, in groups of three
        good = _grouped(str(int(lo)), ",")
    fast = ["--days", "0.05", "--trials", "3", *([STORAGE_PARTNER[flag]] if flag in STORAGE_PARTNER else [])]
    code, _, err = call(capfd, "run", *fast, f"{flag}={good}")
    assert code == 0, err
    code, _, err = call(capfd, "run", *fast, f"{flag}=1,5")
    assert "groups of three digits" in assert_refused(code, err)
    code, _, err = call(capfd, "run", *fast, f"{flag}=\u0661\u0662\u0663")
    assert "ASCII" in assert_refused(code, err)


@pytest.mark.parametrize("flag", sorted(RATE_FLAGS))
def test_rate_flags_run_or_are_refused_in_one_line(tmp_path, capfd, flag):
    files = rate_files(tmp_path)
    good, bad = RATE_FLAGS[flag]
    fast = ["run", "--json", "--days", "0.05", "--trials", "3"]
    for value in good:
        given = [flag] if value is None else [f"{flag}={files.get(value, value)}"]
        code, out, err = call(capfd, *fast, *given)
        assert code == 0, (flag, value, err)
        doc = assert_good_report(out)
        scenario = doc["scenario"]
        if flag == "--rate-uncertainty":
            assert scenario["rate_uncertainty"] is True and "uncertainty" in doc
        elif flag == "--no-rate-uncertainty":
            assert "rate_uncertainty" not in scenario and "uncertainty" not in doc
        else:
            assert scenario["rate_profile"][0][0] == 0 and "rate_profile" in doc
            assert loads(json.dumps(scenario)).rate_profile is not None
    for value in bad:
        code, out, err = call(capfd, *fast, f"{flag}={files.get(value, value)}")
        assert flag in assert_refused(code, err) and out == "", (flag, value)


def test_rate_flags_combine_and_conflict_in_one_line(tmp_path, capfd):
    files = rate_files(tmp_path)
    fast = ["run", "--json", "--days", "0.05", "--trials", "3"]
    code, out, err = call(capfd, *fast, "--rate-uncertainty", "--burn-in", "0.7,30", "--gpus", "1,000")
    assert code == 0, err
    assert "uncertainty" in assert_good_report(out)
    code, _, err = call(capfd, *fast, "--burn-in", "0.7,30", f"--rate-profile={files['steps.csv']}")
    assert "--burn-in" in assert_refused(code, err)
    # Sensitivity takes them (paired Monte Carlo, each effect with its standard error), as every command does.
    code, out, err = call(capfd, "sensitivity", "--rate-uncertainty", "--days", "1", "--trials", "40", "--json")
    assert code == 0, err
    effects = json.loads(out)
    assert effects and all(e["goodput_delta_se"] is not None and e["goodput_delta_se"] >= 0 for e in effects)


def test_thousands_separators_mean_the_same_in_every_flag(capfd):
    code, out, err = call(capfd, "run", "--gpus", "100_000", "--days", "1,000.5", "--trials", "1", "--json")
    assert code == 0, err
    sc = json.loads(out)["scenario"]
    assert (sc["gpus"], sc["days"]) == (100_000, 1000.5)
    code, out, err = call(capfd, "run", "--gpus", "1,000", "--days", "1,000", "--trials", "1", "--json")
    assert code == 0, err
    sc = json.loads(out)["scenario"]
    assert (sc["gpus"], sc["days"]) == (1000, 1000)


@pytest.mark.parametrize(
    "argv,field",
    [
        (["run", "--scenario", ""], "--scenario"),
        (["run", "--preset", ""], "--preset"),
        (["sweep", "-o", ""], "--output"),
        (["run", "--save", ""], "--save"),
        (["run", "--name", ""], "--name"),
        (["run", "--name", " "], "--name"),
        (["run", "--name", "x" * 201], "--name"),
        (["run", "--scenario", "a\0b"], "--scenario"),
    ],
)
def test_empty_and_impossible_names_are_refused(capfd, argv, field):
    code, out, err = call(capfd, *argv)
    assert field in assert_refused(code, err) and out == ""


def test_user_text_is_echoed_on_one_short_line(tmp_path, capfd):
    doc = dict(SMALL)
    doc["gpus\nFAKE: all good"] = 1
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    code, _, err = call(capfd, "run", "--scenario", str(path))
    assert "gpus\\nFAKE: all good: unknown key" in assert_refused(code, err)
    doc = dict(SMALL)
    doc["k" * 5000] = 1
    path.write_text(json.dumps(doc))
    code, _, err = call(capfd, "run", "--scenario", str(path))
    assert len(assert_refused(code, err)) < 300
    code, _, err = call(capfd, "run", "--bogus\n--x", "\x1b[2J")
    assert "\\x1b[2J" in assert_refused(code, err)


@pytest.mark.parametrize("value", ["-inf", "-1e5", "-1,000", "-nan", "-.5", "-Infinity"])
@pytest.mark.parametrize("flag", ["--gpus", "--fast-stall", "--days"])
def test_negative_values_reach_the_flags_own_check(capfd, flag, value):
    """argparse took -inf and -1e5 for flags and said only "expected one argument"."""
    code, _, err = call(capfd, "run", flag, value)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert flag in err and "expected one argument" not in err


def test_an_alias_is_named_as_typed(capfd):
    code, _, err = call(capfd, "run", "--persistent-interval", "0")
    assert code == 2 and "--persistent-interval: must be 'optimal' or a number from 0.01" in err
    code, out, _ = call(capfd, "run", "--persistent-stall", "7", "--trials", "10")
    assert code == 0 and out.splitlines()[0].endswith("edited: --persistent-stall 7")
    code, out, _ = call(capfd, "run", "--checkpoint-write", "7", "--trials", "10")
    assert code == 0 and out.splitlines()[0].endswith("edited: --checkpoint-write 7")


def test_one_gpu_is_one_gpu(capfd):
    code, out, _ = call(capfd, "run", "--gpus", "1", "--trials", "1")
    assert code == 0 and out.splitlines()[1].startswith("  1 GPU (1 node) for 54 days; 1 trial,")
    code, out, _ = call(capfd, "run", "--checkpoint-write", "0", "--trials", "1")  # the optima are the floor's
    assert code == 0 and "(no write: the shortest interval taken, 0.6 s)" in out


def test_a_huge_whole_number_is_echoed_short(capfd):
    """1e300 as a whole number has 301 digits, all but the first few a float's noise."""
    for argv in (("run", "--gpus", "1e300"), ("fit", "incidents.csv", "--gpus", "1e300")):
        code, _, err = call(capfd, *argv)
        assert code == 2 and err.strip().endswith("--gpus: must be a whole number from 1 to 10,000,000 (got 1e+300)")


@pytest.mark.parametrize(
    ("years", "shown"),
    [(5.8, "5.8 years"), (1212.04, "1,212 years"), (123_456.7, "123,457 years"), (6.97e292, "7e+292 years")],
)
def test_long_durations_read_in_a_few_characters(years, shown):
    assert fmt.duration_hours(years * 24 * 365) == shown


def test_a_huge_mean_time_between_failures_is_shown_short(capfd):
    code, out, err = call(capfd, "run", "--gpu-mtbf-hours", "1e300", "--trials", "10")
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) < 200
    # 1e300 h per GPU / 16,384 GPUs / 8,760 h a year; one GPU alone: 1e300 / 8,760
    assert "one every 7e+291 years for the job; one GPU: one every 1.1e+296 years" in out


def test_names_with_terminal_escapes_are_shown_escaped(tmp_path, capfd):
    doc = json.loads(json.dumps(SMALL))
    doc["name"] = "\x1b]0;owned\x07\x1b[2J\u202eevil\nsecond line"
    doc["components"][0]["name"] = "GPU \x1b[31mred"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    code, out, err = call(capfd, "run", "--scenario", str(path), "--trials", "2")
    assert code == 0, err
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert out.splitlines()[0] == "\\x1b]0;owned\\x07\\x1b[2J\\u202eevil\\nsecond line"
    assert "GPU \\x1b[31mred" in out


# -- special files and signals, as a user meets them: a real process -------------------------------------


def cli_process(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "planner_gui", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )


def special_files(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    loop_a, loop_b = tmp_path / "loop-a.json", tmp_path / "loop-b.json"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    return {"/dev/zero": Path("/dev/zero"), "FIFO": fifo, "directory": tmp_path, "loop": loop_a}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_special_files_are_refused_without_hanging_or_reading_them(tmp_path):
    expect = {"/dev/zero": "character device", "FIFO": "FIFO", "directory": "directory", "loop": "symbolic links"}
    for what, path in special_files(tmp_path).items():
        for flag in ("--scenario", "--rate-profile"):
            t0 = time.monotonic()
            out = cli_process("run", flag, str(path), timeout=30)  # a hang or a read of /dev/zero times out
            assert time.monotonic() - t0 < 30
            assert expect[what] in assert_refused(out.returncode, out.stderr), (what, flag)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files without permission")
def test_an_unreadable_file_is_refused(tmp_path):
    path = tmp_path / "secret.json"
    path.write_text(json.dumps(SMALL))
    path.chmod(0)
    out = cli_process("run", "--scenario", str(path))
    assert "Permission denied" in assert_refused(out.returncode, out.stderr)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_outputs_onto_special_files_are_refused_before_computing(tmp_path, capfd):
    files = special_files(tmp_path)
    for what, path in files.items():
        if what == "/dev/zero":
            continue  # never aim a write at a real device, even one that would be refused
        code, _, err = call(capfd, "sweep", "--points", "2", "--trials", "2", "-o", str(path))
        assert "cannot write" in assert_refused(code, err), what
        assert not stat.S_ISREG(os.lstat(path).st_mode)
    assert stat.S_ISFIFO(os.stat(files["FIFO"]).st_mode)


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_a_long_run_with_one_line_and_status_130():
    # About 7 s of work: long enough that the estimate is printed first, which says the run has begun.
    proc = subprocess.Popen(
        [sys.executable, "-m", "planner_gui", "run", "--gpus", "1000000", "--days", "365", "--trials", "4000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        first = proc.stderr.readline()
        assert "about" in first and "Ctrl-C" in first, first
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, rest = proc.communicate(timeout=30)
        assert time.monotonic() - t0 < 5, "the run did not stop promptly"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, rest
    assert rest.splitlines()[-1] == "planner-gui: interrupted", rest
    assert "Traceback" not in rest and out == ""
