"""Throttle limits, cgroup writers and the availability check, without touching the kernel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ebsperf.emulate import device, loop, throttle
from pytest_ebsperf.emulate.throttle import (
    CgroupRoots,
    CgroupV1Throttle,
    CgroupV2Throttle,
    DirectionLimits,
    cgroup_argv_prefix,
    choose_throttle,
    find_cgroup_roots,
    format_io_max,
    split_limits,
)
from pytest_ebsperf.errors import EmulationUnavailableError


def test_a_70_30_mix_splits_the_combined_limits_70_30_with_headroom_for_each_direction() -> None:
    limits = split_limits(1000, 100 * 2**20, 0.7)
    # 2.5 % per direction: separate slices per direction would otherwise dip below the cap
    assert limits == DirectionLimits(717, 308, round(70 * 1.025 * 2**20),
                                     round(30 * 1.025 * 2**20))


@pytest.mark.parametrize("fraction", [1.0, 0.0, None])
def test_the_idle_direction_and_an_unknown_mix_keep_the_full_limit(
    fraction: float | None,
) -> None:
    assert split_limits(3000, 5_000_000, fraction) == DirectionLimits(
        3000, 3000, 5_000_000, 5_000_000
    )


def test_a_tiny_share_stays_at_least_one_because_zero_means_unlimited() -> None:
    assert split_limits(100, None, 0.999) == DirectionLimits(100, 1, None, None)


def test_no_limit_stays_no_limit_in_both_directions() -> None:
    assert split_limits(None, None, 0.5) == DirectionLimits()


@pytest.mark.parametrize("fraction", [-0.1, 1.5])
def test_a_read_fraction_outside_0_to_1_is_refused(fraction: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        split_limits(1000, None, fraction)


def test_the_v1_writer_writes_only_the_files_whose_value_changed(tmp_path: Path) -> None:
    group = CgroupV1Throttle(tmp_path / "ebsperf-1-0", "7:3").create()
    assert group.apply(DirectionLimits(read_iops=700, write_iops=300)) == 2
    assert (group.path / "blkio.throttle.read_iops_device").read_text() == "7:3 700\n"
    assert group.apply(DirectionLimits(read_iops=700, write_iops=300)) == 0
    assert group.apply(DirectionLimits(read_iops=700, write_iops=None)) == 1
    assert (group.path / "blkio.throttle.write_iops_device").read_text() == "7:3 0\n"
    assert not (group.path / "blkio.throttle.read_bps_device").exists()
    assert group.writes == 3


def test_the_v2_writer_writes_one_io_max_line_per_change(tmp_path: Path) -> None:
    group = CgroupV2Throttle(tmp_path / "ebsperf-1-0", "7:3").create()
    assert group.apply(DirectionLimits(700, 300, None, 2_000_000)) == 1
    line = (group.path / "io.max").read_text()
    assert line == "7:3 riops=700 wiops=300 rbps=max wbps=2000000\n"
    assert group.apply(DirectionLimits(700, 300, None, 2_000_000)) == 0
    assert group.apply(DirectionLimits()) == 1
    assert (group.path / "io.max").read_text() == "7:3 riops=max wiops=max rbps=max wbps=max\n"
    assert group.writes == 2


def test_io_max_lines_say_max_for_no_limit() -> None:
    assert format_io_max("259:1", DirectionLimits(read_bps=1)) == (
        "259:1 riops=max wiops=max rbps=1 wbps=max\n"
    )


def _fake_roots(tmp_path: Path, *, v2_io: bool, v1: bool) -> CgroupRoots:
    v2_root, v1_root = tmp_path / "unified", tmp_path / "blkio"
    v2_root.mkdir()
    v1_root.mkdir()
    (v2_root / "cgroup.subtree_control").write_text("memory io\n" if v2_io else "memory\n")
    if v1:
        (v1_root / "blkio.throttle.read_iops_device").write_text("")
    return CgroupRoots(v1_blkio=v1_root, v2=v2_root)


def test_the_v2_io_controller_is_preferred_when_it_is_enabled(tmp_path: Path) -> None:
    group = choose_throttle("ebsperf-1-0", "7:3", _fake_roots(tmp_path, v2_io=True, v1=True))
    assert isinstance(group, CgroupV2Throttle)
    assert group.path == tmp_path / "unified" / "ebsperf-1-0"


def test_v1_blkio_is_used_when_v2_has_no_io_controller(tmp_path: Path) -> None:
    group = choose_throttle("ebsperf-1-0", "7:3", _fake_roots(tmp_path, v2_io=False, v1=True))
    assert isinstance(group, CgroupV1Throttle)


def test_no_throttling_at_all_is_explained_in_a_sentence(tmp_path: Path) -> None:
    roots = _fake_roots(tmp_path, v2_io=False, v1=False)
    with pytest.raises(EmulationUnavailableError) as caught:
        choose_throttle("ebsperf-1-0", "7:3", roots)
    message = str(caught.value)
    assert "echo +io > /sys/fs/cgroup/cgroup.subtree_control" in message
    assert "mount -t cgroup -o blkio" in message
    assert "--device=PATH" in message


def test_cgroup_mounts_are_found_in_mountinfo(tmp_path: Path) -> None:
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
        "31 25 0:27 / /sys/fs/cgroup/my\\040blkio rw - cgroup cgroup rw,blkio\n"
        "32 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
    )
    assert find_cgroup_roots(mountinfo) == CgroupRoots(
        v1_blkio=Path("/sys/fs/cgroup/my blkio"), v2=Path("/sys/fs/cgroup/unified")
    )


def test_argv_prefix_enters_the_cgroup_and_passes_awkward_arguments_unchanged(
    tmp_path: Path,
) -> None:
    cgroup = tmp_path / "a dir with 'quotes' and $dollar"
    cgroup.mkdir()
    (cgroup / "cgroup.procs").write_text("")
    args = ["two words", "it's", '"double"', "$HOME", "*", ""]
    code = "import json, os, sys; print(json.dumps([os.getpid(), sys.argv[1:]]))"
    done = subprocess.run(
        cgroup_argv_prefix(cgroup) + [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    pid, seen = json.loads(done.stdout)
    assert seen == args
    assert (cgroup / "cgroup.procs").read_text() == f"{pid}\n"


def test_argv_prefix_does_not_run_the_command_when_the_cgroup_cannot_be_entered(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    done = subprocess.run(
        cgroup_argv_prefix(tmp_path / "missing") + ["touch", str(marker)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert not marker.exists()


class TestUnavailable:
    """check_emulation_available says what is missing and what to do."""

    @pytest.fixture(autouse=True)
    def everything_present(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        monkeypatch.setattr(os, "geteuid", lambda: 0)
        monkeypatch.setattr(shutil, "which", lambda tool: f"/usr/sbin/{tool}")
        (tmp_path / "control").write_text("")
        monkeypatch.setattr(device, "LOOP_CONTROL", tmp_path / "control")
        roots = _fake_roots(tmp_path, v2_io=False, v1=True)
        monkeypatch.setattr(throttle, "find_cgroup_roots", lambda: roots)

    def test_nothing_is_raised_when_everything_is_present(self) -> None:
        device.check_emulation_available()

    def test_not_root_asks_for_root_and_offers_a_real_device(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(os, "geteuid", lambda: 1000)
        with pytest.raises(EmulationUnavailableError, match="need root.*--device=PATH"):
            device.check_emulation_available()

    def test_missing_losetup_names_util_linux(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(shutil, "which", lambda tool: None if tool == "losetup" else tool)
        with pytest.raises(EmulationUnavailableError, match="need losetup from util-linux"):
            device.check_emulation_available()

    def test_no_loop_driver_asks_for_modprobe_loop(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setattr(device, "LOOP_CONTROL", tmp_path / "absent")
        monkeypatch.setattr(loop, "SYS_BLOCK", tmp_path / "no-block")
        with pytest.raises(EmulationUnavailableError, match=r"`modprobe loop`.*--device=PATH"):
            device.check_emulation_available()

    def test_no_throttling_asks_to_enable_the_io_controller(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(throttle, "find_cgroup_roots", lambda: CgroupRoots(None, None))
        with pytest.raises(EmulationUnavailableError, match="io controller"):
            device.check_emulation_available()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"size_bytes": 1000}, "size_bytes must be a positive multiple of 4096"),
        ({"io_unit_bytes": 1000}, "io_unit_bytes must be a multiple of 4096"),
        ({"name": "../etc"}, "name must be 'ebsperf' or 'ebsperf-<label>'"),
        ({"name": "volume"}, "so sweep_stale.. can find its leftovers"),
    ],
)
def test_bad_device_arguments_are_refused_before_anything_is_created(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        device.EmulatedDevice(**kwargs)  # type: ignore[arg-type]
