"""The order checks run in and the worker they share: a bursting type's checks that run its
bucket dry come after its other checks, and in an emulated run on pytest-xdist workers each
bursting type's checks share one worker (one emulated bucket), in that order."""

from __future__ import annotations

import json

import pytest

SUITE = """
import json, os, pytest

def _log(request):
    with open(os.environ["ORDER_LOG"], "a") as out:
        out.write(json.dumps([request.node.nodeid,
                              os.environ.get("PYTEST_XDIST_WORKER", "main")]) + "\\n")

@pytest.fixture(autouse=True)
def logged(request):
    _log(request)
"""

GP2_CREDITS = """
import pytest
pytestmark = pytest.mark.ebsperf(volume_type="gp2", drains=True)

def test_knee(): pass
def test_after_knee(): pass
"""

GP2 = """
import pytest
pytestmark = pytest.mark.ebsperf(volume_type="gp2")

def test_burst_read(): pass
def test_burst_mix(): pass
def test_burst_throughput(): pass
"""

IO1 = """
import pytest
pytestmark = pytest.mark.ebsperf(volume_type="io1")

def test_one(): pass
def test_two(): pass
def test_three(): pass
"""


def _ran(pytester: pytest.Pytester, *args: str) -> list[tuple[str, str]]:
    pytester.makeconftest(SUITE)
    # "a_" sorts the drains first in collection, so only the plugin's order can put them last
    pytester.makepyfile(test_a_gp2_credits=GP2_CREDITS, test_b_gp2=GP2, test_c_io1=IO1)
    log = pytester.path / "order.log"
    pytester._monkeypatch.setenv("ORDER_LOG", str(log))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=8)
    return [tuple(json.loads(line)) for line in log.read_text().splitlines()]


def test_the_checks_that_drain_a_bucket_run_after_the_others(pytester: pytest.Pytester) -> None:
    ran = [nodeid.split("::")[1] for nodeid, _ in _ran(pytester)]
    assert ran.index("test_knee") > ran.index("test_burst_throughput")
    assert ran[-2:] == ["test_knee", "test_after_knee"]  # their own order kept
    assert ran[:3] == ["test_burst_read", "test_burst_mix", "test_burst_throughput"]


def test_an_emulated_bursting_type_shares_one_worker_in_that_order(
        pytester: pytest.Pytester) -> None:
    ran = _ran(pytester, "--emulate", "-n", "2")
    gp2 = [(nodeid, worker) for nodeid, worker in ran if "gp2" in nodeid]
    assert len({worker for _, worker in gp2}) == 1, gp2  # one worker, one emulated bucket
    assert all(nodeid.endswith("@ebsperf-gp2") for nodeid, _ in gp2), gp2
    names = [nodeid.split("::")[1].split("@")[0] for nodeid, _ in gp2]
    assert names == ["test_burst_read", "test_burst_mix", "test_burst_throughput",
                     "test_knee", "test_after_knee"]
    io1 = [nodeid for nodeid, _ in ran if "io1" in nodeid]
    assert len(io1) == 3 and not any("@" in nodeid for nodeid in io1)  # scheduled freely


def test_without_emulation_workers_are_not_grouped(pytester: pytest.Pytester) -> None:
    ran = _ran(pytester, "-n", "2")
    assert not any("@" in nodeid for nodeid, _ in ran)
