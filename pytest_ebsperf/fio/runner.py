"""Run fio for a :class:`Workload` on a host and return a :class:`FioResult` with its series.

The runner checks the target first (fio happily benchmarks a regular file, and creates one for
a mistyped path), bounds the run on the target with ``timeout``, reaps fio on any error or
Ctrl-C, always removes its temporary directory and turns every failure into a sentence.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import posixpath
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import (
    DeviceError,
    FioNotFoundError,
    FioOutputError,
    FioRunError,
)
from pytest_ebsperf.fio.engines import Engines
from pytest_ebsperf.fio.host import KILL_AFTER_S, KILLED_RC, TIMEOUT_RC, FioHost, RunResult
from pytest_ebsperf.fio.jobs import fio_argv
from pytest_ebsperf.fio.live import LiveSeries, StatusStream
from pytest_ebsperf.fio.logs import build_series, group_log_files
from pytest_ebsperf.fio.parse import parse_result, parse_version
from pytest_ebsperf.fio.process import LocalProcess, OwnedDir, RunQueueWait, read_from
from pytest_ebsperf.fio.refusals import (
    _before_json,
    _first_lines,
    _refusal,
    _signal_name,
    _signal_number,
    diagnose,
    job_file,
)
from pytest_ebsperf.fio.result import FioResult, Series
from pytest_ebsperf.fio.workload import Workload, format_size

#: Seconds added to runtime + ramp before a run counts as hung (fio start-up and report).
TIMEOUT_MARGIN_S = 60.0
_OUTPUT = "fio.json"
_LOG_PREFIX = "fio"
_INSTALL_HINT = (
    "install it with `apt-get install fio` (Debian/Ubuntu) or `dnf install fio` "
    "(Amazon Linux/RHEL), or pass --fio=PATH."
)
#: At most this many status reports per run: a day-long soak reports every 144 s, not every
#: second, so the output file stays small.
MAX_STATUS_REPORTS = 600
#: fio's exit status after it was interrupted (it still writes its report and logs).
INTERRUPTED_RC = 128
#: A stop asked for this close to fio's planned end is not sent (see ``_execute_live``).
LAST_SECOND_S = 1.0
#: Called with the live per-window series after each new window; returns a reason to stop
#: the run now (the verdict is settled) or None to go on.
Monitor = Callable[[LiveSeries], "str | None"]


class FioRunner:
    """Runs fio through a :class:`FioHost` (``local://`` when ``host`` is None).

    ``host`` may be a :class:`FioHost` or a testinfra host. ``fio`` is the fio command on that
    host. ``last_argv`` and ``last_wall_s`` describe the latest :meth:`run` (wall time of the
    fio command, start-up and report included).
    """

    def __init__(
        self, host: Any = None, fio: str = "fio", min_version: tuple[int, int, int] = (3, 0, 0),
        keep_dir: Path | None = None,
    ) -> None:
        self.host = host if isinstance(host, FioHost) else FioHost(host)
        self.fio = fio
        self.min_version = min_version
        self.log_interval_ms = 1000
        self.last_argv: list[str] = []
        self.last_wall_s: float | None = None
        #: Seconds the latest local fio's threads waited for a CPU (None: not measured).
        self.last_wait_s: float | None = None
        #: When the latest local fio was started (``time.monotonic()``), else None.
        self.last_started: float | None = None
        #: Where each run's report, logs and command line are kept (None: not kept).
        self.keep_dir = keep_dir
        self.kept_runs = 0
        self.keep_problems: list[str] = []
        self._version: str | None = None
        #: The engines this host's fio has, probed once.
        self.engines = Engines(self.host, fio)

    def version(self) -> str:
        """fio's version string (``fio-3.33``), checked against ``min_version``; cached."""
        if self._version is None:
            self._version = self._checked_version()
        return self._version

    def _checked_version(self) -> str:
        result = self.host.run([self.fio, "--version"])
        text = result.stdout.strip()
        where = "" if self.fio == "fio" else f" (no working '{self.fio}')"
        try:
            found = parse_version(text) if result.rc == 0 else None
        except FioOutputError:
            found = None
        if found is None:
            raise FioNotFoundError(f"fio is not installed on {self.host}{where}: {_INSTALL_HINT}")
        if found < self.min_version:
            needed = ".".join(str(n) for n in self.min_version).removesuffix(".0")
            raise FioNotFoundError(
                f"fio on {self.host} is {text}, too old: the plugin needs fio {needed} or newer; "
                f"{_INSTALL_HINT}"
            )
        return text

    def resolve_engine(self, name: str) -> str:
        """The engine to use for ``name`` (:meth:`Engines.resolve`)."""
        return self.engines.resolve(name)

    def run(
        self,
        workload: Workload,
        filename: str | Sequence[str],
        *,
        readonly: bool,
        prefix: Sequence[str] = (),
        timeout_s: float | None = None,
        monitor: Monitor | None = None,
        keep_fds: Sequence[int] = (),
    ) -> FioResult:
        """Run ``workload`` on block device ``filename`` and return what fio measured.
        A sequence of devices is a set measured together in one job (fio spreads the I/O
        over them evenly, as a RAID0 stripe does with random I/O).

        ``prefix`` is put before the fio command unchanged (e.g. a wrapper that enters a
        cgroup). ``timeout_s`` defaults to runtime + ramp + :data:`TIMEOUT_MARGIN_S`.
        On the local machine fio runs as a child that dies with this process, reports every
        second (``--status-interval``) and ``monitor`` sees each new second: when it returns a
        reason, fio is interrupted (it writes its report and logs) and the result says why
        (:attr:`FioResult.stop_reason`). ``keep_fds`` (device locks and exclusive claims)
        are inherited by the local fio, so they are held until fio is gone. Raises :class:`DeviceError`,
        :class:`FioNotFoundError`, :class:`FioRunError` or :class:`FioOutputError`, each with
        a sentence saying what to do.
        """
        self.version()
        self.check_target(filename)
        engine = self.resolve_engine(workload.engine)
        limit = timeout_s or workload.runtime_s + max(workload.ramp_s, 0) + TIMEOUT_MARGIN_S
        tmp = self.host.mkdtemp()
        place = self._kept_place(workload, filename)
        live = self.host.is_local
        owned = None
        if live:

            owned = OwnedDir(tmp)  # removed with the run, even on SIGTERM; swept after SIGKILL
        try:
            output = posixpath.join(tmp, _OUTPUT)
            argv = list(prefix) + fio_argv(
                workload,
                filename,
                output_path=output,
                log_prefix=posixpath.join(tmp, _LOG_PREFIX),
                readonly=readonly,
                engine=engine,
                log_interval_ms=self.log_interval_ms,
                fio=self.fio,
                status_interval_s=status_interval_s(workload) if live else None,
                registered=engine == "io_uring" and self.engines.registered_ok(),
            )
            series = LiveSeries(ramp_ms=max(workload.ramp_s, 0) * 1000.0,
                                interval_ms=status_interval_s(workload) * 1000.0)
            if live:
                completed, reason = self._execute_live(
                    argv, limit, tmp, output, series, monitor, keep_fds,
                    ends_s=workload.runtime_s + max(workload.ramp_s, 0))
            else:
                completed, reason = self._execute(argv, limit, marker=output), ""
            text = self._read_output(output)
            shown = filename if isinstance(filename, str) else " + ".join(filename)
            result = self._judge(completed, text, shown, limit, interrupted=bool(reason))
            result = result.with_series(self._series(tmp, result, workload))
            waited = self.last_wait_s if live else None
            return dataclasses.replace(result, stop_reason=reason,
                                       live=series if series.iops else None,
                                       fio_wait_share=round(waited / self.last_wall_s, 4)
                                       if waited is not None and self.last_wall_s else None,
                                       kept_as=str(place[0] / place[1]) if place else "")
        finally:
            self._keep_evidence(tmp, workload, place)
            if owned is not None:
                owned.close()
            else:
                self.host.remove_tree(tmp)

    def _kept_place(self, workload: Workload, filename: str | Sequence[str]
                    ) -> tuple[Path, str, str] | None:
        """Where this run's evidence is kept (folder, report stem, log stem), laid out as
        fio-plot's bench-fio lays out its runs (``DEVICE/BS/MODE-IODEPTH-NUMJOBS.json``,
        mixed loads under ``MODE<rwmixread>/``, logs ``MODE-iodepth-N-numjobs-M_iops.1.log``),
        each run in its own ``run-NNNN`` folder; None without ``keep_dir``."""
        if self.keep_dir is None:
            return None
        self.kept_runs += 1
        worker = os.environ.get("PYTEST_XDIST_WORKER")  # xdist workers share the folder
        first = filename if isinstance(filename, str) else (list(filename) or ["device"])[0]
        device = os.path.basename(first.split(":")[0]) or "device"
        mode = workload.pattern + (str(workload.rwmixread) if workload.rwmixread is not None
                                   and workload.pattern in ("randrw", "rw") else "")
        folder = self.keep_dir / device
        folder = (folder / mode if mode != workload.pattern else folder) / format_size(
            workload.bs).lower().replace("kib", "k").replace("mib", "m")
        run = f"run-{worker + '-' if worker else ''}{self.kept_runs:04d}"
        stem = f"{workload.pattern}-{workload.iodepth}-{workload.numjobs}"
        logs = f"{workload.pattern}-iodepth-{workload.iodepth}-numjobs-{workload.numjobs}"
        return folder / run, stem, logs

    def _keep_evidence(self, tmp: str, workload: Workload,
                       place: tuple[Path, str, str] | None) -> None:
        """Copy fio's report and interval logs to ``place`` (:meth:`_kept_place`), with a
        standalone job file (``MODE-IODEPTH-NUMJOBS.fio``) that repeats the run by hand.
        Best effort: a copy that fails is noted, never an error of the check."""
        if place is None:
            return
        target, stem, logs = place
        argv = self._fio_part(self.last_argv)
        try:
            target.mkdir(parents=True, exist_ok=True)
            for entry in self.host.listdir(tmp):
                if entry == _OUTPUT:
                    (target / f"{stem}.json").write_text(
                        self.host.read_text(posixpath.join(tmp, entry)))
                elif entry.endswith(".log") and entry.startswith(_LOG_PREFIX + "_"):
                    (target / (logs + entry[len(_LOG_PREFIX):])).write_text(
                        self.host.read_text(posixpath.join(tmp, entry)))
            (target / f"{stem}.fio").write_text(job_file(argv, logs, stem,
                                                         workload.name or stem))
        except (OSError, FioRunError) as exc:
            self.keep_problems.append(f"{target}: {exc}")

    def _fio_part(self, argv: Sequence[str]) -> list[str]:
        """``argv`` from fio on (a wrapper that entered a cgroup left out)."""
        for index, arg in enumerate(argv):
            if arg == self.fio or posixpath.basename(arg) == "fio":
                return list(argv[index:])
        return list(argv)

    def _execute_live(self, argv: list[str], timeout_s: float, tmp: str, output: str,
                      series: LiveSeries, monitor: Monitor | None,
                      keep_fds: Sequence[int] = (), ends_s: float | None = None
                      ) -> tuple[RunResult, str]:
        """fio, watched second by second. A stop the monitor asks for in fio's last second
        (``ends_s``: ramp and runtime) is not sent: fio ends by itself, and a SIGINT that
        meets fio on its way out (its handlers gone) kills it before it writes its report."""

        self.last_argv = argv
        self.last_wall_s = None
        start = time.monotonic()
        proc = LocalProcess(argv, tmp, keep_fds=keep_fds)
        self.last_started = proc.started
        waits = RunQueueWait(proc.pid)
        stream = StatusStream()
        offset, reason, timed_out = 0, "", False
        try:
            while proc.poll() is None:
                proc.wait(0.1)
                waits.sample()
                text, offset = read_from(output, offset)
                for report in stream.feed(text):
                    if series.add(report) and monitor is not None and not reason:
                        reason = monitor(series) or ""
                        last = ends_s is not None and \
                            time.monotonic() - start >= ends_s - LAST_SECOND_S
                        if reason and last:
                            reason = ""  # its own end is as near as the stop would be
                            monitor = None
                        elif reason:
                            proc.interrupt()  # fio writes its report and logs, then exits
                elapsed = time.monotonic() - start
                if elapsed > timeout_s and proc.interrupted_at is None:
                    timed_out = True
                    proc.interrupt()
                if proc.interrupted_at is not None and \
                        time.monotonic() - proc.interrupted_at > KILL_AFTER_S:
                    proc.kill()
        except BaseException:
            proc.stop(grace_s=2.0)  # Ctrl-C or an error in the monitor: fio goes too
            raise
        finally:
            self.last_wall_s = time.monotonic() - start
            self.last_wait_s = waits.seconds
        proc.finished()
        rc = proc.poll()
        stdout, stderr = proc.output()
        if timed_out:
            rc = TIMEOUT_RC if rc in (0, INTERRUPTED_RC) else KILLED_RC
        return RunResult(int(rc if rc is not None else KILLED_RC), stdout, stderr), reason

    def check_target(self, filename: str | Sequence[str]) -> None:
        """Refuse a path that is not a block device (fio would create or benchmark a file).
        A sequence is a set of devices measured together: each is checked."""
        if not isinstance(filename, str):
            for member in filename:
                self.check_target(member)
            return
        if self.host.is_block_device(filename):
            return
        hint = "Pass --device=PATH with a block device (lsblk lists them)."
        if not self.host.exists(filename):
            raise DeviceError(f"'{filename}' does not exist on {self.host}. {hint}")
        if self.host.is_file(filename):
            raise DeviceError(
                f"'{filename}' on {self.host} is a regular file, not a block device: fio would "
                f"silently benchmark the file instead of a volume. {hint}"
            )
        raise DeviceError(f"'{filename}' on {self.host} is not a block device. {hint}")

    def _execute(self, argv: list[str], timeout_s: float, *, marker: str) -> RunResult:
        self.last_argv = argv
        self.last_wall_s = self.last_wait_s = None
        start = time.monotonic()
        try:
            completed = self.host.run(argv, timeout_s=timeout_s)
        except BaseException:
            # Ctrl-C or a lost connection: fio runs on in its own process group under
            # `timeout`, so it has to be found by the unique output path and stopped.
            self.host.kill_matching(marker)
            raise
        finally:
            self.last_wall_s = time.monotonic() - start
        if completed.rc != 0:
            # The shell may have died while fio lives on (a signal to the wrong process).
            self.host.kill_matching(marker)
        return completed

    def _read_output(self, path: str) -> str:
        try:
            return self.host.read_text(path)
        except FioRunError:
            return ""  # fio died before writing; the exit status explains why

    def _judge(self, completed: RunResult, text: str, target: str, timeout_s: float, *,
               interrupted: bool = False) -> FioResult:
        wall = self.last_wall_s or 0.0
        rc = completed.rc
        if interrupted and rc == INTERRUPTED_RC:
            # stopped on purpose once the verdict was settled: the report is complete
            result = self._parse_or_fail(completed, text, target)
            if not result.errors:
                return result
        if rc == TIMEOUT_RC or (rc == KILLED_RC and wall >= timeout_s):
            raise FioRunError(
                f"fio did not finish within {timeout_s:g} s on {self.host} and was stopped. "
                f"{target} may be hung or far slower than expected; check dmesg, or pass a "
                "longer timeout.",
                rc=rc,
                stderr=completed.stderr,
            )
        signum = _signal_number(rc, text + completed.stdout)
        if signum == signal.SIGINT and interrupted:
            raise FioRunError(
                f"fio, stopped by the plugin once the verdict was settled, died of that SIGINT "
                f"after {wall:.1f} s on {self.host} before writing its report (it was on its "
                "way out). Run the check again.", rc=rc, stderr=completed.stderr)
        if signum is not None:
            raise FioRunError(
                f"fio was killed by signal {signum} ({_signal_name(signum)}) after {wall:.1f} s "
                f"on {self.host}; something outside the plugin stopped it (a user, the OOM "
                "killer, a CI time limit). Run the check again.",
                rc=rc,
                stderr=completed.stderr,
            )
        result = self._parse_or_fail(completed, text, target)
        refusal = _refusal(text + "\n" + completed.stdout + "\n" + completed.stderr)
        if refusal:
            # fio declined to run (it exits 0 and prints an empty report): its words, not a
            # performance verdict of 0 IOPS.
            raise FioRunError(f"fio refused to run on {target} on {self.host}: {refusal}",
                              rc=rc, stderr=completed.stderr)
        if rc == 0 and not result.errors and result.read.total_ios + result.write.total_ios \
                + result.trim.total_ios == 0:
            said = _first_lines(_before_json(text) + completed.stderr) or "nothing"
            raise FioRunError(f"fio did no I/O on {target} on {self.host} (fio said: {said}); "
                              "nothing was measured, so nothing can be judged.", rc=rc,
                              stderr=completed.stderr)
        if rc != 0 or result.errors:
            raise FioRunError(
                diagnose(completed, text, target, str(self.host), result.errors),
                rc=rc,
                stderr=completed.stderr,
            )
        return result

    def _parse_or_fail(self, completed: RunResult, text: str, target: str) -> FioResult:
        try:
            return parse_result(text)
        except FioOutputError:
            if completed.rc != 0:
                raise FioRunError(
                    diagnose(completed, text, target, str(self.host), ()),
                    rc=completed.rc,
                    stderr=completed.stderr,
                ) from None
            raise

    def _series(self, tmp: str, result: FioResult, workload: Workload) -> dict[str, Series]:
        files = group_log_files(self.host.listdir(tmp), _LOG_PREFIX)
        runtime_ms = max(result.read.runtime_ms, result.write.runtime_ms)
        with contextlib.ExitStack() as stack:
            logs: dict[str, list[Any]] = {}
            for kind, names in files.items():
                paths = [posixpath.join(tmp, n) for n in names]
                if self.host.is_local:  # streamed line by line: memory per window, not line
                    logs[kind] = [stack.enter_context(open(p, encoding="utf-8", errors="replace"))
                                  for p in paths]
                else:
                    logs[kind] = [self.host.read_text(p) for p in paths]
            return build_series(
                logs,
                interval_ms=self.log_interval_ms,
                runtime_ms=runtime_ms or workload.runtime_s * 1000,
                fio_version=result.fio_version,
            )


def status_interval_s(workload: Workload) -> int:
    """Seconds between fio's status reports: 1, or more for runs longer than
    :data:`MAX_STATUS_REPORTS` seconds."""
    total = workload.runtime_s + max(workload.ramp_s, 0.0)
    return max(1, int(-(-total // MAX_STATUS_REPORTS)))


