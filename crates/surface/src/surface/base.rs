//! `check --base REV`: the surface of the tree checked against the surface at REV, and the
//! gates in force against the gates at REV. A weakening that was committed passes a fresh
//! run of the weakened checks; only this comparison sees it.

use super::source::Source;
use super::Comparison;
use ralph_base::env::Environment;
use ralph_base::git::GitError;
use ralph_config::{self as config, Config, Phase};
use std::path::PathBuf;

pub struct Against {
    /// The revision as given.
    pub rev: String,
    pub comparison: Comparison,
    /// The base's config says a weakening only warns. Read from the base, never from the
    /// change under review, which could otherwise turn its own check off.
    pub warn_only: bool,
    /// The config at the base, when it can be read: its gates are compared with the
    /// gates in force by the pin's rules.
    pub config: Option<Config>,
    /// The surfaces at the base and now: what a differential run needs to tell code from
    /// checks.
    pub surfaces: (super::Surface, super::Surface),
    /// What changed in the checks without weakening them, said in the report: tests
    /// changed with the code (`differential::changed_with_the_code`), a preset's gate gone
    /// with the last file it checked.
    pub notes: Vec<String>,
}

/// Compares the work tree of `config`'s project (its files `now`) with the tree at `rev`,
/// for the gates of `phase`.
pub fn against(
    config: &Config,
    rev: &str,
    phase: Phase,
    now: Vec<PathBuf>,
    env: &Environment,
) -> Result<Against, GitError> {
    let root = &config.root;
    let base = Source::revision(root, rev, env)?;
    let head = Source::work_tree(root, now, env);
    let base_config = config_at(config, &base);
    // Each side as its own gates saw it: code the base's gates checked stays code for the
    // differential run even where the gates now leave it out.
    // Both through one lens: a gate added since the base reads markers and scripts that
    // were there unread (a `# noqa` ruff now reads), which are no change to the checks.
    let then = base_config.as_ref().unwrap_or(config);
    let lens = super::Lens::of(then, phase).union(&super::Lens::of(config, phase));
    let surfaces = (
        super::describe_through(then, phase, &base, &lens),
        super::describe_through(config, phase, &head, &lens),
    );
    let comparison = super::compare(&surfaces.0, &surfaces.1);
    Ok(Against {
        rev: rev.to_string(),
        comparison,
        warn_only: base_config
            .as_ref()
            .unwrap_or(config)
            .settings
            .integrity_warn,
        config: base_config,
        surfaces,
        notes: Vec::new(),
    })
}

/// The config the project had at the base: its `ralph.toml` there, or the presets the base's
/// files select. `None` when it cannot be read (then there is nothing to compare the gates
/// with, and a change that repairs it is not held).
fn config_at(now: &Config, base: &Source) -> Option<Config> {
    let file = match &now.file {
        Some(path) => {
            let rel = path.strip_prefix(&now.root).unwrap_or(path);
            match base.read_text(rel) {
                Some(text) => Some(config::parse(path, text).ok()?),
                None => None,
            }
        }
        None => None,
    };
    let files = base.files.clone();
    config::resolve(now.root.clone(), file, &mut || files.clone()).ok()
}
