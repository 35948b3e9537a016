"""Exceptions raised by the domain modules.

Every exception carries a complete sentence for the user: what is wrong, where it came from
and what to pass instead. The pytest layer turns them into usage errors, skips or failures;
domain modules never import pytest.
"""

from __future__ import annotations

import argparse
from typing import NoReturn


class EbsperfError(Exception):
    """Base class: the message is a sentence meant for the user, never a traceback."""


class ConfigError(EbsperfError):
    """A bad option, ini value or environment variable (becomes a pytest usage error)."""


class VolumeSpecError(ConfigError):
    """A volume description AWS would not accept (unknown type, value out of range)."""


class UnsafeDeviceError(EbsperfError):
    """The device must not be written to (mounted, root, swap, held, carries data)."""


class DeviceError(EbsperfError):
    """The device path is missing, not a block device, or unreadable."""


class FioError(EbsperfError):
    """fio could not be run or its run failed."""


class FioNotFoundError(FioError):
    """fio is not installed, or is older than the supported version."""


class FioRunError(FioError):
    """fio exited non-zero, was killed, timed out or reported a job error."""

    def __init__(self, message: str, *, rc: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.rc = rc
        self.stderr = stderr


class FioOutputError(FioError):
    """fio's output could not be parsed."""


class HostUnreachableError(EbsperfError):
    """The host fio runs on cannot be reached (ssh refused, bad address or port...)."""


class EmulationUnavailableError(EbsperfError):
    """The machine cannot emulate a volume (not root, no loop devices, no blkio throttling)."""


class AwsError(EbsperfError):
    """An AWS call failed (no credentials, access denied, not on EC2, ...)."""


# -- the command line tools' shared usage (pytest_ebsperf.cli and its commands) -------------
USAGE_EXIT = 4
EXIT_CODES = """exit status (every command):
  0  pass: every verdict passed (or nothing to gate on)
  1  fail: a verdict failed (judge), a regression (compare), a change or drift for the
     worse (history)
  2  inconclusive (judge): the output could not decide
  4  usage: bad input, said in one sentence (no traceback)"""


class UsageError(EbsperfError):
    """A command line that cannot be run: said in one sentence, exit 4."""


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors are sentences with exit 4 (argparse's own exit 2 means
    INCONCLUSIVE here); help goes to stdout with exit 0, as argparse does."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")
