"""pytest hooks of the burst-credit checks: testing-aid options, plots directory, progress line.

``--emulate-timescale`` and ``--ebsperf-plots`` live in :mod:`pytest_ebsperf.settings` (with
their environment variables; pictures are saved through :mod:`pytest_ebsperf.plots`). The two
testing aids that only shape an *emulated* bucket are read here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ebsperf.errors import EbsperfError

if TYPE_CHECKING:
    from pytest_ebsperf.credits.progress import ProgressWriter


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ebsperf")
    group.addoption(
        "--emulate-bucket-factor", dest="ebsperf_emulate_bucket_factor", metavar="FACTOR",
        type=float, default=None,
        help="testing aid: give the emulated burst bucket this share of the credits the model "
             "says it holds (0.7: a bucket 30 %% smaller than claimed, which the burst-"
             "duration check must catch). Default: 1.")
    group.addoption(
        "--emulate-burst-balance", dest="ebsperf_emulate_burst_balance", metavar="PERCENT",
        type=float, default=None,
        help="testing aid: start the emulated bucket at this balance while the model goes by "
             "--burst-balance (or a full bucket): 0 shows an empty bucket the model did not "
             "expect. Default: --burst-balance, else 100.")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from pytest_ebsperf.plugin.keys import STATE_KEY

    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    bucket_factor = config.getoption("ebsperf_emulate_bucket_factor")
    start_pct = config.getoption("ebsperf_emulate_burst_balance")
    try:
        check_emulation_aids(bucket_factor, start_pct, emulate=state.settings.emulate)
    except EbsperfError as exc:
        raise pytest.UsageError(str(exc)) from None
    # the credit book is made with the session, when a check first needs it
    state.on_session(lambda session: session.credits.configure(
        bucket_factor=bucket_factor, start_pct=start_pct, plots=lambda: _plots_dir(config),
        progress=_progress_writer(config)))


def check_emulation_aids(bucket_factor: float | None, start_pct: float | None, *,
                         emulate: bool) -> None:
    """The testing aids' values, checked before anything runs (ConfigError with a sentence)."""
    import math

    from pytest_ebsperf.errors import ConfigError

    if (bucket_factor is not None or start_pct is not None) and not emulate:
        raise ConfigError("--emulate-bucket-factor and --emulate-burst-balance only apply "
                          "with --emulate: they change the emulated bucket, not a volume.")
    if bucket_factor is not None and (not math.isfinite(bucket_factor) or bucket_factor <= 0):
        raise ConfigError(f"--emulate-bucket-factor must be a positive number, got "
                          f"{bucket_factor:g} (0.7 gives a bucket 30 % smaller than the "
                          "model's).")
    if start_pct is not None and not 0 <= start_pct <= 100:
        raise ConfigError(f"--emulate-burst-balance is a percentage (0-100), got "
                          f"{start_pct:g}.")


def _plots_dir(config: pytest.Config) -> Path | None:
    """``--ebsperf-plots`` (default ``ebsperf-results/plots``; None with ``none``): a knee is
    hard to judge from numbers alone, so time-based checks always draw theirs."""
    from pytest_ebsperf import plots
    from pytest_ebsperf.plugin.keys import STATE_KEY

    state = config.stash.get(STATE_KEY, None)
    return plots.plot_dir(state.settings if state is not None else None,
                          Path(config.invocation_params.dir))


def _progress_writer(config: pytest.Config) -> ProgressWriter | None:
    from pytest_ebsperf.plugin.terminal import progress_writer

    return progress_writer(config)
