//! The `integrity` result of `check --base`: the surface comparison as one more gate result,
//! so that every format (human, JSON, JUnit, GitHub annotations) reports it as it reports
//! a gate, each weakening a `file:line: message` line.

use ralph_base::text::plural;
use ralph_config::{Config, Phase};
use ralph_runner::runner::{GateResult, GateStatus};
use ralph_surface::pin;
use ralph_surface::surface::{self, base::Against, Finding};

/// Its place in the report: after every gate.
pub const INDEX: usize = usize::MAX;
pub const NAME: &str = "integrity";

/// The comparison with the base, the gates' changes included (by the pin's rules: a gate
/// added is stronger, anything else that moves a stop gate is weaker).
pub fn compare(mut a: Against, now: &Config, phase: Phase) -> Against {
    let Some(base) = &a.config else { return a };
    let (was, is) = (pin::of_phase(base, phase), pin::of_phase(now, phase));
    let file = now
        .file
        .as_deref()
        .map(|p| surface::text(p.strip_prefix(&now.root).unwrap_or(p)))
        .unwrap_or_default();
    for c in pin::compare(&was, &is) {
        let finding = Finding {
            file: file.clone(),
            line: 0,
            what: c.to_string(),
        };
        match c {
            pin::Change::Added(_) => a.comparison.stronger.push(finding),
            pin::Change::Version { .. } => {}
            _ => a.comparison.weaker.push(finding),
        }
    }
    a
}

pub fn result(a: &Against) -> GateResult {
    let c = &a.comparison;
    let weak = !c.weaker.is_empty();
    let severity = if a.warn_only { "warning" } else { "error" };
    let mut output: String = c
        .weaker
        .iter()
        .map(|f| match (f.file.is_empty(), f.line) {
            (false, n) if n > 0 => format!("{}:{n}: {severity}: {}\n", f.file, f.what),
            _ => format!("{f}\n"),
        })
        .collect();
    if weak {
        output.push_str(&format!(
            "{} since {}: a person accepts {} by merging with a reviewer's approval, or the base's ralph.toml sets [integrity] on_weakening = \"warn\"\n",
            plural(c.weaker.len(), "weakening", "weakenings"),
            a.rev,
            if c.weaker.len() == 1 { "it" } else { "them" },
        ));
    }
    for f in &c.stronger {
        output.push_str(&format!("stronger: {f}\n"));
    }
    GateResult {
        gate: INDEX,
        name: NAME.to_string(),
        status: if weak && !a.warn_only {
            GateStatus::Fail
        } else {
            GateStatus::Pass
        },
        files: 0,
        runs: 1,
        command: format!("ralph-gate check --base {}", a.rev),
        output,
        exit_code: Some(i32::from(weak && !a.warn_only)),
        reason: (weak && a.warn_only).then(|| {
            format!(
                "{} since {} (warn only)",
                plural(c.weaker.len(), "weakening", "weakenings"),
                a.rev
            )
        }),
        ..GateResult::default()
    }
}
