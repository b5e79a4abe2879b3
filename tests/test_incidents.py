"""Rates from incident logs (planner_gui.core.incidents, ``planner-gui fit``), each against a check
computed another way: chi-square and numerically integrated quantiles, a hand-worked Laplace statistic,
a brute-force likelihood grid, coverage over simulated logs, and logs made by a known process."""

from __future__ import annotations

import ast
import json
import math
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from planner_gui.cli import main
from planner_gui.core import incidents
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import load
from planner_gui.core.incidents import (
    LEVEL,
    MAX_LOG_BYTES,
    IncidentLogError,
    fit_log,
    fit_weibull,
    generate_log,
    laplace_test,
    mil_hdbk_189_test,
    rate_interval,
    sample_components,
    sample_log_text,
)
from planner_gui.core.model.scenario import Component, llama3_components

UTC = timezone.utc
T0 = datetime(2025, 1, 6, tzinfo=UTC)
SAMPLE_WINDOW = ("2025-01-06T00:00:00Z", "2025-03-07T00:00:00Z")
TAIL = (1 - LEVEL) / 2


def _stamp(hours: float) -> str:
    return (T0 + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _log(hours: list[float], component: str = "Faulty GPU") -> str:
    return "timestamp,component\n" + "".join(f"{_stamp(h)},{component}\n" for h in hours)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["fit", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


# -- the rate's interval ------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [0, 1, 2, 5, 17, 148, 1000])
def test_rate_interval_is_the_chi_square_form_of_the_jeffreys_interval(count):
    # Gamma(k + 1/2, rate E) quantiles are chi-square(2k + 1) quantiles / (2E).
    exposure = 16_384 * 1296.0
    low, high = rate_interval(count, exposure)
    assert low * 2 * exposure == pytest.approx(stats.chi2.ppf(TAIL, 2 * count + 1), rel=1e-9)
    assert high * 2 * exposure == pytest.approx(stats.chi2.ppf(1 - TAIL, 2 * count + 1), rel=1e-9)


@pytest.mark.parametrize("count", [0, 3, 40])
def test_rate_interval_matches_gamma_quantiles_integrated_by_hand(count):
    # The posterior's quantiles from its density, integrated by the trapezoid rule in y = sqrt(x) (which
    # takes away the x ** -1/2 pole at zero for a count of 0): the density of y is 2 y^(2a-1) e^(-y^2) / G(a).
    a = count + 0.5
    y = np.linspace(0.0, math.sqrt(a + 12 * math.sqrt(a) + 40), 400_001)
    dens = 2.0 * np.exp((2 * a - 1) * np.log(np.maximum(y, 1e-300)) - y * y - math.lgamma(a))
    cdf = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2 * np.diff(y))])
    exposure = 1000.0
    low, high = rate_interval(count, exposure)
    for q, got in ((TAIL, low), (1 - TAIL, high)):
        x = float(np.interp(q, cdf, y)) ** 2
        assert got * exposure == pytest.approx(x, rel=2e-5)


def test_rate_intervals_cover_llama3_replayed_many_times():
    # 200 logs of Llama 3's own process (16,384 GPUs, 54 days, its 18 rates, constant): each component's
    # interval should hold its true rate as often as the Jeffreys interval does for its Poisson mean,
    # computed exactly from the Poisson law (chi-square quantiles, scipy.stats): 3,600 intervals.
    comps = llama3_components()
    logs = 200
    hits = 0
    expected = 0.0
    for seed in range(logs):
        res = fit_log(generate_log(comps, 16_384, 54, seed=seed), 16_384, T0, T0 + timedelta(days=54))
        fitted = {c.name: (c.rate_low, c.rate_high) for c in res.components}
        exposure = res.exposure_gpu_hours
        for c in comps:
            low, high = fitted.get(c.name, rate_interval(0, exposure))
            hits += low <= c.rate_per_gpu_hour <= high
    for c in comps:
        mu = c.rate_per_gpu_hour * 16_384 * 54 * 24
        k = np.arange(0, int(mu + 20 * math.sqrt(mu) + 30))
        lo, hi = stats.chi2.ppf(TAIL, 2 * k + 1) / 2, stats.chi2.ppf(1 - TAIL, 2 * k + 1) / 2
        expected += float(stats.poisson.pmf(k, mu)[(lo <= mu) & (mu <= hi)].sum())
    n = logs * len(comps)
    p = expected / len(comps)
    # The Jeffreys interval holds its mean 90 % of the time on average over means, with dips: 0.81 at a
    # mean of 2 (Brown, Cai and DasGupta 2003), so 0.88 here, where 5 of the 18 means are 2.
    assert 0.85 <= p <= 0.95
    assert abs(hits / n - p) < 4 * math.sqrt(p * (1 - p) / n), (hits / n, p)


# -- trend tests ------------------------------------------------------------------------------------------


def test_laplace_statistic_on_a_hand_worked_log():
    # Window 0-10 h, incidents at 1, 2, 4, 5 and 8 h: mean time 4 h, so U = sqrt(12 x 5) (0.4 - 0.5) = -0.7746.
    hours = [1, 2, 4, 5, 8]
    u, p = laplace_test([h / 10 for h in hours])
    assert u == pytest.approx(-math.sqrt(60) / 10, rel=1e-12)
    assert p == pytest.approx(math.erfc(math.sqrt(60) / 10 / math.sqrt(2)), rel=1e-12)
    res = fit_log(_log(hours), 8, T0, T0 + timedelta(hours=10))
    assert res.trend.statistic == pytest.approx(u, rel=1e-12)
    assert res.trend.verdict.startswith("no trend")
    # With no window given, the first and last incidents become its ends and carry no information.
    res = fit_log(_log([0, *hours, 10]), 8)
    assert (res.trend.statistic, res.trend.points) == (pytest.approx(u, rel=1e-12), 5)
    assert res.hours == 10


def test_mil_hdbk_189_on_a_hand_worked_log():
    u = np.array([0.1, 0.2, 0.4, 0.5, 0.8])
    s = -math.log(0.1 * 0.2 * 0.4 * 0.5 * 0.8)  # 5.7446
    chi2, p, shape, low, high = mil_hdbk_189_test(u)
    assert chi2 == pytest.approx(2 * s, rel=1e-12)
    one_sided = stats.chi2.cdf(2 * s, 10)
    assert p == pytest.approx(2 * min(one_sided, 1 - one_sided), rel=1e-9)
    assert shape == pytest.approx(5 / s, rel=1e-12)
    assert (low, high) == (
        pytest.approx(stats.chi2.ppf(TAIL, 10) / (2 * s), rel=1e-9),
        pytest.approx(stats.chi2.ppf(1 - TAIL, 10) / (2 * s), rel=1e-9),
    )


def test_power_law_shape_interval_covers_its_shape():
    # Given the count, a power-law process puts its points at U ** (1 / shape), U uniform: 2,000 samples of 30.
    rng = np.random.default_rng(11)
    n = 2000
    covered = sum(
        low <= 0.7 <= high for *_, low, high in (mil_hdbk_189_test(rng.random(30) ** (1 / 0.7)) for _ in range(n))
    )
    assert abs(covered / n - LEVEL) < 4 * math.sqrt(LEVEL * (1 - LEVEL) / n)


# -- the Weibull shape --------------------------------------------------------------------------------


def _loglik(k, lam, whole, cens):
    """Weibull log-likelihood on a grid: whole gaps contribute their density, the open one its survival."""
    k, lam = k[..., None], lam[..., None]
    z = (whole / lam) ** k
    ll = (np.log(k) - np.log(lam) + (k - 1) * np.log(whole / lam) - z).sum(-1)
    return ll - ((cens / lam) ** k).sum(-1)


def _grid_max(f, lo, hi, rounds=5, n=201):
    """Brute-force maximum of f over a box of positive values, by grids in the logarithms that shrink
    tenfold around the best point."""
    lo, hi = np.log(np.asarray(lo, float)), np.log(np.asarray(hi, float))
    for _ in range(rounds):
        mesh = np.meshgrid(*(np.exp(np.linspace(a, b, n)) for a, b in zip(lo, hi)), indexing="ij")
        vals = f(*mesh)
        best = np.unravel_index(np.argmax(vals), vals.shape)
        point = np.log([m[best] for m in mesh])
        span = (hi - lo) / 20
        lo, hi = point - span, point + span
    return np.exp(point), float(vals.max())


def test_weibull_mle_and_interval_agree_with_a_brute_force_likelihood_grid():
    rng = np.random.default_rng(5)
    whole = 5.0 * rng.weibull(0.8, 60)
    cens = np.array([3.0])
    k, scale, low, high = fit_weibull(whole, cens)
    (gk, glam), top = _grid_max(lambda K, L: _loglik(K, L, whole, cens), [0.2, 0.5], [3.0, 50.0])
    assert k == pytest.approx(gk, rel=1e-5)
    assert scale == pytest.approx(glam, rel=1e-5)
    # At each end of the interval, the likelihood maximised over the scale alone is half a chi-square(1)
    # 90 % quantile below the top.
    drop = stats.chi2.ppf(LEVEL, 1) / 2
    for kb in (low, high):
        (_,), at = _grid_max(lambda L, kb=kb: _loglik(np.full_like(L, kb), L, whole, cens), [0.01], [500.0])
        assert top - at == pytest.approx(drop, abs=1e-6)


def test_the_log_fit_uses_the_gaps_and_the_gap_open_at_a_given_end():
    # Incidents at 1, 2, 4, 5, 8 and 9 h of a 20-hour window: gaps 1, 2, 1, 3, 1, and 11 h still open at
    # the end. The gap before the first incident is not a gap between incidents and is left out.
    res = fit_log(_log([1, 2, 4, 5, 8, 9]), 8, T0, T0 + timedelta(hours=20))
    k, scale, low, high = fit_weibull([1, 2, 1, 3, 1], [11])
    assert (res.weibull.shape, res.weibull.scale_hours, res.weibull.shape_low, res.weibull.shape_high) == (
        k,
        scale,
        low,
        high,
    )
    assert (res.weibull.gaps, res.weibull.censored) == (5, 1)
    open_end = fit_log(_log([1, 2, 4, 5, 8, 9]), 8, T0)  # the window ends at the last incident: nothing open
    assert open_end.weibull.shape == fit_weibull([1, 2, 1, 3, 1])[0] and open_end.weibull.censored == 0


def test_incidents_at_one_time_are_left_out_of_the_gaps_and_noted():
    res = fit_log(_log([1, 2, 2, 4, 5, 5, 8, 9]), 8, T0, T0 + timedelta(hours=20))
    assert res.total.count == 8 and res.weibull.gaps == 5
    assert res.weibull.shape == fit_weibull([1, 2, 1, 3, 1], [11])[0]
    assert any(n.startswith("2 incident(s) at the same time") for n in res.notes)


def test_weibull_shape_interval_covers_its_shape():
    # 400 samples of 80 gaps of shape 0.7: the profile-likelihood interval should hold 0.7 about 90 % of the time.
    rng = np.random.default_rng(3)
    n = 400
    covered = 0
    for _ in range(n):
        _, _, low, high = fit_weibull(12.0 * rng.weibull(0.7, 80))
        covered += low <= 0.7 <= high
    assert abs(covered / n - LEVEL) < 4 * math.sqrt(LEVEL * (1 - LEVEL) / n)


def test_weibull_fit_is_scale_free_and_refuses_degenerate_gaps():
    gaps = np.array([0.5, 1.0, 3.0, 0.2, 7.0, 2.0])
    a, b = fit_weibull(gaps), fit_weibull(gaps * 1e6)
    assert a[0] == pytest.approx(b[0], rel=1e-9) and a[1] * 1e6 == pytest.approx(b[1], rel=1e-9)
    with pytest.raises(ValueError):
        fit_weibull([2.0, 2.0, 2.0])


# -- known processes ------------------------------------------------------------------------------------


def test_the_shipped_sample_is_what_its_generator_makes():
    shipped = resources.files("planner_gui.core").joinpath("data/sample_incidents.csv").read_text("utf-8")
    assert shipped == sample_log_text()
    assert shipped.startswith("# Synthetic incident log: not real data.")


def test_the_sample_fit_recovers_its_burn_in_process():
    res = fit_log(sample_log_text(), 2048, *SAMPLE_WINDOW)
    truth = sample_components()
    fitted = {c.name: c for c in res.components}
    # Every cause's interval, including those with no incident, against its true average rate: misses
    # are allowed as a binomial(19, 0.1) allows them 99 % of the time.
    misses = 0
    for c in truth:
        f = fitted.get(c.name)
        low, high = (f.rate_low, f.rate_high) if f else rate_interval(0, res.exposure_gpu_hours)
        misses += not low <= c.rate_per_gpu_hour <= high
    assert misses <= stats.binom.ppf(0.99, len(truth), 1 - LEVEL)
    total = sum(c.rate_per_gpu_hour for c in truth)
    assert res.total.rate_low <= total <= res.total.rate_high
    assert res.trend.p_value < 1 - LEVEL and res.trend.statistic < 0
    assert res.trend.verdict.startswith("rate falling") and "burn-in" in res.trend.verdict
    assert res.power_law.shape_low <= 0.7 <= res.power_law.shape_high < 1
    assert fitted["Filesystem Hang"].category == "Storage" and fitted["Filesystem Hang"].llama3_rate is None


def test_a_constant_rate_shows_no_trend_and_shape_one():
    # Llama 3's own rates and size, at a constant rate: about 419 incidents.
    log = generate_log(llama3_components(), 16_384, 54, shape=1.0, seed=2024)
    res = fit_log(log, 16_384, T0, T0 + timedelta(days=54))
    assert res.trend.verdict.startswith("no trend") and "constant rate" in res.trend.verdict
    assert res.weibull.shape_low <= 1 <= res.weibull.shape_high
    assert res.power_law.shape_low <= 1 <= res.power_law.shape_high
    assert "consistent with 1" in res.weibull.verdict


def test_a_weibull_renewal_process_gives_its_shape_to_the_gap_fit():
    # Gaps drawn from a Weibull of shape 0.7 (bursts, no lasting trend): the gap fit finds 0.7.
    log = generate_log(llama3_components(), 16_384, 54, shape=0.7, process="renewal", seed=7)
    res = fit_log(log, 16_384, T0, T0 + timedelta(days=54))
    assert res.weibull.shape_low <= 0.7 <= res.weibull.shape_high < 1
    assert "bursts" in res.weibull.verdict


# -- reading logs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "sep", "stamp"),
    [
        ("timestamp,component,category,gpus_affected", ",", "{:%Y-%m-%dT%H:%M:%SZ}"),
        ("Time (UTC),Root Cause,Category,GPUs Affected", ",", "{:%Y-%m-%d %H:%M:%S} UTC"),
        ("Date;Failure Type;Group;Affected GPUs", ";", "{:%Y%m%dT%H%M%S}Z"),
        ("occurred_at\tcause\tcategory\tnum_gpus", "\t", "{:%Y-%m-%dT%H:%M:%S.000000+00:00}"),
    ],
)
def test_common_spellings_and_formats_give_the_same_fit(header, sep, stamp):
    rows = [(1.5, "GPU HBM3 Memory", "GPU", 1), (30.0, "Fan", "Cooling", 8), (31.25, "faulty  gpu", "", 1)]
    lines = [header] + [
        sep.join([stamp.format(T0 + timedelta(hours=h)), name, cat, str(g)]) for h, name, cat, g in rows
    ]
    res = fit_log("\ufeff" + "\r\n".join(lines) + "\r\n", 64, T0, T0 + timedelta(days=2))
    got = {(c.name, c.category, c.count, c.gpus_affected) for c in res.components}
    assert got == {("GPU HBM3 Memory", "GPU", 1, 1), ("Fan", "Cooling", 1, 8), ("Faulty GPU", "GPU", 1, 1)}
    assert res.hours == 48


def test_a_column_named_for_its_role_wins_and_others_are_ignored():
    text = "timestamp,component,type,node\n2025-01-06T00:00Z,NIC,hardware,n1\n2025-01-06T05:00Z,CPU,hardware,n2\n"
    res = fit_log(text.encode(), 8)
    assert sorted(c.name for c in res.components) == ["CPU", "NIC"]
    assert "Columns ignored: type, node." in res.notes
    with pytest.raises(IncidentLogError, match="line 1: columns 'cause' and 'type' could both be the component"):
        fit_log(text.replace("component", "cause"), 8)


def test_time_zones_are_honoured_and_no_zone_reads_as_utc():
    # The same instants written in two zones, east and west of UTC, one per incident in turn, and the
    # window in a third: the same fit as in UTC.
    hours = [1, 3, 7, 12, 20, 33]
    utc = fit_log(_log(hours), 8, T0, T0 + timedelta(hours=40))
    zones = [timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=7))]
    shifted = "timestamp,component\n" + "".join(
        f"{(T0 + timedelta(hours=h)).astimezone(zones[i % 2]).isoformat()},Faulty GPU\n" for i, h in enumerate(hours)
    )
    assert "-07:00" in shifted and "+05:30" in shifted
    other = fit_log(shifted, 8, "2025-01-06T02:00:00+02:00", "2025-01-07T18:00:00+02:00")
    naive = fit_log(_log(hours).replace("Z", ""), 8, "2025-01-06", "2025-01-07T16:00")
    for res in (other, naive):
        assert res.trend.statistic == pytest.approx(utc.trend.statistic, rel=1e-12)
        assert res.weibull.shape == pytest.approx(utc.weibull.shape, rel=1e-9)
        assert res.total.rate_per_gpu_hour == pytest.approx(utc.total.rate_per_gpu_hour, rel=1e-12)
    assert "no time zone" in " ".join(naive.notes) and not any("time zone" in n for n in utc.notes)
    assert naive.window_text("start") == "2025-01-06T00:00:00"


def test_a_window_from_the_incidents_is_said_to_be_short():
    res = fit_log(_log([0, 1, 2, 4, 5, 8, 10]), 8)
    assert (res.start_given, res.end_given) == (False, False)
    assert any("first incident to the last" in n and "too short" in n for n in res.notes)
    assert not any("too short" in n for n in fit_log(_log([1, 2]), 8, T0, T0 + timedelta(hours=3)).notes)


def test_components_keep_llama3_names_and_categories_or_their_own():
    text = "time,cause\n2025-01-06T00:00Z,NIC\n2025-01-06T01:00Z,XID 79\n2025-01-06T02:00Z,nic\n"
    res = fit_log(text, 8)
    got = {c.name: (c.category, c.count, c.llama3_rate is not None) for c in res.components}
    assert got == {"NIC": ("Host", 2, True), "XID 79": ("Unknown", 1, False)}
    assert res.components[0].name == "NIC"  # most incidents first


def test_a_path_and_its_text_give_the_same_fit(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text(sample_log_text(), encoding="utf-8")
    a, b = fit_log(path, 2048, *SAMPLE_WINDOW), fit_log(sample_log_text(), 2048, *SAMPLE_WINDOW)
    assert a.to_json_dict() == {**b.to_json_dict(), "source": "log.csv"}


# -- the scenario and the command ---------------------------------------------------------------------


def test_the_scenario_takes_rates_from_the_log_and_the_rest_from_its_base():
    res = fit_log(sample_log_text(), 2048, *SAMPLE_WINDOW)
    base = load_preset("h100-100k")
    sc = res.scenario(base)
    assert sc.name.startswith("Fitted from incident log (2,048 GPUs, 60 days), other inputs from ")
    assert sc.replace(name=base.name, components=base.components) == base
    assert [(c.name, c.rate_per_gpu_hour) for c in sc.components] == [
        (c.name, c.count / (2048 * 1440.0)) for c in res.components
    ]
    again = fit_log(sample_log_text(), 2048, *SAMPLE_WINDOW).scenario(sc)
    assert again.name.count("Fitted from") == 1 and base.name in again.name


def test_fit_json_report_and_scenario_file(capsys, tmp_path):
    log = tmp_path / "incidents.csv"
    log.write_text(sample_log_text(), encoding="utf-8")
    out = tmp_path / "fitted.json"
    rc, text, err = _run(capsys, str(log), "--gpus", "2,048", "--start", SAMPLE_WINDOW[0], "--end", SAMPLE_WINDOW[1],
                         "-o", str(out), "--json")  # fmt: skip
    assert (rc, err) == (0, "")
    doc = json.loads(text)
    assert set(doc) >= {"window", "gpus", "components", "trend", "weibull"}
    assert set(doc["window"]) >= {"start", "end", "hours"} and doc["gpus"] == 2048
    assert set(doc["components"][0]) >= {
        "name", "category", "count", "exposure_gpu_hours", "rate_per_gpu_hour", "rate_low", "rate_high"
    }  # fmt: skip
    assert set(doc["trend"]) == {"test", "statistic", "p_value", "verdict"}
    assert set(doc["weibull"]) >= {"shape", "shape_low", "shape_high", "scale_hours"}
    saved = load(out)
    assert saved.name.startswith("Fitted from incidents.csv") and saved == load_preset("llama3-405b").replace(
        name=saved.name, components=saved.components
    )
    assert json.loads(json.dumps(doc["scenario"])) == json.loads(out.read_text())


def test_fit_readable_report(capsys):
    path = str(resources.files("planner_gui.core").joinpath("data/sample_incidents.csv"))
    rc, text, err = _run(capsys, path, "--gpus", "2048", "--preset", "h100-100k")
    assert (rc, err) == (0, "")
    assert "75 incidents" in text and "Faulty GPU" in text and "Llama 3" in text
    assert "Trend: rate falling" in text and "Weibull shape" in text and "too short" in text
    assert text.rstrip().endswith(f"every other input from {load_preset('h100-100k').name}")


H = b"time,cause\n"
GPU = b"2025-01-06T00:00Z,GPU\n"
BAD_LOGS = [
    (b"", [], "the log is empty"),
    (H, [], "a header but no incidents"),
    (b"when,what\n2025-01-06,GPU\n", [], "line 1: no component"),
    (b"component,category\nGPU,GPU\n", [], "line 1: no timestamp"),
    (GPU, [], "line 1: no header line"),
    (b"date,time,cause\n2025-01-06,10:00,GPU\n", [], "line 1: columns 'date' and 'time'"),
    (H + GPU + b"2025-01-32T00:00Z,GPU\n", [], "line 3: timestamp '2025-01-32T00:00Z' is not a valid"),
    (H + b"# note\n\nyesterday,GPU\n", [], "line 4: timestamp 'yesterday' is not an ISO 8601"),
    (H + GPU + b"2025-01-07T00:00,GPU\n", [], "line 3: the timestamp on line 2 has a time zone"),
    (H + b"2025-01-06T00:00Z,GPU,8\n", [], "line 2: 3 fields, but the header has 2"),
    (H + b"2025-01-06T00:00Z,\n", [], "line 2: no component"),
    (H + b'2025-01-06T00:00Z,"GPU\n', [], "line 2: a quoted field is never closed"),
    # (a record left open is read once, not again for each of its 200,000 lines)
    (H + b'2025-01-06T00:00Z,"GPU\n' + b"x\n" * 200_000, [], "line 2: a quoted field is never closed (a"),
    (H + b'2025-01-06T00:00Z,"GPU"x\n', [], "line 2: cannot be read as CSV"),
    (H + b'2025-01-06T00:00Z,"GPU\nHBM"\n2025-01-07T00:00Z,x,8\n', [], "line 4: 3 fields, but the header has 2"),
    (H + b"2025-01-06T00:00Z,GP\xff\n", [], "line 2: not UTF-8"),
    (b"time,cause,gpus\n2025-01-06T00:00Z,GPU,9\n", [], "line 2: 9 GPUs affected, more than the cluster's 8 GPUs"),
    (b"time,cause,gpus\n2025-01-06T00:00Z,GPU,1.5\n", [], "line 2: GPUs affected must be"),
    (b"time,cause,category\n2025-01-06T00:00Z,NIC,Host\n2025-01-07T00:00Z,NIC,Network\n", [], "line 3: 'NIC' is in"),
    (H + b"2025-01-06T00:00Z," + b"x" * 101 + b"\n", [], "line 2: the component's name is 101"),
    (H + GPU, [], "one incident and no window"),
    (H + GPU, ["--start", "2025-01-07", "--end", "2025-01-06"], "--end: '2025-01-06' is not after"),
    (H + GPU + b"2025-01-01T00:00Z,GPU\n", ["--start", "2025-01-05"], "line 3: the incident at 2025-01-01T00:00:00Z"),
    (H + GPU + b"2025-01-09T00:00Z,GPU\n", ["--end", "2025-01-08"], "line 3: the incident at 2025-01-09T00:00:00Z"),
    (H + GPU, ["--start", "soon"], "--start: 'soon' is not an ISO 8601"),
    (H + GPU, ["--start", "2025-02-30"], "--start: '2025-02-30' is not a valid date"),
    (H + b"2025-01-06T00:00+24:00,GPU\n", [], "line 2: timestamp '2025-01-06T00:00+24:00' is not a valid"),
    (H + b"".join(b"2025-01-06T00:00Z,c%d\n" % i for i in range(201)), [], "line 202: more than 200"),
]


@pytest.mark.parametrize(("data", "flags", "message"), BAD_LOGS, ids=[m for _, _, m in BAD_LOGS])
def test_bad_logs_give_one_line_and_exit_2(capsys, tmp_path, data, flags, message):
    path = tmp_path / "log.csv"
    path.write_bytes(data)
    rc, out, err = _run(capsys, str(path), "--gpus", "8", *flags)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("planner-gui: error: "), err
    assert message in err, err


def test_a_quoted_field_may_hold_a_line_break():
    """A spreadsheet writes a cell with a line break in it as a quoted field over two lines: one incident, its
    name's whitespace folded, and the lines after it still numbered as they are in the file."""
    text = 'time,cause,category\n2025-01-06T00:00Z,"GPU\nHBM3  Memory","G\nPU"\n2025-01-07T00:00Z,NIC,Host\n'
    res = fit_log(text, 8, "2025-01-05T00:00Z", "2025-01-08T00:00Z", prior=None)
    found = {(c.name, c.category, c.count) for c in res.components}
    assert found == {("GPU HBM3 Memory", "G PU", 1), ("NIC", "Host", 1)}
    with pytest.raises(IncidentLogError, match="line 6: timestamp 'soon'"):  # (the category spans lines 3-4)
        fit_log(text + "soon,NIC,Host\n", 8, prior=None)


def test_huge_files_directories_and_missing_files_are_refused_unread(capsys, tmp_path):
    huge = tmp_path / "huge.csv"
    with open(huge, "wb") as fh:
        fh.truncate(MAX_LOG_BYTES + 1)  # sparse: no time spent writing it
    for path, message in (
        (huge, f"huge.csv: file is {MAX_LOG_BYTES + 1:,} bytes"),
        (tmp_path, "is a directory"),
        (tmp_path / "missing.csv", "cannot read"),
    ):
        rc, out, err = _run(capsys, str(path), "--gpus", "8")
        assert (rc, out, err.count("\n")) == (2, "", 1) and message in err, err
    with pytest.raises(IncidentLogError, match="the log is 10,000,001 bytes"):
        fit_log(b"x" * (MAX_LOG_BYTES + 1), 8)


BAD_FLAGS = [
    ([], "required: --gpus"),
    (["--gpus", "0"], "--gpus: must be"),
    (["--gpus", "8", "--preset", "x"], "--preset:"),
]


@pytest.mark.parametrize(("flags", "message"), BAD_FLAGS)
def test_bad_flags_give_one_line_and_exit_2(capsys, tmp_path, flags, message):
    path = tmp_path / "log.csv"
    path.write_text(_log([1, 2, 3]))
    rc, out, err = _run(capsys, str(path), *flags)
    assert (rc, out, err.count("\n")) == (2, "", 1) and message in err, err


def test_the_core_uses_scipy_special_only():
    # The standalone bundle ships scipy.special and no other scipy subpackage. The fit takes it through
    # core/util/special.py, which imports it (and nothing else of scipy) when a function is first asked for.
    from planner_gui.core.util import special

    scipy: set[str] = set()
    for path in [*Path(incidents.__file__).parent.glob("*.py"), Path(special.__file__)]:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        scipy |= {
            n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("scipy")
        }
        scipy |= {
            a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name.startswith("scipy")
        }
    assert scipy == {"scipy.special"}


def test_generated_logs_are_reproducible_and_follow_their_rates():
    comps = (Component("A", "GPU", 1e-5), Component("B", "Host", 3e-5))
    a = generate_log(comps, 1000, 100, seed=1)
    assert a == generate_log(comps, 1000, 100, seed=1) != generate_log(comps, 1000, 100, seed=2)
    res = fit_log(a, 1000, T0, T0 + timedelta(days=100))
    for c in res.components:  # 96 incidents expected in all, a quarter of them A
        truth = {"A": 1e-5, "B": 3e-5}[c.name]
        assert c.rate_low <= truth <= c.rate_high


# -- the prior a fit combines the log with -----------------------------------------------------------------


def _counts(fit) -> dict[str, int]:
    return {c.name: c.count for c in fit.components}


def test_a_prior_keeps_the_causes_a_log_never_saw_and_weighs_in_by_its_exposure():
    """Each cause's rate is (n + w n0) / (E + w E0), by hand from Table 5's counts; the interval is Jeffreys' on
    that evidence; a cause only the log has is the log's alone; the scenario carries the combined evidence."""
    from planner_gui.core.incidents import DEFAULT_PRIOR_WEIGHT, llama3_prior
    from planner_gui.core.model.scenario import llama3_evidence

    alone = fit_log(sample_log_text(), 2048, *SAMPLE_WINDOW)
    res = fit_log(sample_log_text(), 2048, *SAMPLE_WINDOW, prior=llama3_prior())
    w, exposure = DEFAULT_PRIOR_WEIGHT, 2048 * 1440.0
    seen, by_name = _counts(alone), {c.name: c for c in res.components}
    table = llama3_evidence()
    assert set(table) < set(by_name) and set(seen) <= set(by_name)
    assert len([n for n in table if n not in seen]) == 9  # the log never saw 9 of Llama 3's 18 causes
    for name, (n0, e0) in table.items():
        c, n = by_name[name], seen.get(name, 0)
        assert c.rate_per_gpu_hour == pytest.approx((n + w * n0) / (exposure + w * e0), rel=1e-12)
        assert c.rate_per_gpu_hour > 0 and c.count == n
        assert c.prior_share == pytest.approx(w * e0 / (exposure + w * e0), rel=1e-12)
        assert (c.rate_low, c.rate_high) == rate_interval(n + w * n0, exposure + w * e0)
    storage = by_name["Filesystem Hang"]  # not a Llama 3 cause: the log's alone
    assert storage.prior_share == 0 and storage.rate_per_gpu_hour == storage.count / exposure
    sc = res.scenario(load_preset("h100-100k"))
    assert [(c.name, c.count, c.exposure_gpu_hours) for c in sc.components] == [
        (c.name, *c.evidence) for c in res.components
    ]
    assert all(c.rate_per_gpu_hour > 0 for c in sc.components)
    # A longer log outweighs the prior: the same incidents over ten times the GPU-hours.
    wide = fit_log(sample_log_text(), 20_480, *SAMPLE_WINDOW, prior=llama3_prior())
    assert wide.components[0].prior_share < res.components[0].prior_share / 5
    assert any("the 9 causes the log never saw keep the prior" in n for n in res.notes)


def test_with_the_truth_as_prior_the_combined_rate_is_unbiased_and_steadier_than_the_log_alone():
    """Logs drawn from Llama 3's own rates (2,048 GPUs, 20 days): the prior-combined total rate averages the true
    one within its standard error, and varies less from log to log than the log's alone."""
    from planner_gui.core.incidents import llama3_prior

    truth = math.fsum(c.rate_per_gpu_hour for c in llama3_components())
    prior = llama3_prior()
    combined, alone = [], []
    for seed in range(120):
        text = generate_log(llama3_components(), 2048, 20.0, seed=seed)
        end = (T0 + timedelta(days=20)).isoformat()
        fit = fit_log(text, 2048, T0.isoformat(), end, prior=prior)
        combined.append(math.fsum(c.rate_per_gpu_hour for c in fit.components))
        alone.append(fit_log(text, 2048, T0.isoformat(), end).total.rate_per_gpu_hour)
    combined_a, alone_a = np.array(combined), np.array(alone)
    se = combined_a.std(ddof=1) / math.sqrt(len(combined_a))
    assert abs(combined_a.mean() - truth) < 3 * se
    assert combined_a.std() < 0.8 * alone_a.std()


def test_a_burst_at_each_end_is_no_steady_trend_not_no_trend():
    """Incidents bunched at both ends of the window: their mean time is the middle (the Laplace test finds no
    trend), but their logarithms are not a constant rate's (the power law's shape is far from 1). The verdict says
    the two disagree instead of 'no trend' beside a shape whose interval excludes 1."""
    times = [T0 + timedelta(hours=h) for h in [*np.linspace(1, 12, 20), *np.linspace(948, 959, 20)]]
    text = "timestamp,component\n" + "".join(f"{t.isoformat()},GPU HBM3 Memory\n" for t in times)
    res = fit_log(text, 2048, T0.isoformat(), (T0 + timedelta(hours=960)).isoformat(), prior=None)
    pl = res.power_law
    assert res.trend.p_value > 0.1 and not pl.shape_low <= 1.0 <= pl.shape_high  # the tests disagree
    assert res.trend.verdict.startswith("no steady trend: the Laplace test finds none"), res.trend.verdict
    assert "is not 1" in res.trend.verdict and "constant rate" not in res.trend.verdict


def test_a_log_that_disagrees_with_the_prior_says_so():
    """A cluster failing at ten times Llama 3's rates, fitted with the default prior: the combined rate sits far
    below the log's, outside the log's own interval, and a note says the two disagree, how far the fit is from the
    log, and what to do. Logs drawn from the prior's own rates get that note exactly when the prior lies outside
    the log's 90% interval and the fit outside it too; a prior of negligible weight never gets it."""
    from planner_gui.core.incidents import llama3_prior

    prior = llama3_prior()
    end = (T0 + timedelta(days=20)).isoformat()
    tenfold = [Component(c.name, c.category, 10 * c.rate_per_gpu_hour) for c in llama3_components()]
    text = generate_log(tenfold, 2048, 20.0, seed=5)
    fit = fit_log(text, 2048, T0.isoformat(), end, prior=prior)
    [note] = [n for n in fit.notes if n.startswith("The log and the prior disagree")]
    own = fit.total.count / fit.total.exposure_gpu_hours
    assert f"is {fit.total.rate_per_gpu_hour / own:.0%} of the log's own" in note
    assert "is higher than the prior's" in note and "--prior-weight" in note and "--prior none" in note
    faint = fit_log(text, 2048, T0.isoformat(), end, prior=llama3_prior(1e-9))
    assert not any(n.startswith("The log and the prior disagree") for n in faint.notes)
    truth = math.fsum(c.rate_per_gpu_hour for c in llama3_components())
    noted = 0
    for seed in range(200):
        log_text = generate_log(llama3_components(), 2048, 20.0, seed=seed)
        res = fit_log(log_text, 2048, T0.isoformat(), end, prior=prior)
        low, high = rate_interval(res.total.count, 2048 * 480.0)
        says = any(n.startswith("The log and the prior disagree") for n in res.notes)
        fitted = res.total.rate_per_gpu_hour
        assert says == (not low <= truth <= high and not low <= fitted <= high), seed
        noted += says
    assert noted < 200 * 0.1  # (rarer than the interval's misses: the fit must leave the interval too)


def test_a_cause_the_log_files_under_another_category_than_the_priors_is_noted():
    from planner_gui.core.incidents import llama3_prior

    text = "time,cause,category\n2025-01-06T00:00Z,Faulty GPU,Host\n2025-01-07T00:00Z,NIC,Host\n"
    res = fit_log(text, 2048, "2025-01-05T00:00Z", "2025-01-08T00:00Z", prior=llama3_prior())
    assert {c.name: c.category for c in res.components}["Faulty GPU"] == "Host"
    [note] = [n for n in res.notes if n.startswith("The log puts causes the prior knows in other categories")]
    assert "'Faulty GPU' is Host, GPU in the prior" in note and "NIC" not in note
    alone = fit_log(text.replace("Faulty GPU,Host", "Faulty GPU,GPU"), 2048, "2025-01-05T00:00Z",
                    "2025-01-08T00:00Z", prior=llama3_prior())  # fmt: skip
    assert not any("other categories" in n for n in alone.notes)


def test_a_window_mostly_without_incidents_is_noted():
    """A typo year among a month's incidents (or a --start far before them) spread the rates over years nobody
    watched, silently. More than half the window without an incident is noted; logs of a constant rate get the
    note about as rarely as (n + 1) / 2^n says (0.3% for 12 incidents), the shipped sample never."""
    stamps = [(T0 + timedelta(days=2 * i)).isoformat() for i in range(12)]
    text = "time,cause\n" + "".join(f"{t},GPU\n" for t in stamps)
    typo = text.replace(stamps[-1], "9999-12-31T23:59:59+00:00")
    res = fit_log(typo, 2048, prior=None)
    [note] = [n for n in res.notes if "has no incident" in n]
    assert note.startswith("100% of the window (7,97") and "years" in note and "9999-12-31" in note
    assert not any("has no incident" in n for n in fit_log(text, 2048, prior=None).notes)
    assert not any("has no incident" in n for n in fit_log(sample_log_text(), 2048, *SAMPLE_WINDOW, prior=None).notes)
    rng = np.random.default_rng(7)
    runs, noted = 2000, 0
    for _ in range(runs):
        hours = np.sort(rng.random(12)) * 960.0
        log = "time,cause\n" + "".join(f"{(T0 + timedelta(hours=float(h))).isoformat()},GPU\n" for h in hours)
        fit = fit_log(log, 2048, T0.isoformat(), (T0 + timedelta(hours=960)).isoformat(), prior=None)
        noted += any("has no incident" in n for n in fit.notes)
    expected = runs * 13 / 2**12
    assert abs(noted - expected) < 4 * math.sqrt(expected), (noted, expected)


def test_fit_keeps_every_prior_cause_by_default_and_the_log_alone_with_prior_none(capsys, tmp_path):
    """The command line's contract: the fitted scenario keeps every component of the prior, each with a rate above
    0, unless --prior none; a prior file's components are the prior; bad priors get one line."""
    from planner_gui.core.model.scenario import llama3_evidence

    log = tmp_path / "incidents.csv"
    log.write_text(sample_log_text(), encoding="utf-8")
    out = tmp_path / "fitted.json"
    rc, text, err = _run(capsys, str(log), "--gpus", "2048", "-o", str(out))
    assert (rc, err) == (0, "") and "prior" in text and "Llama 3 Table 5 at weight 0.1" in text
    sc = load(out)
    assert set(llama3_evidence()) <= {c.name for c in sc.components}
    assert all(c.rate_per_gpu_hour > 0 for c in sc.components)
    none = tmp_path / "alone.json"
    rc, text, err = _run(capsys, str(log), "--gpus", "2048", "--prior", "none", "-o", str(none))
    assert (rc, err) == (0, "") and "a prior keeps them (--prior llama3)" in text
    alone = load(none)
    assert len(alone.components) == 10 and len(sc.components) == 19
    assert {c.name for c in alone.components} < {c.name for c in sc.components}
    # A scenario file as the prior: its components' evidence, at the weight given.
    rc, text, err = _run(capsys, str(log), "--gpus", "2048", "--prior", str(none), "--prior-weight", "1", "--json")
    assert (rc, err) == (0, "")
    doc = json.loads(text)
    assert doc["prior"]["name"] == "alone.json" and doc["prior"]["weight"] == 1.0
    first = doc["components"][0]
    assert first["prior_share"] == pytest.approx(0.5) and first["rate_per_gpu_hour"] == pytest.approx(
        first["log_rate_per_gpu_hour"]
    )
    for flags, message in (
        (["--prior-weight", "0"], "--prior-weight: must be above 0"),
        (["--prior-weight", "1.5"], "--prior-weight: must be above 0"),
        (["--prior", str(tmp_path / "missing.json")], "--prior: "),
    ):
        rc, text, err = _run(capsys, str(log), "--gpus", "2048", *flags)
        assert (rc, text, err.count("\n")) == (2, "", 1) and message in err, err


def test_the_total_is_the_sum_of_the_components_the_scenario_gets():
    """'All components' is the sum of the component rates (what the scenario made of the fit has), with the prior
    too: the pooled ratio of every count to every exposure said 0.556 per 1,000 GPU-days beside components adding
    up to 0.559 (docs/examples/incidents.csv, 2,048 GPUs); its interval holds it."""
    log = Path(__file__).resolve().parent.parent / "docs" / "examples" / "incidents.csv"
    from planner_gui.core.incidents.prior import llama3_prior

    for prior in (None, llama3_prior()):
        res = fit_log(log, 2048, prior=prior)
        total = math.fsum(c.rate_per_gpu_hour for c in res.components)
        assert res.total.rate_per_gpu_hour == pytest.approx(total, rel=1e-12)
        assert res.total.rate_low < total < res.total.rate_high
        assert res.total.count == sum(c.count for c in res.components)


# -- logs at the edges of a fit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("jitter_s", [0, 1])
def test_gaps_all_about_equal_say_so_and_give_no_shape(jitter_s):
    """Incidents every 10 hours exactly, or to the second: the Weibull fit of equal gaps has no maximum (it gave
    "shape 1000000.00" for one and "too few different times" for 40 gaps of the other): both say the gaps are all
    about equal, far more regular than at random, and give no shape."""
    from planner_gui.core.incidents.fit import MAX_SHAPE

    hours = [10.0 * i + (jitter_s / 3600.0) * (i % 2) for i in range(1, 42)]
    res = fit_log(_log(hours), gpus=1_000)
    w = res.weibull
    assert w.shape is None and w.shape_low is None, w
    assert "all about equal" in w.verdict and f"above {MAX_SHAPE:g}" in w.verdict, w.verdict
    # A log just irregular enough keeps its shape, finite and above 1.
    rng = np.random.default_rng(3)
    uneven = np.cumsum(10.0 * (1 + 0.05 * rng.standard_normal(41)))
    fitted = fit_log(_log(list(uneven)), gpus=1_000).weibull
    assert fitted.shape is not None and 1 < fitted.shape <= MAX_SHAPE, fitted


def test_a_log_whose_components_and_the_priors_make_too_many_says_how_many_and_what_to_do():
    """199 components in the log and Llama 3's 18 causes it never saw make 217: one line naming both counts and the
    way out (the log alone), not "components: must be a list of 1 to 200 components"."""
    from planner_gui.core.files.scenario_io import MAX_COMPONENTS
    from planner_gui.core.incidents.logs import IncidentLogError
    from planner_gui.core.incidents.prior import llama3_prior

    text = "timestamp,component,category\n" + "".join(
        f"{_stamp(1.0 + i)},own cause {i},kind {i}\n" for i in range(MAX_COMPONENTS - 1)
    )
    with pytest.raises(IncidentLogError) as err:
        fit_log(text, gpus=1_000, prior=llama3_prior())
    unseen = len(llama3_prior().causes)
    assert f"log's {MAX_COMPONENTS - 1} components and the {unseen} causes" in str(err.value), err.value
    assert f"make {MAX_COMPONENTS - 1 + unseen}" in str(err.value) and "prior none" in str(err.value)
    assert len(fit_log(text, gpus=1_000).components) == MAX_COMPONENTS - 1  # the log alone fits
