#!/usr/bin/env python3
"""Write pytest_ebsperf/data/instance_store.json: the random 4 KiB read and write IOPS AWS
publishes for each instance type's SSD instance store (all its volumes, at queue-depth
saturation; claim B-IS), from the "Instance store volume performance" tables of AWS's EC2
user guide (general purpose, compute, memory, storage optimized and accelerated computing
pages). The tables are kept in scripts/sources/awsdocs-instance-store/, cut unchanged from
awsdocs/amazon-ec2-user-guide at commit e3707c43 (2023-06-15, the last before the guide
moved off GitHub), so the table can be made again anywhere.

    python3 scripts/gen_instance_store.py           # write the table
    python3 scripts/gen_instance_store.py --check   # exit 1 when the file is out of date
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "scripts" / "sources" / "awsdocs-instance-store"
TARGET = ROOT / "pytest_ebsperf" / "data" / "instance_store.json"
SOURCE = ("awsdocs/amazon-ec2-user-guide@e3707c431483 doc_source/*-instances.md, "
          "'Instance store volume performance' (random 4,096-byte IOPS, all volumes)")
SOURCE_DATE = "2023-06-15"
_ROW = re.compile(r"^\|\s*([a-z0-9\\.\-]+)\s*\|\s*([\d,]+)\s*\|\s*([\d,]+)\s*\|")


def _family(name: str) -> str:
    return name.split(".")[0]


def table() -> dict[str, object]:
    """Every row of the tables. A type listed twice with other figures (AWS's memory
    optimized table has an r6id.metal row among the r5dn rows) keeps the row that stands
    among its own family's; the other is named under ``conflicts``."""
    types: dict[str, list[int]] = {}
    placed: dict[str, bool] = {}
    conflicts: dict[str, str] = {}
    for path in sorted(SOURCES.glob("*.md")):
        previous = ""
        for line in path.read_text(encoding="utf-8").splitlines():
            match = _ROW.match(line)
            if not match:
                continue
            name = match.group(1).replace("\\", "")
            row = [int(match.group(2).replace(",", "")), int(match.group(3).replace(",", ""))]
            at_home = _family(previous) == _family(name)
            previous = name
            if name in types and types[name] != row:
                kept, dropped = (row, types[name]) if at_home else (types[name], row)
                if at_home == placed[name]:
                    raise SystemExit(f"{path.name}: {name} is listed twice with other "
                                     "figures, both among its family's rows")
                conflicts[name] = (f"{path.name} also lists {dropped[0]:,} / {dropped[1]:,} "
                                   "outside its family's rows; the row among them is kept")
                types[name], placed[name] = kept, True
                continue
            types[name], placed[name] = row, at_home
    return {"source": SOURCE, "source_date": SOURCE_DATE,
            "types": dict(sorted(types.items())), "conflicts": conflicts}


def main(argv: list[str]) -> int:
    text = json.dumps(table(), indent=1) + "\n"
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} is out of date: run python3 scripts/gen_instance_store.py")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"{TARGET}: {len(json.loads(text)['types'])} instance types")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
