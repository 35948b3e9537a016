"""``python3 -m pytest_ebsperf judge``: verdicts on fio reports someone already has.

Real fio 3.33 reports and logs from tests/data/fio (a 4 KiB random read on a tmpfs-backed loop
device at about 150,000 IOPS; two stonewalled groups).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from support.common import DATA, ebsperf_cli

HERE = DATA / "fio"


def judge(*args: str) -> subprocess.CompletedProcess[str]:
    return ebsperf_cli("judge", *args)


def test_a_report_that_meets_the_volumes_cap_passes_second_by_second() -> None:
    # the console script as a process, as a user runs it (the others run its code in-process)
    done = subprocess.run([sys.executable, "-m", "pytest_ebsperf", "judge",
                           str(HERE / "randread.json"), "--volume-type=io2", "--volume-size=1000",
                           "--volume-iops=150000", f"--logs={HERE / 'randread'}"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("PASS B-SLA: io2 1,000 GiB 150,000 IOPS, randread 4KiB QD8x1")
    assert "of 2 s below 135,000 IOPS" in done.stdout


def test_a_report_far_above_the_volumes_cap_fails_as_another_volume(tmp_path: Path) -> None:
    alone = tmp_path / "randread.json"  # without the logs its job options name
    report = json.loads((HERE / "randread.json").read_text())
    for job in report["jobs"]:
        for option in ("write_iops_log", "write_bw_log", "write_lat_log"):
            job["job options"].pop(option, None)
    alone.write_text(json.dumps(report))
    done = judge(str(alone), "--volume-type=io1", "--volume-size=100", "--volume-iops=4000")
    assert done.returncode == 1
    assert "far above its cap of 4,000 IOPS" in done.stdout
    assert "no per-second series: judged on the mean alone" in done.stdout


def test_a_stonewalled_report_is_judged_group_by_group() -> None:
    report = str(HERE / "fio-3.33-stonewall-two-groups.json")
    done = judge(report, "--volume-type=gp3", "--volume-size=100")
    assert "the report holds 2 groups, each judged on its own" in done.stdout
    lines = [line for line in done.stdout.splitlines() if " B-SLA [group " in line]
    assert [line.split("[")[1].split()[1] for line in lines] == ["0", "1"], done.stdout
    assert "Traceback" not in done.stderr
    reads = judge(report, "--volume-type=gp3", "--volume-size=100", "--group=0")
    assert reads.returncode in (0, 1, 2) and "randread 4KiB QD4x1" in reads.stdout
    assert "[group 1" not in reads.stdout
    wrong = judge(report, "--volume-type=gp3", "--volume-size=100", "--group=7")
    assert wrong.returncode == 4 and "the report's groups are 0, 1" in wrong.stderr


def test_bad_input_is_a_sentence() -> None:
    missing = judge("/nonexistent.json", "--volume-type=gp3")
    assert missing.returncode == 4
    assert "cannot be read (No such file or directory)" in missing.stderr
    wrong = judge(str(HERE / "randread.json"), "--volume-type=io1", "--volume-size=100",
                  "--volume-iops=90000")
    assert wrong.returncode == 4 and "Traceback" not in wrong.stderr
    assert wrong.stderr.startswith("error: ")


# -- reports written the ways others run fio (tests/data/fio/judge/capture.sh) -------------
SHAPES = HERE / "judge"


def judge_shape(*args: str) -> subprocess.CompletedProcess[str]:
    """These captures read files whose blocks fio never wrote: the device served a tenth of
    the reads (its Disk stats say so, and judge would go by them). The tests below are about
    the reports' shapes and logs, so fio's own figures are judged (--trust-fio)."""
    return judge(*args, "--trust-fio")
IO1 = ("--volume-type=io1", "--volume-size=100", "--volume-iops=1000")


def test_fios_readwrite_alias_is_the_rw_pattern() -> None:
    done = judge_shape(str(SHAPES / "readwrite_500ms.json"), *IO1)
    assert done.returncode in (0, 1, 2), done.stderr
    assert "rw 50/50 16KiB QD4x1" in done.stdout
    assert "note: rw=readwrite is fio's name for rw=rw" in done.stdout


def test_half_second_windows_are_averaged_to_seconds_and_said() -> None:
    done = judge_shape(str(SHAPES / "randread_500ms.json"), *IO1)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "windows are 500 ms (log_avg_msec=500): averaged to seconds" in done.stdout
    # 5 s of 500 ms windows make 4 whole seconds (fio's log lacks the last window), not
    # every other row taken as a second
    assert "0 of 4 s below 900 IOPS" in done.stdout
    assert "1,000 IOPS measured" in done.stdout


def test_two_second_windows_are_judged_at_their_own_length() -> None:
    done = judge_shape(str(SHAPES / "randread_2s.json"), *IO1)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 of 3 windows of 2 s below 900 IOPS" in done.stdout
    assert "judged at its own length" in done.stdout


def test_a_log_of_every_io_is_counted_per_second() -> None:
    done = judge_shape(str(SHAPES / "randread_per_io.json"), "--volume-type=io1",
                 "--volume-size=100", "--volume-iops=200")
    assert "log_avg_msec unset): counted per second" in done.stdout
    assert "200 IOPS measured" in done.stdout and "0 of 3 s below 180 IOPS" in done.stdout
    assert done.returncode == 0, done.stdout


def test_two_hosts_of_a_client_server_report_are_judged_one_by_one() -> None:
    report = str(SHAPES / "client_server_two_hosts.json")
    done = judge_shape(report, "--volume-type=io1", "--volume-size=100", "--volume-iops=300")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("PASS")]
    assert len(lines) == 2, done.stdout
    assert {line.split("]")[0] for line in lines} == {"PASS B-SLA [host 127.0.0.1:18801",
                                                      "PASS B-SLA [host 127.0.0.2:18802"}
    # each host at its own 300 IOPS, not the two summed into one 600-IOPS volume
    assert all("300 IOPS measured" in line for line in lines)
    assert "the report holds 2 hosts, each judged on its own" in done.stdout
    one = judge_shape(report, "--volume-type=io1", "--volume-size=100", "--volume-iops=300",
                      "--host=127.0.0.2")
    assert one.stdout.count("PASS") == 1 and "127.0.0.2:18802" in one.stdout
    wrong = judge(report, *IO1, "--host=10.9.9.9")
    assert wrong.returncode == 4
    assert "the report's hosts are 127.0.0.2:18802, 127.0.0.1:18801" in wrong.stderr


def test_two_devices_in_one_report_are_judged_one_by_one_with_their_own_logs() -> None:
    done = judge_shape(str(SHAPES / "two_devices.json"), *IO1)
    by_device = {line.split("]")[0].split("[")[1]: line for line in done.stdout.splitlines()
                 if line.startswith(("PASS", "FAIL", "INCONCLUSIVE"))}
    assert set(by_device) == {"device a.img", "device b.img"}, done.stdout
    assert "1,000 IOPS measured" in by_device["device a.img"]
    assert "600 IOPS measured" in by_device["device b.img"]
    assert by_device["device a.img"].startswith("PASS")
    assert not by_device["device b.img"].startswith("PASS")
    assert done.returncode in (1, 2)  # the worst of the two
    one = judge_shape(str(SHAPES / "two_devices.json"), *IO1, "--device=a.img")
    assert one.returncode == 0 and "device a.img" in one.stdout


def test_an_interrupted_run_is_said_so_and_judged_on_what_ran() -> None:
    done = judge_shape(str(SHAPES / "interrupted.json"), "--volume-type=io1", "--volume-size=100",
                 "--volume-iops=500")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"fio was interrupted \(fio: terminating on signal 2\) after [34]\.\d s "
                     "of the 300 s its runtime allowed: judged on what ran", done.stdout)
    assert "0 of 3 s below 450 IOPS" in done.stdout


def test_a_fio_2_1_report_asks_for_the_pattern_and_takes_it() -> None:
    report = str(HERE / "fio-2.1.4_two_jobs.json")
    done = judge(report, *IO1)
    assert done.returncode == 4
    assert "fio-2.1.4 wrote no job options into its report" in done.stderr
    assert "pass --rw" in done.stderr and "''" not in done.stderr
    given = judge(report, *IO1, "--rw=randread", "--bs=4k")
    assert given.returncode in (0, 1, 2), given.stderr
    assert "randread 4KiB" in given.stdout
