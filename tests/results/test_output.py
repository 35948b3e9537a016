"""Output people read: the summary fits the terminal, a failure is said once, the words are
the user's, and a missing plotting library is one sentence (real fio, emulated volumes)."""

from __future__ import annotations

import pytest
from support.common import FAILS_ON_A_QUIET_HOST, SUITES, needs_fio, needs_root

IO1 = f"{SUITES}/io1/test_io1.py"
IO1_READ = f"{IO1}::test_random_read_holds_provisioned_iops_999_percent_of_seconds"
IO1_MIXED = f"{IO1}::test_small_random_mixed_io_is_limited_at_the_provisioned_iops"
IO1_WRITE = f"{IO1}::test_random_write_holds_provisioned_iops"
#: "--ebsperf-miss-spell=1": seconds of a 3 s run are taken as independent, so the count can
#: FAIL in them and a PASS there is evidence (under 3 s spells it could not FAIL in 3 s; a
#: 2 s run may log one window).
FAST = ("--emulate", "--ebsperf-miss-spell=1", "--ebsperf-runtime=3", "--ebsperf-ramp=0.5",
        "-p", "no:cacheprovider")


def ebsperf_sections(text: str) -> list[str]:
    """The lines of the summary's ebsperf sections (pytest's own lines left out)."""
    lines, ours = [], False
    for line in text.splitlines():
        if line.startswith("=") and line.strip("= ") and line.endswith("="):
            ours = line.strip("= ").startswith("ebsperf")
            continue
        if ours:
            lines.append(line)
    return lines


def claims_rows(lines: list[str]) -> list[str]:
    """The claims table's rows: between its heading rule and the first line without one."""
    start = next(i for i, line in enumerate(lines) if set(line.strip()) == {"─"}) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip() or line.startswith(("tests:", "more:", "INCONCLUSIVE", "*")):
            break
        rows.append(line)
    return rows


@needs_root
@needs_fio
@pytest.mark.parametrize("columns", [80, 120, 200])
def test_the_summary_is_a_line_per_check_within_the_terminal(pytester: pytest.Pytester,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = pytester.runpytest_subprocess(IO1_READ, IO1_MIXED, IO1_WRITE, *FAST,
                                           "--ebsperf-report=results.json",
                                           "--ebsperf-destructive")
    text = result.stdout.str()
    lines = ebsperf_sections(text)
    rows = claims_rows(lines)
    assert len(rows) == 3, text[-3000:]  # one line per check
    assert [row.split()[0] for row in rows] == ["S0-04", "S2-06", "S4-03"], rows
    assert all(word in " ".join(rows) for word in ("PASS", "IOPS")), rows
    # nothing wider than the terminal but a path (the results file's)
    too_long = [line for line in lines if len(line) > columns and "/" not in line]
    assert too_long == [], too_long
    # the counts pytest gives, said as pytest says them
    counts = next(line for line in lines if line.startswith("tests: "))
    # (a 2 s check on a busy machine may be INCONCLUSIVE: what is checked here is the line)
    final = result.stdout.lines[-1].strip("= ")
    assert counts.startswith("tests: ") and final.startswith(counts[len("tests: "):] + " in "), \
        (counts, final)
    assert sum(result.parseoutcomes().get(word, 0) for word in ("passed", "inconclusive")) == 3
    if columns == 200:  # room for how long each ran and its latency
        assert "Ran" in lines[lines.index(rows[0]) - 2] or any("Ran" in line for line in lines)


@FAILS_ON_A_QUIET_HOST
@needs_root
@needs_fio
def test_a_failure_is_said_once_wrapped_to_the_terminal(pytester: pytest.Pytester,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    # 12 s: with misses in spells of 3 s tolerated, 12 planned seconds make 5 misses evidence
    result = pytester.runpytest_subprocess(IO1_READ, *FAST, "--ebsperf-runtime=12",
                                           "--emulate-factor=0.5")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    start = next(line.strip() for line in text.splitlines()
                 if line.strip().startswith("io1 random read 16 KiB:"))
    assert text.count(start) == 1, text[-4000:]  # pytest's failure report, nowhere else
    failures = text[text.index("= FAILURES ="):text.index("= ebsperf: claims =")]
    assert all(len(line) <= 100 for line in failures.splitlines() if "https" not in line)
    assert "Claim S0-04" in " ".join(failures.split())  # a wrap may fall between the two
    assert "FAIL" in "\n".join(claims_rows(ebsperf_sections(text)))  # the table shows it


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
@needs_root
@needs_fio
def test_the_summary_speaks_the_users_words(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(IO1_READ, *FAST, "--ebsperf-tables=all")
    text = result.stdout.str()
    for jargon in ("seed table shape", "shape)", "printed MB per $"):
        assert jargon not in text
    result.stdout.fnmatch_lines([
        "*ebsperf: IOPS / MiB/s by volume and access pattern*",
        "*as seed 000's table \"EBS Magnetic vs SSD\"*",
        "*ebsperf: cost per performance*",
    ])
    plain = pytester.runpytest_subprocess(IO1_READ, *FAST)
    assert "ebsperf: cost per performance" not in plain.stdout.str()
    plain.stdout.fnmatch_lines(["*more: --ebsperf-tables=seed,runs,sets,cost,facts*"])


@pytest.mark.parametrize("value, unit, said", [
    (3.0, "ratio", "3.00x"), (4.712, "ratio", "4.71x"), (4294966784, "bytes", "4.0 GiB"),
    (2.5e8, "B/s", "238 MiB/s"), (20.0, "s", "20 s"), (3.0, "s", "3 s"), (0.1, "CV", "10 %"),
    (1512.4, "IOPS", "1,512 IOPS"), (900_000, "ns", "0.9 ms")])
def test_every_unit_reads_one_way(value: float, unit: str, said: str) -> None:
    from pytest_ebsperf.units import format_quantity

    assert format_quantity(value, unit) == said


# -- options beside other plugins ----------------------------------------------------------
def test_a_conftests_own_device_option_keeps_working(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        def pytest_addoption(parser):
            parser.addoption("--device", default="cpu", help="the model's device")
    """)
    pytester.makepyfile("""
        def test_the_conftests_option(request):
            assert request.config.getoption("device") == "cuda"

        def test_ours_under_its_prefix(request):
            assert request.config.getoption("ebsperf_device") == "/dev/nvme9n1"
    """)
    result = pytester.runpytest_subprocess("--device=cuda", "--ebsperf-device=/dev/nvme9n1",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    text = result.stdout.str()
    assert "conflicting option string" not in text + result.stderr.str()
    assert text.count("--device belongs to another plugin or a conftest here; use "
                      "--ebsperf-device") == 1


def test_the_short_forms_are_the_same_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        def test_both(request):
            assert request.config.getoption("ebsperf_volume_type") == "gp3"
    """)
    for flag in ("--volume-type=gp3", "--ebsperf-volume-type=gp3"):
        pytester.runpytest_subprocess(flag, "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_ini_booleans_are_booleans(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nebsperf_no_discovery = true\n")
    pytester.makepyfile("""
        def test_read(request):
            assert request.config.getini("ebsperf_no_discovery") is True
    """)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


# -- Markdown ----------------------------------------------------------------------------------
def test_the_markdown_summary_renders_a_table_and_the_findings() -> None:
    markdown = pytest.importorskip("markdown")
    from pytest_ebsperf.results import markdown as summary

    rows = [{"claim": "S0-04", "what": "io1 random read | 16 KiB", "outcome": "pass",
             "expected": "4,000 IOPS", "measured": "3,998 IOPS", "binding": "io1 provisioned",
             "reason": "", "message": "", "fio": {"measured_s": 5.0}},
            {"claim": "S2-17", "what": "encrypted vs plain", "outcome": "inconclusive",
             "expected": "1.00x", "measured": "0.97x", "binding": "plain twin",
             "reason": "", "message": "encrypted vs plain: the pairs cannot tell."}]
    text = summary.summary(rows, [], counts="tests: 1 passed, 1 inconclusive")
    html = markdown.markdown(text, extensions=["tables"])
    assert html.count("<tr>") == 3  # the heading and a row per check
    assert "<td>io1 random read | 16 KiB</td>" in html  # the pipe escaped, not a column
    assert "<strong>INCONCLUSIVE S2-17</strong>" in html and "cannot tell" in html
    assert "tests: 1 passed, 1 inconclusive" in html


@needs_root
@needs_fio
def test_a_run_writes_its_markdown_and_githubs_step_summary(pytester: pytest.Pytester,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    step = pytester.path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = pytester.runpytest_subprocess(IO1_READ, *FAST, "--ebsperf-markdown=summary.md")
    result.assert_outcomes(passed=1)
    text = (pytester.path / "summary.md").read_text()
    assert text.startswith("## pytest-ebsperf") and "| S0-04 " in text
    assert step.read_text().startswith("earlier step\n## pytest-ebsperf")  # appended


@needs_root
@needs_fio
def test_without_matplotlib_one_sentence_says_no_pictures(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("import sys\nsys.modules['matplotlib'] = None  # not installed\n")
    (pytester.path / "test_link.py").symlink_to(IO1)
    result = pytester.runpytest_subprocess(
        "test_link.py::test_random_read_holds_provisioned_iops_999_percent_of_seconds",
        "test_link.py::test_small_random_mixed_io_is_limited_at_the_provisioned_iops", *FAST)
    text = result.stdout.str()
    assert text.count("no pictures: matplotlib is not installed") == 1, text[-3000:]
    assert "pip install 'pytest-ebsperf[plot]'" in text
    assert "PytestWarning" not in text
    result.assert_outcomes(passed=2)


def test_an_empty_benchmarks_directory_is_not_left_behind(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".benchmarks").exists()
    saved = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--benchmark-autosave")
    saved.assert_outcomes(passed=1)
    assert (pytester.path / ".benchmarks").exists()  # asked for: kept


def test_fixtures_listing_has_no_empty_heading(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--fixtures", "-p", "no:cacheprovider")
    lines = result.stdout.str().splitlines()
    for index, line in enumerate(lines):
        if "fixtures defined from pytest_ebsperf" in line:
            following = lines[index + 1] if index + 1 < len(lines) else ""
            assert following.strip() and not following.startswith("---"), line
