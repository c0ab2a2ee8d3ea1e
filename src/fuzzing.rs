//! Entry points for the coverage-guided fuzz targets in `fuzz/`. Each takes raw bytes, runs
//! one parser the way ralph-gate runs it on untrusted input, and panics only when an invariant
//! the rest of the program relies on is broken, so a fuzzer crash is always a real finding.
//! The same functions run in the unit tests below on the checked-in regression inputs.

use std::path::Path;

/// Hook input from Claude Code's stdin: a value or an error whose message names where the
/// JSON broke, and the edited path, if any, is never empty.
pub fn hook_input(bytes: &[u8]) {
    match crate::hook::protocol::parse(bytes) {
        Ok(input) => {
            if let Some(path) = crate::hook::post_tool_use::edited_path(&input) {
                assert!(!path.as_os_str().is_empty(), "an empty edited path");
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// A transcript tail, as JSON lines: whatever is found is a single promise with whitespace
/// collapsed, taken from text that ends with the closing tag.
pub fn transcript(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let Some(last) = crate::hook::promise::last_message_text(&lines) else {
        return;
    };
    if let Some(promise) = crate::hook::promise::extract(&last) {
        assert!(!promise.is_empty(), "an empty promise");
        assert!(
            last.trim_end().ends_with("</promise>"),
            "promise not at end"
        );
        assert!(
            !promise.contains("</promise>"),
            "a promise holding its own closing tag"
        );
        assert_eq!(
            promise,
            crate::hook::promise::normalize(&promise),
            "promise not normalised"
        );
    }
}

/// A loop state file: what parses renders back to the same state, and the two updates a stop
/// makes (the next iteration, the claiming session) survive a write and a re-read.
pub fn loop_state(bytes: &[u8]) {
    use crate::loop_state::LoopState;
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(mut state) = LoopState::parse(text) else {
        return;
    };
    let again = LoopState::parse(&state.render()).expect("a rendered state parses");
    assert_eq!(again, state, "render/parse round trip");

    let next = state.iteration.saturating_add(1);
    state.set_iteration(next);
    let reread = LoopState::parse(&state.render()).expect("an updated state parses");
    assert_eq!(reread.iteration, next, "iteration lost in a rewrite");
    assert_eq!(
        reread.prompt(),
        state.prompt(),
        "prompt changed by a rewrite"
    );

    // A session id of hostile bytes (it comes from the hook input) must not add or change
    // any other field; the prompt, which may hold newlines and `---`, is used as one.
    let mut claimed = reread.clone();
    claimed.claim(reread.prompt());
    let after = LoopState::parse(&claimed.render()).expect("a claimed state parses");
    assert_eq!(after.iteration, next, "claim changed the iteration");
    assert_eq!(
        after.max_iterations, reread.max_iterations,
        "claim changed the limit"
    );
    assert_eq!(after.active, reread.active, "claim changed `active`");
    assert_eq!(
        after.completion_promise, reread.completion_promise,
        "claim changed the promise"
    );
    assert_eq!(after.prompt(), reread.prompt(), "claim changed the prompt");
}

/// `ralph.toml` text: a config, or an error that says where in the file it is.
pub fn config(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let path = Path::new("ralph.toml");
    match crate::config::parse(path, text.to_string()) {
        Ok(file) => {
            let resolved = crate::config::resolve(
                std::path::PathBuf::from("/project"),
                Some(file),
                &mut Vec::new,
            );
            if let Err(e) = resolved {
                assert!(!e.to_string().is_empty());
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with("ralph.toml:"),
                "a config error that does not say where: {msg}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    //! The fuzzers' seed inputs (`fuzz/seeds/<target>/`) and every input they ever crashed on
    //! (`fuzz/regressions/<target>/`) are replayed here, so a finding stays fixed without the
    //! fuzzer and the seeds stay valid examples of what they stand for.

    use std::path::{Path, PathBuf};

    fn inputs(dir: &Path) -> Vec<PathBuf> {
        match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .map(|e| e.expect("a directory entry").path())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => panic!("cannot read {}: {e}", dir.display()),
        }
    }

    fn replay(target: &str, run: fn(&[u8])) {
        let fuzz = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        let seeds = inputs(&fuzz.join("seeds").join(target));
        assert!(!seeds.is_empty(), "no seed inputs for fuzz target {target}");
        for path in seeds
            .iter()
            .chain(&inputs(&fuzz.join("regressions").join(target)))
        {
            let bytes = std::fs::read(path).expect("a fuzz input");
            run(&bytes);
        }
    }

    #[test]
    fn hook_input_regressions() {
        replay("hook_input", super::hook_input);
    }

    #[test]
    fn transcript_regressions() {
        replay("transcript", super::transcript);
    }

    #[test]
    fn loop_state_regressions() {
        replay("loop_state", super::loop_state);
    }

    #[test]
    fn config_regressions() {
        replay("config", super::config);
    }
}
