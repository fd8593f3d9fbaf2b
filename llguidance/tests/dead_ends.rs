//! Random walks over masks never reach a position where nothing can come next: schemas
//! whose objects track state in a rule parameter (`dependentRequired`), where a key written
//! early can force keys later. Each walk picks allowed byte tokens at random (EOS when
//! allowed, with some chance) and must never meet an empty mask.

use llguidance::{GrammarSource, ParserFactory, TokenId};
use serde_json::json;

fn walks(schema: serde_json::Value, n: usize) -> usize {
    let f = ParserFactory::from_tokenizer_name("bytes").expect("the byte tokenizer");
    let m0 = f
        .create_matcher(&GrammarSource::JsonSchema(schema.to_string()))
        .unwrap_or_else(|e| panic!("{schema}: {e}"));
    let eos = m0.eos().to_vec();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut finished = 0;
    for w in 0..n {
        let mut m = m0.deep_clone();
        let mut text = Vec::new();
        for _ in 0..400 {
            let mask = m.compute_mask().unwrap_or_else(|e| {
                panic!("{schema}: walk {w} stuck after {:?}: {e}", String::from_utf8_lossy(&text))
            });
            let ids: Vec<TokenId> = mask.iter().collect();
            let ends = ids.iter().any(|t| eos.contains(t));
            if ends && rand() % 4 == 0 {
                finished += 1;
                break;
            }
            // Whitespace only rarely, so that walks get somewhere.
            let pick: Vec<TokenId> = ids
                .iter()
                .copied()
                .filter(|t| !eos.contains(t) && !b" \t\n\r".contains(&(t.0 as u8)))
                .collect();
            let Some(&t) = (if pick.is_empty() {
                ids.first()
            } else {
                pick.get(rand() as usize % pick.len())
            }) else {
                panic!("{schema}: empty mask");
            };
            if eos.contains(&t) {
                finished += 1;
                break;
            }
            text.push(t.0 as u8);
            m.consume_token(t).unwrap_or_else(|e| panic!("{schema}: {e}"));
        }
    }
    finished
}

#[test]
fn dependent_required_has_no_dead_ends() {
    let v = json!({"enum": [1, 2]});
    let cases = [
        // A chain in order and in reverse, a key needed through another, a required key's
        // needs on both sides, a need outside `properties`, needs beside counts.
        json!({"properties": {"a": v, "b": v, "c": v, "d": v}, "additionalProperties": false,
            "dependentRequired": {"a": ["b"], "b": ["c"], "c": ["d"]}}),
        json!({"properties": {"a": v, "b": v, "c": v, "d": v}, "additionalProperties": false,
            "dependentRequired": {"d": ["c"], "c": ["b"], "b": ["a"]}}),
        json!({"properties": {"a": v, "b": v, "c": v}, "additionalProperties": false,
            "dependentRequired": {"a": ["c"], "c": ["b"]}}),
        json!({"properties": {"b": v, "a": v, "c": v}, "additionalProperties": false,
            "required": ["a"], "dependentRequired": {"a": ["b", "c"], "c": ["b"]}}),
        // Free keys between a choice and the key it blocks or forces.
        json!({"properties": {"b": v, "m": v, "a": v, "n": v, "c": v},
            "additionalProperties": false, "required": ["a"],
            "dependentRequired": {"a": ["c"], "c": ["b"]}}),
        json!({"properties": {"a": v, "m": v, "b": v, "n": v, "c": v},
            "additionalProperties": false, "dependentRequired": {"a": ["c"], "c": ["b"]}}),
        json!({"properties": {"a": v, "b": v}, "additionalProperties": {"const": 0},
            "dependentRequired": {"a": ["x"], "y": ["b"], "b": ["a"]}}),
        json!({"properties": {"a": v, "b": v, "c": v}, "additionalProperties": false,
            "maxProperties": 2, "dependentRequired": {"a": ["b", "c"], "b": ["c"]}}),
        json!({"properties": {"a": v, "b": v, "c": v}, "additionalProperties": false,
            "minProperties": 2, "dependentRequired": {"c": ["a"], "b": ["a"]}}),
        json!({"properties": {"a": v, "b": v}, "additionalProperties": false,
            "dependentRequired": {"a": ["zz"], "b": ["a"]}}),
    ];
    for s in cases {
        let done = walks(s.clone(), 300);
        assert!(done > 100, "{s}: only {done} of 300 walks reached the end");
    }
}
