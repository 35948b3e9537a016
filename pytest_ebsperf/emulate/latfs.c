/*
 * ebsperf-latfs: one file whose every read and write takes a volume's service time.
 *
 * A FUSE file system (libfuse3, low-level API) with a single file, "volume.img", whose bytes
 * live in a backing file (on the emulated volume's tmpfs). A loop device with direct I/O over
 * that file sends each of its requests here; each is carried out at once (pread/pwrite on the
 * backing file) and answered when its service time is up: a completion thread keeps the
 * answers in a heap ordered by due time and sleeps until the earliest (timer slack 1 ns).
 *
 * Service time: a log-normal draw with the given mean and shape (sigma), so most I/O is near
 * the mean with a tail to the right, less what the path itself costs, never below zero.
 * What the path costs is --overhead-us (measured by the caller with fio) until the caller
 * gives an anchor; from then on it is followed while the volume runs: whenever one I/O at a
 * time goes through (nothing else in flight), the daemon sees how late its completion
 * thread answered and how long after the answer the next request arrived (the answer's way
 * back to fio, fio's turn, the request's way here: the path, plus fio's own few µs). The
 * means of the last RING such pairs (means, as fio's figure is: on a busy host most I/Os
 * pass quickly and a few wait for a CPU for milliseconds), less the anchor (fio's own time
 * per I/O outside its completion latency, measured by the caller), are what is taken off:
 * a path measured in a slow spell of the host is not taken off for the rest of the run, nor
 * a fast one's kept through a slow spell. A gap longer than IDLE_US (or 4 x the mean) is an
 * idle pause (fio starting, a job ending), not the path. A job that pauses between its I/Os
 * itself (fio's thinktime, rate_iops at queue depth 1) is seen as a slow path: its I/Os are
 * served faster than set (at most 80 % of the mean is taken off).
 * The mean holds fio's mean completion latency at the set mean. Where the host takes a few
 * I/Os' path for milliseconds (a hypervisor's steal) that mean is taken off every I/O and
 * fio's median sinks below the set one; a check that judges medians asks the daemon to
 * follow the pairs' median instead ("median" after the anchor).
 * The parameters can be changed while it runs: write
 * "mean_us sigma overhead_us anchor_us [mean|median]\n" (anchor "nan": the fixed overhead)
 * to the file named by --control and send SIGUSR1;
 * SIGUSR2 writes "path_us samples taken_us\n" to the file named by --stats.
 *
 * Usage: ebsperf-latfs MOUNTPOINT --backing FILE --mean-us N [--sigma S] [--overhead-us N]
 *        [--control FILE] [--stats FILE] [--threads N]
 * It stays in the foreground; SIGTERM, SIGINT or SIGHUP unmount and end it.
 */
#define FUSE_USE_VERSION 34
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILE_INO 2
#define FILE_NAME "volume.img"
#define EARLY_NS 15000
#define RING 256
#define IDLE_US 10000.0 /* a gap longer than this (or 4 x the mean) is an idle pause */

struct pending {
    uint64_t due_ns;
    fuse_req_t req;
    int is_read;   /* a read is answered from the backing file at its due time */
    int is_status; /* answered with an error status only (fallocate: TRIM) */
    off_t off;
    size_t len;
    int err;       /* 0, or the errno to answer with */
};

static int backing_fd = -1;
static off_t file_size;
static const char *control_path, *stats_path;
static volatile double mean_us, sigma, overhead_us, anchor_us = NAN;
static volatile int follow_median; /* the path followed: the pairs' median, not their mean */
static volatile sig_atomic_t reload, report;

/* the path, followed (under the lock): pairs of (gap, lateness) in ns, one per I/O that went
 * through alone; path_ns is the sum of their means, -1 while none is known */
static uint32_t ring_gap[RING], ring_late[RING];
static size_t ring_len, ring_next, since_estimate;
static uint64_t last_answer_ns, last_late_ns;
static long inflight;
static double path_ns = -1;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static struct pending *heap;
static size_t heap_len, heap_cap;
static int stopping;
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double uniform(void) { /* xorshift64*, under the lock */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return ((rng_state * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

static double mean_of(const uint32_t *values, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += values[i];
    return sum / (double)n;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the path as followed (under the lock): the pairs' median sum of gap and lateness, or the
 * sum of their means */
static double path_of_ring(void) {
    static double sums[RING];
    if (!follow_median) return mean_of(ring_gap, ring_len) + mean_of(ring_late, ring_len);
    for (size_t i = 0; i < ring_len; i++) sums[i] = (double)ring_gap[i] + ring_late[i];
    qsort(sums, ring_len, sizeof(sums[0]), by_value);
    size_t h = ring_len / 2;
    return ring_len % 2 ? sums[h] : (sums[h - 1] + sums[h]) / 2;
}

/* a request arrived with nothing in flight (under the lock): one more pair, if the gap since
 * the last answer is the path's and not an idle pause */
static void seen_alone(uint64_t arrived) {
    if (!last_answer_ns || arrived <= last_answer_ns) return;
    uint64_t gap = arrived - last_answer_ns;
    double most = 4 * mean_us > IDLE_US ? 4 * mean_us : IDLE_US;
    if (gap > (uint64_t)(most * 1000.0)) return;
    ring_gap[ring_next] = (uint32_t)gap;
    ring_late[ring_next] = (uint32_t)(last_late_ns < UINT32_MAX ? last_late_ns : UINT32_MAX);
    ring_next = (ring_next + 1) % RING;
    if (ring_len < RING) ring_len++;
    if (ring_len >= RING / 4 && ++since_estimate >= 16) {
        since_estimate = 0;
        path_ns = path_of_ring();
    }
}

/* what is taken off each service time now (µs) */
static double taken_us(void) {
    double mean = mean_us, anchor = anchor_us;
    if (isnan(anchor) || path_ns < 0) return overhead_us;
    double t = path_ns / 1000.0 - anchor;
    if (t > 0.8 * mean) t = 0.8 * mean;
    return t > 0 ? t : 0;
}

static double service_us(void) {
    double mean = mean_us, s = sigma;
    if (mean <= 0) return 0;
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    double z = sqrt(-2.0 * log(u1)) * cos(2 * M_PI * u2);
    /* log-normal with this mean: mu = ln(mean) - s^2 / 2 */
    double t = exp(log(mean) - s * s / 2 + s * z) - taken_us();
    return t > 0 ? t : 0;
}

static void heap_push(struct pending p) {
    if (heap_len == heap_cap) {
        heap_cap = heap_cap ? heap_cap * 2 : 1024;
        heap = realloc(heap, heap_cap * sizeof(*heap));
    }
    size_t i = heap_len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (heap[parent].due_ns <= p.due_ns) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = p;
}

static struct pending heap_pop(void) {
    struct pending top = heap[0], last = heap[--heap_len];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= heap_len) break;
        if (child + 1 < heap_len && heap[child + 1].due_ns < heap[child].due_ns) child++;
        if (last.due_ns <= heap[child].due_ns) break;
        heap[i] = heap[child];
        i = child;
    }
    if (heap_len) heap[i] = last;
    return top;
}

static void answer(struct pending *p) {
    if (p->err || p->is_status) {
        fuse_reply_err(p->req, p->err);
    } else if (p->is_read) {
        /* straight from the backing file: spliced into the kernel where it can be, no copy
         * through this process (a 4 GiB/s volume would spend the CPUs copying) */
        struct fuse_bufvec buf = FUSE_BUFVEC_INIT(p->len);
        buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
        buf.buf[0].fd = backing_fd;
        buf.buf[0].pos = p->off;
        fuse_reply_data(p->req, &buf, FUSE_BUF_SPLICE_MOVE);
    } else {
        fuse_reply_write(p->req, p->len);
    }
}

static void defer(struct pending p, uint64_t arrived) {
    pthread_mutex_lock(&lock);
    if (inflight++ == 0) seen_alone(arrived);
    p.due_ns = arrived + (uint64_t)(service_us() * 1000.0);
    int first = heap_len == 0 || p.due_ns < heap[0].due_ns;
    heap_push(p);
    if (first) pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
}

static void *completer(void *arg) {
    (void)arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    pthread_mutex_lock(&lock);
    while (!stopping) {
        if (heap_len == 0) {
            pthread_cond_wait(&wake, &lock);
            continue;
        }
        uint64_t now = now_ns();
        /* answers due within EARLY_NS go out with this wake-up: one wake-up for several
         * answers leaves the CPU to the I/O path when many are in flight */
        if (heap[0].due_ns > now + EARLY_NS) {
            uint64_t due = heap[0].due_ns;
            struct timespec ts = {(time_t)(due / 1000000000ull), (long)(due % 1000000000ull)};
            pthread_cond_timedwait(&wake, &lock, &ts);
            continue;
        }
        struct pending p = heap_pop();
        if (--inflight == 0) {  /* the path is followed from here to the next arrival */
            last_answer_ns = now;
            last_late_ns = now > p.due_ns ? now - p.due_ns : 0;
        }
        pthread_mutex_unlock(&lock);
        answer(&p);
        pthread_mutex_lock(&lock);
    }
    while (heap_len) { /* unmounting: answer what is left at once */
        struct pending p = heap_pop();
        answer(&p);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void file_stat(struct stat *st) {
    memset(st, 0, sizeof(*st));
    st->st_ino = FILE_INO;
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    st->st_size = file_size;
    st->st_blksize = 4096;
    st->st_blocks = (file_size + 511) / 512;
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)fi;
    struct stat st;
    if (ino == FUSE_ROOT_ID) {
        memset(&st, 0, sizeof(st));
        st.st_ino = FUSE_ROOT_ID;
        st.st_mode = S_IFDIR | 0700;
        st.st_nlink = 2;
    } else if (ino == FILE_INO) {
        file_stat(&st);
    } else {
        fuse_reply_err(req, ENOENT);
        return;
    }
    fuse_reply_attr(req, &st, 3600.0);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
    if (parent != FUSE_ROOT_ID || strcmp(name, FILE_NAME) != 0) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    struct fuse_entry_param e;
    memset(&e, 0, sizeof(e));
    e.ino = FILE_INO;
    e.attr_timeout = e.entry_timeout = 3600.0;
    file_stat(&e.attr);
    fuse_reply_entry(req, &e);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi) {
    (void)fi;
    if (ino != FUSE_ROOT_ID) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    char buf[512];
    size_t used = 0;
    const char *names[] = {".", "..", FILE_NAME};
    fuse_ino_t inos[] = {FUSE_ROOT_ID, FUSE_ROOT_ID, FILE_INO};
    for (off_t i = off; i < 3; i++) {
        struct stat st = {.st_ino = inos[i], .st_mode = i == 2 ? S_IFREG : S_IFDIR};
        size_t need = fuse_add_direntry(req, buf + used, sizeof(buf) - used, names[i], &st, i + 1);
        if (need > sizeof(buf) - used || used + need > size) break;
        used += need;
    }
    fuse_reply_buf(req, buf, used);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    if (ino != FILE_INO) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    fi->direct_io = 1;  /* no page cache here: every request reaches us */
    fi->keep_cache = 0;
    fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi) {
    (void)ino; (void)fi;
    uint64_t arrived = now_ns();
    struct pending p = {.req = req, .is_read = 1, .off = off};
    if (off >= file_size) size = 0;
    else if ((off_t)(off + size) > file_size) size = (size_t)(file_size - off);
    p.len = size;
    defer(p, arrived);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off,
                     struct fuse_file_info *fi) {
    (void)ino; (void)fi;
    uint64_t arrived = now_ns();
    struct pending p = {.req = req};
    if ((off_t)(off + size) > file_size) {
        p.err = ENOSPC;
    } else {
        ssize_t done = pwrite(backing_fd, data, size, off);
        if (done < 0) p.err = errno;
        else p.len = (size_t)done;
    }
    defer(p, arrived);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t length,
                         struct fuse_file_info *fi) {
    (void)ino; (void)fi;
    uint64_t arrived = now_ns();
    /* TRIM (discard) on the loop device arrives as a hole punched in the file */
    struct pending p = {.req = req, .is_status = 1};
    if (fallocate(backing_fd, mode, off, length) != 0) p.err = errno;
    defer(p, arrived);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi) {
    (void)ino; (void)datasync; (void)fi;
    fuse_reply_err(req, 0);
}

static void op_init(void *userdata, struct fuse_conn_info *conn) {
    (void)userdata;
    if (conn->capable & FUSE_CAP_ASYNC_DIO) conn->want |= FUSE_CAP_ASYNC_DIO;
    if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
    if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
    if (conn->capable & FUSE_CAP_SPLICE_MOVE) conn->want |= FUSE_CAP_SPLICE_MOVE;
    conn->max_write = 1024 * 1024;
    conn->max_background = 1024;
    conn->congestion_threshold = 1024;
}

static void load_control(void) {
    FILE *f = control_path ? fopen(control_path, "r") : NULL;
    if (!f) return;
    double m, s, o, a = NAN;
    char anchor[32], statistic[16] = "mean";
    int got = fscanf(f, "%lf %lf %lf %31s %15s", &m, &s, &o, anchor, statistic);
    if (got >= 4 && strcmp(anchor, "nan") != 0) a = atof(anchor);
    if (got >= 3) {
        pthread_mutex_lock(&lock);
        int median = strcmp(statistic, "median") == 0;
        if (median != follow_median) { /* the pairs seen so far, summed the new way */
            follow_median = median;
            if (path_ns >= 0) path_ns = path_of_ring();
        }
        mean_us = m; sigma = s; overhead_us = o; anchor_us = a;
        pthread_mutex_unlock(&lock);
    }
    fclose(f);
}

static void write_stats(void) {
    if (!stats_path) return;
    char partial[4096];
    snprintf(partial, sizeof(partial), "%s.partial", stats_path);
    FILE *f = fopen(partial, "w");
    if (!f) return;
    pthread_mutex_lock(&lock);
    double path = path_ns >= 0 ? path_ns / 1000.0 : NAN, taken = taken_us();
    size_t n = ring_len;
    pthread_mutex_unlock(&lock);
    fprintf(f, "%.3f %zu %.3f\n", path, n, taken);
    fclose(f);
    rename(partial, stats_path);
}

static void on_usr1(int sig) { (void)sig; reload = 1; }
static void on_usr2(int sig) { (void)sig; report = 1; }

static void *reloader(void *arg) {
    (void)arg;
    for (;;) {
        if (reload) { reload = 0; load_control(); }
        if (report) { report = 0; write_stats(); }
        usleep(20000);
    }
    return NULL;
}

static const struct fuse_lowlevel_ops ops = {
    .init = op_init, .lookup = op_lookup, .getattr = op_getattr, .readdir = op_readdir,
    .open = op_open, .read = op_read, .write = op_write, .fsync = op_fsync,
    .fallocate = op_fallocate,
};

int main(int argc, char **argv) {
    const char *mountpoint = NULL, *backing = NULL;
    int threads = 4;
    mean_us = 0; sigma = 0.25; overhead_us = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--backing") && i + 1 < argc) backing = argv[++i];
        else if (!strcmp(argv[i], "--mean-us") && i + 1 < argc) mean_us = atof(argv[++i]);
        else if (!strcmp(argv[i], "--sigma") && i + 1 < argc) sigma = atof(argv[++i]);
        else if (!strcmp(argv[i], "--overhead-us") && i + 1 < argc) overhead_us = atof(argv[++i]);
        else if (!strcmp(argv[i], "--control") && i + 1 < argc) control_path = argv[++i];
        else if (!strcmp(argv[i], "--stats") && i + 1 < argc) stats_path = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!mountpoint) mountpoint = argv[i];
        else { fprintf(stderr, "ebsperf-latfs: unknown argument %s\n", argv[i]); return 2; }
    }
    if (!mountpoint || !backing) {
        fprintf(stderr, "usage: ebsperf-latfs MOUNTPOINT --backing FILE --mean-us N\n");
        return 2;
    }
    backing_fd = open(backing, O_RDWR | O_CLOEXEC);
    if (backing_fd < 0) { perror("ebsperf-latfs: backing file"); return 1; }
    struct stat st;
    fstat(backing_fd, &st);
    file_size = st.st_size;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &attr);
    rng_state ^= (uint64_t)getpid() * 0x2545F4914F6CDD1Dull;

    char *fargv[] = {argv[0], "-o", "fsname=ebsperf-latfs,subtype=ebsperf-latfs", NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
    if (!se) return 1;
    if (fuse_set_signal_handlers(se) != 0) return 1;
    signal(SIGUSR1, on_usr1);
    signal(SIGUSR2, on_usr2);
    if (fuse_session_mount(se, mountpoint) != 0) return 1;
    printf("ready\n");
    fflush(stdout);
    pthread_t done_thread, reload_thread;
    pthread_create(&done_thread, NULL, completer, NULL);
    pthread_create(&reload_thread, NULL, reloader, NULL);
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    fuse_loop_cfg_set_clone_fd(config, 0);
    fuse_loop_cfg_set_max_threads(config, (unsigned)threads);
    fuse_loop_cfg_set_idle_threads(config, (unsigned)threads);
    int rc = fuse_session_loop_mt(se, config);
    fuse_loop_cfg_destroy(config);
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(done_thread, NULL);
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    return rc < 0 ? 1 : 0;
}
