"""Report rows, the claims table and the seed-shaped measurement table."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ebsperf.results import report, tables
from pytest_ebsperf.results.report import ReportRow
from pytest_ebsperf.results.tables import Measurement
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

KIB = 1024
MIB = 1024 * 1024
URL = "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimization.html"


def verdict(outcome: Outcome = Outcome.FAIL, claim: str = "S0-04", measured: float = 1512,
            binding: str = "volume provisioned IOPS") -> Verdict:
    return Verdict(outcome, claim, "io1 random read 16 KiB", 2000.0, measured, "IOPS",
                   binding, "below 90 % of 2,000 IOPS in 60 of 60 seconds",
                   f"io1 random read 16 KiB: 1,512 IOPS measured ... Claim {claim}, {URL}",
                   "CAP", {"fraction_met": 0.0, "limits": ({"name": "x"},),
                           "odd": float("nan"), "outcome": Outcome.PASS})


def row(outcome: Outcome = Outcome.FAIL, volume: str = "io1 200 GiB 2,000 IOPS",
        claim: str = "S0-04", measured: float = 1512) -> dict[str, Any]:
    return report.row_from_verdict(verdict(outcome, claim, measured), volume_label=volume,
                                   workload_label="randread 16KiB QD32x1",
                                   nodeid="suites/io1/test_io1.py::test_x",
                                   fio_summary={"fio_version": "fio-3.33", "fio_wall_s": None})


# -- rows ---------------------------------------------------------------------------------
def test_a_row_is_plain_json_that_survives_a_round_trip() -> None:
    data = row()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["outcome"] == "fail"
    assert data["expected"] == "2,000 IOPS" and data["measured"] == "1,512 IOPS"
    assert data["details"]["odd"] is None  # NaN is not JSON
    assert data["details"]["outcome"] == "pass"
    assert data["details"]["limits"] == [{"name": "x"}]


def test_a_row_rebuilds_as_a_report_row_ignoring_extra_keys() -> None:
    data = row()
    data["notes"] = ["burst balance unknown"]
    rebuilt = ReportRow.from_dict(data)
    assert rebuilt.claim == "S0-04"
    assert rebuilt.volume == "io1 200 GiB 2,000 IOPS"
    assert rebuilt.fio == {"fio_version": "fio-3.33", "fio_wall_s": None}


# -- claims table -------------------------------------------------------------------------
def test_the_claims_table_has_one_row_per_claim_with_the_promised_columns() -> None:
    text = report.claims_table([row(), row(Outcome.PASS, claim="S2-06", measured=2010)])
    lines = text.splitlines()
    for header in ("Claim", "What", "Expected", "Measured", "Verdict", "Binding limit"):
        assert header in lines[0]
    assert "Volume" not in lines[0]
    body = lines[2:]
    assert len(body) == 2
    assert body[0].split()[0] == "S0-04" and "1,512 IOPS" in body[0] and "FAIL" in body[0]
    assert "volume provisioned IOPS" in body[0]
    assert body[1].split()[0] == "S2-06" and "2,010 IOPS" in body[1] and "PASS" in body[1]


def test_the_claims_table_adds_a_volume_column_for_several_volumes() -> None:
    text = report.claims_table([row(volume="encrypted"), row(volume="plain")])
    assert "Volume" in text.splitlines()[0]
    assert "encrypted" in text and "plain" in text


def test_outcome_counts_follow_the_outcome_order() -> None:
    rows = [row(Outcome.PASS), row(Outcome.FAIL), row(Outcome.PASS), row(Outcome.INFO)]
    assert report.outcome_counts(rows) == "2 pass, 1 fail, 1 info"


# -- seed table ---------------------------------------------------------------------------
SEED_000 = [  # seed 000: Magnetic vs gp2, 16 KiB, IOPS as printed
    ("Magnetic 100 GB", "Seq Read", 3694), ("Magnetic 100 GB", "Seq Write", 1969),
    ("Magnetic 100 GB", "Rand Read", 2849), ("Magnetic 100 GB", "Rand Write", 1907),
    ("Magnetic 100 GB", "Rand RW 70/30", 2198),
    ("gp2 100 GB", "Rand RW 70/30", 3064), ("gp2 100 GB", "Rand Write", 2681),
    ("gp2 100 GB", "Rand Read", 3064), ("gp2 100 GB", "Seq Write", 2894),
    ("gp2 100 GB", "Seq Read", 3064),
]


def seed_000() -> list[Measurement]:
    return [Measurement(v, t, 16 * KIB, iops, iops * 16 * KIB) for v, t, iops in SEED_000]


def test_the_seed_table_has_volumes_as_rows_and_patterns_in_seed_order() -> None:
    lines = tables.seed_table(seed_000()).splitlines()
    header = lines[0].split("  ")
    columns = [c.strip() for c in header if c.strip()]
    assert columns == ["Volume", "Seq Read", "Seq Write", "Rand Read", "Rand Write",
                       "Rand RW 70/30"]
    assert lines[2].startswith("Magnetic 100 GB")
    assert "3,694 / 57.7" in lines[2]
    assert lines[3].startswith("gp2 100 GB")
    assert lines[3].count("3,064 / 47.9") == 3


def test_the_seed_table_shows_only_measured_patterns_and_adds_new_ones_after() -> None:
    measurements = [("gp2", "Rand Read", 16 * KIB, 3000, 3000 * 16 * KIB),
                    ("gp2", "Rand RW 50/50", 16 * KIB, 3064, 3064 * 16 * KIB)]
    header = tables.seed_table(measurements).splitlines()[0]
    assert "Rand Read" in header and header.index("Rand Read") < header.index("Rand RW 50/50")
    assert "Seq Read" not in header and "Rand RW 70/30" not in header


def test_a_pattern_at_several_block_sizes_gets_a_line_per_size() -> None:
    measurements = [{"volume": "io1", "title": "Rand Read", "bs": bs, "iops": 4000.0,
                     "bw_bytes": 4000.0 * bs, "pattern": "randread"}
                    for bs in (4 * KIB, 32 * KIB)]
    lines = tables.seed_table(measurements).splitlines()
    assert lines[0].split() == ["Volume", "Block", "size", "Rand", "Read"]
    assert lines[2].split() == ["io1", "4KiB", "4,000", "/", "15.6"]
    assert lines[3].split() == ["32KiB", "4,000", "/", "125"]  # the volume is named once


def test_repeated_runs_of_one_cell_are_averaged() -> None:
    runs = [("m3.large", "Rand Write", 16 * KIB, iops, iops * 16 * KIB)
            for iops in (15937, 16243, 16151)]
    assert "16,110 / 252" in tables.seed_table(runs)  # 16 KiB x 16,110 = 251.7 MiB/s


def test_an_empty_seed_table_is_empty() -> None:
    assert tables.seed_table([]) == ""


# -- terminal summary ---------------------------------------------------------------------
def _lines(rows: object, measurements: object) -> list[str]:
    out: list[str] = []
    for title, body in report.terminal_sections(rows, measurements,  # type: ignore[arg-type]
                                                tables=report.OPTIONAL_TABLES):
        out += [f"== {title} ==", *body]
    return out


def test_terminal_sections_have_titles_and_spell_out_findings() -> None:
    sections = report.terminal_sections([row(), row(Outcome.PASS, claim="S2-06")], seed_000(),
                                         tables=("seed",), counts="tests: 1 failed, 1 passed")
    assert [title for title, _ in sections] == [report.CLAIMS_TITLE, tables.SEED_TITLE]
    assert tables.SEED_TITLE == "ebsperf: IOPS / MiB/s by volume and access pattern"
    lines = [line for _, body in sections for line in body]
    assert "tests: 1 failed, 1 passed" in lines  # pytest's own counts, said as pytest says
    # the failure's finding is pytest's failure report (said once), not repeated here
    assert not any(line.startswith(("FAIL S0-04", "PASS S2-06")) for line in lines)
    assert any(line.startswith("S0-04 ") and "FAIL" in line for line in lines)
    assert any(line.startswith("cells: IOPS / MiB/s at 16KiB") and "as seed 000's table" in line
               for line in lines)


@pytest.mark.parametrize("rows, measurements, titles", [
    ([], [], []),
    ("one row", [], ["== ebsperf: claims =="]),
    ([], "seed", [f"== {tables.SEED_TITLE} =="]),
])
def test_terminal_sections_leave_out_empty_ones(rows: object, measurements: object,
                                                 titles: list[str]) -> None:
    given_rows = [row()] if rows else []
    given_measurements = seed_000() if measurements else []
    lines = _lines(given_rows, given_measurements)
    assert [line for line in lines if line.startswith("== ")] == titles
