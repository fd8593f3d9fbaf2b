//! The `json_schema` format's options, and its content in the `json` style: a JSON Schema
//! sub-grammar compiled by the JSON Schema front end under XGrammar's strict mode.

use serde_json::{Map, Value};

use super::{bool_field, err, str_list, Builder};
use crate::ir::Expr;
use crate::{Error, ErrorKind};

/// The options of a `json_schema` format.
#[derive(Clone, Debug, Default)]
pub(super) struct JsonOpts {
    pub(super) any_order: bool,
    /// Substrings string values and keys may not contain.
    pub(super) excludes: Vec<String>,
    /// `max_whitespace_cnt`: the longest whitespace run (`None`: unbounded).
    pub(super) max_ws: Option<u32>,
}

impl JsonOpts {
    pub(super) fn parse(o: &Map<String, Value>) -> Result<JsonOpts, Error> {
        let max_ws = match o.get("max_whitespace_cnt") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().filter(|&n| n <= u32::MAX as u64).ok_or_else(|| {
                err(ErrorKind::Value, "max_whitespace_cnt must be a non-negative integer or null")
            })? as u32),
        };
        let excludes = str_list(o.get("excludes"), "json_schema excludes")?;
        if excludes.iter().any(String::is_empty) {
            return Err(err(ErrorKind::Value, "json_schema excludes must be non-empty strings"));
        }
        Ok(JsonOpts { any_order: bool_field(o, "any_order")?, excludes, max_ws })
    }

    /// A whitespace run of at least `min` characters (at most `max_ws`).
    pub(super) fn ws_regex(&self, min: u32) -> String {
        match self.max_ws {
            None if min == 0 => "[ \n\r\t]*".into(),
            None => format!("[ \n\r\t]{{{min},}}"),
            Some(n) => format!("[ \n\r\t]{{{min},{}}}", n.max(min)),
        }
    }
}

impl Builder {
    /// A `json_schema` format's content in the `json` style.
    pub(super) fn json(&mut self, schema: &Value, o: &JsonOpts) -> Result<Expr, Error> {
        let strict = strict_schema(schema);
        let mut opts = crate::json_schema::JsonCompileOptions::from_schema(&strict)?;
        opts.any_order |= o.any_order;
        opts.string_excludes.extend(o.excludes.iter().cloned());
        // XGrammar's JSON strings: any `\uXXXX`, `\/`, a raw DEL.
        opts.general_escapes = true;
        opts.xgrammar_strings = true;
        if let Some(n) = o.max_ws {
            if n == 0 {
                opts.whitespace_flexible = false;
            } else {
                opts.whitespace_pattern = Some(o.ws_regex(1));
            }
        }
        let c = crate::json_schema::compile_schema_with(&strict, &opts)
            .map_err(|e| err(e.kind(), format!("json_schema format: {}", e.message())))?;
        crate::json_schema::push_subs(&mut self.subs, c.subs);
        Ok(self.sub_grammar("json", c.grammar))
    }
}

/// XGrammar's strict mode: object schemas with `properties` and no `additionalProperties`
/// allow no other keys (applied to every subschema).
pub(super) fn strict_schema(v: &Value) -> Value {
    let mut v = v.clone();
    let mut stack = vec![&mut v];
    while let Some(x) = stack.pop() {
        match x {
            Value::Object(o) => {
                if o.contains_key("properties")
                    && !o.contains_key("additionalProperties")
                    && !o.contains_key("patternProperties")
                    && !o.contains_key("unevaluatedProperties")
                {
                    o.insert("additionalProperties".into(), Value::Bool(false));
                }
                for (k, c) in o.iter_mut() {
                    // Values of these are not schemas.
                    if matches!(
                        k.as_str(),
                        "enum" | "const" | "required" | "x-guidance" | "examples" | "default"
                    ) {
                        continue;
                    }
                    stack.push(c);
                }
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
    v
}
