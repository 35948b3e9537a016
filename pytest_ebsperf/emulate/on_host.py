"""An emulated volume on another host, made and removed through its testinfra Host object.

The same recipe as :class:`~pytest_ebsperf.emulate.device.EmulatedDevice` (a loop device on
a private tmpfs, throttled by a cgroup of its own), carried out with the host's own tools
(``mount``, ``truncate``, ``losetup``, ``fallocate``) and sysfs/cgroupfs writes, one command
at a time: nothing of this package has to be installed there, only util-linux and a shell.
fio runs inside the cgroup through the same ``sh -c 'echo $$ > cgroup.procs; exec fio'``
prefix as locally.

What it leaves out: volumes with a burst bucket (gp2, st1, sc1) would need the credit
controller's thread to read the host's cgroup counters every few hundred milliseconds, one
ssh round trip each; they are refused on remote hosts with a sentence (emulate them where
pytest runs). Everything made is named ``ebsperf-remote-<pid>-<n>`` and removed by
:meth:`close`, which the run's clean-up calls on every way out (Ctrl-C and SIGTERM included);
:func:`sweep_remote` removes what a killed run left on a host.
"""

from __future__ import annotations

import itertools
import os
import shlex
import time
from dataclasses import fields
from typing import TYPE_CHECKING

from pytest_ebsperf.device import lifetime
from pytest_ebsperf.emulate.cleanup import MACHINE, pid_alive
from pytest_ebsperf.emulate.throttle import DirectionLimits, format_io_max, split_limits
from pytest_ebsperf.errors import EmulationUnavailableError, HostUnreachableError

if TYPE_CHECKING:
    from pytest_ebsperf.fio.host import FioHost
    from pytest_ebsperf.fio.workload import Workload

KIB = 1024
MIB = 1024 * KIB
PREFIX = "ebsperf-remote"
RUN_ROOT = "/run/ebsperf-remote"
_numbers = itertools.count()
_FIND_ROOTS = r"""
roots=$(awk '{for (i = 7; i <= NF; i++) if ($i == "-") { t = $(i + 1); o = $NF;
  if (t == "cgroup" && o ~ /(^|,)blkio(,|$)/ && v1 == "") v1 = $5;
  if (t == "cgroup2" && v2 == "") v2 = $5; break } }
  END { print (v1 == "" ? "-" : v1), (v2 == "" ? "-" : v2) }' /proc/self/mountinfo)
v1=${roots%% *}; v2=${roots##* }
if [ "$v1" != "-" ] && [ -e "$v1/blkio.throttle.read_iops_device" ]; then echo "1 $v1";
elif [ "$v2" != "-" ] && grep -qw io "$v2/cgroup.subtree_control" 2>/dev/null; then echo "2 $v2";
else echo none; fi
"""


class RemoteEmulatedDevice:
    """A throttled loop device on ``host`` that behaves like a volume (see the module)."""

    def __init__(self, host: FioHost, *, size_bytes: int, iops: float | None,
                 bps: float | None, io_unit_bytes: int = 256 * KIB, name: str = PREFIX
                 ) -> None:
        self.host = host
        self.size_bytes, self.iops, self.bps = size_bytes, iops, bps
        self.io_unit_bytes = io_unit_bytes
        self.name = f"{PREFIX}-{MACHINE}-{os.getpid()}-{next(_numbers)}"
        self.label = name
        self.read_fraction: float | None = None
        self.noswap = False
        self.closed = False
        #: No emulated latency is made on another host, so none is out of reach ("").
        self.beyond_reach = ""
        #: Why its emulation needs the host alone (witness.host_share), or "".
        self.heavy = ""
        self.run_dir = f"{RUN_ROOT}/{self.name}"
        self.backing = f"{self.run_dir}/{self.name}.img"  # its name says whose it is
        self.loop: str | None = None
        self.cgroup: str | None = None
        self.cgroup_version = 0
        self.major_minor = ""
        self._limits = DirectionLimits()
        self._mounted = False
        self._allocated = False
        self._restore: list[tuple[str, str]] = []
        #: Largest I/O the host's block layer never splits (see loop.exact_io_bytes).
        self.exact_io_bytes = 0

    def __repr__(self) -> str:
        return f"RemoteEmulatedDevice({self.loop or 'not attached'} on {self.host})"

    # -- life -------------------------------------------------------------------------------
    @property
    def path(self) -> str:
        if self.loop is None:
            raise RuntimeError(f"{self!r} is not started.")
        return self.loop

    def start(self) -> RemoteEmulatedDevice:

        lifetime.register(self)  # closed on every way out, with the local ones
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def _sh(self, script: str) -> str:
        result = self.host.run(["sh", "-c", script])
        if result.rc != 0:
            raise EmulationUnavailableError(
                f"Emulating a volume on {self.host} failed at `{script.strip()[:120]}` "
                f"(exit status {result.rc}): {(result.stderr or result.stdout).strip()[:200]}")
        return result.stdout

    def _create(self) -> None:
        version, root = self._roots()
        run = shlex.quote(self.run_dir)
        self._sh(f"mkdir -p {RUN_ROOT} && mkdir -m 0700 {run}")
        size = self.size_bytes + 4 * MIB
        tmpfs = f"mount -t tmpfs -o size={size},mode=0700"
        self._mounted = True  # before, not after: a Ctrl-C may land while mount runs there
        done = self.host.run(["sh", "-c", f"{tmpfs},noswap {self.name} {run}"])
        self.noswap = done.rc == 0
        if not self.noswap:
            self._sh(f"{tmpfs} {self.name} {run}")
        self._sh(f"truncate -s {self.size_bytes} {shlex.quote(self.backing)}")
        found = self.host.run(["losetup", "-f", "--show", "--direct-io=on", self.backing])
        if found.rc != 0:
            found = self.host.run(["losetup", "-f", "--show", self.backing])
        if found.rc != 0:
            raise EmulationUnavailableError(f"losetup failed on {self.host}: "
                                            f"{found.stderr.strip()[:200]}")
        self.loop = found.stdout.strip()
        name = os.path.basename(self.loop)
        queue = f"/sys/block/{name}/queue/max_sectors_kb"
        self._restore.append((queue, self.host.read_text(queue).strip()))
        self._sh(f"echo {self.io_unit_bytes // KIB} > {queue}")
        self.major_minor = self.host.read_text(f"/sys/block/{name}/dev").strip()
        sizes = self._sh(f"cat {queue} /sys/block/{name}/queue/max_segments; "
                         "getconf PAGESIZE").split()
        self.exact_io_bytes = min(int(sizes[0]) * KIB, int(sizes[1]) * int(sizes[2]))
        self.cgroup, self.cgroup_version = f"{root}/{self.name}", version
        self._sh(f"mkdir {shlex.quote(self.cgroup)}")
        self._apply()

    def _roots(self) -> tuple[int, str]:
        said = self._sh(_FIND_ROOTS).split()
        if not said or said[0] == "none":
            raise EmulationUnavailableError(
                f"{self.host} has no usable I/O throttling (neither cgroup v1 "
                "blkio.throttle.* nor cgroup v2 io.max): no volume can be emulated there.")
        return int(said[0]), said[1]

    def close(self) -> None:
        """Remove everything made on the host; safe to call twice and after a failure."""
        if self.closed:
            return
        self.closed = True

        lifetime.unregister(self)
        # Every step is tried whatever became of the one before: an SSH connection refused
        # on a busy host (sshd drops connections past its MaxStartups) must not leave the
        # loop device, mount and cgroup after it in place. A step that cannot reach the
        # host is tried once more; the first error is raised once all were tried.
        errors: list[BaseException] = []

        def step(argv: list[str]) -> None:
            for attempt in range(2):
                try:
                    self.host.run(argv)
                    return
                except HostUnreachableError as exc:
                    if attempt:
                        errors.append(exc)
                    else:
                        time.sleep(1.0)

        if self.cgroup:
            group = shlex.quote(self.cgroup)
            # processes still inside (a fio that outlived its run, e.g. after Ctrl-C) are
            # killed and waited for: the device and its file are theirs until they are gone
            step(["sh", "-c", (f"for p in $(cat {group}/cgroup.procs 2>/dev/null); "
                               "do kill -9 $p; done 2>/dev/null; i=0; "
                               f"while [ -s {group}/cgroup.procs ] && [ $i -lt 100 ]; "
                               f"do sleep 0.1; i=$((i+1)); done; rmdir {group}")])
        for path, value in self._restore:
            step(["sh", "-c", f"echo {shlex.quote(value)} > {path}"])
        # Each device is detached only while it is still backed by this volume's file: once
        # released, its number may already be another run's volume (a second `losetup -d`
        # of a number, or a stale `losetup -j` line, would take that one away mid-fio).
        # The subshell holds the device open (fd 3) while it checks and detaches: an open
        # loop device is neither torn down nor bound again, so the binding checked is the
        # one detached (the kernel finishes the detach when fd 3 closes).
        backing = shlex.quote(self.backing)
        ours = ('d() { ( exec 3<"$1" || exit 0; [ "$(cat /sys/block/${1##*/}/loop/'
                f'backing_file 2>/dev/null)" = {backing} ] && losetup -d "$1" ) 2>/dev/null; }}; ')
        if self.loop:
            step(["sh", "-c", ours + f"d {shlex.quote(self.loop)}"])
        if self._mounted:
            # a Ctrl-C while losetup ran there leaves a device this object never learnt of
            step(["sh", "-c", (ours + f"for x in $(losetup -j {backing} | "
                               "cut -d: -f1); do d $x; done")])
        if self._mounted:
            run = shlex.quote(self.run_dir)
            # the loop device lets go of its file a moment after losetup -d
            step(["sh", "-c", (f"i=0; while grep -q ' {self.run_dir} ' "
                               f"/proc/self/mountinfo; do umount {run} 2>/dev/null "
                               f"&& break; i=$((i+1)); [ $i -ge 50 ] && {{ umount -l "
                               f"{run}; break; }}; sleep 0.1; done")])
        step(["rmdir", self.run_dir])
        if errors:
            raise errors[0]

    # -- the interface the session uses -----------------------------------------------------
    def argv_prefix(self) -> list[str]:
        return ["sh", "-c", 'echo $$ > "$0"/cgroup.procs && exec "$@"', str(self.cgroup)]

    def prepare(self, workload: Workload) -> Workload:
        if workload.engine == "auto":
            workload = workload.replace(engine="libaio")
        if workload.pattern == "trim":
            self._allocated = False
        elif workload.writes and not self._allocated:
            self._sh(f"fallocate -l {self.size_bytes} {shlex.quote(self.backing)}")
            self._allocated = True
        self.set_mix(workload.read_fraction)
        return workload

    def set_mix(self, read_fraction: float | None) -> None:
        self.read_fraction = read_fraction
        self._apply()

    def set_rates(self, iops: float | None, bps: float | None) -> None:
        self.iops, self.bps = iops, bps
        self._apply()

    def swap_risk(self) -> str | None:
        return None if self.noswap else (
            f"{self.host} cannot keep the emulated volume's tmpfs out of swap (noswap needs "
            "Linux 6.4): its rates are at risk if that host swaps")

    def _apply(self) -> None:
        limits = split_limits(self.iops, self.bps, self.read_fraction)
        group = shlex.quote(str(self.cgroup))
        if self.cgroup_version == 2:
            if limits != self._limits:
                line = format_io_max(self.major_minor, limits).strip()
                self._sh(f"echo {shlex.quote(line)} > {group}/io.max")
        else:
            for item in fields(DirectionLimits):
                new, old = getattr(limits, item.name), getattr(self._limits, item.name)
                if new != old or not self._limits_written:
                    direction, unit = item.name.split("_")
                    self._sh(f"echo '{self.major_minor} {new or 0}' > "
                             f"{group}/blkio.throttle.{direction}_{unit}_device")
        self._limits = limits
        self._limits_written = True

    _limits_written = False


def check_remote_emulation(host: FioHost) -> None:
    """A sentence (EmulationUnavailableError) when volumes cannot be emulated on ``host``."""
    said = host.run(["sh", "-c", ("id -u; for t in losetup mount umount truncate fallocate; "
                                 "do command -v $t >/dev/null || echo missing:$t; done")])
    words = said.stdout.split()
    if not words or words[0] != "0":
        raise EmulationUnavailableError(
            f"Emulated volumes on {host} need root there (loop devices, tmpfs, cgroups); "
            "connect as root or with --sudo.")
    missing = [w.split(":", 1)[1] for w in words[1:] if w.startswith("missing:")]
    if missing:
        raise EmulationUnavailableError(
            f"Emulated volumes on {host} need {', '.join(missing)} (util-linux) there.")


def sweep_remote(host: FioHost) -> int:
    """Remove what killed runs of this machine left on ``host`` (loop devices, mounts,
    cgroups named ``ebsperf-remote-<this machine>-<pid>-*`` whose pytest process is gone);
    returns how many."""
    listed = host.run(["sh", "-c", f"ls -1 {RUN_ROOT} 2>/dev/null"]).stdout.split()
    removed = 0
    for name in listed:
        parts = name.split("-")  # ebsperf-remote-<machine>-<pid>-<n>
        if len(parts) != 5 or parts[2] != MACHINE or not parts[3].isdigit():
            continue  # not ours, or another machine's run
        pid = int(parts[3])
        if pid == os.getpid() or pid_alive(pid):
            continue  # ours, or a run still going on this machine
        leftover = RemoteEmulatedDevice(host, size_bytes=4096, iops=None, bps=None)
        leftover.name, leftover.run_dir = name, f"{RUN_ROOT}/{name}"
        leftover.backing = f"{leftover.run_dir}/{name}.img"
        loops = host.run(["losetup", "-j", leftover.backing]).stdout.split(":")[:1]
        if not (loops and loops[0].startswith("/dev/")):  # made by an earlier version
            loops = host.run(["losetup", "-j", f"{leftover.run_dir}/volume.img"]
                             ).stdout.split(":")[:1]
        leftover.loop = loops[0] if loops and loops[0].startswith("/dev/") else None
        version, root = leftover._roots()
        leftover.cgroup, leftover.cgroup_version = f"{root}/{name}", version
        leftover._mounted = True
        leftover.close()
        removed += 1
    return removed

