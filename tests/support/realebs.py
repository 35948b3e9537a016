"""The published real-volume fio outputs (tests/data/realebs, tests/data/realebs2) and the
command line a user types for each from the facts its author gave (FACTS.tsv): one reading
for the tests and for scripts/gen_judge_doc.py.

FACTS.tsv cells carry what the author wrote beside the figure ("1000 ('1TB')", "2x300 (AWS
spec)", "m5d.8xlarge (written 'md5.8xlarge')", "io1 (RAID0 of 6, inferred)"): the figure is
the first word, without an "Nx" member count; "unknown" and "-" are not given.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
SETS = {"realebs": DATA / "realebs", "realebs2": DATA / "realebs2"}
#: io1/io2 allow at most 50 provisioned IOPS per GiB (B-IO1): the least size a given IOPS
#: figure allows, where the author gave none (the IOPS cap does not depend on the size).
IOPS_PER_GIB = 50


def facts(name: str) -> list[dict[str, str]]:
    with open(SETS[name] / "FACTS.tsv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _figure(cell: str) -> str | None:
    word = re.sub(r"^\d+x", "", cell.strip()).split()[0] if cell.strip() else "-"
    return None if word in ("-", "unknown") else word


def options(row: dict[str, str]) -> list[str]:
    """The command line a user types for a FACTS row."""
    kind = row["volume_type"]
    vtype = "instance-store" if kind.startswith("instance store") else kind.split()[0]
    count = re.search(r"RAID-?0 of (\d+)", kind)
    members = row.get("volume_count") or (count.group(1) if count else "1")
    args = [f"--volume-type={vtype}", f"--instance-type={row['instance_type'].split()[0]}"]
    if members not in ("1", "-", ""):
        args.append(f"--volume-count={members}")
    size, iops, mibps = (_figure(row[k]) for k in
                         ("size_gib", "provisioned_iops", "provisioned_mibps"))
    if vtype in ("io1", "io2") and size is None and iops is not None:
        size = str(math.ceil(int(iops) / IOPS_PER_GIB))
    if vtype != "instance-store" and size is not None:
        args.append(f"--volume-size={size}")
    if iops is not None and vtype != "gp2":
        args.append(f"--volume-iops={iops}")
    if mibps is not None:
        args.append(f"--volume-throughput={mibps}")
    return args
