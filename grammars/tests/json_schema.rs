//! Behaviour of the JSON Schema front end: schemas with accepted and rejected instances.

#[path = "json_schema/common.rs"]
mod common;

use common::Checker;
use grammars::json_schema::{LONG_STRING, LONG_STRING_CHUNK};
use serde_json::json;

fn check(schema: serde_json::Value, good: &[&str], bad: &[&str]) {
    let c = Checker::new(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for g in good {
        assert!(c.accepts(g), "{schema} should accept {g}");
    }
    for b in bad {
        assert!(!c.accepts(b), "{schema} should reject {b}");
    }
}

#[test]
fn scalars() {
    check(json!({"type": "integer"}), &["0", "-12"], &["7.0", "1.5", "01", "\"1\"", "1e3"]);
    check(json!({"not": {"type": "integer"}}), &["1.5", "\"x\""], &["7", "7.0"]);
    // `integer` inside a union keeps rejecting a zero fraction (it was lost when the other
    // branch had no numbers), and a `number` branch keeps accepting one.
    let int_or_string = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
    check(int_or_string, &["80", "\"80.0\""], &["80.0", "80.5"]);
    let d4 = json!({"$schema": "http://json-schema.org/draft-04/schema#",
        "oneOf": [{"type": "string"}, {"type": "integer", "minimum": 3}]});
    check(d4, &["80"], &["80.0", "2"]);
    check(json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}), &["1", "true"], &["1.0"]);
    let int_or_big = json!({"anyOf": [{"type": "integer"}, {"type": "number", "minimum": 100}]});
    check(int_or_big, &["80", "100.0", "100.5"], &["80.0", "80.5"]);
    check(json!({"anyOf": [{"type": "number"}, {"type": "integer"}]}), &["80.0", "80"], &["8e"]);
    check(json!({"type": "number"}), &["0", "-1.5", "1e3", "2E-2"], &["01", ".5", "1."]);
    check(json!({"type": ["null", "boolean"]}), &["null", "true", "false"], &["0", "\"x\""]);
    check(
        json!({"type": "string", "minLength": 2, "maxLength": 3}),
        &["\"ab\"", "\"\u{e9}\u{e9}\""],
        &["\"a\"", "\"abcd\""],
    );
    check(json!({"type": "string", "pattern": "^a[0-9]+$"}), &["\"a12\""], &["\"a\"", "\"xa1\""]);
    check(
        json!({"enum": [1, "x", null, [1]]}),
        &["1", "1.0", "\"x\"", "null", "[1]"],
        &["2", "\"y\"", "[]"],
    );
    check(json!({"const": {"a": 1}}), &["{\"a\":1}"], &["{}", "{\"a\":2}"]);
}

#[test]
fn number_bounds() {
    let s = json!({"type": "number", "minimum": -1.5, "exclusiveMaximum": 10});
    check(s, &["-1.5", "-1", "0", "9.999", "-0"], &["-1.51", "10", "10.0", "11", "-2"]);
    let s = json!({"type": "integer", "exclusiveMinimum": 0, "maximum": 100});
    check(s, &["1", "100", "50"], &["0", "-0", "101", "-5"]);
    check(json!({"multipleOf": 0.5, "type": "number"}), &["1.5", "2", "-3.5"], &["1.25", "0.1"]);
}

/// Negative zero as LLGuidance spells integers: not where the lower bound is 0 or more, nor
/// for a `const`/`enum` zero; below a negative or no lower bound (and bare) it stays.
#[test]
fn negative_zero_follows_the_lower_bound() {
    check(json!({"type": "integer", "minimum": 0}), &["0", "7"], &["-0", "-1"]);
    check(json!({"type": "integer", "minimum": 0, "maximum": 5}), &["0", "5"], &["-0", "6"]);
    check(json!({"type": "integer", "const": 0}), &["0"], &["-0"]);
    check(json!({"type": "integer", "minimum": -20, "maximum": 20}), &["0", "-0", "-20"], &["-21"]);
    check(json!({"type": "integer", "maximum": 10}), &["0", "-0", "-3", "10"], &["11"]);
    check(json!({"type": "number", "minimum": 0}), &["0", "0.5"], &["-0", "-0.0"]);
    check(json!({"type": "integer"}), &["0", "-0", "-12"], &["1.5", "01"]);
}

#[test]
fn objects() {
    let s = json!({
        "type": "object",
        "properties": {"b": {"type": "integer"}, "a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": false
    });
    check(
        s,
        &["{\"a\":\"x\"}", "{\"b\":1,\"a\":\"x\"}", "{ \"b\" : 1 , \"a\" : \"x\" }"],
        &["{}", "{\"b\":1}", "{\"a\":\"x\",\"c\":1}"],
    );
    let s = json!({"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": {"type": "string"}});
    check(s, &["{\"x1\":1,\"y\":\"s\"}", "{}", "1"], &["{\"x1\":\"s\"}", "{\"y\":1}"]);
    let s = json!({"type": "object", "minProperties": 1, "maxProperties": 2, "properties": {"a": {}, "b": {}}});
    check(
        s,
        &["{\"a\":1}", "{\"a\":1,\"b\":2}", "{\"c\":1}"],
        &["{}", "{\"a\":1,\"b\":2,\"c\":3}"],
    );
    let s = json!({"dependentRequired": {"a": ["b"]}, "properties": {"a": {}, "b": {}}});
    check(s, &["{\"a\":1,\"b\":2}", "{\"b\":2}", "{}"], &["{\"a\":1}"]);
    let s = json!({"propertyNames": {"maxLength": 2}});
    check(s, &["{\"ab\":1}"], &["{\"abc\":1}"]);
}

#[test]
fn arrays() {
    let s = json!({"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}, "minItems": 2});
    check(s, &["[1,\"a\"]", "[1,\"a\",\"b\"]"], &["[1]", "[\"a\",\"b\"]", "[1,2]"]);
    let s = json!({"type": "array", "contains": {"const": 1}, "minContains": 2, "maxContains": 3});
    check(s, &["[1,1]", "[1,2,1,1]"], &["[1]", "[1,1,1,1]", "[]"]);
    let s = json!({"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": true});
    check(s, &["[]", "[1,2]", "[3,1,2]"], &["[1,1]", "[1,2,1]", "[4]"]);
}

#[test]
fn combinators_and_refs() {
    let s = json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]});
    check(s, &["1", "2.5", "\"x\""], &["2", "3"]);
    let s = json!({"not": {"type": "string"}});
    check(s, &["1", "null"], &["\"a\""]);
    let s = json!({"if": {"properties": {"a": {"const": 1}}, "required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]}, "properties": {"a": {}, "b": {}, "c": {}}});
    check(
        s.clone(),
        &["{\"a\":1,\"b\":2}", "{\"a\":2,\"c\":2}"],
        &["{\"a\":1,\"c\":2}", "{\"a\":2,\"b\":2}"],
    );
    // Before draft 7, `if`/`then`/`else` are not keywords: ignored.
    let mut s4 = s.clone();
    s4["$schema"] = json!("http://json-schema.org/draft-04/schema#");
    check(s4, &["{\"a\":1,\"c\":2}", "{\"a\":2,\"b\":2}"], &["{\"a\":1,", "{\"a\" 1}"]);
    // Likewise every keyword newer than the declared draft (LLGuidance reads them so too).
    let d4 = "http://json-schema.org/draft-04/schema#";
    let d7 = "http://json-schema.org/draft-07/schema#";
    // ... except `const`, applied in every draft (it only narrows).
    check(json!({"$schema": d4, "type": "string", "const": "mm"}), &["\"mm\""], &["\"m\""]);
    let s = json!({"$schema": d4, "type": "object", "propertyNames": {"pattern": "^[0-9]+$"}});
    check(s, &["{\"12\":1}", "{\"ab\":1}"], &["[]"]);
    check(json!({"$schema": d4, "type": "array", "contains": {"const": 5}}), &["[6]"], &["{}"]);
    let s = json!({"$schema": d7, "type": "object", "dependentRequired": {"a": ["b"]}});
    check(s, &["{\"a\":1}"], &["1"]);
    check(
        json!({"$schema": d7, "type": "array", "prefixItems": [{"const": 5}]}),
        &["[6]"],
        &["{}"],
    );
    check(json!({"type": "array", "prefixItems": [{"const": 5}]}), &["[5]", "[5,6]"], &["[6]"]);
    let s = json!({"$schema": "http://json-schema.org/draft-06/schema#", "const": 5});
    check(s, &["5"], &["6"]);
    // Properties merged in keyword order (LLGuidance's order): an applicator written before
    // `properties` puts its properties first, one written after puts them after.
    let a = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let x = json!({"x": {"type": "object"}});
    let before: serde_json::Value =
        serde_json::from_str(&format!("{{\"anyOf\":[{a}],\"properties\":{x}}}")).unwrap();
    check(before, &["{\"a\":\"s\",\"x\":{}}"], &["{\"x\":{},\"a\":\"s\"}"]);
    let after: serde_json::Value =
        serde_json::from_str(&format!("{{\"properties\":{x},\"allOf\":[{a}]}}")).unwrap();
    check(after, &["{\"x\":{},\"a\":\"s\"}"], &["{\"a\":\"s\",\"x\":{}}"]);
    let s = json!({
        "$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}}, "additionalProperties": false}},
        "$ref": "#/$defs/node"
    });
    check(s, &["{\"v\":1,\"next\":{\"v\":2,\"next\":{}}}"], &["{\"v\":1,\"next\":{\"v\":\"x\"}}"]);
}

#[test]
fn formats() {
    // Hostnames (RFC 1123 labels of 1-63 characters, at most 253 in all; RFC 5891: no "--" in
    // positions 3-4), written by label length without a complement.
    let q = |s: &str| format!("\"{s}\"");
    let l63 = "a".repeat(63);
    let good: Vec<String> = ["a", "ab", "a-b", "ab-c", "a--b", "abc--d", "ab-cd", "abc-d", "a.b.c"]
        .iter()
        .map(|s| q(s))
        .chain([q(&l63), q(&format!("{l63}.{l63}.{l63}.{}", "b".repeat(61)))])
        .collect();
    let bad: Vec<String> = ["", "-a", "a-", "a..b", "ab--c", "xn--abc", "ab--", "a_b"]
        .iter()
        .map(|s| q(s))
        .chain([q(&"a".repeat(64)), q(&format!("{l63}.{l63}.{l63}.{}", "b".repeat(62)))])
        .collect();
    let g: Vec<&str> = good.iter().map(String::as_str).collect();
    let b: Vec<&str> = bad.iter().map(String::as_str).collect();
    check(json!({"format": "hostname"}), &g, &b);
    check(json!({"format": "date"}), &["\"2020-02-29\""], &["\"2021-02-29\"", "\"2020-13-01\""]);
    check(
        json!({"format": "date-time"}),
        &["\"2020-01-01T12:00:00Z\"", "\"1990-12-31T23:59:60Z\""],
        &["\"2020-01-01 12:00:00Z\""],
    );
    check(json!({"format": "ipv4"}), &["\"192.168.0.1\""], &["\"256.1.1.1\"", "\"01.1.1.1\""]);
    check(
        json!({"format": "ipv6"}),
        &["\"::1\"", "\"1:2:3:4:5:6:7:8\"", "\"::ffff:1.2.3.4\""],
        &["\"1::2::3\"", "\"12345::\""],
    );
    check(
        json!({"format": "uuid"}),
        &["\"2EB8AA08-AA98-11EA-B4AA-73B441D16380\""],
        &["\"2eb8aa08-aa98-11ea-b4aa-73b441d1638\""],
    );
    check(
        json!({"format": "uri"}),
        &["\"http://foo.bar/?baz=qux#quux\""],
        &["\"//foo.bar\"", "\"abc\""],
    );
    check(
        json!({"format": "email"}),
        &["\"joe.bloggs@example.com\""],
        &["\"2..2@x.com\"", "\".a@x.com\""],
    );
    check(
        json!({"format": "byte"}),
        &["\"\"", "\"YWJj\"", "\"YWI=\"", "\"YQ==\"", "\"+/9a\""],
        &["\"YWJ\"", "\"Y===\"", "\"YW=j\"", "\"YQ\"", "\"Y-Jj\""],
    );
    // Unknown formats are annotations, errors with `strict_formats` (json_schema_formats.rs).
    assert!(Checker::new(&json!({"format": "bogus"})).is_ok());
    assert!(
        Checker::new(&json!({"format": "bogus", "x-guidance": {"strict_formats": true}})).is_err()
    );
}

#[test]
fn options() {
    let s = json!({"type": "array", "x-guidance": {"whitespace_flexible": false, "item_separator": ", "}});
    check(s, &["[1, 2]"], &["[1,2]", "[ 1, 2]"]);
    let s = json!({"pattern": "a+", "type": "string", "x-guidance": {"pattern_search": false}});
    check(s, &["\"aa\""], &["\"xaay\""]);
    check(json!({"pattern": "a+", "type": "string"}), &["\"xaay\""], &["\"xy\""]);
    check(
        json!({"pattern": "^https?://", "type": "string"}),
        &["\"https://x.org\""],
        &["\"x https://\""],
    );
    check(json!({"not": {"pattern": "^a"}}), &["\"ba\""], &["\"ab\"", "1"]);
}

#[test]
fn unsupported_is_an_error() {
    for s in [
        json!({"$ref": "http://example.com/x.json"}),
        json!({"pattern": "(?=a)"}),
        json!({"$dynamicRef": "#x"}),
        json!({"not": {"pattern": "a"}, "x-guidance": {"pattern_search": false}}),
        json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
    ] {
        let e = grammars::json_schema::compile_schema(&s);
        assert!(e.is_err(), "{s} should be an error");
    }
}

/// `format: time` leap seconds against RFC 3339's rule (23:59:60 UTC once the offset is
/// applied): every local minute, with offsets of both signs at whole hours, at :01, :30
/// and :59 minutes, so each case of the construction (east whole hours, east with
/// minutes, west) meets every local time.
#[test]
fn leap_seconds_follow_the_offset() {
    let c = Checker::new(&json!({"type": "string", "format": "time"})).unwrap();
    let utc_2359 = 23 * 60 + 59;
    let mut checked = 0;
    for local in (0..24 * 60).step_by(7) {
        for off_h in [0, 1, 8, 13, 23] {
            for off_m in [0, 1, 30, 59] {
                for sign in [1i32, -1] {
                    let off = sign * (off_h * 60 + off_m);
                    let valid = (local - off).rem_euclid(24 * 60) == utc_2359;
                    let s = if sign > 0 { '+' } else { '-' };
                    let text = format!(
                        "\"{:02}:{:02}:60{s}{off_h:02}:{off_m:02}\"",
                        local / 60,
                        local % 60
                    );
                    assert_eq!(c.accepts(&text), valid, "{text}");
                    checked += 1;
                }
            }
        }
    }
    // And each valid pair directly (the sample above meets few of them).
    for off in -(24 * 60 - 1)..(24 * 60) {
        if off % 7 != 0 {
            continue;
        }
        let local = (utc_2359 + off).rem_euclid(24 * 60);
        let (s, a) = if off >= 0 { ('+', off) } else { ('-', -off) };
        let text =
            format!("\"{:02}:{:02}:60.5{s}{:02}:{:02}\"", local / 60, local % 60, a / 60, a % 60);
        assert!(c.accepts(&text), "{text}");
        checked += 1;
    }
    assert!(checked > 1000);
    assert!(c.accepts("\"23:59:60Z\""));
    assert!(!c.accepts("\"23:58:60Z\""));
}

/// `format: date-time` reads the date once, then the same times as `format: time`
/// (leap seconds included, against every offset case); a bad date or time fails either way.
#[test]
fn date_times_take_the_leap_seconds_of_times() {
    let c = Checker::new(&json!({"type": "string", "format": "date-time"})).unwrap();
    for (text, ok) in [
        ("2016-12-31T15:59:60-08:00", true),
        ("2016-12-31T15:59:60-07:00", false),
        ("2016-12-31T23:29:60+23:30", true),
        ("2016-12-31T23:29:60+23:31", false),
        ("2016-12-31T00:59:60+01:00", true),
        ("2016-12-31T00:59:60+02:00", false),
        ("2016-12-31t23:59:60.25z", true),
        ("2016-12-31T12:00:60Z", false),
        ("2016-12-31T12:00:59Z", true),
        ("2016-02-30T12:00:00Z", false),
        ("2016-02-29T24:00:00Z", false),
        ("2016-02-29T23:59:60+00:00", true),
        ("2016-02-29T23:59:60-00:00", true),
    ] {
        assert_eq!(c.accepts(&format!("\"{text}\"")), ok, "{text}");
    }
}

/// Schemas no value meets are compile errors saying why in the schema's terms (never an
/// internal rule name, never a matcher with nothing to allow); contradictions in a part
/// that is not needed (an optional property, numbers beside strings) are not errors.
#[test]
fn unsatisfiable_schemas_are_errors() {
    let err = |s: serde_json::Value| match Checker::new(&s) {
        Ok(_) => panic!("{s} compiled"),
        Err(e) => e.to_string(),
    };
    let cases = [
        (json!(false), "unsatisfiable"),
        (json!({"enum": []}), "`enum` is empty at /"),
        (json!({"type": "string", "minLength": 5, "maxLength": 2}), "`minLength` 5 is above"),
        (json!({"type": "array", "minItems": 3, "maxItems": 1}), "`minItems` 3 is above"),
        (
            json!({"allOf": [{"type": "string"}, {"type": "integer"}]}),
            "the schemas of `allOf` at / have no value in common",
        ),
        (
            json!({"type": "integer", "minimum": 5, "maximum": 2}),
            "`minimum` 5 is above `maximum` 2",
        ),
        (json!({"type": "number", "exclusiveMinimum": 2, "maximum": 2}), "`exclusiveMinimum` 2"),
        (
            json!({"type": "object", "properties": {"age": {"type": "integer", "minimum": 5,
                "maximum": 2}}, "required": ["age"]}),
            "at /properties/age",
        ),
    ];
    for (s, want) in cases {
        let e = err(s.clone());
        assert!(e.contains(want), "{s}: {e:?} does not contain {want:?}");
        assert!(!e.contains("j0") && !e.contains("derives"), "{s}: internal name in {e:?}");
    }
    check(json!({"minimum": 5, "maximum": 2}), &["\"a\"", "null"], &["3", "6"]);
    check(
        json!({"type": "object", "properties": {"age": {"type": "integer", "minimum": 5,
            "maximum": 2}}}),
        &["{}"],
        &["{\"age\":3}"],
    );
}

/// `any_order` with 30 properties, all required: any permutation is accepted, a duplicate
/// or a missing one is not, and nothing of size 2^30 is built (the parametric rule's
/// instances are made along the parse).
#[test]
fn any_order_with_thirty_properties() {
    let n = 30;
    let props: serde_json::Map<String, serde_json::Value> =
        (0..n).map(|i| (format!("p{i}"), json!({"type": "integer"}))).collect();
    let required: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
    let schema = json!({"type": "object", "properties": props, "required": required,
        "additionalProperties": false, "x-guidance": {"any_order": true}});
    let c = Checker::new(&schema).unwrap();
    let text = |order: &[usize]| {
        let body: Vec<String> = order.iter().map(|i| format!("\"p{i}\":{i}")).collect();
        format!("{{{}}}", body.join(","))
    };
    let forward: Vec<usize> = (0..n).collect();
    let backward: Vec<usize> = (0..n).rev().collect();
    let shuffled: Vec<usize> = (0..n).map(|i| i * 7 % n).collect();
    for o in [&forward, &backward, &shuffled] {
        assert!(c.accepts(&text(o)), "{}", text(o));
    }
    let mut dup = shuffled.clone();
    dup[5] = dup[4];
    assert!(!c.accepts(&text(&dup)));
    assert!(!c.accepts(&text(&shuffled[1..])));
}

/// `oneOf` branches that are disjoint where the schema can hold: object branches without
/// `type` under a sibling `"type": "object"` (each branch alone also allows every scalar),
/// told apart by a required property's `enum`; and branches each requiring a key that the
/// others allow only as `null`, not requiring it. Exact, and compiled as their union (the
/// same lexemes as `anyOf`; as complements, such a `oneOf` of three packages took 91 ms).
#[test]
fn one_of_branches_disjoint_within_their_type() {
    let pkg = |v: &str, x: &str| {
        json!({"properties": {"v": {"type": "string", "enum": [v]}, "x": {"type": x}},
            "required": ["v"], "additionalProperties": false})
    };
    let tagged = json!({"type": "object", "oneOf": [pkg("2", "integer"), pkg("3", "string")]});
    check(
        tagged.clone(),
        &[r#"{"v":"2","x":1}"#, r#"{"v":"3","x":"s"}"#, r#"{"v":"3"}"#],
        &[r#"{"v":"2","x":"s"}"#, r#"{"v":"4"}"#, r#"{}"#, r#"1"#, r#"{"v":"3","y":1}"#],
    );
    let one = |key: &str, others: &str| {
        json!({"type": "object", "properties": {key: {"type": "string"}},
            "patternProperties": {others: {"type": "null"}}, "required": [key]})
    };
    let keyed = json!({"oneOf": [one("a", "^(b|c)$"), one("b", "^(a|c)$"), one("c", "^(a|b)$")]});
    check(
        keyed.clone(),
        &[r#"{"a":"x"}"#, r#"{"b":"y","c":null}"#, r#"{"c":"z","a":null,"b":null}"#],
        &[r#"{"a":"x","b":"y"}"#, r#"{"a":null}"#, r#"{}"#, r#""a""#],
    );
    let lexemes = |s: &serde_json::Value| {
        let set = grammars::json_schema::compile_schema(s).unwrap();
        let limits = grammars::compile::CompileLimits::default();
        grammars::compile::compile(&set, None, &limits).unwrap().spec.lexemes.len()
    };
    for s in [tagged, keyed] {
        let mut any = s.clone();
        any["anyOf"] = any["oneOf"].take();
        any.as_object_mut().unwrap().remove("oneOf");
        assert_eq!(lexemes(&s), lexemes(&any), "{s}: compiled as its union");
    }
}

/// `oneOf` branches giving a property the same string schema: the "valid under one branch
/// only" lexeme of that property is `x & ~x`, which the front end drops as empty rather than
/// leave the lexer to prove it (derivre took 140 ms on it for a `date-time`); the other
/// branch's discriminating property still decides.
#[test]
fn one_of_branches_sharing_a_string_schema() {
    let shared =
        json!({"start": {"type": "string", "format": "date-time"}, "name": {"type": "string"}});
    let branch = |mode: serde_json::Value| {
        json!({
            "properties": {"mode": mode},
            "allOf": [{"properties": shared.clone()}],
            "required": ["mode"]
        })
    };
    let (a, bc) = (json!({"enum": ["a"]}), json!({"enum": ["b", "c"]}));
    let s = json!({"type": "object", "oneOf": [branch(a), branch(bc)]});
    check(
        s.clone(),
        &[
            r#"{"mode":"a","start":"2024-12-07T00:00:00-08:00"}"#,
            r#"{"mode":"c","start":"2016-12-31T15:59:60-08:00","name":"x"}"#,
        ],
        &[r#"{"mode":"d","start":"2024-12-07T00:00:00Z"}"#, r#"{"mode":"a","start":"2024-12-07"}"#],
    );
    let set = grammars::json_schema::compile_schema(&s).unwrap();
    let c = grammars::compile::compile(&set, None, &grammars::compile::CompileLimits::default())
        .unwrap();
    // Free keys are `"…" & ~("mode"|"start"|"name")`; no `date-time` lexeme has a `~`.
    for l in &c.spec.lexemes {
        let text = format!("{:?}", l.regex);
        let date_time = text.contains("[Tt]");
        assert!(!(date_time && text.contains("Not(")), "x & ~x left: {text:.300}");
    }
}

/// `allOf` of ranges, `anyOf`s of `multipleOf`s and their complements (MaskBench's
/// Handwritten allany6): the lexer's liveness checks fit the step's fuel (a coarser check
/// before derivre's full one once took the fuel the full one needed).
#[test]
fn multiple_of_combinations_fit_the_step_fuel() {
    let schema = json!({
        "type": "number",
        "allOf": [{"minimum": -4000}, {"maximum": -3000}, {"minimum": -10000}, {"maximum": -2000},
            {"$ref": "#/definitions/any1"}, {"$ref": "#/definitions/any2"},
            {"$ref": "#/definitions/any3"}, {"not": {"multipleOf": 8}}],
        "definitions": {
            "any1": {"anyOf": [{"multipleOf": 33}, {"multipleOf": 12}, {"multipleOf": 77}]},
            "any2": {"anyOf": [{"allOf": [{"not": {"multipleOf": 6}}, {"not": {"multipleOf": 7}}]},
                {"multipleOf": 35}]},
            "any3": {"anyOf": [{"not": {"multipleOf": 11}}, {"multipleOf": 7}]}
        }
    });
    check(schema, &["-3850", "-3780", "-3465"], &["-3003", "-3036", "-3850.5", "-2100"]);
}

/// A definition used through `$ref` under many properties (and through a chain of
/// `$ref`-only definitions) is one set of grammar rules: before, each use emitted its own
/// copy of the definition's object rules (Github_ultra---o13934: 75,193 rules, 1.5 s).
/// Where `$ref` has a validating sibling (2019-09 and later), the use keeps its own rules.
#[test]
fn a_definition_used_many_times_is_emitted_once() {
    let props: serde_json::Map<String, serde_json::Value> =
        (0..40).map(|i| (format!("k{i}"), json!({"type": "string"}))).collect();
    let uses: serde_json::Map<String, serde_json::Value> =
        (0..60).map(|i| (format!("u{i}"), json!({"$ref": "#/definitions/alias"}))).collect();
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {
            "fields": {"type": "object", "properties": props, "additionalProperties": false},
            "alias": {"$ref": "#/definitions/fields", "description": "the same fields"}
        },
        "type": "object", "properties": uses, "additionalProperties": false
    });
    let rules = grammars::json_schema::compile_schema(&schema).unwrap().grammars[0].rules.len();
    // 60 uses x (41 x 2 key-chain states) would be ~5,000.
    assert!(rules < 400, "{rules} rules");
    check(
        schema,
        &[r#"{"u0":{"k1":"a"},"u59":{}}"#, "{}"],
        &[r#"{"u0":{"x":"a"}}"#, r#"{"u0":{"k1":1}}"#],
    );

    // 2020-12 (no `$schema`): `$ref` beside annotations and `x-` extensions only.
    let uses: serde_json::Map<String, serde_json::Value> = (0..60)
        .map(|i| {
            let r = json!({"$ref": "#/$defs/fields", "x-intellij-html-description": "<b>f</b>",
                "propertyOrder": i, "description": "the fields"});
            (format!("u{i}"), r)
        })
        .collect();
    let props: serde_json::Map<String, serde_json::Value> =
        (0..40).map(|i| (format!("k{i}"), json!({"type": "string"}))).collect();
    let schema = json!({
        "$defs": {"fields": {"type": "object", "properties": props, "additionalProperties": false}},
        "type": "object", "properties": uses, "additionalProperties": false
    });
    let rules = grammars::json_schema::compile_schema(&schema).unwrap().grammars[0].rules.len();
    assert!(rules < 400, "{rules} rules");
    check(schema, &[r#"{"u3":{"k0":"a"}}"#], &[r#"{"u3":{"x":"a"}}"#]);

    // 2020-12: `$ref` beside `minProperties` applies both.
    let schema = json!({
        "$defs": {"o": {"type": "object", "properties": {"a": {"type": "integer"}}}},
        "type": "object",
        "properties": {
            "p": {"$ref": "#/$defs/o", "minProperties": 1},
            "q": {"$ref": "#/$defs/o", "title": "annotation only"}
        }
    });
    check(schema, &[r#"{"p":{"a":1},"q":{}}"#], &[r#"{"p":{}}"#, r#"{"q":{"a":"x"}}"#]);
}

/// Productivity over a long chain of rules listed in the order that made the old fixpoint
/// take one pass per rule: decided in one pass over the rules now, both ways.
#[test]
fn a_long_chain_of_definitions_is_productive_or_not() {
    let chain = |last: serde_json::Value| {
        let mut defs = serde_json::Map::new();
        for i in 0..300 {
            defs.insert(
                format!("d{i}"),
                json!({"type": "array", "items": {"$ref": format!("#/$defs/d{}", i + 1)},
                    "minItems": 1}),
            );
        }
        defs.insert("d300".into(), last);
        json!({"$defs": defs, "$ref": "#/$defs/d0"})
    };
    let ok = chain(json!({"type": "integer"}));
    let mut deep = "1".to_string();
    for _ in 0..300 {
        deep = format!("[{deep}]");
    }
    check(ok, &[deep.as_str()], &["[]", "1"]);
    let e = Checker::new(&chain(json!(false))).err().map(|e| e.to_string());
    assert!(e.as_deref().is_some_and(|e| e.contains("unsatisfiable")), "{e:?}");
}

/// Strings bounded by length alone past `LONG_STRING` characters are chunked into a sub-grammar
/// (`long_string.rs`): the same strings exactly, at every length around the bounds and the
/// chunk boundaries, with escapes and multi-byte characters counted as one character, no
/// whitespace between chunks, in objects and arrays and beside a short string.
#[test]
fn long_strings_are_chunked_exactly() {
    let unit = [" ", "a", "é", "\\n", "\\u0001", "😀"];
    let text = |n: usize| -> String {
        let s: String = (0..n).map(|i| unit[i % unit.len()]).collect();
        format!("\"{s}\"")
    };
    let (k, long) = (LONG_STRING_CHUNK as usize, LONG_STRING as usize);
    let bounds: [(usize, Option<usize>); 5] = [
        (0, Some(long + 808)),
        (long + 808, Some(long + 1108)),
        (long + 1, None),
        (0, Some(long + 104)),
        (k + 1024, Some(k + 1024)),
    ];
    for (lo, hi) in bounds {
        let mut schema = json!({"type": "string", "minLength": lo});
        if let Some(h) = hi {
            schema["maxLength"] = json!(h);
        }
        let c = Checker::new(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        let top = hi.unwrap_or(lo + 200);
        // Around the ends of the first chunks.
        let mut lens = vec![0, 1, k - 1, k, k + 1, 2 * k - 1, 2 * k, 2 * k + 1, lo, top, top + 1];
        lens.extend([lo.saturating_sub(1), lo + 1, top.saturating_sub(1)]);
        for n in lens {
            let want = n >= lo && hi.is_none_or(|h| n <= h);
            assert_eq!(c.accepts(&text(n)), want, "{schema}: length {n}");
        }
        // Nothing between chunks, or after the opening quote: whitespace there is characters
        // (counted) or, raw newlines, invalid; never a skip.
        let s: String = "b".repeat(k);
        assert!(!c.accepts(&format!("\"{s}\" \"{s}\"")), "{schema}: two strings");
        assert!(!c.accepts(&format!("\"{s}\n{s}\"")), "{schema}: a raw newline between chunks");
        assert!(!c.accepts("\"\nb\""), "{schema}: a raw newline after the quote");
        if let Some(h) = hi {
            let over = format!("\" {}\"", "b".repeat(h));
            assert!(!c.accepts(&over), "{schema}: a leading space is a character");
        }
    }
    // Inside an object, with a second long string of the same bound (one sub-grammar) and a
    // short one.
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "string", "maxLength": long + 808},
        "b": {"type": "string", "maxLength": long + 808},
        "c": {"type": "string", "maxLength": 5}},
        "required": ["a", "b", "c"], "additionalProperties": false});
    let set = grammars::json_schema::compile_schema(&schema).unwrap();
    assert_eq!(set.grammars.len(), 2, "one sub-grammar for both long strings");
    let c = Checker::new(&schema).unwrap();
    let ok = format!(r#"{{"a": {}, "b": {}, "c": "12345"}}"#, text(long + 807), text(long + 808));
    assert!(c.accepts(&ok));
    let bad = format!(r#"{{"a": {}, "b": {}, "c": "1"}}"#, text(long + 809), text(3));
    assert!(!c.accepts(&bad));
}

/// A one-class `pattern` beside long bounds (fused into `[a-zé😀 ]{0,100000}`) is chunked
/// as a length-only string is: a sub-grammar, the same strings (lengths around the chunk
/// ends, characters outside the class rejected anywhere), where one lexeme needed a lexer
/// state per position (a 60,000-character value failed).
#[test]
fn long_class_strings_are_chunked_exactly() {
    let unit = ["a", " ", "é", "😀", "z"];
    let text = |n: usize| -> String { (0..n).map(|i| unit[i % unit.len()]).collect() };
    let q = |s: &str| format!("\"{s}\"");
    let class = "^[a-zé😀 ]*$";
    let (k, long) = (LONG_STRING_CHUNK as usize, LONG_STRING as usize);
    let bounds: [(usize, Option<usize>); 4] = [
        (0, Some(100_000)),
        (long + 808, None),
        (long + 308, Some(long + 308)),
        (1, Some(long + 1808)),
    ];
    for (lo, hi) in bounds {
        let mut schema = json!({"type": "string", "minLength": lo, "pattern": class});
        if let Some(h) = hi {
            schema["maxLength"] = json!(h);
        }
        let set = grammars::json_schema::compile_schema(&schema).unwrap();
        assert_eq!(set.grammars.len(), 2, "{schema}: a long string's sub-grammar");
        let c = Checker::new(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        let top = hi.unwrap_or(lo + 300).min(2 * k + 808);
        for n in [
            0,
            1,
            k - 1,
            k,
            k + 1,
            2 * k,
            2 * k + 1,
            lo.saturating_sub(1),
            lo,
            lo + 1,
            top,
            top + 1,
        ] {
            let want = n >= lo && hi.is_none_or(|h| n <= h);
            assert_eq!(c.accepts(&q(&text(n))), want, "{schema}: length {n}");
        }
        // A character outside the class, before, at and after a chunk's end.
        let n = lo.max(2 * k + 104);
        for at in [10, k - 1, k, 2 * k + 4] {
            let mut s: Vec<char> = text(n).chars().collect();
            s[at] = 'Q';
            let s: String = s.into_iter().collect();
            assert!(!c.accepts(&q(&s)), "{schema}: 'Q' at {at}");
        }
    }
}

/// A bound beside a pattern of more than one class stays one lexeme, a lexer state per
/// position: a 55,000-character value fits the lexer's states (it failed at ~50,000 with a
/// limit of 50,000), and a character outside the pattern near its end is still rejected.
#[test]
fn a_bound_beside_a_pattern_takes_a_state_per_position() {
    let schema = json!({"type": "string", "maxLength": 100_000, "pattern": "^[a-z]+( [a-z]+)*$"});
    let c = Checker::new(&schema).unwrap();
    let words = ["alpha", "be", "gamma", "d"];
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 55_000 {
        s.push_str(words[i % words.len()]);
        s.push(' ');
        i += 1;
    }
    let s = s.trim_end().to_string();
    assert!(c.accepts(&format!("\"{s}\"")), "{} characters", s.len());
    let bad = format!("\"{}  {}\"", &s[..54_000], &s[54_000..]);
    assert!(!c.accepts(&bad), "two spaces at 54,000");
}

/// More than six `patternProperties` compile when they share schemas: patterns that every
/// clause gives the same schema are one pattern (their alternation), so the regions are per
/// distinct schema. Exact: each key still gets the schemas of the patterns it matches.
#[test]
fn many_pattern_properties_with_few_schemas() {
    let mut pats = serde_json::Map::new();
    for i in 0..10 {
        pats.insert(format!("^p{i}_"), json!({"type": "integer"}));
    }
    pats.insert("^s_".into(), json!({"type": "string"}));
    pats.insert("_x$".into(), json!({"minimum": 5}));
    let schema =
        json!({"type": "object", "patternProperties": pats, "additionalProperties": false});
    check(
        schema,
        &[r#"{"p3_a": 1, "s_b": "t"}"#, r#"{"p9_z": 7}"#, r#"{"p1_x": 6}"#, r#"{"s_x": "t"}"#],
        &[r#"{"p3_a": "one"}"#, r#"{"q": 1}"#, r#"{"p1_x": 4}"#, r#"{"s_b": 2}"#],
    );
}

/// Anchors inside a group at a branch's edge (as real schemas write them): concatenation
/// distributes over union, so `^(a|$)` is `^a` or `^$`, `(^a|b)` is `^a` or `b`; search
/// semantics elsewhere. Anchors elsewhere stay an error.
#[test]
fn anchors_in_groups_at_the_edges() {
    let s = |p: &str| json!({"type": "string", "pattern": p});
    check(
        s(r"^$|(^(?:\S+\s+){0,3}\S+$)"),
        &[r#""""#, r#""a b""#, r#""abc""#],
        &[r#"" a""#, r#""a ""#, r#""a b c d e""#],
    );
    check(s(r"^([^,]|$)"), &[r#""""#, r#""a,b""#, r#""x""#], &[r#"",a""#]);
    check(
        s(r"(^Hpt_|^Int_|_Armour_)"),
        &[r#""Hpt_x""#, r#""zz_Armour_zz""#],
        &[r#""xHpt_""#, r#""Int""#],
    );
    check(
        s(r"^([0-9x]+\.[0-9x]+\.*[0-9x]*$|\%VERSION\%)"),
        &[r#""1.2""#, r#""1.2.3""#, r#""%VERSION%abc""#],
        &[r#""a1.2""#, r#""1.2a""#, r#""x%VERSION%""#],
    );
    check(
        s(r"(^gs://(.+))|(^https://(.+))"),
        &[r#""gs://b""#, r#""https://x""#],
        &[r#""xgs://b""#, r#""gs://""#],
    );
    check(s(r"(?:^a)"), &[r#""ab""#], &[r#""ba""#]);
    for bad in [r"a^b", r"(^a)+", r"^(a$)*b"] {
        let e = grammars::json_schema::compile_schema(&s(bad)).expect_err("an error");
        assert!(e.to_string().contains("anchor"), "{bad}: {e}");
    }
}

/// Several `contains` on one array (from `allOf`): each element is counted by a subset of
/// them, each count within its own bounds.
#[test]
fn several_contains_on_one_array() {
    check(
        json!({"type": "array", "allOf": [{"contains": {"const": 1}}, {"contains": {"const": 2}}]}),
        &["[1, 2]", "[2, 0, 1]", "[1, 2, 1]"],
        &["[1]", "[2, 2]", "[]"],
    );
    check(
        json!({"type": "array", "allOf": [
            {"contains": {"type": "integer"}, "maxContains": 1},
            {"contains": {"type": "string"}, "minContains": 2}]}),
        &[r#"["a", "b", 1]"#, r#"[1, "a", "b", "c"]"#],
        &[r#"["a", 1, 2, "b"]"#, r#"["a", 1]"#, r#"["a", "b"]"#, "[]"],
    );
    // One element counted by both.
    check(
        json!({"allOf": [{"contains": {"minimum": 5}}, {"contains": {"maximum": 5}}]}),
        &["[5]", "[1, 9]"],
        &["[1]", "[9, 9]"],
    );
}

/// A pattern that starts with a look-ahead (`^(?!X)Y`, `^(?=X)Y`) is the intersection of
/// `^Y` with (the complement of) `X` followed by anything; exact, so `not` of it is too.
#[test]
fn look_aheads_at_the_start_of_a_pattern() {
    let s = |p: &str| json!({"type": "string", "pattern": p});
    check(s("^(?!@@)[@a-z]+$"), &[r#""@x""#, r#""a@@""#], &[r#""@@x""#, r#""@@""#]);
    check(s("^(?!pattern$).*$"), &[r#""patterns""#, r#""""#], &[r#""pattern""#]);
    check(
        s("^(?!(False|None|True)$)[A-Za-z]+$"),
        &[r#""Truex""#, r#""abc""#],
        &[r#""True""#, r#""None""#, r#""a1""#],
    );
    check(s("^(?=a)[a-z]+"), &[r#""abc""#, r#""a1""#], &[r#""bcd""#, r#""""#]);
    check(
        json!({"type": "string", "not": {"pattern": "^(?!a)"}}),
        &[r#""abc""#, r#""a""#],
        &[r#""bcd""#, r#""""#],
    );
    // not at the start, or beside another alternative: still an error
    for p in ["a(?!b)", "^(?!a)b|c", "a(?<=b)"] {
        let e = Checker::new(&s(p)).err().expect("an error");
        assert!(e.to_string().contains("look-around"), "{p}: {e}");
    }
    // A modifier group (ECMAScript 2025) is named as such, not as a look-around.
    for p in ["^(?i:[a-z]+)$", "^(?-i:a)$"] {
        let e = Checker::new(&s(p)).err().expect("an error");
        assert!(e.to_string().contains("modifier group"), "{p}: {e}");
    }
}

/// `uniqueItems` over a finite domain: the states are the sets of values used, so a domain
/// past 12 values compiles under a small `maxItems` (15 values, at most 2: 121 states), and
/// is refused with its sizes where the sets are too many.
#[test]
fn unique_items_over_a_larger_domain_under_max_items() {
    let vals: Vec<String> = (b'a'..=b'o').map(|c| (c as char).to_string()).collect();
    let s = json!({"type": "array", "items": {"enum": vals}, "uniqueItems": true, "maxItems": 2});
    let c = Checker::new(&s).unwrap();
    for x in &vals {
        for y in &vals {
            let t = format!("[\"{x}\",\"{y}\"]");
            assert_eq!(c.accepts(&t), x != y, "{t}");
        }
    }
    assert!(c.accepts("[]") && c.accepts("[\"a\"]") && !c.accepts("[\"a\",\"b\",\"c\"]"));
    let e = Checker::new(&json!({"items": {"enum": vals}, "uniqueItems": true}))
        .err()
        .expect("too many");
    assert!(e.to_string().contains("uniqueItems") && e.to_string().contains("15"), "{e}");
}

/// `uniqueItems` over objects closed over a few keys of known values (a discriminator with
/// fixed fields): their combinations are the finite domain, so distinctness is exact.
#[test]
fn unique_items_over_closed_objects() {
    let s = json!({"type": "array", "uniqueItems": true, "items": {"type": "object",
        "properties": {"kind": {"enum": ["a", "b"]}, "on": {"type": "boolean"}},
        "required": ["kind"], "additionalProperties": false}});
    let c = Checker::new(&s).unwrap();
    assert!(c.accepts(r#"[{"kind":"a"},{"kind":"a","on":true},{"kind":"b","on":false}]"#));
    assert!(!c.accepts(r#"[{"kind":"a","on":true},{"kind":"a","on":true}]"#));
    assert!(!c.accepts(r#"[{"kind":"a"},{"kind":"a"}]"#));
    assert!(!c.accepts(r#"[{"kind":"c"}]"#));
    assert!(!c.accepts(r#"[{"on":true}]"#), "kind is required");
    // an open object, or a free string field: not a finite domain
    for items in [
        json!({"type": "object"}),
        json!({"properties": {"n": {"type": "string"}}, "additionalProperties": false}),
    ] {
        let e =
            Checker::new(&json!({"items": items, "uniqueItems": true})).err().expect("an error");
        assert!(e.to_string().contains("uniqueItems"), "{e}");
    }
}

/// `$` inside a repeated group can only be the last iteration's: `P(A|Z$){m,n}` is
/// `P(A){m,n}` or `P(A){m-1,n-1}Z` at the end (also through a trailing group, `X(,|$)`).
#[test]
fn end_anchors_inside_a_repeated_group() {
    let s = |p: &str| json!({"type": "string", "pattern": p});
    check(
        s("^([^,]+(,|$)){3,}$"),
        &[r#""a,b,c""#, r#""a,b,c,""#, r#""a,b,c,d""#],
        &[r#""a,b""#, r#""""#, r#""a,,b,c""#],
    );
    check(
        s(r"^(\/?((\.{2})|([a-z0-9\-]*))($|\/))*$"),
        &[r#""""#, r#""/a/b/""#, r#""a/../b""#, r#""a//b""#],
        &[r#""A""#, r#""a,b""#, r#""a/.../b""#],
    );
    // search semantics: after a `$` iteration nothing; after the others anything
    check(s("^(a|b$)+"), &[r#""ab""#, r#""aX""#, r#""b""#], &[r#""ba""#, r#""X""#]);
    check(s("^(x$){2}"), &[], &[r#""x""#, r#""xx""#]);
}

/// `dependentRequired` tracked in the object's states: keys needed after, before, through
/// other keys, by required keys, missing from the object; beside `maxProperties` (the
/// expanded form) and under `not`.
#[test]
fn dependent_required_in_every_order() {
    let props = |ks: &[&str]| -> serde_json::Value {
        ks.iter().map(|k| (k.to_string(), json!({"type": "integer"}))).collect()
    };
    // A chain, each key needing the next.
    check(
        json!({"properties": props(&["p0", "p1", "p2", "p3", "p4"]), "dependentRequired":
            {"p0": ["p1"], "p1": ["p2"], "p2": ["p3"], "p3": ["p4"]}}),
        &["{}", r#"{"p4":1}"#, r#"{"p3":1,"p4":1}"#, r#"{"p0":1,"p1":1,"p2":1,"p3":1,"p4":1}"#],
        &[r#"{"p0":1}"#, r#"{"p0":1,"p1":1,"p2":1,"p3":1}"#, r#"{"p2":1,"p4":1}"#, r#"{"p3":1}"#],
    );
    // The needed key comes first.
    check(
        json!({"properties": props(&["a", "b"]), "dependentRequired": {"b": ["a"]}}),
        &["{}", r#"{"a":1}"#, r#"{"a":1,"b":2}"#],
        &[r#"{"b":2}"#],
    );
    // Through another key, both ways: a needs c, c needs b; order a, b, c.
    check(
        json!({"properties": props(&["a", "b", "c"]), "dependentRequired":
            {"a": ["c"], "c": ["b"]}}),
        &["{}", r#"{"b":1}"#, r#"{"b":1,"c":1}"#, r#"{"a":1,"b":1,"c":1}"#],
        &[r#"{"a":1,"c":1}"#, r#"{"a":1,"b":1}"#, r#"{"c":1}"#, r#"{"a":1}"#],
    );
    // A required key's needs, after it and before it.
    check(
        json!({"properties": props(&["b", "a", "c"]), "required": ["a"], "dependentRequired":
            {"a": ["b", "c"]}}),
        &[r#"{"b":1,"a":1,"c":1}"#],
        &[r#"{"a":1}"#, r#"{"b":1,"a":1}"#, r#"{"a":1,"c":1}"#, "{}"],
    );
    // Needing a key the object cannot have.
    check(
        json!({"properties": props(&["a"]), "additionalProperties": false,
            "dependentRequired": {"a": ["zz"]}}),
        &["{}"],
        &[r#"{"a":1}"#],
    );
    // A key outside `properties`, needed and needing.
    check(
        json!({"properties": props(&["a"]), "dependentRequired": {"a": ["x"], "y": ["a"]}}),
        &["{}", r#"{"a":1,"x":true}"#, r#"{"a":1,"x":1,"y":2}"#],
        &[r#"{"a":1}"#, r#"{"y":2}"#],
    );
    // Twelve independent pairs (the union form made 4,096 alternatives and failed).
    let keys: Vec<String> = (0..12).flat_map(|i| [format!("a{i}"), format!("b{i}")]).collect();
    let ks: Vec<&str> = keys.iter().map(String::as_str).collect();
    let deps: serde_json::Map<String, serde_json::Value> =
        (0..12).map(|i| (format!("a{i}"), json!([format!("b{i}")]))).collect();
    check(
        json!({"properties": props(&ks), "dependentRequired": deps}),
        &["{}", r#"{"a0":1,"b0":1,"b1":1,"a11":1,"b11":1}"#],
        &[r#"{"a0":1,"b1":1}"#, r#"{"a0":1,"b0":1,"a11":1}"#],
    );
    // Beside maxProperties and minProperties: expanded into the union.
    check(
        json!({"properties": props(&["a", "b"]), "maxProperties": 1,
            "dependentRequired": {"a": ["b"]}}),
        &["{}", r#"{"b":1}"#],
        &[r#"{"a":1}"#, r#"{"a":1,"b":1}"#],
    );
    check(
        json!({"properties": props(&["a", "b", "c"]), "minProperties": 2,
            "additionalProperties": false, "dependentRequired": {"c": ["a"]}}),
        &[r#"{"a":1,"b":1}"#, r#"{"a":1,"c":1}"#, r#"{"a":1,"b":1,"c":1}"#],
        &[r#"{"b":1,"c":1}"#, r#"{"a":1}"#],
    );
    // Its complement: a present, b absent.
    check(
        json!({"type": "object", "not": {"dependentRequired": {"a": ["b"]}}}),
        &[r#"{"a":1}"#, r#"{"a":1,"c":2}"#],
        &["{}", r#"{"a":1,"b":2}"#, r#"{"b":2}"#],
    );
    // `any_order` objects keep any order (the union form).
    check(
        json!({"properties": props(&["a", "b"]), "dependentRequired": {"a": ["b"]},
            "x-guidance": {"any_order": true}}),
        &[r#"{"b":1,"a":1}"#, r#"{"a":1,"b":1}"#, r#"{"b":1}"#],
        &[r#"{"a":1}"#],
    );
    // `dependencies` (draft 7) with a list means the same.
    check(
        json!({"properties": props(&["a", "b"]), "dependencies": {"a": ["b"]}}),
        &[r#"{"a":1,"b":1}"#, r#"{"b":1}"#],
        &[r#"{"a":1}"#],
    );
    // Unique items over objects with a dependency: only the objects that meet it.
    check(
        json!({"type": "array", "uniqueItems": true, "items": {"type": "object",
            "properties": {"a": {"const": 1}, "b": {"const": 2}}, "additionalProperties": false,
            "dependentRequired": {"a": ["b"]}}}),
        &[r#"[{"a":1,"b":2},{"b":2},{}]"#],
        &[r#"[{"a":1}]"#, r#"[{"b":2},{"b":2}]"#],
    );
}

/// The parts of an `allOf` give their properties in array order, past ten parts too (the
/// 11th part's keys used to come before the 3rd's: locations sorted as plain strings).
#[test]
fn all_of_parts_keep_array_order() {
    let parts: Vec<serde_json::Value> = (0..12)
        .map(|i| json!({"type": "object", "properties": {format!("k{i}"): {"type": "integer"}}}))
        .collect();
    let in_order: String =
        format!("{{{}}}", (0..12).map(|i| format!("\"k{i}\":{i}")).collect::<Vec<_>>().join(","));
    check(
        json!({"allOf": parts}),
        &[&in_order, r#"{"k2":1,"k10":1}"#, r#"{"k9":1,"k10":1,"k11":1}"#],
        &[r#"{"k10":1,"k2":1}"#],
    );
}
