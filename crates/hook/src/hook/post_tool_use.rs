//! `ralph-gate hook post-tool-use`: after an agent edits a file, run the edit-phase gates that
//! match it and hand their errors straight back to the agent as `additionalContext`.

use super::notices;
use super::{Ask, Verdict};
use crate::words as agent;
use ralph_base::env::Environment;
use ralph_config::Phase;
use ralph_plan::files;
use ralph_plan::project::Project;
use ralph_runner::cache::readers;
use ralph_runner::runner::{self, GateResult, Limits};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The edit gates for the files an edit wrote, and what the agent is told.
pub fn run(ask: &Ask, env: &Environment, cwd: &Path, config: Option<&Path>) -> Verdict {
    let started = Instant::now();
    let base = ask.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    // Deleted files, and things that are not files, have nothing to check.
    let edited: Vec<&PathBuf> = ask
        .edited
        .iter()
        .filter(|p| base.join(p).is_file())
        .collect();
    if edited.is_empty() {
        return Verdict::Silent;
    }
    let project = match Project::open(&base, config) {
        Ok(p) => p,
        // The agent may have broken ralph.toml itself; tell it, so it can repair it.
        Err(e) => {
            return Verdict::Context {
                text: agent::edit_config_error(&e),
                system: None,
            }
        }
    };
    let mut verdict = for_project(&project, (ask, &base, &edited), env, started);
    // A file of a project with its own config below this one (`svc/ralph.toml` in a
    // repository whose agent works at the top) is that project's too: its gates run on it.
    if config.is_none() {
        for nested in nested_roots(project.root(), &base, &edited) {
            if let Ok(inner) = Project::open(&nested, None) {
                let more = for_project(&inner, (ask, &base, &edited), env, started);
                verdict = verdict.and(more);
            }
        }
    }
    verdict
}

/// What `project`'s edit gates say of the edited files that are its own or beside it.
fn for_project(
    project: &Project,
    (ask, base, edited): (&Ask, &Path, &[&PathBuf]),
    env: &Environment,
    started: Instant,
) -> Verdict {
    let rels: Vec<PathBuf> = edited
        .iter()
        .filter_map(|p| files::relative_to_root(project.root(), base, p).ok())
        .filter(|rel| !files::is_own_state(rel))
        .collect();
    let beside = beside(project.root(), base, edited);
    if rels.is_empty() && beside.is_empty() {
        return Verdict::Silent;
    }
    match edit_gates(project, (&rels, &beside), env, started) {
        Some(results) => {
            let named: Vec<PathBuf> = rels.into_iter().chain(beside).collect();
            tell(project, &ask.session, &named, &results, env.strict())
        }
        None => Verdict::Silent,
    }
}

/// The folders below `root` holding a config of their own on the way from `root` to an
/// edited file (nearest first is not needed: each runs its own gates on its own files).
fn nested_roots(root: &Path, base: &Path, edited: &[&PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = edited
        .iter()
        .filter_map(|p| base.join(p).parent().map(Path::to_path_buf))
        .filter_map(|dir| ralph_config::find(&dir)?.parent().map(Path::to_path_buf))
        .filter(|d| d != root && d.starts_with(root))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Runs the edit gates that match `rels`, the runs whose last run read one of them
/// (`readers`), and the whole of each gate no observed run has told what it reads and whose
/// globs miss one of them (`readers::Reach`); `None` when there is none (the common case,
/// answered without listing the project).
fn edit_gates(
    project: &Project,
    (rels, beside): (&[PathBuf], &[PathBuf]),
    env: &Environment,
    started: Instant,
) -> Option<Vec<GateResult>> {
    let root = project.root();
    let config = &project.config;
    let head = |p: &Path| files::head(&root.join(p));
    let matching: Vec<&ralph_config::Gate> = config
        .gates
        .iter()
        .filter(|g| g.runs_in(Phase::Edit) && rels.iter().any(|r| g.matches_file(r, &head)))
        .collect();
    let touched: Vec<PathBuf> = rels.iter().chain(beside).cloned().collect();
    let reach = readers::Reach::of(config, (root, Phase::Edit), &touched, &head);
    if matching.is_empty() && reach.is_empty() {
        return None;
    }
    // Project gates, drivers and declared inputs see more than the edited files. An edited
    // file is one of them even when git ignores it (a generated file the code imports).
    let universe = if !reach.is_empty() || matching.iter().any(|g| g.needs_listing()) {
        let mut all = files::all(root).unwrap_or_default();
        all.extend(rels.iter().cloned());
        all.sort();
        all.dedup();
        all
    } else {
        rels.to_vec()
    };
    let mut asked = rels.to_vec();
    asked.extend(reach.files(config, &universe, &head));
    asked.sort();
    asked.dedup();
    let unheard = reach.whole_names(&[]);
    let mut plan = project.plan(&asked, &universe, Phase::Edit, &[]);
    if !unheard.is_empty() {
        plan = plan.with_gates_of(project.plan(&universe, &universe, Phase::Edit, &unheard));
    }
    let limits = Limits {
        jobs: config.settings.jobs,
        deadline: Some(started + config.settings.hooks.edit_budget),
        cargo_target: None,
        private_tmp: false,
        untracked: None,
        observe: false,
        checkout_of: None,
    };
    let results = ralph_runner::results::run_recorded(
        config,
        &plan,
        &limits,
        env,
        runner::Reuse::Everything,
        Phase::Edit,
        &|_| {},
    );
    Some(results.into_iter().filter(|r| r.runs > 0).collect())
}

/// The edited files beside a project below the top of its repository, as paths from its
/// root (`../shared/schema.json`): no gate checks them, but the runs that read them must
/// be made again.
fn beside(root: &Path, base: &Path, edited: &[&PathBuf]) -> Vec<PathBuf> {
    let Some(around) = files::Beside::of(root) else {
        return Vec::new();
    };
    edited
        .iter()
        .filter(|p| files::relative_to_root(root, base, p).is_err())
        .filter_map(|p| around.rel(&base.join(p).canonicalize().ok()?))
        .collect()
}

/// What the agent is told after its edit: the failing gates, and once per session the tools
/// that are missing.
fn tell(
    project: &Project,
    session: &str,
    rels: &[PathBuf],
    results: &[GateResult],
    strict: bool,
) -> Verdict {
    let root = project.root();
    let named = rels
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let told = notices::told(root, session);
    let notice = agent::missing_notice(&named, results, &told);
    if let Some((_, tools)) = &notice {
        notices::remember(root, session, tools);
    }
    let failures = agent::edit_feedback(&named, results, strict, agent::TEXT_CAP);
    let text = match (failures, &notice) {
        (None, None) => return Verdict::Silent,
        (Some(f), None) => f,
        (None, Some((n, _))) => n.clone(),
        (Some(f), Some((n, _))) => format!("{n}\n\n{f}"),
    };
    Verdict::Context {
        text: agent::cap(&text, agent::TEXT_CAP),
        system: notice.map(|(_, tools)| agent::missing_line(&tools)),
    }
}
