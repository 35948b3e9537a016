"""Benchmarks of the core plugin (needs root, loop devices, blkio throttling and fio).

    python3 benchmarks/bench_core.py            # everything (about 14 minutes)
    python3 benchmarks/bench_core.py fidelity   # one part: fidelity, ramp, driving, verdict,
                                                # suites, overhead

Figures printed:
- fidelity: measured / throttle limit of an emulated volume at 500, 3,000 and 20,000 IOPS,
  with the plugin's default random-read job (goal: within +-5 %);
- ramp: the lowest second / limit after 1, 0.5 and 0.25 s of ramp on emulated volumes
  (why the emulated default is 0.5 s);
- driving power: the plugin's default random-read job for a very fast volume on an
  unthrottled tmpfs loop device, against the best of a grid of hand-tuned fio jobs on the
  same device, run alternately (goal: >= 90 %);
- time to a verdict: wall time of ``pytest suites/io1 --emulate`` for a clear pass and for a
  clear fail (--emulate-factor=0.75) (goal: < 30 s each);
- suites: wall time of ``pytest suites --emulate`` (goal: < 5 minutes);
- overhead: per check, the test's call time minus fio's own wall time (goal: < 0.2 s).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.checks.claim_runner import ClaimRunner
from pytest_ebsperf.checks.session import EbsperfSession
from pytest_ebsperf.config.options import DEFAULT_RAMP_EMULATED_S, DEFAULT_RUNTIME_EMULATED_S
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.emulate import EmulatedDevice
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_S = DEFAULT_RUNTIME_EMULATED_S
RAMP_S = DEFAULT_RAMP_EMULATED_S
#: Rounds of the driving-power final (the default against the grid's top three).
FINAL_ROUNDS = 5


def default_job(volume: Volume, bs: int = 4096) -> Workload:
    """The job ``ebsperf.workload("randread", bs)`` builds for ``volume`` (through the claim
    runner the fixture itself is, on the emulated defaults)."""
    settings = Settings(emulate=True, volume_type=volume.type, volume_size=volume.size_gib,
                        volume_iops=volume.iops)
    runner = ClaimRunner(EbsperfSession(settings), name="bench")
    return runner.workload("randread", bs)


def fidelity() -> list[dict[str, Any]]:
    runner = FioRunner()
    rows = []
    for limit in (500, 3000, 20000):
        volume = awsmodel.validate(Volume("io2", size_gib=100, iops=limit))
        job = default_job(volume).replace(engine="libaio")
        with EmulatedDevice(iops=limit, bps=None, name="ebsperf-bench") as device:
            device.set_mix(1.0)
            result = runner.run(job, device.path, readonly=True, prefix=device.argv_prefix())
        series = result.series["total_iops"].values
        rows.append({"limit_iops": limit, "job": job.label(), "measured_iops": result.total_iops,
                     "ratio": result.total_iops / limit,
                     "per_second_min_ratio": min(series) / limit if series else None})
    return rows


def ramp(repeats: int = 3) -> list[dict[str, Any]]:
    """How short a ramp an emulated check can afford: the lowest per-second rate against the
    limit after 1, 0.5 and 0.25 s of ramp (CAP checks need every second >= 90 %)."""
    runner = FioRunner()
    rows = []
    for ramp_s in (1.0, 0.5, 0.25):
        lowest = []
        for limit in (500, 3000, 4000, 20000):
            volume = awsmodel.validate(Volume("io2", size_gib=100, iops=limit))
            for bs in (4096, 16384):
                job = default_job(volume, bs).replace(engine="libaio", ramp_s=ramp_s)
                for _ in range(repeats):
                    with EmulatedDevice(iops=limit, bps=None, name="ebsperf-bench") as device:
                        device.set_mix(1.0)
                        result = runner.run(job, device.path, readonly=True,
                                            prefix=device.argv_prefix())
                    series = result.series["total_iops"].values
                    lowest.append(min(series) / limit if series else 0.0)
        rows.append({"ramp_s": ramp_s, "runs": len(lowest), "lowest_second_ratio": min(lowest),
                     "median_lowest_second_ratio": statistics.median(lowest)})
    return rows


def driving_power(rounds: int = 2) -> dict[str, Any]:
    """The default random-read job for a very fast volume against a grid of hand-tuned jobs
    (io_uring with and without registered buffers/files, libaio; 2-8 jobs x QD 8-64) on an
    unthrottled tmpfs loop device, at 4 KiB and 16 KiB, run alternately."""
    runner = FioRunner()
    fast = awsmodel.validate(Volume("io2", size_gib=256, iops=256_000))
    out: dict[str, Any] = {"rounds": rounds}
    registered = (("fixedbufs", ""), ("registerfiles", ""))
    for bs in (4096, 16384):
        ours = default_job(fast, bs)
        grid = [Workload("randread", bs=bs, iodepth=qd, numjobs=nj, runtime_s=RUNTIME_S,
                         ramp_s=RAMP_S, engine=engine, extra=extra)
                for engine, extra in (("io_uring", registered), ("io_uring", ()),
                                      ("libaio", ()))
                for nj in (2, 4, 8) for qd in (8, 16, 32, 64)
                if engine == "io_uring" or qd in (16, 32)]
        with EmulatedDevice(iops=None, bps=None, name="ebsperf-bench") as device:
            scores: dict[str, list[float]] = {}
            for _ in range(rounds):  # alternate so drift on a shared machine hits all alike
                for job in [ours, *grid]:
                    result = runner.run(job, device.path, readonly=True)
                    key = "default" if job is ours else (
                        f"{job.engine}{'+registered' if job.extra else ''} {job.label()}")
                    scores.setdefault(key, []).append(result.total_iops)
            medians = {k: statistics.median(v) for k, v in scores.items()}
            # The best of 30 noisy medians is biased high (the winner's curse): the default
            # and the grid's top three run again, alternately, and that final decides.
            top = sorted((k for k in medians if k != "default"), key=medians.__getitem__,
                         reverse=True)[:3]
            jobs = {"default": ours, **{k: j for j in grid for k in [
                f"{j.engine}{'+registered' if j.extra else ''} {j.label()}"] if k in top}}
            final: dict[str, list[float]] = {k: [] for k in jobs}
            for _ in range(FINAL_ROUNDS):
                for key, job in jobs.items():
                    final[key].append(runner.run(job, device.path, readonly=True).total_iops)
        final_medians = {k: statistics.median(v) for k, v in final.items()}
        best_key = max((k for k in final_medians if k != "default"),
                       key=final_medians.__getitem__)
        out[f"{bs // 1024}KiB"] = {
            "default_job": f"{runner.resolve_engine('auto')} {ours.label()}"
                           f"{' +registered' if runner._registered else ''}",
            "grid_default_iops": medians["default"],
            "grid_best": max((k for k in medians if k != "default"), key=medians.__getitem__),
            "final_rounds": FINAL_ROUNDS,
            "default_iops": final_medians["default"], "best_hand_tuned": best_key,
            "best_iops": final_medians[best_key],
            "ratio": final_medians["default"] / final_medians[best_key]}
    return out


def pytest_wall(*args: str) -> tuple[float, int, str]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", *args, "-q", "-p",
                           "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    lines = proc.stdout.strip().splitlines()
    return time.perf_counter() - started, proc.returncode, lines[-1] if lines else ""


def time_to_verdict() -> list[dict[str, Any]]:
    rows = []
    for label, extra in (("clear pass", []), ("clear fail", ["--emulate-factor=0.75"])):
        wall, rc, summary = pytest_wall("suites/io1", "--emulate", *extra)
        rows.append({"case": label, "wall_s": wall, "rc": rc, "summary": summary})
    return rows


def suites_wall() -> dict[str, Any]:
    wall, rc, summary = pytest_wall("suites", "--emulate")
    return {"wall_s": wall, "rc": rc, "summary": summary}


class _Overhead:
    """Collects per-test call durations and fio wall times from report user_properties."""

    def __init__(self) -> None:
        self.samples: list[float] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        fio = [v["fio_wall_s"] for k, v in report.user_properties
               if k == "ebsperf_measurement" and v.get("fio_wall_s")]
        if fio:
            self.samples.append(report.duration - sum(fio))


def overhead() -> dict[str, Any]:
    collector = _Overhead()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        pytest.main([str(ROOT / "suites" / "gp3"), str(ROOT / "suites" / "io1"), "--emulate",
                     "--ebsperf-runtime=2", "-q", "-p", "no:cacheprovider"],
                    plugins=[collector])
        os.chdir(ROOT)
    samples = collector.samples
    return {"checks": len(samples), "median_s": statistics.median(samples),
            "max_s": max(samples)}


PARTS = {"fidelity": fidelity, "ramp": ramp, "driving": driving_power, "verdict": time_to_verdict,
         "suites": suites_wall, "overhead": overhead}


def main(argv: list[str]) -> None:
    for name in argv or list(PARTS):
        started = time.perf_counter()
        result = PARTS[name]()
        print(f"== {name} ({time.perf_counter() - started:.0f} s)")
        for row in result if isinstance(result, list) else [result]:
            print("  " + ", ".join(f"{k}={_fmt(v)}" for k, v in row.items()))
        sys.stdout.flush()


def _fmt(value: Any) -> str:
    return f"{value:,.3f}" if isinstance(value, float) else str(value)


if __name__ == "__main__":
    main(sys.argv[1:])
