"""fio and the tests' own children start with SIGINT at its default action, even when pytest
was started with SIGINT ignored (``pytest ... &`` in a non-interactive shell, as CI runners
and wrappers start commands): a stop by SIGINT must reach fio, and a Ctrl-C test its child."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Started with SIGINT ignored: a LocalProcess child reports which signals it ignores.
_CHILD = """
import signal, sys, tempfile, time
from pytest_ebsperf.fio.process import LocalProcess
assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
work = tempfile.mkdtemp()
proc = LocalProcess(["sh", "-c", "grep SigIgn /proc/self/status"], work)
proc.proc.wait(timeout=20)
proc.close()
sys.stdout.write(open(proc.stdout_path).read())
"""


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _ignored(status_line: str) -> int:
    return int(status_line.split()[1], 16)


def test_fio_starts_with_sigint_at_its_default_even_when_pytest_ignores_it() -> None:
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, preexec_fn=_ignoring_sigint, check=False)
    assert done.returncode == 0, done.stderr
    mask = _ignored(done.stdout)
    assert not mask & (1 << (signal.SIGINT - 1)), done.stdout


def test_the_tests_children_get_a_default_sigint_when_the_run_was_started_ignoring_it(
) -> None:
    """A Ctrl-C test run from a background job: its sleeper must die of SIGINT (the
    conftest gives the pytest process Python's own handler, so no child inherits SIG_IGN)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "tests/fio/test_fio_runner.py", "-k", "kill_matching_interrupts_first"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, preexec_fn=_ignoring_sigint,
        check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 passed" in done.stdout, done.stdout[-3000:]
