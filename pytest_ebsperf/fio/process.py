"""fio as a child process that cannot outlive the run that started it.

Whatever ends pytest (Ctrl-C, SIGTERM from a CI runner, SIGHUP, SIGKILL), a fio writing to a
device must stop with it. Locally fio is started directly by this process (no shell, no
``timeout`` in between) with the kernel's parent-death signal set (``prctl
PR_SET_PDEATHSIG``, through util-linux ``setpriv --pdeathsig`` where it exists): when the thread that started it dies for any reason, SIGKILL included,
the kernel sends fio SIGKILL. It is kept across ``exec``, so a prefix that ``exec``s fio (the
emulated volume's cgroup wrapper) keeps it too. fio stays in pytest's process group, so a
Ctrl-C at the terminal or a signal to the whole group reaches it directly.

Time limits are kept here, by the caller's loop, since no ``timeout`` wraps the process.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_ebsperf.device import guardian, lifetime

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the caller's reaping still applies
        return
    # the parent died before prctl took effect: the child was adopted (by pid 1, or by a
    # subreaper such as a container's init, so compare with the pid that forked it)
    if os.getppid() != parent:
        os._exit(1)


def _die_with_parent_and_default_sigint(parent: int) -> None:  # likewise, in the child
    _default_sigint()
    _die_with_parent(parent)


@functools.lru_cache(maxsize=1)
def _setpriv() -> str | None:
    """util-linux ``setpriv`` when it can set the parent-death signal (2.33 and later).

    Setting it there, before ``exec``, spares this process a ``preexec_fn``, which is not
    safe while other threads run (an emulated bucket's controller thread may)."""
    path = shutil.which("setpriv")
    if path is None:
        return None
    done = subprocess.run([path, "--help"], capture_output=True, text=True, check=False)
    return path if "--pdeathsig" in done.stdout else None


@functools.lru_cache(maxsize=1)
def _env_default_signal() -> str | None:
    """coreutils ``env`` when it can give a child the default action of a signal (9.0 and
    later)."""
    path = shutil.which("env")
    if path is None:
        return None
    done = subprocess.run([path, "--default-signal=INT", "true"], capture_output=True,
                          check=False)
    return path if done.returncode == 0 else None


def _sigint_restored(argv: list[str]) -> tuple[list[str], bool]:
    """``argv`` so that fio starts with SIGINT at its default action, and whether a
    ``preexec_fn`` must do it instead.

    A process started in the background of a non-interactive shell (``pytest ... &``, as
    CI runners and wrappers do) has SIGINT ignored, and a child inherits an ignored signal
    across ``exec``: fio would then ignore the SIGINT that asks it to stop and write its
    logs, and be killed without them."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return argv, False
    env = _env_default_signal()
    if env is None:
        return argv, True
    return [env, "--default-signal=INT", *argv], False


def _default_sigint() -> None:  # runs in the child between fork and exec
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class LocalProcess:
    """A local fio process whose stdout/stderr go to files in ``workdir``."""

    def __init__(self, argv: list[str], workdir: str, keep_fds: Sequence[int] = ()) -> None:
        self.stdout_path = Path(workdir) / "stdout.txt"
        self.stderr_path = Path(workdir) / "stderr.txt"
        setpriv = _setpriv()
        argv, reset_sigint = _sigint_restored(argv)
        preexec: Callable[[], None] | None
        if setpriv is not None:
            argv, preexec = [setpriv, "--pdeathsig", "KILL", "--", *argv], None
        else:
            preexec = functools.partial(_die_with_parent, os.getpid())
        if reset_sigint:
            preexec = (functools.partial(_die_with_parent_and_default_sigint, os.getpid())
                       if preexec else _default_sigint)
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                preexec_fn=preexec, close_fds=True,  # noqa: PLW1509 - prctl only
                pass_fds=tuple(keep_fds))  # device locks and claims: held until fio is gone
        self.started = time.monotonic()
        self.interrupted_at: float | None = None
        lifetime.register(self)  # SIGTERM/SIGHUP/exit of this process stop fio first

        guardian.watch(self.proc.pid)  # killed by the guardian should this process be killed

    def close(self) -> None:
        """Kill fio now and reap it (the registry calls this when the run is ended)."""
        self.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._forget()

    def _forget(self) -> None:

        if self.proc.poll() is not None:
            guardian.forget(self.proc.pid)
        lifetime.unregister(self)

    def __repr__(self) -> str:
        return f"fio process {self.proc.pid}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def interrupt(self) -> None:
        """SIGINT: fio stops its jobs and writes its final report and logs."""
        if self.proc.poll() is None:
            if self.interrupted_at is None:
                self.interrupted_at = time.monotonic()
            self._signal(signal.SIGINT)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self._signal(signal.SIGKILL)

    def _signal(self, signum: int) -> None:
        try:
            self.proc.send_signal(signum)
        except ProcessLookupError:
            pass

    def wait(self, timeout_s: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace_s: float = 5.0) -> int:
        """Interrupt, wait up to ``grace_s`` for fio's report, then kill; the exit status."""
        self.interrupt()
        rc = self.wait(grace_s)
        if rc is None:
            self.kill()
            rc = self.proc.wait()
        self._forget()
        return rc

    def finished(self) -> None:
        """fio exited on its own: nothing left to stop."""
        self._forget()

    def output(self) -> tuple[str, str]:
        return (self.stdout_path.read_text(errors="replace"),
                self.stderr_path.read_text(errors="replace"))


def read_from(path: str, offset: int) -> tuple[str, int]:
    """Text appended to ``path`` since ``offset`` (complete UTF-8 only) and the new offset."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return "", offset
    text = data.decode("utf-8", errors="ignore")
    return text, offset + len(text.encode("utf-8"))


#: Temporary directories of fio runs: ``<tmp>/ebsperf-fio.XXXXXXXX`` with an owner file.
FIO_DIR_PREFIX = "ebsperf-fio."
OWNER_FILE = ".owner"


class OwnedDir:
    """A run's temporary directory: held (owner file) while the run lives, removed with it,
    also on SIGTERM/SIGHUP; the next run's :func:`sweep_fio_dirs` removes it after SIGKILL."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.owner = lifetime.Owner(self.path / OWNER_FILE)
        lifetime.register(self)

    def close(self) -> None:

        shutil.rmtree(self.path, ignore_errors=True)
        self.owner.release(unlink=False)  # the directory (and its owner file) is gone
        lifetime.unregister(self)

    def __repr__(self) -> str:
        return f"fio directory {self.path}"


def sweep_fio_dirs(root: str | None = None) -> list[str]:
    """Remove the temporary directories of fio runs whose owner is dead (not locked), or
    that carry no owner file and are older than :data:`lifetime.GRACE_S`."""

    base = Path(root or tempfile.gettempdir())
    removed = []
    for path in sorted(base.glob(FIO_DIR_PREFIX + "*")):
        if not path.is_dir() or path.is_symlink():
            continue
        if lifetime.owner_alive(path / OWNER_FILE, path):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(f"fio directory {path}")
    return removed


# -- how long fio waited for a CPU ---------------------------------------------------------
class RunQueueWait:
    """How long a process's threads (and its children's) waited in the run queue for a CPU:
    the second figure of ``/proc/PID/task/TID/schedstat`` (ns), the most seen per thread.
    Sampled while the process runs, since a thread's figure goes with it; the last tenth of
    a second before a thread ends may be missed. :attr:`seconds` is None when nothing could
    be read (no schedstat in this kernel, or the process ended first)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._seen: dict[int, int] = {}

    def sample(self) -> None:
        pending, done = [self.pid], set()
        while pending:
            pid = pending.pop()
            if pid in done:
                continue
            done.add(pid)
            try:
                tasks = list(Path(f"/proc/{pid}/task").iterdir())
            except OSError:
                continue
            for task in tasks:
                try:
                    waited = int((task / "schedstat").read_text().split()[1])
                    pending.extend(int(c) for c in (task / "children").read_text().split())
                except (OSError, ValueError, IndexError):
                    continue
                tid = int(task.name)
                self._seen[tid] = max(self._seen.get(tid, 0), waited)

    @property
    def seconds(self) -> float | None:
        return sum(self._seen.values()) / 1e9 if self._seen else None
