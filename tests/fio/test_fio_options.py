"""Your own fio options and block sizes for the built-in checks, from the command line or ini."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.common import ROOT, ebsperf_cli, needs_fio, needs_root

from pytest_ebsperf.config.consistency import validate
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.fio.allowlist import parse_fio_options, parse_job_file


def test_options_read_as_name_value_pairs() -> None:
    assert parse_fio_options("norandommap, randrepeat=0,--nice=1") == (
        ("norandommap", ""), ("randrepeat", "0"), ("nice", "1"))


@pytest.mark.parametrize(("text", "said"), [
    ("bs=4k", "bs is built by the checks themselves"),
    ("readonly=0", "readonly is built by the checks themselves"),
    ("allow_mounted_write=1", "allow_mounted_write is refused: it changes the device"),
    ("mem=mmap:/home/me/notes.txt", "mem=mmap:/home/me/notes.txt is refused: it names a file"),
    ("read_iolog=/dev/sdb", "read_iolog is refused: it names a file or device"),
    ("replay_redirect=/dev/sdb", "replay_redirect is refused: it names a file or device"),
    ("trim_backlog=8", "trim_backlog is refused: it writes, trims"),
    ("made_up_option=1", "made_up_option is not among the fio options the checks accept"),
    ("exec_prerun=rm -rf /", "exec_prerun is refused"),
    ("verify=md5", "verify is refused"),
    ("ioscheduler=none", "ioscheduler is refused"),
])
def test_options_the_checks_own_or_that_could_do_harm_are_refused(text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=f"--ebsperf-fio-options: {said}"):
        parse_fio_options(text)


def test_a_job_file_gives_its_global_and_first_job_options(tmp_path: Path) -> None:
    job = tmp_path / "db.fio"
    job.write_text("; our database profile\n[global]\nnorandommap\nrandrepeat=0\n"
                   "[db]\nrandrepeat=1\nthread\n[other]\nnice=5\n")
    # thread: the checks always run their jobs as threads, so it is taken and left out
    assert dict(parse_job_file(str(job))) == {"norandommap": "", "randrepeat": "1"}
    bad = tmp_path / "bad.fio"
    bad.write_text("[global]\nfilename=/dev/sda\n")
    with pytest.raises(ConfigError, match=r"--ebsperf-job-file=.*bad.fio: filename is built"):
        parse_job_file(str(bad))
    with pytest.raises(ConfigError, match="cannot be read"):
        parse_job_file(str(tmp_path / "missing.fio"))


def test_settings_check_them_before_anything_runs() -> None:
    with pytest.raises(ConfigError, match="exec_postrun is refused"):
        validate(Settings(fio_options="exec_postrun=reboot"))
    with pytest.raises(ConfigError, match="multiple of 512"):
        validate(Settings(sweep_sizes="4k,1000"))
    assert Settings(sweep_sizes="4k, 64k,1M").sweep_sizes_bytes == (4096, 65536, 1048576)


@needs_root
@needs_fio
def test_sweep_sizes_and_fio_options_reach_the_checks(pytester: pytest.Pytester) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(
        f"{ROOT}/suites/io1/test_io1.py::test_block_size_sweep_is_iops_bound_then_throughput_bound",
        "--emulate", "--ebsperf-sweep-sizes=4k,64k", "--ebsperf-fio-options=norandommap",
        f"--ebsperf-report={report}", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()[-3000:]
    document = json.loads(report.read_text())
    (check,) = document["checks"]
    assert [p["bs"] for p in check["details"]["points"]] == [4096, 65536]
    assert all("norandommap" in m["fio_options"] for m in document["measurements"])


def test_a_refused_option_stops_the_run_with_a_sentence(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest_subprocess("--ebsperf-fio-options=allow_mounted_write=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*allow_mounted_write is refused*"])


@needs_root
@needs_fio
def test_a_rate_of_your_own_is_the_jobs_limit_live_and_in_judge(
        pytester: pytest.Pytester) -> None:
    # a gp3 check (3,000 IOPS) run with your own rate_iops=1000: the run sat at your rate, a
    # shortfall that is the job's, not the volume's; the live check and judge of its kept
    # run say so by the same rule (one verdict path), neither calls the volume broken

    report, keep = pytester.path / "r.json", pytester.path / "kept"
    pytester.runpytest_subprocess(
        f"{ROOT}/suites/gp3/test_gp3.py::test_random_write_holds_provisioned_iops",
        "--emulate", "--ebsperf-fio-options=rate_iops=1000", "--ebsperf-runtime=4",
        f"--ebsperf-report={report}", f"--ebsperf-keep-fio={keep}", "-p", "no:cacheprovider")
    (check,) = json.loads(report.read_text())["checks"]
    assert check["outcome"] == "inconclusive", check["message"]
    assert "the job's own rate_iops=1000" in check["message"], check["message"]
    done = ebsperf_cli("judge", str(keep), "--json")
    judged = json.loads(done.stdout)["verdicts"]
    again = [v for v in judged if v["outcome"] != "pass"]
    assert again and all(v["outcome"] == "inconclusive" and v["binding"] == "job's own limit"
                         for v in again), judged
