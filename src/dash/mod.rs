//! `ralph-gate dash`: the live terminal dashboard. Reads what hooks and checks record under
//! `.ralph/` (results, journal) and the loop files, and redraws as they change.

mod app;
#[cfg(test)]
mod tests;
mod ui;

use app::{Action, App, Rerun};
use ralph_base::env::Environment;
use ralph_config::Phase;
use ralph_plan::project::Project;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the dashboard re-reads `.ralph/` when no key is pressed.
const REFRESH: Duration = Duration::from_millis(500);
/// How often the dashboard describes the verification surface again.
const SURFACE_EVERY: Duration = Duration::from_secs(10);

pub fn run(cwd: &Path, config: Option<&Path>, env: &Environment) -> std::io::Result<()> {
    let layout = ralph_base::state::Layout::workspace(env, cwd);
    // The surface is described at most every SURFACE_EVERY, not at every redraw.
    let described: std::cell::RefCell<
        Option<(std::time::Instant, ralph_surface::surface::Surface)>,
    > = std::cell::RefCell::new(None);
    let gather = || -> std::io::Result<crate::overview::Status> {
        let mut project =
            Project::open(cwd, config).map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut described = described.borrow_mut();
        let stale = described
            .as_ref()
            .is_none_or(|(at, _)| at.elapsed() >= SURFACE_EVERY);
        if stale && !ralph_loop::loops::list(&layout).is_empty() {
            if let Ok(s) = ralph_surface::surface::of_project(&mut project, env) {
                *described = Some((std::time::Instant::now(), s));
            }
        }
        Ok(crate::overview::gather(
            &project.config,
            project.describe_config(),
            &layout,
            described.as_ref().map(|(_, s)| s),
        ))
    };
    let mut app = App::new(gather()?, !env.no_color, ralph_runner::results::now_ms());
    // init() enters raw mode and the alternate screen and installs a panic hook that restores
    // the terminal; restore() below covers every other way out.
    let mut terminal = ratatui::init();
    // SIGTERM or SIGHUP from outside: kill any re-run's gates, restore the terminal, exit.
    ralph_base::signals::before_exit(ratatui::restore);
    ralph_base::signals::install();
    let result = (|| -> std::io::Result<()> {
        while !app.quit {
            terminal.draw(|f| ui::draw(f, &app))?;
            if event::poll(REFRESH)? {
                if let Event::Key(k) = event::read()? {
                    if k.kind != KeyEventKind::Press {
                        continue;
                    }
                    let ch = match k.code {
                        KeyCode::Char(c) => c,
                        KeyCode::Down => '↓',
                        KeyCode::Up => '↑',
                        KeyCode::Enter => '\n',
                        KeyCode::Tab => '\t',
                        KeyCode::Esc => 'q',
                        _ => continue,
                    };
                    match app.key(ch, k.modifiers.contains(KeyModifiers::CONTROL)) {
                        Action::None => {}
                        Action::Rerun => {
                            app.rerun = Some(start_rerun(
                                cwd.to_path_buf(),
                                config.map(Path::to_path_buf),
                                env.clone(),
                            ))
                        }
                        Action::CancelLoop(file) => {
                            let who = ralph_loop::journal::who(env);
                            let key = ralph_loop::loops::key(Path::new(&file));
                            let cancelled = crate::commands::person::only_a_person(
                                &layout,
                                env,
                                "loop cancel",
                                &key,
                            )
                            .map_err(|e| e.to_string())
                            .and_then(|()| {
                                ralph_loop::loops::cancel(
                                    &layout,
                                    Path::new(&file),
                                    &format!("{who}, from the dashboard"),
                                )
                                .map_err(|e| e.to_string())
                            });
                            app.message = Some(match cancelled {
                                Ok(()) => format!("cancelled the loop in {file}"),
                                Err(e) => format!("cannot cancel {file}: {e}"),
                            })
                        }
                    }
                }
            }
            if let Ok(st) = gather() {
                app.refresh(st, ralph_runner::results::now_ms());
            }
        }
        Ok(())
    })();
    ratatui::restore();
    result
}

/// Runs every check-phase gate on a worker thread, counting progress as gates finish. Results
/// are recorded like any check, so the gate list updates on the next refresh.
fn start_rerun(cwd: PathBuf, config: Option<PathBuf>, env: Environment) -> Arc<Mutex<Rerun>> {
    let progress = Arc::new(Mutex::new(Rerun::default()));
    let shared = Arc::clone(&progress);
    std::thread::spawn(move || {
        let fail = |e: String| {
            let mut p = shared.lock().unwrap_or_else(|e| e.into_inner());
            p.error = Some(e);
            p.finished = true;
        };
        let mut project = match Project::open(&cwd, config.as_deref()) {
            Ok(p) => p,
            Err(e) => return fail(e.to_string()),
        };
        let files = match project.all_files() {
            Ok(f) => f,
            Err(e) => return fail(e.to_string()),
        };
        let plan = project.plan(&files, &files, Phase::Check, &[]);
        let cfg = &project.config;
        shared.lock().unwrap_or_else(|e| e.into_inner()).total = plan.gates.len();
        let limits = ralph_runner::runner::Limits {
            jobs: cfg.settings.jobs,
            deadline: None,
            cargo_target: None,
            private_tmp: false,
            untracked: None,
            observe: false,
            checkout_of: None,
        };
        ralph_runner::results::run_recorded(
            cfg,
            &plan,
            &limits,
            &env,
            ralph_runner::runner::Reuse::Everything,
            Phase::Check,
            &|e| {
                if let ralph_runner::runner::Event::Finished(r) = e {
                    let mut p = shared.lock().unwrap_or_else(|e| e.into_inner());
                    p.done += 1;
                    if r.counts_as_failure(env.strict()) {
                        p.failed += 1;
                    }
                }
            },
        );
        shared.lock().unwrap_or_else(|e| e.into_inner()).finished = true;
    });
    progress
}
