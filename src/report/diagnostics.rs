//! Diagnostics (file, line, column, severity, message) read back out of the tools' own
//! output, for annotations: tsc, `py_compile` tracebacks, ShellCheck (gcc and tty formats),
//! cargo/rustc (short and human), go vet and anything else printing `file:line:col: message`.
//! Pure: text in, diagnostics out.

use regex::Regex;
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: u32,
    pub col: Option<u32>,
    pub severity: Severity,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn of(word: &str) -> Severity {
        match word.to_ascii_lowercase().as_str() {
            "warning" | "warn" | "note" | "info" | "style" | "help" | "notice" => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("fixed patterns compile"))
}

/// Every diagnostic found in `output`, in order, without repeats.
pub fn parse(output: &str) -> Vec<Diagnostic> {
    static TSC: OnceLock<Regex> = OnceLock::new();
    static TSC_PRETTY: OnceLock<Regex> = OnceLock::new();
    static GCC: OnceLock<Regex> = OnceLock::new();
    static RUST_HEAD: OnceLock<Regex> = OnceLock::new();
    static RUST_AT: OnceLock<Regex> = OnceLock::new();
    static PY_AT: OnceLock<Regex> = OnceLock::new();
    static PY_ERROR: OnceLock<Regex> = OnceLock::new();
    static SC_AT: OnceLock<Regex> = OnceLock::new();
    static SC_CODE: OnceLock<Regex> = OnceLock::new();
    let tsc = re(
        &TSC,
        r"^(?P<f>[^\s(][^(]*)\((?P<l>\d+),(?P<c>\d+)\): (?P<s>error|warning) (?P<m>TS\d+: .*)$",
    );
    let tsc_pretty = re(
        &TSC_PRETTY,
        r"^(?P<f>[^\s:][^:]*):(?P<l>\d+):(?P<c>\d+) - (?P<s>error|warning) (?P<m>TS\d+: .*)$",
    );
    let gcc = re(
        &GCC,
        r"^(?P<f>[^\s:][^:]*):(?P<l>\d+):(?:(?P<c>\d+):)? (?:(?P<s>error|warning|note|info|style|fatal error)(?:\[[^\]]+\])?: )?(?P<m>.+)$",
    );
    let rust_head = re(
        &RUST_HEAD,
        r"^(?P<s>error|warning)(?:\[[A-Z]\d+\])?: (?P<m>.+)$",
    );
    let rust_at = re(&RUST_AT, r"^\s*--> (?P<f>[^:]+):(?P<l>\d+):(?P<c>\d+)$");
    let py_at = re(&PY_AT, r#"^\s*File "(?P<f>[^"]+)", line (?P<l>\d+)"#);
    let py_error = re(
        &PY_ERROR,
        r"^(?P<m>[A-Za-z_]*(?:Error|Exception|Warning)(?::.*)?)$",
    );
    let sc_at = re(&SC_AT, r"^In (?P<f>.+) line (?P<l>\d+):$");
    let sc_code = re(&SC_CODE, r"\^-*\s*(?P<m>SC\d+ \((?P<s>\w+)\): .*)$");

    let mut out: Vec<Diagnostic> = Vec::new();
    let mut push = |d: Diagnostic| {
        if !out.contains(&d) {
            out.push(d);
        }
    };
    let num = |s: Option<regex::Match<'_>>| s.and_then(|m| m.as_str().parse().ok());
    let mut rust_pending: Option<(Severity, String)> = None;
    let mut py_at_line: Option<(String, u32)> = None;
    let mut sc_at_line: Option<(String, u32)> = None;
    for raw in output.lines() {
        let line = raw.trim_end();
        if let Some(c) = tsc.captures(line).or_else(|| tsc_pretty.captures(line)) {
            push(Diagnostic {
                file: c["f"].trim().to_string(),
                line: num(c.name("l")).unwrap_or(1),
                col: num(c.name("c")),
                severity: Severity::of(&c["s"]),
                message: c["m"].to_string(),
            });
            continue;
        }
        if let Some(c) = py_at.captures(line) {
            py_at_line = Some((c["f"].to_string(), num(c.name("l")).unwrap_or(1)));
            continue;
        }
        if let (Some((f, l)), Some(c)) = (&py_at_line, py_error.captures(line)) {
            push(Diagnostic {
                file: f.clone(),
                line: *l,
                col: None,
                severity: Severity::Error,
                message: c["m"].to_string(),
            });
            py_at_line = None;
            continue;
        }
        if let Some(c) = sc_at.captures(line) {
            sc_at_line = Some((c["f"].to_string(), num(c.name("l")).unwrap_or(1)));
            continue;
        }
        if let (Some((f, l)), Some(c)) = (&sc_at_line, sc_code.captures(line)) {
            push(Diagnostic {
                file: f.clone(),
                line: *l,
                col: None,
                severity: Severity::of(&c["s"]),
                message: c["m"].to_string(),
            });
            continue;
        }
        if let Some(c) = rust_head.captures(line) {
            rust_pending = Some((Severity::of(&c["s"]), c["m"].to_string()));
            continue;
        }
        if let (Some((s, m)), Some(c)) = (&rust_pending, rust_at.captures(line)) {
            push(Diagnostic {
                file: c["f"].to_string(),
                line: num(c.name("l")).unwrap_or(1),
                col: num(c.name("c")),
                severity: *s,
                message: m.clone(),
            });
            rust_pending = None;
            continue;
        }
        if let Some(c) = gcc.captures(line) {
            let file = c["f"].trim();
            // `path:line: text` needs a path that looks like one, or prose with colons
            // ("Note: 3 files") would be taken for a location.
            if !file.contains('.') && !file.contains('/') {
                continue;
            }
            push(Diagnostic {
                file: file.to_string(),
                line: num(c.name("l")).unwrap_or(1),
                col: num(c.name("c")),
                severity: c
                    .name("s")
                    .map_or(Severity::Error, |s| Severity::of(s.as_str())),
                message: c["m"].to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Diagnostic {
        let d = parse(text);
        assert_eq!(d.len(), 1, "{text}: {d:?}");
        d.into_iter().next().unwrap()
    }

    #[test]
    fn each_tools_format() {
        let d =
            one("src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.");
        assert_eq!(
            (d.file.as_str(), d.line, d.col, d.severity),
            ("src/a.ts", 3, Some(7), Severity::Error)
        );
        assert!(d.message.starts_with("TS2322: "));
        let d = one("web/src/m1.ts:12:5 - error TS2304: Cannot find name 'x'.");
        assert_eq!(
            (d.file.as_str(), d.line, d.col),
            ("web/src/m1.ts", 12, Some(5))
        );

        let py = "  File \"pkg/bad.py\", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax\n";
        let d = one(py);
        assert_eq!(
            (d.file.as_str(), d.line, d.message.as_str()),
            ("pkg/bad.py", 1, "SyntaxError: invalid syntax")
        );

        let d = one("scripts/run.sh:4:8: warning: Double quote to prevent globbing and word splitting. [SC2086]");
        assert_eq!(
            (d.file.as_str(), d.line, d.col, d.severity),
            ("scripts/run.sh", 4, Some(8), Severity::Warning)
        );
        let tty = "\nIn scripts/run.sh line 4:\necho $x\n     ^-- SC2086 (info): Double quote to prevent globbing.\n";
        let d = one(tty);
        assert_eq!(
            (d.file.as_str(), d.line, d.severity),
            ("scripts/run.sh", 4, Severity::Warning)
        );

        let d = one("src/lib.rs:3:5: error[E0308]: mismatched types");
        assert_eq!(
            (d.file.as_str(), d.line, d.col, d.message.as_str()),
            ("src/lib.rs", 3, Some(5), "mismatched types")
        );
        let human = "error[E0425]: cannot find value `y` in this scope\n --> src/main.rs:2:13\n  |\n2 |     let x = y;\n";
        let d = one(human);
        assert_eq!(
            (d.file.as_str(), d.line, d.col, d.message.as_str()),
            (
                "src/main.rs",
                2,
                Some(13),
                "cannot find value `y` in this scope"
            )
        );

        let d = one("./cmd/main.go:10:2: fmt.Printf format %d has arg s of wrong type string");
        assert_eq!(
            (d.file.as_str(), d.line, d.severity),
            ("./cmd/main.go", 10, Severity::Error)
        );
    }

    #[test]
    fn prose_is_not_a_location() {
        assert!(parse("Note: 3 files checked\nerror: could not compile `x`\nFAILED\n").is_empty());
    }
}
