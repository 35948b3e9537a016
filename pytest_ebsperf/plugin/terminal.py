"""Where live lines go while a check runs: in place on a terminal, or a heartbeat in CI logs.

A plain check on a device runs a minute, a credit check an hour. On a terminal the line is
rewritten every second (:class:`TerminalProgress`); in a CI log, which keeps every line, a
full line is written every :data:`HEARTBEAT_S` seconds at most (:class:`HeartbeatProgress`),
so a long run is never silent and a short one adds nothing. Both suspend pytest's output
capture around each write, as pytest's own live logging does.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

#: Seconds between heartbeat lines in a non-terminal log.
HEARTBEAT_S = 30.0


class _CapturedWriter:
    def __init__(self, writer: Any, capture: Any) -> None:
        self.writer, self.capture = writer, capture

    def _write(self, text: str) -> None:
        if self.capture is not None:
            with self.capture.global_and_fixture_disabled():
                self.writer.write(text, flush=True)
        else:
            self.writer.write(text, flush=True)


class TerminalProgress(_CapturedWriter):
    """Writes the progress line in place on pytest's terminal (from any thread)."""

    def __init__(self, writer: Any, capture: Any) -> None:
        super().__init__(writer, capture)
        self._width = 0

    def update(self, line: str) -> None:
        """Replace the line (the first one starts below pytest's own test line)."""
        lead = "\n" if self._width == 0 else "\r"
        padding = max(0, self._width - len(line))  # blank what a longer line left
        self._width = len(line)
        self._write(f"{lead}{line}{' ' * padding}")

    def finish(self) -> None:
        """Keep the last line and move on, so pytest's outcome starts a line of its own."""
        if self._width:
            self._write("\n")
        self._width = 0


class HeartbeatProgress(_CapturedWriter):
    """Writes a whole line at most every ``every_s`` seconds (the first after ``every_s``)."""

    def __init__(self, writer: Any, capture: Any, every_s: float = HEARTBEAT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(writer, capture)
        self.every_s, self.clock = every_s, clock
        self._since: float | None = None
        self._wrote = False
        self.lines = 0

    def update(self, line: str) -> None:
        now = self.clock()
        if self._since is None:
            self._since = now
            return
        if now - self._since >= self.every_s:
            self._write(("" if self._wrote else "\n") + line + "\n")
            self._since, self._wrote = now, True
            self.lines += 1

    def finish(self) -> None:
        self._since, self._wrote = None, False


def progress_writer(config: Any) -> TerminalProgress | HeartbeatProgress | None:
    """The in-place line on a terminal, heartbeat lines elsewhere (CI logs); nothing under
    ``-qq`` or on an xdist worker (the controller prints the worker's outcome only)."""
    if config.get_verbosity() < -1 or hasattr(config, "workerinput"):
        return None
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return None
    capture = config.pluginmanager.get_plugin("capturemanager")
    # Captured output is suspended between tests, so stdout is the real one here.
    if sys.stdout.isatty() and config.get_verbosity() >= 0:
        return TerminalProgress(config.get_terminal_writer(), capture)
    return HeartbeatProgress(config.get_terminal_writer(), capture)


def terminal_width(config: Any) -> int | None:
    """How wide the summary may be: the terminal's width (``COLUMNS`` where pytest's writer
    reads it); None without a terminal reporter."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    writer = getattr(reporter, "_tw", None)
    width = getattr(writer, "fullwidth", None)
    return int(width) if isinstance(width, int) and width > 20 else None
