"""Output people read: the summary fits the terminal, a failure is said once, the words are
the user's, and a missing plotting library is one sentence (real fio, emulated volumes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import needs_fio, needs_root

SUITES = Path(__file__).resolve().parent.parent / "suites"
IO1 = f"{SUITES}/io1/test_io1.py"
IO1_READ = f"{IO1}::test_random_read_holds_provisioned_iops_999_percent_of_seconds"
IO1_MIXED = f"{IO1}::test_small_random_mixed_io_is_limited_at_the_provisioned_iops"
FAST = ("--emulate", "--ebsperf-runtime=2", "--ebsperf-ramp=0.5", "-p", "no:cacheprovider")


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


@needs_root
@needs_fio
@pytest.mark.parametrize("columns", [80, 120, 200])
def test_every_summary_line_fits_the_terminal(pytester: pytest.Pytester,
                                              monkeypatch: pytest.MonkeyPatch,
                                              columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = pytester.runpytest_subprocess(IO1_READ, IO1_MIXED, *FAST,
                                           "--ebsperf-report=results.json")
    lines = ebsperf_sections(result.stdout.str())
    assert any("S0-04" in line for line in lines), result.stdout.str()[-3000:]
    too_long = [line for line in lines if len(line) > columns]
    assert too_long == [], too_long
    if columns == 80:  # something had to give: said, and kept in the results file
        assert any("left out to fit 80 columns" in line for line in lines)
    if columns == 200:
        assert not any("left out to fit" in line for line in lines)


@needs_root
@needs_fio
def test_a_failure_is_said_once(pytester: pytest.Pytester) -> None:
    # 4 s: enough seconds to be evidence (2 s may leave one judged second: INCONCLUSIVE)
    result = pytester.runpytest_subprocess(IO1_READ, *FAST, "--ebsperf-runtime=4",
                                           "--emulate-factor=0.5")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    paragraph = next(line.strip() for line in text.splitlines()
                     if "io1 random read 16 KiB:" in line and "Claim S0-04" in line)
    assert text.count(paragraph) == 1, text[-4000:]
    assert "FAIL" in "\n".join(ebsperf_sections(text))  # the claims table still shows it


@needs_root
@needs_fio
def test_the_summary_speaks_the_users_words(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(IO1_READ, *FAST)
    text = result.stdout.str()
    for jargon in ("seed table shape", "shape)", "printed MB per $"):
        assert jargon not in text
    result.stdout.fnmatch_lines([
        "*ebsperf: IOPS / MiB/s by volume and access pattern*",
        "*as seed 000's table \"EBS Magnetic vs SSD\"*",
        "*ebsperf: cost per performance*",
    ])
    # a loop device's latency is the emulator's, and the table says so
    result.stdout.fnmatch_lines(["*ms*", "*latency of an emulated volume: the emulator's*"])


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
