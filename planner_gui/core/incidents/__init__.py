"""Failure rates from an incident log, with their uncertainty, a test for a trend and a Weibull shape.

An incident log is a CSV file with one unplanned interruption per line: when it happened (ISO 8601, with
or without a time zone), which component caused it, and optionally its category and the GPUs it took out.
:func:`fit_log` reads one and fits, for a cluster of ``gpus`` GPUs watched over a window of ``hours``:

- each component's rate per GPU-hour, ``count / (gpus x hours)``, with a 90 % interval from the Gamma
  posterior under the Jeffreys prior (shape ``count + 1/2``, rate ``gpus x hours``); combined with a prior
  (:mod:`.prior`: by default on the command line and in the window, Llama 3's rates at a tenth of their
  evidence), the prior's weighted count and exposure are added to the log's, so a cause the log never saw
  keeps a rate above 0;
- a test for a trend in the rate over the window (Laplace's), beside MIL-HDBK-189's test of a power-law
  process, whose shape (``< 1``: a falling rate, burn-in) has an exact 90 % interval;
- a Weibull distribution of the times between incidents, by maximum likelihood, with a 90 % profile
  likelihood interval for its shape (``< 1``: incidents come in bursts).

The two shapes answer different questions. A power-law process with shape 0.7 has a falling rate, but
the times between its incidents fit a Weibull shape near 0.95, not 0.7: the gaps of a trend are a
mixture of exponentials, only a little more spread out than one exponential. And a Weibull renewal
process of shape 0.7 has bursts but no lasting trend. So each is tested against the process it
estimates (``tests/test_incidents.py``).

Only :mod:`scipy.special` is used: the standalone bundle ships no other scipy subpackage.
"""

from __future__ import annotations

from .fit import ComponentFit, FitResult, fit_log, profile_from_fit
from .logs import LEVEL, MAX_LOG_BYTES, IncidentLogError, parse_time
from .prior import DEFAULT_PRIOR, DEFAULT_PRIOR_WEIGHT, PRIORS, Prior, PriorCause, llama3_prior, load_prior
from .stats import PowerLawFit, TrendTest, WeibullFit, fit_weibull, laplace_test, mil_hdbk_189_test, rate_interval
from .synthetic import generate_log, sample_components, sample_log_text

__all__ = [
    "DEFAULT_PRIOR",
    "DEFAULT_PRIOR_WEIGHT",
    "LEVEL",
    "MAX_LOG_BYTES",
    "PRIORS",
    "ComponentFit",
    "FitResult",
    "IncidentLogError",
    "PowerLawFit",
    "Prior",
    "PriorCause",
    "TrendTest",
    "WeibullFit",
    "fit_log",
    "fit_weibull",
    "generate_log",
    "laplace_test",
    "llama3_prior",
    "load_prior",
    "mil_hdbk_189_test",
    "parse_time",
    "profile_from_fit",
    "rate_interval",
    "sample_components",
    "sample_log_text",
]
