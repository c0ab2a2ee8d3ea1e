//! GitHub Actions output: the human report of each gate in a `::group::`, and one
//! `::error`/`::warning` workflow command per diagnostic the gate's tool printed (a failing
//! gate whose output has none gets one annotation with its first lines). And the Markdown job
//! summary for `GITHUB_STEP_SUMMARY`.

use super::diagnostics::{self, Severity};
use super::{RunInfo, Summary};
use crate::runner::{GateResult, GateStatus};
use ralph_base::text::{duration, strip_ansi};

/// `%`, CR and LF in a message, as GitHub's workflow commands require.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value: the message escapes plus `:` and `,`.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The annotations of one gate.
pub fn annotations(r: &GateResult, ci: bool) -> Vec<String> {
    let output = strip_ansi(&r.output);
    let found = diagnostics::parse(&output);
    let failing = r.counts_as_failure(ci);
    let mut out: Vec<String> = found
        .iter()
        .map(|d| {
            let kind = match (d.severity, failing) {
                (Severity::Error, true) => "error",
                _ => "warning",
            };
            let mut props = format!("file={},line={}", escape_property(&d.file), d.line);
            if let Some(c) = d.col {
                props.push_str(&format!(",col={c}"));
            }
            props.push_str(&format!(",title={}", escape_property(&r.name)));
            format!("::{kind} {props}::{}", escape_data(&d.message))
        })
        .collect();
    if failing && !out.iter().any(|a| a.starts_with("::error")) {
        let why = r
            .reason
            .clone()
            .or_else(|| r.exit_code.map(|c| format!("exit {c}")))
            .unwrap_or_else(|| r.status.label().to_string());
        let head: String = output.lines().take(10).collect::<Vec<_>>().join("\n");
        out.push(format!(
            "::error title={}::{}",
            escape_property(&r.name),
            escape_data(&format!("{} {why}: {}\n{head}", r.name, r.command))
        ));
    }
    out
}

/// The whole report for a workflow log.
pub fn render(results: &[GateResult], info: &RunInfo, human: &str) -> String {
    let mut out = String::new();
    out.push_str("::group::ralph-gate report\n");
    out.push_str(human);
    if !human.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("::endgroup::\n");
    for r in results {
        if r.status == GateStatus::NoFiles {
            continue;
        }
        if !r.output.trim().is_empty() {
            out.push_str(&format!(
                "::group::{} ({})\n{}\n::endgroup::\n",
                escape_data(&r.name),
                r.status.label(),
                super::diagnostics::within(strip_ansi(&r.output).trim_end(), info.output_limit)
            ));
        }
        for a in annotations(r, info.ci) {
            out.push_str(&a);
            out.push('\n');
        }
    }
    out
}

/// The Markdown job summary: a table of gates and each failure's first lines.
pub fn summary(results: &[GateResult], info: &RunInfo) -> String {
    let s = Summary::of(results, info.ci);
    let mut out =
        format!(
        "## ralph-gate: {}\n\n| gate | status | time | files | result |\n|---|---|---:|---:|---|\n",
        if s.ok() { "every gate passes" } else { "failing" }
    );
    for r in results {
        let mark = match (r.status, r.counts_as_failure(info.ci)) {
            (_, true) => "❌",
            (GateStatus::Pass, _) => "✅",
            (GateStatus::NoFiles, _) => "➖",
            _ => "⚠️",
        };
        out.push_str(&format!(
            "| {} | {mark} {} | {} | {} | {} |\n",
            r.name.replace('|', "\\|"),
            r.status.label(),
            duration(r.duration),
            r.files,
            if r.cached { "cached" } else { "fresh" }
        ));
    }
    for r in results.iter().filter(|r| r.counts_as_failure(info.ci)) {
        let first: String = strip_ansi(&r.output)
            .lines()
            .take(20)
            .collect::<Vec<_>>()
            .join("\n");
        out.push_str(&format!(
            "\n### {}\n\n`{}`\n\n```text\n{}\n```\n",
            r.name,
            r.command.replace('`', "'"),
            first.replace("```", "'''")
        ));
    }
    out.push_str(&format!(
        "\n{} in {}.\n",
        summary_line(&s),
        duration(info.duration)
    ));
    out
}

fn summary_line(s: &Summary) -> String {
    format!(
        "{} passed, {} failed, {} timed out, {} skipped, {} with no files",
        s.passed, s.failed, s.timed_out, s.skipped, s.no_files
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn gate(name: &str, status: GateStatus, output: &str) -> GateResult {
        GateResult {
            name: name.into(),
            status,
            output: output.into(),
            command: format!("{name} ."),
            files: 2,
            runs: 1,
            duration: Duration::from_millis(40),
            exit_code: (status == GateStatus::Fail).then_some(1),
            ..Default::default()
        }
    }

    fn info() -> RunInfo {
        RunInfo {
            ci: true,
            output_limit: 4000,
            duration: Duration::from_millis(90),
            config: None,
            presets: Vec::new(),
        }
    }

    #[test]
    fn escapes_follow_githubs_rules() {
        assert_eq!(escape_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn one_annotation_per_diagnostic_and_one_for_an_unparsed_failure() {
        let tsc = gate("tsc", GateStatus::Fail, "src/a.ts(3,7): error TS2322: bad, very bad\nsrc/b.ts(1,1): error TS1005: ';' expected.\n");
        let a = annotations(&tsc, true);
        assert_eq!(
            a,
            [
                "::error file=src/a.ts,line=3,col=7,title=tsc::TS2322: bad, very bad",
                "::error file=src/b.ts,line=1,col=1,title=tsc::TS1005: ';' expected."
            ]
        );
        let odd = gate("custom", GateStatus::Fail, "something broke\nbadly\n");
        let a = annotations(&odd, true);
        assert_eq!(a.len(), 1);
        assert!(
            a[0].starts_with("::error title=custom::custom exit 1: custom ."),
            "{a:?}"
        );
        assert!(a[0].contains("%0Asomething broke%0Abadly"), "{a:?}");
        // Warnings of a passing gate are warnings, and a pass says nothing else.
        let sc = gate(
            "shellcheck",
            GateStatus::Pass,
            "x.sh:1:1: note: Use $(...) [SC2006]\n",
        );
        assert_eq!(
            annotations(&sc, true),
            ["::warning file=x.sh,line=1,col=1,title=shellcheck::Use $(...) [SC2006]"]
        );
    }

    #[test]
    fn the_summary_is_a_table_with_the_failures_first_lines() {
        let results = [
            gate(
                "python",
                GateStatus::Fail,
                "  File \"a.py\", line 1\nSyntaxError: invalid syntax\n",
            ),
            GateResult {
                cached: true,
                ..gate("shellcheck", GateStatus::Pass, "")
            },
            gate("go", GateStatus::NoFiles, ""),
        ];
        let md = summary(&results, &info());
        assert!(md.starts_with("## ralph-gate: failing\n"), "{md}");
        assert!(
            md.contains("| python | ❌ fail | 40ms | 2 | fresh |"),
            "{md}"
        );
        assert!(
            md.contains("| shellcheck | ✅ pass | 40ms | 2 | cached |"),
            "{md}"
        );
        assert!(
            md.contains(
                "### python\n\n`python .`\n\n```text\n  File \"a.py\", line 1\nSyntaxError"
            ),
            "{md}"
        );
        assert!(
            md.contains("1 passed, 1 failed, 0 timed out, 0 skipped, 1 with no files"),
            "{md}"
        );
    }
}
