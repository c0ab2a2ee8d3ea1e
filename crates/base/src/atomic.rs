//! Crash-safe state files: write to a temporary file in the same folder, flush it to disk, then
//! rename it over the old one, so a reader sees the old or the new version, never a mix. Locks
//! are advisory `flock`s on separate lock files, held by the returned guard.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// Replaces `path` with `contents`. An existing file keeps its permissions; a new one gets
/// what `open(2)` would give it (0666 less the umask), not the temporary file's 0600.
pub fn write(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use crate::platform;
    let mode = match std::fs::metadata(path) {
        Ok(m) => platform::mode(&m) & 0o7777,
        Err(_) => 0o666 & !platform::umask(),
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".ralph-gate-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(contents)?;
    platform::set_file_mode(tmp.as_file(), mode)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// An exclusive lock, released when dropped.
pub struct Lock {
    _file: Option<File>,
}

impl Lock {
    /// A guard that holds nothing: for callers that go on without a lock they could not make.
    pub fn none() -> Self {
        Self { _file: None }
    }
}

pub fn lock(path: &Path) -> std::io::Result<Lock> {
    let file = lock_file(path)?;
    file.lock()?;
    Ok(Lock { _file: Some(file) })
}

/// The lock file itself (created with its folder); its content is never used.
fn lock_file(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// Takes the lock if it is free: `Ok(None)` when someone else holds it.
pub fn try_lock(path: &Path) -> std::io::Result<Option<Lock>> {
    let file = lock_file(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(Lock { _file: Some(file) })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Waits for the lock, until `deadline` at the latest: `Ok(None)` when it is still held
/// then by someone else.
pub fn lock_until(path: &Path, deadline: Option<Instant>) -> std::io::Result<Option<Lock>> {
    loop {
        match try_lock(path)? {
            Some(lock) => return Ok(Some(lock)),
            None if deadline.is_none_or(|d| Instant::now() < d) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            None => return Ok(None),
        }
    }
}

/// Appends one line under a lock, so concurrent writers never interleave or lose lines.
pub fn append_line(path: &Path, lock_path: &Path, line: &str) -> std::io::Result<()> {
    let _guard = lock(lock_path)?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let mut bytes = line.trim_end_matches('\n').as_bytes().to_vec();
    bytes.push(b'\n');
    f.write_all(&bytes)?;
    f.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replaces_whole_and_leaves_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/state.md");
        write(&p, b"one").unwrap();
        write(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("state.md")]);
    }

    #[test]
    fn concurrent_appends_lose_no_line() {
        let dir = tempfile::tempdir().unwrap();
        let (log, lock) = (dir.path().join("j.jsonl"), dir.path().join("j.lock"));
        std::thread::scope(|s| {
            for t in 0..8 {
                let (log, lock) = (&log, &lock);
                s.spawn(move || {
                    for i in 0..50 {
                        append_line(log, lock, &format!("{{\"t\":{t},\"i\":{i}}}")).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.lines().count(), 400);
        assert!(text
            .lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    }
}
