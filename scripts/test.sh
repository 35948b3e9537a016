#!/usr/bin/env bash
# The project's own tests: unit tests, pytester tests of the plugin, end-to-end runs of real
# fio on kernel-throttled loop devices (those need root and skip with a reason without it).
#
# In passes, so that no test waits for the machine (tests/conftest.py):
#  1. the tests that share the machine, side by side on pytest-xdist workers
#     (EBSPERF_TEST_WORKERS, default 4);
#  2. the tests marked `alone` (they time rates or latencies to a few percent) one after
#     another with nothing beside them, and every test that failed in pass 1, tried again
#     with no neighbours;
#  3. only if pass 2 had failures: those tests once more. A test that fails twice in a row
#     alone fails the run; one that passes on its second try is named in the log above.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
PY=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ebsperf-tests.XXXXXX")
closing() {  # the last lines of the log: what failed in which pass, and why
  local rc=$? name
  for name in shared alone again; do
    if [ -s "$work/$name.why" ]; then
      echo "pytest-ebsperf tests: failed in pass '$name':"
      sort -u "$work/$name.why" | cut -c1-900 | sed 's/^/  /'
    fi
  done
  rm -rf "$work"
  exit "$rc"
}
trap closing EXIT

run_pass() {  # name, retry file, failed file, pytest arguments...
  local name=$1 retry=$2 failed=$3
  shift 3
  local rc=0
  EBSPERF_TESTS_PASS=$name EBSPERF_TESTS_RETRY=$retry EBSPERF_TESTS_FAILED=$failed \
    "$PY" -m pytest "$@" || rc=$?  # setup.cfg: testpaths = tests
  return "$rc"
}

said() {  # failed file, what happens next
  if [ -s "$1" ]; then
    echo "pytest-ebsperf tests: $(sort -u "$1" | wc -l) test(s) failed; $2:"
    sort -u "$1" | sed 's/^/  /'
  fi
}

echo "pytest-ebsperf tests, pass 1: the tests that share the machine"
rc=0
run_pass shared /dev/null "$work/shared" -n "${EBSPERF_TEST_WORKERS:-4}" "$@" || rc=$?
# 0 passed, 1 some failed (tried again below), 5 nothing selected; anything else stops here
case "$rc" in 0|1|5) ;; *) exit "$rc" ;; esac
said "$work/shared" "pass 2 runs them again, alone"

echo "pytest-ebsperf tests, pass 2: the tests that run alone"
rc=0
run_pass alone "$work/shared" "$work/alone" "$@" || rc=$?
case "$rc" in 0|5) exit 0 ;; 1) ;; *) exit "$rc" ;; esac
[ -s "$work/alone" ] || exit 1  # a failure that is no test's (a collection error)
said "$work/alone" "pass 3 runs them once more; a second failure in a row fails the run"

echo "pytest-ebsperf tests, pass 3: the tests that failed alone, once more"
rc=0
run_pass again "$work/alone" "$work/again" "$@" || rc=$?
[ "$rc" -eq 5 ] && rc=1  # the tests that failed were not found again
exit "$rc"
