"""pytest hooks of the burst-credit checks: where their pictures go.

``--emulate-timescale``, ``--ebsperf-plots`` and the emulated bucket's testing aids live in
:mod:`pytest_ebsperf.config.options`; the credit book reads them from the settings when the
session makes it. Pictures are saved through :mod:`pytest_ebsperf.results.plots`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ebsperf.deferred import later
from pytest_ebsperf.plugin.state import STATE_KEY

if TYPE_CHECKING:  # the run's code: loaded when a hook first uses it (deferred.py)
    from pytest_ebsperf.results import plots as results_plots
else:
    results_plots = later("pytest_ebsperf.results.plots")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    # the credit book is made with the session, when a check first needs it; it takes the
    # bucket's testing aids from the settings and asks for the picture directory when it
    # draws its first picture
    state.inputs.plots = lambda: _plots_dir(config)


def _plots_dir(config: pytest.Config) -> Path | None:
    """``--ebsperf-plots`` (default ``ebsperf-results/plots``; None with ``none``): a knee is
    hard to judge from numbers alone, so time-based checks always draw theirs."""

    state = config.stash.get(STATE_KEY, None)
    return results_plots.plot_dir(state.settings if state is not None else None,
                          Path(config.invocation_params.dir))
