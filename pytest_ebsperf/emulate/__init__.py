"""Emulated EBS volumes: throttled loop devices on tmpfs, runnable without AWS.

    check_emulation_available()          # raises EmulationUnavailableError with a sentence
    with EmulatedDevice(iops=3000, size_bytes=1 << 30) as device:
        subprocess.run(device.argv_prefix() + ["fio", f"--filename={device.path}", ...])
        device.set_mix(0.7)              # a 70/30 read/write workload
        device.set_rates(iops=100, bps=None)  # burst credits ran out

Needs root, loop devices and blk-throttle (cgroup v2 ``io.max`` or cgroup v1
``blkio.throttle.*``). :func:`sweep_stale` removes what a crashed run left behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ebsperf.deferred import names_from

if TYPE_CHECKING:  # the same names, loaded on first use (deferred.names_from)
    from pytest_ebsperf.emulate.cleanup import close_all, sweep_stale
    from pytest_ebsperf.emulate.device import EmulatedDevice, check_emulation_available
    from pytest_ebsperf.emulate.throttle import (
        CgroupRoots,
        DirectionLimits,
        cgroup_argv_prefix,
        find_cgroup_roots,
        format_io_max,
        split_limits,
    )

#: Where each name of the package lives: importing one of its modules, or the package for
#: one name, does not load the others.
_WHERE: dict[str, str] = {
    "CgroupRoots": "throttle",
    "DirectionLimits": "throttle",
    "EmulatedDevice": "device",
    "cgroup_argv_prefix": "throttle",
    "check_emulation_available": "device",
    "close_all": "cleanup",
    "find_cgroup_roots": "throttle",
    "format_io_max": "throttle",
    "split_limits": "throttle",
    "sweep_stale": "cleanup",
}


__getattr__ = names_from(__name__, _WHERE)

__all__ = [
    "CgroupRoots",
    "DirectionLimits",
    "EmulatedDevice",
    "cgroup_argv_prefix",
    "check_emulation_available",
    "close_all",
    "find_cgroup_roots",
    "format_io_max",
    "split_limits",
    "sweep_stale",
]
