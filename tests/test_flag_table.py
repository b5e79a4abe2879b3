"""The flag tables (planner_gui/cli/flag_table.py): each row names a real field of its section, and the parser built
from a table sets that field from the flag and from each alias."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from planner_gui.cli import flags as cli_flags
from planner_gui.cli import spares_flags
from planner_gui.cli.flag_table import Flag, add_flags, field_flags
from planner_gui.cli.numbers import number_arg
from planner_gui.core.model.scenario import Scenario, Storage, Tiers, Training
from planner_gui.core.model.spares import Spares

TABLES = [
    (cli_flags.SCENARIO_TABLE, Scenario),
    (cli_flags.TRAINING_TABLE, Training),
    (cli_flags.STORAGE_TABLE, Storage),
    (cli_flags.TIER_TABLE, Tiers),
    (spares_flags.SPARES_TABLE, Spares),
]


@pytest.mark.parametrize(("table", "section"), TABLES, ids=lambda x: getattr(x, "__name__", ""))
def test_every_row_sets_a_field_of_its_section(table, section):
    fields = {f.name for f in dataclasses.fields(section)}
    assert [row.field for row in table if row.field not in fields] == []
    assert len({row.field for row in table}) == len(table)  # one flag a field


def test_every_flag_of_the_tables_is_on_the_run_command_once():
    from planner_gui.cli.program import build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    known = {s for a in sub.choices["run"]._actions for s in a.option_strings}
    names = [n for table, _ in TABLES for row in table for n in row.names]
    assert sorted(set(names) - known) == []
    assert len(names) == len(set(names))


def test_a_parser_from_a_table_sets_the_field_by_the_flag_and_by_its_alias():
    table = (
        Flag("storage_gb_s", ("--storage-gbps", "--storage-gb-s"), "bandwidth", parse=number_arg, metavar="B"),
        Flag("trials", ("--trials",), "trials", parse=int, named=False),
    )
    p = argparse.ArgumentParser()
    add_flags(p, table)
    assert p.parse_args(["--storage-gbps", "1,000"]).storage_gbps == 1000.0
    assert p.parse_args(["--storage-gb-s", "2e3"]).storage_gbps == 2000.0
    assert p.parse_args(["--trials", "7"]).trials == 7
    assert field_flags(table) == {"storage_gb_s": "--storage-gbps", "trials": "--trials"}


def test_the_named_fields_are_the_scenario_flags_but_trials_and_seed():
    assert set(cli_flags.FLAG_FIELDS) - set(cli_flags._NAMED_FIELDS) == {"trials", "seed"}
