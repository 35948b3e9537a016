"""``judge`` on fio outputs nobody wrote: real outputs (the published real-volume runs, fio's
own JSON, normal and terse samples) mutated, truncated, concatenated and re-encoded by
Hypothesis, 10,000 inputs over the tests below. Each is judged or refused with a sentence
(:class:`~pytest_ebsperf.errors.EbsperfError`), never a traceback, and no verdict carries a
figure no device could give (negative, not finite, beyond any volume)."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.common import DATA

from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.verdicts.judge import Judged, judge_report

CORPUS = sorted([*(DATA / "realebs").glob("*.json"), *(DATA / "realebs").glob("*.txt"),
                 *(DATA / "realebs2").glob("*.txt"), *(DATA / "fio").glob("*.json"),
                 *(DATA / "fio" / "formats").glob("*.txt")])
#: What a reader must refuse (or never take as a figure) wherever a number stood.
ODD = ("-4394.5", "1e29", "NaN", "Infinity", "-Infinity", "lots", "", "0", "1e23",
       "99999999999999999999999", "3.5.7", "0x10", "true", "-0")
#: No volume or instance store does more (io2 Block Express: 256,000; the largest instance
#: stores: a few million IOPS at 4 KiB); a figure past these is read wrong.
MOST_IOPS, MOST_BYTES_S = 1e8, 1e12
#: The facts a user gives (a gp3 with every rate provisioned, and the pattern for outputs
#: that name none).
FACTS = ("--volume-type=gp3", "--volume-size=500", "--volume-iops=16000",
         "--volume-throughput=1000", "--rw=randread", "--bs=16k", "--iodepth=16")
SETTINGS = settings(max_examples=int(os.environ.get("EBSPERF_MUTATED_EXAMPLES", "2500")), deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
NUMBER = re.compile(rb"-?\d[\d.,]*(?:[eE][-+]?\d+)?")


def _judge(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "output.txt"
    path.write_bytes(data)
    try:
        found = judge_report([str(path), *FACTS])
    except EbsperfError as refused:
        assert str(refused).strip(), "a refusal says why"
        return
    for item in found:
        if not isinstance(item, Judged):
            assert item.reason.strip()
            continue
        value = item.verdict.measured
        if value is None:
            continue
        most = MOST_IOPS if item.verdict.unit == "IOPS" else MOST_BYTES_S
        assert math.isfinite(value) and 0 <= value <= most, item.verdict.message


@pytest.fixture(scope="module")
def texts() -> list[bytes]:
    return [path.read_bytes() for path in CORPUS]


@SETTINGS
@given(which=st.integers(0, len(CORPUS) - 1), at=st.integers(0, 9_999),
       odd=st.sampled_from(ODD))
def test_a_number_replaced_by_an_odd_one_is_refused_or_never_judged(
        tmp_path_factory: pytest.TempPathFactory, texts: list[bytes], which: int, at: int,
        odd: str) -> None:
    text = texts[which]
    numbers = list(NUMBER.finditer(text))
    if numbers:
        hit = numbers[at % len(numbers)]
        text = text[:hit.start()] + odd.encode() + text[hit.end():]
    _judge(tmp_path_factory.mktemp("odd"), text)


@SETTINGS
@given(which=st.integers(0, len(CORPUS) - 1), cut=st.floats(0.0, 1.0),
       drop=st.integers(0, 400), repeat=st.integers(0, 400))
def test_a_cut_short_or_edited_output_is_refused_or_judged(
        tmp_path_factory: pytest.TempPathFactory, texts: list[bytes], which: int, cut: float,
        drop: int, repeat: int) -> None:
    lines = texts[which].splitlines(keepends=True)
    if lines:
        lines = lines[:max(1, int(len(lines) * cut))]
        if len(lines) > 1:
            lines.pop(drop % len(lines))
            lines.insert(repeat % len(lines), lines[repeat % len(lines)])
    _judge(tmp_path_factory.mktemp("cut"), b"".join(lines))


@SETTINGS
@given(first=st.integers(0, len(CORPUS) - 1), second=st.integers(0, len(CORPUS) - 1),
       joint=st.sampled_from((b"", b"\n", b"\n\n---\n", b"garbage\n")))
def test_two_outputs_pasted_together_are_refused_or_judged(
        tmp_path_factory: pytest.TempPathFactory, texts: list[bytes], first: int,
        second: int, joint: bytes) -> None:
    _judge(tmp_path_factory.mktemp("two"), texts[first] + joint + texts[second])


@SETTINGS
@given(which=st.integers(0, len(CORPUS) - 1),
       how=st.sampled_from(("crlf", "latin-1", "utf-16", "bom", "nul", "tabs")),
       at=st.integers(0, 99_999))
def test_a_re_encoded_output_is_refused_or_judged(
        tmp_path_factory: pytest.TempPathFactory, texts: list[bytes], which: int, how: str,
        at: int) -> None:
    text = texts[which]
    if how == "crlf":
        text = text.replace(b"\n", b"\r\n")
    elif how == "latin-1":
        text = text.decode("utf-8", "replace").encode("latin-1", "replace")
    elif how == "utf-16":
        text = text.decode("utf-8", "replace").encode("utf-16")
    elif how == "bom":
        text = b"\xef\xbb\xbf" + text
    elif how == "nul":
        spot = at % (len(text) + 1)
        text = text[:spot] + b"\x00\xff\xfe" + text[spot:]
    else:
        text = text.replace(b" ", b"\t")
    _judge(tmp_path_factory.mktemp("enc"), text)
