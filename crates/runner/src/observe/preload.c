/*
 * ralph-gate's in-process observer, loaded into every dynamically linked program of an
 * observed run through LD_PRELOAD. It stands in for the C library's most frequent path
 * calls (open, stat, access, readlink, mkdir, rename and their *at forms): each call's
 * path, made absolute, is appended to a memory ring the run's tracer reads when the run is
 * over, and the call is then made with the run's key in the sixth argument register, which
 * the run's seccomp filter lets through without stopping the process. A stop costs two
 * context switches; an append costs none.
 *
 * Nothing here can make the record smaller than the tracer's: any call this file does not
 * make itself (the dynamic loader's, the C library's own internal ones, a static
 * program's, a call whose path has `..`, a call made when the ring is full or absent)
 * reaches the kernel without the key, and stops for the tracer as before.
 *
 * Written in C: it must run inside other programs before their own code, with no runtime
 * of its own, and define variadic C functions (open), which stable Rust cannot.
 */
#define _GNU_SOURCE
/* The C library declares these calls' paths never null; programs pass null all the same
 * (Rust's std probes `statx` so), and the checks for it must not be optimised away. */
#define __nonnull(params)
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The ring: a header, then records [u32 size][u8 kind][3 zero bytes][u32 pid][path bytes],
 * each 4-byte aligned: the process that made the call is part of what the run did.
 * A record's size is stored with PENDING set as soon as its place is taken, and without
 * it once its bytes are written: a reader meets either a whole record or a marked one. */
struct ring {
    uint64_t next;
    uint64_t cap;
    uint32_t overflow;
};
#define HEADER 64
#define PENDING 0x80000000u

static char *ring_base;
/* The size mapped here: a record never goes past it, whatever the shared header says. */
static uint64_t ring_len;
static uint64_t key;

#define KEYED(nr, a, b, c, d, e) syscall(nr, a, b, c, d, e, key)

__attribute__((constructor)) static void start(void) {
    const char *k = getenv("RALPH_GATE_OBSERVE_KEY");
    const char *at = getenv("RALPH_GATE_OBSERVE_RING");
    if (!k || !at)
        return;
    key = strtoull(k, NULL, 16);
    int saved = errno;
    long fd = KEYED(SYS_openat, AT_FDCWD, at, O_RDWR | O_CLOEXEC, 0, 0);
    if (fd >= 0) {
        struct stat st;
        if (fstat((int)fd, &st) == 0 && st.st_size > HEADER) {
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                           (int)fd, 0);
            if (m != MAP_FAILED) {
                ring_len = (uint64_t)st.st_size;
                ring_base = m;
            }
        }
        close((int)fd);
    }
    errno = saved;
}

/* Appends one record; 0 when it could not (the call then goes to the tracer). */
static int append(char kind, const char *path, size_t n) {
    struct ring *r = (struct ring *)ring_base;
    if (!r || n > 65536)
        return 0;
    uint64_t size = (12 + n + 3) & ~(uint64_t)3;
    /* Not cached: a vfork child shares this memory. */
    uint32_t pid = (uint32_t)syscall(SYS_getpid);
    uint64_t off = __atomic_fetch_add(&r->next, size, __ATOMIC_RELAXED);
    if (off + size > r->cap || off + size > ring_len || off < HEADER) {
        __atomic_store_n(&r->overflow, 1, __ATOMIC_RELAXED);
        return 0;
    }
    char *p = ring_base + off;
    __atomic_store_n((uint32_t *)p, (uint32_t)size | PENDING, __ATOMIC_RELAXED);
    /* Nothing below is stored before the mark: a process killed here leaves either zeros,
     * which the reader passes over, or a marked record it skips, never a torn one. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    p[4] = kind;
    memcpy(p + 8, &pid, 4);
    memcpy(p + 12, path, n);
    __atomic_store_n((uint32_t *)p, (uint32_t)size, __ATOMIC_RELEASE);
    return 1;
}

/* Whether `p` may go through one of the kernel's links to a process's files
 * (`/proc/self/cwd/x`, `/proc/<pid>/root/...`, `/proc/self/fd/3`, `/dev/fd/3`): `self` here
 * is the program, and only the tracer, while the call waits, can name the file it reaches.
 * Wider than the links themselves: a call sent to the tracer is only slower. */
static int through_proc_link(const char *p) {
    static const char *const links[] = {"/cwd", "/root", "/fd/", "/exe", "/task/", "/map_files/"};
    if (!strncmp(p, "/dev/fd/", 8))
        return 1;
    if (strncmp(p, "/proc/", 6))
        return 0;
    for (size_t i = 0; i < sizeof links / sizeof *links; i++)
        if (strstr(p + 5, links[i]))
            return 1;
    return 0;
}

/* `path` (relative to `dirfd`) as an absolute path in `out`; its length, or 0 when it
 * cannot be told here (a `..` or a link of /proc's the tracer resolves while the call
 * waits, an unreadable folder, a path too long). */
static size_t absolute(int dirfd, const char *path, char *out, size_t cap) {
    size_t n = 0;
    if (path[0] != '/') {
        long got;
        if (dirfd == AT_FDCWD) {
            got = syscall(SYS_getcwd, out, cap);
            if (got <= 0 || out[0] != '/')
                return 0;
            got = (long)strlen(out);
        } else {
            char link[32];
            char *q = link + sizeof link;
            *--q = 0;
            unsigned v = (unsigned)dirfd;
            do
                *--q = (char)('0' + v % 10);
            while (v /= 10);
            q -= 14;
            memcpy(q, "/proc/self/fd/", 14);
            got = KEYED(SYS_readlinkat, AT_FDCWD, q, out, cap - 1, 0);
            if (got <= 0 || out[0] != '/')
                return 0;
        }
        n = (size_t)got;
        if (path[0] != 0) {
            if (n > 1)
                out[n++] = '/';
            else
                n = 1;
        }
    }
    size_t len = strlen(path);
    if (n + len >= cap)
        return 0;
    memcpy(out + n, path, len);
    n += len;
    out[n] = 0;
    if (strstr(out, "/..") && (strstr(out, "/../") || (n >= 3 && !strcmp(out + n - 3, "/.."))))
        return 0;
    if (through_proc_link(out))
        return 0;
    return n;
}

/* Whether a call on `path` was recorded, so it may go to the kernel with the key. */
static int recorded(int dirfd, const char *path, char kind) {
    if (!ring_base || !path)
        return 0;
    char buf[4096];
    int saved = errno;
    size_t n = absolute(dirfd, path, buf, sizeof buf);
    int ok = n && append(kind, buf, n);
    errno = saved;
    return ok;
}

/* As the tracer's `open_access`: an open that can read what the file held reads it
 * (O_RDWR too, marked 'U': it may also update it); one that writes only, truncates or must
 * make a new file does not; one that may make the file reads it only when it is there
 * (asked with the key: not a call of the program's, not recorded). */
static char open_kind(int dirfd, const char *path, int flags) {
    int mode = flags & O_ACCMODE;
    if (flags & O_PATH)
        return 'P';
    if (mode == O_WRONLY || (flags & O_TRUNC) || (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
        return 'W';
    if (mode == O_RDONLY && !(flags & O_CREAT))
        return 'R';
    int saved = errno;
    long there = KEYED(SYS_faccessat, dirfd, path, F_OK, 0, 0);
    errno = saved;
    if (there != 0)
        return 'W';
    return mode == O_RDWR ? 'U' : 'R';
}

static int do_openat(int dirfd, const char *path, int flags, mode_t mode) {
    if (ring_base && path && recorded(dirfd, path, open_kind(dirfd, path, flags)))
        return (int)KEYED(SYS_openat, dirfd, path, flags, mode, 0);
    return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

static mode_t mode_of(int flags, va_list ap) {
    return (flags & (O_CREAT | __O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* The mode argument, present only when the flags create a file. */
#define TAKE_MODE(flags)                                                                   \
    va_list ap;                                                                            \
    va_start(ap, flags);                                                                   \
    mode_t mode = mode_of(flags, ap);                                                      \
    va_end(ap)

int open(const char *path, int flags, ...) {
    TAKE_MODE(flags);
    return do_openat(AT_FDCWD, path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    TAKE_MODE(flags);
    return do_openat(AT_FDCWD, path, flags, mode);
}
int openat(int dirfd, const char *path, int flags, ...) {
    TAKE_MODE(flags);
    return do_openat(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char *path, int flags, ...) {
    TAKE_MODE(flags);
    return do_openat(dirfd, path, flags, mode);
}
/* The fortified forms (_FORTIFY_SOURCE), which take no mode. */
int __open_2(const char *path, int flags) { return do_openat(AT_FDCWD, path, flags, 0); }
int __open64_2(const char *path, int flags) { return do_openat(AT_FDCWD, path, flags, 0); }
int __openat_2(int dirfd, const char *path, int flags) { return do_openat(dirfd, path, flags, 0); }
int __openat64_2(int dirfd, const char *path, int flags) {
    return do_openat(dirfd, path, flags, 0);
}
int creat(const char *path, mode_t mode) {
    return do_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
int creat64(const char *path, mode_t mode) {
    return do_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* On the 64-bit targets observed, `struct stat` and `struct stat64` are the kernel's one. */
static int do_fstatat(int dirfd, const char *path, void *buf, int flags) {
    /* An fstat (an empty path) names no file: the filter lets it through already. */
    if ((flags & AT_EMPTY_PATH) && path && !path[0])
        return (int)syscall(SYS_newfstatat, dirfd, path, buf, flags);
    if (recorded(dirfd, path, 'P'))
        return (int)KEYED(SYS_newfstatat, dirfd, path, buf, flags, 0);
    return (int)syscall(SYS_newfstatat, dirfd, path, buf, flags);
}

int stat(const char *path, struct stat *buf) { return do_fstatat(AT_FDCWD, path, buf, 0); }
int stat64(const char *path, struct stat64 *buf) { return do_fstatat(AT_FDCWD, path, buf, 0); }
int lstat(const char *path, struct stat *buf) {
    return do_fstatat(AT_FDCWD, path, buf, AT_SYMLINK_NOFOLLOW);
}
int lstat64(const char *path, struct stat64 *buf) {
    return do_fstatat(AT_FDCWD, path, buf, AT_SYMLINK_NOFOLLOW);
}
int fstatat(int dirfd, const char *path, struct stat *buf, int flags) {
    return do_fstatat(dirfd, path, buf, flags);
}
int fstatat64(int dirfd, const char *path, struct stat64 *buf, int flags) {
    return do_fstatat(dirfd, path, buf, flags);
}
/* The versioned forms programs built against a C library before 2.33 call. */
int __xstat(int ver, const char *path, struct stat *buf) {
    (void)ver;
    return do_fstatat(AT_FDCWD, path, buf, 0);
}
int __xstat64(int ver, const char *path, struct stat64 *buf) {
    (void)ver;
    return do_fstatat(AT_FDCWD, path, buf, 0);
}
int __lxstat(int ver, const char *path, struct stat *buf) {
    (void)ver;
    return do_fstatat(AT_FDCWD, path, buf, AT_SYMLINK_NOFOLLOW);
}
int __lxstat64(int ver, const char *path, struct stat64 *buf) {
    (void)ver;
    return do_fstatat(AT_FDCWD, path, buf, AT_SYMLINK_NOFOLLOW);
}
int __fxstatat(int ver, int dirfd, const char *path, struct stat *buf, int flags) {
    (void)ver;
    return do_fstatat(dirfd, path, buf, flags);
}
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *buf, int flags) {
    (void)ver;
    return do_fstatat(dirfd, path, buf, flags);
}

int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *buf) {
    if ((flags & AT_EMPTY_PATH) && path && !path[0])
        return (int)syscall(SYS_statx, dirfd, path, flags, mask, buf);
    if (recorded(dirfd, path, 'P'))
        return (int)KEYED(SYS_statx, dirfd, path, flags, mask, buf);
    return (int)syscall(SYS_statx, dirfd, path, flags, mask, buf);
}

int access(const char *path, int mode) {
    if (recorded(AT_FDCWD, path, 'P'))
        return (int)KEYED(SYS_faccessat, AT_FDCWD, path, mode, 0, 0);
    return (int)syscall(SYS_faccessat, AT_FDCWD, path, mode);
}

ssize_t readlink(const char *path, char *buf, size_t size) {
    if (recorded(AT_FDCWD, path, 'P'))
        return KEYED(SYS_readlinkat, AT_FDCWD, path, buf, size, 0);
    return syscall(SYS_readlinkat, AT_FDCWD, path, buf, size);
}
ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size) {
    if (recorded(dirfd, path, 'P'))
        return KEYED(SYS_readlinkat, dirfd, path, buf, size, 0);
    return syscall(SYS_readlinkat, dirfd, path, buf, size);
}

int mkdir(const char *path, mode_t mode) {
    if (recorded(AT_FDCWD, path, 'W'))
        return (int)KEYED(SYS_mkdirat, AT_FDCWD, path, mode, 0, 0);
    return (int)syscall(SYS_mkdirat, AT_FDCWD, path, mode);
}
int mkdirat(int dirfd, const char *path, mode_t mode) {
    if (recorded(dirfd, path, 'W'))
        return (int)KEYED(SYS_mkdirat, dirfd, path, mode, 0, 0);
    return (int)syscall(SYS_mkdirat, dirfd, path, mode);
}

/* A rename writes its destination (the source is not a read). */
static int do_rename(int olddir, const char *old, int newdir, const char *new, unsigned flags) {
    if (recorded(newdir, new, 'W'))
        return (int)KEYED(SYS_renameat2, olddir, old, newdir, new, flags);
    return (int)syscall(SYS_renameat2, olddir, old, newdir, new, flags);
}
int rename(const char *old, const char *new) {
    return do_rename(AT_FDCWD, old, AT_FDCWD, new, 0);
}
int renameat(int olddir, const char *old, int newdir, const char *new) {
    return do_rename(olddir, old, newdir, new, 0);
}
int renameat2(int olddir, const char *old, int newdir, const char *new, unsigned flags) {
    return do_rename(olddir, old, newdir, new, flags);
}

/* realpath, as the C library's own (glibc's canonicalize.c, step for step: the same calls
 * in the same order, the same errors, the same partial result), but making its readlink
 * calls through the one above: the C library's makes them internally, where no preload
 * can stand in, and each stopped for the tracer (ShellCheck resolves every file it
 * reads). */
#define MAX_LINKS 40

static int slash(char c) { return c == '/'; }

/* Whether what follows a component ("/", "/.", "/..") makes it have to be a folder. */
static int suffix_requires_dir_check(const char *end) {
    while (slash(*end)) {
        do
            end++;
        while (slash(*end));
        switch (*end++) {
        default:
            return 0;
        case '\0':
            return 1;
        case '.':
            break;
        }
        if (!*end || (*end == '.' && (!end[1] || slash(end[1]))))
            return 1;
    }
    return 0;
}

static int dir_check(char *dir, char *dirend) {
    strcpy(dirend, "/");
    int saved = errno;
    int ok = syscall(SYS_faccessat, AT_FDCWD, dir, F_OK) == 0;
    *dirend = '\0';
    if (ok)
        errno = saved;
    return ok;
}

char *realpath(const char *name, char *resolved) {
    char rname[2 * PATH_MAX], extra[2 * PATH_MAX], link[PATH_MAX];
    char *dest;
    const char *start, *end;
    int num_links = 0, failed = 1;
    size_t prefix_len = 0;
    if (name == NULL) {
        errno = EINVAL;
        return NULL;
    }
    if (name[0] == '\0') {
        errno = ENOENT;
        return NULL;
    }
    if (!slash(name[0])) {
        long got = syscall(SYS_getcwd, rname, sizeof rname);
        if (got <= 0 || rname[0] != '/') {
            if (got > 0)
                errno = ENOENT;
            return NULL;
        }
        dest = rname + strlen(rname);
        start = name;
    } else {
        dest = rname;
        *dest++ = '/';
        start = name;
    }
    for (; *start; start = end) {
        while (slash(*start))
            ++start;
        for (end = start; *end && !slash(*end); ++end)
            ;
        size_t startlen = (size_t)(end - start);
        if (startlen == 0)
            break;
        if (startlen == 1 && start[0] == '.')
            continue;
        if (startlen == 2 && start[0] == '.' && start[1] == '.') {
            if (dest > rname + prefix_len + 1)
                for (--dest; dest > rname && !slash(dest[-1]); --dest)
                    continue;
            continue;
        }
        if (!slash(dest[-1]))
            *dest++ = '/';
        if ((size_t)(dest - rname) + startlen + 2 > sizeof rname) {
            errno = ENAMETOOLONG;
            goto error;
        }
        memcpy(dest, start, startlen);
        dest += startlen;
        *dest = '\0';
        ssize_t n = readlink(rname, link, sizeof link - 1);
        if (n >= 0) {
            if (++num_links > MAX_LINKS) {
                errno = ELOOP;
                goto error;
            }
            link[n] = '\0';
            size_t len = strlen(end);
            if ((size_t)n + len + 1 > sizeof extra) {
                errno = ENAMETOOLONG;
                goto error;
            }
            memmove(&extra[n], end, len + 1);
            memcpy(extra, link, (size_t)n);
            end = extra;
            if (slash(link[0])) {
                dest = rname;
                *dest++ = '/';
                prefix_len = 0;
            } else if (dest > rname + prefix_len + 1) {
                for (--dest; dest > rname && !slash(dest[-1]); --dest)
                    continue;
            }
        } else if (!(suffix_requires_dir_check(end) ? dir_check(rname, dest) : errno == EINVAL)) {
            goto error;
        }
    }
    if (dest > rname + prefix_len + 1 && slash(dest[-1]))
        --dest;
    *dest = '\0';
    failed = 0;
error:
    *dest++ = '\0';
    if (resolved != NULL) {
        if ((!failed || errno == ENOENT || errno == EACCES) && dest - rname <= PATH_MAX) {
            strcpy(resolved, rname);
            return failed ? NULL : resolved;
        }
        if (!failed)
            errno = ENAMETOOLONG;
        return NULL;
    }
    return failed ? NULL : strdup(rname);
}

char *canonicalize_file_name(const char *name) { return realpath(name, NULL); }

char *__realpath_chk(const char *name, char *resolved, size_t resolvedlen) {
    if (resolvedlen < PATH_MAX)
        abort();
    return realpath(name, resolved);
}
