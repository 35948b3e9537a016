"""Discovery in the plugin: ``pytest suites/gp2 --device=...`` finds the rest from AWS.

The device is a real loop device that a fake sysfs maps to a volume of the moto server; the
instance metadata is the fake IMDS. See test_aws_plugin_support for how, and why nothing
leaves 127.0.0.1.
"""

# Fixtures are imported from the support modules, so using them as arguments redefines the name.

from __future__ import annotations

from typing import Any

import pytest

# Imported here, before any pytester snapshot of sys.modules: pytester drops modules imported
# during a test, and the moto server thread would keep using the dropped class objects.
from moto.core.responses import ActionResult
from moto.ec2.responses.elastic_block_store import ElasticBlockStore
from support.aws import FakeImds, closed_port_url, ec2_client, run_instance
from support.aws_plugin import FakeTree, Inner, attach_volume
from support.common import SUITES, needs_fio, needs_root

from pytest_ebsperf.awsmodel import EbsLimits
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.checks.session import EbsperfSession
from pytest_ebsperf.config.settings import Settings

pytestmark = [needs_root, needs_fio]
FAST = ("--ebsperf-runtime=1", "--ebsperf-ramp=0")

VOLUME_PROBE = """
import pytest
pytestmark = pytest.mark.ebsperf(volume_type="{vtype}")

def test_probe(ebsperf):
    volume = ebsperf.volume
    print("VOLUME", volume.type, volume.size_gib, volume.volume_id, volume.instance_type,
          ebsperf.target.path)
"""


def probe(inner: Inner, vtype: str = "gp2") -> None:
    inner.pytester.makepyfile(test_probe=VOLUME_PROBE.format(vtype=vtype))


# ------------------------------------------------------------------------------ discovered
@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
def test_the_gp2_suite_runs_on_a_device_whose_type_and_size_come_from_aws(
    inner: Inner, fake_tree: FakeTree, instance: str
) -> None:
    volume_id = attach_volume(instance, Size=100, VolumeType="gp2")
    device = fake_tree.nvme(volume_id)
    inner.pytester.makepyfile(test_gp2=(SUITES / "gp2" / "test_gp2.py").read_text())
    result = inner.run(f"--device={device}", *FAST)
    # nothing was skipped for being the wrong type: the suite took the volume as gp2
    result.stdout.no_fnmatch_line("*this suite checks gp2 volumes*")
    result.stdout.fnmatch_lines([
        "*ebsperf volume facts*",
        f"{device}: gp2 100 GiB on m5.large",
        "  type * gp2 * discovered",
        "  size (GiB) * 100 * discovered",
        "  instance type * m5.large * discovered",
        f"  volume id * {volume_id} * discovered",
        "discovery: discovered",
    ])
    entry = inner.only_volume()
    assert entry["facts"]["type"] == {"value": "gp2", "source": "discovered"}
    assert inner.facts()["discovery"]["aws"]["instance_id"] == instance
    # fio really ran on the discovered gp2: the claims table has a measured rate for the
    # gp2 burst claim. With a 1-s run the verdict may be any of passed, failed or
    # INCONCLUSIVE (run length), so the outcome itself is not what this test is about.
    outcomes = result.parseoutcomes()
    judged = sum(outcomes.get(k, 0) for k in ("passed", "failed", "inconclusive"))
    assert judged >= 1, outcomes
    result.stdout.re_match_lines([r"S0-06 +gp2 burst.* 3,000 IOPS +[\d,]+ IOPS +\w+"])


def test_an_explicit_volume_size_wins_over_discovery_and_is_marked_given(
    inner: Inner, fake_tree: FakeTree, instance: str
) -> None:
    volume_id = attach_volume(instance, Size=100, VolumeType="gp2")
    probe(inner)
    device = fake_tree.nvme(volume_id)
    result = inner.run(f"--device={device}", "--volume-size=150", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        f"*VOLUME gp2 150 {volume_id} m5.large {device}",
        "  type * gp2 * discovered",
        "  size (GiB) * 150 * given",
        f"  note: --volume-size=150 was given but AWS says {volume_id} has 100; using 150 as given.",
    ])
    assert inner.only_volume()["facts"]["size_gib"] == {"value": 150, "source": "given"}


def test_a_run_with_every_fact_given_imports_no_boto3_and_needs_no_credentials(
    inner: Inner, fake_tree: FakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", closed_port_url())
    # the serial says EBS: a run that wrongly asked AWS would import botocore and fail
    device = fake_tree.nvme("vol-0123456789abcdef0")
    inner.pytester.makepyfile(test_no_aws="""
        import sys

        def test_no_aws_library_was_loaded(ebsperf):
            assert ebsperf.volume.provenance["type"] == "given"
            assert not [m for m in sys.modules if m.split(".")[0] in ("boto3", "botocore")]
    """)
    result = inner.run(f"--device={device}", "--volume-type=io1", "--volume-size=100",
                       "--volume-iops=1000", "--instance-type=m5.large")
    result.assert_outcomes(passed=1)
    assert inner.facts()["discovery"]["status"] == "not needed: every fact was given"
    result.stdout.fnmatch_lines(["  size (GiB) * 100 * given"])


def test_discovered_ebs_optimized_limits_replace_the_built_in_instance_table(
    inner: Inner, fake_tree: FakeTree, aws: str, fake_imds: FakeImds
) -> None:
    # c6id.large is not in the built-in table: its 40,000 IOPS can only come from the API
    fake_imds.instance_id, fake_imds.instance_type = run_instance("c6id.large"), "c6id.large"
    volume_id = attach_volume(fake_imds.instance_id, Size=1000, VolumeType="io1", Iops=50000)
    inner.pytester.makepyfile(test_limits="""
        import pytest
        pytestmark = pytest.mark.ebsperf(volume_type="io1")

        def test_the_instance_cap_binds(ebsperf):
            found = ebsperf.expect_cap("S0-04", "read", ebsperf.workload("randread", "16k"))
            assert (found.binding.kind, found.value) == ("instance", 40000)
            assert "c6id.large" in found.binding.name
    """)
    result = inner.run(f"--device={fake_tree.nvme(volume_id)}")
    result.assert_outcomes(passed=1)


def test_the_emulated_rates_use_discovered_instance_limits_when_known() -> None:
    session = EbsperfSession(Settings(emulate=True))
    volume = Volume("io1", size_gib=1000, iops=50000, instance_type="c6id.large")
    session = session.knowing(instance_limits=EbsLimits(3600, 81.25, 40000, 100.0))
    iops, bps, _ = session.emulated_rates(volume)
    assert (iops, bps) == (40000, 100.0e6)


# ------------------------------------------------------------------------------ sentences


def no_credentials(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")


def denied(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    request.getfixturevalue("restricted_user")


def off_ec2(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", closed_port_url())


def elsewhere(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    request.getfixturevalue("fake_imds").instance_id = run_instance()


@pytest.mark.parametrize(("situation", "sentence"), [
    (no_credentials, ("*is unknown: pass --volume-type*Discovery could not tell: No AWS "
                     "credentials found (botocore looked at environment variables*")),
    (denied, ("*Discovery could not tell: AWS denied ec2:DescribeVolumes*lack the IAM "
             "permission 'ec2:DescribeVolumes'*docs/aws-iam-policy.md*")),
    (off_ec2, ("*is unknown: pass --volume-type*Discovery could not tell: Not running on "
              "EC2: the instance metadata service at http://127.0.0.1:*did not identify an "
              "instance*Pass --volume-type/--volume-size/--instance-type*")),
    (elsewhere, ("*Discovery could not tell: Volume vol-* is attached to i-*, not to this "
                "instance i-*")),
], ids=["no-credentials", "access-denied", "not-on-ec2", "volume-of-another-instance"])
def test_a_discovery_that_cannot_tell_ends_the_usage_error_with_its_reason(
    inner: Inner, fake_tree: FakeTree, instance: str, request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch, situation: Any, sentence: str,
) -> None:
    device = fake_tree.nvme(attach_volume(instance, Size=100, VolumeType="gp2"))
    situation(request, monkeypatch)
    probe(inner)
    result = inner.run(f"--device={device}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: The volume type of {device} {sentence}"])
    assert "Traceback" not in result.stderr.str()


def test_a_xen_disk_that_is_not_attached_here_is_not_an_ebs_volume_of_this_instance(
    inner: Inner, fake_tree: FakeTree, instance: str
) -> None:
    probe(inner)
    result = inner.run(f"--device={fake_tree.xen('xvdg')}", "--volume-type=gp2",
                       "--volume-size=100")
    result.assert_outcomes(passed=1)  # the given facts suffice; the reason is a note
    result.stdout.fnmatch_lines([("  note: */xvdg is not among the EBS volumes attached to "
                                 f"{instance}*pass --volume-type=instance-store*")])


def test_a_loop_device_is_not_an_ebs_volume_and_the_error_says_what_to_pass(
    inner: Inner, loop_device: Any
) -> None:
    probe(inner)
    device = loop_device()
    result = inner.run(f"--device={device}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([(f"*Discovery could not tell: {device} is a loop device, not "
                                 "an EBS volume*Pass --volume-type/--volume-size*--emulate.")])


def test_no_discovery_never_asks_the_metadata_service(
    inner: Inner, fake_tree: FakeTree, instance: str, fake_imds: FakeImds
) -> None:
    device = fake_tree.nvme(attach_volume(instance, Size=100, VolumeType="gp2"))
    probe(inner)
    result = inner.run(f"--device={device}", "--ebsperf-no-discovery")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([("*is unknown: pass --volume-type*(Discovery is off: "
                                 "--ebsperf-no-discovery.)")])
    assert fake_imds.requests == []


# ------------------------------------------------------------------------------ initialization
@pytest.fixture
def restored_volume(instance: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A gp2 volume restored from a snapshot that AWS reports 37 % initialized.

    moto does not implement DescribeVolumeStatus; the server runs in this process, so its
    handler is given an answer shaped like the API reference's.
    """
    ec2 = ec2_client()
    source = ec2.create_volume(AvailabilityZone="us-east-1a", Size=1)["VolumeId"]
    snapshot = ec2.create_snapshot(VolumeId=source)["SnapshotId"]
    volume_id = attach_volume(instance, SnapshotId=snapshot, Size=100, VolumeType="gp2")

    def describe_volume_status(self: Any) -> ActionResult:
        details = {"InitializationType": "default", "Progress": 37}
        return ActionResult({"VolumeStatuses": [{
            "VolumeId": volume_id, "AvailabilityZone": "us-east-1a",
            "VolumeStatus": {"Status": "ok", "Details": []},
            "InitializationStatusDetails": details}]})

    monkeypatch.setattr(ElasticBlockStore, "describe_volume_status", describe_volume_status,
                        raising=False)
    return volume_id


def test_checks_of_a_volume_still_initializing_are_skipped_with_the_reason(
    inner: Inner, fake_tree: FakeTree, restored_volume: str
) -> None:
    probe(inner)
    result = inner.run(f"--device={fake_tree.nvme(restored_volume)}")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines([
        (f"ebsperf: checks of */nvme1n1 are skipped: volume {restored_volume} was restored "
        "from snap-* and is 37 % initialized*"),
        (f"SKIPPED * volume {restored_volume} was restored from snap-* and is 37 % initialized: "
        "numbers would reflect lazy loading*(--ebsperf-initialize; reading it takes at least *"),
    ])
    assert inner.facts()["initialization"]["read_s"] is None


def test_the_initialization_opt_in_reads_every_block_then_measures(
    inner: Inner, fake_tree: FakeTree, restored_volume: str
) -> None:
    probe(inner)
    result = inner.run(f"--device={fake_tree.nvme(restored_volume)}", "--ebsperf-initialize")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        ("ebsperf: */nvme1n1 is 37 % (default) initialized; every block is read once before "
        "the first check (at least *"),
        "initialization: 37 % (default) when the run started; read in * s.",
    ])
    assert inner.facts()["initialization"]["read_s"] is not None


def test_each_device_of_a_set_is_discovered_on_its_own_and_the_slowest_binds(
    inner: Inner, fake_tree: FakeTree, instance: str, loop_device: Any
) -> None:
    """#11: per-member facts from discovery; members that differ make the set's expectation
    N x the slowest member (S4-04)."""
    fast = attach_volume(instance, "/dev/sdf", Size=200, VolumeType="io1", Iops=2000)
    slow = attach_volume(instance, "/dev/sdg", Size=200, VolumeType="io1", Iops=1500)
    first = fake_tree.nvme(fast, "nvme1n1")
    second = fake_tree.nvme(slow, "nvme2n1", loop=loop_device(64))
    inner.pytester.makepyfile(test_members="""
        import pytest
        pytestmark = pytest.mark.ebsperf(volume_type="io1")

        def test_members(ebsperf):
            members = ebsperf.session.set_members(ebsperf.volume, 2)
            print("MEMBERS", [(m.volume_id, m.iops) for m in members])
            found = ebsperf.over(2).expect_cap("S4-04", "read", ebsperf.workload("randread", "4k"))
            print("EXPECTED", found.value)
    """)
    result = inner.run(f"--device={first},{second}", "-s")
    result.assert_outcomes(passed=1)
    assert f"MEMBERS [('{fast}', 2000), ('{slow}', 1500)]" in result.stdout.str()
    result.stdout.fnmatch_lines(["*EXPECTED 3000.0*"])  # 2 x the slower member's 1,500
    entries = {e["device"]: e for e in inner.facts()["volumes"]}
    assert entries[second]["facts"]["iops"] == {"value": 1500, "source": "discovered"}
    assert any("discovered on its own" in note for note in entries[second]["notes"])
