"""Writes docs/judge.md's table: the 24 published real-volume fio outputs (tests/data/realebs)
judged with the facts their authors gave.

    python3 scripts/gen_judge_doc.py          # rewrite the table in docs/judge.md
    python3 scripts/gen_judge_doc.py --check  # exit 1 when the table is out of date
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

from pytest_ebsperf.units import format_quantity

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "judge.md"
REAL = ROOT / "tests" / "data" / "realebs"
BEGIN = "<!-- realebs table: scripts/gen_judge_doc.py -->"
END = "<!-- end of realebs table -->"


def options(row: dict[str, str]) -> list[str]:
    """The command line a user types for a FACTS row (as tests/verdicts/test_judge_text.py does)."""
    kind = row["volume_type"]
    vtype = "instance-store" if kind.startswith("instance store") else kind.split()[0]
    count = re.search(r"RAID-0 of (\d+)", kind)
    args = [f"--volume-type={vtype}", f"--instance-type={row['instance_type']}"]
    if count:
        args.append(f"--volume-count={count.group(1)}")
    last = {k: re.sub(r"^\d+x", "", row[k]).split()[0] for k in
            ("size_gib", "provisioned_iops", "provisioned_mibps")}
    if vtype != "instance-store":
        args.append(f"--volume-size={last['size_gib']}")
    if last["provisioned_iops"] != "-" and vtype != "gp2":
        args.append(f"--volume-iops={last['provisioned_iops']}")
    if last["provisioned_mibps"] != "-":
        args.append(f"--volume-throughput={last['provisioned_mibps']}")
    return args


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _why(verdict: dict) -> str:
    reason = verdict.get("reason") or ""
    notes = [n for n in verdict.get("notes", []) if n]
    text = reason[0].upper() + reason[1:] if reason else ""
    if notes:
        text += ("; " if text else "") + "; ".join(notes)
    return _cell(text)


def table() -> str:
    with open(REAL / "FACTS.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    lines = ["| file | volume (instance) | verdicts | measured / expected | binding | why |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        args = options(row)
        done = subprocess.run([sys.executable, "-m", "pytest_ebsperf", "judge",
                               str(REAL / row["file"]), *args, "--json"], capture_output=True,
                              text=True, check=False, cwd=ROOT, timeout=120)
        found = json.loads(done.stdout)
        verdicts = found["verdicts"]
        outcomes = sorted({v["outcome"].upper() for v in verdicts})
        first = verdicts[0] if verdicts else {}
        unit = first.get("unit_of_measure") or ""
        if first.get("measured") is not None and first.get("expected") is not None:
            figures = (f"{format_quantity(first['measured'], unit)} / "
                       f"{format_quantity(first['expected'], unit)}")
        else:
            figures = "-"
        extra = f" ({len(verdicts)} groups)" if len(verdicts) > 1 else ""
        volume = f"{row['volume_type']} {row['size_gib']} GiB ({row['instance_type']})"
        lines.append(f"| `{row['file']}` | {_cell(volume)} | {', '.join(outcomes)}{extra} | "
                     f"{figures} | {_cell(str(first.get('binding') or '-'))} | {_why(first)} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    page = DOC.read_text(encoding="utf-8")
    start, stop = page.index(BEGIN) + len(BEGIN), page.index(END)
    new = page[:start] + "\n" + table() + "\n" + page[stop:]
    if "--check" in argv:
        if new != page:
            print(f"{DOC} is out of date: python3 scripts/gen_judge_doc.py")
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
