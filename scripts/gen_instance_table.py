#!/usr/bin/env python3
"""Write pytest_ebsperf/data/instance_types.json: every instance type AWS lists, with its
EBS-optimized baseline and maximum IOPS and throughput, its hypervisor and its instance-store
disks, from the DescribeInstanceTypes responses that moto ships
(``moto/ec2/resources/instance_types.json.gz``).

    python3 scripts/gen_instance_table.py           # write the table
    python3 scripts/gen_instance_table.py --check   # exit 1 when the file is out of date

The file names its source and the source's date (the date of the snapshot in moto's wheel).
Types the snapshot lacks but AWS's documentation tables list are added from
``pytest_ebsperf.awsmodel.instance_data.DOCUMENTED_EXTRA`` (each with its URL).
"""

from __future__ import annotations

import gzip
import json
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "pytest_ebsperf" / "data" / "instance_types.json"
SOURCE_MEMBER = "moto/ec2/resources/instance_types.json.gz"


def _moto() -> tuple[dict, str]:
    """moto's DescribeInstanceTypes snapshot and moto's version."""
    import moto

    path = Path(moto.__file__).parent / "ec2" / "resources" / "instance_types.json.gz"
    with gzip.open(path) as handle:
        return json.load(handle), moto.__version__


def rows(records: dict) -> dict[str, dict]:
    """The table's rows from DescribeInstanceTypes records."""
    table: dict[str, dict] = {}
    for name in sorted(records):
        record = records[name]
        ebs = record.get("EbsInfo") or {}
        info = ebs.get("EbsOptimizedInfo")
        limits = None
        if info:
            limits = [int(info["BaselineIops"]), float(info["BaselineThroughputInMBps"]),
                      int(info["MaximumIops"]), float(info["MaximumThroughputInMBps"])]
        disks = (record.get("InstanceStorageInfo") or {}).get("Disks") or []
        store = None
        if disks:
            store = {"devices": sum(int(d.get("Count", 0)) for d in disks),
                     "size_gb": int(disks[0].get("SizeInGB", 0)),
                     "type": str(disks[0].get("Type", ""))}
        table[name] = {"ebs": limits, "ebs_support": ebs.get("EbsOptimizedSupport"),
                       "hypervisor": record.get("Hypervisor"), "instance_store": store}
    return table


def build(snapshot_date: str) -> dict:
    records, version = _moto()
    return {"source": f"moto {version}, {SOURCE_MEMBER} (AWS DescribeInstanceTypes responses)",
            "source_date": snapshot_date, "types": rows(records)}


def snapshot_date() -> str:
    """The date of moto's snapshot: its entry in the wheel pip downloaded, when a wheel is at
    hand (EBSPERF_MOTO_WHEEL), else the date the current file names."""
    import os

    wheel = os.environ.get("EBSPERF_MOTO_WHEEL")
    if wheel:
        with zipfile.ZipFile(wheel) as archive:
            y, m, d, *_ = archive.getinfo(SOURCE_MEMBER).date_time
            return f"{y:04d}-{m:02d}-{d:02d}"
    if TARGET.exists():
        return str(json.loads(TARGET.read_text())["source_date"])
    raise SystemExit("pass EBSPERF_MOTO_WHEEL=PATH to moto's wheel (pip download moto "
                     "--no-deps) so the table can name its source's date")


def main(argv: list[str]) -> int:
    table = build(snapshot_date())
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET} is out of date: run python3 scripts/gen_instance_table.py")
            return 1
        return 0
    TARGET.write_text(text)
    print(f"{TARGET}: {len(table['types'])} instance types from {table['source']} "
          f"({table['source_date']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
