"""Why fio failed, in a sentence: its refusal lines, the signal that stopped it, the first lines of
what it printed; and the job file that reproduces a run.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Sequence

from pytest_ebsperf.errors import (
    FioOutputError,
)
from pytest_ebsperf.fio.host import RunResult
from pytest_ebsperf.fio.parse import extract_json

_SIGNAL_LINE = re.compile(r"terminating on signal (\d+)")


# (pattern in fio's messages, sentence); {target} and {line} are filled in.
_DIAGNOSES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), s)
    for p, s in (
        (
            r"permission denied|err=13\b",
            "fio could not open {target}: permission denied. Run pytest as root (sudo pytest ...), or give this user read access to the device.",
        ),
        (
            r"does not support O_DIRECT|direct=1/buffered=0",
            (
                "{target} does not support O_DIRECT (direct=1), which fio needs to bypass the page "
                "cache. Use a block device, or a workload with direct=False."
            ),
        ),
        (
            r"file creation disallowed|refusing extend of file",
            (
                "{target} vanished before fio opened it (fio was told not to create files). Pass "
                "--device=PATH with a block device (lsblk lists them)."
            ),
        ),
        (
            r"in read-only mode",
            (
                "fio refused to write to {target} in read-only mode; writing checks need the "
                "explicit opt-in (--ebsperf-destructive)."
            ),
        ),
        (
            r"Operation not permitted|err=1/|Read-only file system",
            (
                "Writes to {target} were refused: the device is read-only (e.g. attached "
                "read-only). fio said: {line}"
            ),
        ),
        (
            r"failed parsing|unrecognized option|Bad option|not loadable|engine .* not found",
            (
                "fio rejected an option or engine: {line}. The fio on {host} may be too old or "
                "built without it; pass --fio=PATH with a newer fio."
            ),
        ),
    )
)


def diagnose(completed: RunResult, text: str, target: str, host: str, errors: Sequence[int]) -> str:
    """A sentence for a failed fio run, from its stderr, the lines before its JSON and errors."""
    messages = "\n".join([completed.stderr, _before_json(text), _before_json(completed.stdout)])
    for pattern, sentence in _DIAGNOSES:
        match = pattern.search(messages)
        if match:
            line = _line_at(messages, match.start())
            return sentence.format(target=target, host=host, line=line)
    if errors:
        reasons = ", ".join(f"{e} ({os.strerror(e)})" for e in errors)
        return f"fio reported errors on {target}: {reasons}. fio said: {_first_lines(messages)}"
    return (
        f"fio failed on {host} with exit status {completed.rc} while testing {target}. "
        f"fio said: {_first_lines(messages) or 'nothing'}."
    )


_REFUSAL = re.compile(r"^(?:fio: )?(.*\bAborting\b.*)$", re.MULTILINE)


def _refusal(text: str) -> str:
    """fio's own sentence when it refused to start (``... appears mounted ... Aborting.``)."""
    match = _REFUSAL.search(text)
    return match.group(1).strip() if match else ""


def _before_json(text: str) -> str:
    """The messages fio printed before its report (all of ``text`` when there is no report)."""
    try:
        extract_json(text)
    except FioOutputError:
        return text[:2000]
    return text[: text.find("\n{") + 1] if not text.startswith("{") else ""


def _line_at(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end >= 0 else len(text)].strip()


def _first_lines(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " / ".join(lines[:3])[:300]


def _signal_number(rc: int, text: str) -> int | None:
    match = _SIGNAL_LINE.search(text)
    if match:
        return int(match.group(1))
    # 128 is fio's own exit value after a signal, 128+N a shell's report of death by signal N,
    # -N Python's report that the local shell itself died of signal N.
    if rc < 0:
        return -rc
    return rc - 128 if rc > 128 else None


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "unknown signal"


#: Options of a run that belong to this plugin's plumbing, not to the job (left out of the
#: standalone job file: it writes its report where its command line says).
_PLUMBING = ("output", "output-format", "eta", "status-interval", "write_iops_log",
             "write_bw_log", "write_lat_log", "name")


def _options_of(argv: Sequence[str]) -> dict[str, str]:
    """fio's ``--name=value`` options in ``argv`` (flags as ``""``); the last one wins."""
    found: dict[str, str] = {}
    for arg in argv[1:]:
        if arg.startswith("--"):
            name, _, value = arg[2:].partition("=")
            found[name] = value
    return found


def job_file(argv: Sequence[str], logs: str, stem: str, name: str) -> str:
    """A fio job file that repeats the run ``argv`` by hand: the same options on the same
    device, its interval logs named as fio-plot reads them."""
    options = _options_of(argv)
    # fio takes --readonly on its command line only (a job file may not say it)
    readonly = "readonly" in options
    command = ("fio " + ("--readonly " if readonly else "")
               + f"--output-format=json --output={stem}.json {stem}.fio")
    lines = [
        f"# Repeats this run: {command}",
        ("# (as root; it reads the device named below, and --readonly makes fio refuse any "
         "write)." if readonly else
         "# (as root; it OVERWRITES the device named below)."),
        "# An emulated volume (a loop device) is gone after its run, and so is the kernel",
        "# throttle that paced it: give the device to measure instead.",
        "[global]",
    ]
    for key, value in options.items():
        if key not in _PLUMBING and key != "readonly":
            lines.append(f"{key}={value}" if value != "" else key)
    lines += [f"write_iops_log={logs}", f"write_bw_log={logs}", f"write_lat_log={logs}",
              "", f"[{name}]", ""]
    return "\n".join(lines)
