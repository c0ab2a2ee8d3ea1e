//! What a result cache key holds: everything that can change a run's result.
//!
//! - ralph-gate's version and the key format;
//! - the config and presets in use (their whole text), the gate's name, scope, env, `path`,
//!   `requires` and timeout;
//! - the environment the run inherits, but for the variables that name the session;
//! - the run's folder (relative to the project root, so a checkout elsewhere shares keys),
//!   its command and, where the command reads them, its file arguments;
//! - the identity of every tool it runs (see [`ralph_plan::tools`]): content, interpreter,
//!   package version, what a shim resolves to;
//! - the content of its inputs (its files, a project's files, declared `inputs`, what a
//!   driver found it reads), the absence of inputs that do not exist included;
//! - the content of the manifests, lock files and tool configs from its folders up to the
//!   project root (see [`super::context`]).
//!
//! When one of these cannot be known, there is no key and the run is not cached: the
//! reason says why.

use super::context::ContextFiles;
use ralph_base::digest::{Digests, Unreadable};
use ralph_config::template::Placeholder;
use ralph_config::Gate;
use ralph_plan::plan::Job;
use ralph_plan::tools::{Fields, Tool, Unknown};
use std::path::Path;
use std::sync::Arc;

pub struct Parts<'a> {
    pub config_digest: &'a str,
    pub gate: &'a Gate,
    pub job: &'a Job,
    /// Every tool the run uses, resolved.
    pub tools: &'a [Arc<Tool>],
    /// The environment the run inherits, but for what names the session (see
    /// [`ralph_base::env::names_the_session`]).
    pub vars: &'a std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString>,
}

/// Why a run has no key, so that nothing of it is stored or served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoKey {
    #[error("the gate has cache = false")]
    Off,
    #[error("a required tool is missing")]
    ToolMissing,
    /// The driver knows the run depends on what no key can hold (its reason).
    #[error("{0}")]
    Driver(String),
    #[error(transparent)]
    Unreadable(#[from] Unreadable),
    #[error(transparent)]
    Tool(#[from] Unknown),
}

/// The key of one run, or why there cannot be one.
pub fn compose(
    parts: &Parts<'_>,
    digests: &Digests,
    context: &ContextFiles,
) -> Result<String, NoKey> {
    let (gate, job) = (parts.gate, parts.job);
    if !gate.cache {
        return Err(NoKey::Off);
    }
    if let Some(why) = &job.no_cache {
        return Err(NoKey::Driver(why.clone()));
    }
    let mut h = Fields::new();
    gate_fields(&mut h, parts);
    command_fields(&mut h, gate, job);
    tool_fields(&mut h, parts.tools)?;
    file_fields(&mut h, job, digests, context)?;
    Ok(h.finish())
}

/// The gate as configured and the environment its run inherits.
fn gate_fields(h: &mut Fields, parts: &Parts<'_>) {
    let gate = parts.gate;
    h.add(super::FORMAT.as_bytes());
    h.add(env!("CARGO_PKG_VERSION").as_bytes());
    h.add(parts.config_digest.as_bytes());
    h.add(gate.name.as_bytes());
    h.add(format!("{:?}", gate.scope).as_bytes());
    for (k, v) in &gate.env {
        h.add(k.as_bytes());
        h.add(v.as_bytes());
    }
    for p in gate.path.iter().chain(&gate.requires) {
        h.add(p.as_bytes());
    }
    h.add(&gate.timeout.as_millis().to_le_bytes());
    // `RUSTFLAGS="-D warnings"`, `GOFLAGS`, `PYTHONPATH`: the same files, another verdict.
    for (k, v) in parts.vars {
        h.add(b"var");
        h.add(k.as_encoded_bytes());
        h.add(v.as_encoded_bytes());
    }
}

/// What runs: the folder, the command, its arguments when it reads them, and what a driver
/// writes before the run.
fn command_fields(h: &mut Fields, gate: &Gate, job: &Job) {
    h.add(job.dir.as_os_str().as_encoded_bytes());
    h.add(job.tools_from.as_os_str().as_encoded_bytes());
    let reads_args = match (&job.argv, &gate.run) {
        (Some(argv), _) => {
            for a in argv {
                h.add(a.as_encoded_bytes());
            }
            true
        }
        // Arguments matter only to a command that reads them: `tsc -p .` gives the same
        // result whichever file's edit triggered it, so those runs share one key.
        (None, Some(run)) => {
            h.add(run.shell_script().as_bytes());
            run.uses(Placeholder::File) || run.uses(Placeholder::Files)
        }
        (None, None) => false,
    };
    if reads_args {
        h.add(b"args");
        for a in &job.args {
            h.add(a.as_encoded_bytes());
        }
    }
    // What a driver writes before the run (a tsconfig naming the files to check)
    // decides the result as much as the command does.
    for (path, text) in &job.setup {
        h.add(b"setup");
        h.add(path.as_os_str().as_encoded_bytes());
        h.add(text.as_bytes());
    }
}

/// Every tool the run uses, by name and identity, in name order.
fn tool_fields(h: &mut Fields, tools: &[Arc<Tool>]) -> Result<(), Unknown> {
    let mut tools: Vec<&Arc<Tool>> = tools.iter().collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    for t in tools {
        h.add(b"tool");
        h.add(t.name.as_bytes());
        h.add(t.identity.as_ref().map_err(Clone::clone)?.as_bytes());
    }
    Ok(())
}

/// The content of what the run reads: the configs outside the project, the context files of
/// its folders, and its inputs.
fn file_fields(
    h: &mut Fields,
    job: &Job,
    digests: &Digests,
    context: &ContextFiles,
) -> Result<(), Unreadable> {
    let content = |path: &Path| digests.of(path).map_err(|e| Unreadable::read(path, &e));
    for (name, path) in context.outside() {
        let digest = content(path)?;
        h.add(b"outside");
        h.add(name.as_bytes());
        h.add(digest.as_str().as_bytes());
    }
    let dirs = std::iter::once(job.dir.as_path())
        .chain(std::iter::once(job.tools_from.as_path()))
        .chain(
            job.inputs
                .iter()
                .map(|p| p.parent().unwrap_or(Path::new(""))),
        );
    for (kind, files) in [
        (&b"context"[..], context.for_dirs(dirs)),
        (&b"input"[..], job.inputs.clone()),
    ] {
        for f in files {
            let digest = content(&f)?;
            h.add(kind);
            h.add(f.as_os_str().as_encoded_bytes());
            h.add(digest.as_str().as_bytes());
        }
    }
    Ok(())
}
