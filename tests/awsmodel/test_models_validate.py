"""validate(): AWS's ranges, each refusal as one sentence, and the normalised volume."""

from __future__ import annotations

import pytest

from pytest_ebsperf.awsmodel import validate
from pytest_ebsperf.awsmodel.volume import DEFAULT, DISCOVERED, GIVEN, Volume
from pytest_ebsperf.errors import ConfigError, VolumeSpecError


def _error(volume: Volume) -> str:
    with pytest.raises(VolumeSpecError) as err:
        validate(volume)
    return str(err.value)


def test_io1_above_50_iops_per_gib_is_refused_with_the_allowed_maximum() -> None:
    assert _error(Volume("io1", size_gib=100, iops=20_000)) == (
        "io1 with 100 GiB and 20,000 IOPS is not a valid volume: io1 allows at most 50 IOPS "
        "per GiB, so 100 GiB allows up to 5,000 IOPS (B-IO1). Pass --volume-iops<=5000 or a "
        "larger --volume-size."
    )


def test_an_unknown_type_lists_the_valid_types() -> None:
    assert _error(Volume("gp9", size_gib=100)) == (
        "'gp9' is not a valid --volume-type. Valid types: gp2, gp3, io1, io2, st1, sc1, "
        "standard, instance-store."
    )


@pytest.mark.parametrize(
    ("volume", "message"),
    [
        (Volume("io2", size_gib=100, iops=200_000),
         ("io2 allows at most 1,000 IOPS per GiB, so 100 GiB allows up to 100,000 IOPS (B-IO2). "
         "Pass --volume-iops<=100000")),
        (Volume("gp3", size_gib=4, iops=5_000),
         "gp3 allows at most 500 IOPS per GiB, so 4 GiB allows up to 3,000 IOPS (B-GP3)"),
        (Volume("io1", size_gib=200, iops=50),
         ("io1 with 50 IOPS is not a valid volume: io1 allows 100 to 64,000 IOPS (B-IO1). "
         "Pass --volume-iops between 100 and 64000.")),
        (Volume("gp3", size_gib=500, iops=90_000), "gp3 allows 3,000 to 80,000 IOPS (B-GP3)"),
        (Volume("io1", size_gib=200),
         ("io1 needs provisioned IOPS: pass --volume-iops=N (io1 allows 100-64,000 IOPS, at most "
         "50 per GiB; B-IO1).")),
        (Volume("io2", size_gib=200), "io2 needs provisioned IOPS"),
    ],
)  # fmt: skip
def test_provisioned_iops_outside_the_rules_are_refused(volume: Volume, message: str) -> None:
    assert message in _error(volume)


@pytest.mark.parametrize(
    ("volume", "message"),
    [
        (Volume("st1", size_gib=100),
         ("st1 with 100 GiB is not a valid volume: st1 sizes run from 125 to 16,384 GiB (B-HDD). "
         "Pass a --volume-size between 125 and 16384.")),
        (Volume("sc1", size_gib=20_000), "sc1 sizes run from 125 to 16,384 GiB"),
        (Volume("standard", size_gib=2_000), "standard sizes run from 1 to 1,024 GiB (B-STD)"),
        (Volume("io1", size_gib=2, iops=100), "io1 sizes run from 4 to 16,384 GiB (B-IO1)"),
        (Volume("gp3", size_gib=70_000), "gp3 sizes run from 1 to 65,536 GiB (B-GP3)"),
        (Volume("gp2", size_gib=0), "gp2 sizes run from 1 to 16,384 GiB (B-GP2)"),
        (Volume("gp2"), ("A gp2 volume needs a size: gp2 sizes run from 1 to 16,384 GiB (B-GP2). "
                        "Pass --volume-size=GIB.")),
    ],
)  # fmt: skip
def test_sizes_outside_each_types_range_are_refused(volume: Volume, message: str) -> None:
    assert message in _error(volume)


def test_gp2_iops_other_than_the_baseline_are_refused_with_the_baseline() -> None:
    assert _error(Volume("gp2", size_gib=100, iops=1_000)) == (
        "gp2 with 100 GiB and 1,000 IOPS is not a valid volume: gp2 IOPS are not provisioned "
        "but follow from size (3 per GiB, at least 100, at most 16,000), so 100 GiB has a "
        "baseline of 300 IOPS (B-GP2). Drop --volume-iops, pass --volume-iops=300, or use gp3 "
        "for provisioned IOPS."
    )


def test_gp2_iops_equal_to_the_baseline_are_accepted_and_dropped() -> None:
    assert validate(Volume("gp2", size_gib=100, iops=300)).iops is None


def test_gp3_gets_its_included_iops_and_throughput_marked_as_defaults() -> None:
    volume = validate(Volume("gp3", size_gib=100, provenance={"size_gib": GIVEN}))
    assert (volume.iops, volume.throughput_mibps) == (3_000, 125.0)
    assert volume.provenance == {"size_gib": GIVEN, "iops": DEFAULT, "throughput_mibps": DEFAULT}


@pytest.mark.parametrize(
    ("volume", "message"),
    [
        (Volume("gp3", size_gib=100, iops=3_000, throughput_mibps=1_000),
         ("gp3 with 3,000 IOPS and 1,000 MiB/s is not a valid volume: gp3 allows at most 0.25 "
         "MiB/s per provisioned IOPS, so 3,000 IOPS allows up to 750 MiB/s (B-GP3). Pass "
         "--volume-throughput<=750 or more --volume-iops.")),
        (Volume("gp3", size_gib=100, throughput_mibps=100),
         "gp3 with 100 MiB/s is not a valid volume: gp3 allows 125 to 2,000 MiB/s (B-GP3)."),
        (Volume("io1", size_gib=200, iops=2_000, throughput_mibps=500),
         ("--volume-throughput applies only to gp3 volumes; io1 throughput follows from its IOPS "
         "(B-IO1). Drop --volume-throughput.")),
        (Volume("st1", size_gib=500, throughput_mibps=125), "st1 throughput follows from its size"),
    ],
)  # fmt: skip
def test_throughput_is_only_for_gp3_and_within_its_rules(volume: Volume, message: str) -> None:
    assert message in _error(volume)


def test_gp3_at_8000_iops_may_have_2000_mib_per_s() -> None:
    volume = validate(Volume("gp3", size_gib=16, iops=8_000, throughput_mibps=2_000))
    assert volume.throughput_mibps == 2_000


@pytest.mark.parametrize("vtype", ["st1", "sc1", "standard"])
def test_types_without_provisioned_iops_refuse_volume_iops(vtype: str) -> None:
    assert _error(Volume(vtype, size_gib=500, iops=500)).endswith("Drop --volume-iops.")


def test_burst_balance_must_be_a_percentage_of_a_bursting_type() -> None:
    assert "from 0 to 100, got 150" in _error(Volume("gp2", size_gib=100, burst_balance_pct=150))
    assert _error(Volume("gp3", size_gib=100, burst_balance_pct=50)) == (
        "--burst-balance applies to gp2, st1 and sc1; gp3 volumes do not burst (B-GP3). "
        "Drop --burst-balance."
    )


def test_instance_store_needs_an_instance_type_and_no_provisioned_figures() -> None:
    assert _error(Volume("instance-store")) == (
        "instance-store needs an instance type to know its published IOPS: pass "
        "--instance-type=NAME (for example i4i.xlarge). On EC2 it is discovered."
    )
    assert "Drop --volume-iops" in _error(
        Volume("instance-store", iops=1_000, instance_type="i3.large")
    )
    assert validate(Volume("instance-store", instance_type="i3.large")).type == "instance-store"


def test_an_unknown_instance_type_is_refused_unless_it_was_discovered() -> None:
    assert "is not an instance type the built-in table knows" in _error(
        Volume("gp3", size_gib=100, instance_type="m5.giant")
    )
    found = Volume("gp3", size_gib=100, instance_type="x9.large",
                   provenance={"instance_type": DISCOVERED})  # fmt: skip
    assert validate(found).instance_type == "x9.large"


def test_nitro_follows_the_instance_type_unless_given() -> None:
    xen = validate(Volume("io1", size_gib=100, iops=5_000, instance_type="c4.2xlarge"))
    assert xen.nitro is False and xen.provenance["nitro"] == DEFAULT
    kept = validate(Volume("io1", size_gib=100, iops=5_000, instance_type="c4.2xlarge",
                           nitro=True, provenance={"nitro": GIVEN}))  # fmt: skip
    assert kept.nitro is True


def test_the_type_is_normalised_to_lower_case_and_errors_are_config_errors() -> None:
    assert validate(Volume(" GP3 ", size_gib=100)).type == "gp3"
    assert issubclass(VolumeSpecError, ConfigError)
