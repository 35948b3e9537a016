"""Judge a fio report someone already has against a volume's documented limits.

    python3 -m pytest_ebsperf judge run.json --volume-type=io1 --volume-size=100 \
        --volume-iops=4000 [--logs=PREFIX] [--group=N] [--instance-type=m5.large]

The workload (pattern, block size, queue depth, jobs) is read from fio's own report; the
expectation is the documented cap for that workload on that volume (the same model as the
suites). With ``--logs`` (fio's ``--write_iops_log``/``--write_bw_log`` prefix, 1 s windows)
every second is a trial of the duty cycle; without them only the mean can be judged, and the
verdict says so. Exit status: 0 pass, 1 fail, 2 inconclusive, 4 bad input (a sentence).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import PATTERNS, Workload, parse_size
from pytest_ebsperf.verdict_types import Outcome, Verdict

EXIT = {Outcome.PASS: 0, Outcome.FAIL: 1, Outcome.INCONCLUSIVE: 2, Outcome.INFO: 0}
USAGE_EXIT = 4


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m pytest_ebsperf judge",
                                description="Judge a fio JSON report against a volume's "
                                "documented limits (the model the suites use).")
    p.add_argument("report", help="fio --output-format=json (or json+) file")
    p.add_argument("--volume-type", required=True)
    p.add_argument("--volume-size", type=int)
    p.add_argument("--volume-iops", type=int)
    p.add_argument("--volume-throughput", type=float)
    p.add_argument("--instance-type")
    p.add_argument("--burst-balance", type=float, help="BurstBalance percent (gp2/st1/sc1)")
    p.add_argument("--logs", metavar="PREFIX", help="the prefix fio's interval logs were "
                   "written with (PREFIX_iops.N.log ...), 1 s windows")
    p.add_argument("--group", type=int, help="the group to judge in a stonewalled report")
    p.add_argument("--metric", choices=("iops", "throughput"), help="default: throughput for "
                   "blocks of 256 KiB or more, else IOPS")
    p.add_argument("--claim", default="B-SLA", help="claim ID for the message")
    return p


def workload_of(result: FioResult, where: str) -> Workload:
    """The workload fio ran, from its report's job options."""
    options = result.job_options
    pattern = options.get("rw") or options.get("readwrite") or ""
    if pattern not in PATTERNS:
        raise EbsperfError(f"{where}: fio's report names the pattern {pattern!r}; judged "
                           f"patterns are {', '.join(PATTERNS)}.")
    bs = parse_size(options.get("bs") or options.get("blocksize") or "4k",
                    what=f"block size in {where}")
    mix = options.get("rwmixread")
    return Workload(pattern, bs=bs, iodepth=int(options.get("iodepth", "1")),
                    numjobs=result.jobs, rwmixread=int(mix) if mix else None, engine="libaio",
                    runtime_s=max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0)


def judge_report(argv: Sequence[str]) -> tuple[Verdict, Workload]:
    from pytest_ebsperf import models, verdict
    from pytest_ebsperf.fio.logs import build_series, group_log_files
    from pytest_ebsperf.volume import Volume

    args = _parser().parse_args(argv)
    try:
        with open(args.report, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as exc:
        raise EbsperfError(f"{args.report} cannot be read ({exc.strerror}).") from None
    result = FioResult.from_json(text, group=args.group)
    workload = workload_of(result, args.report)
    if args.logs:
        directory, prefix = os.path.split(args.logs)
        names = [os.path.basename(p) for p in glob.glob(f"{args.logs}_*.log")]
        files = group_log_files(names, prefix)
        if not any(files.values()):
            raise EbsperfError(f"--logs={args.logs}: no {prefix}_iops/_bw/_clat logs there.")
        logs = {kind: [Path(directory or ".", n).read_text(encoding="utf-8")
                       for n in found] for kind, found in files.items()}
        series = build_series(logs, runtime_ms=workload.runtime_s * 1000,
                              fio_version=result.fio_version)
        result = replace(result, series=series)
    volume = models.validate(Volume(
        args.volume_type, size_gib=args.volume_size, iops=args.volume_iops,
        throughput_mibps=args.volume_throughput, instance_type=args.instance_type,
        burst_balance_pct=args.burst_balance))
    metric = args.metric or ("throughput" if workload.bs >= 256 * 1024 else "iops")
    what = f"{volume.label()}, {workload.label()} (from {os.path.basename(args.report)})"
    expectation = models.cap_expectation(args.claim, what, volume, workload, metric=metric,
                                         credits=volume.burst_balance_pct != 0)
    found = verdict.judge_cap(expectation, result, workload, metric=metric, cpu_count=None)
    return found, workload


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    try:
        found, _ = judge_report(list(sys.argv[1:] if argv is None else argv))
    except EbsperfError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT
    print(f"{found.outcome.value.upper()} {found.claim}: {found.message}", file=out)
    return EXIT[found.outcome]
