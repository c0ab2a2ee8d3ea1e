//! Paths in a run's output made relative to the project root. A tool run in `packages/a`
//! prints `src/index.ts(1,7): error ...`; two packages with a broken `src/index.ts` must be
//! told apart, so a leading path that names a file in the run's folder gets the folder in
//! front (`./main.go` as `app/main.go`, after go vet's `vet: ` too). Only paths that exist
//! there are rewritten: other text is left as it was. Absolute paths into the project (node
//! prints them, in stack traces too) lose the root, wherever they are in a line.

use std::path::Path;

/// `output` of a run in `dir` (relative to `root`), with leading file paths made relative to
/// the root: `path:line`, `path(line,col)` and cargo's `--> path:line`.
pub fn relative_to_root(output: &str, root: &Path, dir: &Path) -> String {
    let prefix = format!("{}/", root.display());
    let mut out = String::with_capacity(output.len() + 64);
    for line in output.split_inclusive('\n') {
        let line = line.replace(&prefix, "");
        if dir.as_os_str().is_empty() {
            out.push_str(&line);
        } else {
            out.push_str(&rewrite_line(&line, root, dir));
        }
    }
    out
}

/// `output` with the temporary folder its run had to itself (`private`, new for each run)
/// named `$TMPDIR`: a failure that names it (pytest's `tmp_path`) reads the same in every
/// run, so a baseline's old failure stays old and a loop's repeated failure is the same.
pub fn private_tmp_named(output: String, private: Option<&Path>) -> String {
    let Some(dir) = private else {
        return output;
    };
    let mut out = output;
    let real = dir.canonicalize().ok();
    for form in [Some(dir), real.as_deref()].into_iter().flatten() {
        if let Some(name) = form.to_str().filter(|n| out.contains(*n)) {
            out = out.replace(name, "$TMPDIR");
        }
    }
    out
}

/// What may stand before a leading path: cargo's arrow, go vet's name for itself.
const LEADS: [&str; 2] = ["--> ", "vet: "];

fn rewrite_line(line: &str, root: &Path, dir: &Path) -> String {
    let indent_len = line.len() - line.trim_start().len();
    let (indent, rest) = line.split_at(indent_len);
    let (arrow, rest) = LEADS
        .iter()
        .find_map(|l| rest.strip_prefix(l).map(|r| (*l, r)))
        .unwrap_or(("", rest));
    let end = rest
        .find(|c: char| c == ':' || c == '(' || c.is_whitespace())
        .unwrap_or(0);
    let path = &rest[..end];
    let follows_position = rest[end..]
        .chars()
        .nth(1)
        .is_some_and(|c| c.is_ascii_digit());
    if end == 0
        || !follows_position
        || Path::new(path).is_absolute()
        || !root.join(dir).join(path).is_file()
    {
        return line.to_string();
    }
    let path = path.strip_prefix("./").unwrap_or(path);
    format!(
        "{indent}{arrow}{}{}",
        dir.join(path).display(),
        &rest[end..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_own_temporary_folder_is_named_tmpdir() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            "tmp_path = PosixPath('{}/pytest-0/t0')
",
            dir.path().display()
        );
        let named = private_tmp_named(text.clone(), Some(dir.path()));
        assert_eq!(
            named,
            "tmp_path = PosixPath('$TMPDIR/pytest-0/t0')
"
        );
        assert_eq!(private_tmp_named(text.clone(), None), text);
    }

    #[test]
    fn existing_leading_paths_get_the_folder() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("pkg/src")).unwrap();
        std::fs::write(d.path().join("pkg/src/index.ts"), "").unwrap();
        std::fs::write(d.path().join("pkg/src/lib.rs"), "").unwrap();
        let out = relative_to_root(
            "src/index.ts(1,7): error TS2322: bad\n  --> src/lib.rs:3:5\nsrc/lib.rs:3:5: error\nnote: src/index.ts(1,1) mentioned\nother.ts(1,1): error\n",
            d.path(),
            Path::new("pkg"),
        );
        assert_eq!(
            out,
            "pkg/src/index.ts(1,7): error TS2322: bad\n  --> pkg/src/lib.rs:3:5\npkg/src/lib.rs:3:5: error\nnote: src/index.ts(1,1) mentioned\nother.ts(1,1): error\n"
        );
    }

    #[test]
    fn go_vet_s_and_node_s_paths_come_out_relative_to_the_root() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("app")).unwrap();
        std::fs::write(d.path().join("app/main.go"), "").unwrap();
        let out = relative_to_root(
            "./main.go:10:24: bad\nvet: ./main.go:3:1: undefined: x\n",
            d.path(),
            Path::new("app"),
        );
        assert_eq!(
            out,
            "app/main.go:10:24: bad\nvet: app/main.go:3:1: undefined: x\n"
        );
        let abs = format!(
            "{0}/app.js:1\n    at Object.<anonymous> ({0}/lib/x.js:2:3)\n",
            d.path().display()
        );
        assert_eq!(
            relative_to_root(&abs, d.path(), Path::new("")),
            "app.js:1\n    at Object.<anonymous> (lib/x.js:2:3)\n"
        );
    }
}
