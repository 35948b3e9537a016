"""Names the plugin's modules share: stash keys and the user-property keys a test's row and
measurements travel under (also across pytest-xdist workers); the run object's own key is
:data:`pytest_ebsperf.plugin.state.STATE_KEY`."""

from __future__ import annotations

from typing import Any

import pytest

#: ``item.user_properties`` key of a check's report row (a dict).
ROW_KEY = "ebsperf"
#: ``item.user_properties`` key of one fio run's measurement record (a dict).
MEASUREMENT_KEY = "ebsperf_measurement"
#: ``item.user_properties`` key of a check's entry in a dry run (``--ebsperf-plan``).
PLAN_KEY = "ebsperf_plan"
#: The fleet of a run over testinfra's ``--hosts`` (a :class:`pytest_ebsperf.plugin.hosts.
#: FleetRun`; typed loosely so that this module imports no feature: ``fleet.fleet_run``).
FLEET_KEY = pytest.StashKey[object]()


def marker_kwargs(item: pytest.Item) -> dict[str, Any]:
    """The test's ``ebsperf`` marker keywords, the closest marker winning."""
    found: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers("ebsperf"))):
        found.update(marker.kwargs)
    return found
