"""INFO and INCONCLUSIVE as outcomes of their own: the progress line, -v, the counts, the
short summary, JUnit XML, pytest-html, xdist and the exit status, with and without
--ebsperf-strict (pytester; verdicts given directly, on a scratch loop device: no fio)."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest
from support.common import needs_root

TESTS = """
import pytest
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

pytestmark = pytest.mark.ebsperf(volume_type="io1")


def verdict(outcome, claim="S0-04", what="a check"):
    return Verdict(Outcome(outcome), claim, what, 1.0, 1.0, "IOPS", "volume cap",
                   f"{outcome} reason", f"{what}: the {outcome.upper()} finding. Claim {claim}")


def test_recorded(ebsperf):
    ebsperf.conclude_plain(verdict("info", "S2-04", "recorded rate"))


def test_undecided(ebsperf):
    ebsperf.conclude_plain(verdict("inconclusive", "S0-04", "short sample"))


def test_judged(ebsperf):
    ebsperf.conclude_plain(verdict("pass"))


def test_prewarm_recorded_then_judged(ebsperf):
    ebsperf.conclude_plain(verdict("info", "S1-04", "pre-warm"))
    ebsperf.conclude_plain(verdict("pass", "S1-08", "after TRIM"))
"""
FACTS = ("--volume-type=io1", "--volume-size=100", "--volume-iops=1000",
         "--ebsperf-no-discovery", "-p", "no:cacheprovider")


@pytest.fixture
def run(pytester: pytest.Pytester, loop_device: Callable[..., str]
        ) -> Callable[..., pytest.RunResult]:
    device = loop_device(size_mib=16)
    pytester.makepyfile(test_outcomes_here=TESTS)

    def go(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess(f"--device={device}", *FACTS, *args)

    return go


@needs_root
def test_info_and_inconclusive_have_their_own_letters_words_and_counts(
        run: Callable[..., pytest.RunResult]) -> None:
    result = run()
    result.stdout.fnmatch_lines(["test_outcomes_here.py I?..*"])
    result.stdout.fnmatch_lines(["*2 passed, 1 info, 1 inconclusive in *"])
    assert result.ret == 0
    verbose = run("-v")
    verbose.stdout.fnmatch_lines(["*::test_recorded INFO*", "*::test_undecided INCONCLUSIVE*",
                                  "*::test_judged PASSED*",
                                  "*::test_prewarm_recorded_then_judged PASSED*"])
    assert "test_recorded PASSED" not in verbose.stdout.str()


@needs_root
def test_the_short_summary_names_each_info_and_inconclusive_test(
        run: Callable[..., pytest.RunResult]) -> None:
    result = run("-rs", "-vv")
    result.stdout.fnmatch_lines([
        "*short test summary info*",
        ("INCONCLUSIVE test_outcomes_here.py::test_undecided - short sample: the "
         "INCONCLUSIVE finding. Claim S0-04"),
        ("INFO test_outcomes_here.py::test_recorded - recorded rate: the INFO finding. Claim "
         "S2-04"),
    ])
    assert "SKIPPED" not in result.stdout.str()
    only = run("-rI")
    only.stdout.fnmatch_lines(["*short test summary info*", "INFO *::test_recorded*"])
    quiet = run()  # pytest's default -r shows failures and errors only
    assert "INFO test_outcomes_here.py" not in quiet.stdout.str()


@needs_root
@pytest.mark.parametrize(("strict", "fails"), [
    ("--ebsperf-strict", {"test_recorded", "test_undecided"}),
    ("--ebsperf-strict=inconclusive", {"test_undecided"}),
    ("--ebsperf-strict=info", {"test_recorded"}),
    ("--ebsperf-strict=none", set()),
])
def test_strict_decides_which_outcomes_fail_the_run(
        run: Callable[..., pytest.RunResult], strict: str, fails: set[str]) -> None:
    result = run(strict, "-rf")
    failed = {name for name in ("test_recorded", "test_undecided", "test_judged",
                                "test_prewarm_recorded_then_judged")
              if f"FAILED test_outcomes_here.py::{name}" in result.stdout.str()}
    assert failed == fails, result.stdout.str()[-3000:]
    assert result.ret == (1 if fails else 0)
    if "test_recorded" in fails:
        result.stdout.fnmatch_lines(["*INFO fails the run: --ebsperf-strict*"])


@needs_root
def test_the_strict_flag_before_a_path_does_not_swallow_the_path(
        pytester: pytest.Pytester, loop_device: Callable[..., str]) -> None:
    device = loop_device(size_mib=16)
    pytester.makepyfile(test_outcomes_here=TESTS)
    result = pytester.runpytest_subprocess("--ebsperf-strict", "test_outcomes_here.py",
                                           f"--device={device}", *FACTS)
    result.stdout.fnmatch_lines(["*2 failed, 2 passed*"])
    bad = pytester.runpytest_subprocess("--ebsperf-strict=sometimes", f"--device={device}",
                                        *FACTS)
    assert bad.ret == 4
    bad.stderr.fnmatch_lines(["*'sometimes' is none of inconclusive, info*"])


@needs_root
def test_junit_gives_info_and_inconclusive_their_own_skip_type_and_property(
        run: Callable[..., pytest.RunResult], pytester: pytest.Pytester) -> None:
    xml = pytester.path / "junit.xml"
    result = run(f"--junitxml={xml}")
    assert result.ret == 0
    cases = {case.get("name"): case for case in ET.parse(xml).iter("testcase")}
    recorded = cases["test_recorded"]
    skipped = recorded.find("skipped")
    assert skipped is not None and skipped.get("type") == "ebsperf.info"
    assert (skipped.get("message") or "").startswith("INFO: recorded rate: the INFO finding")
    props = {p.get("name"): p.get("value") for p in recorded.iter("property")}
    assert props["ebsperf.outcome"] == "info"
    undecided = cases["test_undecided"].find("skipped")
    assert undecided is not None and undecided.get("type") == "ebsperf.inconclusive"
    assert cases["test_judged"].find("skipped") is None
    assert cases["test_prewarm_recorded_then_judged"].find("skipped") is None
    suite = next(ET.parse(xml).iter("testsuite"))
    assert suite.get("skipped") == "2" and suite.get("failures") == "0"


@needs_root
def test_outcomes_cross_xdist_workers(run: Callable[..., pytest.RunResult]) -> None:
    result = run("-n", "2", "-rs")
    result.stdout.fnmatch_lines(["*2 passed, 1 info, 1 inconclusive*"])
    result.stdout.fnmatch_lines(["INFO *::test_recorded - recorded rate*"])


@needs_root
def test_pytest_html_shows_the_outcome_word(run: Callable[..., pytest.RunResult],
                                            pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html")
    page = pytester.path / "report.html"
    result = run(f"--html={page}", "--self-contained-html")
    assert result.ret == 0
    text = html.unescape(page.read_text())
    blob = re.search(r'data-jsonblob="(.*?)"></div>', page.read_text(), re.DOTALL)
    assert blob is not None
    rows = json.loads(html.unescape(blob.group(1)))["tests"]
    cells = {nodeid.split("::")[-1]: entries[0]["resultsTableRow"][0]
             for nodeid, entries in rows.items()}
    assert cells["test_recorded"] == '<td class="col-result">INFO</td>'
    assert cells["test_undecided"] == '<td class="col-result">INCONCLUSIVE</td>'
    assert cells["test_judged"] == '<td class="col-result">Passed</td>'
    assert "tests: 2 passed, 1 INFO, 1 INCONCLUSIVE" in text
    assert "2 pass, 1 inconclusive, 2 info" in text


def test_unknown_strict_values_name_the_choices() -> None:
    from pytest_ebsperf.config.settings import parse_strict
    from pytest_ebsperf.errors import ConfigError

    assert parse_strict("all", "x") == {"inconclusive", "info"}
    assert parse_strict("info", "x") == {"info"}
    assert parse_strict("false", "x") == frozenset()
    with pytest.raises(ConfigError, match="put test paths before the flag"):
        parse_strict("suites/io1", "command line")


FAILING = """
import pytest
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

pytestmark = pytest.mark.ebsperf(volume_type="io1")
PARAGRAPH = ("io1 random read 16 KiB: 2,000 IOPS measured, 4,000 IOPS expected. "
             + "A long finding that explains the sample. " * 30 + "Claim S0-04")


def test_slow(ebsperf):
    ebsperf.conclude_plain(Verdict(Outcome.FAIL, "S0-04", "io1 random read 16 KiB", 4000.0,
                                   2000.0, "IOPS", "volume cap",
                                   "below 90 % of 4,000 IOPS in 3 of 3 seconds", PARAGRAPH))


def test_broken_test_code(ebsperf):
    assert 1 + 1 == 3, "the test's own assertion"
"""


@needs_root
@pytest.mark.parametrize("ci", ["", "true"])
def test_a_failed_check_is_said_once_and_named_in_one_short_line_also_in_ci(
        pytester: pytest.Pytester, loop_device: Callable[..., str],
        monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    # pytest prints the whole crash message after "FAILED nodeid - " when CI is set (GitHub
    # Actions, GitLab, Jenkins set it): the finding would be said twice in exactly the logs
    # people read most. The short summary names claim and reason; JUnit's message too.
    monkeypatch.setenv("CI", ci)
    pytester.makepyfile(test_failing_here=FAILING)
    result = pytester.runpytest_subprocess(f"--device={loop_device(size_mib=16)}", *FACTS,
                                           "--junitxml=junit.xml")
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    paragraph = next(line.strip() for line in text.splitlines() if "Claim S0-04" in line)
    assert text.count(paragraph) == 1, text[-4000:]
    result.stdout.fnmatch_lines([
        ("FAILED test_failing_here.py::test_slow - FAIL S0-04: io1 random read 16 KiB: below "
         "90 % of 4,000 IOPS in 3 of 3 seconds"),
        "FAILED test_failing_here.py::test_broken_test_code - AssertionError: the test's own*"])
    cases = {case.get("name"): case for case in ET.parse(pytester.path / "junit.xml").iter(
        "testcase")}
    failure = cases["test_slow"].find("failure")
    assert failure is not None
    assert failure.get("message") == ("FAIL S0-04: io1 random read 16 KiB: below 90 % of 4,000 "
                                      "IOPS in 3 of 3 seconds")
    assert paragraph in (failure.text or "")
