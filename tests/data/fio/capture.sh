#!/bin/sh
# Regenerate the golden fio outputs in this directory from real fio runs.
#
#   sudo sh tests/data/fio/capture.sh /dev/loopN
#
# /dev/loopN must be a scratch loop device of at least 256 MiB: the write cases overwrite it.
# Needs root, fio, setpriv and strace. The options mirror pytest_ebsperf.fio.jobs.fio_argv.
set -eu
DEV=$1
OUT=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

COMMON="--eta=never --filename=$DEV --direct=1 --allow_file_create=0 --randrepeat=0 \
 --time_based --group_reporting --percentile_list=1:5:10:50:90:99:99.9:99.99 --lat_percentiles=1"
LOGS="--log_avg_msec=1000"

job() {  # job NAME [fio options...]: JSON report to NAME.json, logs to NAME_*.log
    name=$1; shift
    # shellcheck disable=SC2086
    fio --output-format=json --output="$OUT/$name.json" --name="$name" $COMMON "$@" \
        --write_iops_log="$OUT/$name" --write_bw_log="$OUT/$name" --write_lat_log="$OUT/$name" $LOGS
    rm -f "$OUT/${name}"_lat.*.log "$OUT/${name}"_slat.*.log
}

job randread --readonly --rw=randread --norandommap --bs=4096 --ioengine=libaio --iodepth=8 \
    --numjobs=1 --runtime=3000ms --ramp_time=1000ms
job randwrite --rw=randwrite --norandommap --bs=4096 --ioengine=io_uring --iodepth=8 \
    --numjobs=1 --runtime=3000ms --ramp_time=1000ms
job randrw_70_30 --rw=randrw --rwmixread=70 --norandommap --bs=16384 --ioengine=libaio \
    --iodepth=4 --numjobs=2 --runtime=3000ms --ramp_time=1000ms
job seqread_1m --readonly --rw=read --bs=1048576 --ioengine=libaio --iodepth=4 --numjobs=1 \
    --runtime=3000ms
# Ramp longer than the run: shows that the logs restart when the ramp ends.
job ramp --readonly --rw=randread --norandommap --bs=4096 --ioengine=libaio --iodepth=4 \
    --numjobs=1 --runtime=3000ms --ramp_time=3000ms

# group_reporting off: one entry per job, one log per job.
# shellcheck disable=SC2086
fio --output-format=json --output="$OUT/randread_numjobs2_per_job.json" --eta=never \
    --name=perjob --filename="$DEV" --readonly --direct=1 --allow_file_create=0 --rw=randread \
    --norandommap --bs=4096 --ioengine=libaio --iodepth=4 --numjobs=2 --time_based \
    --runtime=3000ms --write_iops_log="$OUT/perjob" --write_bw_log="$OUT/perjob" \
    --write_lat_log="$OUT/perjob" $LOGS
rm -f "$OUT"/perjob_lat.*.log "$OUT"/perjob_slat.*.log

# json+ (histogram bins) for one short job.
fio --output-format=json+ --output="$OUT/jsonplus_randread.json" --eta=never --name=jsonplus \
    --filename="$DEV" --readonly --direct=1 --rw=randread --bs=4096 --ioengine=libaio \
    --iodepth=1 --number_ios=2000

# A note printed on stdout before the JSON (no --output).
fio --output-format=json --eta=never --name=note --filename="$DEV" --readonly --direct=1 \
    --rw=randread --bs=4096 --ioengine=psync --iodepth=8 --time_based --runtime=1 \
    > "$OUT/note_before_json.txt"

# SIGTERM after 2 s: the report file starts with "fio: terminating on signal 15".
fio --output-format=json --output="$OUT/sigterm_partial.txt" --eta=never --name=sig \
    --filename="$DEV" --readonly --direct=1 --rw=randread --bs=4096 --ioengine=libaio \
    --iodepth=4 --time_based --runtime=30 &
pid=$!
sleep 2
kill -TERM "$pid"
wait "$pid" || echo "sigterm_partial rc=$?" > "$OUT/sigterm_partial.rc"

# Permission denied: a device node with mode 000 and a root without CAP_DAC_OVERRIDE.
mknod -m 000 "$WORK/blk000" b "$(stat -c '%t' "$DEV" | xargs printf '%d')" \
    "$(stat -c '%T' "$DEV" | xargs printf '%d')"
setpriv --bounding-set=-dac_override,-dac_read_search --inh-caps=-dac_override,-dac_read_search \
    -- fio --output-format=json --eta=never --name=perm --filename="$WORK/blk000" --readonly \
    --rw=read --bs=4k --size=1M > "$OUT/permission_denied.stdout" \
    2> "$OUT/permission_denied.stderr" || true

# A mistyped path with allow_file_create=0, for a write job and for a --readonly job.
fio --output-format=json --eta=never --name=missing --filename=/dev/ebsperf_no_such_dev \
    --allow_file_create=0 --rw=write --bs=4k --size=1M \
    > "$OUT/file_creation_disallowed.stdout" 2> "$OUT/file_creation_disallowed.stderr" || true
fio --output-format=json --eta=never --name=missing --filename=/dev/ebsperf_no_such_dev \
    --allow_file_create=0 --readonly --rw=read --bs=4k --size=1M \
    > "$OUT/missing_readonly.stdout" 2> "$OUT/missing_readonly.stderr" || true

# O_DIRECT refused (EINVAL injected on open, as on filesystems without O_DIRECT).
strace -f -o /dev/null -P "$DEV" -e trace=openat -e inject=openat:error=EINVAL \
    fio --output-format=json --eta=never --name=odirect --filename="$DEV" --readonly --direct=1 \
    --rw=read --bs=4k --size=1M > "$OUT/odirect_einval.stdout" 2> "$OUT/odirect_einval.stderr" \
    || true

# Client/server mode on loopback: one client, then two (adds the "All clients" entry).
cat > client.fio <<JOB
[client]
filename=$DEV
allow_file_create=0
rw=randread
bs=4k
ioengine=libaio
iodepth=4
direct=1
time_based
runtime=1
numjobs=2
group_reporting
JOB
fio --server=ip:127.0.0.1,18765 > /dev/null 2>&1 &
s1=$!
fio --server=ip:127.0.0.1,18766 > /dev/null 2>&1 &
s2=$!
sleep 1
fio --output-format=json --client=ip:127.0.0.1,18765 client.fio > "$OUT/client_one.txt"
fio --output-format=json --client=ip:127.0.0.1,18765 client.fio \
    --client=ip:127.0.0.1,18766 client.fio > "$OUT/client_two.txt"
printf '[bad]\nfilename=%s\nreadonly\nrw=randread\n' "$DEV" > bad.fio
fio --output-format=json --client=ip:127.0.0.1,18765 bad.fio > "$OUT/client_bad_option.txt"
kill "$s1" "$s2"
wait "$s1" "$s2" || true
