"""Writes the generated parts of docs/architecture.md from the code: the quarters (each package
with its size, what it owns from its docstring, and the quarters it imports, read with ``ast``),
and the module map (every module with the first sentence of its docstring). The walk-throughs
between them are written by hand; the files they name are checked to exist
(``tests/plugin/test_docs_current.py``).

    python3 scripts/gen_architecture_doc.py          # rewrite the generated parts
    python3 scripts/gen_architecture_doc.py --check  # exit 1 when they are out of date
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_ebsperf"
DOC = ROOT / "docs" / "architecture.md"
MARKS = {"quarters": ("<!-- quarters -->", "<!-- /quarters -->"),
         "map": ("<!-- module map -->", "<!-- /module map -->")}
#: Longest description in the module map (characters).
LONGEST = 160


def modules() -> list[Path]:
    """Every module of the package but the built-in suites (test files)."""
    return sorted(p for p in PACKAGE.rglob("*.py") if "suites" not in p.relative_to(PACKAGE).parts)


def docstring(path: Path) -> str:
    return " ".join((ast.get_docstring(ast.parse(path.read_text())) or "").split())


def first_sentence(path: Path) -> str:
    text = docstring(path)
    match = re.match(r"(.+?[.?!])(\s|$)", text)
    sentence = match.group(1) if match else text
    if len(sentence) > LONGEST:
        sentence = sentence[:LONGEST].rsplit(" ", 1)[0].rstrip(",;:") + " ..."
    return sentence.replace("|", "/") or "-"


def quarter_of(path: Path) -> str:
    """The quarter a module lives in: its package under pytest_ebsperf, or "(root)"."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else "(root)"


def imported_quarters(path: Path) -> set[str]:
    """The quarters ``path`` imports from (at the top, in functions, under TYPE_CHECKING)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        for name in names:
            parts = name.split(".")
            if parts[0] != "pytest_ebsperf" or len(parts) < 2:
                continue
            target = PACKAGE / parts[1]
            if target.is_dir():
                found.add(parts[1])
            elif (PACKAGE / f"{parts[1]}.py").exists() or isinstance(node, ast.ImportFrom) and len(parts) == 1:
                found.add("(root)")
    return found


def render_quarters() -> str:
    quarters: dict[str, list[Path]] = {}
    for path in modules():
        quarters.setdefault(quarter_of(path), []).append(path)
    start, end = MARKS["quarters"]
    lines = [start, "", "| quarter | modules | lines | owns | imports from |", "|---|---|---|---|---|"]
    for name in sorted(quarters, key=lambda q: (q != "(root)", q)):
        paths = quarters[name]
        size = sum(len(p.read_text().splitlines()) for p in paths)
        if name == "(root)":
            owns = "; ".join(f"`{p.name}`: {first_sentence(p)}" for p in paths
                             if p.name not in ("__init__.py",))
        else:
            owns = docstring(PACKAGE / name / "__init__.py").split(" Owns: ")[0]
            owns = re.split(r"(?<=[.])\s+(?=[A-Z`])", owns, maxsplit=1)[0]
        uses = sorted(set().union(*(imported_quarters(p) for p in paths)) - {name})
        label = "`pytest_ebsperf/`" if name == "(root)" else f"`{name}/`"
        lines.append(f"| {label} | {len(paths)} | {size:,} | {owns.replace('|', '/')} | "
                     f"{', '.join(f'`{u}`' for u in uses) or '-'} |")
    lines += ["", end]
    return "\n".join(lines)


def render_map() -> str:
    start, end = MARKS["map"]
    lines = [start, "", "| module | what it is |", "|---|---|"]
    for path in modules():
        name = path.relative_to(PACKAGE).as_posix()
        lines.append(f"| `{name}` | {first_sentence(path)} |")
    lines += ["", end]
    return "\n".join(lines)


def render(page: str) -> str:
    for key, text in (("quarters", render_quarters()), ("map", render_map())):
        start, end = MARKS[key]
        before, _, rest = page.partition(start)
        _, _, after = rest.partition(end)
        page = before + text + after
    return page


def main(argv: list[str]) -> int:
    page = DOC.read_text()
    text = render(page)
    if "--check" in argv:
        if text != page:
            print(f"{DOC}'s generated parts are out of date: run "
                  "python3 scripts/gen_architecture_doc.py")
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
