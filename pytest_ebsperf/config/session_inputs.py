"""What a measuring session takes from the pytest run besides the settings.

The plugin's hooks fill one :class:`SessionInputs` as pytest gets to know each part (the
servers and AWS options at configure, the progress line and fio's evidence directory at
session start, the number of checks at collection); the first check then builds the
session from the settings and these, once (:class:`pytest_ebsperf.checks.session.
EbsperfSession`). Nothing sets a field of a session from outside after that.

This module loads at every pytest start: it imports no measuring code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class ProgressWriter(Protocol):
    """Receives the line; :meth:`update` at most once a second, :meth:`finish` once."""

    def update(self, line: str) -> None:
        """Show ``line`` in place of the previous one."""

    def finish(self) -> None:
        """The check is over: end the line."""


@dataclass
class SessionInputs:
    """The run's parts a session is built with (all optional: a script builds one bare)."""

    #: Where live lines go while fio runs (a terminal line or a CI heartbeat).
    progress: ProgressWriter | None = None
    #: --ebsperf-keep-fio: fio's own report and logs of each run are copied here.
    keep_dir: Path | None = None
    #: Checks of the run that can FAIL, as collected (the false-red budget is split over
    #: them); preflight narrows it to the suites that apply. 0: unknown.
    checks_planned: int = 0
    #: fio servers measured together (--ebsperf-fio-servers), with their settings.
    fio_servers: list[Any] = field(default_factory=list)
    #: Read every block of a volume that is not fully initialized before measuring it.
    initialize: bool = False
    #: Keyword arguments for :func:`pytest_ebsperf.aws.discover` (``sysfs_root``, ...).
    aws_options: dict[str, Any] = field(default_factory=dict)
    #: The picture directory, asked when the first picture is drawn (None: no pictures).
    plots: Callable[[], Path | None] | None = None
