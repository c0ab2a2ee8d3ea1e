//! JSON with comments and trailing commas, as tsc, deno and VS Code read their configs
//! (tsconfig.json, jsconfig.json, deno.json): parsed by jsonc-parser, the parser deno uses.

use serde_json::Value;

/// The value of a JSONC text, or `None` when it is not one. A leading byte order mark is
/// skipped, as tsc and npm skip it.
pub fn parse(text: &str) -> Option<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    jsonc_parser::parse_to_serde_value::<Option<Value>>(text, &Default::default())
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn comments_and_trailing_commas_are_read_past() {
        let text = "\u{feff}{\n // a comment with \"quotes\"\n \"a\": \"http://x/*y*/\", /* block */\n \"b\": [1, 2,],\n \"c\": {\"d\": 1, // x\n },\n}\n";
        let v = parse(text).unwrap();
        assert_eq!(v["a"], "http://x/*y*/");
        assert_eq!(v["b"], json!([1, 2]));
        assert_eq!(v["c"]["d"], 1);
    }

    #[test]
    fn what_is_not_json_is_none() {
        assert_eq!(parse("{\"a\": }"), None);
        assert_eq!(parse(""), None);
    }
}
