"""Which of fio's I/O engines work on a host: listed by that fio, then proven by a tiny probe run
(io_uring can be compiled in but disabled by the kernel, a sysctl or a container's seccomp).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from pytest_ebsperf.errors import FioOutputError, FioRunError
from pytest_ebsperf.fio.host import FioHost
from pytest_ebsperf.fio.jobs import CLOCKSOURCE
from pytest_ebsperf.fio.parse import parse_result
from pytest_ebsperf.fio.process import LocalProcess, OwnedDir

#: Engines ``--ebsperf-engine=auto`` tries, best first (else psync).
AUTO_ENGINES = ("io_uring", "libaio")


class Engines:
    """The engines of ``fio`` on ``host``, each probed at most once."""

    def __init__(self, host: FioHost, fio: str) -> None:
        self.host = host
        self.fio = fio
        self._works: dict[str, bool] = {}
        self._listed: list[str] | None = None
        self._registered: bool | None = None

    def resolve(self, name: str) -> str:
        """The engine to use for ``name``: itself, or for ``"auto"`` the best engine that works.

        ``auto`` takes io_uring when this fio lists it and a tiny probe run succeeds (io_uring
        can be compiled in but disabled by the kernel, sysctl or a container's seccomp), else
        libaio. Results are cached per host.
        """
        listed = self.listed()
        if name != "auto":
            if listed and name not in listed:
                raise FioRunError(
                    f"fio on {self.host} has no ioengine {name!r} (--ebsperf-engine). Engines "
                    f"it lists: {', '.join(listed)}. Pass one of them or 'auto'.")
            return name
        for engine in AUTO_ENGINES:
            if engine in listed and self.works(engine):
                return engine
        return "psync"

    def registered_ok(self) -> bool:
        """io_uring's registered buffers and files work here: fio runs as root (pinned
        buffers count against RLIMIT_MEMLOCK otherwise) and a tiny probe takes them."""
        if self._registered is None:
            root = self.host.run(["id", "-u"]).stdout.strip() == "0"
            self._registered = root and self._probe("io_uring", ["--fixedbufs",
                                                                 "--registerfiles"])
        return self._registered

    def listed(self) -> list[str]:
        if self._listed is None:
            out = self.host.run([self.fio, "--enghelp"]).stdout
            self._listed = [line.strip() for line in out.splitlines()[1:] if line.strip()]
        return self._listed

    def works(self, engine: str) -> bool:
        if engine not in self._works:
            self._works[engine] = self._probe(engine)
        return self._works[engine]

    def _probe_ran(self, argv: list[str], tmp: str, *, local: bool) -> bool:
        """Run a probe's fio to its end; True when it exited 0. Locally it is a registered
        process, as a run's fio is: a SIGTERM or SIGHUP kills it before its directory is
        removed (a probe that ran on would lay out its file again in the removed one)."""
        if not local:
            return self.host.run(argv, timeout_s=30).rc == 0

        proc = LocalProcess(argv, tmp)
        rc = proc.wait(30.0)
        if rc is None:
            proc.close()
            return False
        proc.finished()
        return rc == 0

    def _probe(self, engine: str, extra: Sequence[str] = ()) -> bool:
        tmp = self.host.mkdtemp()
        owned = None
        if self.host.is_local:

            owned = OwnedDir(tmp)  # as a run's: removed on SIGTERM, swept after SIGKILL
        out = posixpath.join(tmp, "probe.json")
        argv = [
            self.fio, "--output-format=json", f"--output={out}", f"--clocksource={CLOCKSOURCE}",
            "--name=probe",
            f"--filename={posixpath.join(tmp, 'probe.dat')}", "--size=1M", "--io_size=256k",
            "--rw=randread", "--bs=4k", "--iodepth=4", f"--ioengine={engine}", *extra,
            # its job a thread of the one process, as a run's (fio.jobs): a forked job
            # process outlived a run SIGKILLed during the probe, asleep for good on fio's
            # shared memory
            "--thread",
        ]  # fmt: skip
        try:
            if not self._probe_ran(argv, tmp, local=owned is not None):
                return False
            result = parse_result(self.host.read_text(out))
            return not result.errors and result.read.total_ios > 0
        except (FioRunError, FioOutputError):
            return False
        finally:
            if owned is not None:
                owned.close()
            else:
                self.host.remove_tree(tmp)
