//! JUnit XML: one testcase per gate, the shape CI systems (GitLab, Jenkins, GitHub test
//! reporters) read.

use super::{RunInfo, Summary};
use crate::runner::{GateResult, GateStatus};
use ralph_base::text::strip_ansi;

pub fn render(results: &[GateResult], info: &RunInfo) -> String {
    let s = Summary::of(results, info.ci);
    let skipped = results
        .iter()
        .filter(|r| {
            matches!(r.status, GateStatus::Skipped | GateStatus::NoFiles)
                && !r.counts_as_failure(info.ci)
        })
        .count();
    let secs = info.duration.as_secs_f64();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x.push_str(&format!(
        "<testsuites name=\"ralph-gate\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{skipped}\" time=\"{secs:.3}\">\n",
        results.len(),
        s.failing
    ));
    x.push_str(&format!(
        "  <testsuite name=\"ralph-gate\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{skipped}\" time=\"{secs:.3}\">\n",
        results.len(),
        s.failing
    ));
    for r in results {
        x.push_str(&format!(
            "    <testcase name=\"{}\" classname=\"ralph-gate\" time=\"{:.3}\">\n",
            escape(&r.name),
            r.duration.as_secs_f64()
        ));
        let message = r
            .reason
            .clone()
            .or_else(|| r.exit_code.map(|c| format!("exit {c}")))
            .unwrap_or_else(|| r.status.label().to_string());
        if r.counts_as_failure(info.ci) {
            x.push_str(&format!(
                "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                r.status.label(),
                escape(&message),
                escape(&super::diagnostics::within(
                    &strip_ansi(&r.output),
                    info.output_limit
                ))
            ));
        } else if matches!(r.status, GateStatus::Skipped | GateStatus::NoFiles) {
            x.push_str(&format!(
                "      <skipped message=\"{}\"/>\n",
                escape(&message)
            ));
        }
        x.push_str(&format!(
            "      <system-out>{}</system-out>\n",
            escape(&format!("$ {} ({} files)", r.command, r.files))
        ));
        x.push_str("    </testcase>\n");
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

/// Escapes for XML 1.0 text and attributes, dropping characters XML cannot hold at all.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markup_and_drops_control_characters() {
        assert_eq!(
            escape("a<b>&\"'\x01"),
            "a&lt;b&gt;&amp;&quot;&apos;\u{FFFD}"
        );
    }
}
