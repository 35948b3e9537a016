#!/usr/bin/env bash
# The main job: every suite against the volume under test. With EBSPERF_DEVICE set (and the
# volume options in EBSPERF_* variables or discovered on EC2) it checks that device;
# otherwise it checks emulated volumes (kernel-throttled loop devices; needs root).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# pytest keeps the suites' rewritten modules as bytecode (gitignored __pycache__), as Python
# does by default: where PYTHONDONTWRITEBYTECODE is set, each of the four workers rewrote them
# all again at its start (4.1 s to start the workers, 1.6 s with the bytecode kept).
unset PYTHONDONTWRITEBYTECODE
if [ -n "${EBSPERF_DEVICE:-}" ]; then
  exec "${PYTHON:-python3}" -m pytest suites "$@"
fi
# Emulated volumes are independent throttled loop devices: four pytest-xdist workers measure
# four of them at a time (a real device above is measured by one check at a time); a
# comparison of emulated twins measures beside them, a pair its emulators say the host held
# back measured again (pytest_ebsperf/checks/paired.py: held). The emulated volumes leave a 2-CPU
# host 65-85 % idle (waiting for a bucket, a service time or the host held alone), so the
# fourth worker fills idle time: docs/benchmarks.md has the runs on three, four and six.
# Every I/O of an emulated volume takes its type's documented service time
# (--emulate-latency=auto).
exec "${PYTHON:-python3}" -m pytest suites --emulate --volume-count=4 --emulate-latency=auto -n 4 "$@"
