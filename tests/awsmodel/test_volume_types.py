"""A volume type is one record: its ranges agree with AWS's API model, and a type defined in one
place (here, in this file) is known to validation, the caps, the queue-depth planner, the
emulator, ``judge``, pricing and provisioning alike."""

from __future__ import annotations

import io
import re
from pathlib import Path

import botocore.session
import pytest
from support.common import DATA

from pytest_ebsperf import awsmodel
from pytest_ebsperf.aws import pricing
from pytest_ebsperf.aws.failures import ProvisionSpecError
from pytest_ebsperf.aws.spec import parse_provision_spec
from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.awsmodel.ebs import MIB
from pytest_ebsperf.awsmodel.types import DUTY_IO, VolumePrices
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import SSD, Provisioned, VolumeType
from pytest_ebsperf.config.consistency import validate as validate_settings
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.emulate import service_time
from pytest_ebsperf.emulate.target import emulated_default, volume_from_settings
from pytest_ebsperf.errors import VolumeSpecError
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.results import cost
from pytest_ebsperf.verdicts import judge


# -- the records against botocore's EC2 model -----------------------------------------------
def _create_volume_docs() -> dict[str, str]:
    model = botocore.session.get_session().get_service_model("ec2")
    members = model.operation_model("CreateVolume").input_shape.members
    return {name: re.sub(r"<[^>]+>", " ", members[name].documentation)
            for name in ("Size", "Iops", "Throughput")}


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _ranges(text: str) -> dict[str, tuple[int, int]]:
    """``gp3: 1 - 65,536 GiB`` and ``st1 and sc1: 125 - 16,384 GiB`` -> {type: (low, high)}."""
    found = {}
    for names, low, high in re.findall(r"([a-z0-9]+(?:\s+and\s+[a-z0-9]+)*)\s*:\s*([\d,]+)"
                                       r"\s*(?:\(\s*default\s*\))?\s*-\s*([\d,]+)", text):
        for name in re.split(r"\s+and\s+", names):
            found[name] = (_number(low), _number(high))
    return found


def test_the_ebs_types_are_the_ones_create_volume_takes() -> None:
    model = botocore.session.get_session().get_service_model("ec2")
    assert sorted(model.shape_for("VolumeType").enum) == sorted(volume_types.ebs_names())


def test_sizes_iops_and_throughput_are_create_volumes_documented_ranges() -> None:
    docs = _create_volume_docs()
    sizes, iops = _ranges(docs["Size"]), _ranges(docs["Iops"])
    assert sorted(sizes) == sorted(volume_types.ebs_names()), docs["Size"]
    for name, bounds in sizes.items():
        assert volume_types.volume_type(name).size_gib == bounds, name
    provisioned = {name for name in volume_types.ebs_names()
                   if volume_types.volume_type(name).iops is not None}
    assert sorted(iops) == sorted(provisioned), docs["Iops"]
    for name, (low, high) in iops.items():
        rule = volume_types.volume_type(name).iops
        assert rule is not None and (rule.low, rule.high) == (low, high), name
    (low, high), = (tuple(map(_number, m)) for m in
                    re.findall(r"Valid Range:\s*([\d,]+)\s*-\s*([\d,]+)", docs["Throughput"]))
    takes = [name for name in volume_types.ebs_names()
             if (rule := volume_types.volume_type(name).throughput_mibps) is not None]
    assert takes == [t for t in re.findall(r"\b(gp\d|io\d)\b", docs["Throughput"])]
    for name in takes:
        rule = volume_types.volume_type(name).throughput_mibps
        assert rule is not None and (rule.low, rule.high) == (low, high)


# -- a new type, defined here and nowhere else ------------------------------------------------
def _gp9_caps(volume: Volume, burst: bool, era: str) -> tuple[float, float]:
    iops = float(volume.iops or 6000)
    return iops, min(iops * 0.5, 3000.0)


GP9 = VolumeType(
    "gp9", "General Purpose SSD (gp9)", SSD, "B-GP9", 2026, _gp9_caps,
    source="https://example.invalid/gp9",
    size_gib=(10, 32_768),
    iops=Provisioned(6000, 120_000, 600, 6000),
    throughput_mibps=Provisioned(250, 3000, 0.5, 250),
    duty=DUTY_IO, latency_s=0.004, emulated_latency_us=900.0,
    emulated={"size_gib": 200, "iops": 8000, "throughput_mibps": 250},
    prices={"us-east-1": VolumePrices(0.07, iops_month=0.004, included_iops=6000)},
)


@pytest.fixture
def gp9() -> VolumeType:
    with volume_types.registered(GP9) as kind:
        yield kind
    assert "gp9" not in volume_types.names()


def test_validation_knows_the_new_types_ranges(gp9: VolumeType) -> None:
    volume = awsmodel.validate(Volume("gp9", size_gib=100))
    assert (volume.iops, volume.throughput_mibps) == (6000, 250)  # its included figures
    with pytest.raises(VolumeSpecError, match=r"gp9 allows at most 600 IOPS per GiB"):
        awsmodel.validate(Volume("gp9", size_gib=100, iops=90_000))
    with pytest.raises(VolumeSpecError, match=r"gp9 sizes run from 10 to 32,768 GiB \(B-GP9\)"):
        awsmodel.validate(Volume("gp9", size_gib=5))
    validate_settings(Settings(volume_type="gp9"))  # --volume-type=gp9 is a valid option


def test_messages_that_list_types_read_the_records(gp9: VolumeType) -> None:
    """"credit checks apply to gp2, st1 and sc1": a new type joins the list it belongs to."""
    assert volume_types.bursting_names() == "gp2, st1 and sc1"
    assert volume_types.bursting_names(False).endswith(", instance-store and gp9")
    assert "gp2" not in volume_types.bursting_names(False)


def test_the_caps_and_the_expectation_come_from_the_record(gp9: VolumeType) -> None:
    volume = awsmodel.validate(Volume("gp9", size_gib=100, iops=10_000))
    caps = awsmodel.volume_caps(volume)
    assert (caps.iops, caps.throughput_bps) == (10_000, 3000 * MIB)
    found = awsmodel.cap_expectation("X", "gp9 read", volume, Workload("randread", 16384))
    assert found.value == 10_000 and found.duty == DUTY_IO
    assert found.binding is not None and found.binding.claim == "B-GP9"
    assert found.binding.source == "https://example.invalid/gp9"


def test_the_planner_uses_the_types_latency(gp9: VolumeType) -> None:
    volume = awsmodel.validate(Volume("gp9", size_gib=100, iops=10_000))
    workload = Workload("randread", 16384)
    assert awsmodel.default_latency_s(volume, workload) == 0.004
    depth, jobs = awsmodel.default_queue_depth(volume, workload, 10_000, cpu_count=2)
    assert depth * jobs >= 10_000 * 0.004  # enough I/Os in flight at 4 ms each


def test_the_emulator_makes_the_types_default_volume(gp9: VolumeType) -> None:
    assert emulated_default("gp9", "now") == Volume("gp9", size_gib=200, iops=8000,
                                                    throughput_mibps=250)
    volume = volume_from_settings(Settings(emulate=True), "gp9")
    assert (volume.type, volume.size_gib, volume.iops) == ("gp9", 200, 8000)
    assert service_time.for_volume("auto", "gp9") == 900.0


def test_judge_judges_fio_output_against_the_new_type(gp9: VolumeType) -> None:
    out = io.StringIO()
    code = judge.main([str(DATA / "fio" / "randread.json"), "--volume-type=gp9",
                       "--volume-size=100", "--volume-iops=6000"], out=out)
    said = out.getvalue()
    assert code in (0, 1, 2), said
    assert "gp9" in said and "6,000 IOPS" in said


def test_pricing_and_provisioning_know_the_new_type(gp9: VolumeType) -> None:
    table = pricing.builtin_prices("us-east-1")
    volume = Volume("gp9", size_gib=100, iops=7000)
    assert pricing.monthly_cost(volume, table.prices["gp9"]) == pytest.approx(100 * 0.07 + 1000 * 0.004)
    usd, _ = cost.monthly_price({"type": "gp9", "size_gib": 100, "iops": 7000}, "us-east-1")
    assert usd == pytest.approx(11.0)
    (parsed,) = parse_provision_spec("gp9:100:7000")
    assert (parsed.type, parsed.iops) == ("gp9", 7000)
    with pytest.raises(ProvisionSpecError, match="gp9 allows at most 600 IOPS per GiB"):
        parse_provision_spec("gp9:10:7000")


def test_an_unknown_type_is_a_sentence_naming_the_known_ones() -> None:
    with pytest.raises(VolumeSpecError, match=r"'gp9' is not a valid --volume-type\. Valid "
                                              r"types: gp2, gp3, io1, io2, st1, sc1"):
        awsmodel.validate(Volume("gp9", size_gib=100))


def test_no_other_module_names_a_volume_type() -> None:
    """Each type's name is written (as a value, docstrings aside) in the records, the seeds'
    own tables and at most one more module outside the suites."""
    import ast

    package = Path(awsmodel.__file__).resolve().parent.parent
    where: dict[str, set[str]] = {name: set() for name in volume_types.names()}
    for path in package.rglob("*.py"):
        if "suites" in path.relative_to(package).parts:
            continue
        tree = ast.parse(path.read_text())
        docs = {id(node.body[0].value) for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef,
                                     ast.AsyncFunctionDef))
                and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in where and id(node) not in docs:
                where[str(node.value)].add(str(path.relative_to(package)))
    assert {name: sorted(found) for name, found in where.items() if len(found) > 3} == {}
