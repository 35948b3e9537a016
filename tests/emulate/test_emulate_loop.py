"""Detaching a loop device: only the binding that was checked is ever cleared.

A check of the backing file followed by ``losetup --detach`` leaves a window: the device can
be released (autoclear at its last close) and attached again by a run beside this one, whose
fio then finds a "zero sized block device". ``loop.detach`` holds the device open while it
checks and clears it, and the kernel neither tears down nor rebinds an open loop device."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.common import needs_root

from pytest_ebsperf.emulate import loop

pytestmark = needs_root
MIB = 1024 * 1024


@pytest.fixture
def attached(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    backing = tmp_path / "volume.img"
    loop.create_sparse_file(backing, 8 * MIB)
    name, _ = loop.attach(backing)
    try:
        yield name, backing
    finally:
        loop.detach(name, backing)


def test_a_device_nobody_holds_is_released_at_once(attached: tuple[str, Path]) -> None:
    name, backing = attached
    assert loop.loop_backing_file(name) == str(backing)
    loop.detach(name, backing)
    assert loop.loop_backing_file(name) != str(backing)


def test_a_device_bound_to_another_file_is_left_alone(attached: tuple[str, Path],
                                                      tmp_path: Path) -> None:
    name, backing = attached
    loop.detach(name, tmp_path / "another.img")  # what a stale record says was there
    assert loop.loop_backing_file(name) == str(backing)


def test_a_held_device_stays_bound_to_what_was_checked_until_its_last_close(
        attached: tuple[str, Path]) -> None:
    """While a holder has it open the detach only sets autoclear: the number cannot be freed
    and bound to another file under the holder (the window the old detach had)."""
    name, backing = attached
    holder = os.open(loop.DEV / name, os.O_RDONLY | os.O_CLOEXEC)
    try:
        loop.detach(name, backing, timeout=0.3)
        assert loop.loop_backing_file(name) == str(backing)
        flags = int((loop.SYS_BLOCK / name / "loop" / "autoclear").read_text())
        assert flags == 1
    finally:
        os.close(holder)
    deadline = time.monotonic() + 5.0  # released at the last close (the kernel may defer)
    while loop.loop_backing_file(name) == str(backing) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert loop.loop_backing_file(name) != str(backing)
