"""Every command over every pair of features, and over all of them at once: none refuses a combination.

The features are the eight a 100k plan combines (the fast tier, a persistent stall beside it, a spare pool with a
swap, continuing on replicas, shrinking, rate uncertainty, a burn-in, a training run). Each pair is a small scenario
(2,048 GPUs, a day, a few trials) given to ``run``, ``sweep`` (over GPUs, intervals and spares), ``sensitivity``,
``compare``, ``strategies``, ``study`` and ``report``, in this process. A command may refuse only what the one
table refuses (:func:`planner_gui.core.sim.capabilities.meaningless`: here, shrinking while continuing on replicas),
in its words.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from planner_gui.cli import main
from planner_gui.core.session import plan
from planner_gui.core.sim.capabilities import meaningless

pytestmark = pytest.mark.slow

BASE = ["--gpus", "2048", "--days", "1", "--trials", "6", "--seed", "3"]
FEATURES: dict[str, list[str]] = {
    "fast tier": ["--fast-interval", "2"],
    "persistent stall": ["--fast-interval", "2", "--fast-placement", "same-domain", "--persistent-stall", "5"],
    "spares": ["--spare-nodes", "2", "--swap", "10"],
    "continue": ["--recovery-mode", "continue", "--replica-gpus", "256", "--spare-nodes", "2"],
    "shrink": ["--spare-nodes", "2", "--shrink-to", "1800"],
    "rate uncertainty": ["--rate-uncertainty"],
    "burn-in": ["--burn-in", "0.7,30"],
    "training": ["--compute-gpu-hours", "20000"],
}
PAIRS = [*itertools.combinations(FEATURES, 2), tuple(f for f in FEATURES if f != "shrink")]


def _flags(features: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for f in features:
        flags = FEATURES[f]
        i = 0
        while i < len(flags):  # a flag given twice by two features: once
            if flags[i] not in out:
                out += flags[i : i + 2]
            i += 2
    return out


def _refused_by_the_table(features: tuple[str, ...]) -> str | None:
    """The table's refusal of these features (continuing and shrinking), in the words a command prints."""
    if "continue" in features and "shrink" in features:
        from planner_gui.core.model.scenario import Scenario
        from planner_gui.core.model.spares import Spares

        why = meaningless(Scenario(gpus=2048, spares=Spares(spare_nodes=2, recovery_mode="continue", min_gpus=1800)))
        assert why is not None
        return why.partition(": ")[2]
    return None


def _call(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _check(code: int, err: str, features: tuple[str, ...], command: str) -> None:
    refused = _refused_by_the_table(features)
    if refused is not None:
        assert code == 2 and refused in err and len(err.strip().splitlines()) == 1, (command, err)
        return
    assert code == 0, (command, features, err)
    assert "Traceback" not in err


@pytest.fixture
def small_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's plan at a few points (the same code path as the full one, a fraction of its cost)."""
    from planner_gui.cli import share

    small = plan.Quality("full", None, 3, 6, 3, 6)
    monkeypatch.setattr(plan, "FULL", small)
    monkeypatch.setattr(share, "FULL", small)
    monkeypatch.setattr(plan, "COST_MC_POINTS", 2)
    monkeypatch.setattr(plan, "CURVE_TRAIN_TRIALS", 6)
    monkeypatch.setattr(plan, "SENSITIVITY_TRIALS", 6)


@pytest.mark.parametrize("features", PAIRS, ids=[" + ".join(p) for p in PAIRS])
def test_every_command_takes_every_pair(features, capsys, tmp_path: Path, small_plans) -> None:
    flags = [*BASE, *_flags(features)]
    saved = tmp_path / "pair.json"
    code, out, err = _call(capsys, ["run", *flags, "--json", "--save", str(saved)])
    _check(code, err, features, "run")
    if code != 0:
        return
    d = json.loads(out)
    assert 0.0 <= d["goodput"]["mean"] <= 1.0
    if "training" in features:
        assert d["time_to_train"]["days"]["mean"] >= d["time_to_train"]["ideal_days"]
    if {"spares", "continue", "shrink"} & set(features):
        assert "spares" in d
    for over in ("gpus", "interval", "spares"):
        sweep_flags = [f for f in flags if f not in ("--compute-gpu-hours", "20000")]  # (sweeps report no days)
        code, out, err = _call(capsys, ["sweep", "--over", over, *sweep_flags, "--points", "2"])
        _check(code, err, features, f"sweep --over {over}")
        assert out.count("\n") >= 2
    code, out, err = _call(capsys, ["sensitivity", *flags, "--json"])
    _check(code, err, features, "sensitivity")
    effects = json.loads(out)
    assert all("goodput_delta_se" in e for e in effects)
    code, out, err = _call(capsys, ["compare", str(saved), str(saved), "--json"])
    _check(code, err, features, "compare")
    code, out, err = _call(capsys, ["strategies", *flags, "--scale-gpus", "--json"])
    _check(code, err, features, "strategies")
    study = tmp_path / "study.toml"
    study.write_text(
        f'[study]\nname = "pair"\nscenario = "{saved.name}"\ndesign = "grid"\ntrials = 4\nseed = 1\n'
        "[vary]\ndetect_min = [2, 5]\n",
        encoding="utf-8",
    )
    code, out, err = _call(capsys, ["study", str(study), "-o", str(tmp_path / "study.csv"), "--workers", "1"])
    _check(code, err, features, "study")
    rows = (tmp_path / "study.csv").read_text(encoding="utf-8").splitlines()
    assert len([r for r in rows if r and not r.startswith("#")]) == 3  # a header and two scenarios
    code, out, err = _call(capsys, ["report", *flags, "-o", str(tmp_path / "report.html")])
    _check(code, err, features, "report")
    assert (tmp_path / "report.html").stat().st_size > 10_000


def test_the_table_refuses_continuing_while_shrinking_in_its_words(capsys) -> None:
    features = ("continue", "shrink")
    code, _, err = _call(capsys, ["run", *BASE, *_flags(features)])
    _check(code, err, features, "run")
    assert code == 2
