"""Rates from data: rate uncertainty (evidence and posteriors) and rates that change over the run (profiles).

Every number is checked against something independent: closed forms (the negative binomial law of the
interruptions, posterior moments, the profile's integral), brute-force posterior draws, simulated node
renewals, and the event-by-event reference simulator in ``tests/reference_rates.py``. Fixed seeds;
tolerances from standard errors (4 of them unless said).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import reference_rates as ref
from scipy.special import chdtrc, gammaln

from planner_gui import cli
from planner_gui.core.analysis.results import simulate
from planner_gui.core.analysis.sweep import expected_goodput_vs_interval, sweep_gpus
from planner_gui.core.files.scenario_io import ScenarioError, dumps, loads, scenario_to_dict
from planner_gui.core.incidents import fit_log, generate_log, profile_from_fit, sample_components
from planner_gui.core.model.scenario import LLAMA3_DAYS, LLAMA3_GPUS, Component, Scenario
from planner_gui.core.sim import engine
from planner_gui.core.sim.engine import simulate_trials
from planner_gui.core.sim.rows import poisson_by_inversion, poisson_quantiles, uniforms
from planner_gui.core.theory import rates
from planner_gui.core.theory.exact import time_fractions
from planner_gui.core.theory.expected import conditional_goodput, rate_nodes, transient_bound, varying_expectation
from planner_gui.core.theory.params import resolve
from planner_gui.core.theory.profiles import (
    burn_in_profile,
    expected_per_day,
    geometric_edges,
    mean_multiplier,
    pieces,
    power_law_profile,
    weibull_renewal_function,
)
from planner_gui.core.theory.rates import RatePosterior, evidence_of

Z = 4.0
LLAMA_EXPOSURE = LLAMA3_GPUS * LLAMA3_DAYS * 24.0
LLAMA_SHAPE = 419 + 18 * 0.5  # the 18 causes' counts + 1/2 each


def within(a: float, b: float, se: float, extra: float = 0.0) -> bool:
    return abs(a - b) <= Z * se + extra


def hours(raw: engine.RawTrials) -> dict[str, np.ndarray]:
    return {
        "useful": raw.useful,
        "checkpoint": raw.checkpoint,
        "lost": raw.lost_work,
        "recovery": raw.recovery,
        "planned_restart": raw.planned_restart,
        "unplanned": raw.unplanned.astype(float),
        "planned": raw.planned.astype(float),
    }


# -- evidence ----------------------------------------------------------------------------------------


def test_llama3_causes_carry_their_table_5_evidence_and_files_stay_as_they_were():
    sc = Scenario()
    faulty = next(c for c in sc.components if c.name == "Faulty GPU")
    assert evidence_of(faulty) == rates.Evidence(148, LLAMA_EXPOSURE)
    assert sum(evidence_of(c).count for c in sc.components) == 419
    assert evidence_of(Component("Filesystem", "Storage", 1e-6)) is None
    own = Component("Faulty GPU", "GPU", 1e-5, 3, 1e5)
    assert evidence_of(own) == rates.Evidence(3, 1e5)  # a component's own evidence comes first
    doc = scenario_to_dict(sc)
    assert doc["format_version"] == 1 and "count" not in doc["components"][0]  # by name: not written


def test_evidence_round_trips_in_version_2_and_is_validated():
    sc = Scenario(components=(Component("A", "GPU", 1e-5, 7, 7e5), Component("B", "Host", 2e-6)))
    doc = json.loads(dumps(sc))
    assert doc["format_version"] == 2 and doc["components"][0]["count"] == 7
    assert "count" not in doc["components"][1]
    assert loads(dumps(sc)) == sc
    # A prior's weighted count need not be whole (a fit with a prior writes one).
    weighted = sc.replace(components=(Component("A", "GPU", 1e-5, 14.8, 7e5), Component("B", "Host", 2e-6)))
    assert json.loads(dumps(weighted))["components"][0]["count"] == 14.8 and loads(dumps(weighted)) == weighted
    for edit, message in (
        (lambda d: d["components"][0].pop("count"), "give both count and exposure_gpu_hours"),
        (lambda d: d["components"][0].update(count=-0.5), "components[0].count: must be a number from 0"),
        (lambda d: d["components"][0].update(exposure_gpu_hours=0), "components[0].exposure_gpu_hours"),
        (lambda d: d.update(format_version=1), "components[0].count: unknown key"),
        (lambda d: d.update(rate_uncertainty="yes"), "rate_uncertainty: must be true or false"),
    ):
        bad = json.loads(dumps(sc))
        edit(bad)
        with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
            loads(json.dumps(bad))


def test_a_fitted_log_passes_its_evidence_into_its_scenario():
    text = generate_log(sample_components(), 2048, 30.0, seed=5)
    fit = fit_log(text, 2048, "2025-01-06", "2025-02-05")
    sc = fit.scenario(Scenario())
    for c, f in zip(sc.components, fit.components):
        assert (c.count, c.exposure_gpu_hours) == (f.count, f.exposure_gpu_hours)
    assert loads(dumps(sc)) == sc


# -- posterior draws and the predictive law ----------------------------------------------------------


def test_the_posterior_is_jeffreys_gamma_scaled_with_the_rate():
    comps = (
        Component("A", "GPU", 3e-5, 30, 1e6),  # the estimate itself
        Component("B", "GPU", 2 * 4e-6, 4, 1e6),  # "x2"
        Component("C", "GPU", 0.0, 0, 5e5),  # none seen: the posterior itself
        Component("D", "GPU", 1e-6, 0, 5e5),  # none seen but a rate given: kept
        Component("E", "GPU", 2e-6),  # no evidence: kept
    )
    post = RatePosterior.of(comps)
    draws = post.draw(seed=3, trials=200_000)
    means = [30.5 / 1e6, 2 * 4.5 / 1e6, 0.5 / 5e5, 1e-6, 2e-6]
    variances = [30.5 / 1e12, 4 * 4.5 / 1e12, 0.5 / 25e10, 0.0, 0.0]
    for i, (m, v) in enumerate(zip(means, variances)):
        assert within(draws[:, i].mean(), m, math.sqrt(v / len(draws)) + 1e-12 * m), i
        assert draws[:, i].var() == pytest.approx(v, rel=0.02, abs=1e-30), i
    assert post.mean() == pytest.approx(sum(means), rel=1e-12)
    assert post.variance() == pytest.approx(sum(variances), rel=1e-12)


def negative_binomial_pmf(k: np.ndarray, shape: float, p: float) -> np.ndarray:
    """P(N = k) for a Poisson count whose mean is Gamma(shape) with success probability p."""
    log = gammaln(k + shape) - gammaln(k + 1) - gammaln(shape) + shape * math.log(p) + k * math.log1p(-p)
    return np.exp(log)


@pytest.fixture(scope="module")
def llama_uncertain():
    sc = Scenario(rate_uncertainty=True, trials=20_000)
    p, _ = resolve(sc)
    return sc, p, simulate_trials(sc, p)


def test_total_interruptions_follow_the_negative_binomial_law(llama_uncertain):
    sc, _, raw = llama_uncertain
    # The total rate per GPU-hour is Gamma(428, 16,384 x 1,296); the window sees gpus x 1,296 GPU-hours.
    prob = LLAMA_EXPOSURE / (LLAMA_EXPOSURE + sc.gpus * sc.hours)
    k = np.arange(0, 2000)
    pmf = negative_binomial_pmf(k, LLAMA_SHAPE, prob)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    # Bins of at least 40 expected trials each, the tails merged: a chi-square test.
    expected = pmf * sc.trials
    edges = [0]
    acc = 0.0
    for i, e in enumerate(expected):
        acc += e
        if acc >= 40 and expected[i + 1 :].sum() >= 40:
            edges.append(i + 1)
            acc = 0.0
    edges.append(len(k))
    observed = np.add.reduceat(np.bincount(raw.unplanned, minlength=len(k))[: len(k)], edges[:-1])
    exp_bins = np.add.reduceat(expected, edges[:-1])
    chi2 = float(((observed - exp_bins) ** 2 / exp_bins).sum())
    assert chdtrc(len(exp_bins) - 1, chi2) > 1e-3, (chi2, len(exp_bins))
    nb_mean, nb_var = LLAMA_SHAPE * (1 - prob) / prob, LLAMA_SHAPE * (1 - prob) / prob**2
    assert within(raw.unplanned.mean(), nb_mean, math.sqrt(nb_var / sc.trials))
    assert raw.unplanned.var() == pytest.approx(nb_var, rel=Z * math.sqrt(2 / sc.trials) * 1.5)
    assert nb_var == pytest.approx(2 * 428)  # equal exposures: as much variance from the rates as from chance


def test_each_trials_rate_is_a_posterior_draw_and_splits_its_interruptions(llama_uncertain):
    sc, p, raw = llama_uncertain
    _, var = engine.varying_rates(sc, p)
    per_gpu = var.trial_lam / sc.gpus
    post_mean, post_sd = LLAMA_SHAPE / LLAMA_EXPOSURE, math.sqrt(LLAMA_SHAPE) / LLAMA_EXPOSURE
    assert within(per_gpu.mean(), post_mean, post_sd / math.sqrt(sc.trials))
    assert per_gpu.std() == pytest.approx(post_sd, rel=0.03)
    # Per component: its posterior mean x the window's GPU-hours (each cause's count + 1/2).
    for c, got in zip(sc.components, raw.by_component.T):
        n = evidence_of(c).count + 0.5
        assert within(got.mean(), n, math.sqrt(2 * n / sc.trials) + 0.02), c.name


def test_the_sub_windows_of_a_trial_share_its_rates(monkeypatch):
    monkeypatch.setattr(engine, "ROW_EVENT_CAP", 64)  # about seven sub-windows per trial
    sc = Scenario(rate_uncertainty=True, trials=4000)
    p, _ = resolve(sc)
    assert engine.layout_for(sc, p).subwindows >= 7
    n = simulate_trials(sc, p).unplanned
    # Rates drawn per sub-window would average out: the variance would be near 428 + 428 / 7, not 856.
    assert n.var() == pytest.approx(2 * LLAMA_SHAPE, rel=Z * math.sqrt(2 / sc.trials))


def test_off_changes_nothing_and_the_rate_draws_shift_no_other_stream():
    base = Scenario(trials=300)
    p, _ = resolve(base)
    before = simulate_trials(base, p)
    explicit = tuple(Component(c.name, c.category, c.rate_per_gpu_hour, 5, 1e6) for c in base.components)
    for same in (base.replace(components=explicit), base.replace(rate_profile=((0.0, 1.0), (9.0, 1.0)))):
        after = simulate_trials(same, p)
        for name in vars(before):
            assert np.array_equal(getattr(before, name), getattr(after, name)), name
    no_evidence = tuple(Component(f"x{i}", c.category, c.rate_per_gpu_hour) for i, c in enumerate(base.components))
    fixed = simulate_trials(base.replace(components=no_evidence), p)
    on = simulate_trials(base.replace(components=no_evidence, rate_uncertainty=True), p)
    assert all(np.array_equal(getattr(fixed, n), getattr(on, n)) for n in vars(fixed))  # nothing uncertain
    uncertain = simulate_trials(base.replace(rate_uncertainty=True), p)
    assert np.array_equal(uncertain.planned, before.planned)  # its own stream: planned counts unmoved
    assert not np.array_equal(uncertain.unplanned, before.unplanned)


# -- exact expectations over the posterior -----------------------------------------------------------


def test_the_exact_expectation_is_the_posterior_mean_of_the_exact_formulas(llama_uncertain):
    sc, p, raw = llama_uncertain
    fractions, unplanned = varying_expectation(sc, p)
    assert unplanned == pytest.approx(LLAMA_SHAPE * sc.gpus * sc.hours / LLAMA_EXPOSURE, rel=1e-12)
    # Brute force: the exact goodput averaged over two million posterior draws of the total rate.
    total = np.random.default_rng(11).gamma(LLAMA_SHAPE, 1.0 / LLAMA_EXPOSURE, 2_000_000) * sc.gpus
    g = time_fractions(total, p.mu, p.tau, p.c, p.r_unplanned, p.r_planned).useful
    assert within(float(fractions.useful), g.mean(), g.std() / math.sqrt(g.size))
    goodput = raw.useful / sc.hours
    assert within(goodput.mean(), float(fractions.useful), goodput.std() / math.sqrt(sc.trials))
    f = sum(float(x) for x in (fractions.useful, fractions.checkpoint, fractions.lost_work))
    assert f + float(fractions.recovery) + float(fractions.planned) == pytest.approx(1.0, abs=1e-12)


def test_several_scales_are_integrated_to_far_better_than_the_sampling_error(monkeypatch):
    sc = Scenario(rate_uncertainty=True).scale_rates(2.0, "GPU").scale_rates(0.3, "Host")
    p, _ = resolve(sc)
    post = RatePosterior.of(sc.components)
    assert len(post.groups()[0]) == 3
    nodes, w = post.nodes()
    assert (w * nodes).sum() == pytest.approx(post.mean(), rel=1e-12)
    assert (w * (nodes - post.mean()) ** 2).sum() == pytest.approx(post.variance(), rel=1e-9)
    good = float(varying_expectation(sc, p)[0].useful)
    x = np.random.default_rng(5).standard_gamma(post.shapes, size=(1_000_000, len(post.shapes)))
    g = time_fractions((x * post.scales).sum(axis=1) * sc.gpus, p.mu, p.tau, p.c, p.r_unplanned, p.r_planned).useful
    assert within(good, g.mean(), g.std() / math.sqrt(g.size))
    monkeypatch.setattr(rates, "_SHARES_SEED", 99)  # other draws of the shares
    rates._nodes.cache_clear()
    assert float(varying_expectation(sc, p)[0].useful) == pytest.approx(good, abs=1e-9)
    rates._nodes.cache_clear()


def test_variance_shares_follow_the_law_of_total_variance(llama_uncertain):
    sc, p, raw = llama_uncertain
    res = simulate(sc.replace(trials=4000))
    u = res.to_json_dict()["uncertainty"]
    assert u["interruptions"]["variance_share_rates"] == pytest.approx(0.5, abs=1e-12)  # equal exposures
    assert u["rate_per_gpu_hour"]["mean"] == pytest.approx(LLAMA_SHAPE / LLAMA_EXPOSURE)
    # Goodput: Var(E[G | rate]) from the posterior + E[Var(G | rate)] from the trials = the trials' variance.
    goodput = raw.useful / sc.hours
    _, var = engine.varying_rates(sc, p)
    g_rate = conditional_goodput(sc, p, var.trial_lam)
    lams, w = rate_nodes(sc, p.lam)
    g = conditional_goodput(sc, p, lams)
    between = float(((g - g @ w) ** 2) @ w)
    within_var = float(np.mean((goodput - g_rate) ** 2))
    assert between + within_var == pytest.approx(goodput.var(), rel=Z * math.sqrt(2 / sc.trials))
    assert g_rate.var() == pytest.approx(between, rel=Z * math.sqrt(2 / sc.trials))
    share = u["goodput"]["variance_share_rates"]
    assert share == pytest.approx(between / (between + within_var), abs=0.05)


# -- profiles: derived, integrated, and simulated ----------------------------------------------------


def test_burn_in_follows_the_renewal_density_of_weibull_nodes():
    assert burn_in_profile(1.0, 30.0, 54.0) == ((0.0, 1.0),)
    t = np.array([0.05, 0.5, 2.0, 10.0, 54.0])
    assert weibull_renewal_function(1.0, 10.0, t) == pytest.approx(t / 10.0, rel=1e-6)  # exponential lives
    # 200,000 node positions, each renewed at failure: the mean count of failures by each t.
    rng = np.random.default_rng(2)
    for shape in (0.5, 0.7):
        life = 10.0
        now, counts = np.zeros(200_000), np.zeros((200_000, len(t)))
        while now.min() <= t.max():
            now = now + life * rng.weibull(shape, now.size)
            counts += now[:, None] <= t
        m = weibull_renewal_function(shape, life, t)
        assert np.all(np.abs(counts.mean(axis=0) - m) <= Z * counts.std(axis=0) / math.sqrt(len(counts)) + 1e-4 * m)
    profile = burn_in_profile(0.7, 30.0, 54.0)
    mean_life = 30.0 * math.gamma(1 + 1 / 0.7)
    pc = pieces(profile, 54.0)
    # The pieces hold the failures the renewal function expects, in the scenario's (burnt-in) units.
    assert pc.integral() / 24.0 == pytest.approx(mean_life * weibull_renewal_function(0.7, 30.0, np.array([54.0]))[0])
    assert np.all(np.diff(pc.multipliers) < 0) and pc.multipliers[0] > 5
    late = burn_in_profile(0.7, 30.0, 3650.0)
    assert late[-1][1] == pytest.approx(1.0, abs=0.02)  # burnt in: the scenario's rates


@pytest.mark.parametrize(("shape", "life", "days"), [(0.9, 0.001, 1.0), (0.3, 0.001, 1.0), (0.5, 0.01, 2.0)])
def test_burn_in_with_lives_far_shorter_than_its_pieces_falls_to_the_steady_state(shape, life, days):
    # Lives of minutes, pieces of hours: each piece holds the failures simulated renewals put in it.
    edges = geometric_edges(days, 8)
    rng = np.random.default_rng(5)
    now, counts = np.zeros(10_000), np.zeros((10_000, len(edges) - 1))
    while now.min() <= days:
        now = now + life * rng.weibull(shape, now.size)
        piece = np.searchsorted(edges, now, side="right") - 1
        inside = piece < len(edges) - 1
        np.add.at(counts, (np.nonzero(inside)[0], piece[inside]), 1.0)
    mean_life = life * math.gamma(1 + 1 / shape)
    pc = pieces(burn_in_profile(shape, life, days, count=8), days)
    expected = pc.multipliers * np.diff(edges) / mean_life
    se = counts.std(axis=0) / math.sqrt(len(counts))
    assert np.all(np.abs(counts.mean(axis=0) - expected) <= Z * se)


@pytest.mark.parametrize(("shape", "life"), [(0.9, 0.001), (0.5, 0.001), (0.5, 0.01), (0.3, 0.001), (0.7, 0.1)])
def test_burn_in_over_many_lives_averages_to_the_renewal_theorems_limit(shape, life):
    # M(t) -> t / mean + E[X^2] / (2 mean^2) - 1: the window's mean multiplier is 1 + mean c / days.
    days = 54.0
    mean_life = life * math.gamma(1 + 1 / shape)
    c = math.gamma(1 + 2 / shape) / (2 * math.gamma(1 + 1 / shape) ** 2) - 1
    profile = burn_in_profile(shape, life, days)
    assert mean_multiplier(profile, days) == pytest.approx(1 + mean_life * c / days, abs=1e-3)
    assert profile[-1][1] == pytest.approx(1.0, abs=1e-3)  # weeks of lives of minutes: burnt in


def test_a_power_law_profile_averages_to_the_logs_rate():
    shape, log_hours = 0.7, 60 * 24.0
    profile = power_law_profile(shape, log_hours, 60.0)
    pc = pieces(profile, 60.0)
    assert pc.integral() == pytest.approx(log_hours, rel=1e-12)  # the fit's rate is the log's average
    later = pieces(power_law_profile(shape, log_hours, 30.0, start_day=60.0), 30.0)
    assert later.integral() == pytest.approx(((90 / 60) ** shape - 1) * log_hours, rel=1e-12)
    log = generate_log(sample_components(), 2048, 60.0, shape=0.7, seed=1)
    fit = fit_log(log, 2048, "2025-01-06", "2025-03-07")
    assert profile_from_fit(fit, 30.0, start_day=60.0) == power_law_profile(fit.power_law.shape, 60 * 24.0, 30.0, 60.0)
    few = fit_log("time,component\n2025-01-06T01:00,NIC\n2025-01-06T05:00,NIC\n", 8, "2025-01-06", "2025-01-07")
    with pytest.raises(ValueError, match="no power law"):
        profile_from_fit(few, 30.0)


def test_expected_interruptions_per_day_add_up_to_the_run():
    profile = ((0.0, 3.0), (2.5, 1.0), (10.0, 0.5))
    sc = Scenario(days=12.0, rate_profile=profile)
    per_day = expected_per_day(sc)
    lam = sc.failure_rate_per_hour * 24.0
    assert len(per_day) == 12
    assert per_day[:2] == pytest.approx([3 * lam, 3 * lam])
    assert per_day[2] == pytest.approx(0.5 * 3 * lam + 0.5 * lam)
    assert per_day[11] == pytest.approx(0.5 * lam)
    p, _ = resolve(sc)
    assert per_day.sum() == pytest.approx(varying_expectation(sc, p)[1], rel=1e-12)
    assert len(expected_per_day(sc.replace(days=2.5))) == 3  # the last day partial


#: A small model: about 30 interruptions and 60 checkpoint cycles per two-day trial.
TOY = Scenario(
    gpus=64,
    days=2.0,
    components=(
        Component("A", "GPU", 2e-3, 40, 20_000.0),
        Component("B", "Host", 1e-3, 8, 8_000.0),
        Component("C", "Net", 5e-4),
    ),
    planned_per_day=3.0,
    checkpoint_interval_min=40.0,
    checkpoint_write_s=300.0,
    detect_min=10.0,
    restart_min=8.0,
)


def reference_model(sc: Scenario) -> ref.Model:
    p, _ = resolve(sc)
    ev = [evidence_of(c) for c in sc.components]
    return ref.Model(
        gpus=sc.gpus,
        rates=tuple(c.rate_per_gpu_hour for c in sc.components),
        evidence=tuple(None if e is None else (e.count, e.exposure_gpu_hours) for e in ev),
        uncertain=sc.rate_uncertainty,
        profile=tuple((d * 24.0, m) for d, m in (sc.rate_profile or ((0.0, 1.0),))),
        mu=p.mu,
        hours=p.hours,
        tau=p.tau,
        c=p.c,
        r_unplanned=p.r_unplanned,
        r_planned=p.r_planned,
    )


def test_the_reference_itself_agrees_with_the_closed_form_for_constant_rates():
    p, _ = resolve(TOY)
    got = ref.simulate(reference_model(TOY), 3000, seed=1)
    f = time_fractions(p.lam, p.mu, p.tau, p.c, p.r_unplanned, p.r_planned)
    want = (f.useful, f.checkpoint, f.lost_work, f.recovery, f.planned)
    for name, fraction in zip(("useful", "checkpoint", "lost", "recovery", "planned_restart"), want):
        x = got[name]
        assert within(x.mean(), float(fraction) * p.hours, x.std() / math.sqrt(x.size)), name
    for name, rate in (("unplanned", p.lam), ("planned", p.mu)):
        assert within(got[name].mean(), rate * p.hours, math.sqrt(rate * p.hours / 3000)), name


def assert_agrees_with_the_reference(sc: Scenario, ref_trials: int = 3000) -> None:
    p, _ = resolve(sc)
    got = hours(simulate_trials(sc.replace(trials=20_000), p))
    want = ref.simulate(reference_model(sc), ref_trials, seed=17)
    for name, mc in got.items():
        se = math.sqrt(mc.var() / mc.size + want[name].var() / ref_trials)
        assert within(mc.mean(), want[name].mean(), se), (name, mc.mean(), want[name].mean(), se)
    for name in ("useful", "unplanned", "lost"):  # the spread too: the percentiles the report shows
        ratio = got[name].var() / want[name].var()
        assert abs(math.log(ratio)) <= Z * math.sqrt(2 / ref_trials + 2 / 20_000), (name, ratio)
    assert sum(got[k].mean() for k in ("useful", "checkpoint", "lost", "recovery", "planned_restart")) == pytest.approx(
        p.hours
    )


PIECES = ((0.0, 3.0), (0.4, 1.0), (1.1, 0.25), (1.5, 2.0))


@pytest.mark.parametrize(
    "sc",
    [
        pytest.param(TOY.replace(rate_profile=PIECES), id="pieces"),
        pytest.param(TOY.replace(rate_profile=burn_in_profile(0.5, 5.0, 2.0, count=8)), id="burn-in"),
        pytest.param(TOY.replace(rate_profile=PIECES, rate_uncertainty=True), id="pieces-uncertain"),
        pytest.param(TOY.replace(rate_uncertainty=True), id="uncertain"),
        # A short, stormy first piece, then calm: the steady state before the window is the storm's.
        pytest.param(TOY.replace(rate_profile=((0.0, 50.0), (0.01, 0.0)), planned_per_day=0.5), id="sharp-start"),
    ],
)
def test_the_engine_agrees_with_the_event_by_event_reference(sc):
    assert_agrees_with_the_reference(sc)


def test_pieces_cut_into_many_rows_join_as_one(monkeypatch):
    monkeypatch.setattr(engine, "ROW_EVENT_CAP", 2)  # every piece cut into several rows
    sc = TOY.replace(rate_profile=PIECES)
    p, _ = resolve(sc)
    assert engine.layout_for(sc, p).subwindows >= 3 * len(PIECES)
    assert_agrees_with_the_reference(sc, ref_trials=2000)


def test_uncertainty_splits_a_trials_interruptions_by_its_own_rates():
    sc = TOY.replace(rate_uncertainty=True, trials=20_000)
    p, _ = resolve(sc)
    raw = simulate_trials(sc, p)
    want = ref.simulate(reference_model(sc), 3000, seed=4)
    for i in range(3):
        mc, r = raw.by_component[:, i], want[f"component{i}"]
        assert within(mc.mean(), r.mean(), math.sqrt(mc.var() / mc.size + r.var() / r.size)), i
    # Exact: each component's posterior mean x GPU-hours.
    expect = [2e-3 * 40.5 / 40, 1e-3 * 8.5 / 8, 5e-4]
    for i, e in enumerate(expect):
        n = raw.by_component[:, i]
        assert within(n.mean(), e * sc.gpus * sc.hours, n.std() / math.sqrt(n.size)), i


@pytest.mark.parametrize(
    "profile", [pytest.param(burn_in_profile(0.7, 30.0, 54.0), id="burn-in"), pytest.param(None, id="pieces")]
)
def test_the_piecewise_steady_state_is_within_its_bound_of_the_monte_carlo(profile):
    sc = Scenario(trials=20_000, rate_profile=profile or ((0.0, 3.0), (5.0, 0.5), (20.0, 1.5), (40.0, 1.0)))
    p, _ = resolve(sc)
    raw = simulate_trials(sc, p)
    fractions, unplanned = varying_expectation(sc, p)
    n = raw.unplanned
    assert within(n.mean(), unplanned, n.std() / math.sqrt(n.size))  # interruptions: exact
    goodput = raw.useful / sc.hours
    bound = transient_bound(sc, p)
    assert 0 < bound < 0.01
    assert within(goodput.mean(), float(fractions.useful), goodput.std() / math.sqrt(n.size), extra=bound)


# -- the engine's pieces -----------------------------------------------------------------------------


def test_poisson_quantiles_are_the_tables_quantiles_for_any_means():
    rng = np.random.default_rng(8)
    u = uniforms(rng, (5000,))
    u[:4] = [1e-15, 1 - 1e-15, 1e-15, 1 - 1e-15]
    many = np.exp(rng.uniform(math.log(1e-9), math.log(1e7), u.size))
    many[:2], many[2:4] = 1e-9, 1e7
    few = rng.choice([0.0, 0.3, 40.0, 1e5], u.size)
    for means in (many, few):
        got = poisson_quantiles(u, means)
        want = np.array([poisson_by_inversion(u[i : i + 1], float(m))[0] for i, m in enumerate(means)])
        assert np.array_equal(got, want)


def test_a_one_piece_profile_is_a_scaled_rate_and_a_flat_one_is_none():
    sc = Scenario(trials=200)
    p, _ = resolve(sc)
    doubled = simulate_trials(sc.replace(rate_profile=((0.0, 2.0),)), p)
    scaled = simulate_trials(sc, dataclasses.replace(p, lam=2 * p.lam))
    assert all(np.array_equal(getattr(doubled, n), getattr(scaled, n)) for n in vars(doubled))


def test_sweeps_and_the_exact_curve_follow_the_profile_and_the_posterior():
    sc = Scenario(trials=50, rate_uncertainty=True, rate_profile=((0.0, 2.0), (10.0, 1.0)))
    res = sweep_gpus(sc, [16_384, 100_000])
    for n, got_n, got_g in zip(res.x, res.interruptions_expected, res.goodput_expected):
        point = sc.replace(gpus=int(n))
        p, _ = resolve(point)
        fractions, unplanned = varying_expectation(point, p)
        assert got_n == pytest.approx(unplanned) and got_g == pytest.approx(float(fractions.useful))
    p, interval = resolve(sc)
    curve = expected_goodput_vs_interval(sc, np.array([interval]))
    assert curve[0] == pytest.approx(float(varying_expectation(sc, p)[0].useful), rel=1e-12)


def test_profiles_are_validated_and_refuse_runaway_sizes():
    doc = scenario_to_dict(Scenario(rate_profile=((0.0, 2.0), (3.0, 1.0))))
    assert doc["format_version"] == 2 and doc["rate_profile"] == [[0.0, 2.0], [3.0, 1.0]]
    for profile, message in (
        ([[1, 2]], r"rate_profile\[0\]: the profile must start at day 0"),
        ([[0, 2], [0, 1]], r"rate_profile\[1\]: days must increase"),
        ([[0, -1]], r"rate_profile\[0\].multiplier: must be a number from 0"),
        ([], "rate_profile: must be a list of 1 to 1,000"),
        ([[0, 1]] * 1 + [[i, 1] for i in range(1, 1001)], "rate_profile: must be a list of 1 to 1,000"),
    ):
        bad = dict(doc, rate_profile=profile)
        with pytest.raises(ScenarioError, match=message):
            loads(json.dumps(bad))
    many = [[i * 0.05, 1.0 + i % 2] for i in range(1000)]
    with pytest.raises(ScenarioError, match="pieces of the rate profile"):
        loads(json.dumps(dict(doc, rate_profile=many, trials=100_000)))


def test_the_json_report_keeps_its_keys_and_widens_with_uncertainty(capsys):
    def run(*flags: str) -> dict:
        assert cli.main(["run", "--json", "--trials", "2000", *flags]) == 0
        return json.loads(capsys.readouterr().out)

    off, on = run(), run("--rate-uncertainty")
    assert set(off) < set(on) and set(on) - set(off) == {"uncertainty"}
    for key in off:
        if isinstance(off[key], dict):
            assert set(off[key]) <= set(on[key]), key
    # Var 428 x 2 (negative binomial) against 419 (Poisson): the range widens by about sqrt(2).
    ratio = (on["interruptions"]["p95"] - on["interruptions"]["p05"]) / (
        off["interruptions"]["p95"] - off["interruptions"]["p05"]
    )
    assert ratio == pytest.approx(math.sqrt(2 * 428 / 419), rel=0.1)
    assert on["interruptions_expected"] == pytest.approx(428.0)
    assert on["scenario"]["rate_uncertainty"] is True
    profile = run("--burn-in", "0.7,30")
    assert set(profile) - set(off) == {"rate_profile"}
