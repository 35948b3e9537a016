"""The instance tables: seed-era EBS-optimized figures (S2-20, B-EBSOPT), the moto snapshot they
were copied from, Nitro flags and published instance-store IOPS (B-IS)."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ebsperf.awsmodel import (
    EbsLimits,
    as_ebs_limits,
    ebs_limits,
    ebs_limits_from_api,
    ebs_note,
    instance_store_devices,
    instance_store_iops,
    known_instance_types,
    nitro,
)
from pytest_ebsperf.awsmodel.instance_data import EBS_OPTIMIZED
from pytest_ebsperf.errors import VolumeSpecError

# claims.md B-EBSOPT / S2-20 / S4-02: type -> (Mbps, MB/s, IOPS at 16 KiB).
SEED_ERA = [
    ("c1.xlarge", 1_000, 125.0, 8_000),
    ("c3.xlarge", 500, 62.5, 4_000),
    ("c3.2xlarge", 1_000, 125.0, 8_000),
    ("c3.4xlarge", 2_000, 250.0, 16_000),
    ("m3.xlarge", 500, 62.5, 4_000),
    ("r3.xlarge", 500, 62.5, 4_000),
    ("i2.xlarge", 500, 62.5, 4_000),
    ("d2.xlarge", 750, 93.75, 6_000),
    ("c4.2xlarge", 1_000, 125.0, 8_000),
]


@pytest.mark.parametrize(("itype", "mbps_bits", "mbps", "iops"), SEED_ERA)
def test_seed_era_instances_have_the_documented_ebs_optimized_figures(
    itype: str, mbps_bits: int, mbps: float, iops: int
) -> None:
    assert ebs_limits(itype) == EbsLimits(iops, mbps, iops, mbps)
    assert mbps_bits / 8 == mbps
    assert nitro(itype) is False


def test_s2_20_c3_iops_at_16k_are_the_bandwidth_divided_by_16_kb() -> None:
    for itype, iops in (("c3.xlarge", 4_000), ("c3.2xlarge", 8_000), ("c3.4xlarge", 16_000)):
        limits = ebs_limits(itype)
        assert limits is not None
        assert limits.max_mbps * 1e6 / 16e3 == pytest.approx(iops, rel=0.03)


@pytest.mark.parametrize("itype", ["c3.8xlarge", "m3.large", "r3.large", "c3.large"])
def test_types_without_dedicated_ebs_bandwidth_have_no_limits_and_say_why(itype: str) -> None:
    assert ebs_limits(itype) is None
    assert "no dedicated EBS bandwidth" in (ebs_note(itype) or "")


def test_current_types_report_baseline_and_30_minute_maximum() -> None:
    c5 = ebs_limits("c5.large")
    assert c5 == EbsLimits(4_000, 81.25, 20_000, 593.75) and c5.bursts
    assert ebs_limits("m5.24xlarge") == EbsLimits(80_000, 2_375.0, 80_000, 2_375.0)
    assert ebs_limits("i3.metal") == EbsLimits(80_000, 2_375.0, 80_000, 2_375.0)


FAMILIES = ["m5", "m6i", "m7i", "c5", "c6i", "c7i", "r5", "r6i", "r7i", "t3", "m5d", "i3",
            "i3en", "i4i"]  # fmt: skip


@pytest.mark.parametrize("family", FAMILIES)
def test_the_table_covers_the_common_sizes_of_each_current_family(family: str) -> None:
    sizes = {t.split(".")[1] for t in known_instance_types() if t.split(".")[0] == family}
    assert {"large", "xlarge", "2xlarge"} <= sizes


def _moto_snapshot() -> dict[str, Any]:
    spec = importlib.util.find_spec("moto")
    if spec is None or spec.origin is None:
        pytest.skip("moto is not installed, so its DescribeInstanceTypes snapshot is absent")
    path = Path(spec.origin).parent / "ec2" / "resources" / "instance_types.json.gz"
    with gzip.open(path) as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def test_every_table_row_agrees_with_the_describe_instance_types_snapshot() -> None:
    snapshot = _moto_snapshot()
    for itype in EBS_OPTIMIZED:
        if itype not in snapshot:
            continue  # i3.metal: from the awsdocs table
        info = snapshot[itype]["EbsInfo"].get("EbsOptimizedInfo")
        expected = None if info is None else ebs_limits_from_api(info)
        assert ebs_limits(itype) == expected, itype
        hypervisor = snapshot[itype].get("Hypervisor")
        assert nitro(itype) is (hypervisor == "nitro" or snapshot[itype]["BareMetal"]), itype


def test_nitro_is_true_for_nitro_types_false_for_xen_and_none_when_unknown() -> None:
    assert nitro("m7i.large") is True
    assert nitro("i3.large") is False and nitro("i3.metal") is True
    assert nitro("zz9.large") is None


def test_published_instance_store_iops_for_i3_i3en_i4i_and_i2() -> None:
    assert instance_store_iops("i3.large") == (100_125, 35_000)
    assert instance_store_iops("i3en.24xlarge") == (2_000_000, 1_600_000)
    assert instance_store_iops("i4i.32xlarge") == (3_200_000, 1_760_000)
    assert instance_store_iops("i2.xlarge") == (35_000, 35_000)
    assert instance_store_iops("m5.large") is None
    assert instance_store_devices("i4i.32xlarge") == 8


def test_an_unknown_instance_type_error_suggests_close_names_and_how_to_find_valid_ones() -> None:
    with pytest.raises(VolumeSpecError) as err:
        ebs_limits("m5.larg")
    message = str(err.value)
    assert message.startswith("'m5.larg' is not an instance type the built-in table knows.")
    assert "Did you mean m5.large" in message
    assert "On EC2 the instance type and its EBS limits are discovered" in message
    assert "aws ec2 describe-instance-types" in message


def test_limits_from_the_api_accept_a_whole_instance_record_or_only_maximum_figures() -> None:
    record = {"EbsInfo": {"EbsOptimizedInfo": {"MaximumIops": 20_000,
                                               "MaximumThroughputInMBps": 593.75}}}  # fmt: skip
    assert ebs_limits_from_api(record) == EbsLimits(20_000, 593.75, 20_000, 593.75)
    with pytest.raises(VolumeSpecError, match="no EbsOptimizedInfo"):
        ebs_limits_from_api({"EbsInfo": {"EbsOptimizedSupport": "unsupported"}})


def test_discovered_limits_convert_from_an_api_record_or_an_object_with_mb_per_s_fields() -> None:
    class Discovered:
        baseline_iops = 3_600
        baseline_throughput_mBps = 81.25
        maximum_iops = 40_000
        maximum_throughput_mBps = 1_250.0

    expected = EbsLimits(3_600, 81.25, 40_000, 1_250.0)
    assert as_ebs_limits(Discovered()) == expected
    assert as_ebs_limits(expected) is expected
    assert as_ebs_limits({"BaselineIops": 3_600, "BaselineThroughputInMBps": 81.25,
                          "MaximumIops": 40_000, "MaximumThroughputInMBps": 1_250.0}) == expected
