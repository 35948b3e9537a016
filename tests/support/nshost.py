"""Real remote hosts for tests: sshd in a network namespace of its own, reached over ssh.

Each :class:`NamespaceHost` is a network namespace joined to this machine by a veth pair with
addresses from 10.213.0.0/16 that exist only while the test runs, an sshd inside it (its own
host key, one authorized key, no PAM), and a private mount namespace, so that a path made
with :meth:`NamespaceHost.private_dir` or a mount made with :meth:`NamespaceHost.sh` exists on
"the remote host" only. testinfra reaches it with a generated ssh config
(``ssh://root@10.213.N.2`` with ``--ssh-config``). Everything is removed by :meth:`close`:
sshd and its sessions (killed by process group), the namespace (which takes the veth pair),
the private directories and the key files.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SUBNET = "10.213"
BLACKHOLE = f"{SUBNET}.0.0/16"


def can_make_hosts() -> bool:
    """Root, ``ip`` and ``sshd``: what a namespace host needs."""
    return (os.geteuid() == 0 and shutil.which("ip") is not None
            and os.path.exists("/usr/sbin/sshd") and shutil.which("ssh") is not None
            and shutil.which("nsenter") is not None)


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs)


class NamespaceHost:
    """One remote host; ``spec`` is its testinfra host spec, ``ssh_config`` its config file."""

    def __init__(self, index: int) -> None:
        self.index = index
        tag = f"{os.getpid()}x{index}"  # the whole pid: sweep_stale() tells dead owners
        self.netns = f"ebsperf-t{tag}"
        self.veth = f"ebt{tag}"[:15]
        third = (os.getpid() + index) % 250 + 1
        self.address = f"{SUBNET}.{third}.2"
        self.gateway = f"{SUBNET}.{third}.1"
        self.tmp = Path(tempfile.mkdtemp(prefix="ebsperf-nshost."))
        self.ssh_config = self.tmp / "ssh_config"
        self.spec = f"ssh://root@{self.address}"
        self._private: list[Path] = []
        self._sshd: subprocess.Popen[bytes] | None = None

    # -- life ------------------------------------------------------------------------------
    def start(self) -> NamespaceHost:
        try:
            self._network()
            self._keys()
            self._start_sshd()
            self._mount_cgroups()
        except BaseException:
            self.close()
            raise
        return self

    def _network(self) -> None:
        # Addresses of the range that no live host holds (a host just closed, a typo) must
        # fail here, never follow the default route off the machine.
        _run(["ip", "route", "replace", "blackhole", BLACKHOLE])
        _run(["ip", "netns", "add", self.netns])
        _run(["ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0",
              "netns", self.netns])
        _run(["ip", "addr", "add", f"{self.gateway}/30", "dev", self.veth])
        _run(["ip", "link", "set", self.veth, "up"])
        inside = ["ip", "netns", "exec", self.netns]
        _run(inside + ["ip", "addr", "add", f"{self.address}/30", "dev", "eth0"])
        _run(inside + ["ip", "link", "set", "eth0", "up"])
        _run(inside + ["ip", "link", "set", "lo", "up"])

    def _keys(self) -> None:
        for name in ("host_key", "user_key"):
            _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.tmp / name)])
        (self.tmp / "authorized_keys").write_text((self.tmp / "user_key.pub").read_text())
        (self.tmp / "sshd_config").write_text(
            f"ListenAddress {self.address}\nPort 22\nHostKey {self.tmp}/host_key\n"
            f"AuthorizedKeysFile {self.tmp}/authorized_keys\nPermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            f"StrictModes no\nPidFile {self.tmp}/sshd.pid\nMaxSessions 64\nMaxStartups 64\n"
            "LogLevel ERROR\nAcceptEnv LANG LC_*\n")
        self.ssh_config.write_text(
            f"Host {self.address}\n  User root\n  IdentityFile {self.tmp}/user_key\n"
            "  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
            "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  ConnectTimeout 5\n"
            "  BatchMode yes\n")
        os.chmod(self.tmp / "user_key", 0o600)

    def _start_sshd(self) -> None:
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        # The host's root has a shell start-up file of its own, read by every command ssh
        # runs (Debian's bash reads ~/.bashrc under sshd): a development machine's (pyenv's
        # init, 0.1 s of CPU) made it most of a fleet run's CPU. In its own mount namespace
        # the remote host's root starts with an empty one, as a freshly made host does.
        empty = self.tmp / "bashrc"
        empty.write_text("")
        start = ('rc="$(getent passwd root | cut -d: -f6)/.bashrc"; '
                 'if [ -f "$rc" ]; then mount --bind "$1" "$rc" || exit 1; fi; '
                 'exec /usr/sbin/sshd -D -e -f "$2"')
        argv = ["ip", "netns", "exec", self.netns, "unshare", "--mount",
                "--propagation", "private", "sh", "-c", start, "sh", str(empty),
                str(self.tmp / "sshd_config")]
        self._sshd = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      start_new_session=True)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self._sshd.poll() is not None:
                said = self._sshd.stderr.read().decode() if self._sshd.stderr else ""
                raise RuntimeError(f"sshd in {self.netns} exited: {said.strip()}")
            with contextlib.suppress(OSError), socket.create_connection(
                    (self.address, 22), timeout=0.5) as conn:
                if conn.recv(4).startswith(b"SSH"):
                    return
            time.sleep(0.1)
        raise RuntimeError(f"sshd in {self.netns} did not answer on {self.address}:22")

    def _mount_cgroups(self) -> None:
        """``ip netns exec`` mounts a fresh /sys for the namespace, without the cgroup
        hierarchies a real host has: mount this machine's throttling hierarchy (v1 blkio or
        v2) at the same place, so the host can make and limit cgroups of its own."""
        from pytest_ebsperf.emulate.throttle import find_cgroup_roots

        roots = find_cgroup_roots()
        script = "mount -t tmpfs -o mode=0755 cgroup_root /sys/fs/cgroup"
        if roots.v1_blkio is not None:
            script += (f" && mkdir -p {roots.v1_blkio} && mount -t cgroup -o blkio blkio "
                       f"{roots.v1_blkio}")
        elif roots.v2 is not None:
            script += f" && mkdir -p {roots.v2} && mount -t cgroup2 none {roots.v2}"
        done = self.sh(script)
        if done.returncode != 0:
            raise RuntimeError(f"cannot mount cgroups in {self.netns}: {done.stderr}")

    @property
    def sshd_pid(self) -> int:
        """The sshd inside the namespaces (its mount namespace is "the remote host's")."""
        pid_file = self.tmp / "sshd.pid"
        deadline = time.monotonic() + 5
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return int(pid_file.read_text())

    def stop_sshd(self) -> None:
        """The host stays on the network but nothing listens: connections are refused."""
        if self._sshd is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._sshd.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._sshd.wait(timeout=5)

    def close(self) -> None:
        if self._sshd is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._sshd.pid, signal.SIGKILL)
            # sessions run in their own process groups: end everything in the namespace
            out = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True,
                                 text=True, check=False).stdout
            for pid in map(int, out.split()):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._sshd.wait(timeout=5)
            if self._sshd.stderr:
                self._sshd.stderr.close()
            self._sshd = None
        subprocess.run(["ip", "netns", "del", self.netns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True, check=False)
        others = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                check=False).stdout
        if "ebsperf-t" not in others:  # the last host of the range: its guard goes too
            subprocess.run(["ip", "route", "del", "blackhole", BLACKHOLE], capture_output=True,
                           check=False)
        for path in self._private:
            with contextlib.suppress(OSError):
                path.rmdir()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- the remote host's own world -------------------------------------------------------
    def sh(self, script: str) -> subprocess.CompletedProcess[str]:
        """Run ``script`` in the remote host's namespaces (as its root would, locally)."""
        return subprocess.run(["nsenter", "-t", str(self.sshd_pid), "-m", "-n", "sh", "-c",
                               script], capture_output=True, text=True, check=False)

    def private_dir(self) -> Path:
        """A directory that is empty here and a tmpfs of its own on the remote host."""
        path = Path(tempfile.mkdtemp(prefix="ebsperf-remote.", dir="/run"))
        self._private.append(path)
        done = self.sh(f"mount -t tmpfs -o size=1m,mode=0755 none {path}")
        if done.returncode != 0:
            raise RuntimeError(f"cannot mount a private tmpfs on {path}: {done.stderr}")
        return path

    def device_node(self, device: str, where: Path) -> str:
        """A node for ``device`` (``/dev/loopN``) that exists on the remote host only."""
        st = os.stat(device)
        node = where / os.path.basename(device)
        done = self.sh(f"mknod {node} b {os.major(st.st_rdev)} {os.minor(st.st_rdev)}")
        if done.returncode != 0:
            raise RuntimeError(f"mknod {node}: {done.stderr}")
        return str(node)

    def testinfra_host(self) -> Any:
        import testinfra

        return testinfra.get_host(self.spec, ssh_config=str(self.ssh_config))


def sweep_stale() -> list[str]:
    """Remove the namespaces (their processes and veth pairs) of test runs that were killed
    before their clean-up ran (SIGKILL, or SIGTERM to a pytest with no handler): named
    ``ebsperf-t<pid>x<n>``, taken only when that pid is gone."""
    import re

    removed = []
    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, check=False)

    listed = run(["ip", "netns", "list"]).stdout
    for pid_text, index in re.findall(r"^ebsperf-t(\d+)x(\d+)\b", listed, re.MULTILINE):
        if Path(f"/proc/{pid_text}").exists():
            continue  # its run is alive
        netns = f"ebsperf-t{pid_text}x{index}"
        for pid in map(int, run(["ip", "netns", "pids", netns]).stdout.split()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        run(["ip", "netns", "del", netns])
        run(["ip", "link", "del", f"ebt{pid_text}x{index}"[:15]])
        removed.append(netns)
    return removed


@contextlib.contextmanager
def namespace_hosts(count: int = 1) -> Iterator[list[NamespaceHost]]:
    """``count`` running hosts, removed on every way out (Ctrl-C included); a killed
    earlier run's hosts are swept first."""
    sweep_stale()
    hosts: list[NamespaceHost] = []
    try:
        for index in range(count):
            hosts.append(NamespaceHost(index).start())
        yield hosts
    finally:
        for host in hosts:
            host.close()
