//! XGrammar's structural tags → [`GrammarSet`]: the JSON format vLLM and SGLang use for tool
//! calling (`{"type": "structural_tag", "format": {...}}`), and the legacy form
//! (`structures` of begin / schema / end plus `triggers`). Semantics follow XGrammar 0.2.8.
//!
//! # Formats
//!
//! `const_string`, `regex` (whole match, `.` matches newlines), `grammar` (XGrammar's EBNF,
//! a GBNF dialect with root rule `root`, through the GBNF front end), `json_schema`
//! (styles `json`, `qwen_xml`, `minimax_xml`, `glm_xml`, `deepseek_xml`,
//! `deepseek_v4_1_xml`, `kimi_k3_xml`, `cohere_xml`, `minimax_m3_xml`; `any_order`, `excludes`,
//! `max_whitespace_cnt`),
//! `any_text` (`excludes`, `max_chars`, `max_tokens`: before a tag's end, the text's tokens
//! are counted and then only the rest of the end may come), `token`, `exclude_token`,
//! `any_tokens`
//! (`exclude_tokens`, `max_tokens`; inside a tag, the tag's end as one token, special or
//! regular, is left to the end), `sequence`,
//! `or`, `optional`, `plus`, `star`, `repeat`, `tag`, `triggered_tags`, `tags_with_separator`,
//! `dispatch`, `token_triggered_tags`, `token_dispatch` (tokens by id, or by name for special
//! tokens), and untyped format objects whose type follows from their fields, as XGrammar
//! infers it. What we do not support is an error naming it (never a looser grammar).
//!
//! # Example: JSON only inside a fence
//!
//! Free text where a ```` ```json ```` fence, if the model opens one, holds JSON valid under
//! a schema (partial constraining, vllm-project/vllm#16979; test
//! `llguidance/tests/tool_calls.rs` `json_only_inside_a_fence`):
//!
//! ```json
//! {"type": "structural_tag", "format": {
//!   "type": "triggered_tags", "triggers": ["```json"],
//!   "tags": [{"begin": "```json\n", "end": "\n```",
//!             "content": {"type": "json_schema", "json_schema": {"type": "object"}}}]}}
//! ```
//!
//! # Free text
//!
//! Free text (`any_text`, the text between `triggered_tags`, `dispatch`) may stop anywhere,
//! never contains an exclude, and never completes a trigger unless the matching tag follows.
//! Inside a `tag`, free text also excludes the nearest tag's end strings (XGrammar's end
//! detection), and free text that ends the content is one lexeme with the end string: the
//! first occurrence of an end closes the tag. Each free-text run with what must follow it
//! (a trigger, an end string) is one lexeme, so the lexer's longest match never swallows
//! the delimiter. Where free text is followed by something else that it could also contain
//! (e.g. `sequence[any_text, const_string "Z"]` outside a tag), XGrammar splits the text
//! wherever a parse exists; here the free text is one lexeme and ends at the longest match.
//!
//! # JSON
//!
//! `json_schema` content is a JSON Schema sub-grammar with its own whitespace (flexible
//! inside, none before or after the value), and XGrammar's strict mode: an object schema
//! with `properties` and no `additionalProperties` allows no other keys.
//!
//! # Code map
//!
//! `format.rs` reads a format object and dispatches on its type; `tags.rs` builds tags,
//! triggered tags and token dispatch; `text.rs` the free-text lexemes; `json.rs` the
//! `json_schema` format in the `json` style; `xml.rs` the XML-parameter styles, with
//! `xml_nested.rs` for the styles whose values are XML all the way down and
//! `xml_params.rs` for what both read of a parameter schema.

use serde_json::{Map, Value};

use crate::ir::{Expr, Grammar, GrammarOptions, GrammarSet, Rule, RuleAttrs, SpecialToken};
use crate::{Error, ErrorKind};

mod format;
mod json;
mod tags;
mod text;
mod warm_up;
mod xml;
mod xml_nested;
mod xml_params;

pub use warm_up::warm_up_texts;

/// Nesting limit of formats.
pub const MAX_DEPTH: usize = 100;

/// Parses a structural tag (either form) into a grammar set.
pub fn parse(src: &str) -> Result<GrammarSet, Error> {
    let v: Value = serde_json::from_str(src).map_err(|e| {
        err(ErrorKind::Syntax, format!("the structural tag is not valid JSON: {e}"))
    })?;
    from_value(&v)
}

/// [`parse`] on a parsed JSON value.
pub fn from_value(v: &Value) -> Result<GrammarSet, Error> {
    let obj =
        v.as_object().ok_or_else(|| err(ErrorKind::Value, "a structural tag is an object"))?;
    match obj.get("type") {
        None => {}
        Some(Value::String(t)) if t == "structural_tag" => {}
        Some(_) => {
            return Err(err(ErrorKind::Value, "structural tag's type must be \"structural_tag\""))
        }
    }
    let format = match (obj.get("format"), obj.get("structures")) {
        (Some(f), _) => f.clone(),
        (None, Some(structures)) => legacy(structures, obj.get("triggers"))?,
        (None, None) => {
            return Err(err(ErrorKind::Value, "a structural tag needs a \"format\" field"))
        }
    };
    let mut b = Builder { rules: Vec::new(), subs: Vec::new(), fresh: 0 };
    let body = b.format(&format, &Ctx::default(), None, 0)?;
    b.rules.push(Rule { name: "start".into(), body, attrs: RuleAttrs::default(), param: false });
    let top = Grammar {
        name: None,
        start: "start".into(),
        rules: b.rules,
        terminals: vec![],
        ignore: vec![],
        options: GrammarOptions::default(),
    };
    let mut grammars = vec![top];
    grammars.extend(b.subs);
    Ok(GrammarSet { grammars })
}

/// The legacy form: each structure is a tag with JSON content, under `triggered_tags`.
fn legacy(structures: &Value, triggers: Option<&Value>) -> Result<Value, Error> {
    let list = structures
        .as_array()
        .ok_or_else(|| err(ErrorKind::Value, "\"structures\" must be an array"))?;
    let mut tags = Vec::new();
    for s in list {
        let get = |k: &str| {
            s.get(k).ok_or_else(|| err(ErrorKind::Value, format!("a structure needs {k:?}")))
        };
        let schema = match get("schema")? {
            Value::String(t) => serde_json::from_str(t).map_err(|e| {
                err(ErrorKind::Value, format!("a structure's schema string is not JSON: {e}"))
            })?,
            v => v.clone(),
        };
        tags.push(serde_json::json!({"type": "tag", "begin": get("begin")?, "end": get("end")?,
            "content": {"type": "json_schema", "json_schema": schema}}));
    }
    let triggers = triggers.cloned().unwrap_or(Value::Array(vec![]));
    Ok(serde_json::json!({"type": "triggered_tags", "triggers": triggers, "tags": tags}))
}

/// An error of the structural tag.
pub(super) fn err(kind: ErrorKind, msg: impl Into<String>) -> Error {
    Error::new(kind, msg.into())
}

/// What the enclosing context asks of free text: strings it must not contain (the nearest
/// tag's ends, from XGrammar's end detection).
#[derive(Clone, Debug, Default)]
pub(super) struct Ctx {
    pub(super) ends: Vec<String>,
    /// The nearest tag's end when it is a token: token-level free formats exclude it.
    pub(super) end_tokens: Vec<SpecialToken>,
}

/// The grammar being built: its rules, the sub-grammars it names (JSON schemas, EBNF), and
/// a counter for fresh rule names.
pub(super) struct Builder {
    pub(super) rules: Vec<Rule>,
    pub(super) subs: Vec<Grammar>,
    pub(super) fresh: usize,
}

/// A list of strings (`null` or absent: none).
pub(super) fn str_list(v: Option<&Value>, what: &str) -> Result<Vec<String>, Error> {
    match v {
        None | Some(Value::Null) => Ok(vec![]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(String::from)
                    .ok_or_else(|| err(ErrorKind::Value, format!("{what} must be strings")))
            })
            .collect(),
        Some(_) => Err(err(ErrorKind::Value, format!("{what} must be an array of strings"))),
    }
}

/// A boolean field (`null` or absent: false).
pub(super) fn bool_field(o: &Map<String, Value>, k: &str) -> Result<bool, Error> {
    match o.get(k) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(err(ErrorKind::Value, format!("{k} must be a boolean"))),
    }
}

/// The type of a format object, given or inferred from its fields (as XGrammar 0.2.8).
pub(super) fn format_type(o: &Map<String, Value>) -> Result<String, Error> {
    if let Some(t) = o.get("type") {
        return t
            .as_str()
            .map(String::from)
            .ok_or_else(|| err(ErrorKind::Value, "a format's type must be a string"));
    }
    let has = |k: &str| o.contains_key(k);
    let t = if has("begin") && has("content") && has("end") {
        "tag"
    } else if has("value") {
        "const_string"
    } else if has("json_schema") {
        "json_schema"
    } else if has("elements") {
        "sequence"
    } else if has("triggers") && has("tags") {
        "triggered_tags"
    } else if has("tags") && has("separator") {
        "tags_with_separator"
    } else if has("excludes") {
        "any_text"
    } else if has("content") {
        "optional"
    } else if has("rules") {
        "dispatch"
    } else {
        return Err(err(ErrorKind::Value, format!("invalid format: {}", Value::Object(o.clone()))));
    };
    Ok(t.to_string())
}

impl Builder {
    pub(super) fn rule(&mut self, hint: &str, body: Expr, attrs: RuleAttrs) -> Expr {
        self.fresh += 1;
        let name = format!("{hint}_{}", self.fresh);
        self.rules.push(Rule { name: name.clone(), body, attrs, param: false });
        Expr::Rule(name)
    }

    pub(super) fn sub_grammar(&mut self, hint: &str, mut g: Grammar) -> Expr {
        self.fresh += 1;
        let name = format!("__st_{hint}_{}", self.fresh);
        g.name = Some(name.clone());
        self.subs.push(g);
        Expr::Grammar(name)
    }
}
