"""The machine fio runs on, reached through a pytest-testinfra host (``local://`` by default).

Every command goes through ``host.run`` with testinfra's ``%s`` quoting, so a remote host
(``ssh://``, ``paramiko://``...) is a drop-in. testinfra has no timeout, so long commands are
bounded on the target itself with coreutils ``timeout``.

On testinfra's own local backend without sudo, the file calls (read, list, test, make and
remove a temporary directory) are made by this process directly: they are what ``cat``,
``ls``, ``test``, ``mktemp`` and ``rm`` would do as the same user, without a shell each (a
fio run reads its report and logs with about ten of them).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import shutil
import stat
import tempfile
import time
from typing import Any, NamedTuple

from pytest_ebsperf.errors import DeviceError, FioRunError, HostUnreachableError

#: Exit status of ``timeout`` when the time ran out (the command got the first signal).
TIMEOUT_RC = 124
#: Exit status when the command had to be killed after the grace period (128 + SIGKILL).
KILLED_RC = 137
#: Seconds ``timeout`` waits after SIGINT before SIGKILL; fio needs a moment to write its report.
KILL_AFTER_S = 15
_ERE_SPECIAL = re.compile(r"([.^$*+?()\[\]{}|\\])")


class RunResult(NamedTuple):
    """Exit status and output of one command (unpacks as ``rc, stdout, stderr``)."""

    rc: int
    stdout: str
    stderr: str


class FioHost:
    """A thin wrapper around a testinfra host with the few file and process calls fio needs.

    ``host`` is a testinfra ``Host`` (``testinfra.get_host("ssh://box")``); without one the
    local machine is used. testinfra is imported only when no host is given.
    """

    def __init__(self, host: Any = None) -> None:
        if host is None:
            import testinfra  # lazy: heavy, and unused when the caller brings a host

            host = testinfra.get_host("local://")
        self.host = host
        backend = getattr(host, "backend", None)
        #: File calls made in this process: testinfra's local backend, as this user.
        self.direct = (type(backend).__module__ == "testinfra.backend.local"
                       and not getattr(backend, "sudo", False))

    def __str__(self) -> str:
        backend = getattr(self.host, "backend", None)
        name = getattr(backend, "hostname", None) or "localhost"
        return "this machine" if name in ("local", "localhost") else str(name)

    @property
    def is_local(self) -> bool:
        """True for the machine pytest runs on (fio can then be a child of this process)."""
        backend = getattr(self.host, "backend", None)
        return getattr(backend, "NAME", "") == "local"

    def run(self, argv: list[str], timeout_s: float | None = None) -> RunResult:
        """Run ``argv`` (quoted by testinfra); with ``timeout_s`` it gets SIGINT when time is up,
        then SIGKILL after :data:`KILL_AFTER_S` seconds (rc :data:`TIMEOUT_RC` / :data:`KILLED_RC`).
        """
        if timeout_s is not None:
            argv = [
                "timeout",
                "--signal=INT",
                f"--kill-after={KILL_AFTER_S}",
                f"{timeout_s:g}",
            ] + argv
        try:
            result = self.host.run(" ".join(["%s"] * len(argv)), *argv)
        except Exception as exc:  # noqa: BLE001 - each backend raises its own errors
            raise HostUnreachableError(self._unreachable(exc)) from None
        return RunResult(int(result.rc), str(result.stdout), str(result.stderr))

    def _unreachable(self, exc: BaseException) -> str:
        """testinfra's ssh backend raises RuntimeError(result) when ssh itself fails (exit
        status 255): the sentence says what ssh said."""
        result = exc.args[0] if exc.args and hasattr(exc.args[0], "stderr") else None
        if result is None:
            return (f"{self} cannot be reached ({type(exc).__name__}: {exc}). Check the host "
                    "spec (--ebsperf-host=ssh://user@host:port) and that it answers.")
        raw = result.stderr
        said = (raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)).strip()
        if "permission denied" in said.lower():
            return f"{self} refuses the login ({said[:300]}). Check the user and the key."
        said = said[:300] or "no output"
        return (f"{self} cannot be reached (exit status {result.rc}: {said}). Check the host "
                "spec (--ebsperf-host=ssh://user@host:port) and that its sshd answers.")

    def check(self, argv: list[str]) -> str:
        """stdout of ``argv``; a non-zero exit becomes a :class:`FioRunError` sentence."""
        result = self.run(argv)
        if result.rc != 0:
            raise FioRunError(
                f"'{' '.join(argv)}' failed on {self} (exit status {result.rc}): "
                f"{result.stderr.strip()[:200] or result.stdout.strip()[:200]}",
                rc=result.rc,
                stderr=result.stderr,
            )
        return result.stdout

    def read_text(self, path: str) -> str:
        """The content of a text file on the host."""
        if self.direct:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    return handle.read()
            except OSError as exc:
                raise self._failed(["cat", "--", path], exc) from None
        return self.check(["cat", "--", path])

    def listdir(self, path: str) -> list[str]:
        """Names in a directory (not recursive, hidden files included)."""
        if self.direct:
            try:
                return sorted(os.listdir(path))
            except OSError as exc:
                raise self._failed(["ls", "-1A", "--", path], exc) from None
        return sorted(n for n in self.check(["ls", "-1A", "--", path]).splitlines() if n)

    def glob(self, directory: str, pattern: str) -> list[str]:
        """Full paths in ``directory`` whose names match the shell pattern ``pattern``."""
        names = fnmatch.filter(self.listdir(directory), pattern)
        return [posixpath.join(directory, n) for n in names]

    def exists(self, path: str) -> bool:
        """True when ``path`` exists (a dangling symlink does not)."""
        if self.direct:
            return os.path.exists(path)
        return self.run(["test", "-e", path]).rc == 0

    def is_block_device(self, path: str) -> bool:
        """True when ``path`` is (or links to) a block device."""
        if self.direct:
            try:
                return stat.S_ISBLK(os.stat(path).st_mode)
            except (OSError, ValueError):
                return False
        return self.run(["test", "-b", path]).rc == 0

    def is_file(self, path: str) -> bool:
        """True when ``path`` is (or links to) a regular file."""
        if self.direct:
            return os.path.isfile(path)
        return self.run(["test", "-f", path]).rc == 0

    def mkdtemp(self, prefix: str = "ebsperf-fio.") -> str:
        """Create a private (0700) temporary directory on the host and return its path."""
        if self.direct:
            try:
                return tempfile.mkdtemp(prefix=prefix)
            except OSError as exc:
                raise self._failed(["mktemp", "-d", "-t", f"{prefix}XXXXXXXX"], exc) from None
        return self.check(["mktemp", "-d", "-t", f"{prefix}XXXXXXXX"]).strip()

    def remove_tree(self, path: str) -> None:
        """Delete a directory made by :meth:`mkdtemp`; refuses paths that cannot be one."""
        parts = [p for p in path.split("/") if p]
        if not path.startswith("/") or len(parts) < 2 or ".." in parts:
            raise DeviceError(f"Refusing to delete {path!r} on {self}: not a temporary directory.")
        if self.direct:
            shutil.rmtree(path, ignore_errors=True)
            return
        self.run(["rm", "-rf", "--", path])

    def _failed(self, argv: list[str], exc: OSError) -> FioRunError:
        """The sentence :meth:`check` gives when the command ``argv`` fails, for the same
        failure met in this process."""
        said = f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
        return FioRunError(f"'{' '.join(argv)}' failed on {self} (exit status 1): {said}",
                           rc=1, stderr=said)

    def kill_matching(self, marker: str, grace_s: float = 5.0) -> bool:
        """Stop every process whose command line contains ``marker``: SIGINT, then SIGKILL.

        SIGINT first lets fio write its report and close the device; whatever still runs after
        ``grace_s`` seconds gets SIGKILL. Returns True once nothing matches any more.
        """
        pattern = pgrep_pattern(marker)
        self.run(["pkill", "-INT", "-f", "--", pattern])
        if self._wait_gone(pattern, grace_s):
            return True
        self.run(["pkill", "-KILL", "-f", "--", pattern])
        return self._wait_gone(pattern, 5.0)

    def matching_pids(self, marker: str) -> list[int]:
        """PIDs of the processes whose command line contains ``marker``."""
        out = self.run(["pgrep", "-f", "--", pgrep_pattern(marker)]).stdout
        return [int(p) for p in out.split()]

    def _wait_gone(self, pattern: str, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while self.run(["pgrep", "-f", "--", pattern]).rc == 0:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True


def pgrep_pattern(marker: str) -> str:
    """An extended regex matching ``marker`` literally but not its own command line.

    pgrep/pkill run through a shell whose command line contains the pattern, so one plain
    character is put in brackets: ``[/]tmp/x`` matches ``/tmp/x`` but not ``[/]tmp/x``.
    """
    for i, char in enumerate(marker):
        if char.isalnum() or char == "/":
            return f"{_ere_escape(marker[:i])}[{char}]{_ere_escape(marker[i + 1 :])}"
    raise ValueError(f"{marker!r} is not a usable process marker (needs a letter, digit or '/').")


def _ere_escape(text: str) -> str:
    return _ERE_SPECIAL.sub(r"\\\1", text)
