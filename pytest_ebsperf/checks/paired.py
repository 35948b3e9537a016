"""Comparisons measured in paired alternating blocks (the measuring side of
:mod:`pytest_ebsperf.verdicts.comparison`): a fresh fio run on one side, then on the other, pair after
pair until the sequential design decides, and the verdict that says what the pairs showed.

Used by every check that compares two measurements: S0-08 (gp2 vs a Magnetic twin), S2-17
(encrypted vs plain twin: IOPS and median latency), S1-03 (first vs second write) and S1-08
(writes after TRIM vs on a full device).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts.comparison import Blocks, Design, Sequential
from pytest_ebsperf.verdicts.paired_verdicts import (
    MAX_PAIRS_AGAIN,
    emulator_spoiled,
    latency_verdict,
    measured_again,
    ratio_verdict,
    spoiled_pair,
)

__all__ = ["PairsStopped", "block_workload", "emulator_spoiled", "held", "in_balanced_order",
           "latency_verdict", "log_ratio", "measure", "measured_again", "ratio_verdict",
           "twin_block"]

#: Seconds one block measures (ramp excluded) on a real volume, and on an emulated one
#: (paced by the kernel to the second: a 1 s block's IOPS and QD-1 median latency scatter
#: by a few percent, and a pair costs 3.8 s of fio instead of 5.8 s with 2 s blocks),
#: unless --ebsperf-block is given.
BLOCK_S = 10.0
BLOCK_S_EMULATED = 1.0
#: The ramp before each block of two emulated twins read in turn, unless --ebsperf-ramp is
#: given: the kernel's throttle and the latency daemon pace the first I/O as they pace the
#: last, so a quarter of a second fills the queue (the project's S2-17 tests measure twins
#: so: the blocks' log ratios scatter by 0.27 % on a quiet host). The emulated runs' own 0.5 s
#: made each 1 s block 1.8 s of fio, all of it spent holding the host alone.
TWIN_RAMP_S_EMULATED = 0.25


class PairsStopped(Exception):
    """The pairs cannot go on (a burst bucket that cannot carry another block, a block that
    measured nothing): ``str`` says why."""


def block_seconds(settings: Any) -> float:
    """The measuring seconds of one block: --ebsperf-block, else the default."""
    given = getattr(settings, "block", None)
    if given:
        return float(given)
    return BLOCK_S_EMULATED if settings.emulate else BLOCK_S


def block_workload(workload: Workload, settings: Any) -> Workload:
    """``workload`` as one block: the block's seconds after the run's ramp."""
    return workload.replace(runtime_s=block_seconds(settings), ramp_s=settings.ramp_s)


def twin_block(workload: Workload, settings: Any) -> Workload:
    """``workload`` as one block of a comparison of two volumes read in turn: as
    :func:`block_workload`, after a ramp of :data:`TWIN_RAMP_S_EMULATED` on emulated
    volumes when no ramp was given."""
    block = block_workload(workload, settings)
    if settings.emulate and settings.ramp is None:
        return block.replace(ramp_s=min(block.ramp_s, TWIN_RAMP_S_EMULATED))
    return block


def held(runner: Any, *others: Any) -> Any:
    """How a comparison on ``runner``'s target (and its twin ``others``) holds the host's
    measuring lock. Real devices: alone for the whole comparison, so no other worker's fio
    shares the instance's CPUs and EBS bandwidth with either side. Emulated twins: run by run,
    beside the other workers (a twin whose emulation needs the host's CPUs still holds it
    alone for each of its runs: ``Target.measures_alone``). Each block's own emulator says
    when the host held that side back; such a pair is measured again, and a verdict that
    still rests on one is INCONCLUSIVE naming the host (:func:`measured_again`,
    :func:`emulator_spoiled`). Held alone, the emulated comparisons were the main job's serial
    part (126 s of a 320 s run, every other worker waiting: docs/benchmarks.md)."""
    if all(target.emulated_any for target in (runner.target, *others)):
        return contextlib.nullcontext(False)
    return runner.measuring_alone()


#: One pair: (A's figure, B's figure, A's fio result, B's fio result).
Pair = tuple[float, float, FioResult, FioResult]
PairRun = Callable[[int], Pair]


def measure(design: Design, run_pair: PairRun, difference: Callable[[float, float], float],
            *, block: Workload, again_when_spoiled: bool = False
            ) -> tuple[Sequential, Blocks, FioResult | None]:
    """Pairs until the design decides (or the pairs are stopped); ``run_pair(j)`` measures
    pair ``j`` and ``difference(a, b)`` makes its ``d``. The last fio result returned is
    the last pair's A side (where a kept verdict goes); the blocks keep where each run was
    kept (``--ebsperf-keep-fio``), for ``ebsperf judge`` to judge the pairs again. With
    ``again_when_spoiled`` (twins that can be measured again at will) a pair the host held
    back on one side (:func:`spoiled_pair`) is measured again, up to
    :data:`MAX_PAIRS_AGAIN` times, as a one-run check's spoiled seconds are left out."""
    seq = Sequential(design)
    a_values: list[float] = []
    b_values: list[float] = []
    kept: list[tuple[str, str]] = []
    shares: list[tuple[float | None, float | None]] = []
    again: list[tuple[float | None, float | None]] = []
    last: FioResult | None = None
    stopped = ""
    try:
        while seq.outcome is None:
            wanted = seq.wanted()
            while wanted > 0:
                a, b, last, other = run_pair(len(a_values))
                pair_shares = (last.emulator_share, other.emulator_share)
                if again_when_spoiled and len(again) < MAX_PAIRS_AGAIN and \
                        spoiled_pair(pair_shares):
                    again.append(pair_shares)
                    continue
                wanted -= 1
                kept.append((last.kept_as or "", other.kept_as or ""))
                shares.append(pair_shares)
                if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
                    raise PairsStopped(f"pair {len(a_values) + 1} measured nothing on "
                                       f"{'the first' if not a > 0 else 'the second'} side")
                a_values.append(a)
                b_values.append(b)
                seq.add(difference(a, b))
            seq.judge()
    except PairsStopped as exc:
        stopped = str(exc)
    blocks = Blocks(tuple(a_values), tuple(b_values), block.runtime_s, block.ramp_s, stopped,
                    tuple(kept[:len(a_values)]), tuple(shares[:len(a_values)]), tuple(again))
    return seq, blocks, last


def in_balanced_order(index: int, run_a: Callable[[], FioResult],
                      run_b: Callable[[], FioResult]) -> tuple[FioResult, FioResult]:
    """Pair ``index``'s two blocks, A first in even pairs and B first in odd ones (A B, B A,
    A B ...: every two pairs an A B B A). A drift of the host that is linear over a pair of
    pairs then lands on both sides alike; measured A first every time, a common trend made
    A look faster (or slower) by half a block's drift in every pair."""
    if index % 2 == 0:
        a = run_a()
        return a, run_b()
    b = run_b()
    return run_a(), b


def log_ratio(a: float, b: float) -> float:
    return math.log(a) - math.log(b)


