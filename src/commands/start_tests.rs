//! `start-tests` (hidden): the background job `loop start` starts, which takes the tests the
//! stop gates run on the loop's start tree while the agent works.

use super::AppError;
use ralph_base::env::Environment;
use ralph_base::state::Layout;
use std::path::Path;

pub fn run(
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
    loop_file: &str,
) -> Result<u8, AppError> {
    let layout = Layout::workspace(env, cwd);
    // Nobody reads its output: the stop that needs the tests takes them itself when this
    // job could not.
    let _ = ralph_hook::hook::stop::start_tests::in_background(env, &layout, config, loop_file);
    Ok(ralph_base::exit::SUCCESS)
}

/// Starts the job for the loop at `path`, in the background; a job that cannot start only
/// leaves the work to the loop's end.
pub fn start(cwd: &Path, config: Option<&Path>, path: &Path) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = ralph_base::child::command(exe);
    if let Some(c) = config {
        command.arg("--config").arg(c);
    }
    command
        .arg("start-tests")
        .arg(ralph_loop::loops::key(path))
        .current_dir(cwd);
    let _ = ralph_base::child::detach(&mut command);
}
