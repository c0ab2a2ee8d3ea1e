//! A remote store for stored results, shared by many machines, on an existing storage engine
//! through opendal (as sccache does): `redis://host:port/db`, `s3://bucket/prefix` (the usual
//! AWS variables; `AWS_ENDPOINT_URL` for an S3-compatible store), `http(s)://` for WebDAV,
//! `gha://` for the GitHub Actions cache. Entries are content-addressed by the cache key,
//! zstd-compressed, and carry a digest of themselves that every read verifies. A remote that
//! errs, stalls or returns something damaged is a miss with one warning, never a failure and
//! never a verdict: reads are time-boxed.

use super::Entry;
use opendal::layers::TimeoutLayer;
use ralph_base::env::Aws;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long a remote read or write may take before it counts as a miss.
const TIMEOUT: Duration = Duration::from_secs(3);
/// Bumped with the entry format.
const PREFIX: &str = "ralph-gate-v2";

/// Why a remote store cannot be used (credentials never in the message).
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("`{0}` is not a URL (redis://, s3://, http(s)://, gha://)")]
    NotAUrl(String),
    #[error("unknown remote cache scheme `{0}` (redis, s3, http, https, gha)")]
    Scheme(String),
    #[error("remote cache {0}: {1}")]
    Store(String, #[source] opendal::Error),
    #[error("remote cache: cannot start its runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

pub struct Remote {
    op: opendal::blocking::Operator,
    /// Kept alive for `op`, which runs on it.
    _runtime: tokio::runtime::Runtime,
    /// Where it is, for messages (no credentials: URLs from the environment may hold them).
    pub shown: String,
    pub write: bool,
    /// Set at the first trouble: the rest of this run does without the remote, so a store
    /// that stalls costs one timeout, not one per run.
    broken: AtomicBool,
}

impl Remote {
    /// The store `url` names, with the S3 settings of the environment. `write = false` reads
    /// only (agents' machines, say, while CI writes).
    pub fn open(url: &str, write: bool, aws: &Aws) -> Result<Self, RemoteError> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| RemoteError::NotAUrl(shown(url)))?;
        let op = operator(scheme, rest, aws)?
            .map(|op| {
                op.layer(
                    TimeoutLayer::new()
                        .with_timeout(TIMEOUT)
                        .with_io_timeout(TIMEOUT),
                )
            })
            .map_err(|e| RemoteError::Store(shown(url), e))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(RemoteError::Runtime)?;
        let op = {
            let _enter = runtime.enter();
            opendal::blocking::Operator::new(op).map_err(|e| RemoteError::Store(shown(url), e))?
        };
        Ok(Self {
            op,
            _runtime: runtime,
            shown: shown(url),
            write,
            broken: AtomicBool::new(false),
        })
    }

    fn path(key: &str) -> String {
        format!("{PREFIX}/{}/{key}", &key[..2.min(key.len())])
    }

    /// The entry stored under `key`, if the store has one that is whole and is that key's.
    pub fn get(&self, key: &str) -> Option<Entry> {
        if self.broken.load(Ordering::Acquire) {
            return None;
        }
        match self.op.read(&Self::path(key)) {
            Ok(buf) => match unseal(&buf.to_vec()).filter(|e| e.key == key) {
                Some(e) => Some(e),
                None => {
                    self.say("a stored entry is damaged or not the key's; it is ignored");
                    None
                }
            },
            Err(e) if e.kind() == opendal::ErrorKind::NotFound => None,
            Err(e) => {
                self.warn(&format!("cannot read: {e}"));
                None
            }
        }
    }

    pub fn put(&self, entry: &Entry) {
        if !self.write || self.broken.load(Ordering::Acquire) {
            return;
        }
        if let Err(e) = self.op.write(&Self::path(&entry.key), seal(entry)) {
            self.warn(&format!("cannot write: {e}"));
        }
    }

    /// The remote failed: said once, and not used again in this process.
    fn warn(&self, what: &str) {
        if !self.broken.swap(true, Ordering::AcqRel) {
            self.say(what);
        }
    }

    fn say(&self, what: &str) {
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "ralph-gate: remote cache {}: {what}; running locally",
                self.shown
            );
        }
    }
}

type Builder = opendal::Result<opendal::Operator>;

/// The storage engine a URL's scheme names, not yet time-boxed.
fn operator(scheme: &str, rest: &str, aws: &Aws) -> Result<Builder, RemoteError> {
    Ok(match scheme {
        "redis" | "rediss" => {
            let (endpoint, db) = match rest.rsplit_once('/') {
                Some((host, db)) if db.chars().all(|c| c.is_ascii_digit()) && !db.is_empty() => {
                    (format!("{scheme}://{host}"), db.parse().unwrap_or(0))
                }
                _ => (format!("{scheme}://{rest}"), 0),
            };
            opendal::Operator::new(
                opendal::services::Redis::default()
                    .endpoint(&endpoint)
                    .db(db),
            )
            .map(|b| b.finish())
        }
        "s3" => opendal::Operator::new(s3(rest, aws)).map(|b| b.finish()),
        "http" | "https" => {
            // The host is the endpoint; a path after it is the folder entries go in.
            let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
            opendal::Operator::new(
                opendal::services::Webdav::default()
                    .endpoint(&format!("{scheme}://{host}"))
                    .root(&format!("/{}", path.trim_matches('/'))),
            )
            .map(|b| b.finish())
        }
        "gha" => {
            opendal::Operator::new(opendal::services::Ghac::default().root(&format!("/{rest}")))
                .map(|b| b.finish())
        }
        other => return Err(RemoteError::Scheme(other.to_string())),
    })
}

/// `s3://bucket/prefix`, with the usual AWS variables.
fn s3(rest: &str, aws: &Aws) -> opendal::services::S3 {
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let mut b = opendal::services::S3::default()
        .bucket(bucket)
        .root(&format!("/{prefix}"))
        .region(aws.region.as_deref().unwrap_or("us-east-1"));
    if let Some(e) = &aws.endpoint {
        b = b.endpoint(e);
    }
    if let (Some(k), Some(s)) = (&aws.access_key_id, &aws.secret_access_key) {
        b = b.access_key_id(k).secret_access_key(s);
    }
    b
}

/// `url` without user information.
fn shown(url: &str) -> String {
    match (url.split_once("://"), url.find('@')) {
        (Some((scheme, rest)), Some(_)) => {
            let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
            format!("{scheme}://***@{host}")
        }
        _ => url.to_string(),
    }
}

/// An entry as stored: the blake3 digest of the compressed body, then the zstd-compressed JSON.
pub fn seal(entry: &Entry) -> Vec<u8> {
    let json = serde_json::to_vec(entry).expect("entries serialise");
    let body = zstd::encode_all(&json[..], 3).expect("compressing memory cannot fail");
    let mut out = blake3::hash(&body).as_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

/// The entry in `bytes`, or `None` when anything about it is wrong.
pub fn unseal(bytes: &[u8]) -> Option<Entry> {
    let (digest, body) = (bytes.get(..32)?, bytes.get(32..)?);
    if blake3::hash(body).as_bytes() != digest {
        return None;
    }
    let json = zstd::decode_all(body).ok()?;
    serde_json::from_slice(&json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            key: "ab".repeat(32),
            origin: Some("/w/1".into()),
            exit_code: 1,
            timed_out: false,
            duration_ms: 12,
            output: "error\n".repeat(100),
            observed: None,
            of_tests: Vec::new(),
        }
    }

    #[test]
    fn sealed_entries_round_trip_and_any_damage_is_caught() {
        let sealed = seal(&entry());
        assert!(sealed.len() < 200, "compressed: {}", sealed.len());
        assert_eq!(unseal(&sealed), Some(entry()));
        for at in [0, 31, 32, sealed.len() - 1] {
            let mut bad = sealed.clone();
            bad[at] ^= 1;
            assert_eq!(unseal(&bad), None, "a flipped byte at {at}");
        }
        assert_eq!(unseal(&sealed[..40]), None);
        assert_eq!(unseal(b""), None);
    }

    #[test]
    fn credentials_never_reach_messages() {
        assert_eq!(
            shown("redis://user:secret@host:6379/0"),
            "redis://***@host:6379/0"
        );
        assert_eq!(shown("s3://bucket/prefix"), "s3://bucket/prefix");
        let err = |url: &str| {
            Remote::open(url, true, &Aws::default())
                .err()
                .expect("refused")
                .to_string()
        };
        assert!(err("ftp://x").contains("unknown remote cache scheme"));
        assert!(err("nonsense").contains("not a URL"));
    }
}
