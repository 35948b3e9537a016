"""A workload: what fio should do, independent of where it runs."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.errors import ConfigError

#: fio ``rw=`` values the plugin uses.
PATTERNS: tuple[str, ...] = ("read", "write", "randread", "randwrite", "randrw", "rw", "trim")

#: Names the seed documents' tables use for the patterns (column headers).
PATTERN_TITLES: dict[str, str] = {
    "read": "Seq Read",
    "write": "Seq Write",
    "randread": "Rand Read",
    "randwrite": "Rand Write",
    "randrw": "Rand RW",
    "rw": "Seq RW",
    "trim": "Trim",
}

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(value: str | int, *, what: str = "size") -> int:
    """Parse ``16k``, ``1M``, ``4KiB`` or a byte count into bytes (binary units, like fio)."""
    if isinstance(value, int):
        return value
    match = _SIZE_RE.match(value)
    if not match:
        raise ConfigError(
            f"{value!r} is not a valid {what}. Give bytes or a number with k, M, G or T (e.g. 16k)."
        )
    number, unit, _ = match.groups()
    return int(float(number) * _UNITS[unit.lower()])


def format_size(nbytes: float) -> str:
    """``16384`` -> ``16KiB``; ``1048576`` -> ``1MiB``."""
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if nbytes >= factor and nbytes % factor == 0:
            return f"{int(nbytes // factor)}{unit}"
    return f"{int(nbytes)}B"


@dataclass(frozen=True)
class Workload:
    """One fio job description.

    ``iodepth`` is per job; the total number of outstanding I/Os is ``iodepth * numjobs``.
    ``runtime_s`` is the measuring time; ``ramp_s`` runs before it and is not measured.
    ``size`` limits the region of the device used (bytes); ``None`` means the whole device.
    ``rwmixread`` is the read percentage of mixed patterns (``randrw``, ``rw``).
    ``engine`` may be ``"auto"``: the runner picks the fastest engine that works here.
    ``extra`` holds further fio options as (name, value) pairs; value ``""`` is a bare switch.
    ``once``: go over ``size`` once and stop (``runtime_s`` is then only the longest it may
    take), instead of running for ``runtime_s``. ``random_map``: random offsets without
    repeats within a pass, the same sequence in every run (a second pass rewrites exactly the
    blocks of the first); by default offsets are uniform and independent. ``offset``: where
    the region of ``size`` bytes starts on the device (bytes).
    """

    pattern: str
    bs: int = 16 * 1024
    iodepth: int = 32
    numjobs: int = 1
    runtime_s: float = 60.0
    ramp_s: float = 2.0
    size: int | None = None
    rwmixread: int | None = None
    direct: bool = True
    engine: str = "auto"
    name: str = ""
    extra: tuple[tuple[str, str], ...] = ()
    once: bool = False
    random_map: bool = False
    offset: int = 0

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise ConfigError(
                f"{self.pattern!r} is not a fio pattern the plugin runs. "
                f"Valid patterns: {', '.join(PATTERNS)}."
            )
        if self.bs <= 0 or self.iodepth < 1 or self.numjobs < 1:
            raise ConfigError(
                f"Workload {self.pattern}: block size, iodepth and numjobs must be positive "
                f"(got bs={self.bs}, iodepth={self.iodepth}, numjobs={self.numjobs})."
            )
        if self.runtime_s <= 0:
            raise ConfigError(f"Workload runtime must be positive, got {self.runtime_s} s.")

    @property
    def is_mixed(self) -> bool:
        return self.pattern in ("randrw", "rw")

    @property
    def is_random(self) -> bool:
        return self.pattern.startswith("rand")

    @property
    def read_fraction(self) -> float:
        """Share of I/Os that are reads (0.0-1.0)."""
        if self.is_mixed:
            return (50 if self.rwmixread is None else self.rwmixread) / 100.0
        return 1.0 if self.pattern in ("read", "randread") else 0.0

    @property
    def writes(self) -> bool:
        """True when the workload writes to the device."""
        return self.read_fraction < 1.0

    @property
    def queue_depth(self) -> int:
        """Total outstanding I/Os across jobs."""
        return self.iodepth * self.numjobs

    @property
    def title(self) -> str:
        """Seed-table column title, e.g. ``Rand RW 70/30``."""
        title = PATTERN_TITLES[self.pattern]
        if self.is_mixed:
            read = round(self.read_fraction * 100)
            title += f" {read}/{100 - read}"
        return title

    def label(self) -> str:
        """``randread 16KiB QD32x2`` — stable across runs (used in ids and reports)."""
        mix = f" {round(self.read_fraction * 100)}/{100 - round(self.read_fraction * 100)}"
        return (
            f"{self.pattern}{mix if self.is_mixed else ''} {format_size(self.bs)} "
            f"QD{self.iodepth}x{self.numjobs}"
        )

    def replace(self, **changes: Any) -> Workload:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)
