//! Cargo: one run per workspace, at the workspace root, found as Cargo finds it (the first
//! folder above a package whose Cargo.toml has `[workspace]` and counts the package as a
//! member). A workspace is one project: `cargo check --workspace` after an edit to one member
//! checks the members that depend on it too. The run's inputs are every project file under
//! the workspace root (sources, `include_str!` data, build scripts' inputs, test fixtures)
//! and under the folders of path dependencies that lie outside it.

use super::{join_inside, under};
use crate::plan::{chunk, group_by_root, Context, Job, ProjectFs};
use globset::Glob;
use ralph_config::Gate;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MANIFEST: &str = "Cargo.toml";

pub fn plan(_gate: &Gate, matched: &[PathBuf], universe: &[PathBuf], cx: &Context<'_>) -> Vec<Job> {
    let mut manifests = Manifests::new(cx.fs, universe);
    // A Rust file outside every package has no root: nothing cargo would build.
    let by_root = group_by_root(matched, |f| {
        manifests.workspace_root(f.parent().unwrap_or(Path::new("")))
    });
    by_root
        .into_iter()
        .flat_map(|(root, args)| {
            let (inputs, no_cache) = inputs_of(&root, universe, &mut manifests);
            chunk(root.clone(), args.into_iter(), cx.arg_budget)
                .into_iter()
                .map(move |job| Job {
                    inputs: inputs.clone(),
                    tools_from: root.clone(),
                    no_cache: no_cache.clone(),
                    label: Some(if root.as_os_str().is_empty() {
                        "the workspace at the project root".to_string()
                    } else {
                        format!("the workspace in {}", root.display())
                    }),
                    ..job
                })
        })
        .collect()
}

/// Every universe file under `root`, plus those under path dependencies outside it (followed
/// transitively); a path dependency outside the project makes the run uncacheable.
fn inputs_of(
    root: &Path,
    universe: &[PathBuf],
    manifests: &mut Manifests<'_>,
) -> (Vec<PathBuf>, Option<String>) {
    let mut dirs: Vec<PathBuf> = vec![root.to_path_buf()];
    let mut seen: BTreeSet<PathBuf> = dirs.iter().cloned().collect();
    let mut no_cache = None;
    let mut i = 0;
    while i < dirs.len() {
        let dir = dirs[i].clone();
        i += 1;
        let members: Vec<PathBuf> = under(universe, &dir)
            .filter(|f| f.file_name().is_some_and(|n| n == MANIFEST))
            .cloned()
            .collect();
        for manifest in members {
            let base = manifest.parent().unwrap_or(Path::new("")).to_path_buf();
            for dep in manifests.path_deps(&manifest) {
                match join_inside(&base, &dep) {
                    Some(d) if !dirs.iter().any(|known| d.starts_with(known)) => {
                        if seen.insert(d.clone()) {
                            dirs.push(d);
                        }
                    }
                    Some(_) => {}
                    None => {
                        no_cache.get_or_insert_with(|| {
                            format!(
                                "{} has a path dependency outside the project ({dep}), whose files ralph-gate does not see",
                                manifest.display()
                            )
                        });
                    }
                }
            }
        }
    }
    // Build output is no input: `target/` beside any manifest (where cargo puts it when the
    // project does not ignore it).
    let outputs: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| under(universe, d))
        .filter(|f| f.file_name().is_some_and(|n| n == MANIFEST))
        .map(|m| m.parent().unwrap_or(Path::new("")).join("target"))
        .collect();
    let mut inputs: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| under(universe, d).cloned())
        .filter(|f| !outputs.iter().any(|o| f.starts_with(o)))
        .collect();
    inputs.sort();
    inputs.dedup();
    (inputs, no_cache)
}

/// Parsed Cargo.toml files, read once each.
struct Manifests<'a> {
    fs: &'a dyn ProjectFs,
    parsed: BTreeMap<PathBuf, Option<toml::Table>>,
    /// Every Cargo.toml of the project.
    known: Vec<PathBuf>,
}

impl<'a> Manifests<'a> {
    fn new(fs: &'a dyn ProjectFs, universe: &[PathBuf]) -> Self {
        Self {
            fs,
            parsed: BTreeMap::new(),
            known: universe
                .iter()
                .filter(|f| f.file_name().is_some_and(|n| n == MANIFEST))
                .cloned()
                .collect(),
        }
    }

    fn get(&mut self, manifest: &Path) -> Option<&toml::Table> {
        let fs = self.fs;
        self.parsed
            .entry(manifest.to_path_buf())
            .or_insert_with(|| {
                let text = String::from_utf8(fs.read(manifest)?).ok()?;
                text.parse::<toml::Table>().ok()
            })
            .as_ref()
    }

    /// The workspace root for a file in `dir`: Cargo's rule, within the project.
    fn workspace_root(&mut self, dir: &Path) -> Option<PathBuf> {
        let package = dir
            .ancestors()
            .find(|d| self.fs.is_file(&d.join(MANIFEST)))?
            .to_path_buf();
        let manifest = package.join(MANIFEST);
        let (is_workspace, explicit) = match self.get(&manifest) {
            Some(t) => (
                t.contains_key("workspace"),
                t.get("package")
                    .and_then(|p| p.get("workspace"))
                    .and_then(|w| w.as_str())
                    .map(str::to_string),
            ),
            None => (false, None),
        };
        if is_workspace {
            return Some(package);
        }
        if let Some(explicit) = explicit.and_then(|w| join_inside(&package, &w)) {
            return Some(explicit);
        }
        for above in package.ancestors().skip(1) {
            let candidate = above.join(MANIFEST);
            if !self.fs.is_file(&candidate) {
                continue;
            }
            let Some(table) = self.get(&candidate).cloned() else {
                continue;
            };
            let Some(ws) = table.get("workspace").and_then(|w| w.as_table()) else {
                continue;
            };
            // The first [workspace] above decides: a member, or (as Cargo would complain) the
            // package is on its own.
            return Some(if self.is_member(above, ws, &package) {
                above.to_path_buf()
            } else {
                package
            });
        }
        Some(package)
    }

    /// A package is a member when `members` globs name it (and `exclude` does not), or when a
    /// member depends on it by path from inside the workspace.
    fn is_member(&mut self, root: &Path, ws: &toml::Table, package: &Path) -> bool {
        let Ok(rel) = package.strip_prefix(root) else {
            return false;
        };
        let list = |key: &str| -> Vec<String> {
            ws.get(key)
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let names = |pattern: &str, path: &Path| {
            Glob::new(pattern.trim_end_matches('/'))
                .map(|g| g.compile_matcher().is_match(path))
                .unwrap_or(false)
        };
        if list("exclude").iter().any(|e| rel.starts_with(e)) {
            return false;
        }
        let members = list("members");
        if members.iter().any(|m| names(m, rel)) {
            return true;
        }
        // Path dependencies of the root package and of the members, transitively, are
        // members too, when they lie inside the workspace.
        let mut member_dirs: Vec<PathBuf> = vec![root.to_path_buf()];
        member_dirs.extend(
            self.known
                .iter()
                .filter_map(|m| m.parent())
                .filter(|d| {
                    d.strip_prefix(root).is_ok_and(|r| {
                        members.iter().any(|m| names(m, r))
                            && !list("exclude").iter().any(|e| r.starts_with(e))
                    })
                })
                .map(Path::to_path_buf),
        );
        let mut i = 0;
        while i < member_dirs.len() {
            let dir = member_dirs[i].clone();
            i += 1;
            for dep in self.path_deps(&dir.join(MANIFEST)) {
                let Some(d) = join_inside(&dir, &dep) else {
                    continue;
                };
                if d == package {
                    return true;
                }
                if d.starts_with(root) && !member_dirs.contains(&d) {
                    member_dirs.push(d);
                }
            }
        }
        false
    }

    /// Every `path = "..."` of the manifest's dependency tables (also target-specific ones,
    /// `[workspace.dependencies]` and `[patch.*]`).
    fn path_deps(&mut self, manifest: &Path) -> Vec<String> {
        let Some(table) = self.get(manifest) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
        let mut tables: Vec<&toml::Table> = kinds
            .iter()
            .filter_map(|k| table.get(*k).and_then(|t| t.as_table()))
            .collect();
        if let Some(targets) = table.get("target").and_then(|t| t.as_table()) {
            for target in targets.values().filter_map(|t| t.as_table()) {
                tables.extend(
                    kinds
                        .iter()
                        .filter_map(|k| target.get(*k).and_then(|t| t.as_table())),
                );
            }
        }
        if let Some(ws) = table.get("workspace").and_then(|w| w.get("dependencies")) {
            tables.extend(ws.as_table());
        }
        if let Some(patch) = table.get("patch").and_then(|p| p.as_table()) {
            tables.extend(patch.values().filter_map(|t| t.as_table()));
        }
        for deps in tables {
            for dep in deps.values() {
                if let Some(p) = dep.get("path").and_then(|p| p.as_str()) {
                    out.push(p.to_string());
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
