"""Writes docs/judge.md's tables: the published real-volume fio outputs (tests/data/realebs,
24; tests/data/realebs2, 25) judged with the facts their authors gave (FACTS.tsv, read by
tests/support/realebs.py as the tests read it).

    python3 scripts/gen_judge_doc.py          # rewrite the table in docs/judge.md
    python3 scripts/gen_judge_doc.py --check  # exit 1 when the table is out of date
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from pytest_ebsperf.cli import main as ebsperf
from pytest_ebsperf.units import format_quantity

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support import realebs

DOC = ROOT / "docs" / "judge.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _why(verdict: dict) -> str:
    reason = verdict.get("reason") or ""
    notes = [n for n in verdict.get("notes", []) if n]
    text = reason[0].upper() + reason[1:] if reason else ""
    if notes:
        text += ("; " if text else "") + "; ".join(notes)
    return _cell(text)


def _judge(args: list[str]) -> tuple[int, str, str]:
    """``ebsperf judge ARGS``: its exit status, what it printed and what it said on stderr
    (the console script's own code, in this process: one interpreter for all the files)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):  # from the repository, as the process was
        code = ebsperf(["judge", *args])
    return code, out.getvalue(), err.getvalue()


def table(name: str) -> str:
    lines = ["| file | volume (instance) | verdicts | measured / expected | binding | why |",
             "|---|---|---|---|---|---|"]
    for row in realebs.facts(name):
        args = realebs.options(row)
        code, out, err = _judge([str(realebs.SETS[name] / row["file"]), *args, "--json"])
        volume = f"{row['volume_type']} {row['size_gib']} GiB ({row['instance_type']})"
        if code == 4:  # refused: the sentence is the row
            said = err.strip().removeprefix("error: ")
            lines.append(f"| `{row['file']}` | {_cell(volume)} | REFUSED | - | - | "
                         f"{_cell(said)} |")
            continue
        found = json.loads(out)
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
        lines.append(f"| `{row['file']}` | {_cell(volume)} | {', '.join(outcomes)}{extra} | "
                     f"{figures} | {_cell(str(first.get('binding') or '-'))} | {_why(first)} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    page = DOC.read_text(encoding="utf-8")
    new = page
    for name in realebs.SETS:
        begin = f"<!-- {name} table: scripts/gen_judge_doc.py -->"
        end = f"<!-- end of {name} table -->"
        start, stop = new.index(begin) + len(begin), new.index(end)
        new = new[:start] + "\n" + table(name) + "\n" + new[stop:]
    if "--check" in argv:
        if new != page:
            print(f"{DOC} is out of date: python3 scripts/gen_judge_doc.py")
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
