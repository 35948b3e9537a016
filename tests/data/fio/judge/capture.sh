#!/bin/sh
# Regenerate the fio outputs the offline judge is tested on (tests/verdicts/test_judge_cli.py): reports
# and logs written the ways other people run fio. Needs fio; no root (regular files).
#
#   sh tests/data/fio/judge/capture.sh
#
# Two fio servers listen on 127.0.0.1 and 127.0.0.2 (loopback) for the client/server case.
set -eu
OUT=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'kill $(cat "$WORK"/s1.pid "$WORK"/s2.pid 2>/dev/null) 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK"
truncate -s 256M a.img b.img
COMMON="--direct=1 --ioengine=libaio --time_based"

# rw=readwrite (fio's alias of rw) with 500 ms windows
fio --output-format=json --output="$OUT/readwrite_500ms.json" --name=rwalias --filename=a.img \
    $COMMON --rw=readwrite --bs=16k --iodepth=4 --runtime=4 --rate_iops=200 \
    --write_iops_log=half --write_bw_log=half --write_lat_log=half --log_avg_msec=500
# random reads logged in 500 ms windows and in 2 s windows
fio --output-format=json --output="$OUT/randread_500ms.json" --name=half --filename=a.img \
    $COMMON --rw=randread --bs=4k --iodepth=4 --runtime=5 --rate_iops=1000 \
    --write_iops_log=r500 --write_bw_log=r500 --write_lat_log=r500 --log_avg_msec=500
fio --output-format=json --output="$OUT/randread_2s.json" --name=two --filename=a.img \
    $COMMON --rw=randread --bs=4k --iodepth=4 --runtime=8 --rate_iops=1000 \
    --write_iops_log=r2s --write_bw_log=r2s --write_lat_log=r2s --log_avg_msec=2000
# every I/O logged (log_avg_msec unset)
fio --output-format=json --output="$OUT/randread_per_io.json" --name=perio --filename=a.img \
    $COMMON --rw=randread --bs=4k --iodepth=2 --runtime=4 --rate_iops=200 \
    --write_iops_log=rio --write_bw_log=rio --write_lat_log=rio
# two devices (files) in one report, one job each, no group_reporting
fio --output-format=json --output="$OUT/two_devices.json" $COMMON --rw=randread --bs=4k \
    --iodepth=4 --runtime=3 --write_iops_log=dev --write_bw_log=dev --write_lat_log=dev \
    --log_avg_msec=1000 --name=fast --filename=a.img --rate_iops=1000 \
    --name=slow --filename=b.img --rate_iops=600
# interrupted: SIGINT after 4 s of a 300 s run
fio --output-format=json --output="$OUT/interrupted.json" --name=intr --filename=a.img \
    $COMMON --rw=randread --bs=4k --iodepth=4 --runtime=300 --rate_iops=500 \
    --write_iops_log=intr --write_bw_log=intr --write_lat_log=intr --log_avg_msec=1000 &
sleep 4.2; pkill -INT -f "name=intr"; wait || true
# client/server: two fio servers, one job file, one report
fio --server=ip:127.0.0.1,18801 --daemonize="$WORK/s1.pid"
fio --server=ip:127.0.0.2,18802 --daemonize="$WORK/s2.pid"
sleep 1
cat > cs.fio <<JOB
[cs]
filename=$WORK/a.img
direct=1
rw=randread
bs=4k
ioengine=libaio
iodepth=4
time_based
runtime=3
rate_iops=300
write_iops_log=cs
write_bw_log=cs
write_lat_log=cs
log_avg_msec=1000
JOB
fio --output-format=json --output="$OUT/client_server_two_hosts.json" \
    --client=ip:127.0.0.1,18801 cs.fio --client=ip:127.0.0.2,18802 cs.fio
rm -f ./*_lat.*.log* ./*_slat.*.log*
cp ./*.log* "$OUT/"
# the logs' prefixes in the reports are relative (fio ran in $WORK): the judge finds them
# beside the report
