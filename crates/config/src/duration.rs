//! Human durations in config: `"30s"`, `"2m"`, `"1min"`, `"1m30s"`, `"500ms"`, `"1h"`.

use serde::de::{self, Deserializer, Visitor};
use std::fmt;
use std::time::Duration;

/// A duration written by a person. Parsed during deserialisation so that toml attaches the
/// line and column of a bad value to the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

/// Parses a duration as the command line does (humantime: `30s`, `1min`, `1m30s`, `500ms`,
/// `2h`, `1 day`), so `timeout = "1min"` in the config means what `--iteration-timeout 1min`
/// means. A duration of zero is refused: no gate finishes in no time.
pub fn parse(s: &str) -> Result<Duration, String> {
    let text = s.trim();
    if text.is_empty() {
        return Err("empty duration".into());
    }
    let d = humantime::parse_duration(text).map_err(|e| {
        format!("invalid duration `{s}`: {e} (write it as \"30s\", \"2m\", \"1m30s\" or \"500ms\")")
    })?;
    if d.is_zero() {
        return Err(format!("invalid duration `{s}`: must be greater than zero"));
    }
    Ok(d)
}

/// `1m30s`, `45s`, `250ms`: the shortest exact spelling, for messages.
pub fn display(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        return format!("{ms}ms");
    }
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

impl<'de> serde::Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = HumanDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as \"30s\", \"2m\" or \"500ms\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<HumanDuration, E> {
                parse(v).map(HumanDuration).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<HumanDuration, E> {
                Err(E::custom(format!(
                    "invalid duration {v}: write it with a unit, e.g. \"{v}s\""
                )))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_compounds() {
        assert_eq!(parse("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse("1h").unwrap(), Duration::from_secs(3600));
        // What the command line's --iteration-timeout accepts, the config accepts too.
        assert_eq!(parse("1min").unwrap(), Duration::from_secs(60));
        assert_eq!(parse("1m 30s").unwrap(), Duration::from_secs(90));
    }

    #[test]
    fn rejects_what_a_person_might_mistype() {
        for bad in ["", "30", "s", "10x", "0s", "-5s", "30 parsecs"] {
            assert!(parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn displays_shortest_exact_form() {
        assert_eq!(display(Duration::from_secs(90)), "1m30s");
        assert_eq!(display(Duration::from_secs(30)), "30s");
        assert_eq!(display(Duration::from_millis(1500)), "1500ms");
        assert_eq!(display(Duration::from_secs(3600)), "1h");
    }
}
