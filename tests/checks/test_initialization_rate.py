"""B-INIT's provisioned initialization rate, end to end: the check times a real fio read of
every block of a loop device whose reads the kernel throttles (cgroup blkio), and judge
gives the kept output the live check's verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.busy import neighbours
from support.common import SUITES, run_pytest

from pytest_ebsperf.emulate.throttle import (
    DirectionLimits,
    ThrottleGroup,
    cgroup_argv_prefix,
    choose_throttle,
)
from pytest_ebsperf.errors import EmulationUnavailableError

MIB = 2**20
SUITE = str(SUITES / "initialization")
#: gp3 of 1 GiB (125 MiB/s) restored at 100 MiB/s: a first read's mean must reach
#: 0.9 / (1/100 + 1/125) = 50 MiB/s.
FACTS = ("--volume-type=gp3", "--volume-size=1", "--volume-init-rate=100")


@pytest.fixture
def throttled(loop_device: Callable[..., str]
              ) -> Iterator[Callable[[int], tuple[str, tuple[str, ...]]]]:
    """Factory: ``throttled(read_bps)`` -> (a 64 MiB loop device, the argv prefix that runs a
    command in a cgroup whose reads of it the kernel holds to ``read_bps``). The cgroups go
    whatever happens."""
    groups: list[ThrottleGroup] = []

    def make(read_bps: int) -> tuple[str, tuple[str, ...]]:
        device = loop_device(64)
        sys_dir = Path(f"/sys/class/block/{Path(device).name}")
        # A first read of a sparse file's holes makes its page-cache pages: 165 MiB/s here,
        # 57 and 99 MiB/s on CI's machines, below the 200 MiB/s this test throttles to. Read
        # the backing file once now, so that fio's reads come from memory (2 GiB/s here) and
        # the kernel's throttle is all that holds them back.
        with open((sys_dir / "loop" / "backing_file").read_text().strip(), "rb") as backing:
            while backing.read(MIB):
                pass
        numbers = (sys_dir / "dev").read_text().strip()
        try:
            # the device's own numbers name it: two workers' tmp_paths can share a name
            group = choose_throttle(f"ebsperf-test-init-{numbers.replace(':', '-')}-"
                                    f"{len(groups)}", numbers).create()
        except EmulationUnavailableError as exc:
            pytest.skip(str(exc))
        groups.append(group)
        group.apply(DirectionLimits(read_bps=read_bps))
        return device, tuple(cgroup_argv_prefix(group.path))

    try:
        yield make
    finally:
        for group in groups:
            group.remove()


def _sectors_read(device: str) -> int:
    """The kernel's count of 512-byte sectors read from ``device`` (/sys/block/*/stat)."""
    return int(Path(f"/sys/class/block/{Path(device).name}/stat").read_text().split()[2])


def _kept_report(keep: Path) -> Path:
    found = [p for p in keep.rglob("*.json") if not p.name.endswith(".ebsperf.json")]
    assert len(found) == 1, found
    return found[0]


# Alone (conftest): beside three other workers' fio the CPUs are busy, and a shortfall seen
# then is rightly INCONCLUSIVE "host bound" (seen in a CI run), not the FAIL asserted here
@pytest.mark.alone
@pytest.mark.parametrize(("read_mibps", "outcome"), [(30, "fail"), (200, "pass")])
def test_a_first_read_is_judged_against_the_rate_and_judge_agrees(
        throttled: Callable[[int], tuple[str, tuple[str, ...]]], tmp_path: Path,
        read_mibps: int, outcome: str) -> None:
    device, prefix = throttled(read_mibps * MIB)
    keep = tmp_path / "kept"
    before = _sectors_read(device)
    ran = run_pytest(tmp_path, SUITE, f"--ebsperf-device={device}", *FACTS,
                     f"--ebsperf-keep-fio={keep}", "-p", "no:randomly", prefix=prefix,
                     timeout=300)
    assert ran.done.returncode == (1 if outcome == "fail" else 0), ran.tail()
    (check,) = ran.checks
    assert check["outcome"] == outcome and check["claim"] == "B-INIT", check
    # the whole 64 MiB device was read once (the kernel's count: fio's 64 MiB and the safety
    # probes' few blocks, 65.1 MiB here), at the throttle's pace
    assert 64 * MIB <= (_sectors_read(device) - before) * 512 <= 72 * MIB
    assert check["measured"]["value"] / MIB == pytest.approx(read_mibps, rel=0.15), check
    assert check["expected"]["value"] / MIB == pytest.approx(1 / (1 / 100 + 1 / 125), rel=1e-6)
    judged = subprocess.run(
        [sys.executable, "-m", "pytest_ebsperf", "judge", str(_kept_report(keep)),
         "--volume-type=gp3", "--volume-size=1", "--init-rate=100", "--json"],
        capture_output=True, text=True, check=False, timeout=120)
    (verdict,) = json.loads(judged.stdout)["verdicts"]
    assert verdict["outcome"] == outcome and verdict["claim"] == "B-INIT", judged.stdout
    assert verdict["measured"] == pytest.approx(check["measured"]["value"], rel=0.02)
    assert judged.returncode == (1 if outcome == "fail" else 0)


@pytest.mark.alone(machine=True)  # loads every CPU itself
def test_a_first_read_short_of_the_rate_fails_beside_a_busy_host(
        throttled: Callable[[int], tuple[str, tuple[str, ...]]], tmp_path: Path) -> None:
    # Low-priority neighbours on every CPU make the host 100 % busy, yet the kernel's
    # throttle, not the CPUs, sets a 30 MiB/s pace: fio hardly waits for a CPU and the device
    # holds its whole queue, so the shortfall is the volume's (it was INCONCLUSIVE "host
    # bound" before fio's own wait was read from the kernel).
    device, prefix = throttled(30 * MIB)
    with neighbours(os.cpu_count() or 1) as procs:
        ran = run_pytest(tmp_path, SUITE, f"--ebsperf-device={device}", *FACTS,
                         "-p", "no:randomly", prefix=prefix, timeout=300)
        assert all(proc.poll() is None for proc in procs)  # they were there throughout
    (check,) = ran.checks
    assert check["outcome"] == "fail", check["message"]
    assert check["measured"]["value"] / MIB == pytest.approx(30, rel=0.15), check
    assert check["details"]["host_cpu_busy_pct"] >= 90, check["details"]
    assert "Not host bound, though this machine's CPUs were" in check["message"]


def test_without_a_rate_or_on_an_emulated_volume_the_check_skips_with_the_reason(
        loop_device: Callable[..., str], tmp_path: Path) -> None:
    device = loop_device(64)
    plain = run_pytest(tmp_path, SUITE, f"--ebsperf-device={device}", "--volume-type=gp3",
                       "--volume-size=1", "-rs")
    assert plain.done.returncode == 0, plain.tail()
    assert "not created with a Provisioned Rate for Volume Initialization" in plain.output
    emulated = run_pytest(tmp_path, SUITE, "--emulate", "--volume-type=gp3",
                          "--volume-init-rate=100", "-rs")
    assert emulated.done.returncode == 0, emulated.tail()
    assert "empty volumes need no initialization" in emulated.output


@pytest.mark.parametrize("rate", ["99", "301"])
def test_a_rate_aws_does_not_accept_is_refused_with_its_range(tmp_path: Path, rate: str
                                                              ) -> None:
    ran = run_pytest(tmp_path, SUITE, "--emulate", "--volume-type=gp3",
                     f"--volume-init-rate={rate}")
    assert ran.done.returncode == 4, ran.tail()
    assert "AWS accepts 100-300 MiB/s" in ran.output and "Traceback" not in ran.output


def test_the_initialization_read_reads_every_block_once_and_keeps_what_fio_measured(
        throttled: Callable[[int], tuple[str, tuple[str, ...]]]) -> None:
    from pytest_ebsperf.aws.initialization import initialization_read
    from pytest_ebsperf.fio.runner import FioRunner

    device, _ = throttled(10**12)  # a device of 64 MiB, not held back
    took, problem, result = initialization_read(FioRunner(), device, 1.0)
    assert problem is None and result is not None
    assert result.read.io_bytes == 64 * MIB and result.write.io_bytes == 0
    assert result.read.bw_bytes > 0 and 0 < took < 120
