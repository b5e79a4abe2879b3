"""The HTML report (``planner-gui report`` and :func:`planner_gui.report.render_report`), checked by its
structure: sections and headings, every headline number against the JSON report ``planner-gui run
--json`` prints for the same scenario, each plot's SVG (well-formed, titled, a legend that names what is
drawn and only that), no external references, escaped user text, the comparison, and the command's exit
codes and one-line errors.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import re
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import numpy as np
import pytest

from planner_gui import __version__, cli
from planner_gui.core.analysis.compare import input_differences
from planner_gui.core.analysis.sensitivity import sensitivity
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import save
from planner_gui.core.model.scenario import DEFAULT_NOTES, Component, Scenario
from planner_gui.core.model.specs import SPECS
from planner_gui.core.session.plan import FULL, PlanRequest, compute_plan
from planner_gui.core.util.fmt import short_duration
from planner_gui.report import SECTIONS, SOURCES, render_report
from planner_gui.report.model_text import DEFAULT_FIELDS, input_label
from planner_gui.report.svg import count_ticks, duration_ticks, linear_ticks, text_width

PREFIX = "planner-gui: error: "
SVG_NS = "{http://www.w3.org/2000/svg}"
DATE = dt.date(2026, 1, 2)
#: The six figures, by their ids.
CHARTS = (
    "chart-hours",
    "chart-interruptions-gpus",
    "chart-goodput-gpus",
    "chart-goodput-interval",
    "chart-sensitivity",
    "chart-tornado",
    "chart-components",
)


# -- a small DOM from html.parser ----------------------------------------------------------------------

VOID = {"meta", "br", "col", "link", "img", "input", "hr", "source", "wbr", "area", "base", "embed", "track"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Any] = field(default_factory=list)  # Node or str
    parent: Node | None = None

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag: str | None = None):
        if tag is None or self.tag == tag:
            yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter(tag)

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        out = []
        for n in self.iter(tag):
            if all(_has(n, k.rstrip("_"), v) for k, v in attrs.items()):
                out.append(n)
        return [n for n in out if n is not self]

    def find(self, tag: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, **attrs)
        assert found, f"no <{tag} {attrs}>"
        return found[0]


def _has(n: Node, key: str, value: str) -> bool:
    key = key.replace("_", "-")
    if key == "class":
        return value in n.attrs.get("class", "").split()
    return n.attrs.get(key) == value


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.cur = self.root
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        n = Node(tag, a, parent=self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        self.cur.children.append(Node(tag, a, parent=self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        assert n is not None and n.parent is not None, f"unmatched </{tag}>"
        self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(html: str) -> TreeBuilder:
    b = TreeBuilder()
    b.feed(html)
    b.close()
    assert b.cur is b.root, f"unclosed <{b.cur.tag}>"
    return b


def svgs(html: str) -> dict[str, ET.Element]:
    """Every inline SVG, parsed as XML, by its id."""
    out = {}
    for text in re.findall(r"<svg\b.*?</svg>", html, flags=re.S):
        root = ET.fromstring(text)  # well-formed XML, or this raises
        out[root.get("id")] = root
    return out


# -- the numbers as shown ------------------------------------------------------------------------------

_SUFFIX = {"k": 1e3, "M": 1e6, "B": 1e9}
_HOURS = {"seconds": 1 / 3600, "s": 1 / 3600, "minutes": 1 / 60, "min": 1 / 60, "hours": 1.0, "h": 1.0}
_HOURS |= {"days": 24.0, "years": 24.0 * 365}


def _number(text: str) -> tuple[float, float]:
    """A number as shown ("1,234.5", "-0.25", "1.77") and half a unit of its last digit."""
    m = re.fullmatch(r"[+-]?[\d,]*\.?\d+(?:e[+-]?\d+)?", text)
    assert m, f"not a number: {text!r}"
    plain = text.replace(",", "")
    if "e" in plain:
        return float(plain), abs(float(plain)) * 5e-3
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    return float(plain), 0.5 * 10.0**-decimals


def shown(text: str, unit: str) -> tuple[float | None, float]:
    """The value ``text`` shows, in the JSON report's unit, and how far rounding may have moved it."""
    t = text.strip()
    if unit == "percent":
        assert t.endswith("%"), t
        v, tol = _number(t[:-1])
        return v / 100, tol / 100
    if unit in ("points", "days"):
        return _number(t)
    if unit in ("count", "usd"):
        if unit == "usd":
            assert t.startswith("$"), t
            t = t[1:]
        mult = 1.0
        if t[-1] in _SUFFIX:
            mult, t = _SUFFIX[t[-1]], t[:-1].strip()
        v, tol = _number(t)
        return v * mult, tol * mult
    if unit in ("hours", "minutes"):
        if t == "none expected":
            return None, 0.0
        t = t.removeprefix("one every ").strip()
        value, name = t.split(" ")
        v, tol = _number(value)
        scale = _HOURS[name] * (60.0 if unit == "minutes" else 1.0)
        return v * scale, tol * scale
    raise AssertionError(f"unknown unit {unit!r}")


def lookup(doc: dict, key: str) -> float | None:
    """The value at a headline key: a path ("goodput/mean"), or a difference of two ("a - b")."""
    if " - " in key:
        a, b = key.split(" - ")
        return lookup(doc, a) - lookup(doc, b)
    if " + " in key:
        a, b = key.split(" + ")
        return lookup(doc, a) + lookup(doc, b)
    v: Any = doc
    for part in key.split("/"):
        v = v[part]
    return v


# -- fixtures ------------------------------------------------------------------------------------------


def _json_report(capsys, *argv: str) -> dict:
    """What ``planner-gui run --json`` prints, in-process."""
    assert cli.main(["run", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def llama():
    return compute_plan(PlanRequest(load_preset("llama3-405b"), FULL))


@pytest.fixture(scope="module")
def llama_html(llama):
    return render_report(llama, generated=DATE)


@pytest.fixture(scope="module")
def compared_plans():
    """The Llama 3 preset beside two others: 100,000 GPUs, and faster recovery under a hostile name."""
    base = load_preset("llama3-405b")
    other = load_preset("h100-100k")
    fast = base.replace(detect_min=1.0, restart_min=1.0, name='Fast <recovery> & "quotes"')
    return [compute_plan(PlanRequest(s, FULL)) for s in (base, other, fast)]


@pytest.fixture(scope="module")
def compared_html(compared_plans):
    return render_report(compared_plans[0], compared_plans[1:], generated=DATE)


# -- structure -----------------------------------------------------------------------------------------


def test_sections_and_headings_are_there_in_order(llama_html):
    tree = parse(llama_html).root
    assert tree.find("title").text() == "Llama 3 405B (16,384 H100, 54 days): planner-gui report"
    assert tree.find("h1").text() == "Llama 3 405B (16,384 H100, 54 days)"
    meta = tree.find("p", class_="meta").text()
    assert f"planner-gui {__version__}" in meta and "2026-01-02" in meta
    sections = tree.find_all("section")
    expected = [k for k in SECTIONS if k != "comparison"]
    assert [s.attrs["id"] for s in sections] == expected
    for s in sections:
        assert s.find("h2").text() == SECTIONS[s.attrs["id"]]
    charts = {svg.attrs["id"]: s.attrs["id"] for s in sections for svg in s.find_all("svg")}
    assert charts == {
        "chart-hours": "summary",
        "chart-interruptions-gpus": "gpus",
        "chart-goodput-gpus": "gpus",
        "chart-goodput-interval": "interval",
        "chart-sensitivity": "levers",
        "chart-tornado": "unsure",
        "chart-components": "components",
    }
    headline = [th.text() for th in tree.find("table", class_="headline").find_all("th")]
    assert headline == [
        "Unplanned interruptions",
        "Time between interruptions",
        "Goodput",
        "Checkpoint interval",
        "GPU-hours not spent training",
    ]


def test_every_headline_number_matches_the_json_report(llama_html, capsys):
    doc = _json_report(capsys, "--preset", "llama3-405b")  # computed apart from the report
    table = parse(llama_html).root.find("table", class_="headline")
    spans = table.find_all("span", class_="num")
    keys = [s.attrs["data-key"] for s in spans]
    assert set(keys) >= {
        "interruptions/mean",
        "interruptions/p05",
        "interruptions/p95",
        "interruptions_expected",
        "mean_gap_hours",
        "goodput/mean",
        "goodput/p05",
        "goodput/p95",
        "goodput_expected",
        "checkpoint_interval_min",
        "optimal_interval_min/exact",
        "goodput_expected_at_optimal_interval - goodput_expected",
        "lost_gpu_hours/mean",
        "lost_cost_usd",
    }
    for span in spans:
        key, unit = span.attrs["data-key"], span.attrs["data-unit"]
        value, tol = shown(span.text(), unit)
        want = lookup(doc, key)
        if unit == "points":
            want = 100 * want
        if want is None:
            assert value is None, key
            continue
        assert value is not None, key
        assert abs(value - want) <= tol * (1 + 1e-9) + 1e-12, (key, span.text(), want)
    # No number in the headline that is not one of these (the p05-p95 labels aside).
    for row in table.find_all("tr"):
        text = row.text()
        for span in row.find_all("span", class_="num"):
            text = text.replace(span.text(), "", 1)
        assert not re.search(r"\d", text.replace("p05–p95", "")), text


def test_the_time_to_train_is_shown_when_the_report_has_it(llama, capsys):
    doc = llama.main.to_json_dict()
    assert "Time to train" not in render_report(llama, reports=[doc], generated=DATE)
    doc["time_to_train"] = {
        "ideal_days": 41.25,
        "days": {"mean": 45.04, "p05": 44.51, "p95": 45.66},
        "gpu_hours": 1.77e7,
        "cost_usd": 4.43e7,
        "lost_cost_usd": 3.6e6,
    }
    tree = parse(render_report(llama, reports=[doc], generated=DATE)).root
    row = next(
        r for r in tree.find("table", class_="headline").find_all("tr") if r.find("th").text() == "Time to train"
    )
    nums = {s.attrs["data-key"]: s.text() for s in row.find_all("span", class_="num")}
    assert nums == {
        "time_to_train/days/mean": "45.0",
        "time_to_train/days/p05": "44.5",
        "time_to_train/days/p95": "45.7",
        "time_to_train/cost_usd": "$44.3 M",
        "time_to_train/ideal_days": "41.2",
    }


def test_each_plot_is_well_formed_svg_with_a_title_and_a_legend_that_matches_what_it_draws(llama_html):
    charts = svgs(llama_html)
    assert set(charts) == set(CHARTS)
    for key, root in charts.items():
        _check_chart(key, root)


def _check_chart(key: str, root: ET.Element) -> None:
    title = root.find(f"{SVG_NS}title")
    assert title is not None and title.text, key
    assert next(iter(root)) is title  # the first child: what a reader or an image viewer shows as its name
    visible = [t for t in root.iter(f"{SVG_NS}text") if t.get("class") == "chart-title"]
    assert [t.text for t in visible] == [title.text]
    entries = [g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "legend-entry"]
    assert entries, key
    drawn: dict[str, list[str]] = {}
    legend = next(g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "legend")
    in_legend = set(map(id, legend.iter()))
    for el in root.iter():
        if el.get("data-series") is not None and id(el) not in in_legend:
            drawn.setdefault(el.get("data-series"), []).append(el.get("class"))
    assert {e.get("data-series") for e in entries} == set(drawn), key  # names what is drawn, and only that
    for e in entries:
        items = drawn[e.get("data-series")]
        label = "".join(e.itertext())
        assert label.strip(), key
        for kind in e.get("data-kinds").split():
            n = items.count(kind)
            if kind in ("line", "band", "marker"):
                assert n == 1, (key, label, kind, items)  # one curve, one band, one marker per entry
            else:
                assert n >= 1, (key, label, kind, items)
        assert set(items) <= set(e.get("data-kinds").split()), (key, label, items)
    _check_inside(key, root)


def _check_inside(key: str, root: ET.Element) -> None:
    """No text is cut by the figure's edge (by the layout's own width estimate)."""
    _, _, width, height = map(float, root.get("viewBox").split())
    for t in root.iter(f"{SVG_NS}text"):
        if t.get("transform"):
            continue
        x, y, size = float(t.get("x")), float(t.get("y")), float(t.get("font-size"))
        w = text_width("".join(t.itertext()), size)
        left = {"start": x, "middle": x - w / 2, "end": x - w}[t.get("text-anchor", "start")]
        assert left >= 0 and left + w <= width + 0.5, (key, "".join(t.itertext()), left, w)
        assert size * 0.8 <= y <= height, (key, "".join(t.itertext()), y)


def test_the_plots_draw_the_plan_the_window_draws(llama, llama_html):
    charts = svgs(llama_html)
    gp = charts["chart-goodput-gpus"]
    kinds = {
        (g.get("data-series"), g.get("data-kinds")) for g in gp.iter(f"{SVG_NS}g") if g.get("class") == "legend-entry"
    }
    assert kinds == {("main", "band line"), ("exact", "line"), ("current", "marker")}
    ticks = [t.text for t in gp.iter(f"{SVG_NS}text") if t.get("class") == "tick-label"]
    assert {"1k", "10k", "100k", "1M"} <= set(ticks) and "100" in ticks and "0" in ticks
    guides = [t.text for t in gp.iter(f"{SVG_NS}text") if t.get("class") == "guide-label"]
    assert guides == ["16,384", "100,000"]
    # One point per GPU count of the sweep, on the mean curve.
    mean = next(p for p in gp.iter(f"{SVG_NS}path") if p.get("class") == "line" and p.get("data-series") == "main")
    assert len(re.findall(r"[ML]", mean.get("d"))) == len(llama.by_gpus.x)
    iv = charts["chart-goodput-interval"]
    labels = [t.text for t in iv.iter(f"{SVG_NS}text") if t.get("class") == "annotation-label"]
    assert [s.split(" ")[0] for s in labels] == ["in", "Young", "Daly"]
    assert labels[0] == "in use (Daly) 5.5 min" and labels[1] == "Young 5.6 min" and labels[2] == "Daly 5.5 min"
    ticks = [t.text for t in iv.iter(f"{SVG_NS}text") if t.get("class") == "tick-label"]
    assert {"10 s", "1 min", "10 min", "1 h", "10 h"} <= set(ticks)
    comp = charts["chart-components"]
    rows = [t.text for t in comp.iter(f"{SVG_NS}text") if t.get("class") == "row-label"]
    assert len(rows) == 18 and rows[0] == "Faulty GPU"
    dots = [g for g in comp.iter(f"{SVG_NS}g") if g.get("class") == "dot"]
    bars = [r for r in comp.iter(f"{SVG_NS}rect") if r.get("class") == "bar"]
    assert len(dots) == len(bars) == 18
    sens = charts["chart-sensitivity"]
    effects = sensitivity(llama.main.scenario)
    rows = [t.text for t in sens.iter(f"{SVG_NS}text") if t.get("class") == "row-label"]
    values = [t.text for t in sens.iter(f"{SVG_NS}text") if t.get("class") == "value-label"]
    assert rows == [e.change for e in effects]  # a bar per lever, in sensitivity()'s order
    for e, v in zip(effects, values):
        assert v.startswith(f"{100 * e.goodput_delta:+.2f} points, ") and "$" in v
    hours = charts["chart-hours"]
    rows = [t.text for t in hours.iter(f"{SVG_NS}text") if t.get("class") == "row-label"]
    assert rows == ["useful compute", "checkpoint writes", "lost work", "detection + restart", "planned restarts"]


def test_no_external_references_and_no_scripts(llama_html, compared_html):
    for html in (llama_html, compared_html):
        b = parse(html)
        tags = {t for t, _ in b.tags}
        assert not tags & {"script", "link", "img", "iframe", "object", "embed", "image", "use", "foreignobject"}
        for tag, attrs in b.tags:
            for k, v in attrs.items():
                if k == "xmlns":  # the SVG namespace's name, not a link
                    continue
                assert k not in ("src", "href", "xlink:href", "srcset", "action") and not k.startswith("on"), (tag, k)
                assert not re.match(r"\s*(https?:|//|javascript:|data:)", v), (tag, k, v)
        style = "".join(n.text() for n in b.root.iter("style"))
        assert "url(" not in style and "@import" not in style
        assert not re.search(r"(src|href)\s*=\s*[\"']?https?:", html)


def test_print_layout(llama_html):
    style = "".join(n.text() for n in parse(llama_html).root.iter("style"))
    assert "@page" in style and "margin" in style
    assert re.search(r"section \+ section \{[^}]*break-before: page", style)
    assert re.search(r"figure \{[^}]*break-inside: avoid", style)
    assert re.search(r"figure svg \{[^}]*width: 100%", style)
    assert "background: #fff" in style and "color: #000" in style
    for root in svgs(llama_html).values():
        width = float(root.get("viewBox").split()[2])
        height = float(root.get("viewBox").split()[3])
        # At the printable width of A4 and Letter (180 mm), a plot is at most about 200 mm tall: it fits a page.
        assert height / width * 180 < 200


def test_inputs_defaults_sources_and_model_are_there(llama_html):
    tree = parse(llama_html).root
    inputs = tree.find("section", id="inputs")
    labels = [tr.find("th").text() for tr in inputs.find("tbody").find_all("tr")]
    for f in ("gpus", "days", "planned_per_day", "checkpoint_interval_min", "checkpoint_write_s", "detect_min"):
        assert SPECS[f].label in labels
    assert "Failure rates" in labels
    text = inputs.text()
    for f in ("gpus", "days", "checkpoint_write_s", "detect_min", "restart_min", "gpu_hour_cost_usd"):
        assert DEFAULT_NOTES[f] in text
    model = tree.find("section", id="model").text()
    assert "renewal-reward theory" in model and "Young (1974)" in model
    for f in DEFAULT_FIELDS:
        assert f"{input_label(f)}: {DEFAULT_NOTES[f]}" in model
    for source, what in SOURCES:
        assert f"{source}: {what}" in model
    rates = tree.find("table", class_="rates")
    assert len(rates.find("tbody").find_all("tr")) == 18 + 1  # every component and the total


def test_compared_scenarios_have_a_table_and_an_overlay_each(compared_plans, compared_html):
    tree = parse(compared_html).root
    assert [s.attrs["id"] for s in tree.find_all("section")] == list(SECTIONS)
    section = tree.find("section", id="comparison")
    names = [p.main.scenario.name for p in compared_plans]
    inputs = section.find("table", class_="inputs-differ")
    assert [th.text() for th in inputs.find("thead").find_all("th")] == ["Input", *names]
    rows = {tr.find("th").text(): [td.text() for td in tr.find_all("td")] for tr in inputs.find("tbody").find_all("tr")}
    want = dict(input_differences([p.main.scenario for p in compared_plans]))
    assert rows == want and {"GPUs", "detection", "restart"} <= set(rows)
    assert rows["GPUs"] == ["16,384", "100,000", "16,384"]
    outputs = section.find("table", class_="outputs")
    out_rows = {tr.find("th").text() for tr in outputs.find("tbody").find_all("tr")}
    assert {"unplanned interruptions", "goodput (Monte Carlo)", "goodput (exact)", "their cost"} <= out_rows
    charts = svgs(compared_html)
    for key in ("chart-interruptions-gpus", "chart-goodput-gpus"):
        root = charts[key]
        _check_chart(key, root)
        entries = [g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "legend-entry"]
        by_series = {g.get("data-series"): "".join(g.itertext()) for g in entries}
        assert by_series["compared-1"].startswith("H100 at 100,000 GPUs")
        assert by_series["compared-2"] == 'Fast <recovery> & "quotes": Monte Carlo mean (at 16,384 GPUs)'
        colors = {
            el.get("stroke")
            for el in root.iter(f"{SVG_NS}path")
            if el.get("class") == "line" and el.get("data-series", "").startswith("compared")
        }
        assert len(colors) == 2 and "#4e79a7" not in colors  # a colour each, not the main one's
    for root in charts.values():
        _check_chart(root.get("id"), root)


def test_user_text_is_escaped_in_html_and_svg():
    comps = (
        Component("</text><script>alert(1)</script>", "Evil & <Co>", 2e-5),
        Component('Quote " and \x1b[31m escape', "GPU", 1e-5),
    )
    sc = Scenario(
        name="<script>alert('x')</script> & \u202e \"name\"", gpus=2048, days=2.0, trials=50, components=comps
    )
    plan = compute_plan(PlanRequest(sc, FULL))
    other = compute_plan(PlanRequest(sc.replace(name="</svg><b>other</b>", gpus=4096), FULL))
    html = render_report(plan, [other], generated=DATE)
    b = parse(html)
    assert "script" not in {t for t, _ in b.tags}
    assert not [n for n in b.root.iter("b") if n.text() == "other"]  # the name's <b> stayed text
    assert b.root.find("h1").text() == "<script>alert('x')</script> & \\u202e \"name\""
    assert not any(unicodedata.category(ch) in ("Cc", "Cf") for ch in html.replace("\n", ""))
    charts = svgs(html)
    assert set(charts) == set(CHARTS)  # every SVG still parses as XML
    for key, root in charts.items():
        _check_chart(key, root)
    rows = [t.text for t in charts["chart-components"].iter(f"{SVG_NS}text") if t.get("class") == "row-label"]
    assert rows[0] == "</text><script>alert(1)</script>"
    assert 'Quote " and \\x1b[31m escape' in rows
    legend = "".join(charts["chart-goodput-gpus"].itertext())
    assert "</svg><b>other</b>: Monte Carlo mean" in legend


def test_a_scenario_without_failures_still_makes_a_report():
    sc = Scenario(gpus=1024, days=1.0, trials=20, components=(Component("none", "GPU", 0.0),), planned_per_day=0.0)
    html = render_report(compute_plan(PlanRequest(sc, FULL)), generated=DATE)
    charts = svgs(html)
    assert set(charts) == set(CHARTS)
    for key, root in charts.items():
        _check_chart(key, root)
    assert "none expected" in parse(html).root.find("table", class_="headline").text()


# -- axes ---------------------------------------------------------------------------------------------


def test_axis_ticks_read_as_people_write_them():
    majors, minors = count_ticks(1000, 1_048_576)
    assert [label for _, label in majors] == ["1k", "10k", "100k", "1M"]
    assert 2000 in minors and 1000 not in minors
    majors, _ = count_ticks(300, 900)
    assert [label for _, label in majors] == ["300", "400", "500", "600", "700", "800", "900"]
    majors, _ = count_ticks(20, 400)
    assert [label for _, label in majors] == ["20", "50", "100", "200"]
    majors, _ = duration_ticks(0.1, 1000)
    assert [label for _, label in majors] == ["10 s", "1 min", "10 min", "1 h", "10 h"]
    majors, _ = duration_ticks(1, 10_000)
    assert [label for _, label in majors] == ["1 min", "10 min", "1 h", "10 h", "1 d"]
    assert short_duration(0.01) == "0.6 s" and short_duration(1440) == "1 d"
    # The report's narrow spans (plain decades and halves) go through the same labels as the window's axes:
    # 99.7 days read "1e+02 d" in the report's own copy.
    for lo in np.geomspace(0.01, 500_000, 60):
        for hi in (lo * 1.5, lo * 3, lo * 30):
            assert all("e+" not in label and "e-" not in label for _, label in duration_ticks(lo, hi)[0])
    assert short_duration(99.7 * 1440) == "100 d"
    assert [label for _, label in linear_ticks(0, 100)] == ["0", "20", "40", "60", "80", "100"]
    assert [label for _, label in linear_ticks(90.5, 93.1)] == ["90.5", "91.0", "91.5", "92.0", "92.5", "93.0"]
    assert [label for _, label in linear_ticks(0, 4e6, money=True)][-1] == "$4M"
    assert [label for _, label in linear_ticks(0, 160)] == ["0", "25", "50", "75", "100", "125", "150"]
    assert [label for _, label in linear_ticks(0, 1.6)][:3] == ["0.00", "0.25", "0.50"]


# -- the command ----------------------------------------------------------------------------------------


def call(capfd, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capfd.readouterr()
    return code, out, err


def assert_refused(code: int, err: str) -> str:
    lines = err.splitlines()
    assert code == 2, err
    assert len(lines) == 1 and err.endswith("\n") and lines[0].startswith(PREFIX), repr(err)
    assert "Traceback" not in err
    return lines[0][len(PREFIX) :]


def test_report_command_writes_the_same_report_as_render_report(tmp_path, capfd, llama):
    out = tmp_path / "report.html"
    out.write_text("old")
    os.chmod(out, 0o640)
    code, stdout, err = call(capfd, "report", "--preset", "llama3-405b", "-o", str(out))
    assert code == 0 and stdout == "" and err == "", err
    html = out.read_text("utf-8")
    assert oct(os.stat(out).st_mode & 0o777) == oct(0o640)  # written atomically over it, mode kept
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left
    made = dt.date.fromisoformat(re.search(r"report, (\d{4}-\d\d-\d\d)\.", html).group(1))
    assert abs((made - dt.date.today()).days) <= 1
    assert html == render_report(llama, generated=made)  # the same data, the same report
    code, stdout, err = call(capfd, "report", "--preset", "llama3-405b", "-o", "-")
    assert code == 0 and err == ""
    assert stdout == html


def test_report_command_compares_files_and_takes_scenario_flags(tmp_path, capfd):
    path = tmp_path / "other.json"
    save(load_preset("h100-100k").replace(trials=100), path)
    code, html, err = call(
        capfd, "report", "--gpus", "4096", "--trials", "100", "--compare", str(path), str(path), "-o", "-"
    )
    assert code == 0, err
    tree = parse(html).root
    assert tree.find("h1").text() == "Llama 3 405B (16,384 H100, 54 days), edited: --gpus 4,096"
    heads = [th.text() for th in tree.find("table", class_="inputs-differ").find("thead").find_all("th")]
    name = load_preset("h100-100k").name
    assert heads == ["Input", "Llama 3 405B (16,384 H100, 54 days), edited: --gpus 4,096", name, f"{name} (2)"]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["report", "--preset", "nope", "-o", "{out}"], "--preset: unknown preset 'nope'"),
        (["report", "--preset", "llama3-405b"], "the following arguments are required: --output/-o"),
        (["report", "--gpus", "0", "-o", "{out}"], "--gpus: must be a whole number from 1"),
        (["report", "--compare", "{missing}", "-o", "{out}"], "cannot read"),
        (["report", "--compare", *["{good}"] * 8, "-o", "{out}"], "--compare: give at most 7 scenario files (got 8)"),
        (["report", "-o", "{dir}"], "--output: "),
        (["report", "-o", "{dir}/no/such/folder/r.html"], "--output: "),
        (["report", "--compare", "{bad}", "-o", "{out}"], ""),
    ],
)
def test_report_command_refuses_bad_input_in_one_line(tmp_path, capfd, argv, message):
    good = tmp_path / "good.json"
    save(Scenario(gpus=64, days=0.1, trials=5), good)
    bad = tmp_path / "bad.json"
    bad.write_text('{"gpus": "many"}')
    out = tmp_path / "r.html"
    subs = {"{out}": str(out), "{missing}": str(tmp_path / "missing.json"), "{good}": str(good), "{bad}": str(bad)}
    args = [subs.get(a, a.replace("{dir}", str(tmp_path))) for a in argv]
    code, stdout, err = call(capfd, *args)
    assert message in assert_refused(code, err)
    assert stdout == "" and not out.exists()  # nothing written


def test_the_report_package_does_not_load_qt():
    code = (
        "import sys, planner_gui.report, planner_gui.cli.share; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph', 'superqt') "
        "or m.startswith('planner_gui.ui')); print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_dates_and_labels(llama):
    html = render_report(llama, labels=["Ours"], generated=dt.date(2030, 12, 31))
    assert "2030-12-31" in parse(html).root.find("p", class_="meta").text()
    with pytest.raises(ValueError):
        render_report(llama, labels=["a", "b"])
    with pytest.raises(ValueError):
        render_report(llama, [llama] * 8)


def test_a_report_of_every_feature_at_once_reads_its_numbers_from_its_json_report():
    """The whole plan (in-memory tier, spares, continue, burn-in, uncertain rates, a training run), small: the
    report has no refusal, its headline names the tiers, the pool, continuing and the rates' share of the spread,
    and every number it shows is its JSON report's."""
    sc = load_preset("h100-100k-plan").replace(gpus=4096, days=3.0, trials=24)
    res = compute_plan(PlanRequest(sc, FULL))
    doc = res.main.to_json_dict()
    html = render_report(res, generated=DATE)
    table = parse(html).root.find("table", class_="headline")
    rows = [r.find("th").text() for r in table.find_all("tr")]
    for name in ("Fast tier (memory)", "Persistent tier", "Restores", "Spare pool", "Continuing on replicas",
                 "Rate uncertainty", "Time to train"):  # fmt: skip
        assert name in rows, rows
    for span in table.find_all("span", class_="num"):
        key, unit = span.attrs["data-key"], span.attrs["data-unit"]
        value, tol = shown(span.text(), unit)
        want = lookup(doc, key)
        assert value is not None and want is not None, key
        assert abs(value - want) <= tol * (1 + 1e-9) + 1e-12, (key, span.text(), want)
    assert "paired Monte Carlo" in html  # the levers, with no closed form here
    assert "waiting for spares" not in html or "reduced throughput" in html
    tiers = doc["tiers"]  # (the report said "every 1 snapshots")
    for n, what in ((tiers["persistent_every_fast"], "snapshot"), (tiers["upload_every_checkpoint"], "checkpoint")):
        assert (f"each {what}" if n == 1 else f"every {n:,} {what}s") in html
    assert "every 1 " not in html


def test_the_interval_chart_with_the_fast_tier_marks_the_fast_tiers_interval_and_optima():
    """With the fast tier on the sweep varies the fast interval: the chart marks the fast interval in use and
    the fast tier's Young and Daly intervals (it marked the blocking write's, 0.6 s, beside a 46 s optimum)."""
    from planner_gui.core.session.plan import PREVIEW
    from planner_gui.core.util import fmt
    from planner_gui.report.charts import goodput_vs_interval

    sc = load_preset("h100-100k-inmemory").replace(trials=30, days=2.0)
    plan = compute_plan(PlanRequest(sc, PREVIEW))
    tp = plan.main.tier_plan
    young, daly = tp.fast_young_daly()
    svg = goodput_vs_interval(plan)
    assert f"Young {fmt.duration_hours(young / 60)}" in svg and f"Daly {fmt.duration_hours(daly / 60)}" in svg
    assert f"in use (optimal) {fmt.duration_hours(tp.fast_min / 60)}" in svg
    assert "fast (in-memory) checkpoint interval" in svg
    assert f"Young {fmt.duration_hours(plan.main.optimal.young / 60)}" not in svg


def test_a_priced_lever_says_its_saving_per_dollar_in_the_report(llama):
    """The scenario's lever_prices reach the report's levers (priced after the run: the same plan result)."""
    priced = dataclasses.replace(llama, main=dataclasses.replace(llama.main, scenario=llama.main.scenario.replace(
        lever_prices=(("restart", 2e6),))))  # fmt: skip
    html = render_report(priced, generated=DATE)
    e = next(e for e in sensitivity(priced.main.scenario) if e.lever == "restart")
    assert f"${-e.cost_delta_usd / 2e6:,.2f} saved per $ paid ($2 M)" in html
    assert "saved per $" not in render_report(llama, generated=DATE)
