#!/usr/bin/env bash
# The project's own tests: unit tests, pytester tests of the plugin, end-to-end runs of real
# fio on kernel-throttled loop devices (those need root and skip with a reason without it).
#
# Two passes: the tests that share the machine run side by side on pytest-xdist workers
# (EBSPERF_TEST_WORKERS, default 4); then the tests marked `alone` (they time rates or
# latencies to a few percent) run one after another with nothing beside them. A test that
# fails is run once more (pytest-rerunfailures), alone: a failure that repeats is reported as
# the test's; one that does not shows as a rerun in the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
PY=${PYTHON:-python3}
status=0
for pass in shared alone; do
  if [ "$pass" = shared ]; then
    args=(-m "not alone" -n "${EBSPERF_TEST_WORKERS:-4}")
  else
    args=(-m alone)
  fi
  echo "pytest-ebsperf tests: the tests that $([ "$pass" = shared ] && echo "share the machine" || echo "run alone")"
  rc=0
  "$PY" -m pytest tests "${args[@]}" --reruns 1 "$@" || rc=$?
  # 5: nothing of this pass was selected (a path or -k given to this script)
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ] && [ "$status" -eq 0 ]; then
    status=$rc
  fi
done
exit "$status"
