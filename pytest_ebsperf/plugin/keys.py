"""Names the plugin's modules share: the run object's stash key and the user-property keys a
test's row and measurements travel under (also across pytest-xdist workers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_ebsperf.plugin import EbsperfPlugin  # noqa: F401 (named in a string below)

#: The one run object (:class:`~pytest_ebsperf.plugin.EbsperfPlugin`) in the config's stash.
STATE_KEY = pytest.StashKey["EbsperfPlugin"]()
#: ``item.user_properties`` key of a check's report row (a dict).
ROW_KEY = "ebsperf"
#: ``item.user_properties`` key of one fio run's measurement record (a dict).
MEASUREMENT_KEY = "ebsperf_measurement"
