"""``ebsperf judge`` never gives a verdict on a figure fio never writes, never a traceback,
and the read-only commands write nothing (issue: a reader that never invents a figure)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.common import DATA, ebsperf_cli

HERE = DATA / "fio"
IO1 = ("--volume-type=io1", "--volume-size=100", "--volume-iops=4000")


def ebsperf(*args: str) -> subprocess.CompletedProcess[str]:
    return ebsperf_cli(*args)


def _sample(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """tests/data/fio/randread.json without its log options (judged alone), each job edited
    by ``edit``, written to a file of its own."""
    report = json.loads((HERE / "randread.json").read_text())
    for job in report["jobs"]:
        for option in ("write_iops_log", "write_bw_log", "write_lat_log"):
            job["job options"].pop(option, None)
        edit(job)
    path = tmp_path / "edited.json"
    # json.dumps writes Infinity and NaN as JavaScript does, which Python's reader accepts
    path.write_text(json.dumps(report))
    return path


def _edited(tmp_path: Path, field: str, value: object) -> Path:
    return _sample(tmp_path, lambda job: job["read"].__setitem__(field, value))


@pytest.mark.parametrize(("field", "value"), [
    ("iops", -4394.5), ("iops", float("inf")), ("iops", float("nan")), ("iops", "lots"),
    ("iops", 1e29), ("bw_bytes", -1), ("runtime", "zero"), ("total_ios", "many"),
    ("iops", True)])
def test_an_impossible_figure_is_refused_naming_its_field(tmp_path: Path, field: str,
                                                          value: object) -> None:
    done = ebsperf("judge", str(_edited(tmp_path, field, value)), *IO1)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"'{field}'" in done.stderr and "fio never writes" in done.stderr, done.stderr
    assert done.stdout == ""  # no verdict at all


def test_a_group_id_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    report = json.loads((HERE / "randread.json").read_text())
    report["jobs"][0]["groupid"] = "zero"
    path = tmp_path / "group.json"
    path.write_text(json.dumps(report))
    done = ebsperf("judge", str(path), *IO1)
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stderr
    assert "'groupid'" in done.stderr


def test_a_terse_line_cut_short_is_refused_not_a_traceback(tmp_path: Path) -> None:
    line = next(text for text in (HERE / "formats" / "randread_jobs.txt").read_text()
                .splitlines() if text.startswith("3;fio-"))
    path = tmp_path / "cut.terse"
    path.write_text(";".join(line.split(";")[:54]) + "\n")
    done = ebsperf("judge", str(path), *IO1)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "cannot be read as fio output" in done.stderr


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path: Path) -> None:
    done = subprocess.run(
        f"{sys.executable} -m pytest_ebsperf judge {HERE / 'randread.json'} {' '.join(IO1)} "
        f"--json | head -c 10", shell=True, capture_output=True, text=True, timeout=60,
        check=False)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_plan_fleet_refuses_a_volume_type_it_does_not_know() -> None:
    done = ebsperf("plan-fleet", "--hosts=2", "--checks=3", "--volume-type=gp9")
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stderr
    assert "--volume-type=gp9" in done.stderr and "gp3" in done.stderr


@pytest.mark.parametrize("command", ["history", "compare"])
@pytest.mark.parametrize("kind", ["empty", "other"])
def test_the_read_only_commands_write_nothing_into_a_foreign_database(
        tmp_path: Path, command: str, kind: str) -> None:
    db = tmp_path / "theirs.sqlite"
    if kind == "empty":
        db.write_bytes(b"")
    else:
        with sqlite3.connect(db) as made:
            made.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
            made.execute("INSERT INTO notes (text) VALUES ('mine')")
        made.close()
    before = db.read_bytes()
    args = ["--db", str(db)] if command == "history" else ["1", "2", "--db", str(db)]
    done = ebsperf(command, *args)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and str(db) in done.stderr, done.stderr
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["theirs.sqlite"]  # no -wal, -shm


REAL = DATA / "realebs"


def test_two_outputs_pasted_one_after_the_other_are_two_runs(tmp_path: Path) -> None:
    """The io1 2,048 GiB randwrite and randread outputs, concatenated: each begins with its
    command line and a group-0 result block, no version line or job header between them.
    Read as one run they added up to '70,448 IOPS, far above its cap'."""
    both = tmp_path / "both.txt"
    both.write_text(
        (REAL / "liangruibupt_io1_2048g_40000iops_randwrite16k_qd32x16_m5.8xlarge_EXTRACTED.txt"
         ).read_text() +
        (REAL / "liangruibupt_io1_2048g_40000iops_randread16k_qd32x16_m5.12xlarge_EXTRACTED.txt"
         ).read_text())
    done = ebsperf("judge", str(both), "--volume-type=io1", "--volume-size=2048",
                   "--volume-iops=40000", "--instance-type=m5.8xlarge")
    verdicts = [line for line in done.stdout.splitlines() if not line.startswith(" ")]
    assert len(verdicts) == 2, done.stdout + done.stderr
    assert "run 1 of 2" in verdicts[0] and "randwrite 16KiB" in verdicts[0]
    assert "run 2 of 2" in verdicts[1] and "randread 16KiB" in verdicts[1]
    assert "30,14" in verdicts[0] and "40,30" in verdicts[1]
    assert "far above" not in done.stdout


def test_a_command_line_that_runs_fio_from_a_path_is_read(tmp_path: Path) -> None:
    source = (REAL / "liangruibupt_io1_2048g_40000iops_randread16k_qd32x16_m5.12xlarge_EXTRACTED.txt"
              ).read_text().splitlines(keepends=True)
    assert source[0].startswith("sudo fio ")
    pasted = tmp_path / "dotslash.txt"
    pasted.write_text(source[0].replace("sudo fio ", "./fio ") + "".join(source[1:]))
    done = ebsperf("judge", str(pasted), "--volume-type=io1", "--volume-size=2048",
                   "--volume-iops=40000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "buffered" not in done.stdout  # its --direct=1 was read


def _sequential(tmp_path: Path, **options: str) -> Path:
    return _sample(tmp_path, lambda job: job["job options"].update({"rw": "read", **options}))


def test_a_record_only_expectation_is_recorded_not_judged_as_a_cap(tmp_path: Path) -> None:
    """Sequential 4 KiB direct reads on gp3: EBS "attempts to" merge them, which is no
    promise (B-IOACCT). 150,853 IOPS is recorded (INFO), not 'far above its cap'."""
    done = ebsperf("judge", str(_sequential(tmp_path)), "--volume-type=gp3",
                   "--volume-size=100")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("INFO B-SLA"), done.stdout
    assert "far above" not in done.stdout


@pytest.mark.parametrize("option", ["rate_min=1k", "rate_iops_min=100", "iodepth_low=8"])
def test_minimums_and_a_low_mark_at_the_queue_depth_do_not_excuse_a_shortfall(
        tmp_path: Path, option: str) -> None:
    """rate_min and rate_iops_min are minimums (fio aborts below them, they never slow a
    job), and iodepth_low equal to iodepth holds nothing back: a shortfall stays the
    volume's (here: a 150,853 IOPS run on an io2 promised 256,000)."""
    name, value = option.split("=")
    path = _sample(tmp_path, lambda job: job["job options"].__setitem__(name, value))
    done = ebsperf("judge", str(path), "--volume-type=io2", "--volume-size=1000",
                   "--volume-iops=256000")
    assert "paces or holds back" not in done.stdout and name not in done.stdout.split(
        "note:")[0], done.stdout


AWS_IO2 = REAL / "awssamples_io2_100g_40000iops_randread16k_psync_qd1x16_c6a.xlarge_EXTRACTED.txt"


def _normal_result(text: str) -> dict[str, float]:
    from pytest_ebsperf.fio import text as fio_text

    data = fio_text.normal_to_data(text)
    job = data["jobs"][0]
    side = job["read"] if "read" in job else job["write"]
    return {"bw_bytes": side["bw_bytes"], "iops": side["iops"], "io_bytes": side["io_bytes"]}


def test_decimal_and_binary_units_are_read_exactly() -> None:
    """fio 3.x writes binary units with an i and decimal ones without: under kb_base=1000
    its first figure is the decimal one (``BW=608MB/s (580MiB/s)``), which was read 4.9 %
    high as MiB; the default line reads the same volume."""
    text = AWS_IO2.read_text()
    binary = _normal_result(text)
    decimal = _normal_result(text.replace("BW=580MiB/s (608MB/s)(102GiB/180001msec)",
                                          "BW=608MB/s (580MiB/s)(109GB/180001msec)"))
    assert binary["bw_bytes"] == 580 * 2 ** 20
    assert decimal["bw_bytes"] == 608e6
    assert decimal["bw_bytes"] / binary["bw_bytes"] == pytest.approx(1.0, abs=0.002)
    assert decimal["io_bytes"] == 109e9


def test_thousands_separators_are_read_not_refused() -> None:
    text = (REAL / "liangruibupt_io1_2048g_40000iops_randwrite16k_qd32x16_m5.8xlarge_EXTRACTED"
                   ".txt").read_text()
    plain = _normal_result(text)
    commas = _normal_result(text.replace("bw=482232KB/s, iops=30139",
                                         "bw=482,232 KB/s, iops=30,139"))
    assert commas == plain and round(plain["iops"]) in (30139, 30140)


def test_a_job_headers_decimal_block_size_is_in_kilobytes() -> None:
    from pytest_ebsperf.fio import text as fio_text

    assert fio_text._header_bs("(R) 1000kB-1000kB, (W) 1000kB-1000kB") == "1000000"
    assert fio_text._header_bs("(R) 16.0KiB-16.0KiB") == "16384"
    assert fio_text._header_bs("4K-4K/4K-4K") == "4096"


def test_a_job_over_two_plain_devices_is_witnessed_by_both(tmp_path: Path) -> None:
    """fio --filename=/dev/nvme1n1:/dev/nvme2n1: each device served half the I/Os. The
    witness counts both, as the live checks count a set; it took the busiest one alone and
    halved the run."""
    report = json.loads((HERE / "randread.json").read_text())
    served = report["disk_util"][0]["read_ios"]
    report["disk_util"] = [
        {**report["disk_util"][0], "name": name, "read_ios": served // 2}
        for name in ("nvme1n1", "nvme2n1")]
    for job in report["jobs"]:
        job["job options"]["filename"] = "/dev/nvme1n1:/dev/nvme2n1"
        for option in ("write_iops_log", "write_bw_log", "write_lat_log"):
            job["job options"].pop(option, None)
    path = tmp_path / "two.json"
    path.write_text(json.dumps(report))
    done = ebsperf("judge", str(path), "--volume-type=io2", "--volume-size=1000",
                   "--volume-iops=75000", "--volume-count=2")
    assert "nvme1n1 + nvme2n1's own count agrees with fio's" in done.stdout, done.stdout
    assert "served" not in done.stdout


def test_a_pattern_given_against_the_direction_that_ran_is_refused(
        capsys: pytest.CaptureFixture[str]) -> None:
    # storperf's fio 2.1.11 report says no job options: --rw says what ran. Its four jobs only
    # read; given as randwrite, their 20 IOPS of reads were judged as writes, silently
    from pytest_ebsperf.verdicts.judge import main
    report = str(HERE / "storperf_fio-2.1.11_4jobs_EXTRACTED.json")
    given = ("--volume-type=gp2", "--volume-size=100", "--bs=4k", "--iodepth=1")
    assert main([report, *given, "--rw=randwrite"]) == 4
    said = capsys.readouterr()
    assert said.out == ""
    assert "--rw randwrite says the jobs wrote, but the report has no writes and 20 IOPS of " \
           "reads: pass the --rw the job ran (randread or read)" in said.err
    assert main([report, *given, "--rw=randread"]) == 2  # judged: INCONCLUSIVE (QD bound)
    assert "randread 4KiB QD1x4" in capsys.readouterr().out


def test_a_kept_trim_between_passes_is_a_part_and_a_bare_trim_is_refused(tmp_path: Path
                                                                         ) -> None:
    # S1-08's TRIM between its passes (real fio rw=trim on a loop device) is kept as a part
    # of the check: judge of the kept folder skips it naming what it was; the same output
    # given alone is refused with the sentence that no claim describes rw=trim
    from pytest_ebsperf.fio.kept import keep_part

    bare = HERE / "fio-3.33_trim_loop.json"
    done = ebsperf("judge", str(bare), *IO1)
    assert done.returncode == 4 and "rw=trim (TRIM only); no volume claim" in done.stderr, \
        done.stderr
    assert "Traceback" not in done.stderr
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "trim-1-1.json").write_text(bare.read_text())
    keep_part(kept / "trim-1-1", check="suites/instance_store/test_instance_store.py::"
              "test_writes_after_trim_are_not_slower", phase="TRIM")
    done = ebsperf("judge", str(kept), "--json")
    judged = json.loads(done.stdout)
    assert judged["refused"] == [] and judged["verdicts"] == [], judged
    [skipped] = judged["skipped"]
    assert skipped["reason"] == (
        "a TRIM run of suites/instance_store/test_instance_store.py::test_writes_after_trim_"
        "are_not_slower (fio's rw=trim (TRIM only), which no volume claim describes)"), skipped
