"""pytest hooks of the burst-credit checks: the order they run in and where their pictures go.

A bucket emptied takes about nine times as long to earn back as it took to spend (a 100 GiB
gp2: 33 minutes at burst, 5 hours to refill). So the checks of a suite marked
``@pytest.mark.ebsperf(drains=True)`` (the knee, the baseline after it, the refill) run after
every other check of their volume type, which need the credits; and in an emulated run on
pytest-xdist workers (``-n``) each bursting type's checks are one ``xdist_group``
(``--dist load`` becomes ``loadgroup``), so one emulated bucket serves them in that order
instead of one per worker, each emptied by a drain before another check needs it.

``--emulate-timescale``, ``--ebsperf-plots`` and the emulated bucket's testing aids live in
:mod:`pytest_ebsperf.config.options`; the credit book reads them from the settings when the
session makes it. Pictures are saved through :mod:`pytest_ebsperf.results.plots`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ebsperf.plugin.groups import add_group, grouping, use_groups
from pytest_ebsperf.plugin.keys import marker_kwargs
from pytest_ebsperf.plugin.run_code import results_plots, volume_types
from pytest_ebsperf.plugin.state import STATE_KEY

#: The ``ebsperf`` marker keyword of a suite whose checks run the bucket dry.
DRAINS = "drains"


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    # the credit book is made with the session, when a check first needs it; it takes the
    # bucket's testing aids from the settings and asks for the picture directory when it
    # draws its first picture
    state.inputs.plots = lambda: _plots_dir(config)
    if state.settings.emulate:
        use_groups(config)  # each bursting type's checks on one worker


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The checks that run a bucket dry after the others (a stable sort: every other order
    is kept); each bursting type's checks one xdist group in an emulated run."""
    items[:] = sorted(items, key=lambda item: bool(marker_kwargs(item).get(DRAINS)))
    state = config.stash.get(STATE_KEY, None)
    if state is None or not state.settings.emulate or not grouping(config):
        return
    for item in items:
        name = marker_kwargs(item).get("volume_type")
        kind = volume_types.known(name) if isinstance(name, str) else None
        if kind is not None and kind.bursts:
            add_group(item, f"ebsperf-{name}")


def _plots_dir(config: pytest.Config) -> Path | None:
    """``--ebsperf-plots`` (default ``ebsperf-results/plots``; None with ``none``): a knee is
    hard to judge from numbers alone, so time-based checks always draw theirs."""

    state = config.stash.get(STATE_KEY, None)
    return results_plots.plot_dir(state.settings if state is not None else None,
                          Path(config.invocation_params.dir))
