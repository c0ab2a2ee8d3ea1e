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
