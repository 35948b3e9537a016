"""Benchmarks of the burst-credit checks (needs root, loop devices, blkio throttling and fio).

    python3 benchmarks/bench_credits.py           # everything (about 5 minutes)
    python3 benchmarks/bench_credits.py knee      # one part: knee, suite

Figures printed:
- knee: on a fresh emulated 100 GiB gp2 at time scales 50, 100 and 200, a burst-level
  random-read job until past the knee; for each run the knee the analysis found, the true
  knee (when the emulated bucket switched the throttle to the baseline, measured from the
  first I/O the cgroup counted) and the model's knee; errors as detected - true (goal:
  within one log window, 1 s) and true - model (the emulator's own error);
- suite: wall time of ``pytest suites/gp2 --emulate`` (goal: under 90 s).

:func:`knee_run` is also what ``tests/data/credits/capture.py`` records golden series with.
"""

from __future__ import annotations

import math
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pytest_ebsperf.awsmodel.volume_types import spends_mib
from pytest_ebsperf.checks.session import EbsperfSession
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.emulate.bucket import BASELINE, CgroupCounter
from pytest_ebsperf.fio.workload import Workload, parse_size
from pytest_ebsperf.verdicts.knee import find_knee

ROOT = Path(__file__).resolve().parent.parent
SCALES = (50.0, 100.0, 200.0)
RUNS_PER_SCALE = 2
#: Starting balance of the knee runs: 93 % puts the knees between window boundaries
#: (37.2, 18.6 and 9.3 s), so the interpolation inside a window is what is measured.
BENCH_BALANCE_PCT = 93.0
#: Seconds of baseline watched after the model's knee.
AFTER_S = 6.0


def _io_start(counter: CgroupCounter, stop: threading.Event, found: list[float]) -> None:
    """Poll the cgroup every 2 ms; record the wall time of the first counted I/O."""
    base = counter.read()[0]
    while not stop.is_set():
        if counter.read()[0] > base:
            found.append(time.time())
            return
        time.sleep(0.002)


def _pause_fio(cgroup: Path, at_s: float, for_s: float, stop: threading.Event) -> None:
    """SIGSTOP everything in the cgroup at ``at_s`` for ``for_s`` s: a short dip in the series
    (what a stalled host looks like), then SIGCONT."""
    if stop.wait(at_s):
        return
    pids = [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    stop.wait(for_s)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def knee_run(volume_type: str = "gp2", *, scale: float = 100.0, size_gib: int | None = None,
             pattern: str = "randread", bs: str = "16k", bucket_factor: float = 1.0,
             balance_pct: float | None = None, start_pct: float | None = None,
             extra_s: float = AFTER_S, dip: tuple[float, float] | None = None
             ) -> dict[str, Any]:
    """One burst-level run on a fresh emulated volume; the series and the knees.

    ``balance_pct`` is ``--burst-balance`` (model and emulated bucket), ``start_pct`` and
    ``bucket_factor`` the emulated bucket's testing aids; ``dip=(at_s, for_s)`` stops fio for
    ``for_s`` seconds ``at_s`` seconds into the run.
    """
    origin = {"volume_size": "given"} if size_gib else {}
    settings = Settings(emulate=True, emulate_timescale=f"{scale:g}", volume_size=size_gib,
                        burst_balance=balance_pct, origin=origin)
    session = EbsperfSession(settings)
    try:
        session.credits.configure(bucket_factor=bucket_factor, start_pct=start_pct)
        volume = session.volume_for(volume_type)
        target = session.target_for(volume)
        device = target.emulated
        assert device is not None
        ledger = session.credits.ledger(volume)
        assert ledger is not None
        drain = ledger.plan.drain_rate
        expected = ledger.at(session.credits.clock()) / drain
        job = Workload(pattern, bs=parse_size(bs), iodepth=8, runtime_s=round(expected + extra_s),
                       ramp_s=0.0, engine="libaio", name="knee")
        session.credits.pace(target, job, session.emulated_rates)
        device.set_mix(job.read_fraction)
        counter = CgroupCounter(device.cgroup_path, device.cgroup_version, device.major_minor)
        stop, started = threading.Event(), []
        threads = [threading.Thread(target=_io_start, args=(counter, stop, started))]
        if dip:
            threads.append(threading.Thread(target=_pause_fio,
                                            args=(device.cgroup_path, *dip, stop)))
        for thread in threads:
            thread.start()
        try:
            result = session.runner.run(job, target.path, readonly=True, prefix=target.prefix())
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        controller = session.credits.controller(device)
        assert controller is not None
        switches = [t.wall for t in controller.transitions[1:] if t.state == BASELINE]
        key = "total_bw" if spends_mib(volume.type) else "total_iops"
        series = result.series[key]
        true_knee = switches[0] - started[0] if switches and started else None
        return {"volume": volume.label(), "scale": scale, "bucket_factor": bucket_factor,
                "start_pct": start_pct, "pattern": pattern, "bs": bs, "dip": dip,
                "unit": "B/s" if spends_mib(volume.type) else "IOPS", "window_s": 1.0,
                "t_s": list(series.t_s), "values": list(series.values),
                "expected_knee_s": expected, "true_knee_s": true_knee,
                "fio_version": result.fio_version}
    finally:
        session.close()


def knee() -> list[dict[str, Any]]:
    rows = []
    for scale in SCALES:
        for _ in range(RUNS_PER_SCALE):
            run = knee_run(scale=scale, balance_pct=BENCH_BALANCE_PCT)
            found = find_knee(run["values"], run["t_s"])
            true, model = run["true_knee_s"], run["expected_knee_s"]
            rows.append({"scale": scale, "model_s": model, "true_s": true,
                         "detected_s": found.t_s,
                         "detect_err_s": (found.t_s - true) if found.t_s and true else math.nan,
                         "emulator_err_s": (true - model) if true else math.nan})
    return rows


def suite() -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suites" / "gp2"),
                           "--emulate", "-q", "-p", "no:cacheprovider", "--ebsperf-plots=none"],
                          check=False, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - started
    return {"wall_s": wall, "rc": done.returncode,
            "summary": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""}


def main(parts: list[str]) -> None:
    parts = parts or ["knee", "suite"]
    if "knee" in parts:
        rows = knee()
        print("knee time on an emulated 100 GiB gp2 (seconds since the first I/O)")
        print(f"{'scale':>6} {'model':>7} {'true':>7} {'found':>7} {'found-true':>11} "
              f"{'true-model':>11}")
        for row in rows:
            print(f"{row['scale']:>6g} {row['model_s']:>7.2f} {row['true_s']:>7.2f} "
                  f"{row['detected_s']:>7.2f} {row['detect_err_s']:>+11.2f} "
                  f"{row['emulator_err_s']:>+11.2f}")
        for scale in SCALES:
            errors = [abs(r["detect_err_s"]) for r in rows if r["scale"] == scale]
            print(f"scale {scale:g}: max |found - true| {max(errors):.2f} s, mean "
                  f"{statistics.fmean(errors):.2f} s")
    if "suite" in parts:
        result = suite()
        print(f"pytest suites/gp2 --emulate: {result['wall_s']:.1f} s wall "
              f"(exit {result['rc']}; {result['summary']})")


if __name__ == "__main__":
    main(sys.argv[1:])
