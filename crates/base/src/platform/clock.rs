//! Time as file times are taken: the kernel's coarse realtime clock, in nanoseconds. A file
//! changed from an instant on has a change time at or after `coarse_now()` taken then; the
//! finer clock can read later than the time the next write stamps.

use std::path::Path;

/// Now on the coarse clock file times are taken from.
pub fn coarse_now() -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // The coarse clock is Linux's; elsewhere file times come from the realtime clock itself.
    #[cfg(target_os = "linux")]
    let clock = libc::CLOCK_REALTIME_COARSE;
    #[cfg(not(target_os = "linux"))]
    let clock = libc::CLOCK_REALTIME;
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// The time `path` last changed, content or metadata (the later of its mtime and ctime; the
/// ctime cannot be set back from user space), in nanoseconds. Follows links.
pub fn changed_at(path: &Path) -> Option<i128> {
    let s = super::stamps(&std::fs::metadata(path).ok()?);
    Some(s.modified_ns.max(s.changed_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_after_now_changed_at_or_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let before = coarse_now();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(changed_at(&dir.path().join("f")).unwrap() >= before);
        assert_eq!(changed_at(&dir.path().join("missing")), None);
    }
}
