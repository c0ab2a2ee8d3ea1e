//! `ralph-gate gates`: the resolved gates and their origin; `--explain PATH...`: what those
//! paths would run, phase by phase.

use crate::app::AppError;
use crate::cli::GatesArgs;
use crate::config::{duration, Phase};
use crate::exit;
use crate::files;
use crate::plan::{self, Filter};
use crate::project::Project;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

pub fn run(project: &Project, args: &GatesArgs) -> Result<u8, AppError> {
    let text = if args.explain.is_empty() {
        list(project)
    } else {
        explain(project, &args.explain, args.phase)?
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
        if let Some(p) = crate::config::presets::by_name(used.name) {
            let _ = writeln!(
                out,
                "preset {}: {}",
                p.name,
                crate::config::presets::description(p)
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
        let _ = writeln!(out, "  run:      {}", g.run);
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

fn explain(project: &Project, paths: &[PathBuf], phase: Option<Phase>) -> Result<String, AppError> {
    let config = &project.config;
    let root = config.root.clone();
    let phases: Vec<Phase> = phase.map_or_else(|| Phase::ALL.to_vec(), |p| vec![p]);
    let mut out = String::new();
    for path in paths {
        let rel = files::relative_to_root(&root, &project.cwd, path)?;
        let _ = writeln!(out, "{}", rel.display());
        // (gate, dir, command) -> phases, so a run shared by every phase is listed once.
        let mut runs: Vec<(String, String, String, Vec<&str>)> = Vec::new();
        for &ph in &phases {
            let planned = plan::plan(
                config,
                std::slice::from_ref(&rel),
                std::slice::from_ref(&rel),
                &Filter {
                    phase: ph,
                    only: &[],
                },
                &|r| root.join(r).is_file(),
                plan::ARG_BUDGET,
            );
            for pg in &planned.gates {
                let gate = &config.gates[pg.gate];
                for job in &pg.jobs {
                    let args: Vec<String> = job.args.iter().map(|a| plan::shown(a)).collect();
                    let dir = if job.dir.as_os_str().is_empty() {
                        ".".to_string()
                    } else {
                        job.dir.display().to_string()
                    };
                    let command = gate
                        .run
                        .display_with(&args, &root.join(&job.dir).to_string_lossy());
                    match runs
                        .iter_mut()
                        .find(|r| r.0 == gate.name && r.1 == dir && r.2 == command)
                    {
                        Some(r) => r.3.push(ph.as_str()),
                        None => runs.push((gate.name.clone(), dir, command, vec![ph.as_str()])),
                    }
                }
            }
        }
        let any = !runs.is_empty();
        for (name, dir, command, on) in runs {
            let _ = writeln!(
                out,
                "  {name}  [{}]  in {dir}\n    $ {command}",
                on.join(", ")
            );
        }
        if !any {
            out.push_str("  no gate matches this path\n");
        }
    }
    Ok(out)
}
