"""Provisioned matrix runs in the plugin: cost first, one volume at a time, nothing left over.

The volumes are created in the moto server; FakeNvmeDriver (test_aws_plugin_support) makes
each attached volume appear as an NVMe block device backed by a loop device.
"""

# Fixtures are imported from the support modules, so using them as arguments redefines the name.

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

# Imported here, before any pytester snapshot of sys.modules: pytester drops modules imported
# during a test, and the moto server thread would keep using the dropped objects.
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends
from support.aws import AZ, ec2_client
from support.aws_plugin import FakeNvmeDriver, Inner
from support.common import needs_fio, needs_root

from pytest_ebsperf.aws.lifecycle import TAG_RUN_ID

pytestmark = needs_fio
FAST = ("--ebsperf-runtime=1", "--ebsperf-ramp=0")

MATRIX_SUITE = """
import os
import pytest

@pytest.mark.ebsperf(volume_type="gp3")
def test_gp3_volume_is_attached_as_a_block_device(ebsperf, ebsperf_provisioned):
    volume, device = ebsperf_provisioned
    assert ebsperf.volume.volume_id == volume.volume_id
    assert ebsperf.target.path == device
    with open(os.environ["EBSPERF_TEST_SEEN"], "a") as seen:
        seen.write(f"{volume.volume_id} {device} {ebsperf.volume.type}\\n")

@pytest.mark.ebsperf(volume_type="gp3")
def test_gp3_claim_that_fails(ebsperf):
    assert ebsperf.volume.type == "nothing", "a failing test must not leave its volume behind"

@pytest.mark.ebsperf(volume_type="io1")
def test_io1_volume_has_its_provisioned_iops(ebsperf):
    assert (ebsperf.volume.iops, ebsperf.volume.nitro) == (4000, True)

def test_any_type_reads_the_volume(ebsperf):
    ebsperf.record_info("S0-06", "read", ebsperf.workload("randread", "16k"))
"""


def ebsperf_volumes() -> list[dict[str, Any]]:
    volumes = ec2_client().describe_volumes()["Volumes"]
    return [v for v in volumes if any(t["Key"] == TAG_RUN_ID for t in v.get("Tags", []))]


def leftover(age: timedelta, run_id: str = "ebsperf-20240101T000000Z-abcdef") -> str:
    """A volume tagged by an earlier run, created ``age`` ago (moto runs in this process)."""
    volume_id = str(ec2_client().create_volume(
        AvailabilityZone=AZ, Size=1, TagSpecifications=[
            {"ResourceType": "volume", "Tags": [{"Key": TAG_RUN_ID, "Value": run_id}]}],
    )["VolumeId"])
    stored = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].volumes[volume_id]
    stored.create_time = datetime.now(timezone.utc) - age
    return volume_id


@needs_root
def test_a_matrix_run_sweeps_leftovers_then_runs_each_volume_and_deletes_it_after_its_tests(
    inner: Inner, nvme_driver: FakeNvmeDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashed_run = leftover(timedelta(hours=3))
    seen_file = inner.pytester.path / "seen.txt"
    monkeypatch.setenv("EBSPERF_TEST_SEEN", str(seen_file))
    inner.pytester.makepyfile(test_matrix=MATRIX_SUITE)
    result = inner.run("--ebsperf-provision=gp3:100,io1:200:4000", "-v", *FAST)
    # the record_info test is INFO on both volumes: an outcome of its own, never passed
    assert {k: v for k, v in result.parseoutcomes().items() if k != "warnings"} == \
        {"passed": 2, "info": 2, "failed": 1, "skipped": 3}
    result.stdout.fnmatch_lines([
        ("ebsperf: estimated cost: 2 volumes (gp3 100 GiB, io1 200 GiB 4,000 IOPS, billed 1 h) "
        "for * in us-east-1: about $* (*prices from the *); the limit is $1 "
        "(--ebsperf-max-cost)*"),
        "ebsperf: leftovers of earlier runs: deleted 1 leftover volume(s).",
    ])
    result.stdout.fnmatch_lines([
        "*test_gp3_volume_is_attached_as_a_block_device[[]gp3-100[]] PASSED*",
        "*test_io1_volume_has_its_provisioned_iops[[]io1-200-4000[]] PASSED*",
    ])
    result.stdout.fnmatch_lines([
        "SKIPPED * this suite checks io1 volumes; gp3:100 is not one.",
    ])
    [(volume_id, device, vtype)] = [line.split() for line in seen_file.read_text().splitlines()]
    assert vtype == "gp3" and device.endswith("/nvme1n1")
    assert volume_id in nvme_driver.seen and len(nvme_driver.seen) == 2
    assert ebsperf_volumes() == []  # the crashed run's volume, both of ours, even after a failure
    assert crashed_run not in volume_ids()
    facts = inner.facts()["provisioning"]
    assert [v["deleted"] for v in facts["volumes"]] == [True, True]
    assert facts["cleanup"].startswith("every volume of run ebsperf-")
    assert [v["facts"]["type"]["value"] for v in inner.facts()["volumes"]] == ["gp3", "io1"]


@needs_root
def test_an_interrupted_run_still_deletes_the_volume_it_was_using(
    inner: Inner, nvme_driver: FakeNvmeDriver
) -> None:
    inner.pytester.makepyfile(test_interrupted="""
        def test_user_presses_ctrl_c(ebsperf):
            assert ebsperf.volume.volume_id
            raise KeyboardInterrupt
    """)
    result = inner.run("--ebsperf-provision=gp2:10")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert len(nvme_driver.seen) == 1
    assert ebsperf_volumes() == []


def volume_ids() -> set[str]:
    return {str(v["VolumeId"]) for v in ec2_client().describe_volumes()["Volumes"]}


def test_a_run_above_the_cost_limit_is_refused_before_anything_is_created(
    inner: Inner, instance: str
) -> None:
    before = volume_ids()  # the instance's root volume
    inner.pytester.makepyfile(test_any="def test_any(ebsperf):\n    pass\n")
    result = inner.run("--ebsperf-provision=io2:2000:64000", "--ebsperf-max-cost=0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        ("ERROR: --ebsperf-provision: Refusing to create volumes: 1 volume (io2 2,000 GiB "
        "64,000 IOPS, billed 1 h) for * in us-east-1: about $* (*), above the limit of $0.5. "
        "Raise the cost limit, shorten the run or provision smaller volumes."),
    ])
    assert volume_ids() == before


def test_collect_only_prints_the_estimate_and_creates_nothing(
    inner: Inner, instance: str
) -> None:
    before = volume_ids()
    inner.pytester.makepyfile(test_any="def test_any(ebsperf):\n    pass\n")
    result = inner.run("--ebsperf-provision=gp3:100,st1:125", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["ebsperf: estimated cost: 2 volumes *",
                                 "*test_any.py::test_any[[]gp3-100[]]", "*test_any[[]st1-125[]]"])
    assert volume_ids() == before


def test_sweep_deletes_leftovers_of_crashed_runs_but_not_recent_ones_and_exits(
    inner: Inner, instance: str
) -> None:
    old, recent = leftover(timedelta(hours=2)), leftover(timedelta(minutes=5))
    untagged = str(ec2_client().create_volume(AvailabilityZone=AZ, Size=1)["VolumeId"])
    inner.pytester.makepyfile(test_never="def test_never():\n    raise AssertionError\n")
    result = inner.run("--ebsperf-sweep")
    assert result.ret == 0
    result.stdout.fnmatch_lines([(f"ebsperf sweep: deleted 1 leftover volume(s); left {recent} "
                                 "alone (created *, too recent).")])
    remaining = {v["VolumeId"] for v in ec2_client().describe_volumes()["Volumes"]}
    assert old not in remaining and {recent, untagged} <= remaining


@pytest.mark.parametrize(("args", "sentence"), [
    (["--ebsperf-provision=gp3:100,gp9:5"], ("*Volume spec 'gp9:5' (from command line "
     "(--ebsperf-provision)): 'gp9' is not a volume type that can be provisioned. Valid types: "
     "gp2, gp3, io1, io2, st1, sc1, standard.")),
    (["--ebsperf-provision=gp3:100,gp3:100"], "*lists gp3:100 more than once*"),
    (["--ebsperf-provision=gp3:100", "--device=/dev/null"], ("*--ebsperf-provision (from "
     "command line (--ebsperf-provision)) creates its own volumes, so it excludes "
     "--device=/dev/null. Pass one of them.")),
    (["--ebsperf-max-cost=-1"], "*--ebsperf-max-cost is a limit in US dollars, got -1*"),
], ids=["unknown-type", "twice", "with-device", "negative-cost"])
def test_a_bad_provisioning_option_is_a_usage_error_with_a_sentence(
    pytester: pytest.Pytester, args: list[str], sentence: str
) -> None:
    result = pytester.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {sentence}"])


def test_provisioning_cannot_be_split_over_xdist_workers(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    result = pytester.runpytest_inprocess("--ebsperf-provision=gp3:100", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot be split over xdist workers. Drop -n."])


def test_help_lists_the_aws_options_in_the_ebsperf_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--help")
    result.stdout.fnmatch_lines([
        "*block-storage performance claims (pytest-ebsperf)*",
        "*--ebsperf-provision=SPEC*", "*--ebsperf-max-cost=USD*", "*--ebsperf-no-discovery*",
        "*--ebsperf-initialize*", "*--ebsperf-sweep*",
    ])
    result.stdout.fnmatch_lines(["*ebsperf_provision (string)*", "*ebsperf_max_cost (string)*",
                                 "*ebsperf_no_discovery (bool)*"])
