"""The examples of docs/howto-write-a-claim.md run as tests, on emulated volumes.

Each ``python`` block that starts with a ``# test_*.py`` comment is written to a directory and
run with pytest and ``--emulate`` on the gp3 the page describes (16,000 IOPS, 500 MiB/s):
every claim holds there. On a volume at half its rate the rate claims must fail, with the
claim's own ID and number in the message.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support.common import FAILS_ON_A_QUIET_HOST, ROOT, needs_fio, needs_root, run_pytest

HOWTO = ROOT / "docs" / "howto-write-a-claim.md"
VOLUME = ["--volume-type=gp3", "--volume-size=500", "--volume-iops=16000",
          "--volume-throughput=500"]
pytestmark = [needs_root, needs_fio]


def examples() -> dict[str, str]:
    blocks = re.findall(r"```python\n(# (test_\w+\.py)\n.*?)```", HOWTO.read_text(), re.DOTALL)
    return {name: code for code, name in blocks}


def _write(where: Path) -> list[str]:
    found = examples()
    for name, code in found.items():
        (where / name).write_text(code)
    return sorted(found)


def _run(where: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    ran = run_pytest(where, "--emulate", *VOLUME, "-rs", *extra)
    return ran.done, ran.checks


def test_the_page_has_the_examples_it_promises() -> None:
    assert sorted(examples()) == ["test_database_latency.py", "test_database_mix.py",
                                  "test_database_volume.py"]
    # the page only uses the public fixture: no private module
    assert "import pytest_ebsperf" not in "".join(examples().values())


@pytest.mark.alone  # judges a p99 latency and rates to a few percent
def test_every_example_holds_on_the_volume_it_describes(tmp_path: Path) -> None:
    _write(tmp_path)
    proc, checks = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:]
    by_claim = {c["claim"]: c for c in checks}
    assert sorted(by_claim) == ["DB-01", "DB-02", "DB-03", "DB-04"]
    assert {c["outcome"] for c in checks} == {"pass"}
    assert by_claim["DB-02"]["policy"] == "LATENCY"
    assert 0 < by_claim["DB-02"]["measured"]["value"] <= 2e6  # ns
    assert by_claim["DB-01"]["measured"]["value"] >= 12_000


@FAILS_ON_A_QUIET_HOST
def test_the_rate_claims_fail_on_a_volume_at_half_its_rate(tmp_path: Path) -> None:
    _write(tmp_path)
    # misses seen alone (the looks after pauses that spells need are tests/checks/test_spells.py's)
    proc, checks = _run(tmp_path, "--emulate-factor=0.5", "--ebsperf-miss-spell=1", "-k",
                        "12000 or 300_mibps")
    by_claim = {c["claim"]: c for c in checks}
    assert proc.returncode == 1, proc.stdout[-4000:]
    assert by_claim["DB-01"]["outcome"] == "fail"
    assert "claimed 12,000 IOPS" in by_claim["DB-01"]["message"]
    assert "Claim DB-01, https://wiki.example.com/db-storage-slo" in by_claim["DB-01"]["message"]
    assert by_claim["DB-03"]["outcome"] == "fail"


@pytest.mark.parametrize(("kwargs", "said"), [
    ("iops=1000, mibps=10", "give exactly one of iops= or mibps="),
    ("iops=-5", "must be a positive number"),
    ("iops=1000, share_of_seconds=99", "share_of_seconds is a fraction"),
])
def test_a_wrong_claim_is_a_sentence(tmp_path: Path, kwargs: str, said: str) -> None:
    (tmp_path / "test_bad.py").write_text(
        "def test_bad(ebsperf):\n"
        f"    ebsperf.check_at_least('X-1', 'x', ebsperf.workload('randread', '4k'), {kwargs})\n")
    proc, _ = _run(tmp_path)
    assert proc.returncode == 1
    assert said in proc.stdout
    assert "Traceback" not in proc.stdout


def test_a_wrong_latency_bound_is_a_sentence(tmp_path: Path) -> None:
    (tmp_path / "test_bad.py").write_text(
        "def test_bad(ebsperf):\n"
        "    ebsperf.check_latency('X-2', 'x', ebsperf.workload('randread', '4k'), "
        "below='two ms')\n")
    proc, _ = _run(tmp_path)
    assert proc.returncode == 1
    assert "X-2: 'two ms' is not a latency bound: give a duration such as 2ms" in proc.stdout
