//! What the front end merges, and only where it means the same: subschemas written out more
//! than once into one grammar rule (same text, property order included, and same base URI);
//! the length bounds of an `allOf` into one bound; and objects with many named keys, looked
//! up by index, read each key's schema as objects with few do.

#[path = "json_schema/common.rs"]
mod common;

use common::Checker;
use grammars::json_schema::compile_schema;
use serde_json::{json, Value};

/// `anyOf` of an object with properties `x`, `y` and an array, each holding the level
/// below, `depth` levels over a string: the JSON holds 3^depth copies of the leaf.
fn nested_any_of(depth: usize) -> Value {
    let mut s = json!({"type": "string"});
    for _ in 0..depth {
        s = json!({"anyOf": [
            {"type": "object", "properties": {"x": s.clone(), "y": s.clone()}},
            {"type": "array", "items": s},
        ]});
    }
    s
}

fn rules(schema: &Value) -> usize {
    let set = compile_schema(schema).unwrap_or_else(|e| panic!("compiles: {e}"));
    set.grammars.iter().map(|g| g.rules.len()).sum()
}

#[test]
fn inline_copies_share_rules() {
    // One level more adds as many rules whatever the number of copies: 3^9 = 19,683 copies
    // of the leaf took ~20,000 rules (and 3^10 passed the rule limit after 1.3 s).
    let per_level = rules(&nested_any_of(3)) - rules(&nested_any_of(2));
    assert!(per_level <= 10, "{per_level} rules a level");
    assert_eq!(rules(&nested_any_of(9)), rules(&nested_any_of(3)) + 6 * per_level);
    let c = Checker::new(&nested_any_of(9)).expect("compiles");
    for turn in 0..3 {
        assert!(c.accepts(&instance(9, turn, "\"s\"")));
        assert!(!c.accepts(&instance(9, turn, "1")), "a leaf must be a string");
        assert!(!c.accepts(&instance(8, turn, "\"s\"")), "strings only at the leaves");
    }
}

/// A value `depth` levels down `nested_any_of`: objects (by `x` or `y`) and arrays in turn
/// from `turn`, then `leaf`.
fn instance(depth: usize, turn: usize, leaf: &str) -> String {
    match (depth, turn % 3) {
        (0, _) => leaf.to_string(),
        (_, 0) => format!(r#"{{"x":{}}}"#, instance(depth - 1, turn + 1, leaf)),
        (_, 1) => format!(r#"{{"y":{}}}"#, instance(depth - 1, turn + 1, leaf)),
        _ => format!("[{}]", instance(depth - 1, turn + 1, leaf)),
    }
}

#[test]
fn copies_in_another_property_order_keep_their_order() {
    let ab = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["a", "b"], "additionalProperties": false});
    let ba = json!({"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}},
        "required": ["a", "b"], "additionalProperties": false});
    let s = json!({"type": "object", "properties": {"p": ab.clone(), "q": ba, "r": ab},
        "required": ["p", "q", "r"], "additionalProperties": false});
    let c = Checker::new(&s).expect("compiles");
    // Properties come in the schema's order: each copy keeps its own.
    assert!(c.accepts(r#"{"p":{"a":1,"b":"x"},"q":{"b":"y","a":2},"r":{"a":3,"b":"z"}}"#));
    assert!(!c.accepts(r#"{"p":{"a":1,"b":"x"},"q":{"a":2,"b":"y"},"r":{"a":3,"b":"z"}}"#));
    assert!(!c.accepts(r#"{"p":{"a":1,"b":"x"},"q":{"b":"y","a":2},"r":{"b":"z","a":3}}"#));
}

#[test]
fn copies_under_another_base_resolve_there() {
    // The same text under two resources: its `$ref` reads a different `$defs/a` in each.
    let w =
        json!({"type": "object", "properties": {"q": {"$ref": "#/$defs/a"}}, "required": ["q"]});
    let s = json!({
        "$defs": {"a": {"type": "integer"}},
        "type": "object",
        "properties": {
            "p": {"$id": "http://example.com/one", "$defs": {"a": {"type": "string"}},
                  "type": "object", "properties": {"w": w.clone()}},
            "r": {"type": "object", "properties": {"w": w}},
        },
    });
    let c = Checker::new(&s).expect("compiles");
    assert!(c.accepts(r#"{"p":{"w":{"q":"s"}},"r":{"w":{"q":1}}}"#));
    assert!(!c.accepts(r#"{"p":{"w":{"q":1}}}"#));
    assert!(!c.accepts(r#"{"r":{"w":{"q":"s"}}}"#));
}

#[test]
fn copies_with_numbers_written_apart_stay_apart() {
    // `1.0` and `1` are equal values but different text: kept apart (one rule each), both
    // read as the number they are.
    let s = json!({"type": "object", "properties": {
        "p": {"type": "number", "maximum": 1.0},
        "q": {"type": "number", "maximum": 1},
    }});
    let c = Checker::new(&s).expect("compiles");
    assert!(c.accepts(r#"{"p":1,"q":1.0}"#));
    assert!(!c.accepts(r#"{"p":1.5}"#));
}

#[test]
fn all_of_lengths_are_one_bound() {
    let s = json!({"allOf": [
        {"type": "string", "minLength": 2, "maxLength": 8},
        {"minLength": 4},
        {"maxLength": 6},
    ]});
    let c = Checker::new(&s).expect("compiles");
    for n in 0..10 {
        let text = format!("\"{}\"", "é".repeat(n));
        assert_eq!(c.accepts(&text), (4..=6).contains(&n), "{n} characters");
    }
    // Ten bounds (a string's first masks cost milliseconds each with one counter apiece).
    let ten: Vec<Value> = (0..50)
        .step_by(5)
        .map(|i| json!({"type": "string", "minLength": i, "maxLength": 1000 - i}))
        .collect();
    let c = Checker::new(&json!({"allOf": ten})).expect("compiles");
    assert!(c.accepts(&format!("\"{}\"", "a".repeat(45))));
    assert!(!c.accepts(&format!("\"{}\"", "a".repeat(44))));
    assert!(c.accepts(&format!("\"{}\"", "a".repeat(955))));
    assert!(!c.accepts(&format!("\"{}\"", "a".repeat(956))));
    // Lengths that leave no string: only the other types.
    let c =
        Checker::new(&json!({"allOf": [{"minLength": 5}, {"maxLength": 3}]})).expect("compiles");
    assert!(!c.accepts("\"abcd\""));
    assert!(!c.accepts("\"ab\""));
    assert!(c.accepts("12"));
}

#[test]
fn many_named_keys_read_their_own_schemas() {
    // Past 32 named keys an object looks them up by index: each key's schema, `required`,
    // and a key named in two `allOf` clauses (both apply) as with few keys.
    for n in [8, 40] {
        let props: serde_json::Map<String, Value> = (0..n)
            .map(|i| {
                let t = if i % 2 == 0 { "integer" } else { "string" };
                (format!("p{i}"), json!({"type": t}))
            })
            .collect();
        let last = format!("p{}", n - 2);
        let s = json!({"allOf": [
            {"type": "object", "properties": props, "required": ["p1", last],
             "additionalProperties": false},
            {"properties": {"p0": {"minimum": 5}}},
        ]});
        let c = Checker::new(&s).expect("compiles");
        let ok = format!(r#"{{"p0":7,"p1":"a","{last}":3}}"#);
        assert!(c.accepts(&ok), "{n}: {ok}");
        assert!(!c.accepts(&format!(r#"{{"p0":3,"p1":"a","{last}":3}}"#)), "{n}: p0 minimum");
        assert!(!c.accepts(&format!(r#"{{"p1":1,"{last}":3}}"#)), "{n}: p1 a string");
        assert!(!c.accepts(r#"{"p1":"a"}"#), "{n}: last required");
        assert!(!c.accepts(&format!(r#"{{"p1":"a","{last}":3,"q":1}}"#)), "{n}: closed");
    }
}
