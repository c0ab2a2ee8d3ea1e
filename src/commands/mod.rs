//! One module per subcommand: glue between the project, the planner, the runner and a reporter.

pub mod check;
pub mod gates;
pub mod hook;
pub mod init;
pub mod loops;

use crate::app::AppError;
use crate::config::Config;

/// Rejects `--gate` names the config does not define, listing the ones it does.
fn known_gates(config: &Config, wanted: &[String]) -> Result<(), AppError> {
    for name in wanted {
        if !config.gates.iter().any(|g| &g.name == name) {
            let known: Vec<&str> = config.gates.iter().map(|g| g.name.as_str()).collect();
            return Err(AppError::Usage(format!(
                "unknown gate `{name}`; the gates are: {}",
                if known.is_empty() {
                    "(none)".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    Ok(())
}
