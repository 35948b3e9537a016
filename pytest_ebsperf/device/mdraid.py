"""Software RAID (md) arrays from sysfs: level, chunk size and members.

``/sys/block/md0/md/level`` ("raid0"), ``md/chunk_size`` (bytes) and ``slaves/`` (the member
devices) say what the array is made of; the set's expectation and the per-member diagnosis
follow from it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SYS_BLOCK = Path("/sys/block")


@dataclass(frozen=True)
class MdArray:
    """An md array: ``/dev/<name>``, its RAID ``level``, chunk size and member devices."""

    name: str
    level: str
    chunk_bytes: int
    members: tuple[str, ...]

    @property
    def path(self) -> str:
        return f"/dev/{self.name}"

    def label(self) -> str:
        chunk = f", {self.chunk_bytes // 1024} KiB chunks" if self.chunk_bytes else ""
        return f"{self.path} ({self.level} of {len(self.members)}{chunk}: " \
               f"{', '.join(self.members)})"


def read_md(device: str, sys_block: Path = SYS_BLOCK) -> MdArray | None:
    """The md array behind ``device`` (a path or name), or None when it is not one."""
    name = os.path.basename(os.path.realpath(device)) if device.startswith("/") else device
    md = sys_block / name / "md"
    if not md.is_dir():
        return None
    level = _read(md / "level") or "unknown"
    chunk = _read(md / "chunk_size")
    slaves = sys_block / name / "slaves"
    members = tuple(f"/dev/{m}" for m in sorted(os.listdir(slaves))) if slaves.is_dir() else ()
    return MdArray(name, level, int(chunk) if chunk.isdigit() else 0, members)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


_READ_MD_SCRIPT = r"""
import json, os, sys
name = os.path.basename(os.path.realpath(sys.argv[1]))
md = "/sys/block/%s/md" % name
if not os.path.isdir(md):
    print("null"); sys.exit(0)
def read(p):
    try:
        return open(p).read().strip()
    except OSError:
        return ""
slaves = "/sys/block/%s/slaves" % name
members = sorted(os.listdir(slaves)) if os.path.isdir(slaves) else []
print(json.dumps([name, read(md + "/level"), read(md + "/chunk_size"), members]))
"""


def read_md_on(host: Any, device: str) -> MdArray | None:
    """:func:`read_md` on the host fio runs on (through its host object, with python3)."""

    result = host.run(["python3", "-c", _READ_MD_SCRIPT, device])
    if result.rc != 0:
        return None
    try:
        data = json.loads(result.stdout or "null")
    except ValueError:
        return None  # not what the script prints (no python3 there): treated as no array
    if data is None:
        return None
    name, level, chunk, members = data
    return MdArray(name, level or "unknown", int(chunk) if str(chunk).isdigit() else 0,
                   tuple(f"/dev/{m}" for m in members))
