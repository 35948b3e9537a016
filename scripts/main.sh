#!/usr/bin/env bash
# The main job: every suite against the volume under test. With EBSPERF_DEVICE set (and the
# volume options in EBSPERF_* variables or discovered on EC2) it checks that device;
# otherwise it checks emulated volumes (kernel-throttled loop devices; needs root).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
if [ -n "${EBSPERF_DEVICE:-}" ]; then
  exec "${PYTHON:-python3}" -m pytest suites "$@"
fi
# Emulated volumes are independent throttled loop devices: three pytest-xdist workers measure
# three of them at a time (a real device above is measured by one check at a time); a
# comparison of two measurements holds the host alone. Every I/O of an emulated volume takes
# its type's documented service time (--emulate-latency=auto).
exec "${PYTHON:-python3}" -m pytest suites --emulate --volume-count=4 --emulate-latency=auto -n 3 "$@"
