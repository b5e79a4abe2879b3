"""Design studies: study files, designs and seeds, runners (one process, the pool, a Dask cluster) giving
each scenario's own numbers, the results writer (resume, duplicates, a killed run), Sobol indices with
known answers, the summary and the command line's errors."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import leftover_processes

from planner_gui.cli import main
from planner_gui.core.analysis.results import simulate
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import scenario_from_dict
from planner_gui.core.study import (
    Backend,
    ResultStore,
    StudyError,
    design_size,
    loads_spec,
    read_results,
    read_spec,
    run_study,
    scenario_doc,
    scenario_seed,
    sobol_indices,
    study_meta,
    values_of,
)
from planner_gui.core.study.store import StudyResults, row_check
from planner_gui.core.study.worker import OUTPUTS, TOTAL_COST, output_row

ROOT = Path(__file__).resolve().parent.parent

SMALL = """
[study]
name = "small"
design = "lhs"
samples = 6
trials = 40
seed = 11

[vary]
detect_min = { min = 1, max = 30, scale = "log" }
checkpoint_write_s = { min = 1, max = 120 }
gpus = { min = 8192, max = 65536, scale = "log" }
"""


def write_spec(tmp_path: Path, text: str, name: str = "study.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def run_to(spec_path: Path, out: Path, backend: Backend, fresh: bool = True) -> StudyResults:
    spec = read_spec(spec_path)
    store = ResultStore(out, study_meta(spec, design_size(spec)), fresh=fresh)
    try:
        run_study(spec, store, backend)
    finally:
        store.close()
    return read_results(out)


def rows_of(res: StudyResults) -> list[dict]:
    cols = list(res.columns)
    out = []
    for i in range(res.rows):
        row = {}
        for c in cols:
            v = res.columns[c][i]
            v = v.item() if isinstance(v, np.generic) else v
            row[c] = None if isinstance(v, float) and math.isnan(v) else v
        out.append(row)
    return out


def alone(spec_path: Path, index: int) -> dict:
    """Scenario ``index`` run by itself, as ``planner-gui run --scenario`` would."""
    spec = read_spec(spec_path)
    sc = scenario_from_dict(scenario_doc(spec, index))
    return output_row(simulate(sc).to_json_dict())


# -- study files -----------------------------------------------------------------------------------------


def test_paths_reach_any_field_of_the_file_form():
    spec = loads_spec(
        """
        [study]
        trials = 10
        [set]
        storage = { checkpoint_gb_per_gpu = 2, storage_gb_s = 2000 }
        [vary]
        "components.Faulty GPU.rate_per_gpu_hour" = [1e-6, 2e-6]
        storage.storage_gb_s = [1000, 4000]
        "multiplier.Network" = [0.5, 2]
        multiplier = [1, 3]
        """
    )
    names = [i.name for i in spec.inputs]
    assert names == [
        "components.Faulty GPU.rate_per_gpu_hour",
        "storage.storage_gb_s",
        "multiplier.Network",
        "multiplier",
    ]
    assert design_size(spec) == 16
    values = values_of(spec, 15)
    assert values == (2e-6, 4000, 2, 3)
    sc = scenario_from_dict(scenario_doc(spec, 15))
    base = load_preset("llama3-405b")
    by_name = {c.name: c for c in sc.components}
    assert by_name["Faulty GPU"].rate_per_gpu_hour == pytest.approx(2e-6 * 3)  # set, then every rate x3
    for c in base.components:
        want = c.rate_per_gpu_hour * 3 * (2 if c.category == "Network" else 1)
        if c.name != "Faulty GPU":
            assert by_name[c.name].rate_per_gpu_hour == pytest.approx(want)
    assert sc.storage is not None and sc.storage.storage_gb_s == 4000 and sc.storage.checkpoint_gb_per_gpu == 2
    assert sc.trials == 10 and sc.seed == scenario_seed(base.seed, 15)


def test_grid_order_first_input_slowest_and_ranges_spread_ends_included():
    spec = loads_spec(
        """
        [vary]
        detect_min = [1, 2]
        checkpoint_write_s = { min = 1, max = 100, scale = "log", points = 3 }
        """
    )
    got = [values_of(spec, i) for i in range(design_size(spec))]
    assert got == [(1, 1.0), (1, 10.0), (1, 100.0), (2, 1.0), (2, 10.0), (2, 100.0)]


def test_integer_fields_take_whole_numbers_and_lhs_strata_hold_one_point_each():
    spec = loads_spec(SMALL.replace("samples = 6", "samples = 50"))
    vals = [values_of(spec, i) for i in range(50)]
    assert all(isinstance(v[2], int) and 8192 <= v[2] <= 65536 for v in vals)
    u = np.log10([v[0] for v in vals])  # detect_min, log range 1-30: strata in its logarithm
    strata = np.floor((u - 0) / (math.log10(30) / 50)).astype(int)
    assert sorted(strata.tolist()) == list(range(50))


def test_seeds_depend_on_the_study_seed_and_index_only():
    assert scenario_seed(5, 3) == scenario_seed(5, 3)
    seeds = {scenario_seed(5, i) for i in range(1000)}
    assert len(seeds) == 1000 and all(0 <= s < 2**63 for s in seeds)
    assert scenario_seed(6, 3) != scenario_seed(5, 3)


def test_a_varied_seed_is_kept():
    spec = loads_spec("[vary]\nseed = [1, 2]\n")
    assert [scenario_from_dict(scenario_doc(spec, i)).seed for i in range(2)] == [1, 2]


def test_levels_of_text_and_numbers_are_one_text_column(tmp_path):
    p = write_spec(tmp_path, '[study]\ntrials = 20\n[vary]\ncheckpoint_interval_min = ["optimal", 30]\n')
    res = run_to(p, tmp_path / "r.csv", Backend(workers=1))
    assert res.columns["checkpoint_interval_min"] == ["optimal", "30"]
    assert res.meta["columns"]["checkpoint_interval_min"] == "text"
    assert res.columns["interval_used_min"][1] == 30


BAD_SPECS = [
    ("[vary]\n", "name at least one input"),
    (
        '[study]\ndesign = "sobol"\nsamples = 1048576\n[vary]\ngpus = { min = 1024, max = 8192 }\n'
        "detect_min = { min = 1, max = 30 }\n",
        "at most 131,072 with 2 inputs",  # the largest power of 2 (the size alone, 250,000, is not one)
    ),
    ("[vary]\ngpus = 5\n", "a value for every scenario belongs under [set]"),
    ("[vary]\ndetect_mins = [1, 2]\n", "detect_mins: unknown key (allowed: format_version, name, gpus"),
    ('[vary]\n"components.Faulty GPU.rate" = [1e-6]\n', "components[0].rate: unknown key"),
    ("[vary]\ngpus = [0, 10]\n", "gpus: must be a whole number from 1"),
    ("[vary]\ngpus = { min = 10, max = 5, points = 2 }\n", "min < max"),
    ("[vary]\ngpus = { min = 1000, max = 5000 }\n", "a grid needs points"),
    ('[vary]\n"components.No Such.rate_per_gpu_hour" = [1e-6]\n', "no component named 'No Such'"),
    ("[vary]\nmultiplier.Nope = [1, 2]\n", "no component of category 'Nope'"),
    ("[vary]\ntiers.fast_interval_min = [1, 2]\n", "the base scenario has no 'tiers' section"),
    ("[vary]\nstorage.storage_gb_s = [1, 2]\n", "the base scenario has no 'storage' section"),
    (
        "[study]\ndesign = 'sobol'\nsamples = 12\n[vary]\ngpus = { min = 1000, max = 5000 }\n"
        "days = { min = 1, max = 2 }\n",
        "power of 2",
    ),
    ("[study]\ndesign = 'mc'\n[vary]\ngpus = [1, 2]\n", "study.design: must be one of grid, lhs, sobol"),
    ("[study]\npreset = 'nope'\n[vary]\ngpus = [1, 2]\n", "unknown preset 'nope'"),
    ("[study]\ntrials = 0\n[vary]\ngpus = [1, 2]\n", "study.trials: must be a whole number"),
    ("[studdy]\n", "unknown table"),
    ("design = 'grid'\n[vary]\ngpus = [1024, 2048]\n", "design: a key outside any table (it belongs under [study])"),
    ("gpus = 1024\n[vary]\ndays = [1, 2]\n", "gpus: a key outside any table; the file holds [study], [set] and"),
    ("[vary\n", "not valid TOML"),
    ("[vary]\ngpus = [1, 1]\n", "a value appears more than once"),
    ("[vary]\ntrials = [1, 2]\n", "study.trials"),
    ("[vary]\ngpus = { min = 1000, max = 1e9, scale = 'log', points = 2 }\n", "gpus: must be a whole number"),
    ("[study]\ntrials = 100000\n[vary]\ngpus = [10000000, 100]\n", "interruptions to simulate"),
    ("[vary]\ngpus = { min = 1, max = 10, points = 2, step = 1 }\n", "unknown key"),
    ("[vary]\ngpus = {}\n", "vary.gpus: empty range; give min and max or a list"),
    ("[vary.storage]\n", "vary.storage: empty range; give min and max or a list"),
    ("[vary]\ngpus = { min = 1, max = 3, points = 10 }\n", "give only 3 different values; use points = 3"),
    ("[vary]\ngpus = { min = 1000, max = 3000, points = 1 }\n", "points: must be a whole number from 2"),
    ("[set]\ndays = 3\n[vary]\ndays = [1, 2]\n", "vary.days: also under [set]"),
    ("[vary]\n" + "a." * 1000 + "a = [1, 2]\n", "nested deeper than any field of a scenario"),
    ("[set]\n" + "a." * 1000 + "a = 1\n[vary]\ngpus = [1024, 2048]\n", "nested deeper than any field"),
    ('[vary]\n"' + "a." * 1000 + 'a" = [1, 2]\n', "nested deeper than any field of a scenario"),
    ("[vary]\ngpus = [" + "1" * 5000 + "]\n", "a whole number of more than 4,300 digits; no field takes one"),
    ("[set]\ngpus = " + "9" * 5000 + "\n[vary]\ndays = [1, 2]\n", "more than 4,300 digits"),
    ("[vary]\na = " + "{ b = " * 1000 + "1" + " }" * 1000 + "\n", "not valid TOML (nested too deeply)"),
    ("[vary]\n" + "[" * 600 + "]" * 600 + "\n", "not valid TOML"),
    (
        "[study]\ndesign = 'lhs'\nsamples = 2000000\n[vary]\ngpus = { min = 1000, max = 5000 }\n",
        "at most 1,000,000, the most scenarios a study holds",
    ),
    (
        "[study]\ndesign = 'sobol'\nsamples = 524288\n[vary]\ngpus = { min = 1000, max = 5000 }\n"
        "days = { min = 1, max = 2 }\n",
        "= 2,097,152 scenarios, over the limit of 1,000,000 scenarios in a study; the most with 2 inputs is "
        "samples = 131,072",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD_SPECS)
def test_bad_study_files_give_one_line_errors(tmp_path, capsys, text, expected):
    p = write_spec(tmp_path, text)
    with pytest.raises(StudyError) as err:
        read_spec(p)
    assert expected in str(err.value) and "\n" not in str(err.value)
    assert main(["study", str(p), "-o", str(tmp_path / "r.parquet")]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1 and expected in out.err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["study"], "give a study file"),
        (["study", "SPEC", "-o", "r.txt"], "a .parquet or a .csv file"),
        (["study", "SPEC"], "--output: give the results file"),
        (["study", "SPEC", "-o", "r.parquet", "--scheduler", "localhost:8786"], "must be tcp://HOST:PORT"),
        (["study", "SPEC", "-o", "r.parquet", "--workers", "0"], "--workers: must be from 1"),
        (["study", "SPEC", "--show", "99"], "--show: must be a scenario index from 0 to 5"),
        (["study", "--summary", "missing.parquet"], "cannot read (No such file or directory)"),
        (["study", "--summary", "SPEC"], "a .parquet or a .csv file"),
        (["study", "SPEC", "-o", "r.parquet", "--where", "goodput.mean>=0.9"], "--where: goes with --summary"),
        (["study", "SPEC", "-o", "nodir/r.parquet"], "cannot write"),
    ],
)
def test_bad_flags_give_one_line_errors(tmp_path, capsys, monkeypatch, argv, expected):
    monkeypatch.chdir(tmp_path)
    p = write_spec(tmp_path, SMALL)
    argv = [str(p) if a == "SPEC" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and expected in err, err


def test_the_shipped_example_study_reads():
    spec = read_spec(ROOT / "docs" / "examples" / "study-sobol.toml")
    assert spec.design == "sobol" and design_size(spec) == spec.samples * (len(spec.inputs) + 2)
    grid = read_spec(ROOT / "docs" / "examples" / "study-grid.toml")
    assert grid.design == "grid"


# -- same numbers everywhere -----------------------------------------------------------------------------


def test_one_process_gives_each_scenario_its_own_numbers(tmp_path):
    p = write_spec(tmp_path, SMALL)
    res = run_to(p, tmp_path / "one.parquet", Backend(workers=1))
    assert sorted(res.columns["index"].tolist()) == list(range(6))
    for row in rows_of(res):
        want = alone(p, row["index"])
        assert {c: row[c] for c in (*(c for c, _ in OUTPUTS), TOTAL_COST)} == want
        assert row["seed"] == scenario_seed(11, row["index"])


def test_show_prints_a_scenario_file_that_run_reproduces(tmp_path, capsys):
    p = write_spec(tmp_path, SMALL)
    res = run_to(p, tmp_path / "one.csv", Backend(workers=1))
    assert main(["study", str(p), "--show", "4"]) == 0
    scen = tmp_path / "s4.json"
    scen.write_text(capsys.readouterr().out)
    assert main(["run", "--scenario", str(scen), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    row = rows_of(res)[4]
    assert report["goodput"]["mean"] == row["goodput.mean"]
    assert report["interruptions"]["p95"] == row["interruptions.p95"]
    assert report["lost_cost_usd"] == row["lost_cost_usd"]


@pytest.mark.slow
def test_the_process_pool_gives_the_same_rows_as_one_process(tmp_path):
    p = write_spec(tmp_path, SMALL)
    one = rows_of(run_to(p, tmp_path / "one.parquet", Backend(workers=1)))
    pool = rows_of(run_to(p, tmp_path / "pool.parquet", Backend(workers=2)))
    assert pool == one


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
    ) as c:
        yield c


@pytest.mark.slow
def test_a_dask_cluster_gives_the_same_rows_as_one_process(tmp_path, cluster, capsys):
    p = write_spec(tmp_path, SMALL)
    one = rows_of(run_to(p, tmp_path / "one.parquet", Backend(workers=1)))
    out = tmp_path / "dask.parquet"
    assert main(["study", str(p), "-o", str(out), "--scheduler", cluster.scheduler_address]) == 0
    assert "on the Dask cluster at tcp://" in capsys.readouterr().err
    assert rows_of(read_results(out)) == one


@pytest.mark.slow
def test_a_killed_dask_worker_loses_and_duplicates_nothing(tmp_path, cluster):
    from distributed import Client

    text = SMALL.replace("samples = 6", "samples = 60").replace("trials = 40", "trials = 200")
    p = write_spec(tmp_path, text)
    one = rows_of(run_to(p, tmp_path / "one.parquet", Backend(workers=1)))
    spec = read_spec(p)
    out = tmp_path / "dask.parquet"
    store = ResultStore(out, study_meta(spec, design_size(spec)), fresh=True)
    killed = []
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        pids = client.run(os.getpid)

        def progress(done, total, start):
            if done > 0 and not killed:
                pid = next(iter(pids.values()))
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

        import planner_gui.core.study.runners as runners

        old = runners.TASK_MAX_SCENARIOS
        runners.TASK_MAX_SCENARIOS = 2  # many small tasks, so some are running on the worker that dies
        try:
            run_study(spec, store, Backend(scheduler=cluster.scheduler_address), progress)
        finally:
            runners.TASK_MAX_SCENARIOS = old
            store.close()
        client.wait_for_workers(2, timeout=60)
    assert killed
    got = rows_of(read_results(out))
    assert [r["index"] for r in got] == list(range(60))
    assert got == one


# -- the writer -------------------------------------------------------------------------------------------


def test_a_row_that_arrives_twice_is_kept_once(tmp_path):
    p = write_spec(tmp_path, SMALL)
    row = rows_of(run_to(p, tmp_path / "full.csv", Backend(workers=1)))[3]
    spec = read_spec(p)
    store = ResultStore(tmp_path / "r.parquet", study_meta(spec, 6), fresh=True)
    assert store.add(dict(row)) is True
    assert store.add(dict(row)) is False
    assert store.add({**row, "goodput.mean": row["goodput.mean"] / 2}) is False
    assert store.duplicates == 2 and store.mismatches == [3]
    store.close()
    res = read_results(tmp_path / "r.parquet")
    assert res.columns["index"].tolist() == [3] and res.columns["goodput.mean"].tolist() == [row["goodput.mean"]]
    assert not (tmp_path / "r.parquet.journal").exists()


def test_a_killed_run_resumes_from_its_journal_without_loss_or_duplicates(tmp_path):
    p = write_spec(tmp_path, SMALL)
    full = rows_of(run_to(p, tmp_path / "full.csv", Backend(workers=1)))
    spec = read_spec(p)
    out = tmp_path / "r.csv"
    meta = study_meta(spec, 6)
    # What a run killed with SIGKILL leaves: no output, a journal of some rows and a line cut short.
    journal = tmp_path / "r.csv.journal"
    fp = meta["fingerprint"]
    lines = [json.dumps({"fingerprint": fp})] + [
        json.dumps({**full[i], "check": row_check(fp, full[i])}) for i in (0, 2, 2)
    ]
    journal.write_text("\n".join(lines) + "\n" + json.dumps(full[4])[:25])
    store = ResultStore(out, meta)
    assert sorted(store.done) == [0, 2]
    assert store.notes == [
        "r.csv.journal: its last line was cut short (a stop while it was written); that scenario runs again"
    ]
    # The rows it held are in the output now, and the journal is gone: a second kill finds whole lines.
    assert rows_of(read_results(out)) == [full[0], full[2]] and not journal.exists()
    assert run_study(spec, store, Backend(workers=1)) == 4
    store.close()
    assert rows_of(read_results(out)) == full
    assert not journal.exists()


def test_an_interrupted_study_resumes_and_skips_what_is_done(tmp_path):
    p = write_spec(tmp_path, SMALL)
    full = rows_of(run_to(p, tmp_path / "full.parquet", Backend(workers=1)))
    spec = read_spec(p)
    out = tmp_path / "r.parquet"
    store = ResultStore(out, study_meta(spec, 6), fresh=True)

    def stop_after_two(done, total, start):
        if done >= 2:
            raise KeyboardInterrupt

    import planner_gui.core.study.runners as runners

    old = runners.TASK_MAX_SCENARIOS
    runners.TASK_MAX_SCENARIOS = 1
    try:
        with pytest.raises(KeyboardInterrupt):
            run_study(spec, store, Backend(workers=1), stop_after_two)
    finally:
        runners.TASK_MAX_SCENARIOS = old
    store.close()
    assert read_results(out).columns["index"].tolist() == [0, 1]
    store = ResultStore(out, study_meta(spec, 6))
    ran = []
    assert run_study(spec, store, Backend(workers=1), lambda d, t, s: ran.append(d)) == 4
    store.close()
    assert ran[0] == 2 and ran[-1] == 6
    assert rows_of(read_results(out)) == full


def test_results_of_another_study_are_not_resumed_or_replaced_without_fresh(tmp_path, capsys):
    p = write_spec(tmp_path, SMALL)
    out = tmp_path / "r.parquet"
    run_to(p, out, Backend(workers=1))
    other = write_spec(tmp_path, SMALL.replace("seed = 11", "seed = 12"), "other.toml")
    assert main(["study", str(other), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds the results of another study" in err and "--fresh" in err and len(err.splitlines()) == 1
    assert main(["study", str(other), "-o", str(out), "--fresh", "--workers", "1"]) == 0
    assert read_results(out).columns["seed"][0] == scenario_seed(12, 0)


def test_parquet_and_csv_hold_the_same_rows(tmp_path):
    p = write_spec(tmp_path, SMALL)
    a = rows_of(run_to(p, tmp_path / "r.parquet", Backend(workers=1)))
    b = rows_of(run_to(p, tmp_path / "r.csv", Backend(workers=1)))
    assert a == b
    assert set(a[0]) == {
        "index",
        "seed",
        "detect_min",
        "checkpoint_write_s",
        "gpus",
        *(c for c, _ in OUTPUTS),
        TOTAL_COST,
    }
    assert a[0]["time_to_train.cost_usd"] is None  # no training section: an empty cell


def test_not_results_files_are_refused_in_one_line(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("a,b\n1,2\n")
    with pytest.raises(StudyError, match="not results of planner-gui study"):
        read_results(f)
    g = tmp_path / "x.parquet"
    g.write_bytes(b"PAR1 not really")
    with pytest.raises(StudyError, match="not study results"):
        read_results(g)


# -- Sobol indices -----------------------------------------------------------------------------------------


def fake_results(y: np.ndarray, names: list[str], seed: int = 3) -> StudyResults:
    n = len(y)
    meta = {
        "format": 1,
        "total": n,
        "inputs": names,
        "outputs": ["y"],
        "columns": {"index": "int", "y": "float"},
        "study": {"design": "sobol", "seed": seed, "name": "fake", "trials": 1, "inputs": []},
    }
    return StudyResults(meta, {"index": np.arange(n), "y": np.asarray(y, dtype=float)}, Path("fake.parquet"))


def test_sobol_indices_of_the_ishigami_function_come_out_right():
    """A known answer: Ishigami (a=7, b=0.1) on [-pi, pi]^3 has S1 = 0.3139, 0.4424, 0 and
    ST = 0.5576, 0.4424, 0.2437 (Ishigami and Homma 1990; Sobol' 2001)."""
    from SALib.sample import sobol as saltelli

    n = 2**12
    x = saltelli.sample(
        {"num_vars": 3, "names": ["a", "b", "c"], "bounds": [[-np.pi, np.pi]] * 3}, n, calc_second_order=False, seed=5
    )
    y = np.sin(x[:, 0]) + 7 * np.sin(x[:, 1]) ** 2 + 0.1 * x[:, 2] ** 4 * np.sin(x[:, 0])
    s = sobol_indices(fake_results(y, ["a", "b", "c"]), "y")
    truth_s1, truth_st = np.array([0.3139, 0.4424, 0.0]), np.array([0.5576, 0.4424, 0.2437])
    # each estimate within two of its 95% half-widths (about four standard errors)
    assert np.all(np.abs(s.s1 - truth_s1) < 2 * s.s1_conf), (s.s1, s.s1_conf)
    assert np.all(np.abs(s.st - truth_st) < 2 * s.st_conf), (s.st, s.st_conf)
    assert np.all(s.s1_conf < 0.05)


def test_the_numpy_estimators_are_salibs():
    rng = np.random.default_rng(1)
    y = rng.normal(size=64 * 5) + np.repeat(rng.normal(size=64), 5)
    a = sobol_indices(fake_results(y, ["p", "q", "r"]), "y")
    b = sobol_indices(fake_results(y, ["p", "q", "r"]), "y", use_salib=False)
    assert a.engine == "SALib" and b.engine == "numpy"
    for k in ("s1", "s1_conf", "st", "st_conf"):
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=1e-12, atol=1e-15)


def test_goodput_depending_on_one_input_only_gives_it_every_share(tmp_path, capsys):
    """detect_min moves goodput; the price per GPU-hour and the GPUs per node do not. With the exact
    expectation (no sampling noise) the others' indices are exactly 0; detect_min's are 1 within their
    intervals, with the exact expectation and with the Monte Carlo mean."""
    p = write_spec(
        tmp_path,
        """
        [study]
        design = "sobol"
        samples = 64
        trials = 30
        seed = 4
        [vary]
        gpu_hour_cost_usd = { min = 1, max = 4 }
        detect_min = { min = 1, max = 60 }
        gpus_per_node = [4, 8]
        """,
    )
    res = run_to(p, tmp_path / "sobol.parquet", Backend(workers=1))
    assert res.rows == 64 * 5
    exact = sobol_indices(res, "goodput_expected")
    assert exact.inputs == ("gpu_hour_cost_usd", "detect_min", "gpus_per_node")
    assert exact.st[0] == 0 and exact.s1[0] == 0 and exact.st[2] == 0 and exact.s1[2] == 0
    assert abs(exact.st[1] - 1.0) < 2 * exact.st_conf[1] and abs(exact.s1[1] - 1.0) < 2 * exact.s1_conf[1]
    mc = sobol_indices(res, "goodput.mean")
    assert abs(mc.s1[1] - 1.0) < 2 * mc.s1_conf[1] and abs(mc.st[1] - 1.0) < 2 * mc.st_conf[1]
    assert mc.st[0] < 0.01 and mc.st[2] < 0.01  # Monte Carlo noise only
    # the spread between scenarios is far above the noise; 64 base samples leave intervals of +/- 0.28
    assert mc.caution == "the 95% intervals are wide (up to +/- 0.28; use more samples)"

    assert main(["study", "--summary", str(tmp_path / "sobol.parquet"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["sobol"]["inputs"]["detect_min"]["total"] == pytest.approx(mc.st[1])
    assert main(["study", "--summary", str(tmp_path / "sobol.parquet")]) == 0
    text = capsys.readouterr().out
    assert "Sobol indices of goodput.mean" in text and "detect_min" in text
    assert "first-order: the share of the variance the input explains alone; total: with all its" in text
    assert "Caution: these indices are not reliable: the 95% intervals are wide" in text


def test_sobol_indices_need_a_whole_sobol_design(tmp_path):
    p = write_spec(tmp_path, SMALL)
    res = run_to(p, tmp_path / "r.parquet", Backend(workers=1))
    with pytest.raises(StudyError, match=r"need a Sobol design .*; this study is a Latin hypercube$"):
        sobol_indices(res)
    y = np.arange(20.0)
    partial = fake_results(y, ["a", "b"])
    partial.meta["total"] = 40
    with pytest.raises(StudyError, match="20 of 40 are done"):
        sobol_indices(partial, "y")
    with pytest.raises(StudyError, match="the same in every scenario"):
        sobol_indices(fake_results(np.ones(20), ["a", "b"]), "y")


# -- the summary --------------------------------------------------------------------------------------------


def test_best_scenarios_meet_the_constraint_at_least_cost(tmp_path, capsys):
    p = write_spec(tmp_path, SMALL.replace("samples = 6", "samples = 20"))
    res = run_to(p, tmp_path / "r.parquet", Backend(workers=1))
    assert (
        main(
            ["study", "--summary", str(tmp_path / "r.parquet"), "--json", "--where", "goodput.mean>=0.9", "--top", "50"]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    g, cost = res.columns["goodput.mean"], res.columns["total_cost_usd"]
    assert np.allclose(cost, res.columns["lost_cost_usd"])  # no spare pool: the total is the lost GPU-hours' cost
    meeting = np.flatnonzero(g >= 0.9)
    assert doc["best"]["meeting"] == len(meeting) > 0
    got = [r["index"] for r in doc["best"]["scenarios"]]
    assert got == res.columns["index"][meeting[np.argsort(cost[meeting])]].tolist()
    assert doc["best"]["least"] == "total_cost_usd"
    assert doc["sobol"] is None and "Sobol design" in doc["sobol_note"]
    assert main(["study", "--summary", str(tmp_path / "r.parquet"), "--where", "goodput >= 0.9"]) == 2
    assert "no numeric column 'goodput'" in capsys.readouterr().err
    assert main(["study", "--summary", str(tmp_path / "r.parquet"), "--where", "goodput.mean = 0.9"]) == 2
    assert "must be COLUMN>=VALUE" in capsys.readouterr().err
    assert main(["study", "--summary", str(tmp_path / "r.parquet"), "--where", "goodput.mean>=90"]) == 2
    assert "for 90 %, write 0.9" in capsys.readouterr().err


def test_a_text_column_is_compared_with_one_of_its_levels(tmp_path, capsys):
    spec = '[study]\ntrials = 20\n[vary]\ncheckpoint_interval_min = ["optimal", 30]\ndetect_min = [1, 30]\n'
    res = run_to(write_spec(tmp_path, spec), tmp_path / "r.parquet", Backend(workers=1))
    summary = ["study", "--summary", str(tmp_path / "r.parquet"), "--json", "--top", "10"]
    level = np.asarray(res.columns["checkpoint_interval_min"], dtype=object)
    for op, want in (("==", level == "optimal"), ("!=", level != "optimal")):
        assert main([*summary, "--where", "goodput.mean>=0", "--where", f"checkpoint_interval_min{op}optimal"]) == 0
        doc = json.loads(capsys.readouterr().out)
        got = sorted(r["index"] for r in doc["best"]["scenarios"])
        assert doc["best"]["meeting"] == int(want.sum()) == 2
        assert got == sorted(np.asarray(res.columns["index"])[want].tolist())
        assert {r["checkpoint_interval_min"] for r in doc["best"]["scenarios"]} == set(level[want])
    assert main([*summary, "--where", "checkpoint_interval_min>=optimal"]) == 2
    assert "'checkpoint_interval_min' is text; compare it with == or != (got >=)" in capsys.readouterr().err
    assert main([*summary, "--where", "checkpoint_interval_min==45"]) == 2
    assert "is never '45' (it takes: 30, optimal)" in capsys.readouterr().err
    assert main([*summary, "--least", "checkpoint_interval_min"]) == 2
    assert "--least: 'checkpoint_interval_min' is text, not a number" in capsys.readouterr().err


# -- Ctrl-C ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ctrl_c_stops_the_pool_keeps_the_results_and_says_how_to_go_on(tmp_path):
    text = SMALL.replace("samples = 6", "samples = 400").replace("trials = 40", "trials = 400")
    p = write_spec(tmp_path, text)
    out = tmp_path / "r.parquet"
    proc = subprocess.Popen(
        [sys.executable, "-m", "planner_gui", "study", str(p), "-o", str(out), "--workers", "2"],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    journal = tmp_path / "r.parquet.journal"
    deadline = time.monotonic() + 60
    while not journal.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "run the same command to go on" in err and "Traceback" not in err
    done = read_results(out).rows
    assert 0 < done < 400 and not journal.exists()
    proc = subprocess.run(
        [sys.executable, "-m", "planner_gui", "study", str(p), "-o", str(out), "--workers", "2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0 and f"{done:,} done already" in proc.stderr
    assert read_results(out).columns["index"].tolist() == list(range(400))


# -- review fixes ----------------------------------------------------------------------------------------


def test_log_grid_ends_are_exactly_min_and_max():
    spec = loads_spec("[vary]\ncheckpoint_write_s = { min = 1, max = 600, scale = 'log', points = 5 }\n")
    values = [values_of(spec, i)[0] for i in range(5)]
    assert values[0] == 1.0 and values[-1] == 600.0
    assert values[2] == pytest.approx(math.sqrt(600), rel=1e-12)


def training_scenario(tmp_path: Path) -> Path:
    from planner_gui.core.files.scenario_io import FORMAT_VERSION, scenario_to_dict

    doc = scenario_to_dict(load_preset("llama3-405b"))
    doc["format_version"] = FORMAT_VERSION
    doc["training"] = {"train_flops": 3.8e25, "peak_tflops": 989, "mfu": 0.4, "compute_gpu_hours": None}
    (tmp_path / "train.json").write_text(json.dumps(doc))
    return tmp_path / "train.json"


TOO_BIG_TO_TRAIN = """
[study]
scenario = "train.json"
trials = 1000
[set]
days = 365
[vary]
gpus = [262144, 1048576]
detect_min = [1, 30]
"""


def test_a_scenario_too_large_to_simulate_is_refused_before_anything_runs(tmp_path, capsys):
    training_scenario(tmp_path)
    p = write_spec(tmp_path, TOO_BIG_TO_TRAIN)
    out = tmp_path / "r.csv"
    assert main(["study", str(p), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "scenario 3 (gpus=1048576, detect_min=30) cannot run: training: about" in err
    assert "over the limit" in err and not out.exists()


def test_the_extremes_of_a_large_design_are_checked():
    from planner_gui.core.study.design import corners, unit_points

    spec = loads_spec(
        "[study]\ndesign = 'lhs'\nsamples = 30000\ntrials = 10\n[vary]\n"
        "detect_min = { min = 1, max = 30 }\nrestart_min = { min = 1, max = 30 }\n"
    )
    u = unit_points(spec) - 0.5
    got = corners(spec)
    for sign in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        assert int(np.argmax(u @ np.array(sign))) in got


def test_a_scenario_that_fails_as_it_runs_is_left_out_the_rest_finish_and_it_is_named(tmp_path, capsys, monkeypatch):
    import planner_gui.core.study.worker as worker
    from planner_gui.core.files.scenario_io import ScenarioError

    real = worker.simulate

    def fails_at_two(sc, *a, **k):
        if sc.detect_min == 2:
            raise ScenarioError("training: over the limit (as a test)")
        return real(sc, *a, **k)

    monkeypatch.setattr(worker, "simulate", fails_at_two)
    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1, 2, 3]\n")
    out = tmp_path / "r.csv"
    assert main(["study", str(p), "-o", str(out), "--workers", "1"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        "planner-gui: error: 1 scenario could not run and is not in the results (1); scenario 1: training: over "
        "the limit (as a test)"
    )
    assert read_results(out).columns["index"].tolist() == [0, 2]
    monkeypatch.setattr(worker, "simulate", real)
    assert main(["study", str(p), "-o", str(out), "--workers", "1"]) == 0  # a re-run runs what is missing
    assert "2 done already" in capsys.readouterr().err
    assert read_results(out).columns["index"].tolist() == [0, 1, 2]


def _writable(folder: str) -> bool:
    try:
        probe = Path(folder) / f".probe-{os.getpid()}"
        probe.write_text("x")
        probe.unlink()
    except OSError:
        return False
    return True


@pytest.mark.skipif(not Path("/sys").is_dir() or _writable("/sys"), reason="needs a folder that cannot be written")
def test_an_output_folder_that_cannot_be_written_is_refused_up_front(tmp_path, capsys):
    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1, 2, 3]\n")
    assert main(["study", str(p), "-o", "/sys/r.csv"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--output: cannot write in /sys" in err, err


def test_a_full_disk_while_running_is_one_line_and_the_journal_resumes(tmp_path, capsys, monkeypatch):
    import errno

    import planner_gui.core.study.runners as runners
    import planner_gui.core.study.store as store_mod

    monkeypatch.setattr(runners, "TASK_MAX_SCENARIOS", 1)

    class Full:
        def __init__(self, fh):
            self.fh, self.lines = fh, 0

        def write(self, text):
            self.lines += 1
            if self.lines > 3:  # the head and two rows, then the disk is full
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.fh.write(text)

        def __getattr__(self, name):
            return getattr(self.fh, name)

    monkeypatch.setattr(store_mod, "open", lambda *a, **k: Full(open(*a, **k)), raising=False)  # noqa: SIM115
    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1, 2, 3, 4]\n")
    out = tmp_path / "r.csv"
    assert main(["study", str(p), "-o", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    assert err[-1].startswith("planner-gui: error: ") and "No space left on device" in err[-1], err
    assert "run the same command to go on" in err[-1]
    assert (tmp_path / "r.csv.journal").exists()
    monkeypatch.undo()
    assert main(["study", str(p), "-o", str(out), "--workers", "1"]) == 0
    assert "2 done already" in capsys.readouterr().err
    assert read_results(out).columns["index"].tolist() == [0, 1, 2, 3]


def test_progress_lines_speak_of_one_scenario_and_one_input(tmp_path, capsys):
    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1]\n")
    assert main(["study", str(p), "-o", str(tmp_path / "r.csv"), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "1 scenario (a grid over 1 input, 20 trials each)" in err and "1 scenario in" in err


def test_more_workers_than_cores_are_warned(tmp_path, capsys):
    from planner_gui.core.study.runners import local_workers

    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1, 2]\n")
    n = local_workers() + 1
    assert main(["study", str(p), "-o", str(tmp_path / "r.csv"), "--workers", str(n)]) == 0
    assert f"warning: --workers {n} is more than the" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_the_study_stops_its_workers(tmp_path, sig):
    text = SMALL.replace("samples = 6", "samples = 400").replace("trials = 40", "trials = 400")
    p = write_spec(tmp_path, text)
    out = tmp_path / "r.parquet"
    proc = subprocess.Popen(
        [sys.executable, "-m", "planner_gui", "study", str(p), "-o", str(out), "--workers", "2"],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    journal = tmp_path / "r.parquet.journal"
    deadline = time.monotonic() + 60
    while not journal.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    import psutil

    workers = psutil.Process(proc.pid).children(recursive=True)
    assert workers
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)  # the workers held stderr open: this hung while they ran on
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive
    if sig == signal.SIGTERM:
        assert proc.returncode == 143 and "terminated" in err and "Traceback" not in err, err
        assert 0 < read_results(out).rows < 400


@pytest.mark.parametrize(
    ("greeting", "expected"),
    [
        (None, "sent nothing"),
        (b"SSH-2.0-OpenSSH_9.6\r\n", "else"),
        (b"\x0a" + b"\x00" * 7 + b"x" * 10, "else"),  # a valid length, then garbage
        (b"\x10" + b"\x00" * 7 + b"\x01" + b"\x00" * 7 + b"\x08" + b"\x00" * 7, "else"),  # frames, cut short
    ],
)
def test_a_scheduler_address_that_is_not_dask_is_one_line_not_a_hang(tmp_path, capsys, monkeypatch, greeting, expected):
    import socket
    import threading

    import planner_gui.core.study.runners as runners

    monkeypatch.setattr(runners, "CONNECT_TIMEOUT_S", 1.0)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    held = []

    stop = threading.Event()
    server.settimeout(0.1)  # closing the socket from here would not wake an accept() blocked in the thread

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)
            if greeting:
                conn.sendall(greeting)

    serving = threading.Thread(target=serve, daemon=True)
    serving.start()
    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1, 2]\n")
    t0 = time.monotonic()
    try:
        code = main(["study", str(p), "-o", str(tmp_path / "r.csv"), "--scheduler", f"tcp://127.0.0.1:{port}"])
    finally:
        stop.set()
        serving.join()
        server.close()
        for c in held:
            c.close()
    assert code == 2 and time.monotonic() - t0 < 10
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("planner-gui: error: --scheduler: ") and "is not a Dask scheduler" in err[-1]
    assert expected in err[-1] and "Traceback" not in "\n".join(err)


def test_a_scheduler_host_that_never_answers_is_named_unreachable_not_a_silent_scheduler(tmp_path, capsys, monkeypatch):
    """A host that drops the connection's packets: the connect itself times out (no scheduler was ever
    reached, so "it sent nothing" would be wrong)."""
    import socket

    import planner_gui.core.study.runners as runners

    def dropped(address, timeout=None):
        assert timeout == runners.CONNECT_TIMEOUT_S
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", dropped)
    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1, 2]\n")
    assert main(["study", str(p), "-o", str(tmp_path / "r.csv"), "--scheduler", "tcp://192.0.2.1:8786"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["planner-gui: error: --scheduler: cannot reach tcp://192.0.2.1:8786 (no answer in 10 s)"]


def test_sobol_indices_of_monte_carlo_noise_come_with_a_caution(tmp_path, capsys):
    """Neither input moves goodput: the spread between scenarios is the Monte Carlo noise alone (their
    standard errors), so the indices are noise and the summary says so."""
    p = write_spec(
        tmp_path,
        """
        [study]
        design = "sobol"
        samples = 32
        trials = 20
        seed = 4
        [vary]
        gpu_hour_cost_usd = { min = 1, max = 4 }
        gpus_per_node = [4, 8]
        """,
    )
    res = run_to(p, tmp_path / "noise.parquet", Backend(workers=1))
    noise = sobol_indices(res, "goodput.mean")
    assert noise.caution is not None and "Monte Carlo noise" in noise.caution
    assert main(["study", "--summary", str(tmp_path / "noise.parquet")]) == 0
    text = capsys.readouterr().out
    assert "Caution: these indices are not reliable: the Monte Carlo noise of each scenario is" in text
    assert main(["study", "--summary", str(tmp_path / "noise.parquet"), "--json"]) == 0
    assert "Monte Carlo noise" in json.loads(capsys.readouterr().out)["sobol"]["caution"]


def test_a_numbers_equality_holds_to_the_digits_typed(tmp_path, capsys):
    """goodput.mean==0.9895 matched none of the scenarios the table showed as 0.9895 (their values have more
    digits); != kept them all. Equality now holds to the digits typed, as a value read off the table is."""
    import json as _json

    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1, 2]\n")
    assert main(["study", str(p), "-o", str(tmp_path / "r.csv"), "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["study", "--summary", str(tmp_path / "r.csv"), "--where", "goodput.mean>=0", "--json"]) == 0
    rows = _json.loads(capsys.readouterr().out)["best"]["scenarios"]
    g = rows[0]["goodput.mean"]
    shown = f"{g:.4f}"
    assert float(shown) != g  # (the table's figure is rounded)
    summary = ["study", "--summary", str(tmp_path / "r.csv"), "--json", "--where"]
    assert main([*summary, f"goodput.mean=={shown}"]) == 0
    hit = _json.loads(capsys.readouterr().out)["best"]
    assert [r["index"] for r in hit["scenarios"]] == [r["index"] for r in rows if f"{r['goodput.mean']:.4f}" == shown]
    assert main([*summary, f"goodput.mean!={shown}"]) == 0
    miss = _json.loads(capsys.readouterr().out)["best"]
    assert hit["meeting"] + miss["meeting"] == 2
    assert main([*summary, "detect_min==2"]) == 0
    assert [r["detect_min"] for r in _json.loads(capsys.readouterr().out)["best"]["scenarios"]] == [2]


def test_least_of_an_empty_column_says_so(tmp_path, capsys):
    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1, 2]\n")
    assert main(["study", str(p), "-o", str(tmp_path / "r.csv"), "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["study", "--summary", str(tmp_path / "r.csv"), "--least", "time_to_train.cost_usd"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "--least: 'time_to_train.cost_usd' is empty in every scenario (the scenarios have no training" in err
    # An empty --least is a column named '' (no column), not the default; without --summary it is refused too.
    assert main(["study", "--summary", str(tmp_path / "r.csv"), "--least", ""]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--least: no numeric column ''" in err, err
    assert main(["study", str(p), "--least", ""]) == 2
    assert "--least: goes with --summary RESULTS" in capsys.readouterr().err


# -- stopping at any moment (the pool of its own: nothing left to wait for at exit) ------------------------


def _children_now() -> set[int]:
    """The pids of this process's children now (a module's Dask cluster among them)."""
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


def test_a_study_stopped_in_process_leaves_no_worker_process_or_thread(tmp_path):
    """Ctrl-C arrives (here: from the progress callback) while tasks run: the pool's workers are gone when
    run_study raises, and no thread of the pool is left behind (concurrent.futures left its manager
    thread, which the interpreter then waited for at exit)."""
    import threading

    text = SMALL.replace("samples = 6", "samples = 64").replace("trials = 40", "trials = 200")
    spec = read_spec(write_spec(tmp_path, text))
    store = ResultStore(tmp_path / "r.csv", study_meta(spec, design_size(spec)), fresh=True)
    threads, before = set(threading.enumerate()), _children_now()
    calls = []

    def stop_on_first_rows(done, total, start):
        calls.append(done)
        if done > start:
            raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            run_study(spec, store, Backend(workers=2), stop_on_first_rows)
    finally:
        store.close()
    assert 0 < read_results(tmp_path / "r.csv").rows < 64
    assert not leftover_processes(before, grace=10)
    assert set(threading.enumerate()) <= threads


def test_a_worker_that_dies_is_one_line_and_the_pool_is_stopped(tmp_path, monkeypatch):
    import planner_gui.core.study.runners as runners

    def dying(task):
        os._exit(9)  # a worker killed mid-task (out of memory, say)

    import multiprocessing

    monkeypatch.setattr(runners, "run_chunk", dying)
    # Forked workers see the patch (with other threads about, the pool would start fresh interpreters).
    monkeypatch.setattr(runners, "_context", lambda: multiprocessing.get_context("fork"))
    before = _children_now()
    spec = read_spec(write_spec(tmp_path, SMALL))
    store = ResultStore(tmp_path / "r.csv", study_meta(spec, design_size(spec)), fresh=True)
    try:
        with pytest.raises(StudyError, match="a worker process died"):
            runners._run_pool(spec, list(range(6)), 2, lambda rows: None)
    finally:
        store.close()
    assert not leftover_processes(before, grace=10)


def _spin(seconds: float) -> subprocess.Popen:
    """A process that keeps one core busy (load for the machine) for ``seconds``."""
    code = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"
    return subprocess.Popen([sys.executable, "-c", code])


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["starting", "running", "twice", "terminated-starting"])
def test_ctrl_c_at_any_moment_ends_the_study_and_every_worker_on_a_loaded_machine(tmp_path, moment):
    """Ctrl-C as the pool starts, while it runs, and twice in a row, with the cores
    busy with other work: one line, status 130, no traceback, and no process of the study left. No bound
    on the time but generous ones: the test waits for the processes, it does not time them."""
    import psutil

    text = SMALL.replace("samples = 6", "samples = 400").replace("trials = 40", "trials = 400")
    p = write_spec(tmp_path, text)
    out = tmp_path / "r.parquet"
    load = [_spin(120) for _ in range(4)]
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "planner_gui", "study", str(p), "-o", str(out)],
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        me = psutil.Process(proc.pid)
        deadline = time.monotonic() + 120
        if moment in ("starting", "terminated-starting"):  # the first worker exists
            while not me.children() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.01)
        else:  # rows are coming in
            while not (tmp_path / "r.parquet.journal").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        workers = me.children(recursive=True)
        proc.send_signal(signal.SIGTERM if moment.startswith("terminated") else signal.SIGINT)
        if moment == "twice":
            time.sleep(0.05)
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        _, alive = psutil.wait_procs(workers, timeout=30)
    finally:
        for spinner in load:
            spinner.kill()
            spinner.wait()
    assert not alive, alive
    if moment.startswith("terminated"):  # SIGTERM as the pool starts: held back, then the study stops as on Ctrl-C
        assert proc.returncode == 143 and "terminated" in err and "Traceback" not in err, err
    else:
        assert proc.returncode == 130, err
        assert "interrupted" in err and "Traceback" not in err, err


def test_ctrl_c_while_the_modules_load_is_one_line_not_a_traceback(tmp_path):
    """The Ctrl-C arrives as the command line's modules are imported (a finder raises it at the import of
    one of them, which is where a Ctrl-C in the first second lands)."""
    code = textwrap.dedent(
        """
        import sys
        class Interrupting:
            def find_spec(self, name, path=None, target=None):
                if name == "planner_gui.core.files.scenario_io":
                    raise KeyboardInterrupt
        sys.meta_path.insert(0, Interrupting())
        from planner_gui.cli import main
        sys.exit(main(["run", "--trials", "10"]))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "planner-gui: interrupted\n"


def test_the_summary_shows_dollars_with_their_sign_and_shares_in_fixed_point(tmp_path, capsys):
    """Costs were printed without "$" and a goodput standard error as "3.148e-08"."""
    p = write_spec(tmp_path, SMALL)
    out = tmp_path / "r.csv"
    assert main(["study", str(p), "-o", str(out), "--workers", "1"]) == 0
    capsys.readouterr()
    res = read_results(out)
    for least, shown in (("total_cost_usd", lambda v: f"${v:,.0f}"), ("goodput.sem", lambda v: f"{v:.4f}")):
        assert main(["study", "--summary", str(out), "--where", "goodput.mean>=0.5", "--least", least]) == 0
        text = capsys.readouterr().out
        lines = text.splitlines()
        table = lines[next(i for i, line in enumerate(lines) if line.startswith("Best scenarios")) + 1 :]
        header = table[0].split()
        assert least in header and len(table) >= 3
        for line in table[1:]:
            cells = dict(zip(header, line.split()))
            i = res.columns["index"].tolist().index(int(cells["index"]))
            assert cells[least] == shown(res.columns[least][i]), (least, line)
            assert "e-" not in line


def test_a_tls_scheduler_without_settings_or_listener_is_one_line_not_a_hang(tmp_path, capsys):
    import dask

    p = write_spec(tmp_path, "[study]\ntrials = 20\n[vary]\ndetect_min = [1, 2]\n")
    argv = ["study", str(p), "-o", str(tmp_path / "r.csv"), "--scheduler", "tls://127.0.0.1:1"]
    t0 = time.monotonic()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "a tls:// scheduler needs dask.distributed's TLS settings" in err[-1]
    with dask.config.set({"distributed.comm.tls.ca-file": "ca.pem", "distributed.comm.tls.client.cert": "c.pem"}):
        assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # One line: the study was announced "on the Dask cluster at ..." before its cluster was found missing.
    assert err == ["planner-gui: error: --scheduler: cannot reach tls://127.0.0.1:1 (Connection refused)"]
    assert time.monotonic() - t0 < 10


@pytest.mark.slow
def test_a_cluster_that_loses_its_only_worker_says_the_study_waits_and_goes_on(tmp_path, monkeypatch):
    """Left without workers the study says so (once) and waits; when a worker joins it says so and finishes,
    every row once."""
    distributed = pytest.importorskip("distributed")
    import planner_gui.core.study.runners as runners

    monkeypatch.setattr(runners, "WORKER_NOTE_S", 0.5)
    monkeypatch.setattr(runners, "TASK_MAX_SCENARIOS", 1)
    text = SMALL.replace("samples = 6", "samples = 8")
    p = write_spec(tmp_path, text)
    one = rows_of(run_to(p, tmp_path / "one.csv", Backend(workers=1)))
    spec = read_spec(p)
    out = tmp_path / "dask.csv"
    store = ResultStore(out, study_meta(spec, design_size(spec)), fresh=True)
    notes: list[str] = []
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
    ) as cluster:
        events: list[str] = []

        def progress(done, total, start):
            if done >= 2 and not events:
                events.append("lost")
                cluster.scale(0)  # the only worker leaves

        def note(text):
            notes.append(text)
            if "waits for workers" in text:
                cluster.scale(1)  # a worker joins again

        try:
            run_study(spec, store, Backend(scheduler=cluster.scheduler_address), progress, note)
        finally:
            store.close()
    assert events == ["lost"]
    assert (
        notes[0].startswith("the study waits for workers: the cluster at tcp://")
        and "has none now (it had 1)" in notes[0]
    )
    assert notes[1] == "1 worker joined the cluster again; the study goes on" and len(notes) == 2
    assert rows_of(read_results(out)) == one


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_an_input_named_like_an_output_keeps_both_and_the_results_read_back(tmp_path, capsys, form):
    """Varying tiers.fast_interval_min wrote the interval used over the input (its "optimal" lost) in one column,
    and the results could never be summarised nor resumed ("an input or output is named twice"). The input keeps
    its name and what the study file asked for; the output is `.used`."""
    spec = tmp_path / "s.toml"
    spec.write_text(
        '[study]\nname = "collide"\npreset = "h100-100k-inmemory"\ntrials = 10\n[set]\ngpus = 4096\ndays = 5\n'
        '[vary]\n"tiers.fast_interval_min" = ["optimal", 1.5]\n'
    )
    out = tmp_path / f"r.{form}"
    assert main(["study", str(spec), "-o", str(out), "--workers", "1"]) == 0
    res = read_results(out)
    asked = list(res.columns["tiers.fast_interval_min"])
    used = res.numeric("tiers.fast_interval_min.used")
    assert asked == ["optimal", "1.5"] and used[1] == 1.5 and 0 < used[0] != 1.5
    assert "tiers.fast_interval_min.used" in res.outputs and "tiers.fast_interval_min" in res.inputs
    capsys.readouterr()
    assert main(["study", "--summary", str(out)]) == 0
    assert main(["study", str(spec), "-o", str(out)]) == 0
    assert "every scenario is in" in capsys.readouterr().err


def test_a_study_varying_the_seed_reads_back_and_resumes(tmp_path, capsys):
    """docs/study.md lets a study vary `seed`; its results could not be read ("'seed' is not a column")."""
    spec = tmp_path / "s.toml"
    spec.write_text("[study]\ntrials = 5\n[set]\ngpus = 1024\ndays = 2\n[vary]\nseed = [1, 2, 3]\n")
    out = tmp_path / "r.csv"
    assert main(["study", str(spec), "-o", str(out), "--workers", "1"]) == 0
    res = read_results(out)
    assert res.inputs == ["seed"] and list(res.columns["seed"]) == [1, 2, 3]
    capsys.readouterr()
    assert main(["study", "--summary", str(out)]) == 0
    assert main(["study", str(spec), "-o", str(out)]) == 0
    assert "every scenario is in" in capsys.readouterr().err


def test_a_study_of_many_small_scenarios_is_estimated_with_what_each_costs_besides_its_run(tmp_path):
    """1,000,000 one-trial scenarios were estimated at "about 3 s" (the engine's cost alone) and took hours: each
    scenario costs its building, checking and row too."""
    from planner_gui.core.analysis.sweep import run_cost
    from planner_gui.core.study.runners import SCENARIO_OVERHEAD_S, scenario_seconds

    spec = loads_spec("[study]\ntrials = 1\n[set]\ndays = 2\n[vary]\ndetect_min = [1, 30]\n")
    sc = scenario_from_dict(scenario_doc(spec, 0))
    assert scenario_seconds(spec, 0) == pytest.approx(run_cost(sc).seconds + SCENARIO_OVERHEAD_S)
    assert 10 * run_cost(sc).seconds < SCENARIO_OVERHEAD_S


def test_progress_off_a_terminal_speaks_at_least_once_a_minute(monkeypatch):
    """Off a terminal a line came at each tenth only: a long study said nothing for hours before its first."""
    import io

    from planner_gui.cli import study as study_cli

    clock = [1000.0]
    monkeypatch.setattr(study_cli.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    progress = study_cli.StudyProgress(out)
    for done in range(1, 50):  # 49 of 1,000,000 scenarios, one every 10 s: no tenth is reached
        clock[0] += 10.0
        progress(done, 1_000_000, 0)
    lines = out.getvalue().splitlines()
    assert 7 <= len(lines) <= 9 and all("/1,000,000 scenarios" in line for line in lines)


def test_varying_a_field_a_section_sets_in_its_place_is_refused():
    """With a storage section the blocking write comes from it: a study varying checkpoint_write_s wrote 1 s and
    600 s beside the same goodput (seed noise) as if it had varied something."""
    text = (
        "[study]\ntrials = 5\n[set]\ndays = 2\nstorage.checkpoint_gb_per_gpu = 4\nstorage.storage_gb_s = 2000\n"
        "[vary]\ncheckpoint_write_s = [1, 600]\n"
    )
    with pytest.raises(StudyError, match=r"vary\.checkpoint_write_s: the scenario.s storage section sets the"):
        loads_spec(text)
    assert loads_spec(text.replace("checkpoint_write_s = [1, 600]", "storage.storage_gb_s = [200, 2000]")).inputs


@pytest.mark.slow
def test_a_study_that_loses_its_scheduler_says_so_in_one_line_and_keeps_its_rows(tmp_path, monkeypatch):
    """Losing the scheduler mid-run printed the client's own log line and then blamed a scenario ("a scenario
    failed in a worker (FutureCancelledError: ... scheduler-connection-lost)")."""
    distributed = pytest.importorskip("distributed")
    import planner_gui.core.study.runners as runners

    monkeypatch.setattr(runners, "TASK_MAX_SCENARIOS", 1)
    spec = read_spec(write_spec(tmp_path, SMALL.replace("samples = 6", "samples = 40")))
    out = tmp_path / "dask.csv"
    store = ResultStore(out, study_meta(spec, design_size(spec)), fresh=True)
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
    )
    lost: list[int] = []

    def progress(done, total, start):
        if done >= 2 and not lost:
            lost.append(done)
            cluster.close()  # the scheduler goes away with the cluster

    try:
        with pytest.raises(StudyError) as err:
            run_study(spec, store, Backend(scheduler=cluster.scheduler_address), progress)
    finally:
        store.close()
        cluster.close()
    assert "the connection to the Dask scheduler at tcp://" in str(err.value) and "was lost" in str(err.value)
    assert "scenario failed" not in str(err.value)
    assert read_results(out).rows >= 2


def test_a_text_column_is_read_back_as_codes_into_its_texts(tmp_path):
    """A text column of a million rows was a million strings: 90 ms to unpickle on the window's reading thread, 12
    times the memory. Read back from CSV or Parquet it is one small array of codes into its texts, and still reads
    as the list it stands for (indexing, slicing, masks, equality, pickling)."""
    import pickle

    from planner_gui.core.study.store import Texts

    p = write_spec(tmp_path, '[study]\ntrials = 20\n[vary]\ncheckpoint_interval_min = ["optimal", 30, 60]\n')
    for suffix in ("csv", "parquet"):
        res = run_to(p, tmp_path / f"r.{suffix}", Backend(workers=1))
        column = res.columns["checkpoint_interval_min"]
        assert isinstance(column, Texts) and column.codes.dtype == np.int32
        assert column == ["optimal", "30", "60"] and column.tolist() == ["optimal", "30", "60"]
        assert column[0] == "optimal" and column[-1] == "60" and column[1:] == ["30", "60"]
        assert column[np.array([True, False, True])] == ["optimal", "60"]
        assert pickle.loads(pickle.dumps(column)) == column
    many = Texts.of(["optimal", "30", "120"][k % 3] for k in range(300_000))
    assert len(pickle.dumps(many, protocol=5)) < 4 * len(many) + 1000  # the codes, and three texts
    assert many.levels == ("optimal", "30", "120") and many[4] == "30"
