"""Every output path is checked before the first fio run; results are never lost at the end."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support.common import ROOT

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.results.document import write_document
from pytest_ebsperf.results.paths import (
    check_output_dir,
    check_output_file,
    write_or_keep,
)


def test_a_results_file_under_proc_is_refused_with_a_sentence() -> None:
    with pytest.raises(ConfigError, match=r"--ebsperf-report=/proc/x.json is under /proc, a "
                                          "kernel pseudo-filesystem"):
        check_output_file("/proc/x.json", "--ebsperf-report")


def test_a_plots_directory_under_proc_or_sys_is_refused() -> None:
    for text in ("/proc/plots", "/sys/kernel/plots"):
        with pytest.raises(ConfigError, match="kernel pseudo-filesystem"):
            check_output_dir(text, "--ebsperf-plots")


def test_missing_parent_directories_are_made(tmp_path: Path) -> None:
    path = check_output_file("deep/er/results.json", "--ebsperf-report", base=tmp_path)
    assert path == tmp_path / "deep/er/results.json"
    assert path.parent.is_dir()
    assert list(path.parent.iterdir()) == []  # the probe file is gone again


def test_a_parent_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    with pytest.raises(ConfigError, match="is not a directory"):
        check_output_file(str(tmp_path / "plain" / "results.json"), "--ebsperf-report")


def test_a_directory_and_a_block_device_are_refused_as_results_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory; give a file name"):
        check_output_file(str(tmp_path), "--ebsperf-report")
    blocks = [f"/dev/{n}" for n in ("loop0", "zram0", "sda", "vda") if os.path.exists(f"/dev/{n}")]
    if not blocks:
        pytest.skip("no block device node to name")
    with pytest.raises(ConfigError, match="is a block device: the file would overwrite it"):
        check_output_file(blocks[0], "--ebsperf-report")


def test_dev_null_is_written_into_and_accepted() -> None:
    assert check_output_file("/dev/null", "--ebsperf-report") == Path("/dev/null")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_directory_this_user_cannot_write_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(ConfigError, match="cannot write in"):
        check_output_file(str(locked / "r.json"), "--ebsperf-report")


def test_results_that_cannot_be_written_at_the_end_are_kept_elsewhere(tmp_path: Path) -> None:
    gone = tmp_path / "gone" / "results.json"  # its directory does not exist any more
    document = {"checks": [{"claim": "S2-03", "outcome": "passed"}]}

    def write_no_mkdir(doc: object, path: Path) -> None:
        if not path.parent.is_dir():
            raise FileNotFoundError(2, "No such file or directory")
        write_document(doc, path)  # type: ignore[arg-type]

    problem = write_or_keep(write_no_mkdir, document, gone, base=tmp_path)
    assert problem is not None and "could not be written to" in problem
    kept = Path(problem.rsplit("kept in ", 1)[1])
    assert kept.parent == tmp_path
    assert json.loads(kept.read_text()) == document


def test_a_run_with_a_results_file_under_proc_stops_before_any_check(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    raise AssertionError('ran')\n")
    result = pytester.runpytest_subprocess("--ebsperf-report=/proc/x.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ebsperf-report=/proc/x.json is under /proc*"])
    assert "ran" not in result.stdout.str()
    assert "Traceback" not in result.stderr.str()


def test_a_plots_directory_under_proc_stops_the_run_at_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--ebsperf-plots=/proc/plots", timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ebsperf-plots=/proc/plots is under /proc*"])


def test_a_report_in_a_new_directory_is_written_there(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--ebsperf-report=out/today/results.json")
    assert result.ret == 0
    assert json.loads((pytester.path / "out/today/results.json").read_text())["checks"] == []


def test_a_report_whose_directory_vanishes_is_kept_and_the_summary_says_where(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="""
        import shutil
        def test_x():
            shutil.rmtree('out')
            open('out', 'w').write('a file where the directory was')
    """)
    result = pytester.runpytest_subprocess("--ebsperf-report=out/results.json")
    result.stdout.fnmatch_lines([("*NOT SAVED: the results could not be written to *out/"
                                  "results.json*; they were kept in*ebsperf-unsaved-*.json*")])
    kept = list(pytester.path.glob("ebsperf-unsaved-*.json"))
    assert len(kept) == 1 and "checks" in json.loads(kept[0].read_text())


# -- fio's own evidence beside the results --------------------------------------------------
IO1_READ = (f"{ROOT}/suites/io1/test_io1.py::"
            "test_random_read_holds_provisioned_iops_999_percent_of_seconds")


@pytest.mark.skipif(os.geteuid() != 0, reason="emulated volumes need root")
def test_each_fio_run_is_kept_beside_the_results_file(pytester: pytest.Pytester) -> None:
    """Laid out as fio-plot's bench-fio lays out its runs (DEVICE/BS/run-N/MODE-QD-JOBS.json
    and its logs), with a job file that repeats the run by hand."""
    result = pytester.runpytest_subprocess(IO1_READ, "--emulate", "--ebsperf-report=out/r.json")
    assert result.ret == 0, result.stdout.str()[-2000:]
    (device,) = (pytester.path / "out" / "r-fio").iterdir()
    assert device.name.startswith("loop")
    (run,) = (device / "16k").iterdir()
    kept = sorted(p.name for p in run.iterdir())
    (report,) = [name for name in kept if name.endswith(".json")
                 and not name.endswith(".ebsperf.json")]
    mode, depth, jobs = report.removesuffix(".json").split("-")
    # the check's verdict beside the run it came from, for ebsperf judge and for a reader
    said = json.loads((run / f"randread-{depth}-{jobs}.ebsperf.json").read_text())
    assert said["claim"] == "S0-04" and said["outcome"] == "pass" and said["planned_s"] > 0
    assert said["check"].endswith("test_random_read_holds_provisioned_iops_999_percent_of_seconds")
    assert mode == "randread" and int(depth) >= 1 and int(jobs) >= 1
    assert f"randread-iodepth-{depth}-numjobs-{jobs}_iops.1.log" in kept
    job = (run / f"randread-{depth}-{jobs}.fio").read_text()
    assert "rw=randread" in job and "bs=16384" in job
    # --readonly is a command-line option of fio's: said in the command that repeats the run
    assert "readonly" not in job.splitlines() and "# Repeats this run: fio --readonly " in job
    assert "/tmp/" not in job and "cgroup" not in job.replace("cgroup) ", "")
    from pytest_ebsperf.fio.parse import extract_json

    assert extract_json((run / report).read_text())["jobs"]  # fio's whole report
    # fio itself reads the job file (parse only: the emulated device is gone)
    parsed = subprocess.run(["fio", "--parse-only", str(run / f"randread-{depth}-{jobs}.fio")],
                            capture_output=True, text=True, check=False)
    assert parsed.returncode == 0, parsed.stdout + parsed.stderr
    result.stdout.fnmatch_lines([("*fio evidence (report, logs, a job file to repeat each): "
                                  "1 runs in *r-fio*")])


@pytest.mark.skipif(os.geteuid() != 0, reason="emulated volumes need root")
def test_keeping_fio_evidence_can_be_turned_off(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(IO1_READ, "--emulate", "--ebsperf-report=out/r.json",
                                           "--ebsperf-keep-fio=none")
    assert result.ret == 0
    assert not (pytester.path / "out" / "r-fio").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="emulated volumes need root")
def test_measurements_go_to_a_csv_with_latency_percentiles(pytester: pytest.Pytester) -> None:
    import csv

    result = pytester.runpytest_subprocess(IO1_READ, "--emulate", "--ebsperf-csv=out/m.csv",
                                           "--ebsperf-report=out/r.json")
    assert result.ret == 0
    rows = list(csv.DictReader((pytester.path / "out" / "m.csv").open()))
    document = json.loads((pytester.path / "out" / "r.json").read_text())
    assert len(rows) == len(document["measurements"]) >= 1
    first = rows[0]
    assert first["claim"] == "S0-04" and first["pattern"] == "randread"
    assert 3000 <= float(first["iops"]) <= 5000  # the emulated io1's 4,000 IOPS
    assert 0 < float(first["read_clat_p50_ns"]) <= float(first["read_clat_p99_ns"])
    result.stdout.fnmatch_lines(["*measurements as CSV: out/m.csv*"])


def test_the_claims_table_shows_latency_percentiles() -> None:
    from pytest_ebsperf.results.report import latency_text

    assert latency_text({"clat_p50_ns": 250_000, "clat_p99_ns": 1_200_000,
                         "clat_p99.9_ns": None}) == "0.25 ms / 1.2 ms / -"
    assert latency_text({}) == "-"
