//! What the guard protects, and how a path an agent writes (`src/../ralph.toml`, `~/x`,
//! `$CLAUDE_PROJECT_DIR/.ralph`, a symlink, a glob) is resolved before it is compared.

use globset::{GlobBuilder, GlobMatcher};
use std::path::{Component, Path, PathBuf};

pub struct Protected {
    ws: PathBuf,
    cwd: PathBuf,
    home: Option<PathBuf>,
    /// Single files (the config in use).
    exact: Vec<PathBuf>,
    /// Folders protected with everything under them.
    under: Vec<PathBuf>,
    /// Files protected by name pattern, with the folder they live in.
    patterns: Vec<(PathBuf, GlobMatcher)>,
}

/// Where the protected things are, found by the caller.
pub struct Places<'a> {
    pub ws: &'a Path,
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
    /// The Claude Code config folder (`CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub claude_home: Option<&'a Path>,
    /// Codex's home (`CODEX_HOME`, else `~/.codex`): its goals and its rollouts.
    pub codex_home: Option<&'a Path>,
    pub config: Option<&'a Path>,
    pub git_dir: Option<&'a Path>,
    /// The repository's common git folder (differs from `git_dir` in a linked worktree): it
    /// holds the results every worktree shares.
    pub git_common_dir: Option<&'a Path>,
    pub plugin_root: Option<&'a Path>,
}

impl Protected {
    pub fn new(p: &Places<'_>) -> Self {
        let ws = physical(p.ws);
        let mut exact = vec![ws.join(ralph_config::FILE_NAME)];
        exact.extend(p.config.map(physical));
        let mut under = vec![ws.join(ralph_base::state::DIR)];
        for git in [p.git_dir, p.git_common_dir].into_iter().flatten() {
            let git = physical(git);
            under.push(git.join("hooks"));
            under.push(git.join("ralph-gate"));
        }
        under.extend(p.plugin_root.map(physical));
        let mut patterns = Vec::new();
        let mut pattern = |dir: PathBuf, glob: &str| {
            let m = GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .expect("fixed globs compile")
                .compile_matcher();
            patterns.push((dir, m));
        };
        for agent in ralph_base::agent::Agent::ALL {
            pattern(ws.join(agent.state_dir()), "ralph-loop*.local.md");
        }
        pattern(ws.join(".claude"), "settings*.json");
        if let Some(ch) = p.claude_home {
            let ch = physical(ch);
            under.push(ch.join("plugins"));
            // The transcripts, which record a `/goal` and its end (`ralph_loop::goals`).
            under.push(ch.join("projects"));
            pattern(ch, "settings*.json");
        }
        if let Some(codex) = p.codex_home {
            let codex = physical(codex);
            under.push(codex.join("sessions"));
            pattern(codex, "goals_*.sqlite*");
        }
        Self {
            ws,
            cwd: physical(p.cwd),
            home: p.home.map(Path::to_path_buf),
            exact,
            under,
            patterns,
        }
    }

    /// The protected path `raw` names, shown for the agent; with `whole_tree`, also a folder
    /// that holds a protected path (`rm -rf .claude`).
    pub fn hit(&self, raw: &str, whole_tree: bool) -> Option<String> {
        self.hit_at(raw, whole_tree, &self.cwd)
    }

    /// The folder the agent's command starts in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The folder `raw` names from `cwd` (`cd ..`, `pushd ~/x`), resolved as far as it exists.
    pub fn folder(&self, raw: &str, cwd: &Path) -> PathBuf {
        resolve(&cwd.join(self.expand(raw)))
    }

    /// The protected paths that exist as named files or folders (not the name patterns).
    pub fn named(&self) -> impl Iterator<Item = &PathBuf> {
        self.exact.iter().chain(&self.under)
    }

    /// [`Self::hit`] for a command that runs in `cwd`.
    pub fn hit_at(&self, raw: &str, whole_tree: bool, cwd: &Path) -> Option<String> {
        let expanded = self.expand(raw);
        if expanded.contains(['*', '?', '[']) {
            return self.glob_hit(&expanded, whole_tree, cwd);
        }
        let path = resolve(&cwd.join(&expanded));
        (self.protects(&path) || (whole_tree && self.holds_protected(&path)))
            .then(|| self.show(&path))
    }

    fn protects(&self, p: &Path) -> bool {
        self.exact.iter().any(|e| e == p)
            || self.under.iter().any(|u| p.starts_with(u))
            || self.patterns.iter().any(|(dir, m)| {
                p.parent() == Some(dir.as_path()) && p.file_name().is_some_and(|n| m.is_match(n))
            })
    }

    /// True when deleting or moving `p` takes a protected path with it.
    fn holds_protected(&self, p: &Path) -> bool {
        self.exact
            .iter()
            .chain(&self.under)
            .chain(self.patterns.iter().map(|(dir, _)| dir))
            .any(|q| q.starts_with(p))
    }

    /// A glob word: protected when it matches a protected path that exists, or (with
    /// `whole_tree`) one of the folders holding it.
    fn glob_hit(&self, pattern: &str, whole_tree: bool, cwd: &Path) -> Option<String> {
        let full = lexical(&cwd.join(pattern));
        let m = GlobBuilder::new(&full.to_string_lossy())
            .literal_separator(true)
            .build()
            .ok()?
            .compile_matcher();
        let mut candidates: Vec<PathBuf> = self.exact.iter().chain(&self.under).cloned().collect();
        for (dir, pm) in &self.patterns {
            if let Ok(entries) = std::fs::read_dir(dir) {
                candidates.extend(
                    entries
                        .flatten()
                        .filter(|e| pm.is_match(e.file_name()))
                        .map(|e| e.path()),
                );
            }
            candidates.push(dir.clone());
        }
        for c in &candidates {
            if m.is_match(c) && (self.protects(c) || whole_tree) {
                return Some(self.show(c));
            }
            if whole_tree {
                if let Some(a) = c
                    .ancestors()
                    .skip(1)
                    .find(|a| a.starts_with(&self.ws) && m.is_match(a))
                {
                    return Some(self.show(a));
                }
            }
        }
        None
    }

    /// `~`, `$HOME` and the project variables agents write into commands.
    fn expand(&self, raw: &str) -> String {
        let home = self
            .home
            .as_deref()
            .map(|h| h.to_string_lossy().into_owned());
        let ws = self.ws.to_string_lossy().into_owned();
        let cwd = self.cwd.to_string_lossy().into_owned();
        let vars: [(&str, Option<&str>); 6] = [
            ("${CLAUDE_PROJECT_DIR}", Some(&ws)),
            ("$CLAUDE_PROJECT_DIR", Some(&ws)),
            ("${HOME}", home.as_deref()),
            ("$HOME", home.as_deref()),
            ("${PWD}", Some(&cwd)),
            ("$PWD", Some(&cwd)),
        ];
        for (name, value) in vars {
            if let (Some(rest), Some(v)) = (raw.strip_prefix(name), value) {
                return format!("{v}{rest}");
            }
        }
        match (raw.strip_prefix('~'), &home) {
            (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
                format!("{h}{rest}")
            }
            _ => raw.to_string(),
        }
    }

    fn show(&self, p: &Path) -> String {
        match p.strip_prefix(&self.ws) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => p.display().to_string(),
        }
    }
}

/// `p` with symlinks resolved as far as it exists, and the rest normalised by hand.
fn resolve(p: &Path) -> PathBuf {
    let mut existing = p.to_path_buf();
    let mut tail = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for c in tail.iter().rev() {
                out.push(c);
            }
            return lexical(&out);
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return lexical(p),
        }
    }
}

fn physical(p: &Path) -> PathBuf {
    resolve(p)
}

/// `.` and `..` removed without touching the disk.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
