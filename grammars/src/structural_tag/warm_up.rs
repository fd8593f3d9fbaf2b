//! Warm-up texts for a structural tag: what a tool call of each tag looks like (its begin,
//! an instance of its arguments' schema as far as the schema fixes one, its end), which the
//! engine decodes once at compile time so that a fresh tool set's first masks are warm.
//! Only texts: decoding them is the caller's.

/// The texts a structural tag's compile warms its grammar with, one per tag (in document
/// order; the legacy form's structures too): the tag's `begin`, its JSON arguments as far as
/// `json_warm_up` writes them, and where it wrote all of them, the tag's `end` and a word of
/// free text. First: the first tag with whole arguments that start with a string value (the
/// states of a string's start, an object's end, the end tag and the free text after it are
/// the same in every tool's call), else the first with whole arguments, else the first whose
/// arguments start with a string, else the first; the others after it in that order. None
/// without a begin.
pub fn warm_up_texts(json: &str) -> Vec<String> {
    fn find(v: &serde_json::Value, out: &mut Vec<(u8, String)>) {
        match v {
            serde_json::Value::Object(o) => {
                if let Some(b) = o.get("begin").and_then(|b| b.as_str()).filter(|b| !b.is_empty()) {
                    // A tag's content (`json_schema` in JSON style), or a legacy structure's
                    // schema.
                    let schema = match o.get("content") {
                        Some(c)
                            if c["type"] == "json_schema"
                                && c["style"].as_str().is_none_or(|s| s == "json") =>
                        {
                            c.get("json_schema")
                        }
                        Some(_) => None,
                        None => o.get("schema"),
                    };
                    let (args, whole) = schema.map_or((String::new(), false), json_warm_up);
                    let end = o.get("end").and_then(|e| e.as_str()).filter(|_| whole);
                    let string_first =
                        args.split_once("\": ").is_some_and(|(_, v)| v.starts_with('"'));
                    let score = 2 * u8::from(end.is_some()) + u8::from(string_first);
                    let text = match end {
                        Some(end) => format!("{b}{args}{end} Done."),
                        None => format!("{b}{args}"),
                    };
                    out.push((score, text));
                }
                o.values().for_each(|v| find(v, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| find(v, out)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    if let Ok(v) = serde_json::from_str(json) {
        find(&v, &mut texts);
    }
    // Best first; document order among equals (a stable sort).
    texts.sort_by_key(|t| std::cmp::Reverse(t.0));
    texts.into_iter().map(|t| t.1).collect()
}

/// An instance of an object schema as a model writes it (`{"key": value, ...}`, its
/// required properties in order), for warming a tool's masks: whole (`true`) where every
/// required property has a plain name and a value fixed by its schema (the first `enum`
/// value, `"a"` for a string, `1` for a number, `true` for a boolean, `1` for any value);
/// otherwise its start, up to the first value it cannot write (`{"` where the key is not a
/// plain one; nothing for other schemas). A value the schema refuses (a pattern) only
/// stops the warm-up's pass there.
fn json_warm_up(schema: &serde_json::Value) -> (String, bool) {
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else {
        return (String::new(), false);
    };
    let keys: Vec<&str> = match schema.get("required").and_then(|r| r.as_array()) {
        Some(r) => r.iter().filter_map(|k| k.as_str()).collect(),
        None => Vec::new(),
    };
    let mut out = String::from("{");
    for (i, key) in keys.iter().enumerate() {
        let Some(p) = props.get(*key) else { return (out, false) };
        if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return (out + "\"", false);
        }
        out += &format!("{}\"{key}\": ", if i > 0 { ", " } else { "" });
        let value = match (p.get("enum").and_then(|e| e.as_array()), p.get("type")) {
            (Some(e), _) => e.first().map(|v| v.to_string()),
            (None, Some(t)) => match t.as_str() {
                Some("string") => Some("\"a\"".into()),
                Some("number" | "integer") => Some("1".into()),
                Some("boolean") => Some("true".into()),
                Some("object") => return (out + "{", false),
                Some("array") => return (out + "[", false),
                _ => return (out, false),
            },
            (None, None) if p.as_object().is_some_and(|o| o.is_empty()) => Some("1".into()),
            (None, None) => return (out, false),
        };
        match value {
            Some(v) => out += &v,
            None => return (out, false),
        }
    }
    (out + "}", true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tag(name: &str, params: serde_json::Value) -> serde_json::Value {
        json!({"type": "tag", "begin": format!("<f={name}>"), "end": "</f>",
               "content": {"type": "json_schema", "json_schema": params}})
    }

    #[test]
    fn warm_up_writes_whole_arguments_where_it_can() {
        let p = json!({"type": "object", "required": ["q", "n", "e", "any"], "properties": {
            "q": {"type": "string"}, "n": {"type": "integer"}, "e": {"enum": ["x", 2]}, "any": {}}});
        assert_eq!(json_warm_up(&p), (r#"{"q": "a", "n": 1, "e": "x", "any": 1}"#.into(), true));
        let p = json!({"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "boolean"}, "b": {"type": "array"}}});
        assert_eq!(json_warm_up(&p), (r#"{"a": true, "b": ["#.into(), false));
        let p = json!({"type": "object", "required": ["a b"], "properties": {"a b": {}}});
        assert_eq!(json_warm_up(&p), (r#"{""#.into(), false));
        let p = json!({"type": "object", "properties": {"a": {}}});
        assert_eq!(json_warm_up(&p), ("{}".into(), true));
        assert_eq!(json_warm_up(&json!({"type": "string"})), (String::new(), false));
    }

    #[test]
    fn warm_up_puts_first_a_tag_with_whole_arguments_starting_with_a_string() {
        let partial = tag("p", json!({"properties": {"o": {"type": "object"}}, "required": ["o"]}));
        let number = tag("n", json!({"properties": {"x": {"type": "number"}}, "required": ["x"]}));
        let string = tag("s", json!({"properties": {"x": {"type": "string"}}, "required": ["x"]}));
        let st = |tags: Vec<serde_json::Value>| {
            json!({"type": "structural_tag", "format": {"type": "triggered_tags",
                   "triggers": ["<f="], "tags": tags}})
            .to_string()
        };
        let texts = warm_up_texts(&st(vec![partial.clone(), number.clone(), string]));
        let want =
            [r#"<f=s>{"x": "a"}</f> Done."#, r#"<f=n>{"x": 1}</f> Done."#, r#"<f=p>{"o": {"#];
        assert_eq!(texts, want);
        let texts = warm_up_texts(&st(vec![partial.clone(), number]));
        assert_eq!(texts, want[1..]);
        assert_eq!(warm_up_texts(&st(vec![partial])), want[2..]);
        // The legacy form: a structure's schema.
        let legacy = json!({"type": "structural_tag", "triggers": ["<g"], "structures": [
            {"begin": "<g>", "schema": {"properties": {"a": {"type": "string"}}}, "end": "</g>"}]});
        assert_eq!(warm_up_texts(&legacy.to_string()), ["<g>{}</g> Done."]);
        let any_text = r#"{"type": "structural_tag", "format": {"type": "any_text"}}"#;
        assert!(warm_up_texts(any_text).is_empty());
    }
}
