//! The in-process half of observation: `preload.c`, loaded through `LD_PRELOAD` into every
//! dynamically linked program of an observed run, records the C library's frequent path
//! calls in a memory ring ([`Ring`]) and makes them with the run's key, which the seccomp
//! filter lets through without a stop. The tracer still sees every other call (the loader's,
//! static programs', the C library's internal ones), so the record is never smaller than
//! the tracer's alone; it costs no context switch per call.

use super::Access;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// The shared object `build.rs` made of `preload.c`.
const LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ralph_gate_preload.so"));
/// The ring's size: a run that names more than this many bytes of paths has the rest traced.
const CAP: u64 = 64 << 20;
const HEADER: usize = 64;
const PENDING: u32 = 0x8000_0000;

pub const KEY_VAR: &str = "RALPH_GATE_OBSERVE_KEY";
pub const RING_VAR: &str = "RALPH_GATE_OBSERVE_RING";

/// The library, written once per ralph-gate process to a folder only this user can write
/// (`ralph-gate-<uid>` in the temporary folder, a temporary folder is never an input), under
/// a name its content decides; `None` where it cannot be (the run is then traced alone).
pub fn library() -> Option<&'static Path> {
    static AT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    AT.get_or_init(|| write_library(&std::env::temp_dir()).ok())
        .as_deref()
}

fn write_library(temp: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    if LIBRARY.is_empty() {
        return Err(std::io::ErrorKind::Unsupported.into());
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let dir = temp.join(format!("ralph-gate-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir)?;
    // Another user's folder, or one others may write: code from it would run in every run.
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o022 != 0 {
        return Err(std::io::ErrorKind::PermissionDenied.into());
    }
    let name = format!("preload-{}.so", &blake3::hash(LIBRARY).to_hex()[..16]);
    let path = dir.join(name);
    if std::fs::read(&path).ok().as_deref() != Some(LIBRARY) {
        ralph_base::atomic::write(&path, LIBRARY)?;
    }
    Ok(path)
}

/// A run's ring: a file in a folder of its own, mapped by every process of the run.
pub struct Ring {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Ring {
    /// In shared memory where the system has it (`/dev/shm`): a ring on a disk's file
    /// system would have its pages allocated, journaled and written back.
    pub fn new() -> std::io::Result<Self> {
        use std::io::{Seek, SeekFrom, Write};
        let shm = Path::new("/dev/shm");
        let builder = || {
            let mut b = tempfile::Builder::new();
            b.prefix("ralph-gate-ring");
            b
        };
        let dir = match builder().tempdir_in(shm) {
            Ok(dir) => dir,
            Err(_) => builder().tempdir()?,
        };
        let path = dir.path().join("ring");
        let mut file = std::fs::File::create(&path)?;
        file.set_len(CAP)?;
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(&(HEADER as u64).to_le_bytes());
        header[8..16].copy_from_slice(&CAP.to_le_bytes());
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header)?;
        Ok(Self { _dir: dir, path })
    }

    /// The variables that load the library into the run's programs with `key`, after the
    /// `LD_PRELOAD` and `ASAN_OPTIONS` the run would have had (`before`). A program built
    /// with GCC's AddressSanitizer refuses to start when another library is loaded before
    /// its runtime, unless told not to check; the check is all that option changes.
    pub fn vars(
        &self,
        library: &Path,
        key: u64,
        before: (Option<OsString>, Option<OsString>),
    ) -> Vec<(OsString, OsString)> {
        let after = |before: Option<OsString>, ours: &std::ffi::OsStr| {
            let mut value = before.filter(|b| !b.is_empty()).unwrap_or_default();
            if !value.is_empty() {
                value.push(":");
            }
            value.push(ours);
            value
        };
        vec![
            ("LD_PRELOAD".into(), after(before.0, library.as_os_str())),
            (
                "ASAN_OPTIONS".into(),
                after(before.1, "verify_asan_link_order=0".as_ref()),
            ),
            (KEY_VAR.into(), format!("{key:x}").into()),
            (RING_VAR.into(), self.path.clone().into_os_string()),
        ]
    }

    /// What the run's programs recorded; an error when the record has a gap.
    pub fn read(&self) -> Result<Vec<Call>, RingError> {
        let mut file = std::fs::File::open(&self.path).map_err(|_| RingError::Unreadable)?;
        let mut header = [0u8; HEADER];
        file.read_exact(&mut header)
            .map_err(|_| RingError::Unreadable)?;
        let next = u64::from_le_bytes(header[..8].try_into().unwrap_or_default());
        let end = next.min(CAP) as usize;
        let mut body = vec![0u8; end.saturating_sub(HEADER)];
        file.read_exact(&mut body)
            .map_err(|_| RingError::Unreadable)?;
        records(&body)
    }
}

/// Why what the run's programs recorded in process cannot be taken whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RingError {
    #[error("the in-process record could not be read")]
    Unreadable,
    #[error("the run's in-process record is malformed")]
    Malformed,
}

/// A fresh key for a run: what the library passes in the sixth argument register.
pub fn key() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new()
        .hash_one((std::process::id(), std::time::Instant::now()))
}

/// Pure: the records of a ring's body. A record still marked pending is skipped: its
/// process died before the call it stood for was made. So is an unwritten place (zeros,
/// a word at a time: a record's first word is never zero): a process killed between
/// taking it and marking it (the tracer kills what outlives the command, and a loaded
/// machine can stop a process anywhere), which never made its call; or the end of a ring
/// that filled up, whose later calls went to the tracer. Reading on past it keeps every
/// record after it: a gap once lost the whole ring's record of a run.
/// One call a program recorded: the path, how it used it, the process that made the call,
/// and whether it opened it read-write (it may have updated it: a tool's database).
pub type Call = (PathBuf, Access, i32, bool);

fn records(body: &[u8]) -> Result<Vec<Call>, RingError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 4 <= body.len() {
        let word = u32::from_le_bytes(body[at..at + 4].try_into().unwrap_or_default());
        if word == 0 {
            at += 4;
            continue;
        }
        let size = (word & !PENDING) as usize;
        if size < 12 || at + size > body.len() {
            return Err(RingError::Malformed);
        }
        if word & PENDING == 0 {
            let kind = body[at + 4];
            let pid = i32::from_le_bytes(body[at + 8..at + 12].try_into().unwrap_or_default());
            let end = at
                + 12
                + body[at + 12..at + size]
                    .iter()
                    .rposition(|b| *b != 0)
                    .map_or(0, |i| i + 1);
            let path = PathBuf::from(OsString::from_vec(body[at + 12..end].to_vec()));
            let access = match kind {
                b'P' => Access::Probe,
                b'R' | b'U' => Access::Read,
                b'W' => Access::Write,
                _ => return Err(RingError::Malformed),
            };
            out.push((path, access, pid, kind == b'U'));
        }
        at += size;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u8, path: &str, pending: bool) -> Vec<u8> {
        let size = (12 + path.len() + 3) & !3;
        let mut r = vec![0u8; size];
        let word = size as u32 | if pending { PENDING } else { 0 };
        r[..4].copy_from_slice(&word.to_le_bytes());
        r[4] = kind;
        r[8..12].copy_from_slice(&7i32.to_le_bytes());
        r[12..12 + path.len()].copy_from_slice(path.as_bytes());
        r
    }

    #[test]
    fn records_are_read_back_past_a_gap() {
        let mut body = record(b'R', "/p/a.py", false);
        body.extend(record(b'W', "/p/out", true));
        body.extend(record(b'P', "/p/abc", false));
        body.extend(record(b'U', "/p/db", false));
        let got = records(&body).unwrap();
        assert_eq!(
            got,
            vec![
                (PathBuf::from("/p/a.py"), Access::Read, 7, false),
                (PathBuf::from("/p/abc"), Access::Probe, 7, false),
                (PathBuf::from("/p/db"), Access::Read, 7, true)
            ]
        );
        let mut gap = body.clone();
        gap.extend([0u8; 12]);
        gap.extend(record(b'R', "/p/b", false));
        gap.extend([0u8; 4]);
        assert_eq!(
            records(&gap).unwrap()[3],
            (PathBuf::from("/p/b"), Access::Read, 7, false),
            "a place taken and never written is passed over"
        );
        assert_eq!(records(&[0u8; 64]).unwrap(), vec![], "an unwritten ring");
        body[4] = b'?';
        assert!(records(&body).is_err(), "an unknown kind is malformed");
        let mut torn = body.clone();
        torn.truncate(10);
        assert_eq!(records(&torn), Err(RingError::Malformed));
    }
}
