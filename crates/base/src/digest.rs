//! Content digests of files, remembered by size, mtime, inode and ctime so an unchanged file
//! is not read again. The stamp only spares work: a digest is always of the content, so a
//! `touch` keeps a digest and a one-byte change, even one that keeps the size and the mtime
//! (a "racy" write within the same tick, or `touch -r` putting the old mtime back), changes
//! it: the kernel moves ctime on every write, and no one can set it back.

mod shared;

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// A file modified this recently may change again within the same mtime tick, so its digest
/// is never remembered (the "racy git" problem).
const RACY: Duration = Duration::from_secs(2);

/// What a digest lookup found.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Content {
    /// blake3 of the bytes, hex.
    Digest(String),
    /// No such file: a key may hold the absence of a file, which its creation then changes.
    Absent,
}

impl Content {
    pub fn as_str(&self) -> &str {
        match self {
            Content::Digest(d) => d,
            Content::Absent => "absent",
        }
    }
}

#[derive(Clone, PartialEq, Eq, Debug)]
struct Stamp {
    size: u64,
    mtime_ns: i128,
    inode: u64,
    ctime_ns: i128,
    hash: String,
}

/// Digests of files under `root` (by relative path) and elsewhere (by absolute path).
pub struct Digests {
    root: PathBuf,
    index: Option<PathBuf>,
    known: Mutex<(HashMap<Vec<u8>, Stamp>, bool)>,
    /// Stamps of files outside the root that the user's other projects learned.
    shared: Option<shared::Shared>,
}

impl Digests {
    /// `index` is where remembered stamps are loaded from and saved to (`None`: memory only).
    pub fn load(root: &Path, index: Option<PathBuf>) -> Self {
        let known = index
            .as_deref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|t| parse_index(&t))
            .unwrap_or_default();
        Self {
            root: root.to_path_buf(),
            index,
            known: Mutex::new((known, false)),
            shared: None,
        }
    }

    /// These digests, with the stamps of files outside the root remembered at `index` too
    /// (shared by the user's projects; `None`: this project's own only).
    #[must_use]
    pub fn sharing(mut self, index: Option<PathBuf>) -> Self {
        self.shared = index.map(shared::Shared::at);
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The content of `path` (relative to the root, or absolute). An unreadable file is an
    /// error, never a digest: the caller must not build a key on it.
    pub fn of(&self, path: &Path) -> std::io::Result<Content> {
        let full = self.root.join(path);
        let meta = match std::fs::metadata(&full) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Content::Absent),
            Err(e) => return Err(e),
        };
        if !meta.is_file() {
            return Err(std::io::Error::other(format!(
                "{} is not a regular file",
                full.display()
            )));
        }
        let stamps = crate::platform::stamps(&meta);
        let stamp = |hash: String| Stamp {
            size: meta.len(),
            mtime_ns: stamps.modified_ns,
            inode: stamps.inode,
            ctime_ns: stamps.changed_ns,
            hash,
        };
        let id = path.as_os_str().as_encoded_bytes().to_vec();
        let content = |hash: &str| with_mode(hash, stamps.mode);
        {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(k) = known.0.get(&id) {
                if *k == stamp(k.hash.clone()) {
                    return Ok(content(&k.hash));
                }
            }
        }
        // Outside the root, another project of this user may have read it already.
        let shared = self
            .shared
            .as_ref()
            .filter(|_| !full.starts_with(&self.root));
        if let Some(k) = shared.and_then(|s| s.get(&id)) {
            if k == stamp(k.hash.clone()) {
                let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
                known.0.insert(id, k.clone());
                known.1 = true;
                return Ok(content(&k.hash));
            }
        }
        let hash = hash_file(&full)?;
        // By ctime: it moves with every change, mtime can be set back.
        let changed = SystemTime::UNIX_EPOCH
            + Duration::from_nanos(u64::try_from(stamps.changed_ns.max(0)).unwrap_or(u64::MAX));
        let racy = SystemTime::now()
            .duration_since(changed)
            .ok()
            .is_none_or(|age| age < RACY);
        if !racy {
            if let Some(s) = shared {
                s.learn(id.clone(), stamp(hash.clone()));
            }
            let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            known.0.insert(id, stamp(hash.clone()));
            known.1 = true;
        }
        Ok(content(&hash))
    }

    /// Saves the remembered stamps if anything was learned. Concurrent runs may overwrite each
    /// other's index; it only spares work, it never decides a result.
    pub fn save(&self) {
        {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            if let (Some(path), true) = (&self.index, known.1) {
                let _ = crate::atomic::write(path, render_index(&known.0).as_bytes());
            }
        }
        if let Some(s) = &self.shared {
            s.save();
        }
    }
}

/// A file's content as an input: its bytes, and whether it may be executed (a test that runs
/// `tools/ping` fails once it loses its `x` bit; chmod changes no byte and no mtime).
fn with_mode(hash: &str, mode: u32) -> Content {
    if mode & 0o111 == 0 {
        Content::Digest(hash.to_string())
    } else {
        Content::Digest(format!("{hash}+x"))
    }
}

fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(std::fs::File::open(path)?)?;
    Ok(hasher.finalize().to_hex().to_string())
}

/// `size mtime_ns inode ctime_ns hash hex(path)`, one file a line; hex keeps any file name
/// on one line. A line of an older form does not parse and is dropped: the file is hashed.
fn render_index(known: &HashMap<Vec<u8>, Stamp>) -> String {
    let mut out = String::new();
    for (path, s) in known {
        let hex: String = path.iter().map(|b| format!("{b:02x}")).collect();
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{hex}\n",
            s.size, s.mtime_ns, s.inode, s.ctime_ns, s.hash
        ));
    }
    out
}

fn parse_index(text: &str) -> HashMap<Vec<u8>, Stamp> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split('\t');
            let stamp = Stamp {
                size: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
                inode: f.next()?.parse().ok()?,
                ctime_ns: f.next()?.parse().ok()?,
                hash: f.next()?.to_string(),
            };
            let hex = f.next()?;
            let path = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            Some((path, stamp))
        })
        .collect()
}

/// A file whose content a cache key or a tool's identity needs, but that cannot be had:
/// nothing that rests on it is stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("cannot read {}: {message}", path.display())]
    Read {
        path: PathBuf,
        kind: ErrorKind,
        message: String,
    },
    #[error("{} vanished", path.display())]
    Vanished { path: PathBuf },
}

impl Unreadable {
    /// Reading `path` failed with `e`, kept by kind.
    pub fn read(path: &Path, e: &std::io::Error) -> Self {
        Unreadable::Read {
            path: path.to_path_buf(),
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips_any_file_name() {
        let mut known = HashMap::new();
        known.insert(
            b"a\tb\nc\xff.py".to_vec(),
            Stamp {
                size: 3,
                mtime_ns: -5,
                inode: 9,
                ctime_ns: 7,
                hash: "ab".into(),
            },
        );
        let back = parse_index(&render_index(&known));
        assert!(back == known);
        assert!(
            parse_index("garbage\nmore\tgarbage\n").is_empty(),
            "a damaged index is ignored"
        );
    }

    #[test]
    fn a_file_outside_the_root_is_taken_from_the_shared_stamps_while_they_hold() {
        let (a, b, outside) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let shared = outside.path().join("cache/files.tsv");
        let lib = outside.path().join("libpython.so");
        std::fs::write(&lib, "the interpreter").unwrap();
        let inside = a.path().join("own.py");
        std::fs::write(&inside, "mine").unwrap();
        // Another project's run remembered both (the forged hashes show what is read).
        let stamp_of = |p: &Path| {
            let meta = std::fs::metadata(p).unwrap();
            let s = crate::platform::stamps(&meta);
            Stamp {
                size: meta.len(),
                mtime_ns: s.modified_ns,
                inode: s.inode,
                ctime_ns: s.changed_ns,
                hash: "remembered".into(),
            }
        };
        let mut known = HashMap::new();
        for p in [&lib, &inside] {
            known.insert(p.as_os_str().as_encoded_bytes().to_vec(), stamp_of(p));
        }
        std::fs::create_dir_all(shared.parent().unwrap()).unwrap();
        std::fs::write(&shared, render_index(&known)).unwrap();
        let d = Digests::load(a.path(), None).sharing(Some(shared.clone()));
        assert_eq!(d.of(&lib).unwrap(), Content::Digest("remembered".into()));
        assert_ne!(
            d.of(&inside).unwrap(),
            Content::Digest("remembered".into()),
            "a file of the project itself is never taken from the shared stamps"
        );
        // Changed since: read again, in every project.
        std::fs::write(&lib, "the interpreter, upgraded").unwrap();
        let fresh = Digests::load(b.path(), None).sharing(Some(shared.clone()));
        let now = fresh.of(&lib).unwrap();
        assert_ne!(now, Content::Digest("remembered".into()));
        assert_eq!(now, Digests::load(b.path(), None).of(&lib).unwrap());
        assert!(
            Digests::load(b.path(), None).of(&lib).is_ok(),
            "no shared index: the file is read"
        );
    }

    #[test]
    fn the_shared_stamps_keep_what_other_runs_wrote_meanwhile() {
        let (root, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let shared = outside.path().join("files.tsv");
        let file = |name: &str| {
            let p = outside.path().join(name);
            std::fs::write(&p, name).unwrap();
            p
        };
        let (x, y) = (file("x"), file("y"));
        // Old enough to be remembered: wait out the racy window once.
        std::thread::sleep(RACY + Duration::from_millis(100));
        let first = Digests::load(root.path(), None).sharing(Some(shared.clone()));
        let second = Digests::load(root.path(), None).sharing(Some(shared.clone()));
        first.of(&x).unwrap();
        second.of(&y).unwrap();
        first.save();
        second.save();
        let text = std::fs::read_to_string(&shared).unwrap();
        let names: Vec<Vec<u8>> = parse_index(&text).into_keys().collect();
        for p in [&x, &y] {
            assert!(
                names.contains(&p.as_os_str().as_encoded_bytes().to_vec()),
                "{text}"
            );
        }
    }

    #[test]
    fn absent_files_and_content_changes_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let d = Digests::load(dir.path(), None);
        assert_eq!(d.of(Path::new("x")).unwrap(), Content::Absent);
        std::fs::write(dir.path().join("x"), "one").unwrap();
        let one = d.of(Path::new("x")).unwrap();
        std::fs::write(dir.path().join("x"), "two").unwrap();
        assert_ne!(d.of(Path::new("x")).unwrap(), one);
        // Same size, same inode, the old mtime put back, on a file old enough for its
        // stamp to be remembered: ctime tells.
        let x = dir.path().join("x");
        let old = std::fs::metadata(&x).unwrap().modified().unwrap() - Duration::from_secs(60);
        let set_old = || {
            let f = std::fs::File::options().write(true).open(&x).unwrap();
            f.set_modified(old).unwrap();
        };
        set_old();
        std::thread::sleep(RACY + Duration::from_millis(100));
        let two = d.of(Path::new("x")).unwrap();
        std::fs::write(&x, "six").unwrap();
        set_old();
        assert_ne!(d.of(Path::new("x")).unwrap(), two, "the old mtime put back");
        std::fs::create_dir(dir.path().join("d")).unwrap();
        assert!(d.of(Path::new("d")).is_err(), "a folder has no digest");
    }
}
