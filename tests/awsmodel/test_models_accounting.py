"""B-IOACCT: how EBS counts fio's I/Os, and when fio's numbers can be held to a cap."""

from __future__ import annotations

import pytest

from pytest_ebsperf.awsmodel import (
    accounted_bytes_per_io,
    ebs_ops_per_io,
    instance_ops_per_io,
    is_cap_checkable,
)
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.fio.workload import Workload

KIB = 1024


@pytest.mark.parametrize(
    ("vtype", "bs", "sequential", "ops"),
    [
        ("gp2", 1_024 * KIB, False, 4.0),  # AWS: 1 x 1,024 KiB on SSD = 4 operations
        ("gp2", 32 * KIB, False, 1.0),  # 8 random 32 KiB = 8 operations
        ("gp2", 32 * KIB, True, 0.125),  # 8 sequential 32 KiB = 1 operation
        ("io1", 300 * KIB, False, 2.0),  # split into 256 + 44 KiB
        ("st1", 4 * KIB, False, 1.0),  # every HDD I/O up to 1 MiB is one
        ("st1", 2_048 * KIB, False, 2.0),
        ("st1", 128 * KIB, True, 0.125),  # merged into 1 MiB
    ],
)
def test_ebs_counts_split_and_merged_io_as_aws_documents(
    vtype: str, bs: int, sequential: bool, ops: float
) -> None:
    assert ebs_ops_per_io(vtype, bs, sequential=sequential) == ops


def test_in_2013_one_provisioned_iops_was_an_io_of_up_to_16_kib() -> None:
    assert ebs_ops_per_io("io1", 64 * KIB, sequential=False, era="2013") == 4.0
    assert ebs_ops_per_io("io1", 64 * KIB, sequential=False) == 1.0


def test_small_random_io_on_hdd_spends_a_full_mib_of_throughput_credit() -> None:
    assert accounted_bytes_per_io("sc1", 4 * KIB, sequential=False) == 1_024 * KIB
    assert accounted_bytes_per_io("sc1", 4 * KIB, sequential=True) == 4 * KIB
    assert accounted_bytes_per_io("gp3", 4 * KIB, sequential=False) == 4 * KIB


def test_the_instance_counts_one_operation_per_io_up_to_256_kib() -> None:
    assert instance_ops_per_io(4 * KIB, sequential=False) == 1.0
    assert instance_ops_per_io(64 * KIB, sequential=False) == 1.0
    assert instance_ops_per_io(1_024 * KIB, sequential=False) == 4.0


def test_random_small_block_iops_are_cap_checkable() -> None:
    ok, reason = is_cap_checkable(Volume("io1", size_gib=200, iops=2_000), Workload("randread"))
    assert ok and "B-IOACCT" in reason


def test_sequential_small_block_iops_are_not_a_cap_check_because_ebs_merges_them() -> None:
    # S4-05: sequential 4 KiB on 2,000-IOPS io1 gave 3,545 fio IOPS.
    volume = Volume("io1", size_gib=200, iops=2_000)
    ok, reason = is_cap_checkable(volume, Workload("read", bs=4 * KIB))
    assert not ok
    assert reason.startswith("EBS merges sequential I/Os smaller than 256KiB")
    assert "S4-05" in reason


def test_sequential_io_of_the_full_unit_is_cap_checkable() -> None:
    assert is_cap_checkable(Volume("st1", size_gib=2_048), Workload("read", bs=1_024 * KIB))[0]
    assert is_cap_checkable(Volume("gp3", size_gib=8), Workload("read", bs=256 * KIB))[0]


def test_sequential_throughput_is_checkable_only_when_the_byte_cap_binds_without_merging() -> None:
    gp3 = Volume("gp3", size_gib=100, iops=3_000, throughput_mibps=125)
    # 3,000 x 64 KiB = 187.5 MiB/s > 125: the throughput cap binds merged or not.
    assert is_cap_checkable(gp3, Workload("read", bs=64 * KIB), metric="throughput")[0]
    # 3,000 x 16 KiB = 47 MiB/s < 125: merging decides, so no cap check.
    assert not is_cap_checkable(gp3, Workload("read", bs=16 * KIB), metric="throughput")[0]
    # st1 small sequential I/O: unmerged, each costs 1 MiB of credit.
    st1 = Volume("st1", size_gib=2_048)
    assert not is_cap_checkable(st1, Workload("read", bs=64 * KIB), metric="throughput")[0]


def test_magnetic_and_instance_store_are_never_cap_checks() -> None:
    standard = is_cap_checkable(Volume("standard", size_gib=100), Workload("randread"))
    store = is_cap_checkable(Volume("instance-store", instance_type="i3.large"), Workload("randread"))
    assert standard[0] is False and "B-STD" in standard[1]
    assert store[0] is False and "floor" in store[1]


def test_an_unknown_metric_is_refused() -> None:
    with pytest.raises(ValueError, match="Valid metrics: iops, throughput"):
        is_cap_checkable(Volume("gp3", size_gib=8), Workload("randread"), metric="latency")
