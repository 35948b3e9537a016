"""Writes the module map of docs/architecture.md from the code: every module of the package
(``suites/`` aside: test files), each with the first sentence of its docstring, by room.

    python3 scripts/gen_architecture_doc.py          # rewrite the map in docs/architecture.md
    python3 scripts/gen_architecture_doc.py --check  # exit 1 when the map is out of date

The map sits between the markers ``<!-- module map -->`` and ``<!-- /module map -->``; the rest
of the page is written by hand.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_ebsperf"
DOC = ROOT / "docs" / "architecture.md"
START, END = "<!-- module map -->", "<!-- /module map -->"
#: Longest description in the map (characters).
LONGEST = 160


def modules() -> list[Path]:
    """Every module of the package but the built-in suites (test files)."""
    return sorted(p for p in PACKAGE.rglob("*.py") if "suites" not in p.relative_to(PACKAGE).parts)


def first_sentence(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    text = " ".join(doc.split())
    match = re.match(r"(.+?[.?!])(\s|$)", text)
    sentence = match.group(1) if match else text
    if len(sentence) > LONGEST:
        sentence = sentence[:LONGEST].rsplit(" ", 1)[0].rstrip(",;:") + " ..."
    return sentence.replace("|", "/") or "-"


def render_map() -> str:
    lines = [START, "", "| module | what it is |", "|---|---|"]
    for path in modules():
        name = path.relative_to(PACKAGE).as_posix()
        lines.append(f"| `{name}` | {first_sentence(path)} |")
    lines += ["", END]
    return "\n".join(lines)


def render(page: str) -> str:
    before, _, rest = page.partition(START)
    _, _, after = rest.partition(END)
    return before + render_map() + after


def main(argv: list[str]) -> int:
    page = DOC.read_text()
    text = render(page)
    if "--check" in argv:
        if text != page:
            print(f"{DOC}'s module map is out of date: run python3 scripts/gen_architecture_doc.py")
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
