"""What the plugin's modules share about one test: the user-property keys its row and
measurements travel under (also across pytest-xdist workers), and what the hooks keep of it
between them (:class:`ItemState`, the item's one stash entry). The run's one stash entry is
:data:`pytest_ebsperf.plugin.state.STATE_KEY`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_ebsperf.verdicts.outcome import Verdict

#: ``item.user_properties`` key of a check's report row (a dict).
ROW_KEY = "ebsperf"
#: ``item.user_properties`` key of one fio run's measurement record (a dict).
MEASUREMENT_KEY = "ebsperf_measurement"
#: ``item.user_properties`` key of a check's entry in a dry run (``--ebsperf-plan``).
PLAN_KEY = "ebsperf_plan"


def marker_kwargs(item: pytest.Item) -> dict[str, Any]:
    """The test's ``ebsperf`` marker keywords, the closest marker winning."""
    found: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers("ebsperf"))):
        found.update(marker.kwargs)
    return found


@dataclass
class ItemState:
    """What the plugin's hooks keep of one test between them."""

    #: The test's request, for tests that use ``ebsperf`` (their checks are compared,
    #: drawn and recorded after the body ran).
    request: pytest.FixtureRequest | None = None
    #: Pictures drawn of the test's checks (attached to the HTML report).
    pictures: list[Path] = field(default_factory=list)
    #: Verdicts of the test, in the order they were decided.
    verdicts: list[Verdict] = field(default_factory=list)
    #: The outcomes --ebsperf-strict (or the test's marker) makes fail this test.
    strict: frozenset[str] = frozenset()
    #: The outcome the test's last verdict raised (a skip for INCONCLUSIVE), else "".
    raised: str = ""


ITEM_KEY = pytest.StashKey[ItemState]()


def item_state(item: pytest.Item) -> ItemState:
    """The test's :class:`ItemState` (made at first use)."""
    return item.stash.setdefault(ITEM_KEY, ItemState())
