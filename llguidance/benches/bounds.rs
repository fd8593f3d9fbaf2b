//! Bounds without cliffs (issue 43): grammars with large bounds, each with a long valid
//! instance, decoded token by token. For each case: the compile (create_matcher) time, the
//! number of tokens, mask time p50 and p99, and the slope of mask time against position
//! from token 100 to the end (least squares, µs per 1,000 tokens: ~0 when no mask cost grows
//! with what was accepted), and whether the instance was accepted.
//!
//! Run: `cargo bench -p llguidance --bench bounds` (o200k; `BOUNDS_TOKENIZER=path` for
//! another tokenizer, e.g. `../shared/tokenizers/llama3.tokenizer.json`).

use std::time::Instant;

use llguidance::{GrammarSource, ParserFactory};

/// Text of `n` characters: words of lower-case letters and spaces.
fn words(n: usize) -> String {
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

struct Case {
    name: String,
    source: GrammarSource,
    instance: String,
}

fn schema(name: &str, schema: serde_json::Value, instance: String) -> Case {
    Case { name: name.to_string(), source: GrammarSource::JsonSchema(schema.to_string()), instance }
}

fn cases() -> Vec<Case> {
    use serde_json::json;
    let mut v = vec![
        schema(
            "string, unbounded (20k chars)",
            json!({"type": "string"}),
            json_str(&words(20_000)),
        ),
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
    let text = words(8000);
    v.push(Case {
        name: "lark /[a-z ]*/ (8k chars)".into(),
        source: GrammarSource::Lark("start: /[a-z ]*/".into()),
        instance: text.clone(),
    });
    v.push(Case {
        name: "lark /[a-z ]{0,10000}/ (8k chars)".into(),
        source: GrammarSource::Lark("start: /[a-z ]{0,10000}/".into()),
        instance: text,
    });
    v
}

fn main() {
    let tok = std::env::var("BOUNDS_TOKENIZER").unwrap_or_else(|_| "o200k".into());
    let f = ParserFactory::from_tokenizer_name(&tok).expect("the tokenizer");
    println!("tokenizer {tok}");
    println!(
        "{:<38} {:>10} {:>7} {:>9} {:>9} {:>14}  outcome",
        "case", "compile ms", "tokens", "p50 µs", "p99 µs", "slope µs/1k"
    );
    for c in cases() {
        let t0 = Instant::now();
        let m = f.create_matcher(&c.source);
        let compile = t0.elapsed().as_secs_f64() * 1e3;
        let mut m = match m {
            Ok(m) => m,
            Err(e) => {
                println!("{:<38} {compile:>10.1} error: {e}", c.name);
                continue;
            }
        };
        let toks = f.tokenizer().tokenize(&c.instance).expect("tokenizes");
        let mut times = Vec::with_capacity(toks.len());
        let mut outcome = "accepted".to_string();
        for (i, &t) in toks.iter().enumerate() {
            let t1 = Instant::now();
            let mask = m.compute_mask();
            times.push(t1.elapsed().as_secs_f64() * 1e6);
            match mask {
                Ok(mask) if mask.contains(t) => {}
                Ok(_) => {
                    outcome = format!("REJECTED at token {i}");
                    break;
                }
                Err(e) => {
                    outcome = format!("ERROR at token {i}: {e}");
                    break;
                }
            }
            if let Err(e) = m.consume_token(t) {
                outcome = format!("ERROR at token {i}: {e}");
                break;
            }
        }
        if outcome == "accepted" && !m.is_accepting().unwrap_or(false) {
            outcome = "not accepting at the end".into();
        }
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let pct = |p: f64| sorted[((sorted.len() - 1) as f64 * p) as usize];
        // Least-squares slope of time against position, from token 100 on.
        let pts: Vec<(f64, f64)> =
            times.iter().enumerate().skip(100).map(|(i, &t)| (i as f64, t)).collect();
        let slope = if pts.len() > 10 {
            let n = pts.len() as f64;
            let (sx, sy) = pts.iter().fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
            let (mx, my) = (sx / n, sy / n);
            let (num, den) = pts.iter().fold((0.0, 0.0), |(a, b), &(x, y)| {
                (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
            });
            format!("{:.3}", num / den * 1000.0)
        } else {
            "-".into()
        };
        println!(
            "{:<38} {compile:>10.1} {:>7} {:>9.1} {:>9.1} {slope:>14}  {outcome}",
            c.name,
            toks.len(),
            pct(0.5),
            pct(0.99)
        );
    }
}
