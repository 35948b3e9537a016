"""``ebsperf judge --init-rate``: a restored volume's first read against its provisioned
initialization rate (B-INIT). The verdicts on real throttled reads are in
tests/checks/test_initialization_rate.py, beside the live check's."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pytest_ebsperf.verdicts.judge import main

SEQREAD = Path(__file__).resolve().parents[1] / "data" / "fio" / "seqread_1m.json"
FACTS = ["--volume-type=gp3", "--volume-size=1"]


def _judge(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main([str(SEQREAD), *FACTS, *args], out=out), out.getvalue()


def test_a_read_is_judged_as_the_first_read_under_b_init() -> None:
    rc, said = _judge("--init-rate=100")
    assert rc == 0 and said.startswith("PASS B-INIT:"), said
    assert "55.6 MiB/s expected (provisioned initialization rate 100 MiB/s, then gp3 " \
           "throughput 125 MiB/s" in said
    assert "its mean is judged, not a sample of its seconds" in said


@pytest.mark.parametrize(("extra", "said"), [
    (["--init-rate=50"], "--init-rate is 50 MiB/s: AWS accepts 100-300 MiB/s"),
    (["--init-rate=100", "--volume-count=2"], "drop --volume-count/--member"),
])
def test_a_rate_or_set_the_claim_cannot_hold_is_refused_with_a_sentence(
        extra: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _ = _judge(*extra)
    err = capsys.readouterr().err
    assert rc == 4 and said in err and "Traceback" not in err, err
