"""Bad input gets a sentence, exit status 4, and no fio: each case a user actually typed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.common import ROOT

IO1_READ = (f"{ROOT}/suites/io1/test_io1.py::"
            "test_random_read_holds_provisioned_iops_999_percent_of_seconds")


@pytest.fixture
def recording_fio(tmp_path: Path) -> tuple[Path, Path]:
    """A fio that writes a line to a log each time it is started, then runs nothing."""
    log = tmp_path / "fio-started.log"
    script = tmp_path / "fio"
    script.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexit 1\n")
    script.chmod(0o755)
    return script, log


def run(tmp_path: Path, fio: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", IO1_READ, "--device=/dev/null", "--volume-type=io1",
         "--volume-size=100", "--volume-iops=2000", f"--fio={fio}", "-p", "no:cacheprovider",
         *args], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)


def random_bytes(path: Path) -> str:
    path.write_bytes(bytes((i * 7919 + 13) % 256 for i in range(4096)))
    return str(path)


CASES = {
    "full-width digits": (["--volume-size=２００"], "not ASCII digits"),
    "run time too long": (["--ebsperf-runtime=1e300"], "is outside 1 s to 604,800 s"),
    "run time too short": (["--ebsperf-runtime=0.0001"], "is outside 1 s to 604,800 s"),
    "port out of range": (["--ebsperf-host=ssh://:@:99999"], "has a port that is not a number"),
    "no host": (["--ebsperf-host=ssh://root@:22"], "names no host"),
    "unknown backend": (["--ebsperf-host=sshh://box"], "names no connection backend"),
    "job file of random bytes": (["--ebsperf-job-file={random}"], "is not text"),
    "job file /dev/zero": (["--ebsperf-job-file=/dev/zero"], "is not a regular file"),
    "mmap a file": (["--ebsperf-fio-options=mem=mmap:{notes}"], "names a file or device"),
    "iolog of another device": (["--ebsperf-fio-options=read_iolog=/dev/sdz"],
                                "read_iolog is refused"),
    "broken hosts file without --hosts": (["--ebsperf-hosts-file={broken}"],
                                          "is not valid TOML"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_a_sentence_with_exit_4_before_any_fio(
        case: str, tmp_path: Path, recording_fio: tuple[Path, Path]) -> None:
    fio, log = recording_fio
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    broken = tmp_path / "hosts.toml"
    broken.write_text("[defaults\ntype = 'io1'\n")
    args, said = CASES[case]
    filled = [a.format(random=random_bytes(tmp_path / "job.fio"), notes=notes, broken=broken)
              for a in args]
    done = run(tmp_path, fio, *filled)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert said in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert not log.exists(), f"fio was started: {log.read_text()}"
    assert notes.read_text() == "my notes\n"


def test_an_unreachable_host_is_a_sentence(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", IO1_READ, "--device=/dev/xvdf", "--volume-type=io1",
         "--volume-size=100", "--volume-iops=2000", "--ebsperf-host=ssh://root@127.0.0.1:1",
         "-p", "no:cacheprovider"], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False)
    assert done.returncode == 4
    assert "127.0.0.1 cannot be reached" in done.stderr
    assert "Connection refused" in done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr


def test_the_recording_fio_is_started_when_the_input_is_good(
        tmp_path: Path, recording_fio: tuple[Path, Path]) -> None:
    fio, log = recording_fio
    run(tmp_path, fio)
    assert log.exists() and "--version" in log.read_text()  # the control: it does record
