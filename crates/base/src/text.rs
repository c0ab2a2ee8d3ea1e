//! Text helpers shared by every reporter: ANSI stripping and head-and-tail cutting.

/// Removes terminal escape sequences (CSI such as colours, OSC such as hyperlinks, charset
/// switches such as `tput sgr0`'s `ESC ( B`, and the other escapes), for machine formats and
/// for the agent: anstream's parser, the one clap's own output goes through.
pub fn strip_ansi(s: &str) -> String {
    anstream::adapter::strip_str(s).to_string()
}

/// `text` on one line, cut to `limit` characters with `…` where it was cut: between words
/// where one ends in the last third, so no word is shown cut in two.
pub fn shorten(text: &str, limit: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= limit {
        return flat;
    }
    let mut out = at_word(&flat, limit.saturating_sub(1))
        .trim_end()
        .to_string();
    out.push('…');
    out
}

/// The first `limit` characters of `text`, ending at the last word boundary among them when
/// that keeps at least two thirds of them.
pub fn at_word(text: &str, limit: usize) -> &str {
    let end = text
        .char_indices()
        .nth(limit)
        .map_or(text.len(), |(i, _)| i);
    if end == text.len() {
        return text;
    }
    let cut = &text[..end];
    if text[end..].starts_with(char::is_whitespace) {
        return cut;
    }
    match cut.rfind(char::is_whitespace) {
        Some(i) if cut[..i].chars().count() * 3 >= limit * 2 => &cut[..i],
        _ => cut,
    }
}

/// Keeps the start and the end of `text` within `limit` characters, cutting at line
/// boundaries where it can and saying how much was cut. Errors come first in most tools'
/// output and the summary last, so both ends matter.
pub fn head_tail(text: &str, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text.to_string();
    }
    let note_room = 100;
    let budget = limit.saturating_sub(note_room).max(20);
    let head_budget = budget * 3 / 5;
    let tail_budget = budget - head_budget;

    let head = take_head(text, head_budget);
    let tail = take_tail(&text[head.len()..], tail_budget);
    let cut = &text[head.len()..text.len() - tail.len()];
    let cut_lines = cut.matches('\n').count();
    let note = format!(
        "[... {} characters ({} lines) cut by ralph-gate to stay within output_limit = {} ...]",
        cut.chars().count(),
        cut_lines,
        limit
    );
    let sep_head = if head.ends_with('\n') || head.is_empty() {
        ""
    } else {
        "\n"
    };
    let sep_tail = if tail.starts_with('\n') || tail.is_empty() {
        ""
    } else {
        "\n"
    };
    format!("{head}{sep_head}{note}{sep_tail}{tail}")
}

/// The longest prefix of whole lines within `budget` chars (a char-cut first line if even
/// that does not fit).
fn take_head(text: &str, budget: usize) -> &str {
    let mut end = 0;
    let mut used = 0;
    for line in text.split_inclusive('\n') {
        let n = line.chars().count();
        if used + n > budget {
            break;
        }
        used += n;
        end += line.len();
    }
    if end == 0 {
        end = text
            .char_indices()
            .nth(budget)
            .map_or(text.len(), |(i, _)| i);
    }
    &text[..end]
}

fn take_tail(text: &str, budget: usize) -> &str {
    let mut start = text.len();
    let mut used = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for line in lines.iter().rev() {
        let n = line.chars().count();
        if used + n > budget {
            break;
        }
        used += n;
        start -= line.len();
    }
    if start == text.len() {
        let chars = text.chars().count();
        start = text
            .char_indices()
            .nth(chars.saturating_sub(budget))
            .map_or(text.len(), |(i, _)| i);
    }
    &text[start..]
}

/// `850ms`, `1.25s`, `2m05s`.
pub fn duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.2}s", d.as_secs_f64())
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first `most` of `names`, joined with commas, and how many more there are: a note
/// or finding that names what changed stays readable when an install added a thousand.
pub fn listed<S: AsRef<str>>(names: &[S], most: usize) -> String {
    let first: Vec<&str> = names.iter().take(most).map(AsRef::as_ref).collect();
    let shown = first.join(", ");
    match names.len().saturating_sub(most) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_names_its_first_and_counts_the_rest() {
        assert_eq!(listed(&["a", "b"], 3), "a, b");
        assert_eq!(listed(&["a", "b", "c"], 3), "a, b, c");
        assert_eq!(listed(&["a", "b", "c", "d", "e"], 3), "a, b, c and 2 more");
        assert_eq!(listed::<&str>(&[], 3), "");
    }

    #[test]
    fn a_cut_falls_between_words() {
        let text = "python3 -I -S -c import sys, py_compile for f in sys.argv";
        let short = shorten(text, 50);
        assert!(short.ends_with("for f in…"), "{short}");
        assert_eq!(
            at_word("abcdefghij", 4),
            "abcd",
            "one long word is cut where it must"
        );
        assert_eq!(shorten("short", 10), "short");
    }

    #[test]
    fn strips_colour_and_hyperlinks() {
        let s = "\x1b[1;31merror\x1b[0m: \x1b]8;;file:///x\x07x.rs\x1b]8;;\x1b\\ done";
        assert_eq!(strip_ansi(s), "error: x.rs done");
    }

    #[test]
    fn strips_what_tput_prints() {
        // `tput sgr0` on xterm: SGR 0 then a charset switch, which left a stray `B` before.
        let s = "\x1b[1mbold\x1b(B\x1b[m plain \x1b]0;title\x07end";
        assert_eq!(strip_ansi(s), "bold plain end");
    }

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(head_tail("a\nb\n", 1000), "a\nb\n");
    }

    #[test]
    fn long_text_keeps_both_ends_within_limit() {
        let lines: Vec<String> = (0..2000).map(|i| format!("line {i}")).collect();
        let text = lines.join("\n");
        let cut = head_tail(&text, 1000);
        assert!(cut.chars().count() <= 1000, "{}", cut.chars().count());
        assert!(cut.starts_with("line 0\n"));
        assert!(cut.ends_with("line 1999"));
        assert!(cut.contains("lines) cut by ralph-gate"), "{cut}");
    }

    #[test]
    fn one_enormous_line_is_cut_by_characters() {
        let text = "é".repeat(50_000);
        let cut = head_tail(&text, 500);
        assert!(cut.chars().count() <= 500);
        assert!(cut.contains("cut by ralph-gate"));
    }
}
