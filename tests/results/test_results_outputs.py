"""What the results features produce from a run: seed-shaped tables, cost per performance,
pytest-benchmark costs, JUnit properties, pictures and the results file's schema."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support.common import DATA, ROOT

from pytest_ebsperf.aws.pricing import builtin_prices, monthly_cost
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.results import cost, history, junit, records, report, tables
from pytest_ebsperf.results.document import build_document
from pytest_ebsperf.results.pictures import series_figure, sweep_figure
from pytest_ebsperf.results.tables import Measurement

HERE = DATA / "results"
SCHEMA = json.loads((ROOT / "docs" / "results-schema.json").read_text())
KIB = 1024


def recorded(name: str = "baseline") -> dict[str, Any]:
    document: dict[str, Any] = json.loads((HERE / f"{name}.json").read_text())
    return document


# -- seed 001: repeated runs ------------------------------------------------------------------
SEED_001 = {"m3.large": (15937, 16243, 16151), "c3.large": (22338, 23183, 22785)}


def test_repeated_runs_are_shown_as_runs_a_b_c_with_mean_and_cv_like_seed_001() -> None:
    runs = [Measurement(volume, "Rand Write", 16 * KIB, iops, iops * 16 * KIB)
            for volume, values in SEED_001.items() for iops in values]
    lines = tables.runs_table(runs).splitlines()
    assert lines[0].split() == ["Check", "Volume", "Workload", "run", "A", "run", "B", "run",
                                "C", "mean", "CV"]
    m3 = lines[2].split()  # (no check named: plain measurements, grouped by volume)
    assert m3[:5] == ["-", "m3.large", "Rand", "Write", "16KiB"]
    assert m3[5:8] == ["15,937", "16,243", "16,151"]
    assert m3[8] == "16,110"  # seed 001's printed mean
    cv = statistics.stdev(SEED_001["m3.large"]) / statistics.fmean(SEED_001["m3.large"])
    assert m3[9] == f"{cv:.1%}"


def test_no_repeats_means_no_runs_table() -> None:
    once = [Measurement("gp2", "Rand Read", 16 * KIB, 3000, 3000 * 16 * KIB)]
    assert tables.runs_table(once) == ""


def test_the_claims_table_adds_the_gate_finding_when_compared() -> None:
    row = {"claim": "S0-04", "what": "io1 read", "outcome": "pass", "expected": "4,000 IOPS",
           "measured": "3,999 IOPS", "binding": "io1", "reason": "", "message": "",
           "compare": {"status": "within noise", "summary": "within noise (IOPS -3.0 %)"}}
    lines = report.claims_table([row]).splitlines()
    assert lines[0].rstrip().endswith("vs baseline")
    assert lines[2].rstrip().endswith("within noise (IOPS -3.0 %)")


# -- seed 003: cost per performance -------------------------------------------------------------
def test_cost_per_performance_divides_measurements_by_the_volume_month() -> None:
    measurements = recorded()["measurements"]
    table = cost.cost_table(measurements, "us-east-1")
    assert table is not None and "us-east-1" in table.source and "2025" in table.source
    row = table.rows[0]
    facts = measurements[0]["volume_facts"]
    volume = Volume(facts["type"], size_gib=facts["size_gib"], iops=facts["iops"])
    usd = monthly_cost(volume, builtin_prices("us-east-1").prices["io1"])
    assert row.monthly_usd == pytest.approx(usd)
    assert row.per_dollar(row.iops) == pytest.approx(measurements[0]["iops"] / usd)
    assert row.per_dollar(row.size_gib) == pytest.approx(facts["size_gib"] / usd)
    text = cost.format_cost_table(table)
    for header in ("$ per month", "IOPS per $", "MiB/s per $", "GiB per $"):
        assert header in text
    said = cost.caption(table)
    assert "laid out as seed 003's comparison" in said and "MB per $" not in said


def test_cost_uses_the_price_region_asked_for() -> None:
    measurements = recorded()["measurements"]
    tokyo = cost.cost_table(measurements, "ap-northeast-1")
    virginia = cost.cost_table(measurements, "us-east-1")
    assert tokyo is not None and virginia is not None
    assert "ap-northeast-1" in tokyo.source
    assert tokyo.rows[0].monthly_usd != virginia.rows[0].monthly_usd


# -- pytest-benchmark costs -------------------------------------------------------------------
def test_iops_are_recorded_as_seconds_per_io_one_round_per_second() -> None:
    document = recorded()
    row, measurement = document["checks"][0], document["measurements"][0]
    row = {**row, "unit": row["unit"], "expected_value": None}
    samples = history.cost_samples(row, measurement)
    iops = records.series_values(measurement, "total_iops")
    assert samples is not None and samples.cost_unit == "s/IO"
    assert samples.costs == pytest.approx([1 / v for v in iops])
    assert samples.value == pytest.approx(statistics.fmean(iops))
    info = history.extra_info(row, samples, [measurement])
    assert info["measurements"][0]["series"]["total_iops"]["values"] == iops


def test_a_check_without_samples_records_nothing() -> None:
    assert history.cost_samples({"unit": "IOPS"}, {"series": {}}) is None


@pytest.mark.parametrize("kwargs, words", [
    ({"save": False, "json_path": False, "compare": False}, ""),
    ({"save": True, "xdist": True}, "turns itself off under pytest-xdist"),
    ({"save": True, "disabled": True}, "--benchmark-disable"),
    ({"compare": True, "skip": True}, "--benchmark-skip"),
])
def test_history_is_recorded_only_when_asked_and_says_why_not(kwargs: dict[str, bool],
                                                              words: str) -> None:
    given = {"save": False, "json_path": False, "compare": False, "disabled": False,
             "skip": False, "xdist": False, **kwargs}
    active, note = history.history_state(**given)
    assert not active and words in note


def test_history_is_recorded_with_autosave() -> None:
    active, note = history.history_state(save=True, json_path=False, compare=False,
                                         disabled=False, skip=False, xdist=False)
    assert active and note == ""


# -- JUnit properties -------------------------------------------------------------------------
def test_junit_properties_are_flat_names_with_plain_values() -> None:
    document = recorded()
    check = document["checks"][0]
    row = {**check, "expected_value": check["expected"]["value"],
           "measured_value": check["measured"]["value"], "measured": check["measured"]["text"]}
    props = junit.flatten([("ebsperf", row), ("ebsperf_measurement", document["measurements"][0]),
                           ("mine", 1)], row_key="ebsperf", measurement_key="ebsperf_measurement")
    names = dict(props)
    assert names["ebsperf.S0-02.measured"] == check["measured"]["value"]
    assert names["ebsperf.S0-02.outcome"] == "info"
    assert names["ebsperf.run1.iops"] == document["measurements"][0]["iops"]
    assert "ebsperf.run1.read.clat_p99_ns" in names
    assert names["mine"] == 1
    assert not any(isinstance(value, (dict, list)) for _, value in props)


# -- pictures ---------------------------------------------------------------------------------
def test_a_series_picture_is_drawn_without_a_display(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    document = recorded()
    row = {"claim": "S0-04", "what": "read", "unit": "IOPS", "expected_value": 4000.0,
           "expected": "4,000 IOPS", "details": {"low": 0.9, "high": 1.1}}
    fig = series_figure(row, document["measurements"][0])
    assert fig is not None
    fig.savefig(tmp_path / "series.png")
    assert (tmp_path / "series.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_sweep_picture_needs_two_block_sizes() -> None:
    points = [{"bs": 32 * KIB, "expected_iops": 4000.0, "measured_iops": 3990.0},
              {"bs": 512 * KIB, "expected_iops": 1000.0, "measured_iops": 1001.0}]
    assert sweep_figure({"details": {"points": points}}) is not None
    assert sweep_figure({"details": {"points": points[:1]}}) is None


# -- the results file -------------------------------------------------------------------------
def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", ["baseline", "candidate-3pct", "candidate-15pct"])
def test_recorded_results_files_validate_against_the_schema(name: str) -> None:
    jsonschema.validate(recorded(name), SCHEMA)


def test_a_document_missing_its_measurements_does_not_validate() -> None:
    broken = recorded()
    del broken["measurements"][0]["series"]
    with pytest.raises(jsonschema.ValidationError, match="series"):
        jsonschema.validate(broken, SCHEMA)


def test_a_document_without_any_check_is_still_valid() -> None:
    document = build_document([], [], settings={}, environment={
        "plugin_version": "x", "pytest_version": "x", "python_version": "x", "kernel": "x",
        "os": "x", "hostname": "x", "fio_host": "local://"})
    jsonschema.validate(document, SCHEMA)
    assert document["instance"] == {"type": None, "provenance": "unknown"}


# -- the reference page stays in step with the schema ------------------------------------------
def test_the_reference_page_documents_every_top_level_key_of_the_schema() -> None:
    page = (ROOT / "docs" / "results-file.md").read_text()
    top = page.split("## Top level", 1)[1].split("\n## ", 1)[0]
    documented = {line.split("`")[1] for line in top.splitlines() if line.startswith("| `")}
    assert documented == set(SCHEMA["required"])


def test_a_results_path_that_is_a_device_is_written_into_never_replaced(tmp_path: Path) -> None:
    from pytest_ebsperf.results.document import write_document

    null = Path("/dev/null")
    assert null.is_char_device()
    write_document({"checks": []}, null)
    assert null.is_char_device()  # still the device node, not a regular file
    link = tmp_path / "report.json"
    target = tmp_path / "real.json"
    link.symlink_to(target)
    write_document({"checks": []}, link)
    assert link.is_symlink() and target.is_file()
