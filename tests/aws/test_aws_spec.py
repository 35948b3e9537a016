"""Volume specs for provisioned runs: parsed when AWS would accept them, sentences otherwise."""

from __future__ import annotations

import pytest

from pytest_ebsperf.aws import parse_provision_spec
from pytest_ebsperf.aws.failures import ProvisionSpecError
from pytest_ebsperf.awsmodel.volume import GIVEN


def test_a_matrix_of_three_specs_becomes_three_given_volumes() -> None:
    specs = parse_provision_spec("gp3:100, io1:200:4000,gp3:500:6000:500")
    assert [(v.type, v.size_gib, v.iops, v.throughput_mibps) for v in specs] == [
        ("gp3", 100, None, None),
        ("io1", 200, 4000, None),
        ("gp3", 500, 6000, 500.0),
    ]
    assert dict(specs[2].provenance) == {
        "type": GIVEN, "size_gib": GIVEN, "iops": GIVEN, "throughput_mibps": GIVEN,
    }
    assert "iops" not in specs[0].provenance


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("gp9:100", (r"^Volume spec 'gp9:100': 'gp9' is not a volume type that can be "
                     r"provisioned\. Valid types: gp2, gp3, io1, io2, st1, sc1, standard\.$")),
        ("gp3", r"^Volume spec 'gp3' has 1 fields\. Expected type:size\[:iops\[:throughput\]\]"),
        ("gp3:1:2:3:4", r"has 5 fields"),
        ("gp3:big", r"^Volume spec 'gp3:big': 'big' is not a whole number for the size\."),
        ("gp3:100,", r"^Volume specs 'gp3:100,' contain an empty spec\."),
        ("gp2:100:300", r"gives IOPS, but gp2 IOPS are not provisioned .*Use gp2:100\."),
        ("io1:100", r"needs provisioned IOPS for io1: io1:100:IOPS\."),
        ("io1:100:6000", (r"asks for 6,000 IOPS on 100 GiB; io1 allows at most 50 IOPS per GiB "
                          r"\(5,000 IOPS for this size\)\.")),
        ("gp3:100:3000:1000", (r"asks for 1,000 MiB/s with 3,000 IOPS; gp3 allows at most "
                               r"0\.25 MiB/s per IOPS \(750 MiB/s\)\.")),
        ("st1:100", r"st1 size 100 GiB is outside what AWS accepts \(125-16,384 GiB\)\."),
        ("io1:200:4000:500", r"gives a throughput, but only gp3 throughput is provisioned\."),
        ("gp3:100:90000", r"gp3 IOPS 90,000 IOPS is outside what AWS accepts \(3,000-80,000"),
    ],
)
def test_a_spec_aws_would_refuse_is_a_sentence_saying_why(text: str, sentence: str) -> None:
    with pytest.raises(ProvisionSpecError, match=sentence):
        parse_provision_spec(text)


def test_todays_limits_are_accepted_at_their_edges() -> None:
    edges = "gp3:160:80000:2000,io2:256:256000,io1:1280:64000,sc1:125,standard:1024,gp2:16384"
    assert len(parse_provision_spec(edges)) == 6


def test_the_option_a_spec_came_from_is_named_in_the_sentence() -> None:
    with pytest.raises(ProvisionSpecError, match=r"^Volume spec 'gp3:0' \(from ebsperf_provision "
                       r"in pytest\.ini\): gp3 size 0 GiB is outside"):
        parse_provision_spec("gp3:0", source="ebsperf_provision in pytest.ini")
