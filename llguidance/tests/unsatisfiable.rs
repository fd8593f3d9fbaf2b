//! Unsatisfiable parts of schemas and grammars: a schema or grammar that matches nothing is
//! a compile error saying why; one that matches something never yields an empty first mask
//! (a server cannot sample from an empty mask). Random schemas are built from satisfiable
//! and unsatisfiable fragments under objects, arrays, `anyOf` and `allOf`.

use llguidance::{ErrorKind, GrammarSource, ParserFactory};
use proptest::prelude::*;
use serde_json::{json, Value};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "integer"})),
        Just(json!({"type": "string", "maxLength": 3})),
        Just(json!({"type": "boolean"})),
        Just(json!({})),
        Just(json!({"enum": ["a", 1]})),
        // Unsatisfiable fragments.
        Just(json!({"type": "integer", "minimum": 5, "maximum": 2})),
        Just(json!({"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 1})),
        Just(json!({"enum": []})),
        Just(json!(false)),
        Just(json!({"not": {}})),
        Just(json!({"type": "string", "minLength": 3, "maxLength": 1})),
        Just(json!({"type": "array", "minItems": 2, "maxItems": 1})),
        Just(json!({"allOf": [{"type": "string"}, {"type": "integer"}]})),
        Just(json!({"const": "b", "enum": ["a"]})),
        // Contradictions that leave other kinds of values (not errors).
        Just(json!({"minimum": 5, "maximum": 2})),
        Just(json!({"minLength": 3, "maxLength": 1})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (prop::collection::vec(inner.clone(), 1..3), any::<u8>()).prop_map(|(v, req)| {
                let mut props = serde_json::Map::new();
                let mut required = Vec::new();
                for (i, s) in v.into_iter().enumerate() {
                    let k = format!("p{i}");
                    if req >> i & 1 == 1 {
                        required.push(Value::String(k.clone()));
                    }
                    props.insert(k, s);
                }
                json!({"type": "object", "properties": props, "required": required,
                    "additionalProperties": false})
            }),
            (inner.clone(), 0u32..2).prop_map(|(s, min)| json!({"type": "array", "items": s,
                "minItems": min, "maxItems": 2})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"anyOf": v})),
            prop::collection::vec(inner, 1..3).prop_map(|v| json!({"allOf": v})),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Either the schema does not compile, or its first mask allows something.
    #[test]
    fn no_empty_first_mask(s in schema()) {
        let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
        match f.create_matcher(&GrammarSource::JsonSchema(s.to_string())) {
            Err(e) => {
                prop_assert_eq!(e.kind(), ErrorKind::Grammar, "{}: {}", s, e);
                prop_assert!(!e.message().contains("j0"), "{}: internal name in {}", s, e);
            }
            Ok(mut m) => {
                let mask = m.compute_mask();
                prop_assert!(mask.is_ok(), "{}: first mask failed: {:?}", s, mask.err());
                prop_assert!(!mask.unwrap().is_empty(), "{}: empty first mask", s);
            }
        }
    }
}

/// Lark grammars whose start can never finish, or whose only lexeme matches nothing: a
/// clear compile error, or (for an empty regex intersection, which only the lexer can see)
/// a sticky error at the first mask rather than an empty mask.
#[test]
fn grammars_that_match_nothing() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let e = f.create_matcher(&GrammarSource::Lark("start: start \"a\"".into())).unwrap_err();
    assert!(e.message().contains("matches no string"), "{e}");
    let mut m = f.create_matcher(&GrammarSource::Lark("start: A\nA: /a/ & /b/".into())).unwrap();
    let e = m.compute_mask().unwrap_err();
    assert!(e.message().contains("no token can come next"), "{e}");
    assert!(m.error().is_some());
}
