//! `ralph-gate gates`: the resolved gates and their origin; `--explain PATH...`: what those
//! paths would run, phase by phase.

use crate::commands::AppError;
use ralph_base::env::Environment;
use ralph_base::exit;
use ralph_base::text::plural;
use ralph_config::Gate;
use ralph_config::{duration, Phase};
use ralph_plan::files;
use ralph_plan::plan::Job;
use ralph_plan::project::Project;
use ralph_runner::runner::{self, Invocation};
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `gates`' options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Paths whose runs to explain (none: list the gates).
    pub explain: Vec<PathBuf>,
    /// Only this phase's runs (none: every phase).
    pub phase: Option<Phase>,
}

pub fn run(project: &Project, args: &Options, env: &Environment) -> Result<u8, AppError> {
    let text = if args.explain.is_empty() {
        list(project)
    } else {
        explain(project, &args.explain, args.phase, env)?
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(exit::SUCCESS)
}

fn list(project: &Project) -> String {
    let config = &project.config;
    let mut out = format!(
        "{}\nroot: {}\n",
        project.describe_config(),
        config.root.display()
    );
    for used in &config.presets {
        if let Some(p) = ralph_config::presets::by_name(used.name) {
            let _ = writeln!(
                out,
                "preset {}: {}",
                p.name,
                ralph_config::presets::description(p)
            );
        }
    }
    if config.gates.is_empty() {
        out.push_str("\nno gates: add [[gate]] tables or presets to ralph.toml\n");
    }
    for g in &config.gates {
        let phases: Vec<&str> = g.phases.iter().map(|p| p.as_str()).collect();
        let _ = writeln!(out, "\n{}", g.name);
        let _ = writeln!(out, "  from:     {}", g.origin);
        let _ = writeln!(
            out,
            "  scope:    {}    phases: {}    timeout: {}{}",
            format!("{:?}", g.scope).to_lowercase(),
            phases.join(", "),
            duration::display(g.timeout),
            if g.optional { "    optional" } else { "" }
        );
        let _ = writeln!(out, "  globs:    {}", g.globs.join("  "));
        if !g.exclude.is_empty() {
            let _ = writeln!(out, "  exclude:  {}", g.exclude.join("  "));
        }
        if !g.root_markers.is_empty() {
            let _ = writeln!(out, "  root at:  {}", g.root_markers.join("  "));
        }
        if let Some(d) = g.driver {
            let _ = writeln!(out, "  driver:   {}", d.as_str());
        }
        let _ = writeln!(out, "  run:      {}", g.command_text());
        if !g.inputs.is_empty() {
            let _ = writeln!(out, "  inputs:   {}", g.inputs.join("  "));
        }
        if !g.shebangs.is_empty() {
            let _ = writeln!(out, "  shebangs: {}", g.shebangs.join("  "));
        }
        if !g.requires.is_empty() {
            let _ = writeln!(out, "  requires: {}", g.requires.join("  "));
        }
        if !g.path.is_empty() {
            let _ = writeln!(out, "  path:     {}", g.path.join("  "));
        }
        for (k, v) in &g.env {
            let _ = writeln!(out, "  env:      {k}={v}");
        }
    }
    out
}

fn explain(
    project: &Project,
    paths: &[PathBuf],
    phase: Option<Phase>,
    env: &Environment,
) -> Result<String, AppError> {
    let config = &project.config;
    let root = config.root.clone();
    let phases: Vec<Phase> = phase.map_or_else(|| Phase::ALL.to_vec(), |p| vec![p]);
    let universe = files::all(&root)?;
    let surface = ralph_surface::surface::of_loop(config, universe.clone(), env);
    let mut out = String::new();
    runner::with_context(
        config,
        env,
        ralph_runner::runner::Reuse::Everything,
        |cx| -> Result<(), AppError> {
            for path in paths {
                let rel = files::relative_to_root(&root, &project.cwd, path)?;
                let _ = writeln!(out, "{}", rel.display());
                // One entry per distinct run, with the phases it belongs to.
                let mut runs: Vec<(String, String, Vec<&str>)> = Vec::new();
                for &ph in &phases {
                    let planned = project.plan(std::slice::from_ref(&rel), &universe, ph, &[]);
                    for pg in &planned.gates {
                        let gate = &config.gates[pg.gate];
                        for job in &pg.jobs {
                            let inv = Invocation::new(cx, gate, job);
                            let head = format!("{}\u{0}{}", gate.name, inv.display);
                            if let Some(r) = runs.iter_mut().find(|r| r.0 == head) {
                                r.2.push(ph.as_str());
                                continue;
                            }
                            let mut body = describe_run(gate, job, &inv);
                            body.push_str(&observed_inputs(cx, &inv));
                            runs.push((head, body, vec![ph.as_str()]));
                        }
                    }
                }
                let readers = read_by(project, &rel, &phases, &runs);
                if runs.is_empty() && readers.is_empty() {
                    out.push_str("  no gate matches this path\n");
                }
                for (head, body, on) in runs {
                    let name = head.split('\u{0}').next().unwrap_or_default();
                    let _ = write!(out, "  {name}  [{}]\n{body}", on.join(", "));
                }
                out.push_str(&readers);
                out.push_str(&surface_of(&surface, &rel));
            }
            Ok(())
        },
    )?;
    Ok(out)
}

/// The gates no glob gives `rel` to whose last run read it (observed): a change to it runs
/// them again (`check --staged`, the edit hook), so they are named too.
fn read_by(
    project: &Project,
    rel: &std::path::Path,
    phases: &[Phase],
    runs: &[(String, String, Vec<&str>)],
) -> String {
    let root = &project.config.root;
    let rels = [rel.to_path_buf()];
    let found: Vec<(&str, Vec<&str>)> = project
        .config
        .gates
        .iter()
        .filter(|g| {
            !runs
                .iter()
                .any(|r| r.0.split('\u{0}').next() == Some(g.name.as_str()))
        })
        .filter_map(|g| {
            let on: Vec<&str> = phases
                .iter()
                .filter(|ph| g.runs_in(**ph))
                .map(|ph| ph.as_str())
                .collect();
            let read = !on.is_empty()
                && !ralph_runner::cache::readers::runs_reading(root, &g.name, &rels).is_empty();
            read.then_some((g.name.as_str(), on))
        })
        .collect();
    found
        .iter()
        .map(|(name, on)| {
            format!(
                "  {name}  [{}]\n    read: its last run read this file (observed), so a change to it runs {name} again\n",
                on.join(", ")
            )
        })
        .collect()
}

/// How a run's inputs are known beyond the drivers' model: observed as it runs (and what its
/// stored result read), or why not.
fn observed_inputs(cx: &runner::RunContext<'_>, inv: &Invocation) -> String {
    let Ok(key) = &inv.key else {
        return String::new();
    };
    let vars: Vec<String> = cx
        .env
        .gate_vars
        .keys()
        .map(|k| k.to_string_lossy().into_owned())
        .collect();
    let mut s = format!(
        "    env:    {} in the key{}\n",
        plural(vars.len(), "variable", "variables"),
        if vars.is_empty() {
            String::new()
        } else {
            format!(": {}", vars.join(" "))
        }
    );
    if !cx.config.settings.observe_inputs {
        s.push_str("    inputs: the drivers' model alone ([cache] observe = false)\n");
        return s;
    }
    if let Err(why) = ralph_runner::observe::trace::probe() {
        let _ = writeln!(
            s,
            "    inputs: not observed: runs cannot be observed here ({why}), so its result is not stored and it runs fresh each time"
        );
        return s;
    }
    let last = match cx.cache.get(key).and_then(|e| e.observed) {
        Some(inputs) => format!(
            "; its stored result read {}, each checked before it serves",
            plural(inputs.len(), "file", "files")
        ),
        None => String::new(),
    };
    let _ = writeln!(
        s,
        "    inputs: observed as it runs (every file its processes open or look for){last}"
    );
    s
}

/// The verification surface that bears on `rel`: the options of the configs in its folder
/// and above (and outside the project), and the suppressions and tests in the file itself.
fn surface_of(s: &ralph_surface::surface::Surface, rel: &Path) -> String {
    let file = ralph_surface::surface::text(rel);
    // A config applies to the files of its folder and below (Cargo's from the folder that
    // holds `.cargo/`); one outside the project, to every file.
    let applies = |config: &str| {
        let outside = ["~", "$", "../", ".git/"]
            .iter()
            .any(|p| config.starts_with(p));
        let mut dir = Path::new(config).parent().unwrap_or(Path::new(""));
        if dir.file_name().is_some_and(|n| n == ".cargo") {
            dir = dir.parent().unwrap_or(Path::new(""));
        }
        outside || rel.starts_with(dir)
    };
    let mut out = String::from(
        "  surface (a loop is held, and check --base fails, when any of it checks less):\n",
    );
    for st in s
        .settings
        .iter()
        .filter(|st| applies(&st.file) && !st.value.is_empty())
    {
        let value = st.value.replace('\n', ", ");
        let _ = writeln!(out, "    {}:{}: {} = {value}", st.file, st.line, st.key);
    }
    for m in s.markers.iter().filter(|m| m.file == file) {
        let _ = writeln!(out, "    {}:{}: {} ({})", m.file, m.line, m.kind, m.context);
    }
    let tests: Vec<&str> = s
        .tests
        .iter()
        .filter(|t| t.file == file)
        .map(|t| t.name.as_str())
        .collect();
    if !tests.is_empty() {
        let _ = writeln!(out, "    {} tests here: {}", tests.len(), tests.join(", "));
    }
    let checked: Vec<&str> = s
        .checked
        .iter()
        .filter(|(_, f)| f.contains(&file))
        .map(|(g, _)| g.as_str())
        .collect();
    let _ = writeln!(
        out,
        "    checked by the stop gates: {}",
        if checked.is_empty() {
            "none".to_string()
        } else {
            checked.join(", ")
        }
    );
    out
}

/// What one run does: command, folder, tools, and whether (and on what) it is cached.
fn describe_run(gate: &Gate, job: &Job, inv: &Invocation) -> String {
    let mut s = format!("    $ {}\n", inv.display);
    if let Some(label) = &job.label {
        let _ = writeln!(s, "    checks: {label}");
    }
    for t in &inv.shown_tools {
        let _ = writeln!(s, "    tool:   {t}");
    }
    if let Some(tool) = &inv.missing {
        let _ = writeln!(
            s,
            "    tool:   {tool} is not installed (the gate is skipped){}",
            gate.install
                .as_ref()
                .map(|i| format!("; install: {i}"))
                .unwrap_or_default()
        );
    }
    match &inv.key {
        Ok(_) => {
            let _ = writeln!(
                s,
                "    cache:  on; the key holds {} and the identity of {}",
                plural(job.inputs.len(), "input file", "input files"),
                if inv.tools.is_empty() {
                    "no tool".to_string()
                } else {
                    inv.tools
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            );
        }
        Err(why) if inv.missing.is_none() => {
            let _ = writeln!(s, "    cache:  off, {why}");
        }
        Err(_) => {}
    }
    s
}
