#!/usr/bin/env bash
# The project's own tests: unit tests, pytester tests of the plugin, end-to-end runs of real
# fio on kernel-throttled loop devices (those need root and skip with a reason without it).
#
# Three passes, each test in exactly one, each run once (a test that fails fails the run):
#  1. the tests marked `alone(machine=True)` (they count or sweep what the whole machine holds,
#     load every CPU themselves, or judge emulated twins to a few percent), one after another
#     with nothing beside them: in the lanes of pass 3 twins needed more pairs (S2-17's
#     identical twins 90 s, its twin three times as slow 108 s, against 31-56 and 44 s by
#     themselves; a comparison that decides in one stage runs in the lanes). First, because
#     it is one process that collects every test: it leaves the rewritten test modules in
#     the cache the next passes' workers read (below);
#  2. the tests that share the machine, side by side on pytest-xdist workers
#     (EBSPERF_TEST_WORKERS, default 6: the pass keeps the CPUs about 65 % busy, the rest of
#     its time being fio's planned seconds; 445-468 s on a 2-CPU machine against 468-517 s on
#     four, docs/benchmarks.md): every test not marked `alone`;
#  3. the other tests marked `alone`, never beside pass 2's CPU-bound tests: they time rates or
#     latencies to a few percent, or expect a FAIL that a busy CPU would make INCONCLUSIVE
#     ("host bound"). Three lanes (EBSPERF_TEST_LANES): three such tests side by side leave
#     the CPUs about half idle, their time being fio's planned seconds, and a latency claim
#     holds the host's measuring lock alone while it measures (tests/conftest.py). 240 s in three
#     lanes against 345 s in two on a quiet 2-CPU machine; four took no less (241 s): the
#     holds of the host alone set the pace there (docs/benchmarks.md).
# Every pass runs even when one before it fails; the log ends with what failed and why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
PY=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ebsperf-tests.XXXXXX")
closing() {  # the last lines of the log: what failed in which pass, and why
  local rc=$? name
  for name in machine shared alone; do
    if [ -s "$work/$name.why" ]; then
      echo "pytest-ebsperf tests: failed in pass '$name':"
      sort -u "$work/$name.why" | cut -c1-900 | sed 's/^/  /'
    fi
  done
  rm -rf "$work"
  exit "$rc"
}
trap closing EXIT
# pytest rewrites the asserts of every test module it collects (7-9 s of CPU for the whole
# tree on a 2-CPU machine) and keeps the result as bytecode, unless PYTHONDONTWRITEBYTECODE is
# set: then every xdist worker, every pass and every child pytest rewrote them all again
# (pass 2's six workers took 31 s to start, 15 s with the cache). Kept for this run only, in
# its own directory (not beside the sources or a test's files), removed with it.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$work/pycache"

run_pass() {  # name, pytest arguments...
  local name=$1
  shift
  # the slowest tests of each pass close its log: where the test command's time goes
  EBSPERF_TESTS_FAILED="$work/$name" "$PY" -m pytest --durations=20 "$@"  # testpaths = tests
}

ok() {  # pytest's status: 0 passed, 5 nothing selected (a -k that matches one pass only)
  [ "$1" -eq 0 ] || [ "$1" -eq 5 ]
}

echo "pytest-ebsperf tests, pass 1: the tests that hold the whole machine, one at a time"
machine=0
run_pass machine -n 0 -m "alone(machine=True)" "$@" || machine=$?
echo "pytest-ebsperf tests, pass 2: the tests that share the machine"
shared=0
run_pass shared -n "${EBSPERF_TEST_WORKERS:-6}" --dist worksteal -m "not alone" "$@" || shared=$?
echo "pytest-ebsperf tests, pass 3: the tests that run alone, in three lanes"
alone=0
EBSPERF_TEST_LANES=1 run_pass alone -n 3 --dist worksteal -m "alone and not alone(machine=True)" \
  "$@" || alone=$?
# green when no pass failed and at least one ran a test (a -k may select from one pass only)
worst=0
for rc in "$machine" "$shared" "$alone"; do
  ok "$rc" || { worst=$rc; break; }
done
[ "$worst" -ne 0 ] && exit "$worst"
for rc in "$machine" "$shared" "$alone"; do
  [ "$rc" -eq 0 ] && exit 0
done
exit 5
