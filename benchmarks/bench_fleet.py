"""The plugin's own cost per host in a fleet run, measured on 1, 2, 4 and 8 real hosts.

    sudo python3 benchmarks/bench_fleet.py [--counts 1,2,4,8] [--runtime 2]

Each host is sshd in a network namespace of its own with a throttled 2,000-IOPS "io1" disk
(tests/support/nshost.py, tests/checks/test_fleet.py). For each count the io1 suite's read check runs on
every host three ways: over ssh one host after another (testinfra ``--hosts``), over ssh with
pytest-xdist (``-n 4``, one worker per host at a time), and through fio's client/server mode
(``--ebsperf-fio-servers``, every host at once). The table gives the wall time of the pytest
run, the seconds fio spent measuring (from the results file), and the overhead per host:
(wall - measuring - the wall of the same pytest run on 0 checks) / hosts. Nothing leaves the
machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from nshost import namespace_hosts
from test_fleet import IO1_READ, Fleet


def pytest_run(args: list[str], cwd: Path) -> tuple[float, dict, str]:
    report = cwd / f"r{time.monotonic_ns()}.json"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args, f"--ebsperf-report={report}"], capture_output=True,
                          text=True, cwd=cwd, check=False, timeout=1800)
    wall = time.perf_counter() - started
    data = json.loads(report.read_text()) if report.exists() else {}
    return wall, data, done.stdout[-800:]


def measured_s(data: dict) -> float:
    return sum(float((c.get("fio") or {}).get("measured_s") or 0.0)
               for c in data.get("checks", []) if c.get("host") != "all")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="1,2,4,8")
    parser.add_argument("--runtime", type=float, default=2.0)
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="ebsperf-bench-fleet."))
    common = [IO1_READ, f"--ebsperf-runtime={args.runtime:g}", "--ebsperf-ramp=0.5"]
    for count in counts:
        with namespace_hosts(count) as hosts:
            fleet = Fleet(hosts, tmp, [1.0] * count)
            try:
                ssh = [f"--hosts={fleet.specs()}", f"--ssh-config={fleet.ssh_config}",
                       f"--ebsperf-hosts-file={fleet.hosts_file}"]
                idle, _, _ = pytest_run([*common, *ssh, "--collect-only"], tmp)
                servers = fleet.start_fio_servers()
                modes = {
                    "ssh, one host after another": [*common, *ssh],
                    "ssh, pytest-xdist -n 4": [*common, *ssh, "-n", "4"],
                    "fio client/server": [*common, f"--ebsperf-fio-servers={servers}",
                                          f"--ebsperf-hosts-file={fleet.server_file}"],
                }
                for mode, argv in modes.items():
                    wall, data, tail = pytest_run(argv, tmp)
                    outcomes = data.get("summary", {})
                    busy = measured_s(data)
                    over = (wall - busy - idle) / count
                    if mode == "fio client/server":
                        # all hosts measured at once: fio's time is one check's, not the sum
                        busy = max((float((c.get("fio") or {}).get("measured_s") or 0))
                                   for c in data.get("checks", [{}]) if c.get("host") != "all") \
                            if data.get("checks") else 0.0
                        over = (wall - busy - idle) / count
                    rows.append((count, mode, wall, busy, idle, over,
                                 outcomes.get("pass", 0), outcomes.get("fail", 0)))
                    print(f"{count} host(s), {mode}: wall {wall:.1f} s, fio measuring "
                          f"{busy:.1f} s, overhead {over:.2f} s per host, "
                          f"{outcomes}", flush=True)
                    if not outcomes.get("pass"):
                        print(tail)
            finally:
                fleet.close()
    print()
    print("| hosts | engine | wall (s) | fio measuring (s) | pytest with no check (s) | "
          "overhead per host (s) | checks passed |")
    print("|---|---|---|---|---|---|---|")
    for count, mode, wall, busy, idle, over, passed, failed in rows:
        print(f"| {count} | {mode} | {wall:.1f} | {busy:.1f} | {idle:.1f} | {over:.2f} | "
              f"{passed} of {passed + failed} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
