"""Sets of volumes measured together (RAID0, S4-04, S2-22): the set's expectation, md arrays
read from sysfs, the options, and end to end on 2 and 4 emulated volumes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.common import SUITES, left_by_dead_runs, needs_fio, needs_root

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.stripes import set_expectation
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.config.consistency import resolve
from pytest_ebsperf.config.options import OPTIONS
from pytest_ebsperf.device.mdraid import read_md
from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.fio.jobs import escape_filename
from pytest_ebsperf.fio.workload import Workload

RAID0 = f"{SUITES}/raid0/test_raid0.py"
SEED_004 = Volume("io1", size_gib=200, iops=2000, instance_type="c1.xlarge")


def settings_from(**cli: object):
    flags = {o.flag: o for o in OPTIONS}
    given = {flags[f].dest: v for f, v in cli.items()}
    return resolve(lambda o: given.get(o.dest), {}, lambda o: None)


# -- the set's expectation ---------------------------------------------------------------
@pytest.mark.parametrize(("count", "iops"), [(1, 2000), (2, 4000), (4, 8000)])
def test_random_iops_of_alike_volumes_add_up(count: int, iops: float) -> None:
    """S4-04: N x 2,000 (seed 004: 2,064 / 4,114 / 8,150)."""
    volume = awsmodel.validate(SEED_004)
    found = set_expectation("S4-04", "x", [volume] * count, Workload("randread", bs=4096))
    assert found.value == iops and found.policy == awsmodel.CAP


@pytest.mark.parametrize(("count", "mbps", "bound"), [
    (1, 32.768, "volume"), (2, 65.536, "volume"), (4, 125.0, "instance")])
def test_bandwidth_doubles_then_the_instance_binds(count: int, mbps: float, bound: str) -> None:
    """S4-06: 16 KiB random reads: N x 2,000 x 16 KiB until c1.xlarge's 125 MB/s."""
    volume = awsmodel.validate(SEED_004)
    found = set_expectation("S4-06", "x", [volume] * count, Workload("randread", bs=16384),
                            metric="throughput")
    assert found.value / 1e6 == pytest.approx(mbps)
    assert found.binding.kind == bound
    if bound == "instance":
        assert any("more volumes add no performance" in n for n in found.notes)


def test_unequal_members_run_at_the_slowest_members_pace() -> None:
    fast = awsmodel.validate(Volume("io1", size_gib=200, iops=2000))
    slow = awsmodel.validate(Volume("io1", size_gib=200, iops=1000))
    found = set_expectation("S4-04", "x", [fast, slow, fast], Workload("randread", bs=4096))
    assert found.value == 3000  # 3 x 1,000, not 5,000
    assert any("slowest member" in n and "5,000 IOPS" in n for n in found.notes)


def test_in_2013_set_bandwidth_is_judged_only_where_the_instance_surely_binds() -> None:
    """S4-06 with --ebsperf-era=2013: no per-volume throughput was published, so 1 and 2
    volumes are recorded; 4 x 2,000 x 16 KiB = 131 MB/s surely reach c1.xlarge's 125."""
    volume = awsmodel.validate(SEED_004, era="2013")
    seq = Workload("read", bs=1 << 20)
    policies = [set_expectation("S4-06", "x", [volume] * n, seq, metric="throughput",
                                era="2013").policy for n in (1, 2, 4)]
    assert policies == [awsmodel.INFO, awsmodel.INFO, awsmodel.CAP]


# -- md arrays from sysfs --------------------------------------------------------------------
def fake_md(root: Path, name: str, level: str, chunk: int, members: list[str]) -> None:
    (root / name / "md").mkdir(parents=True)
    (root / name / "md" / "level").write_text(level + "\n")
    (root / name / "md" / "chunk_size").write_text(f"{chunk}\n")
    (root / name / "slaves").mkdir()
    for member in members:
        (root / name / "slaves" / member).mkdir()


def test_an_md_array_is_read_from_sysfs(tmp_path: Path) -> None:
    fake_md(tmp_path, "md0", "raid0", 524288, ["nvme2n1", "nvme1n1", "nvme3n1"])
    found = read_md("md0", sys_block=tmp_path)
    assert found is not None
    assert (found.level, found.chunk_bytes) == ("raid0", 524288)
    assert found.members == ("/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1")
    assert "raid0 of 3, 512 KiB chunks" in found.label()


def test_a_plain_device_is_no_md_array(tmp_path: Path) -> None:
    (tmp_path / "nvme1n1" / "queue").mkdir(parents=True)
    assert read_md("nvme1n1", sys_block=tmp_path) is None


# -- options ---------------------------------------------------------------------------------
def test_device_takes_several_devices() -> None:
    s = settings_from(**{"--device": "/dev/nvme1n1, /dev/nvme2n1"})
    assert s.device == "/dev/nvme1n1" and s.devices == ("/dev/nvme1n1", "/dev/nvme2n1")
    assert s.set_size == 2


@pytest.mark.parametrize(("cli", "words"), [
    ({"--device": "/dev/a,,/dev/b"}, "has an empty entry"),
    ({"--device": "/dev/a,/dev/a"}, "names a device twice"),
    ({"--device": "/dev/a,/dev/b", "--volume-count": "3"}, "names 2 devices"),
    ({"--emulate": True, "--volume-count": "0"}, "between 1 and 28"),
    ({"--emulate": True, "--volume-count": "2", "--emulate-member-factors": "1"},
     "gives 1 factors for --volume-count=2"),
    ({"--emulate": True, "--volume-count": "2", "--emulate-member-factors": "1,x"},
     "'x' is not a positive number"),
    ({"--volume-count": "2", "--emulate-member-factors": "1,1"}, "only applies with --emulate"),
    ({"--ebsperf-era": "1999"}, "give one of now, 2016, 2014, 2013"),
])
def test_bad_set_options_get_a_sentence(cli: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        settings_from(**cli)


def test_a_set_is_one_fio_filename_with_each_colon_escaped() -> None:
    assert escape_filename(("/dev/loop1", "/dev/disk/by-path/pci-0000:00")) == \
        "/dev/loop1:/dev/disk/by-path/pci-0000\\:00"


# -- end to end: real fio on 2 and 4 emulated volumes ----------------------------------------
FAST = ("--emulate", "--ebsperf-runtime=3", "--ebsperf-ramp=0.5", "-p", "no:cacheprovider")


@pytest.mark.alone  # rates of several volumes at once, timed to a few percent
@needs_root
@needs_fio
@pytest.mark.parametrize("count", [2, 4])
def test_random_reads_scale_linearly_on_emulated_sets(pytester: pytest.Pytester,
                                                      count: int) -> None:
    result = pytester.runpytest_subprocess(
        f"{RAID0}::test_random_read_iops_scale_linearly_with_the_volumes", *FAST,
        f"--volume-count={count}", "-rs", "--ebsperf-miss-spell=1")  # its count can FAIL
    outcomes = {2: {"passed": 2, "skipped": 1}, 4: {"passed": 3}}[count]
    result.assert_outcomes(**outcomes)
    result.stdout.fnmatch_lines([f"*S4-04*{count} volume(s)*{2000 * count:,} IOPS*PASS*"])
    if count == 2:
        skipped = "*SKIPPED*measures 4 volumes together; the set under test has 2*"
        result.stdout.fnmatch_lines([skipped])
    assert left_by_dead_runs() == []


@pytest.mark.alone  # rates of several volumes at once, timed to a few percent
@needs_root
@needs_fio
def test_one_member_at_75_percent_fails_the_set_and_is_named(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        f"{RAID0}::test_random_read_iops_scale_linearly_with_the_volumes[4vol]", *FAST,
        "--volume-count=4", "--emulate-member-factors=1,1,0.75,1", "--ebsperf-miss-spell=1",
        "--ebsperf-tables=sets,facts")
    result.assert_outcomes(failed=1)
    # the finding's paragraph is wrapped to the terminal: read it as one line of words
    text = " ".join(result.stdout.str().split())
    assert "8,000 IOPS expected" in text
    assert "The slow member is" in text, text[-3000:]
    # the third member (75 %) is named, with its own figure near 1,500 of 2,000 IOPS
    named = re.search(r"The slow member is (/dev/loop\d+): ([\d,]+) IOPS, (\d+)% of its",
                      text)
    assert named is not None, text[-3000:]
    assert 70 <= int(named.group(3)) <= 80, named.group(0)
    # it is the third device of the set (the order they were made in)
    # (the facts table names the set's members in order)
    members = re.search(r"(/dev/loop\d+), (/dev/loop\d+), (/dev/loop\d+), (/dev/loop\d+): io1",
                        text)
    assert members is not None and members.group(3) == named.group(1)
    assert "Traceback" not in text
    assert left_by_dead_runs() == []
