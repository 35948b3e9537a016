"""How often verdicts are wrong, and how fast they come (figures for docs/benchmarks.md).

    python3 benchmarks/bench_verdicts.py simulation        # seconds, no fio
    python3 benchmarks/bench_verdicts.py looks [TRIALS]    # the default verdict under spells
    python3 benchmarks/bench_verdicts.py matrix            # root: rates x latency x jobs x factor
    python3 benchmarks/bench_verdicts.py emulated [ROUNDS] # root: suites at 1.0/0.75/2.0
    python3 benchmarks/bench_verdicts.py score DIR         # score the reports a run kept
    python3 benchmarks/bench_verdicts.py device            # root: suites/io1 on a loop device
    python3 benchmarks/bench_verdicts.py logs              # the interval-log reader's cost

simulation: per-second series of volumes exactly at their SLA budget (misses independent, and
in spells of 3 s on average) and of volumes 5 %, 10 % and 25 % below their cap, judged by the
duty-cycle test the plugin uses, second by second as fio reports them (the same early stop).
Exact false-fail probabilities come from the test's own distribution (binomial, or the Markov
chain of the bursty volume); a Monte Carlo run checks them and gives detection rates and the
median seconds to a FAIL.

emulated: every suite on emulated volumes at --emulate-factor 1.0 (every verdict must be a
PASS), 0.75 and 2.0 (every rate claim must FAIL; see expected_outcome), repeated; a verdict
that is anything else counts as wrong. Checks that record only (INFO) or do not apply (skips)
are not verdicts.

device: the read-only io1 suite with device defaults (60 s checks) on a kernel-throttled loop
device given as --device, at exactly its 2,000 IOPS and at 75 % of it.

logs: the reader of fio's interval logs on 16 jobs x 86,400 one-second windows (a day-long
soak): wall time and peak memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pytest_ebsperf import evidence

ROOT = Path(__file__).resolve().parent.parent
RUN_ALPHA = 0.001
CHECKS = 40
ALPHA = evidence.per_check_alpha(RUN_ALPHA, CHECKS)
PLANNED = 60


# -- simulation ----------------------------------------------------------------------------
def _series(rng: random.Random, n: int, miss_rate: float, spell: float, level: float,
            noise: float = 0.01) -> list[float]:
    """Per-second values / cap: a volume at ``level`` x its cap with per-second ``noise``
    whose seconds also miss (fall to 50-89 %) at ``miss_rate``, in spells of ``spell``."""
    stay = 1.0 - 1.0 / spell if spell > 1 else miss_rate
    start = miss_rate * (1 - stay) / (1 - miss_rate) if miss_rate else 0.0
    values, missed = [], rng.random() < miss_rate
    for _ in range(n):
        if missed:
            values.append(rng.uniform(0.5, 0.89))
        else:
            values.append(level * rng.gauss(1.0, noise))
        missed = rng.random() < (stay if missed else start)
    return values


def _judge_live(values: list[float], duty: float, spell: float) -> tuple[str, int]:
    """The monitor's decision second by second: (final state, seconds seen).

    The plugin's own test decides (``evidence.duty_test`` on the seconds seen against the
    planned length); counting misses as they come only finds the second to ask it at, since
    its state can change only when a miss arrives or the remaining seconds run short.
    """
    n = len(values)
    k = evidence.critical_misses(n, 1.0 - duty, ALPHA, spell)
    misses = 0
    for seen, value in enumerate(values, start=1):
        misses += value < 0.9
        if misses >= k or misses + (n - seen) < k:
            break
    test = evidence.duty_test(values[:seen], 0.9, duty, alpha=ALPHA, planned=n, spell=spell)
    return test.state, seen


def simulation(trials: int = 20000, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    out: dict[str, Any] = {"alpha_per_check": ALPHA, "run_alpha": RUN_ALPHA, "checks": CHECKS,
                           "planned_s": PLANNED, "trials": trials, "rows": []}
    for name, duty in (("io1/io2 (99.9 %)", 0.999), ("gp2/gp3/st1/sc1 (99 %)", 0.99)):
        p = 1.0 - duty
        for assumed in (1.0, 3.0):
            k = evidence.critical_misses(PLANNED, p, ALPHA, assumed)
            for label, spell in (("independent misses", 1.0), ("misses in 3 s spells", 3.0)):
                exact = evidence.miss_tail(k, PLANNED, p, spell)
                fails = sum(_judge_live(_series(rng, PLANNED, p, spell, 1.0), duty,
                                        assumed)[0] == evidence.FAIL for _ in range(trials))
                out["rows"].append({
                    "volume": name, "assumed_spell_s": assumed, "critical": k,
                    "case": f"at its SLA budget, {label}",
                    "false_fail_per_check": exact,
                    "false_fail_per_suite": 1 - (1 - exact) ** CHECKS,
                    "monte_carlo_fails": fails})
            for below in (0.05, 0.10, 0.25):
                results = [_judge_live(_series(rng, PLANNED, 0.0, 1.0, 1.0 - below), duty,
                                       assumed) for _ in range(trials // 10)]
                failed = [seen for state, seen in results if state == evidence.FAIL]
                out["rows"].append({
                    "volume": name, "assumed_spell_s": assumed, "critical": k,
                    "case": f"{below:.0%} below its cap",
                    "fail_rate": len(failed) / len(results),
                    "median_s_to_fail": statistics.median(failed) if failed else None})
    return out


# -- the default verdict under misses in spells: first look, pauses, looks ------------------
class _Chain:
    """One volume's seconds as time goes on (observed or not): ``level`` x its cap with 1 %
    noise, missing (50-89 %) at ``miss_rate`` in spells of ``spell`` seconds on average."""

    def __init__(self, rng: random.Random, miss_rate: float, spell: float, level: float):
        self.rng, self.level = rng, level
        self.stay = 1.0 - 1.0 / spell if spell > 1 else miss_rate
        self.start = miss_rate * (1 - self.stay) / (1 - miss_rate) if miss_rate else 0.0
        self.missed = rng.random() < miss_rate

    def second(self) -> float:
        value = (self.rng.uniform(0.5, 0.89) if self.missed
                 else self.level * self.rng.gauss(1.0, 0.01))
        self.missed = self.rng.random() < (self.stay if self.missed else self.start)
        return value

    def skip(self, seconds: int) -> None:
        for _ in range(seconds):
            self.second()


def _with_looks(chain: _Chain, duty: float, plan: evidence.LookPlan | None,
                planned: int = PLANNED) -> tuple[str, int, int]:
    """The plugin's procedure on one check: (verdict, fio seconds, wall seconds).

    The first look stops one miss after a critical count (as the monitor does, for the
    logged windows); a suspicion pauses ``gap_s``, looks ``looks`` times, and either fails
    or runs the check's remaining seconds under the robust test alone. Each fio run costs
    its ramp (2 s) of wall time besides the seconds judged.
    """
    ramp = 2
    if plan is None:  # the single test (spell 1)
        k = evidence.critical_misses(planned, 1.0 - duty, ALPHA, 1.0)
        first_k, robust_k = k, k
    else:
        first_k, robust_k = plan.first_critical, plan.robust_critical
    misses, seen = 0, 0
    while seen < planned:
        seen += 1
        misses += chain.second() < 0.9
        if misses > robust_k or (misses > first_k and plan is None):
            return "fail", seen, seen + ramp
        if misses > first_k:
            break
        if misses + (planned - seen) < first_k:
            return "pass", seen, seen + ramp
    else:
        return ("fail" if misses >= robust_k else "pass"), seen, seen + ramp
    assert plan is not None
    fio, wall = seen, seen + ramp
    for _ in range(plan.looks):
        chain.skip(plan.gap_s + ramp)
        look = sum(chain.second() < 0.9 for _ in range(plan.windows))
        fio, wall = fio + plan.windows, wall + plan.gap_s + ramp + plan.windows
        if look < plan.critical:
            break
    else:
        return "fail", fio, wall
    chain.skip(ramp)
    wall += ramp
    while seen < planned:  # the rest of the check, the robust test alone
        seen, fio, wall = seen + 1, fio + 1, wall + 1
        misses += chain.second() < 0.9
        if misses > robust_k:
            return "fail", fio, wall
        if misses + (planned - seen) < robust_k:
            break
    return ("fail" if misses >= robust_k else "pass"), fio, wall


def looks(trials: int = 200_000, seed: int = 11) -> dict[str, Any]:
    """The default verdict (spells of up to 3 s tolerated) against compliant volumes whose
    misses come alone or in spells of 2 and 3 s, and against slow volumes."""
    rng = random.Random(seed)
    out: dict[str, Any] = {"alpha_per_check": ALPHA, "planned_s": PLANNED, "trials": trials,
                           "rows": []}
    for name, duty in (("io1/io2 (99.9 %)", 0.999), ("gp2/gp3/st1/sc1 (99 %)", 0.99)):
        p = 1.0 - duty
        for assumed in (1.0, 3.0):
            plan = evidence.plan_looks(PLANNED, p, ALPHA, assumed)
            bound = (plan.false_alarm + ALPHA / 2) if plan else ALPHA
            for spell in (1.0, 2.0, 3.0):
                fails = sum(_with_looks(_Chain(rng, p, spell, 1.0), duty, plan)[0] == "fail"
                            for _ in range(trials))
                out["rows"].append({
                    "volume": name, "assumed_spell_s": assumed,
                    "plan": plan.describe() if plan else "one test, no looks",
                    "case": f"at its SLA budget, spells of {spell:g} s",
                    "bound_per_check": bound if spell <= assumed else None,
                    "monte_carlo_fails": fails,
                    "fail_per_check": fails / trials,
                    "fail_per_suite_40": 1 - (1 - fails / trials) ** CHECKS})
            for level in (0.95, 0.85, 0.75):
                runs = [_with_looks(_Chain(rng, 0.0, 1.0, level), duty, plan)
                        for _ in range(trials // 100)]
                failed = [(fio, wall) for verdict, fio, wall in runs if verdict == "fail"]
                out["rows"].append({
                    "volume": name, "assumed_spell_s": assumed,
                    "case": f"at {level:.0%} of its cap",
                    "fail_rate": len(failed) / len(runs),
                    "median_fio_s_to_fail": statistics.median(f for f, _ in failed)
                    if failed else None,
                    "median_wall_s_to_fail": statistics.median(w for _, w in failed)
                    if failed else None})
    return out


# -- emulated suites ---------------------------------------------------------------------
EXPECTED = {1.0: "pass", 0.75: "fail", 2.0: "fail"}


def expected_outcome(factor: float, check: dict[str, Any]) -> str | None:
    """What a correct verdict is for ``check`` on a volume scaled by ``factor`` (None: the
    factor does not decide it, so it is not scored). Every claim holds at 1.0; a scaled
    volume fails its rate claims (CAP both ways, FLOOR below), while claims a uniform scale
    leaves true still hold: two twins scaled alike are equal (REL), a device property (TRIM)
    is unchanged, and a published "at least" is met twice over. Burst times (TIME) are not
    scored away from 1.0: the emulator scales rates, not buckets, so a burst lasts 1/factor
    as long as the model says only from a full bucket, and whether it stays within the
    check's tolerance depends on how much the run's earlier checks drained."""
    if factor == 1.0:
        return "pass"
    policy, unit = check.get("policy"), check.get("unit")
    if policy == "TIME":
        return None
    if policy == "REL" or unit == "bytes":
        return "pass"
    if policy == "FLOOR" and factor > 1.0:
        return "pass"
    return "fail"


def _suite_run(factor: float, report: Path) -> tuple[float, int]:
    argv = [sys.executable, "-m", "pytest", "suites", "--emulate", f"--emulate-factor={factor}",
            "-q", "-p", "no:cacheprovider", f"--ebsperf-report={report}"]
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=1800,
                          check=False)
    return time.monotonic() - start, proc.returncode


def score(reports: list[tuple[float, Path]]) -> dict[str, Any]:
    """Score suite reports ``(factor, results file)``: verdicts, wrong ones, fio time."""
    wrong: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    measured_s: dict[float, list[float]] = {f: [] for f in EXPECTED}
    for factor, report in reports:
        for check in json.loads(report.read_text())["checks"]:
            outcome = check["outcome"]
            if outcome in ("info",):
                continue
            expected = expected_outcome(factor, check)
            if expected is None:
                counts[f"{factor}:not scored ({check['policy']}): {outcome}"] += 1
                continue
            counts[f"{factor}:{outcome}"] += 1
            fio = check.get("fio") or {}
            if fio.get("measured_s") is not None:
                measured_s[factor].append(float(fio["measured_s"]))
            if outcome != expected:
                wrong.append({"factor": factor, "claim": check["claim"], "what": check["what"],
                              "outcome": outcome, "message": check["message"][:400]})
    total = sum(n for key, n in counts.items() if "not scored" not in key)
    return {"reports": len(reports), "verdicts": total, "wrong": len(wrong),
            "by_outcome": dict(sorted(counts.items())), "wrong_verdicts": wrong,
            "median_fio_s_per_check": {f: statistics.median(v) if v else None
                                       for f, v in measured_s.items()}}


def kept(directory: Path) -> list[tuple[float, Path]]:
    """The reports a run kept in ``directory`` (``r<round>-<factor>.json``)."""
    return [(float(path.stem.split("-", 1)[1]), path)
            for path in sorted(directory.glob("r*-*.json"))]


def emulated(rounds: int = 2) -> dict[str, Any]:
    walls: dict[float, list[float]] = {f: [] for f in EXPECTED}
    keep = os.environ.get("EBSPERF_BENCH_KEEP")  # a directory to keep each round's report in
    with tempfile.TemporaryDirectory() as tmp:
        reports = []
        for round_ in range(rounds):
            for factor in EXPECTED:
                report = Path(keep or tmp) / f"r{round_}-{factor}.json"
                wall, _ = _suite_run(factor, report)
                walls[factor].append(wall)
                reports.append((factor, report))
                print(f"round {round_ + 1}/{rounds} factor {factor}: {wall:.0f} s",
                      file=sys.stderr, flush=True)
        result = score(reports)
    return {"rounds": rounds, **result,
            "suite_wall_s": {f: [round(w, 1) for w in v] for f, v in walls.items()}}


# -- a kernel-throttled loop device given as --device ---------------------------------------
def device(rate: int = 2000) -> dict[str, Any]:
    from pytest_ebsperf.emulate import EmulatedDevice

    rows = {}
    for factor in (1.0, 0.75):
        with EmulatedDevice(size_bytes=512 * 1024 ** 2, iops=rate * factor,
                            bps=rate * factor * 256 * 1024) as dev, \
                tempfile.TemporaryDirectory() as tmp:
            dev.allocate()
            report = Path(tmp) / "r.json"
            # fio must run inside the device's throttle: run pytest itself in its cgroup
            argv = dev.argv_prefix() + [
                sys.executable, "-m", "pytest", "suites/io1", f"--device={dev.path}",
                "--volume-type=io1", "--volume-size=100", f"--volume-iops={rate}",
                # libaio: io_uring splits large I/O into more bios, which blk-throttle
                # charges (the emulator does the same for its own volumes)
                "--ebsperf-engine=libaio", "-q", "-p", "no:cacheprovider",
                f"--ebsperf-report={report}", "-k", "not write and not mixed"]
            start = time.monotonic()
            subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=1800,
                           check=False)
            wall = time.monotonic() - start
            checks = json.loads(report.read_text())["checks"]
            rows[factor] = {"wall_s": round(wall, 1),
                            "outcomes": [c["outcome"] for c in checks],
                            "measured_s": [c["fio"].get("measured_s") for c in checks]}
    return rows


# -- the regime matrix: rates, latency, jobs, factors, misses on real fio --------------------
IO1_READ = ("suites/io1/test_io1.py::"
            "test_random_read_holds_provisioned_iops_999_percent_of_seconds")
MATRIX_RATES = (500, 4_000, 25_000)  # 25,000: the most the latency-bearing emulator carries
MATRIX_LATENCIES = (None, 0.5, 1.0)
MATRIX_FACTORS = (1.0, 0.75, 2.0)


def _cell(rate: int, latency: float | None, factor: float, *extra: str,
          runtime: float = 10.0) -> dict[str, Any]:
    size = max(100, -(-rate // 50))  # io1: 50 IOPS per GiB
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        argv = [sys.executable, "-m", "pytest", IO1_READ, "--emulate", "--volume-type=io1",
                f"--volume-size={size}", f"--volume-iops={rate}",
                f"--emulate-latency={latency if latency else 'none'}",
                f"--emulate-factor={factor}", f"--ebsperf-runtime={runtime:g}", "-q",
                "-p", "no:cacheprovider", f"--ebsperf-report={report}", *extra]
        start = time.monotonic()
        subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900,
                       check=False)
        wall = time.monotonic() - start
        if not report.exists():
            return {"outcome": "no report", "wall_s": round(wall, 1)}
        check = json.loads(report.read_text())["checks"][0]
    looks = check["details"].get("looks") or []
    fio_s = (check["fio"].get("measured_s") or 0.0) + sum(x["seconds"] for x in looks)
    expected = "pass" if factor == 1.0 else "fail"
    return {"rate": rate, "latency_ms": latency, "factor": factor, "extra": " ".join(extra),
            "outcome": check["outcome"], "expected": expected,
            "wrong": check["outcome"] not in (expected, "inconclusive"),
            "workload": check["workload"], "measured": check["measured"].get("value"),
            "fio_s": round(fio_s, 1), "wall_s": round(wall, 1), "looks": len(looks)}


def matrix() -> dict[str, Any]:
    """The io1 random-read check over rates x latencies x factors with the planned jobs,
    then jobs forced to 1, 4 and 16, then misses at the SLA budget in 3 s spells."""
    rows = [_cell(rate, latency, factor) for rate in MATRIX_RATES
            for latency in MATRIX_LATENCIES for factor in MATRIX_FACTORS]
    rows += [_cell(4_000, 0.5, factor, f"--ebsperf-numjobs={jobs}")
             for jobs in (1, 4, 16) for factor in (1.0, 0.75)]
    rows += [_cell(4_000, 0.5, 1.0, "--emulate-misses=0.001,3", runtime=30.0)
             for _ in range(3)]
    skipped = [("st1/sc1 at 5 ms: not in this matrix (their checks are throughput-bound and "
                "take a credit bucket; bench_credits.py covers them)"),
               ("rates above 25,000 IOPS with latency: beyond what the FUSE daemon carries "
                "on this 2-CPU machine (docs/benchmarks.md, emulated latency)")]
    healthy = [r for r in rows if r.get("expected") == "pass"]
    failing = [r for r in rows if r.get("factor") == 0.75 and r.get("outcome") == "fail"]
    return {"rows": rows, "skipped": skipped,
            "wrong": sum(1 for r in rows if r.get("wrong")),
            "healthy_inconclusive": sum(1 for r in healthy if r["outcome"] == "inconclusive"),
            "healthy": len(healthy),
            "median_fio_s_to_fail_at_075": statistics.median(r["fio_s"] for r in failing)
            if failing else None}


# -- the interval-log reader ---------------------------------------------------------------
def logs(jobs: int = 16, windows: int = 86_400) -> dict[str, Any]:
    from pytest_ebsperf.fio.logs import build_series

    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, list[Path]] = {"iops": [], "bw": [], "clat": []}
        for kind, value in (("iops", 2000), ("bw", 32000), ("clat", 500000)):
            for job in range(1, jobs + 1):
                path = Path(tmp) / f"fio_{kind}.{job}.log"
                with open(path, "w") as handle:
                    handle.writelines(f"{i * 1000 - 1}, {value}, 0, 0, 0\n" for i in range(1, windows + 1))
                paths[kind].append(path)
        lines = sum(1 for kind in paths for _ in paths[kind]) * windows
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.monotonic()
        with contextlib.ExitStack() as stack:
            handles = {kind: [stack.enter_context(open(p)) for p in ps]
                       for kind, ps in paths.items()}
            series = build_series(handles, runtime_ms=windows * 1000)
        wall = time.monotonic() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"lines": lines, "windows": len(series["total_iops"]), "wall_s": round(wall, 1),
            "peak_rss_mib": round(peak / 1024, 1),
            "growth_mib": round((peak - before) / 1024, 1)}


def main(argv: list[str]) -> None:
    part = argv[1] if len(argv) > 1 else "simulation"
    if part == "simulation":
        result: Any = simulation()
    elif part == "matrix":
        result = matrix()
    elif part == "looks":
        result = looks(int(argv[2]) if len(argv) > 2 else 200_000)
    elif part == "emulated":
        result = emulated(int(argv[2]) if len(argv) > 2 else 2)
    elif part == "score":  # the reports an emulated run kept (EBSPERF_BENCH_KEEP)
        result = score(kept(Path(argv[2])))
    elif part == "device":
        result = device()
    elif part == "logs":
        result = logs()
    else:
        raise SystemExit(f"unknown part {part!r}: simulation, emulated, device or logs")
    print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main(sys.argv)
