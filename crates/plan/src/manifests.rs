//! The names of files whose content decides every tool run in their folder and below:
//! manifests, lock files, toolchain pins, tool configs. The cache keys hold them; the
//! TypeScript driver must not mistake them for sources.

/// Names looked for in each folder.
const NAMES: &[&str] = &[
    // JavaScript and TypeScript
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "yarn.lock",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    "bun.lock",
    "bun.lockb",
    ".npmrc",
    ".nvmrc",
    ".node-version",
    // Rust
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain",
    "rust-toolchain.toml",
    // Go
    "go.mod",
    "go.sum",
    "go.work",
    "go.work.sum",
    // Python
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "uv.lock",
    "poetry.lock",
    "Pipfile",
    "Pipfile.lock",
    ".python-version",
    // Shell
    ".shellcheckrc",
    "shellcheckrc",
    // Version managers
    ".tool-versions",
    "mise.toml",
    ".mise.toml",
];

/// True when a file of this name decides the runs around it.
pub fn is_context_name(name: &str) -> bool {
    NAMES.contains(&name)
        || ((name.starts_with("requirements") || name.starts_with("constraints"))
            && name.ends_with(".txt"))
}

/// Configs outside the project that its tools read: Cargo's and ShellCheck's in every folder
/// above the root, and in the home folder. Each comes with a name that does not say where
/// the checkout lives (`../.cargo/config.toml`, `~/.shellcheckrc`), so that keys and
/// surfaces stay the same for every worktree of a repository.
pub fn outside_configs(
    root: &std::path::Path,
    env: &ralph_base::env::Environment,
) -> Vec<(String, std::path::PathBuf)> {
    let mut out = Vec::new();
    let mut up = String::new();
    for dir in root.ancestors().skip(1) {
        up.push_str("../");
        for name in [".cargo/config.toml", ".cargo/config", ".shellcheckrc"] {
            out.push((format!("{up}{name}"), dir.join(name)));
        }
    }
    let home = env.home.as_ref();
    let cargo_home = match (&env.cargo_home, home) {
        (Some(c), _) => Some(("$CARGO_HOME".to_string(), c.clone())),
        (None, Some(h)) => Some(("~/.cargo".to_string(), h.join(".cargo"))),
        (None, None) => None,
    };
    if let Some((label, dir)) = cargo_home {
        for name in ["config.toml", "config"] {
            out.push((format!("{label}/{name}"), dir.join(name)));
        }
    }
    if let Some(h) = home {
        out.push(("~/.shellcheckrc".into(), h.join(".shellcheckrc")));
    }
    match (&env.xdg_config_home, home) {
        (Some(x), _) => out.push((
            "$XDG_CONFIG_HOME/shellcheckrc".into(),
            x.join("shellcheckrc"),
        )),
        (None, Some(h)) => out.push((
            "~/.config/shellcheckrc".into(),
            h.join(".config/shellcheckrc"),
        )),
        (None, None) => {}
    }
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|(_, p)| seen.insert(p.clone()));
    out
}
