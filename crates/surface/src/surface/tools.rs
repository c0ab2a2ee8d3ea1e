//! The checkers themselves: which file each stop gate's tools run. A fake
//! `node_modules/.bin/tsc` that exits 0, or an edited `node_modules/typescript/bin/tsc`,
//! passes every gate without touching a config; what the project's tree can change of a
//! tool is part of its surface.
//!
//! Only a tool that runs a file inside the project is judged: one installed outside it
//! (`/usr/bin/shellcheck`, a rustup toolchain) changes with the machine, not the change under
//! review, and the environment a hook runs in may find another copy honestly.

use super::{Comparison, Finding};
use ralph_base::env::Environment;
use ralph_config::Config;
use ralph_plan::plan::Plan;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One tool as a gate's run resolves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolFact {
    /// The file that runs (symlinks followed, a shim resolved), relative to the project root
    /// when inside it.
    pub runs: String,
    /// It is a file of the project, which the work under review can change.
    pub inside: bool,
    /// `typescript 5.9.3` for a file of a node package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// A digest of the file that runs, when it is inside the project.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
}

/// The tools of `plan`'s jobs, by name and the folder their search starts from
/// (`tsc`, `tsc in packages/a`).
pub fn of(config: &Config, env: &Environment, plan: &Plan) -> BTreeMap<String, ToolFact> {
    let root = config
        .root
        .canonicalize()
        .unwrap_or_else(|_| config.root.clone());
    let digests = ralph_base::digest::Digests::load(&config.root, None);
    let toolbox = ralph_plan::tools::Toolbox::new(
        &digests,
        env.tool_vars.clone(),
        ralph_plan::tools::Remembered::Nothing,
    );
    let mut out = BTreeMap::new();
    for planned in &plan.gates {
        let gate = &config.gates[planned.gate];
        for job in &planned.jobs {
            let used = ralph_runner::runner::tools_used(
                &toolbox,
                env.path.as_deref(),
                &config.root,
                gate,
                job,
            );
            for tool in used {
                let key = match job.tools_from.as_os_str().is_empty() {
                    true => tool.name.clone(),
                    false => format!("{} in {}", tool.name, job.tools_from.display()),
                };
                out.entry(key).or_insert_with(|| fact(&root, &tool));
            }
        }
    }
    out
}

fn fact(root: &Path, tool: &ralph_plan::tools::Tool) -> ToolFact {
    let real = tool
        .real
        .canonicalize()
        .unwrap_or_else(|_| tool.real.clone());
    match real.strip_prefix(root) {
        Ok(rel) => ToolFact {
            runs: super::text(rel),
            inside: true,
            package: tool.package.clone(),
            digest: std::fs::read(&real)
                .map(|b| blake3::hash(&b).to_hex()[..32].to_string())
                .unwrap_or_default(),
        },
        Err(_) => ToolFact {
            runs: super::text(&real),
            inside: false,
            package: tool.package.clone(),
            digest: String::new(),
        },
    }
}

/// A tool that now runs a file of the project it did not run before, or whose file changed
/// while its package claims the same version, is weaker. Another version of the same
/// package (an upgrade), or a package installed in the project where a global tool ran with
/// its dependency added to `package.json` in the same change (`added`: the packages whose
/// dependency entry changed), is not.
pub fn compare(
    old: &BTreeMap<String, ToolFact>,
    new: &BTreeMap<String, ToolFact>,
    added: &BTreeSet<String>,
    out: &mut Comparison,
) {
    for (name, now) in new {
        let Some(was) = old.get(name) else { continue };
        if !now.inside || now == was {
            continue;
        }
        let why = if !was.inside {
            match package_name(&now.package) {
                Some(p) if added.contains(&p) => continue,
                Some(_) => "a package in the project that no change to package.json installed",
                None => "a file of the project that is no package",
            }
        } else if same_file_other_content(was, now) && now.package.is_some() {
            "a file of the project changed while its package's version did not"
        } else if same_file_other_content(was, now) {
            // A project script a gate runs as its checker (`./check.sh`): changing it
            // changes what the gate checks, which a person approves.
            "a file of the project the gate runs, changed"
        } else if !another_version(was, now) && now.runs != was.runs {
            "another file of the project, not another version of its package"
        } else {
            continue;
        };
        out.weaker.push(Finding {
            file: now.runs.clone(),
            line: 0,
            what: format!("`{name}` now runs this, {why} (was {})", shown(was)),
        });
    }
}

fn same_file_other_content(was: &ToolFact, now: &ToolFact) -> bool {
    now.digest != was.digest && now.package == was.package
}

/// Both are files of a package of the same name, at different versions.
fn another_version(was: &ToolFact, now: &ToolFact) -> bool {
    let name = package_name(&was.package);
    was.package != now.package && name.is_some() && name == package_name(&now.package)
}

/// `typescript` of `typescript 5.9.3`.
fn package_name(package: &Option<String>) -> Option<String> {
    package
        .as_deref()
        .and_then(|p| p.split_whitespace().next())
        .map(str::to_string)
}

fn shown(t: &ToolFact) -> String {
    match &t.package {
        Some(p) => format!("{} ({p})", t.runs),
        None => t.runs.clone(),
    }
}
