"""Remote safety: a device on another host is inspected there, through its testinfra backend.

The remote host is real: sshd in a network namespace of its own (tests/support/nshost.py), reached by
testinfra over ssh. It has a mount namespace of its own too, so a device node or a mount made
"on the remote host" does not exist here: only an inspection that really ran there can see it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.common import ROOT, backing_file, needs_fio, needs_root, sha256
from support.nshost import NamespaceHost, can_make_hosts, namespace_hosts

from pytest_ebsperf.device.safety import (
    RemoteInspectionError,
    check_writable,
    inspect_device,
    inspect_on,
)
from pytest_ebsperf.errors import DeviceError, UnsafeDeviceError
from pytest_ebsperf.fio.host import FioHost, RunResult

IO1_WRITE = f"{ROOT}/suites/io1/test_io1.py::test_random_write_holds_provisioned_iops"
needs_hosts = pytest.mark.skipif(not can_make_hosts(),
                                 reason="needs root, ip (iproute2), sshd and nsenter")
pytestmark = [needs_root, needs_hosts]


@pytest.fixture(scope="module")
def remote() -> Iterator[NamespaceHost]:
    with namespace_hosts(1) as (host,):
        yield host


def mkfs(device: str) -> None:
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True, capture_output=True)


def test_a_device_that_exists_only_on_the_remote_host_is_inspected_there(
        remote: NamespaceHost, loop_device: Callable[..., str]) -> None:
    device = loop_device(64)
    mkfs(device)
    node = remote.device_node(device, remote.private_dir())
    with pytest.raises(DeviceError, match="does not exist"):
        inspect_device(node)  # not on this machine
    found = inspect_on(FioHost(remote.testinfra_host()), node)
    assert found.name == Path(device).name
    assert found.size_bytes == 64 * 2**20
    assert [sig.type for sig in found.signatures] == ["ext4"]


def _mounted_there(remote: NamespaceHost, loop_device: Callable[..., str]
                   ) -> tuple[str, str, Path]:
    """A loop device carrying ext4, mounted read-only on ``remote`` only: the device, its
    node there and the mount point."""
    device = loop_device(64)
    mkfs(device)
    where = remote.private_dir()
    node = remote.device_node(device, where)
    mnt = where / "data"
    assert remote.sh(f"mkdir {mnt} && mount -o ro {node} {mnt}").returncode == 0
    return device, node, mnt


def test_a_mount_on_the_remote_host_refuses_writes_there(
        remote: NamespaceHost, loop_device: Callable[..., str]) -> None:
    device, node, mnt = _mounted_there(remote, loop_device)
    try:
        assert inspect_device(device).mounted == ()  # nothing mounted in this namespace
        found = inspect_on(FioHost(remote.testinfra_host()), node)
        assert found.mounted == (str(mnt),)
        with pytest.raises(UnsafeDeviceError, match=f"is mounted on {mnt}; writes are refused"):
            check_writable(found, destructive=True)
    finally:
        remote.sh(f"umount {mnt}")


def test_a_missing_remote_device_is_a_sentence_naming_the_host(remote: NamespaceHost) -> None:
    host = FioHost(remote.testinfra_host())
    with pytest.raises(DeviceError, match=f"On {remote.address}: /dev/ebsperf-none does not "
                                          "exist; pass a block device"):
        inspect_on(host, "/dev/ebsperf-none")


class _NoPython:
    """A host whose shell has no python3 (error path of the inspection only)."""

    is_local = False

    def __str__(self) -> str:
        return "box"

    def run(self, argv: list[str], timeout_s: float | None = None) -> RunResult:
        return RunResult(127, "", "sh: 1: python3: not found")


def test_a_remote_host_without_python_is_told_what_to_install() -> None:
    with pytest.raises(RemoteInspectionError, match="python3 is not installed there"):
        inspect_on(_NoPython(), "/dev/xvdf")  # type: ignore[arg-type]


# -- end to end: pytest with --ebsperf-host ------------------------------------------------
def _pytest_on(remote: NamespaceHost, node: str, cwd: Path, *extra: str) -> Any:
    spec = f"{remote.spec}?ssh_config={remote.ssh_config}"
    return subprocess.run(
        [sys.executable, "-m", "pytest", IO1_WRITE, f"--ebsperf-host={spec}",
         f"--device={node}", "--volume-type=io1", "--volume-size=100", "--volume-iops=2000",
         "--ebsperf-runtime=2", "-p", "no:cacheprovider", "-rs", *extra],
        cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


@needs_fio
def test_a_remote_run_refuses_to_write_a_device_mounted_there_and_leaves_it_intact(
        remote: NamespaceHost, loop_device: Callable[..., str], tmp_path: Path) -> None:
    device, node, mnt = _mounted_there(remote, loop_device)
    before = sha256(backing_file(device))
    try:
        result = _pytest_on(remote, node, tmp_path, "--ebsperf-destructive")
        after = sha256(backing_file(device))
    finally:
        remote.sh(f"umount {mnt}")
    # a usage error before any fio run (exit 4), said once on stderr
    said = result.stdout + result.stderr
    assert f"is mounted on {mnt}; writes are refused" in said, said[-3000:]
    assert result.returncode == 4
    assert "Traceback" not in said
    assert after == before


def _ext4_there(remote: NamespaceHost, loop_device: Callable[..., str]
                ) -> tuple[str, str, str]:
    """A loop device carrying ext4, its node on ``remote`` and its bytes' hash."""
    device = loop_device(64)
    mkfs(device)
    return device, remote.device_node(device, remote.private_dir()), \
        sha256(backing_file(device))


@needs_fio
def test_a_remote_run_without_the_opt_in_skips_writes_naming_what_is_there(
        remote: NamespaceHost, loop_device: Callable[..., str], tmp_path: Path) -> None:
    device, node, before = _ext4_there(remote, loop_device)
    result = _pytest_on(remote, node, tmp_path)
    assert "carries an ext4 filesystem" in result.stdout, result.stdout[-3000:]
    assert result.returncode == 0  # skipped, not failed
    assert sha256(backing_file(device)) == before


@needs_fio
def test_a_remote_run_with_the_opt_in_says_what_it_overwrites_there_and_writes(
        remote: NamespaceHost, loop_device: Callable[..., str], tmp_path: Path) -> None:
    device, node, before = _ext4_there(remote, loop_device)
    result = _pytest_on(remote, node, tmp_path, "--ebsperf-destructive", "-s")
    line = f"ebsperf: overwriting ext4 on {node} on {remote.address} (--ebsperf-destructive)"
    assert line in result.stdout, result.stdout[-3000:]
    assert result.stdout.count("ebsperf: overwriting") == 1
    assert sha256(backing_file(device)) != before  # fio wrote there, as agreed


@needs_fio
def test_the_reference_device_on_a_remote_host_must_be_another_device(
        remote: NamespaceHost, loop_device: Callable[..., str], tmp_path: Path) -> None:
    device = loop_device(64)
    where = remote.private_dir()
    node = remote.device_node(device, where)
    twin = where / "twin"
    st = Path(device).stat()
    remote.sh(f"mknod {twin} b {os.major(st.st_rdev)} {os.minor(st.st_rdev)}")
    spec = f"{remote.spec}?ssh_config={remote.ssh_config}"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", f"{ROOT}/suites/encryption", f"--ebsperf-host={spec}",
         f"--device={node}", f"--reference-device={twin}", "--volume-type=io1",
         "--volume-size=100", "--volume-iops=2000", "-p", "no:cacheprovider"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    assert "is the device under test" in result.stderr
