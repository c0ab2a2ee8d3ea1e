//! Property tests: whatever bytes arrive, the parsers answer with a value or an error, never a
//! panic. (Hostile file names are checked end to end in tests/integration/properties.rs.)

use proptest::prelude::*;
use std::path::Path;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn hook_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = ralph_hook::hook::protocol::parse(&bytes);
    }

    #[test]
    fn json_shaped_hook_input_never_panics(s in r#"\{("[a-z_]{1,20}": ?("[^"]{0,20}"|[0-9]{1,5}|true|null|\[\]|\{\}), ?){0,6}\}"#) {
        let _ = ralph_hook::hook::protocol::parse(s.as_bytes());
    }

    #[test]
    fn loop_state_never_panics(s in "(---\n)?([a-z_]{0,16}: ?[^\n]{0,24}\n){0,8}(---\n)?[^\0]{0,64}") {
        if let Ok(state) = ralph_loop::loops::LoopState::parse(&s) {
            // Whatever parsed renders back to text that parses to the same state.
            let again = ralph_loop::loops::LoopState::parse(&state.render()).expect("a rendered state parses");
            prop_assert_eq!(again, state);
        }
    }

    #[test]
    fn promise_extraction_never_panics(s in "[^\0]{0,200}(<promise>[^\0]{0,40}</promise>)?[ \n]{0,3}") {
        if let Some(p) = ralph_hook::hook::promise::extract(&s) {
            prop_assert!(!p.is_empty());
            prop_assert!(s.trim_end().ends_with("</promise>"));
        }
    }

    #[test]
    fn config_loader_never_panics(s in "[\\[\\]a-z_=\" \n{}.,*0-9]{0,300}") {
        let _ = ralph_config::parse(Path::new("ralph.toml"), s);
    }

    #[test]
    fn transcript_lines_never_panic(lines in proptest::collection::vec("[^\n]{0,120}", 0..12)) {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let _ = ralph_hook::hook::promise::last_message_text(&refs);
    }

    /// The whole stop decision (`fuzzing::stop_decision`: the loop's judgement, then every
    /// kind of stop's plan) on loop files that parse.
    #[test]
    fn every_stop_plan_keeps_its_rules(
        head in proptest::collection::vec(any::<u8>(), 4),
        statuses in proptest::collection::vec(any::<u8>(), 0..7),
        iteration in 1u64..12,
        max in 0u64..12,
        promise in proptest::option::of("[A-Z]{1,8}"),
    ) {
        let promise = promise.map(|p| format!("completion_promise: \"{p}\"\n")).unwrap_or_default();
        let state = format!("---\nactive: true\niteration: {iteration}\nmax_iterations: {max}\n{promise}---\nFix it.\n");
        let mut bytes = head.clone();
        bytes[3] = statuses.len() as u8;
        bytes.extend(&statuses);
        bytes.extend(state.as_bytes());
        crate::fuzzing::stop_decision(&bytes);
    }
}
