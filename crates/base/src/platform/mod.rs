//! Every edge of the operating system, in one place: process groups and killing a tree
//! ([`child`], [`signals`]), what the kernel says about a process ([`process`]), the coarse
//! clock and status-change times ([`clock`]), and here: paths as bytes, file modes and
//! executable bits, links, file stamps, the creation mask, whether a process lives, and the
//! folders that are the system's rather than anyone's files. Observation (ptrace, seccomp, a
//! preloaded library) is the runner's `observe::{trace, filter, preload}`, built on Linux
//! with the `observe` feature only.
//!
//! No other file names `libc`, `rustix`, `std::os::*` or `/proc`, nor compiles code for one
//! OS (`cfg(unix)`, `target_os`): `scripts/structure` fails CI when one does; others ask
//! [`WINDOWS`]. Only Unix is written: this machine cannot build for macOS or Windows, so a port
//! starts here, at the `compile_error!` below, and nowhere else.

#[cfg(not(unix))]
compile_error!(
    "ralph-gate's platform module is written for Unix only (issue 41): a port to this OS starts in crates/base/src/platform"
);

/// True when built for Windows: where a hook file must name another shell.
pub const WINDOWS: bool = cfg!(windows);

pub mod child;
pub mod clock;
pub mod process;
pub mod signals;

use std::ffi::{OsStr, OsString};
use std::fs::Metadata;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// A path git or the kernel gave as bytes (git speaks bytes on Unix).
pub fn os_str(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

/// Owned bytes as an OS string.
pub fn os_string(bytes: Vec<u8>) -> OsString {
    OsString::from_vec(bytes)
}

/// The mode bits of a file (its permissions with set-id and sticky bits, and its type).
pub fn mode(meta: &Metadata) -> u32 {
    meta.permissions().mode()
}

/// Sets `path`'s permission bits to `mode`.
pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Sets an open file's permission bits to `mode`.
pub fn set_file_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

/// True when anyone may execute the file (a program a tool would start).
pub fn is_executable(meta: &Metadata) -> bool {
    meta.is_file() && mode(meta) & 0o111 != 0
}

/// Makes a symbolic link at `at` that names `target`.
pub fn symlink(target: impl AsRef<Path>, at: impl AsRef<Path>) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

/// What a file's metadata says beyond its size: when its content and its status last
/// changed (nanoseconds since the epoch), its inode and its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamps {
    pub modified_ns: i128,
    pub changed_ns: i128,
    pub inode: u64,
    pub mode: u32,
}

/// The [`Stamps`] of `meta`.
pub fn stamps(meta: &Metadata) -> Stamps {
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    Stamps {
        modified_ns: ns(meta.mtime(), meta.mtime_nsec()),
        changed_ns: ns(meta.ctime(), meta.ctime_nsec()),
        inode: meta.ino(),
        mode: meta.mode(),
    }
}

/// The signal that ended a process, if one did.
pub fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

/// Makes `command`'s process lead a process group of its own, so that it and everything it
/// starts can be killed together.
pub fn own_group(command: &mut std::process::Command) -> &mut std::process::Command {
    std::os::unix::process::CommandExt::process_group(command, 0)
}

/// True while process `pid` exists (signal 0 delivers nothing and only checks).
pub fn alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The process's file-creation mask, read from `/proc/self/status` (Linux 4.7+). `umask(2)`
/// can only read it by setting it, which would race with other threads creating files, so
/// that is the fallback only.
pub fn umask() -> u32 {
    static MASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MASK.get_or_init(|| {
        let from_proc = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            });
        from_proc.unwrap_or_else(|| {
            // SAFETY: umask cannot fail and touches no memory.
            let old = unsafe { libc::umask(0o022) };
            unsafe { libc::umask(old) };
            // mode_t is u32 on Linux, u16 on macOS.
            #[allow(clippy::useless_conversion)]
            u32::from(old)
        })
    })
}

/// The columns of the terminal standard error writes to, when it is one.
pub fn terminal_columns() -> Option<usize> {
    rustix::termios::tcgetwinsize(std::io::stderr())
        .ok()
        .map(|ws| usize::from(ws.ws_col))
        .filter(|cols| *cols > 0)
}

/// The kernel's views and run-time folders: what a run finds there is never an input.
pub const KERNEL_DIRS: &[&str] = &["/proc", "/sys", "/dev", "/run"];

/// Folders of the system, not anyone's project: written by its package manager, as root, or
/// the kernel's views.
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/etc", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/opt", "/var", "/nix", "/snap",
    "/proc", "/sys", "/dev", "/run", "/boot",
];
