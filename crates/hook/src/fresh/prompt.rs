//! The prompt of each `loop run` iteration: the same prompt every time, and, after the first,
//! a short section from ralph-gate: the last iteration's outcome in one line and the failing
//! stop gates with their errors. Nothing else of the old conversation: the agent starts
//! afresh, its memory in the files and git.

/// What the last iteration left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    pub iteration: u64,
    /// One line: what ralph-gate decided and why.
    pub outcome: String,
    /// The failing gates' errors (empty when none failed).
    pub errors: String,
    /// The promise that ends the run.
    pub promise: String,
}

/// Pure: the prompt of the next iteration.
pub fn next(prompt: &str, left: Option<&Left>) -> String {
    let Some(left) = left else {
        return prompt.to_string();
    };
    let mut out = format!(
        "{}\n\n---\nralph-gate, after iteration {}: {}\n",
        prompt.trim_end(),
        left.iteration,
        left.outcome
    );
    if !left.errors.trim().is_empty() {
        out.push_str("\nThe stop gates that fail:\n");
        out.push_str(left.errors.trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "\nThe run ends when every stop gate passes and your final message ends with <promise>{}</promise> (only when it is true).\n",
        left.promise
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_prompt_is_the_prompt_and_later_ones_carry_what_was_left() {
        assert_eq!(next("Fix it.", None), "Fix it.");
        let left = Left {
            iteration: 2,
            outcome: "promise refused: 1 gate is still failing (python)".into(),
            errors: "--- python\nSyntaxError: invalid syntax\n".into(),
            promise: "COMPLETE".into(),
        };
        let p = next("Fix it.\n", Some(&left));
        assert!(p.starts_with("Fix it.\n\n---\nralph-gate, after iteration 2: promise refused"));
        assert!(p.contains("SyntaxError: invalid syntax"));
        assert!(p.ends_with("<promise>COMPLETE</promise> (only when it is true).\n"));
    }
}
