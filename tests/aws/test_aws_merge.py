"""DescribeVolumes fields and the given-wins merge, on recorded API shapes (no AWS needed)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from pytest_ebsperf.aws.instance import parse_instance_type
from pytest_ebsperf.aws.merge import given_fields, merge
from pytest_ebsperf.aws.metrics import newest_datapoint
from pytest_ebsperf.aws.volumes import VolumeRecord
from pytest_ebsperf.awsmodel.volume import DEFAULT, DISCOVERED, GIVEN, Volume


def record(**fields: Any) -> VolumeRecord:
    data = {"VolumeId": "vol-0123456789abcdef0", "VolumeType": "gp2", "Size": 100, **fields}
    return VolumeRecord.from_api(data)


def test_gp2_iops_in_the_api_answer_are_the_baseline_and_are_not_taken() -> None:
    found, defaulted = record(VolumeType="gp2", Iops=300).volume_fields()
    assert "iops" not in found and not defaulted


def test_st1_has_neither_iops_nor_throughput_fields() -> None:
    found, _ = record(VolumeType="st1", Size=500).volume_fields()
    assert "iops" not in found and "throughput_mibps" not in found


def test_gp3_without_iops_or_throughput_gets_the_included_values_marked_assumed() -> None:
    found, defaulted = record(VolumeType="gp3").volume_fields()
    assert (found["iops"], found["throughput_mibps"]) == (3000, 125.0)
    assert defaulted == {"iops", "throughput_mibps"}
    found, defaulted = record(VolumeType="gp3", Iops=4000, Throughput=250).volume_fields()
    assert (found["iops"], found["throughput_mibps"], defaulted) == (4000, 250.0, set())


def test_a_restored_volume_names_its_snapshot_as_its_source() -> None:
    assert record(SnapshotId="snap-1").source == "snap-1"
    assert record(SourceVolumeId="vol-0aaa").source == "vol-0aaa"
    assert record(SnapshotId="").source is None


def test_a_hand_built_volume_without_provenance_counts_every_set_field_as_given() -> None:
    assert given_fields(Volume(type="io1", size_gib=100, iops=2000)) == {
        "type", "size_gib", "iops",
    }


def test_merging_marks_each_field_by_where_it_came_from() -> None:
    given = Volume(type="gp3", size_gib=500, provenance={"size_gib": GIVEN})
    found = {"type": "gp3", "size_gib": 100, "iops": 3000, "throughput_mibps": 125.0}
    volume, notes = merge(given, found, defaulted=frozenset({"throughput_mibps"}), subject="vol-1")
    assert (volume.type, volume.size_gib, volume.iops) == ("gp3", 500, 3000)
    assert dict(volume.provenance) == {
        "type": DISCOVERED, "size_gib": GIVEN, "iops": DISCOVERED, "throughput_mibps": DEFAULT,
    }
    assert notes == ("--volume-size=500 was given but AWS says vol-1 has 100; using 500 as given.",)


def test_an_assumed_default_never_counts_as_a_conflict() -> None:
    given = Volume(type="gp3", throughput_mibps=250, provenance={"throughput_mibps": GIVEN})
    _, notes = merge(given, {"throughput_mibps": 125.0}, defaulted=frozenset({"throughput_mibps"}))
    assert notes == ()


def test_a_xen_instance_type_is_not_nitro_and_bare_metal_with_nvme_is() -> None:
    xen = parse_instance_type({"InstanceType": "m3.xlarge", "Hypervisor": "xen", "EbsInfo": {}})
    metal = parse_instance_type(
        {"InstanceType": "m5.metal", "BareMetal": True, "EbsInfo": {"NvmeSupport": "required"}}
    )
    assert (xen.nitro, xen.ebs, metal.nitro) == (False, None, True)


def test_the_ebs_optimized_caps_convert_decimal_megabytes_to_mib() -> None:
    facts = parse_instance_type({
        "InstanceType": "c5.large", "Hypervisor": "nitro",
        "EbsInfo": {"EbsOptimizedSupport": "default", "EbsOptimizedInfo": {
            "BaselineBandwidthInMbps": 650, "BaselineThroughputInMBps": 81.25,
            "BaselineIops": 4000, "MaximumBandwidthInMbps": 4750,
            "MaximumThroughputInMBps": 593.75, "MaximumIops": 20000}},
    })
    assert facts.ebs is not None
    baseline_iops, baseline_mibps = facts.ebs.caps(sustained=True)
    maximum_iops, maximum_mibps = facts.ebs.caps(sustained=False)
    assert (baseline_iops, maximum_iops) == (4000, 20000)
    assert baseline_mibps == pytest.approx(81.25e6 / 2**20)
    assert maximum_mibps == pytest.approx(566.24, abs=0.01)


def test_the_newest_burst_datapoint_wins_whatever_order_cloudwatch_returns() -> None:
    stamps = [datetime(2025, 1, 1, 0, minute, tzinfo=timezone.utc) for minute in (1, 3, 2)]
    reading = newest_datapoint("vol-1", [{"Timestamps": stamps, "Values": [90.0, 10.0, 50.0]}])
    assert reading.percent == 10.0 and reading.timestamp == stamps[1] and reading.note is None
