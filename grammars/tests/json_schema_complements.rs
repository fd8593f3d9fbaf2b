//! Complements of object keywords (`not` of `additionalProperties`, `patternProperties`,
//! `propertyNames`; `oneOf` branches that need them), against a plain evaluation: every
//! object over a small universe of keys and values is checked in every key order, and the
//! compiled schema must accept some order of exactly the objects the predicate allows (our
//! objects list their keys in a fixed order, so one order is enough for "accepted").

#[path = "json_schema/common.rs"]
mod common;

use common::Checker;
use serde_json::{json, Value};

const KEYS: [&str; 5] = ["a", "b", "c", "xa", "abc"];

/// A member value: an integer or a string.
#[derive(Clone, Copy)]
enum V {
    Int,
    Str,
}

type Obj = Vec<(&'static str, V)>;

fn objects(max_keys: usize) -> Vec<Obj> {
    let mut out = vec![vec![]];
    let mut frontier: Vec<Obj> = vec![vec![]];
    for _ in 0..max_keys {
        let mut next = Vec::new();
        for o in &frontier {
            // keys in KEYS order: each subset once
            let start = o.last().map_or(0, |(k, _)| KEYS.iter().position(|x| x == k).unwrap() + 1);
            for k in &KEYS[start..] {
                for v in [V::Int, V::Str] {
                    let mut p = o.clone();
                    p.push((k, v));
                    next.push(p);
                }
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

fn permutations(o: &Obj) -> Vec<Obj> {
    if o.len() <= 1 {
        return vec![o.clone()];
    }
    let mut out = Vec::new();
    for i in 0..o.len() {
        let mut rest = o.clone();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first);
            out.push(p);
        }
    }
    out
}

fn text(o: &Obj) -> String {
    let members: Vec<String> = o
        .iter()
        .map(|(k, v)| match v {
            V::Int => format!("\"{k}\":1"),
            V::Str => format!("\"{k}\":\"s\""),
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

fn is_int(v: V) -> bool {
    matches!(v, V::Int)
}

fn check(schema: Value, pred: impl Fn(&Obj) -> bool) {
    let c = Checker::new(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let mut n = 0;
    for o in objects(3) {
        let want = pred(&o);
        let got = permutations(&o).iter().any(|p| c.accepts(&text(p)));
        assert_eq!(
            got,
            want,
            "{schema}: {} should be {}",
            text(&o),
            if want { "accepted" } else { "rejected" }
        );
        n += want as usize;
    }
    assert!(n > 0, "{schema}: the predicate allows nothing here");
}

fn closed(o: &Obj, keys: &[&str]) -> bool {
    o.iter().all(|(k, _)| keys.contains(k))
}

#[test]
fn not_additional_properties() {
    // some key outside {a}, or a's value not an integer
    check(
        json!({"type": "object", "not": {"properties": {"a": {"type": "integer"}}, "additionalProperties": false}}),
        |o| !(closed(o, &["a"]) && o.iter().all(|(_, v)| is_int(*v))),
    );
    // some key outside {a} and not starting with x, with a string value
    check(
        json!({"type": "object", "not": {"properties": {"a": {}}, "patternProperties": {"^x": {}}, "additionalProperties": {"type": "integer"}}}),
        |o| o.iter().any(|(k, v)| *k != "a" && !k.starts_with('x') && !is_int(*v)),
    );
}

#[test]
fn not_pattern_properties() {
    check(
        json!({"type": "object", "not": {"patternProperties": {"^x": {"type": "integer"}}}}),
        |o| o.iter().any(|(k, v)| k.starts_with('x') && !is_int(*v)),
    );
    // keys containing "a" (search semantics) with integers: at least one
    check(
        json!({"type": "object", "not": {"patternProperties": {"a": {"not": {"type": "integer"}}}}}),
        |o| o.iter().any(|(k, v)| k.contains('a') && is_int(*v)),
    );
}

#[test]
fn not_property_names() {
    check(json!({"type": "object", "not": {"propertyNames": {"maxLength": 1}}}), |o| {
        o.iter().any(|(k, _)| k.len() > 1)
    });
    // double complement: the keyword itself
    check(json!({"type": "object", "not": {"not": {"propertyNames": {"maxLength": 1}}}}), |o| {
        o.iter().all(|(k, _)| k.len() <= 1)
    });
}

#[test]
fn one_of_closed_objects() {
    let ab = |o: &Obj| closed(o, &["a", "b"]);
    let ac = |o: &Obj| closed(o, &["a", "c"]);
    check(
        json!({"oneOf": [
            {"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": false},
            {"type": "object", "properties": {"a": {}, "c": {}}, "additionalProperties": false}
        ]}),
        move |o| ab(o) != ac(o),
    );
    // three branches: patterns, a required string, short names
    let p1 = |o: &Obj| !o.is_empty() && o.iter().all(|(k, v)| k.starts_with('x') && is_int(*v));
    let p2 = |o: &Obj| o.len() == 1 && o[0].0 == "a" && !is_int(o[0].1);
    let p3 = |o: &Obj| o.iter().all(|(k, _)| k.len() <= 1);
    check(
        json!({"type": "object", "oneOf": [
            {"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": false, "minProperties": 1},
            {"properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false},
            {"propertyNames": {"maxLength": 1}}
        ]}),
        move |o| [p1(o), p2(o), p3(o)].iter().filter(|x| **x).count() == 1,
    );
}

#[test]
fn complements_meet_in_all_of() {
    check(
        json!({"type": "object", "allOf": [
            {"not": {"properties": {"a": {}, "b": {}}, "additionalProperties": false}},
            {"not": {"patternProperties": {"^x": {"type": "string"}}}}
        ]}),
        |o| !closed(o, &["a", "b"]) && o.iter().any(|(k, v)| k.starts_with('x') && is_int(*v)),
    );
}

#[test]
fn too_many_required_members_is_a_limit() {
    let nots: Vec<Value> = (0..5)
        .map(|i| json!({"not": {"patternProperties": {format!("^{i}"): {"type": "integer"}}}}))
        .collect();
    let e = Checker::new(&json!({"type": "object", "allOf": nots})).err().expect("a limit");
    assert!(e.to_string().contains("more than 4 members"), "{e}");
}

// `unevaluatedProperties` beside applicators: which keys are evaluated depends on the
// branches that hold (checked over the same universe).

#[test]
fn unevaluated_properties_beside_any_of() {
    // a evaluated when branch 1 holds (a is an integer), b when branch 2 holds (b present)
    let b1 = |o: &Obj| o.iter().all(|(k, v)| *k != "a" || is_int(*v));
    let b2 = |o: &Obj| o.iter().any(|(k, _)| *k == "b");
    check(
        json!({"type": "object", "anyOf": [
            {"properties": {"a": {"type": "integer"}}},
            {"properties": {"b": {}}, "required": ["b"]}
        ], "unevaluatedProperties": false}),
        move |o| {
            (b1(o) || b2(o)) && o.iter().all(|(k, _)| (*k == "a" && b1(o)) || (*k == "b" && b2(o)))
        },
    );
}

#[test]
fn unevaluated_properties_beside_if_then_else() {
    // if a is there: then evaluates b; else evaluates strings starting with x
    let has_a = |o: &Obj| o.iter().any(|(k, _)| *k == "a");
    check(
        json!({"type": "object",
            "if": {"properties": {"a": {}}, "required": ["a"]},
            "then": {"properties": {"b": {"type": "integer"}}},
            "else": {"patternProperties": {"^x": {"type": "string"}}},
            "unevaluatedProperties": false}),
        move |o| {
            if has_a(o) {
                o.iter().all(|(k, v)| *k == "a" || (*k == "b" && is_int(*v)))
            } else {
                o.iter().all(|(k, v)| k.starts_with('x') && !is_int(*v))
            }
        },
    );
}

#[test]
fn unevaluated_properties_beside_dependent_schemas() {
    let has = |o: &Obj, key: &str| o.iter().any(|(k, _)| *k == key);
    check(
        json!({"type": "object", "properties": {"a": {}},
            "dependentSchemas": {"a": {"properties": {"b": {"type": "integer"}}}},
            "unevaluatedProperties": {"type": "string"}}),
        move |o| {
            o.iter().all(|(k, v)| match *k {
                "a" => true,
                "b" if has(o, "a") => is_int(*v),
                _ => !is_int(*v),
            })
        },
    );
}

#[test]
fn unevaluated_items_beside_applicators() {
    let c = Checker::new(
        &json!({"allOf": [{"prefixItems": [{}, {}]}], "unevaluatedItems": {"type": "integer"}}),
    )
    .unwrap();
    for (t, want) in
        [("[]", true), ("[\"x\",\"y\",3]", true), ("[1,2,\"x\"]", false), ("[\"x\"]", true)]
    {
        assert_eq!(c.accepts(t), want, "{t}");
    }
    // anyOf: the longest prefix of the branches that hold
    let c = Checker::new(&json!({"anyOf": [
        {"prefixItems": [{"type": "string"}]},
        {"prefixItems": [{}, {}, {"type": "integer"}]}
    ], "unevaluatedItems": false}))
    .unwrap();
    for (t, want) in [
        ("[\"a\"]", true),
        ("[1]", true),
        ("[1,2,3]", true),
        ("[\"a\",2]", true),
        ("[1,2,3,4]", false),
        ("[1,2,\"x\"]", false),
        ("[\"a\",2,\"x\"]", false),
    ] {
        assert_eq!(c.accepts(t), want, "{t}");
    }
    let e = Checker::new(&json!({"contains": {"type": "string"}, "unevaluatedItems": false}))
        .err()
        .expect("an error");
    assert!(e.to_string().contains("contains"), "{e}");
}

/// Every array of up to 4 items from {1, "s"}, against `pred`.
fn check_arrays(schema: Value, pred: impl Fn(&[bool]) -> bool) {
    let c = Checker::new(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let mut arrays: Vec<Vec<bool>> = vec![vec![]];
    for len in 1..=4 {
        for bits in 0..(1u32 << len) {
            arrays.push((0..len).map(|i| bits & (1 << i) != 0).collect());
        }
    }
    for a in arrays {
        // true: an integer, false: a string
        let items: Vec<&str> = a.iter().map(|&i| if i { "1" } else { "\"s\"" }).collect();
        let text = format!("[{}]", items.join(","));
        assert_eq!(c.accepts(&text), pred(&a), "{schema}: {text}");
    }
}

#[test]
fn not_items_after_prefix_items() {
    // some item after the first is not an integer, or the first is not a string
    check_arrays(
        json!({"type": "array", "not": {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}}),
        |a| !(a.first().is_none_or(|&i| !i) && a.iter().skip(1).all(|&i| i)),
    );
    // after two: some string at index >= 2, beside a `contains` counted from 0
    check_arrays(
        json!({"type": "array", "contains": {"type": "string"}, "maxContains": 2,
            "not": {"prefixItems": [{}, {}], "items": {"type": "integer"}}}),
        |a| {
            let strings = a.iter().filter(|&&i| !i).count();
            (1..=2).contains(&strings) && a.iter().skip(2).any(|&i| !i)
        },
    );
}

/// A recursive `oneOf` whose branches are told apart by a key other than the recursive one:
/// the proof skips the key whose value is the `oneOf` itself (normalizing it there recursed
/// to the depth limit: "nesting deeper than 512 levels").
#[test]
fn one_of_through_its_own_reference() {
    let s = json!({"$defs": {"r": {"oneOf": [
        {"type": "object", "properties": {"x": {"$ref": "#/$defs/r"}, "y": {"type": "integer"}},
         "required": ["x", "y"], "additionalProperties": false},
        {"type": "object", "properties": {"x": {"$ref": "#/$defs/r"}, "z": {"type": "string"}},
         "required": ["x", "z"], "additionalProperties": false},
        {"type": "string"}
    ]}}, "$ref": "#/$defs/r"});
    let c = Checker::new(&s).unwrap_or_else(|e| panic!("compiles: {e}"));
    for ok in
        [r#""s""#, r#"{"x":"s","y":1}"#, r#"{"x":{"x":"t","z":"u"},"y":2}"#, r#"{"x":"s","z":"u"}"#]
    {
        assert!(c.accepts(ok), "{ok}");
    }
    for bad in [r#"{"x":"s"}"#, r#"{"x":"s","y":1,"z":"u"}"#, r#"{"x":{"x":"t"},"y":2}"#, "1"] {
        assert!(!c.accepts(bad), "{bad}");
    }
}

/// Branches that overlap through the cycle (`{"ref": "black"}` is both a reference and a
/// locale selector, as in MaskBench's Github_easy---o37786): an error that names
/// `coerce_one_of` or the intersection quickly, never the depth limit; with
/// `coerce_one_of` (as `anyOf`) it compiles.
#[test]
fn overlapping_one_of_through_its_own_reference() {
    let r = json!({"oneOf": [
        {"type": "string"},
        {"type": "object", "properties": {"ref": {"type": "string"}}, "required": ["ref"],
         "additionalProperties": false},
        {"type": "object", "patternProperties": {"^[a-z]{2,3}$": {"$ref": "#/$defs/r"}},
         "additionalProperties": false, "minProperties": 1}
    ]});
    let s = json!({"$defs": {"r": r}, "$ref": "#/$defs/r"});
    let e = Checker::new(&s).err().expect("not provably disjoint").to_string();
    assert!(!e.contains("deeper than"), "{e}");
    let mut coerced = s.clone();
    coerced["x-guidance"] = json!({"coerce_one_of": true});
    let c = Checker::new(&coerced).unwrap_or_else(|e| panic!("compiles as anyOf: {e}"));
    assert!(c.accepts(r#"{"ref":"black"}"#));
    assert!(c.accepts(r#"{"en":{"de":"x"}}"#));
    assert!(!c.accepts(r#"{"english":"x"}"#));
}
