"""The results features as users meet them: options, the regression gate's failures, the
results file, JUnit properties, pictures, the HTML report and pytest-benchmark storage.

Runs on emulated volumes need root and fio (they skip otherwise); one shared run with every
output option feeds several tests, to keep the wall time short.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Any

import jsonschema
import pytest
from support.common import DATA, ROOT, needs_fio, needs_root

HERE = DATA / "results"
SCHEMA = json.loads((ROOT / "docs" / "results-schema.json").read_text())
#: "--ebsperf-miss-spell=1": seconds of a 2-3 s run are taken as independent, so the count can
#: FAIL in them and a PASS there is evidence (under 3 s spells it could not FAIL in 3 s).
FAST = ("--emulate", "--ebsperf-miss-spell=1", "--ebsperf-runtime=3", "--ebsperf-ramp=0.5",
        "-p", "no:cacheprovider")

SUITE = """
import pytest
pytestmark = pytest.mark.ebsperf(volume_type="io1")

@pytest.mark.parametrize("run", ["a", "b"])
def test_random_read_holds_provisioned_iops(ebsperf, run):
    ebsperf.check_cap("S0-04", "io1 random read 16 KiB", ebsperf.workload("randread", "16k"))

def test_block_size_sweep(ebsperf):
    ebsperf.check_sweep("S2-08", "io1 sweep, random read", "randread", ["64k", "512k"])
"""


# -- options and usage errors (no fio needed) -------------------------------------------------
def test_help_lists_the_results_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--ebsperf-plots=DIR*", "*--ebsperf-report=FILE*",
                                 "*--ebsperf-compare=RUN|FILE*",
                                 "*--ebsperf-compare-threshold=PCT*", "*Default: 10.0*",
                                 "*--ebsperf-price-region=REGION*"])


def test_a_missing_baseline_stops_the_run_saying_how_to_create_one(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest("--ebsperf-compare=current-ami.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([("*No baseline at current-ami.json*does not exist*"
                                  "--ebsperf-report=FILE.json*--ebsperf-compare=FILE.json*")])
    assert "Traceback" not in result.stderr.str()


def test_an_unknown_run_id_lists_the_saved_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest("--ebsperf-compare=0007")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no saved pytest-benchmark run matches it*holds no saved*"])


def test_a_threshold_that_is_not_positive_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--ebsperf-compare-threshold=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ebsperf-compare-threshold must be a positive percentage*"])


def test_benchmark_disable_says_history_is_not_recorded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest("--benchmark-autosave", "--benchmark-disable")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*history not recorded: --benchmark-disable is set*"])


def test_under_xdist_history_says_it_is_off_and_nothing_crashes(
        pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest("-n", "1", "--benchmark-autosave")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([("*history not recorded: pytest-benchmark turns itself off "
                                  "under pytest-xdist*")])


def test_a_plain_run_writes_no_history(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(): pass")
    pytester.runpytest().assert_outcomes(passed=1)
    assert not list(pytester.path.glob(".benchmarks/*/*.json"))


# -- the regression gate on emulated volumes ----------------------------------------------------
def gate_run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(gate_suite=(HERE / "gate_suite.py").read_text())
    return pytester.runpytest_subprocess("gate_suite.py", "--emulate", "--ebsperf-plots=none",
                                         "-p", "no:cacheprovider", *args)


@needs_root
@needs_fio
def test_a_volume_3_percent_slower_than_the_baseline_passes_within_noise(
        pytester: pytest.Pytester) -> None:
    result = gate_run(pytester, "--ebsperf-runtime=3", "--emulate-factor=0.97",
                      f"--ebsperf-compare={HERE / 'baseline.json'}")
    assert result.ret == 0 and result.parseoutcomes().get("info") == 1  # a recorded check
    result.stdout.fnmatch_lines(["*S0-02*INFO*within noise*",
                                 "*compared with*baseline.json*1 tests, 0 regressed*"])


@needs_root
@needs_fio
def test_a_volume_15_percent_slower_fails_with_both_values_and_the_noise(
        pytester: pytest.Pytester) -> None:
    result = gate_run(pytester, "--ebsperf-runtime=8", "--emulate-factor=0.85",
                      f"--ebsperf-compare={HERE / 'baseline.json'}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*Regression against the baseline: S0-02 io1 random read 4 KiB (randread 4KiB*",
        "* now vs * in the baseline (*threshold 10 %: statistically clear (p *",
        "*noise: sd * over * s now, sd * over 5 s in the baseline; 99% CI of the change*",
        "*Baseline: *baseline.json*",
        "*REGRESSION S0-02*",
    ])
    assert "Traceback" not in result.stdout.str()


@needs_root
@needs_fio
def test_checks_go_to_pytest_benchmark_storage_that_its_compare_reads_and_the_gate_uses(
        pytester: pytest.Pytester) -> None:
    store = pytester.path / "store"
    first = gate_run(pytester, "--ebsperf-runtime=2", "--benchmark-autosave",
                     f"--benchmark-storage=file://{store}")
    assert first.ret == 0 and first.parseoutcomes().get("info") == 1  # a recorded check
    saved = list(store.glob("*/0001_*.json"))
    assert len(saved) == 1
    data = json.loads(saved[0].read_text())
    bench = data["benchmarks"][0]
    assert bench["group"] == "ebsperf" and bench["options"]["timer"] == "VirtualClock"
    assert bench["extra_info"]["ebsperf"]["unit"] == "IOPS"
    assert data["machine_info"]["ebsperf"]["emulate"] is True
    # the cost is seconds per I/O, so pytest-benchmark's OPS is the IOPS
    iops = bench["extra_info"]["ebsperf"]["value"]
    assert bench["stats"]["mean"] == pytest.approx(
        sum(1 / v for v in bench["extra_info"]["ebsperf"]["measurements"][0]["series"]
            ["total_iops"]["values"]) / bench["stats"]["rounds"])
    assert 0.9 * iops < bench["stats"]["ops"] < 1.1 * iops
    cli = shutil.which("pytest-benchmark") or ""
    shown = subprocess.run([cli, "--storage", f"file://{store}", "compare", "0001",
                            "--columns=mean,ops,rounds"], capture_output=True, text=True,
                           check=True, cwd=pytester.path)
    assert "test_random_read_is_recorded" in shown.stdout
    second = gate_run(pytester, "--ebsperf-runtime=2", "--ebsperf-compare=0001",
                      f"--benchmark-storage=file://{store}")
    assert second.ret == 0 and second.parseoutcomes().get("info") == 1
    second.stdout.fnmatch_lines(["*compared with*0001_*.json*1 tests, 0 regressed*"])


# -- one run with every output option ---------------------------------------------------------
@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """pytest on the emulated io1 suite with the results file, pictures, JUnit and HTML."""
    if not (os.geteuid() == 0 and shutil.which("fio") and shutil.which("losetup")):
        pytest.skip("needs root, losetup and fio for emulated volumes")
    pytest.importorskip("pytest_html")
    work = tmp_path_factory.mktemp("full")
    (work / "test_io1_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "test_io1_suite.py", *FAST, "-p", "no:benchmark",
         "--ebsperf-report=results.json", "--ebsperf-plots=pictures", "--junitxml=junit.xml",
         "--html=report.html", "--ebsperf-tables=all"], cwd=work, capture_output=True,
        text=True, env=env, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return {"dir": work, "stdout": done.stdout}


def test_the_results_file_validates_and_holds_every_check_and_series(
        full_run: dict[str, Any]) -> None:
    document = json.loads((full_run["dir"] / "results.json").read_text())
    jsonschema.validate(document, SCHEMA)
    assert [c["claim"] for c in document["checks"]] == ["S0-04", "S0-04", "S2-08"]
    assert len(document["measurements"]) == 4  # two reads, two sweep points
    for measurement in document["measurements"]:
        assert measurement["series"]["total_iops"]["values"]
        assert measurement["volume_facts"]["provenance"]["device"] == "emulated"
    assert document["environment"]["fio_version"].startswith("fio-")
    assert document["settings"]["runtime"] == {"value": 3.0,
                                               "origin": "command line (--ebsperf-runtime)"}
    assert document["cost"]["rows"][0]["iops_per_usd"] > 0


def test_junit_xml_carries_flat_ebsperf_properties(full_run: dict[str, Any]) -> None:
    tree = ET.parse(full_run["dir"] / "junit.xml")
    props = {p.get("name"): p.get("value") for case in tree.iter("testcase")
             if case.get("name") == "test_random_read_holds_provisioned_iops[a]"
             for p in case.iter("property")}
    document = json.loads((full_run["dir"] / "results.json").read_text())
    first = document["checks"][0]
    assert props["ebsperf.S0-04.measured"] == str(first["measured"]["value"])
    assert props["ebsperf.S0-04.outcome"] == "pass"
    assert props["ebsperf.run1.workload"] == first["workload"]
    assert "ebsperf" not in props and not any(v and v.startswith("{") for v in props.values())


def test_a_picture_is_saved_per_check(full_run: dict[str, Any]) -> None:
    names = sorted(p.name for p in (full_run["dir"] / "pictures").glob("*.png"))
    assert len(names) == 3
    assert sum("series" in n for n in names) == 2 and sum("sweep" in n for n in names) == 1


class _Parts(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.headers: list[str] = []
        self.images = 0
        self._in_th = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_th = tag == "th"
        if tag == "img" and (dict(attrs).get("src") or "").startswith("data:image/png"):
            self.images += 1

    def handle_data(self, data: str) -> None:
        if self._in_th and data.strip():
            self.headers.append(data.strip())


def test_the_html_report_embeds_the_tables_and_pictures(full_run: dict[str, Any]) -> None:
    parts = _Parts()
    parts.feed((full_run["dir"] / "report.html").read_text())
    # (two parametrized tests are two checks, not runs of one: no runs table here)
    for header in ("Claim", "Binding limit", "Block size", "IOPS per $"):
        assert header in parts.headers
    assert "run A" not in parts.headers
    assert parts.images >= 3


def test_the_terminal_summary_has_the_seed_shaped_tables(full_run: dict[str, Any]) -> None:
    out = full_run["stdout"]
    for title in ("ebsperf: claims", "ebsperf: IOPS / MiB/s by volume and access pattern",
                  "ebsperf: cost per performance"):
        assert title in out
    assert "as seed 000's table" in out and "laid out as seed 003's" in out
    assert "ebsperf: runs of one check" not in out  # two tests are not runs of one check
    assert "results file: results.json" in out


def test_every_option_in_the_gate_how_to_exists(pytester: pytest.Pytester) -> None:
    page = (ROOT / "docs" / "howto-gate-ami.md").read_text()
    flags = set(re.findall(r"(--(?:ebsperf|volume|instance|emulate|benchmark)[a-z-]*)", page))
    help_text = pytester.runpytest("--help").stdout.str()
    missing = sorted(flag for flag in flags if f"{flag}=" not in help_text
                     and f"{flag} " not in help_text)
    assert flags and not missing
