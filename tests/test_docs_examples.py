"""Every command-line example of the README and docs/ runs as written.

The examples of one page run in order in a folder of their own that holds a copy of ``docs/examples/``, as
from the repository's root: a page's example may use a file an earlier example of the same page wrote (``run
--save mine.json``, then ``--scenario mine.json``) or one of the shipped examples, never a file the reader
would have to make. An example that needs what a test machine has not (a Dask cluster at an address) says so
in its comment, and is only parsed.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from planner_gui.cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A comment that marks an example that cannot run here.
NOT_HERE = "needs a Dask cluster"


def examples(page: Path) -> list[tuple[str, bool]]:
    """The page's ``planner-gui`` command lines in its shell blocks, in order, continuation lines joined, each
    with whether it can run on a test machine."""
    text = page.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```(?:sh|bash|shell|console)\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line.startswith("planner-gui "):
                out.append((line, NOT_HERE not in line))
    return out


def argv_of(line: str) -> list[str]:
    return shlex.split(line, comments=True)[1:]


def test_the_pages_have_examples():
    found = {p.name: len(examples(p)) for p in PAGES}
    assert found["README.md"] >= 8 and found["cli.md"] >= 30, found


@pytest.mark.parametrize("page", [p for p in PAGES if examples(p)], ids=lambda p: p.name)
def test_every_example_of_the_page_runs_as_written(page, tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "docs" / "examples", tmp_path / "docs" / "examples")
    monkeypatch.chdir(tmp_path)
    failed = []
    for line, runs in examples(page):
        argv = argv_of(line)
        assert argv and argv[0] != "gui", line  # the window is not an example of the command line
        if not runs:
            continue
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's --help
            code = int(exc.code or 0)
        out = capsys.readouterr()
        if code != 0:
            failed.append(f"{line}\n  -> exit {code}: {out.err.strip()[-300:]}")
    assert not failed, "\n".join(failed)


def test_every_relative_link_of_the_pages_leads_to_a_file():
    """The manual moved from the README into docs/: no link may point where nothing is."""
    bad = []
    for page in [*PAGES, ROOT / "CHANGELOG.md"]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://", "mailto:")) and not (page.parent / target).exists():
                bad.append(f"{page.name}: {target}")
    assert not bad, bad


def test_the_readmes_limits_are_the_programs():
    """README's Limits table states each size limit the code enforces: a limit changed in one place and not the
    other fails here."""
    from planner_gui.cli.analysis import MAX_COMPARED
    from planner_gui.core.analysis.training import MAX_SPACINGS
    from planner_gui.core.files.scenario_io import MAX_COMPONENTS, MAX_FILE_BYTES
    from planner_gui.core.incidents.logs import MAX_LOG_BYTES, TEXT_MAX_LEN
    from planner_gui.core.model.specs import MAX_PROFILE_PIECES, MAX_TOTAL_EVENTS, MAX_TOTAL_PIECES, SPECS
    from planner_gui.core.sim.capabilities import MAX_GENERAL_POINTS, MAX_GENERAL_STEPS
    from planner_gui.core.study.spec import MAX_INPUTS, MAX_PATH_PARTS, MAX_SCENARIOS, MAX_SPEC_BYTES
    from planner_gui.core.study.store import MAX_BYTES_PER_SCENARIO, MAX_DESCRIPTION_BYTES, MAX_JOURNAL_LINE
    from planner_gui.report.document import MAX_COMPARED as MAX_REPORT_COMPARED

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    limits = text[text.index("## Limits") : text.index("\n## ", text.index("## Limits") + 3)]

    def words(n: float) -> str:
        for size, word in ((1e9, "billion"), (1e6, "million")):
            if n >= size and n % size == 0:
                return f"{n / size:g} {word}"
        return f"{n:,.0f}"

    expected = [
        f"1 to {SPECS['gpus'].hi:,.0f} GPUs",
        f"{SPECS['days'].lo:g} to {SPECS['days'].hi:,.0f} days",
        f"{SPECS['trials'].lo:.0f} to {SPECS['trials'].hi:,.0f} trials",
        f"1 to {SPECS['gpus_per_node'].hi:,.0f} GPUs per node",
        f"{words(MAX_TOTAL_EVENTS)} interruptions",
        f"{words(MAX_GENERAL_POINTS)} points over all trials, {words(MAX_GENERAL_STEPS)} in one trial",
        f"{words(MAX_SPACINGS)} checkpoint spacings",
        f"{MAX_COMPARED} and {MAX_REPORT_COMPARED} scenario files",
        f"at most {MAX_FILE_BYTES / 1e6:g} MB; {MAX_COMPONENTS} components",
        f"{MAX_PROFILE_PIECES:,} pieces ({words(MAX_TOTAL_PIECES)} in all)",
        f"{MAX_LOG_BYTES / 1e6:g} MB; text fields of {TEXT_MAX_LEN} characters",
        f"{MAX_SPEC_BYTES / 1e6:g} MB; {MAX_INPUTS} inputs; {MAX_SCENARIOS:,} scenarios; paths of at most "
        f"{MAX_PATH_PARTS} parts",
        f"{MAX_BYTES_PER_SCENARIO // 1024} kB a scenario plus {MAX_DESCRIPTION_BYTES // 2**20} MB",
        f"journal lines of {MAX_JOURNAL_LINE // 1024} kB",
    ]
    missing = [e for e in expected if e not in limits]
    assert not missing, missing
