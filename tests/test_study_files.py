"""Study journals and results files as an adversary leaves them: edited, cut short, damaged, special files,
and descriptions that would build more than memory holds. A row on disk is trusted only when it checks
out; one that does not is run again (with a note), never written into the results, never fatal to a resume.
"""

from __future__ import annotations

import json
import os
import textwrap
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner_gui.cli import main
from planner_gui.core.study import Backend, ResultStore, StudyError, design_size, read_results, read_spec, study_meta
from planner_gui.core.study.runners import check_done, run_study
from planner_gui.core.study.store import CSV_MARK, row_check, row_problem

SPEC = """
[study]
name = "journal"
design = "grid"
trials = 30
seed = 5

[vary]
gpus = [8192, 16384, 32768]
detect_min = [2, 10]
"""


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    """The spec and its results computed in one go (what every resumed run must give)."""
    folder = tmp_path_factory.mktemp("clean")
    spec_path = folder / "study.toml"
    spec_path.write_text(textwrap.dedent(SPEC))
    out = folder / "clean.csv"
    assert main(["study", str(spec_path), "-o", str(out), "--workers", "1"]) == 0
    return spec_path, _rows(read_results(out))


def _rows(res) -> list[dict]:
    out = []
    for i in range(res.rows):
        row = {}
        for c, values in res.columns.items():
            v = values[i]
            v = v.item() if hasattr(v, "item") else v
            row[c] = None if isinstance(v, float) and v != v else v
        out.append(row)
    return out


def _journal(tmp_path: Path, spec_path: Path, rows: list[dict], out: str = "r.csv") -> tuple[Path, Path, dict]:
    """A journal as a killed run leaves it: its first line, then each row with its check."""
    spec = read_spec(spec_path)
    meta = study_meta(spec, design_size(spec))
    fp = meta["fingerprint"]
    journal = tmp_path / f"{out}.journal"
    lines = [json.dumps({"fingerprint": fp})] + [json.dumps({**r, "check": row_check(fp, r)}) for r in rows]
    journal.write_text("\n".join(lines) + "\n")
    return tmp_path / out, journal, meta


def _resume(spec_path: Path, out: Path, capsys) -> tuple[int, str]:
    code = main(["study", str(spec_path), "-o", str(out), "--workers", "1"])
    return code, capsys.readouterr().err


# -- 1. a tampered journal row is run again, not trusted ------------------------------------------------


@pytest.mark.parametrize(
    "value, said",
    [
        (-1, "goodput.mean is -1, not a share from 0 to 1"),
        (5.0, "goodput.mean is 5.0, not a share from 0 to 1"),
        ("abc", 'goodput.mean is "abc", not a share from 0 to 1'),
        ([0.9], "goodput.mean is [0.9], not a share from 0 to 1"),
        (0.5, "changed since this study wrote it"),  # in range: the row's check tells
    ],
)
def test_an_edited_journal_value_is_run_again_not_trusted(tmp_path, capsys, clean_run, value, said):
    spec_path, clean = clean_run
    out, journal, _meta = _journal(tmp_path, spec_path, clean[:4])
    text = journal.read_text().splitlines()
    row = json.loads(text[2])
    row["goodput.mean"] = value
    text[2] = json.dumps(row)
    journal.write_text("\n".join(text) + "\n")
    code, err = _resume(spec_path, out, capsys)
    assert code == 0, err
    assert "note: r.csv.journal: 1 line set aside and run again (line 3: " in err and said in err
    assert _rows(read_results(out)) == clean
    assert not journal.exists()


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda r: {**r, "index": float("inf")}, "index Infinity is not a scenario of this study"),
        (lambda r: {**r, "index": 1e400}, "index Infinity is not a scenario of this study"),
        (lambda r: {**r, "index": 99}, "index 99 is not a scenario of this study (0 to 5)"),
        (lambda r: {**r, "seed": 2**70}, "is not a seed"),
        (lambda r: {**r, "gpus": "many"}, 'gpus is "many", not a whole number'),
        (lambda r: {**r, "extra": 1}, "'extra' is not a column of this study"),
        (lambda r: {k: v for k, v in r.items() if k != "hours.useful"}, "no hours.useful"),
    ],
)
def test_journal_rows_out_of_range_or_of_the_wrong_kind_are_set_aside(tmp_path, capsys, clean_run, edit, said):
    spec_path, clean = clean_run
    out, journal, _meta = _journal(tmp_path, spec_path, clean[:3])
    lines = journal.read_text().splitlines()
    bad = edit(dict(clean[3]))
    lines.append(json.dumps({**bad, "check": "0" * 16}, allow_nan=True))
    journal.write_text("\n".join(lines) + "\n")
    code, err = _resume(spec_path, out, capsys)
    assert code == 0, err
    assert said in err and "Traceback" not in err
    assert _rows(read_results(out)) == clean


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000 + "]" * 100_000,  # nested too deeply for the parser
        '{"index": 1' + "0" * 5000 + "}",  # more digits than Python turns into an int
        "\x00\xff garbage",
        "x" * 70_000,  # longer than any row
    ],
    ids=["nested", "digits", "garbage", "long"],
)
def test_lines_that_are_not_rows_are_set_aside_with_one_note(tmp_path, capsys, clean_run, line):
    spec_path, clean = clean_run
    out, journal, meta = _journal(tmp_path, spec_path, clean[:2])
    with open(journal, "a", encoding="utf-8", errors="surrogateescape") as fh:
        fh.write(line + "\n" + json.dumps({**clean[2], "check": row_check(meta["fingerprint"], clean[2])}) + "\n")
    code, err = _resume(spec_path, out, capsys)
    assert code == 0, err
    assert "note: r.csv.journal: 1 line set aside and run again (line 4" in err and "Traceback" not in err
    assert "3 done already" in err  # the row after the bad line is kept
    assert _rows(read_results(out)) == clean


def test_rows_of_another_design_are_run_again(tmp_path, capsys, clean_run):
    """A row that checks out but holds other inputs or another seed than this design gives its index."""
    spec_path, clean = clean_run
    wrong = [dict(r) for r in clean[:3]]
    wrong[1]["gpus"] = 12345
    wrong[2]["seed"] = wrong[2]["seed"] + 1
    out, _journal_path, meta = _journal(tmp_path, spec_path, wrong)
    store = ResultStore(out, meta)
    check_done(read_spec(spec_path), store)
    assert sorted(store.done) == [0]
    assert store.notes[-1].startswith(
        "r.csv: 2 rows are not this design's scenarios and run again (scenario 1 has gpus"
    )
    assert run_study(read_spec(spec_path), store, Backend(workers=1)) == 5
    store.close()
    assert _rows(read_results(out)) == clean


# -- 3. special files -----------------------------------------------------------------------------------


def test_a_journal_that_is_a_device_or_a_fifo_is_refused_in_one_line(tmp_path, capsys, clean_run):
    spec_path, _ = clean_run
    out = tmp_path / "r.csv"
    journal = tmp_path / "r.csv.journal"
    journal.symlink_to("/dev/zero")
    code, err = _resume(spec_path, out, capsys)
    assert code == 2 and err.count("\n") == 1
    assert "r.csv.journal: cannot read (is a character device, not a regular file)" in err
    journal.unlink()
    os.mkfifo(journal)
    done: list[int] = []
    t = threading.Thread(target=lambda: done.append(_resume(spec_path, out, capsys)[0]), daemon=True)
    t.start()
    t.join(60)
    if t.is_alive():  # (unblock the reader before failing)
        with open(journal, "w"):
            pass
        t.join(10)
        pytest.fail("a FIFO journal blocked the study")
    assert done == [2]


# -- 11. results and journal never both at risk ---------------------------------------------------------


def test_a_bad_journal_row_beside_readable_results_leaves_them_readable(tmp_path, capsys, clean_run):
    spec_path, clean = clean_run
    out = tmp_path / "r.csv"
    assert main(["study", str(spec_path), "-o", str(out), "--workers", "1"]) == 0
    capsys.readouterr()
    # what a run that was killed after its results were written, and then edited, leaves
    _, journal, meta = _journal(tmp_path, spec_path, [])
    row = {**clean[0], "goodput.mean": "0.9x"}
    with open(journal, "a") as fh:
        fh.write(json.dumps({**row, "check": row_check(meta["fingerprint"], row)}) + "\n")
    code, err = _resume(spec_path, out, capsys)
    assert code == 0 and "every scenario is in" in err and "set aside" in err
    assert _rows(read_results(out)) == clean and not journal.exists()


def test_two_crashes_in_a_row_keep_every_good_row(tmp_path, capsys, clean_run):
    spec_path, clean = clean_run
    out, journal, meta = _journal(tmp_path, spec_path, clean[:2])
    fp = meta["fingerprint"]
    # the first crash cut a line short
    with open(journal, "a") as fh:
        fh.write(json.dumps({**clean[2], "check": row_check(fp, clean[2])})[:40])
    store = ResultStore(out, meta)
    assert sorted(store.done) == [0, 1] and "last line was cut short" in store.notes[0]
    assert not journal.exists() and _rows(read_results(out)) == clean[:2]  # the good rows are safe in the output
    store.add(dict(clean[2]))
    store.add(dict(clean[3]))
    # the second crash, again while writing a line (the store is never closed)
    store._journal.write(json.dumps(clean[4])[:30])
    store._journal.close()
    again = ResultStore(out, meta)
    assert sorted(again.done) == [0, 1, 2, 3]
    assert run_study(read_spec(spec_path), again, Backend(workers=1)) == 2
    again.close()
    assert _rows(read_results(out)) == clean


def test_a_damaged_first_line_keeps_the_rows_that_check_out(tmp_path, clean_run):
    spec_path, clean = clean_run
    out, journal, meta = _journal(tmp_path, spec_path, clean[:3])
    lines = journal.read_text().splitlines()
    lines[0] = lines[0][:20]
    journal.write_text("\n".join(lines) + "\n")
    store = ResultStore(out, meta)
    assert sorted(store.done) == [0, 1, 2]
    assert store.notes == ["r.csv.journal: its first line was damaged; each row was checked"]
    store.close()


def test_a_journal_of_another_study_is_still_refused(tmp_path, capsys, clean_run):
    spec_path, clean = clean_run
    out, journal, _meta = _journal(tmp_path, spec_path, clean[:2])
    lines = journal.read_text().splitlines()
    lines[0] = json.dumps({"fingerprint": "f" * 64, "version": "0.0"})
    journal.write_text("\n".join(lines) + "\n")
    code, err = _resume(spec_path, out, capsys)
    assert code == 2 and "holds the results of another study (planner-gui 0.0" in err and "--fresh" in err


# -- 5, 8, 10. results files read by --summary and the window -------------------------------------------


def _results_file(tmp_path: Path, clean_run, edit_meta=None, edit_rows=None) -> Path:
    spec_path, clean = clean_run
    spec = read_spec(spec_path)
    meta = study_meta(spec, design_size(spec))
    if edit_meta is not None:
        edit_meta(meta)
    rows = [dict(r) for r in clean]
    header = list(study_meta(spec, design_size(spec))["columns"])
    lines = [CSV_MARK + json.dumps(meta), ",".join(header)]
    for r in rows:
        cells = [r.get(c) for c in header]
        if edit_rows is not None:
            cells = edit_rows(header, cells)
        lines.append(",".join("" if v is None else repr(v) if isinstance(v, float) else str(v) for v in cells))
    p = tmp_path / "bad.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def _set_cell(column: str, value: str):
    def edit(header, cells):
        cells = list(cells)
        cells[header.index(column)] = value
        return cells

    return edit


BAD_RESULTS = [
    (lambda m: m.pop("total"), None, "total must be a whole number"),
    (lambda m: m.pop("study"), None, "no list of inputs and outputs, or no study"),
    (lambda m: m["inputs"].append("nonesuch"), None, "'nonesuch' is not a column"),
    (lambda m: m["study"]["inputs"].pop(), None, "the study does not describe each input"),
    (lambda m: m["study"]["inputs"][0].update(levels=["a", "b", "c"]), None, "levels must be finite numbers"),
    (
        lambda m: m["study"]["inputs"][0].update(min=1, max=2, points=10**9) or m["study"]["inputs"][0].pop("levels"),
        None,
        "points must be a whole number from 1 to 10,000 (got 1000000000)",
    ),
    (lambda m: m["columns"].update({"goodput.mean": "text"}), None, "output 'goodput.mean' is not a number column"),
    (None, _set_cell("index", "6.0"), "6 rows set aside, not results (line 3: index is '6.0', not a whole number)"),
    (
        lambda m: m["study"].update(design="sobol", samples=8),
        None,
        "6 scenarios are not what the sobol design of 8 samples over 2 inputs makes",
    ),
    (lambda m: m["study"].update(design="lhs", samples=None), None, "the lhs design of null samples"),
]


def test_a_description_of_a_million_levels_is_read_in_one_pass_over_them(tmp_path, clean_run, monkeypatch):
    """A 1 MB description may list 166,666 levels of one input: each level's kind is looked at a bounded number
    of times (it was looked at for every level, once per level: 20 minutes without an answer)."""
    import planner_gui.core.study.spec as spec_module

    levels = 20_000

    def many(meta):
        meta["study"]["inputs"][0]["levels"] = list(range(1, levels + 1))
        meta["total"] = levels * 2

    p = _results_file(tmp_path, clean_run, edit_meta=many)
    calls = []
    real = spec_module._is_number
    monkeypatch.setattr(spec_module, "_is_number", lambda v: calls.append(1) or real(v))
    try:
        res = read_results(p)
    except StudyError as exc:  # (every row is off the design it declares)
        assert "rows set aside, not results" in str(exc)
    else:
        assert res.meta["total"] == 2 * levels
    assert 0 < len(calls) <= 4 * levels


@pytest.mark.parametrize("edit_meta, edit_rows, said", BAD_RESULTS)
def test_malformed_results_files_get_one_line_from_summary(tmp_path, capsys, clean_run, edit_meta, edit_rows, said):
    p = _results_file(tmp_path, clean_run, edit_meta, edit_rows)
    assert main(["study", "--summary", str(p)]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err


def _edit_rows(edits: dict[int, dict[str, str]]):
    """Edit cells of given rows (0 = the first row of results)."""
    row = iter(range(10**6))

    def edit(header, cells):
        k = next(row)
        cells = list(cells)
        for column, value in edits.get(k, {}).items():
            cells[header.index(column)] = value
        return cells

    return edit


DAMAGED = {
    0: {"goodput.mean": "1.5"},
    2: {"goodput.mean": ""},
    3: {"interruptions.mean": "inf", "lost_cost_usd": "1e400"},
    4: {"hours.useful": "-3"},
    5: {"goodput.p50": "nan"},
}


def test_summary_and_resume_set_aside_rows_that_are_not_results(tmp_path, capsys, clean_run):
    """A goodput of 1.5 was listed as the best scenario by --summary, and resume counted rows with an empty
    goodput or an infinite output as done (a Sobol study then never had its indices). Both readers set them aside,
    with one note; resume runs them again."""
    spec_path, clean = clean_run
    p = _results_file(tmp_path, clean_run, edit_rows=_edit_rows(DAMAGED))
    assert main(["study", "--summary", str(p), "--json"]) == 0
    out, err = capsys.readouterr()
    assert f"{len(DAMAGED)} rows set aside, not results (row 1: goodput.mean is 1.5, not a share from 0 to 1)" in err
    doc = json.loads(out)
    assert {r["index"] for r in doc["best"]["scenarios"]}.isdisjoint(DAMAGED)
    assert main(["study", str(spec_path), "-o", str(p), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert f"{len(DAMAGED)} rows set aside and run again" in err
    assert _rows(read_results(p)) == clean  # every one of them run again, as a clean run gives them


@pytest.mark.parametrize(
    ("edits", "said"),
    [
        ({0: {"goodput.mean": "abc"}}, "1 row set aside, not results (line 3: goodput.mean is 'abc', not a number)"),
        ({1: {"seed": "x1"}}, "1 row set aside, not results (line 4: seed is 'x1', not a whole number)"),
        ({2: {"index": "77"}}, "1 row set aside, not results (row 3: index is 77, not a scenario of this study"),
        ({3: {"index": "6.0"}}, "(line 6: index is '6.0', not a whole number)"),
        ({4: {"index": "0"}}, "(row 5: index is 0, not the first row of its scenario (the first is kept))"),
        ({5: {"seed": ""}}, "(line 8: no seed)"),
    ],
)
def test_a_row_that_is_not_a_result_is_set_aside_not_fatal(tmp_path, capsys, clean_run, edits, said):
    """One damaged line (a cell of the wrong kind, an index outside the study or there twice, no seed) refused the
    whole file, so resume could not go on; it is set aside, said in one note, and its scenario runs again."""
    spec_path, clean = clean_run
    p = _results_file(tmp_path, clean_run, edit_rows=_edit_rows(edits))
    assert main(["study", "--summary", str(p)]) == 0
    assert said in capsys.readouterr().err
    assert main(["study", str(spec_path), "-o", str(p), "--workers", "1"]) == 0
    assert "set aside and run again" in capsys.readouterr().err
    assert _rows(read_results(p)) == clean


def test_summary_says_a_journal_beside_the_results_holds_more(tmp_path, capsys, clean_run):
    p = _results_file(tmp_path, clean_run)
    (tmp_path / "bad.csv.journal").write_text("{}\n")
    assert main(["study", "--summary", str(p)]) == 0
    assert "bad.csv.journal beside it holds results not in it yet" in capsys.readouterr().err


def test_summary_of_results_without_a_cost_column_names_what_it_lacks(tmp_path, capsys, clean_run):
    def drop_costs(m):
        for c in ("total_cost_usd", "time_to_train.cost_usd", "lost_cost_usd"):
            m["outputs"].remove(c)
            del m["columns"][c]

    spec_path, clean = clean_run
    spec = read_spec(spec_path)
    meta = study_meta(spec, design_size(spec))
    drop_costs(meta)
    header = list(meta["columns"])
    lines = [CSV_MARK + json.dumps(meta), ",".join(header)]
    lines += [",".join("" if r[c] is None else repr(r[c]) for c in header) for r in clean]
    p = tmp_path / "nocost.csv"
    p.write_text("\n".join(lines) + "\n")
    assert main(["study", "--summary", str(p)]) == 2
    err = capsys.readouterr().err
    assert "--least: no numeric column 'lost_cost_usd'" in err and "Traceback" not in err


def test_every_row_check_accepts_the_rows_a_study_writes(clean_run):
    spec_path, clean = clean_run
    spec = read_spec(spec_path)
    meta = study_meta(spec, design_size(spec))
    assert all(row_problem(r, meta) is None for r in clean)


# -- properties: any journal line, any results description ----------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(_json.map(lambda v: json.dumps(v, allow_nan=True)), st.text(max_size=80)), max_size=6))
def test_any_journal_is_read_or_refused_in_one_line(tmp_path_factory, clean_run, lines):
    spec_path, clean = clean_run
    folder = tmp_path_factory.mktemp("j")
    out, journal, meta = _journal(folder, spec_path, clean[:2])
    with open(journal, "a", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write("\n".join(x.replace("\n", " ") for x in lines) + "\n")
    try:
        store = ResultStore(out, meta)
    except StudyError as exc:
        assert "\n" not in str(exc)
        return
    assert {0, 1} <= set(store.done)
    assert all(row_problem(r, meta) is None for r in store.done.values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(["total", "study", "columns", "inputs", "outputs", "format", "fingerprint"]), value=_json)
def test_any_results_description_is_read_or_refused_in_one_line(tmp_path_factory, clean_run, key, value):
    folder = tmp_path_factory.mktemp("r")
    p = _results_file(folder, clean_run, lambda m: m.__setitem__(key, value))
    try:
        res = read_results(p)
    except StudyError as exc:
        assert "\n" not in str(exc)
        return
    for name in res.inputs:  # what the window and --summary build from it
        res.input_spec(name)


@pytest.mark.parametrize("edit_meta, edit_rows, said", BAD_RESULTS)
def test_the_window_says_what_is_wrong_with_a_results_file_in_a_dialog(
    qtbot, tmp_path, monkeypatch, clean_run, edit_meta, edit_rows, said
):
    from PySide6.QtWidgets import QMessageBox

    from planner_gui.ui.study_view import StudyView

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical", lambda *a, **k: shown.append(a[2]))
    p = _results_file(tmp_path, clean_run, edit_meta, edit_rows)
    view = StudyView()
    qtbot.addWidget(view)
    view.load(p)
    qtbot.waitUntil(lambda: bool(shown), timeout=20_000)
    assert said in shown[0] and "\n" not in shown[0] and view.results is None


# -- properties: any study file --------------------------------------------------------------------------

_KEYS = st.sampled_from(
    ["gpus", "days", "detect_min", "seed", "trials", "name", "design", "samples", "preset", "min", "max", "scale",
     "points", "components", "multiplier", "spares", "spare_nodes", "tiers", "training", "x", "a.b", ""]
)  # fmt: skip
_scalar = (
    st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
_toml_value = st.recursive(
    _scalar,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=3),
    max_leaves=12,
)


def _toml(v) -> str:
    """A value as TOML (inline tables and arrays; strings as JSON strings, which TOML reads alike)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if v != v else ("inf" if v > 0 else "-inf") if v in (float("inf"), float("-inf")) else repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(x)}" for k, x in v.items()) + " }"


@settings(max_examples=200, deadline=None)
@given(
    tables=st.dictionaries(
        st.sampled_from(["study", "set", "vary", "other"]), st.dictionaries(_KEYS, _toml_value, max_size=4), max_size=3
    )
)
def test_any_study_file_is_read_or_refused_in_one_line(tables):
    from planner_gui.core.study.files import loads_spec

    text = "\n".join(
        f"[{t}]\n" + "".join(f"{json.dumps(k)} = {_toml(v)}\n" for k, v in kv.items()) for t, kv in tables.items()
    )
    try:
        spec = loads_spec(text)
    except StudyError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert 1 <= design_size(spec) <= 1_000_000


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_mutated_study_file_is_read_or_refused_in_one_line(data):
    from planner_gui.core.study.files import loads_spec

    text = textwrap.dedent(SPEC)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 3))
        text = text[:at] + data.draw(st.text(max_size=3)) + text[at + cut :]
    try:
        loads_spec(text)
    except StudyError as exc:
        assert "\n" not in str(exc) and str(exc)


def test_the_rounding_of_sums_is_not_a_bad_row(clean_run):
    """Hours of -7e-15 (a sum of floats that is 0) are a result; -0.01 is not."""
    spec_path, clean = clean_run
    spec = read_spec(spec_path)
    meta = study_meta(spec, design_size(spec))
    assert row_problem({**clean[0], "hours.lost_work": -7.105427357601002e-15}, meta) is None
    assert row_problem({**clean[0], "goodput.mean": 1 + 1e-12}, meta) is None
    assert "not a finite number, 0 or more" in row_problem({**clean[0], "hours.lost_work": -0.01}, meta)


def test_a_second_run_on_the_same_output_is_refused_while_one_runs(tmp_path, capsys, clean_run):
    """Two studies on one -o both said they had written their results; the journal held both and the last to
    finish overwrote the other's. While one run holds the output, another is refused in one line."""
    from planner_gui.core.study.store import held

    spec_path, clean = clean_run
    out = tmp_path / "r.csv"
    with held(out):  # as a run in another process does (a lock of another open file)
        assert main(["study", str(spec_path), "-o", str(out), "--workers", "1"]) == 2
        err = capsys.readouterr().err
        assert "r.csv: another planner-gui study is writing it now" in err and err.count("\n") == 1
        assert not out.exists() and not (tmp_path / "r.csv.journal").exists()
    assert main(["study", str(spec_path), "-o", str(out), "--workers", "1"]) == 0
    assert _rows(read_results(out)) == clean and not (tmp_path / ".r.csv.lock").exists()


#: Runs the command line as the base install has it: without the study extra's packages (pyproject.toml).
WITHOUT_STUDY_EXTRA = """
import sys

class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"pyarrow", "SALib", "dask", "distributed", "pandas"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
from planner_gui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_base_install_runs_grid_and_hypercube_studies_and_names_the_extra_for_the_rest(tmp_path):
    """pyarrow, SALib, dask and distributed are the study extra (pip install 'planner-gui[study]'): without them a
    grid or Latin hypercube study runs locally to CSV, its summary prints, and anything needing one of them is one
    line naming the package and the command that installs them."""
    import subprocess
    import sys

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", WITHOUT_STUDY_EXTRA, *args], capture_output=True, text=True, timeout=300
        )

    grid = "[study]\ntrials = 10\n[vary]\ngpus = [1024, 4096]\n"
    sampled = (
        '[study]\ntrials = 10\ndesign = "{design}"\nsamples = {samples}\n[vary]\ngpus = {{ min = 1024, max = 4096 }}\n'
        "detect_min = {{ min = 1, max = 30 }}\n"
    )
    specs = {
        "grid": grid,
        "lhs": sampled.format(design="lhs", samples=3),
        "sobol": sampled.format(design="sobol", samples=4),
    }
    for name, text in specs.items():
        (tmp_path / f"{name}.toml").write_text(text)
    for name, rows in (("grid", 2), ("lhs", 3)):
        out = tmp_path / f"{name}.csv"
        done = cli("study", str(tmp_path / f"{name}.toml"), "-o", str(out), "--workers", "1")
        assert done.returncode == 0, done.stderr
        assert read_results(out).rows == rows
        summary = cli("study", "--summary", str(out))
        assert summary.returncode == 0 and "goodput" in summary.stdout, summary.stderr
    cases = [
        (("sobol.toml", "-o", "s.csv"), "SALib"),
        (("grid.toml", "-o", "g.parquet"), "pyarrow"),
        (("grid.toml", "-o", "d.csv", "--scheduler", "tcp://127.0.0.1:1"), "distributed"),
    ]
    for (spec, flag, out, *rest), package in cases:
        done = cli("study", str(tmp_path / spec), flag, str(tmp_path / out), *(rest or ["--workers", "1"]))
        lines = done.stderr.strip().splitlines()
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        assert package in lines[-1] and "pip install 'planner-gui[study]'" in lines[-1], lines


@pytest.mark.parametrize("design", ["grid", "lhs"])
def test_a_row_whose_inputs_are_not_its_designs_is_set_aside_wherever_it_is_read(tmp_path, design):
    """--summary and the window took a row edited to gpus = 99,999 (no level of the grid), an interval of 'banana'
    or a value off by 1e-9 as a result: only a resume compared a row's inputs with those its design gives its
    index. Every read does now (to 12 digits), and a file as written has none set aside."""
    import csv

    vary = (
        'gpus = [1024, 4096]\ncheckpoint_interval_min = ["optimal", 30]\n'
        if design == "grid"
        else 'gpus = { min = 1024, max = 8192, scale = "log" }\ndetect_min = { min = 1, max = 30, scale = "log" }\n'
        'checkpoint_interval_min = ["optimal", 30, 60]\n'
    )
    head = "[study]\ntrials = 10\n" + ("" if design == "grid" else 'design = "lhs"\nsamples = 6\n')
    spec = tmp_path / "s.toml"
    spec.write_text(head + "[vary]\n" + vary)
    out = tmp_path / "r.csv"
    assert main(["study", str(spec), "-o", str(out), "--workers", "1"]) == 0
    clean = read_results(out)
    assert clean.set_aside == (0, "") and clean.rows == (4 if design == "grid" else 6)
    lines = out.read_text().splitlines(keepends=True)
    header = next(csv.reader([lines[1]]))
    edits = [("gpus", "99999", "gpus is 99999, not the")]
    edits.append(("checkpoint_interval_min", "banana", 'checkpoint_interval_min is "banana"'))
    if design == "lhs":
        edits.append(("detect_min", None, "detect_min is"))
    for column, value, said in edits:
        cells = next(csv.reader([lines[3]]))  # the second row: scenario 1
        k = header.index(column)
        cells[k] = value if value is not None else repr(float(cells[k]) * (1 + 1e-9))
        bad = tmp_path / f"bad-{column}.csv"
        bad.write_text("".join([*lines[:3], ",".join(cells) + "\n", *lines[4:]]))
        res = read_results(bad)
        assert res.rows == clean.rows - 1 and 1 not in res.columns["index"].tolist()
        assert res.set_aside[0] == 1 and said in res.set_aside[1] and "scenario 1" in res.set_aside[1], res.note


def test_results_that_are_not_text_or_not_csv_say_so_without_pythons_words(tmp_path):
    """Random bytes said 'UnicodeDecodeError: 'utf-8' codec can't decode byte 0xf1...', a 300 kB line 'Error:
    field larger than field limit'."""
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(bytes([0xF1, 0x80, 0xFF]) * 1000)
    with pytest.raises(StudyError, match=r"not study results \(not UTF-8 text: byte 0\)") as err:
        read_results(garbage)
    assert "Unicode" not in str(err.value) and "codec" not in str(err.value)
    spec = tmp_path / "g.toml"
    spec.write_text("[study]\ntrials = 10\n[vary]\ngpus = [1024, 2048]\n")
    out = tmp_path / "g.csv"
    assert main(["study", str(spec), "-o", str(out), "--workers", "1"]) == 0
    head = out.read_text().splitlines(keepends=True)[:2]
    long = tmp_path / "long.csv"
    long.write_text("".join(head) + "x" * 300_000 + "\n")
    with pytest.raises(StudyError, match=r"a CSV line that cannot be read") as err:
        read_results(long)
    assert not str(err.value).split("(", 1)[1].startswith("Error")
