"""Generated documentation pages match the code (regenerate with the scripts named)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support.common import ROOT


@pytest.mark.parametrize("script", ["gen_claims_doc.py", "gen_reference_doc.py",
                                    "gen_architecture_doc.py", "gen_judge_doc.py",
                                    "gen_instance_store.py"])
def test_generated_page_is_up_to_date(script: str) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_starts_with_the_two_set_up_commands() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    block = lines[lines.index("```sh") + 1: lines.index("```")]
    assert [line.split("#")[0].strip() for line in block] == [
        "bash scripts/main.sh", "bash scripts/test.sh"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "scripts/test.sh" in ci


def test_every_module_is_on_the_architecture_page() -> None:
    """docs/architecture.md is drawn from the code: a module missing from it fails here."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    package = ROOT / "pytest_ebsperf"
    missing = [path.relative_to(package).as_posix() for path in package.rglob("*.py")
               if "suites" not in path.relative_to(package).parts
               and f"`{path.relative_to(package).as_posix()}`" not in page]
    assert missing == [], f"not on docs/architecture.md: {missing}"


def test_every_file_the_architecture_walk_throughs_name_exists() -> None:
    """The hand-written parts of docs/architecture.md ("add a volume type", "add a check")
    name files; a file moved or renamed without the page fails here."""
    import re

    page = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:pytest_ebsperf|tests|scripts|docs|benchmarks)/[\w/.<>-]+)`",
                           page))
    named = {name for name in named if "<" not in name}  # a pattern (suites/<type>/...)
    assert len(named) >= 20
    assert sorted(name for name in named if not (ROOT / name).exists()) == []
