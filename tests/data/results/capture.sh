#!/bin/sh
# Re-record the results files in this directory from real runs on emulated volumes.
#
#   sudo sh tests/data/results/capture.sh
#
# baseline.json is the volume as documented (io1 100 GiB, 4,000 IOPS); the candidates are the
# same volume made 3 % and 15 % slower with --emulate-factor. Needs root and fio.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"
run() {  # run NAME FACTOR
    python3 -m pytest -p no:cacheprovider -p no:benchmark -q --rootdir="$HERE" gate_suite.py --emulate \
        --ebsperf-runtime=5 --ebsperf-plots=none --emulate-factor="$2" \
        --ebsperf-report="$HERE/$1.json"
}
run baseline 1.0
run candidate-3pct 0.97
run candidate-15pct 0.85
