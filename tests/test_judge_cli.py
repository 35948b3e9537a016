"""``python3 -m pytest_ebsperf judge``: verdicts on fio reports someone already has.

Real fio 3.33 reports and logs from tests/data/fio (a 4 KiB random read on a tmpfs-backed loop
device at about 150,000 IOPS; two stonewalled groups).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data" / "fio"


def judge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_ebsperf", "judge", *args],
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_report_that_meets_the_volumes_cap_passes_second_by_second() -> None:
    done = judge(str(DATA / "randread.json"), "--volume-type=io2", "--volume-size=1000",
                 "--volume-iops=150000", f"--logs={DATA / 'randread'}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("PASS B-SLA: io2 1,000 GiB 150,000 IOPS, randread 4KiB QD8x1")
    assert "of 2 s below 135,000 IOPS" in done.stdout


def test_a_report_far_above_the_volumes_cap_fails_as_another_volume() -> None:
    done = judge(str(DATA / "randread.json"), "--volume-type=io1", "--volume-size=100",
                 "--volume-iops=4000")
    assert done.returncode == 1
    assert "far above its cap of 4,000 IOPS" in done.stdout
    assert "no per-second series: judged on the mean alone" in done.stdout


def test_a_stonewalled_report_needs_a_group() -> None:
    report = str(DATA / "fio-3.33-stonewall-two-groups.json")
    done = judge(report, "--volume-type=gp3", "--volume-size=100")
    assert done.returncode == 4
    assert "--group=N on the command line" in done.stderr
    assert "Traceback" not in done.stderr
    reads = judge(report, "--volume-type=gp3", "--volume-size=100", "--group=0")
    assert reads.returncode in (0, 1, 2) and "randread 4KiB QD4x1" in reads.stdout


def test_bad_input_is_a_sentence() -> None:
    missing = judge("/nonexistent.json", "--volume-type=gp3")
    assert missing.returncode == 4
    assert "cannot be read (No such file or directory)" in missing.stderr
    wrong = judge(str(DATA / "randread.json"), "--volume-type=io1", "--volume-size=100",
                  "--volume-iops=90000")
    assert wrong.returncode == 4 and "Traceback" not in wrong.stderr
    assert wrong.stderr.startswith("error: ")
