"""A misconfigured job is exit 4 with a sentence, before fio measures anything; a failed check
(exit 1) is only ever about what the volume did. Each case runs real pytest on the shipped
suites with a fio wrapper that logs every fio command line: none may name a device."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.common import FAILS_ON_A_QUIET_HOST, SUITES, needs_fio, needs_root


@pytest.fixture
def fio_log(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A fio that writes its command line to a log, then runs the real fio."""
    log = tmp_path / "fio-calls.log"
    wrapper = tmp_path / "fio"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec fio "$@"\n')
    wrapper.chmod(0o755)
    yield wrapper, log


def run(tmp_path: Path, wrapper: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           f"--fio={wrapper}", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)


def measuring_runs(log: Path) -> list[str]:
    """fio command lines that measured a device (probes use files in a temporary directory
    and --version / --enghelp name none)."""
    if not log.exists():
        return []
    return [line for line in log.read_text().splitlines() if "--filename=/dev/" in line]


def assert_usage_error(done: subprocess.CompletedProcess[str], log: Path, *words: str) -> None:
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    for word in words:
        assert word in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert " failed" not in done.stdout  # no check ran, so none failed
    assert measuring_runs(log) == [], measuring_runs(log)


@needs_root
@needs_fio
@pytest.mark.parametrize("target", ["emulated", "device"])
def test_io1_iops_above_what_io1_allows_is_a_usage_error(
        target: str, tmp_path: Path, fio_log: tuple[Path, Path],
        request: pytest.FixtureRequest) -> None:
    wrapper, log = fio_log
    if target == "emulated":
        where = ["--emulate"]
    else:
        device = request.getfixturevalue("loop_device")(size_mib=32)
        where = [f"--device={device}", "--ebsperf-no-discovery"]
    done = run(tmp_path, wrapper, str(SUITES / "io1"), *where, "--volume-type=io1",
               "--volume-size=2000", "--volume-iops=100000")
    assert_usage_error(done, log, "100,000", "64,000")


@needs_root
@needs_fio
def test_the_write_opt_in_on_a_mounted_device_is_a_usage_error(
        tmp_path: Path, fio_log: tuple[Path, Path], loop_device: Callable[..., str]) -> None:
    wrapper, log = fio_log
    device = loop_device(size_mib=32)
    subprocess.run(["mkfs.ext4", "-q", device], check=True, capture_output=True)
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    subprocess.run(["mount", device, str(mountpoint)], check=True, capture_output=True)
    try:
        done = run(tmp_path, wrapper, str(SUITES / "io1"), f"--device={device}",
                   "--volume-type=io1", "--volume-size=100", "--volume-iops=1000",
                   "--ebsperf-no-discovery", "--ebsperf-destructive")
    finally:
        subprocess.run(["umount", str(mountpoint)], check=False, capture_output=True)
    assert_usage_error(done, log, "--ebsperf-destructive cannot be honoured", "mounted",
                       "Run without it for the read-only checks")


@needs_root
@needs_fio
def test_encryption_twins_both_plain_are_a_usage_error(
        tmp_path: Path, fio_log: tuple[Path, Path]) -> None:
    wrapper, log = fio_log
    done = run(tmp_path, wrapper, str(SUITES / "encryption"), "--emulate",
               "--volume-encrypted=no", "--reference-encrypted=no")
    assert_usage_error(done, log, "S2-17 compares an encrypted volume with its plain twin",
                       "both plain")


@needs_root
@needs_fio
def test_a_marker_value_that_is_no_number_is_a_usage_error(
        tmp_path: Path, fio_log: tuple[Path, Path]) -> None:
    wrapper, log = fio_log
    (tmp_path / "test_mine.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.ebsperf(volume_type='io1', runtime='soon')\n"
        "def test_mine(ebsperf):\n"
        "    ebsperf.check_cap('S0-04', 'mine', ebsperf.workload('randread', '16k'))\n")
    done = run(tmp_path, wrapper, "test_mine.py", "--emulate")
    assert_usage_error(done, log, "'soon' from the ebsperf marker is not a number")


def test_facts_about_a_reference_device_that_is_not_given_are_a_usage_error(
        tmp_path: Path, fio_log: tuple[Path, Path]) -> None:
    wrapper, log = fio_log
    done = run(tmp_path, wrapper, str(SUITES / "encryption"), "--device=/dev/null",
               "--reference-encrypted=yes")
    assert_usage_error(done, log, "--reference-encrypted", "none is given")
    typo = run(tmp_path, wrapper, str(SUITES / "io1"), "--volume-type=io-1")
    assert_usage_error(typo, log, "'io-1' is not a valid --volume-type")


@FAILS_ON_A_QUIET_HOST
@needs_root
@needs_fio
def test_a_slow_volume_is_exit_1_and_a_misconfigured_one_exit_4(
        tmp_path: Path, fio_log: tuple[Path, Path]) -> None:
    """The two a CI gate must tell apart, side by side."""
    wrapper, log = fio_log
    slow = run(tmp_path, wrapper, f"{SUITES / 'io1' / 'test_io1.py'}::"
               "test_random_read_holds_provisioned_iops_999_percent_of_seconds",
               "--emulate", "--emulate-factor=0.5", "--ebsperf-runtime=4")
    assert slow.returncode == 1, slow.stdout[-3000:]
    assert measuring_runs(log), "the slow volume was measured"
