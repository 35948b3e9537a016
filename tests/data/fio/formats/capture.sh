#!/usr/bin/env bash
# The same fio runs written in fio's three output forms at once (normal, terse, JSON), for
# the test that all three read alike. Made with fio 3.33 (Debian) on a file on this machine's
# disk; rerun to make them again.
set -euo pipefail
cd "$(dirname "$0")"
file=$(mktemp /var/tmp/ebsperf-formats.XXXXXX)
trap 'rm -f "$file"' EXIT
run() {  # name, fio options...
  local name=$1
  shift
  fio --name="$name" --filename="$file" --size=64M --direct=1 --ioengine=libaio \
      --runtime=3 --time_based "$@" --output-format=normal,terse,json --output="$name.txt"
}
run randrw_gr --rw=randrw --rwmixread=70 --bs=16k --iodepth=4 --numjobs=2 --group_reporting
run randread_jobs --rw=randread --bs=4k --iodepth=8 --numjobs=2
run seqwrite_rate --rw=write --bs=1m --iodepth=2 --rate_iops=40
# rates in bits (unit_base=1: BW=2063Mibit/s (2163Mbit/s))
run randread_bits --rw=randread --bs=16k --iodepth=4 --unit_base=1
