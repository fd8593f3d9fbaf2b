//! The bounds corpus (issue 43): grammars with large bounds, each with a long valid instance.
//! Shared by `benches/bounds.rs` (ours) and `peer-bench`'s `bounds` binary (ours and
//! LLGuidance side by side).

/// Text of `n` characters: words of lower-case letters and spaces.
pub fn words(n: usize) -> String {
    let w = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"];
    let mut s = String::new();
    let mut i = 0;
    while s.len() < n {
        s.push_str(w[i % w.len()]);
        s.push(' ');
        i = i * 7 + 3;
    }
    s.truncate(n);
    s
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string")
}

/// One case: a grammar (`kind` "json" for a JSON Schema, "lark", "structural_tag") and a long
/// valid instance.
pub struct Case {
    pub name: String,
    pub kind: &'static str,
    pub grammar: String,
    pub instance: String,
}

fn schema(name: &str, schema: serde_json::Value, instance: String) -> Case {
    Case { name: name.to_string(), kind: "json", grammar: schema.to_string(), instance }
}

/// The cases, in table order.
pub fn cases() -> Vec<Case> {
    use serde_json::json;
    let mut v = vec![
        schema(
            "string, unbounded (20k chars)",
            json!({"type": "string"}),
            json_str(&words(20_000)),
        ),
        // The bounded strings' unbounded sibling at their length (same first masks).
        schema("string, unbounded (1k chars)", json!({"type": "string"}), json_str(&words(1000))),
        schema("maxLength 10", json!({"type": "string", "maxLength": 10}), json_str(&words(10))),
        schema(
            "maxLength 1000 (1k chars)",
            json!({"type": "string", "maxLength": 1000}),
            json_str(&words(1000)),
        ),
        schema(
            "maxLength 100000 (20k chars)",
            json!({"type": "string", "maxLength": 100_000}),
            json_str(&words(20_000)),
        ),
        schema(
            "maxLength 1000 + pattern (1k chars)",
            json!({"type": "string", "maxLength": 1000, "pattern": "^[a-z ]*$"}),
            json_str(&words(1000)),
        ),
        // A bound beside a format: an intersection with a larger automaton.
        // Its unbounded sibling (the 3× goal's reference).
        schema(
            "format email, unbounded",
            json!({"type": "string", "format": "email"}),
            json_str(&format!("{}@{}.{}.com", "a".repeat(60), "b".repeat(50), "c".repeat(50))),
        ),
        schema(
            "maxLength 200 + format email",
            json!({"type": "string", "maxLength": 200, "format": "email"}),
            json_str(&format!("{}@{}.{}.com", "a".repeat(60), "b".repeat(50), "c".repeat(50))),
        ),
        // A bound beside a pattern of more than one class, and beside a format: one lexeme
        // whose lexer makes a state per position (90,000 positions; 50,000 states were the
        // limit until 2026-11-29).
        schema(
            "maxLength 100000 + word pattern (90k)",
            json!({"type": "string", "maxLength": 100_000, "pattern": "^[a-z]+( [a-z]+)*$"}),
            json_str(words(90_000).trim_end()),
        ),
        schema(
            "maxLength 100000 + format uri (90k)",
            json!({"type": "string", "maxLength": 100_000, "format": "uri"}),
            json_str(&format!("https://example.com/{}", words(90_000).replace(' ', "/"))),
        ),
        schema(
            "minLength 5000 (6k chars)",
            json!({"type": "string", "minLength": 5000}),
            json_str(&words(6000)),
        ),
    ];
    let ints = |n: usize| {
        format!("[{}]", (0..n).map(|i| (i % 97).to_string()).collect::<Vec<_>>().join(","))
    };
    v.push(schema(
        "maxItems 2000 (2000 items)",
        json!({"type": "array", "items": {"type": "integer"}, "maxItems": 2000}),
        ints(2000),
    ));
    v.push(schema(
        "minItems 2000 (2000 items)",
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 2000}),
        ints(2000),
    ));
    v.push(schema(
        "maxItems 30000 (30000 items)",
        json!({"type": "array", "items": {"type": "integer"}, "maxItems": 30_000}),
        ints(30_000),
    ));
    let values: Vec<String> = (0..1000).map(|i| format!("value-{i}-{}", words(8))).collect();
    v.push(schema(
        "enum of 1000 strings",
        json!({"type": "array", "items": {"enum": values}}),
        format!(
            "[{}]",
            values.iter().step_by(7).map(|s| json_str(s)).collect::<Vec<_>>().join(",")
        ),
    ));
    let long = words(10_000);
    v.push(schema("const of 10000 chars", json!({"const": long}), json_str(&long)));
    let mut deep = json!({"type": "integer"});
    let mut inst = "1".to_string();
    for _ in 0..200 {
        deep = json!({"type": "object", "properties": {"a": deep}, "required": ["a"]});
        inst = format!("{{\"a\":{inst}}}");
    }
    v.push(schema("objects nested 200 deep", deep, inst));
    let mut one = json!({"type": "integer"});
    let mut inst = "1".to_string();
    for d in 0..8 {
        one = json!({"oneOf": [
            {"type": "object", "properties": {format!("x{d}"): one}, "required": [format!("x{d}")], "additionalProperties": false},
            {"type": "object", "properties": {format!("y{d}"): {"type": "string"}}, "required": [format!("y{d}")], "additionalProperties": false}
        ]});
        inst = format!("{{\"x{d}\":{inst}}}");
    }
    v.push(schema("oneOf nested 8 deep", one, inst));
    // An object of 2,000 optional properties, every tenth written: each row predicts every
    // property still to come, and each entry written nests one completion deeper.
    let props: serde_json::Map<String, serde_json::Value> =
        (0..2000).map(|i| (format!("p{i:04}"), json!({"type": "integer"}))).collect();
    let entries: Vec<String> = (0..2000).step_by(10).map(|i| format!("\"p{i:04}\":{i}")).collect();
    v.push(schema(
        "object of 2000 optional properties",
        json!({"type": "object", "properties": props}),
        format!("{{{}}}", entries.join(",")),
    ));
    // 10,000 optional properties, every hundredth written: a row predicts ~30,000 items,
    // past the parser's default 20,000 (the schema asks for its rows' width).
    let props: serde_json::Map<String, serde_json::Value> =
        (0..10_000).map(|i| (format!("p{i:05}"), json!({"type": "integer"}))).collect();
    let entries: Vec<String> =
        (0..10_000).step_by(100).map(|i| format!("\"p{i:05}\":{i}")).collect();
    v.push(schema(
        "object of 10000 optional properties",
        json!({"type": "object", "properties": props}),
        format!("{{{}}}", entries.join(",")),
    ));
    // A map: 1,000 entries under `additionalProperties` (each written entry used to nest
    // one completion deeper).
    let map: Vec<String> = (0..1000).map(|i| format!("\"key{i}\":{i}")).collect();
    v.push(schema(
        "map of 1000 free keys",
        json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        format!("{{{}}}", map.join(",")),
    ));
    // `dependentRequired`: a chain of 200 keys, each needing the next, all written; and 12
    // independent pairs, every other pair written (as a union per key these took 3.2 s to
    // compile, and failed past 8 pairs).
    let keys: Vec<String> = (0..200).map(|i| format!("p{i}")).collect();
    let props: serde_json::Map<String, serde_json::Value> =
        keys.iter().map(|k| (k.clone(), json!({"type": "integer"}))).collect();
    let deps: serde_json::Map<String, serde_json::Value> =
        keys.windows(2).map(|w| (w[0].clone(), json!([w[1]]))).collect();
    let entries: Vec<String> =
        keys.iter().enumerate().map(|(i, k)| format!("\"{k}\":{i}")).collect();
    v.push(schema(
        "dependentRequired chain of 200",
        json!({"type": "object", "properties": props, "dependentRequired": deps}),
        format!("{{{}}}", entries.join(",")),
    ));
    let props: serde_json::Map<String, serde_json::Value> = (0..12)
        .flat_map(|i| [format!("a{i}"), format!("b{i}")])
        .map(|k| (k, json!({"type": "string"})))
        .collect();
    let deps: serde_json::Map<String, serde_json::Value> =
        (0..12).map(|i| (format!("a{i}"), json!([format!("b{i}")]))).collect();
    let entries: Vec<String> = (0..12)
        .step_by(2)
        .flat_map(|i| [format!("\"a{i}\":\"x\""), format!("\"b{i}\":\"y\"")])
        .collect();
    v.push(schema(
        "dependentRequired, 12 pairs",
        json!({"type": "object", "properties": props, "dependentRequired": deps}),
        format!("{{{}}}", entries.join(",")),
    ));
    // An array of 1,000 `prefixItems` and one with `minContains: 500` (each item written
    // used to nest one completion deeper).
    v.push(schema(
        "1000 prefixItems",
        json!({"type": "array", "prefixItems": vec![json!({"type": "integer"}); 1000],
            "items": false}),
        ints(1000),
    ));
    v.push(schema(
        "contains, minContains 500",
        json!({"type": "array", "contains": {"const": 1}, "minContains": 500}),
        format!("[{}]", [vec!["1"; 500], vec!["2"; 100]].concat().join(",")),
    ));
    // Up to 500 words: a bounded repeat of a word and a space (a pattern, no length bound).
    v.push(schema(
        "pattern of up to 500 words",
        json!({"type": "string", "pattern": "^(\\w+ ){0,500}\\w+$"}),
        json_str(&vec!["word"; 480].join(" ")),
    ));
    // Up to 100 words beside a length bound (MaskBench's Github_easy---o21053): fewer words
    // than the longest token has bytes; and the same words, unbounded (the 3x goal's
    // reference).
    let sentence = words(520);
    let sentence = json_str(sentence.trim_end());
    // `anyOf` of 1,000 objects (10 x 10 x 10, nested), each naming one property.
    let level = |f: &dyn Fn(usize) -> serde_json::Value| json!({"anyOf": (0..10).map(f).collect::<Vec<_>>()});
    let any3 = level(&|i| {
        level(&|j| {
            level(
                &|k| json!({"type": "object", "properties": {format!("a{i}{j}{k}"): {"type": "string"}}}),
            )
        })
    });
    v.push(schema("anyOf of 1000 objects, nested", any3, r#"{"a123":"x","b":[1,2]}"#.into()));
    // An array of strings, each any of nine formats (a union lexeme of their regexes).
    let formats = ["date-time", "email", "uri", "uuid", "ipv4", "ipv6", "hostname", "date", "time"];
    v.push(schema(
        "array of 9-format strings",
        json!({"type": "array", "items": {"anyOf": formats.iter()
            .map(|f| json!({"type": "string", "format": f})).collect::<Vec<_>>()}}),
        r#"["2024-01-01T00:00:00Z","a@b.co","http://x.org/a","123e4567-e89b-12d3-a456-426614174000","1.2.3.4","::1","x.org","2024-01-01","10:00:00Z"]"#.into(),
    ));
    // Nested repeats: one repeat `a{1,25000}` once merged (each derivative of the nested
    // form held the ways to split the count so far: 5-50 ms masks).
    v.push(schema(
        "pattern of nested repeats, 300 chars",
        json!({"type": "string", "pattern": "^((a{1,50}){1,50}){1,10}$"}),
        json_str(&"a".repeat(300)),
    ));
    let up_to_100 = json!({"type": "string", "minLength": 1, "maxLength": 5000,
        "pattern": "^$|(^(?:\\S+\\s+){0,99}\\S+$)"});
    v.push(schema(
        "maxLength 5000 + up to 100 words, 20",
        up_to_100.clone(),
        json_str(words(110).trim_end()),
    ));
    v.push(schema("maxLength 5000 + up to 100 words, 98", up_to_100, sentence.clone()));
    v.push(schema(
        "words, unbounded",
        json!({"type": "string", "pattern": "^$|(^(?:\\S+\\s+)*\\S+$)"}),
        sentence,
    ));
    // Length bounds in separate schemas of an `allOf` (one bound once merged; a counter each
    // before: 1-10 ms a mask at the string's start).
    let ten: Vec<serde_json::Value> = (0..50)
        .step_by(5)
        .map(|i| json!({"type": "string", "minLength": i, "maxLength": 1000 - i}))
        .collect();
    v.push(schema(
        "allOf of 10 length bounds (900 chars)",
        json!({"allOf": ten}),
        json_str(&words(900)),
    ));
    // A generator's inline copies: `anyOf` of an object with two properties and an array, each
    // the level below, 10 deep (3.7 MB of JSON, 59,049 copies of the leaf; one rule each, past
    // the rule limit, before equal subschemas shared one).
    let mut copies = json!({"type": "string"});
    for _ in 0..10 {
        copies = json!({"anyOf": [
            {"type": "object", "properties": {"x": copies.clone(), "y": copies.clone()}},
            {"type": "array", "items": copies},
        ]});
    }
    // Ten levels: arrays and objects in turn, then the leaf.
    let inst = format!("[{}[\"leaf\"]{}]", r#"{"x":[{"y":["#.repeat(2), r#"]}]}"#.repeat(2));
    v.push(schema("anyOf 10 deep of inline copies (3.7 MB)", copies, inst));
    // A thinking section with a character budget (XGrammar's `max_chars`), as a structural tag.
    let tag = json!({"type": "structural_tag", "format": {"type": "tag", "begin": "<think>",
        "content": {"type": "any_text", "max_chars": 8000}, "end": "</think>"}});
    v.push(Case {
        name: "any_text max_chars 8000 (7k chars)".into(),
        kind: "structural_tag",
        grammar: tag.to_string(),
        instance: format!("<think>{}</think>", words(7000)),
    });
    let text = words(8000);
    v.push(Case {
        name: "lark /[a-z ]*/ (8k chars)".into(),
        kind: "lark",
        grammar: "start: /[a-z ]*/".into(),
        instance: text.clone(),
    });
    v.push(Case {
        name: "lark /[a-z ]{0,10000}/ (8k chars)".into(),
        kind: "lark",
        grammar: "start: /[a-z ]{0,10000}/".into(),
        instance: text,
    });
    v
}

/// Mask times' p50 and p99, and the least-squares slope of time against position from
/// token 100 on (µs per 1,000 tokens; `-` with too few points).
pub fn stats(times: &[f64]) -> (f64, f64, String) {
    if times.is_empty() {
        return (f64::NAN, f64::NAN, "-".into());
    }
    let mut s = times.to_vec();
    s.sort_by(f64::total_cmp);
    let pct = |p: f64| s[((s.len() - 1) as f64 * p) as usize];
    let pts: Vec<(f64, f64)> =
        times.iter().enumerate().skip(100).map(|(i, &t)| (i as f64, t)).collect();
    let slope = if pts.len() > 10 {
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let num: f64 = pts.iter().map(|&(x, y)| (x - mx) * (y - my)).sum();
        let den: f64 = pts.iter().map(|&(x, _)| (x - mx) * (x - mx)).sum();
        format!("{:.2}", num / den * 1000.0)
    } else {
        "-".into()
    };
    (pct(0.5), pct(0.99), slope)
}
