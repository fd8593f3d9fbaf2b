//! XGrammar's XML-parameter styles of the `json_schema` format: a tool's arguments as one
//! element per property instead of a JSON object (Qwen3-Coder's `<parameter=k>v</parameter>`,
//! MiniMax, GLM, DeepSeek's DSML, Kimi-K3).
//!
//! Semantics follow XGrammar 0.2.8 as it behaves (its grammar printout and its matcher on
//! our cases, `peer-bench/xgrammar/check_corpus.py`):
//! - the declared properties in order, each optional unless `required`, whitespace before
//!   each element and at the end; an object schema without `properties` takes any number of
//!   elements with names `[a-zA-Z_][a-zA-Z0-9_]*`;
//! - a plain string value is raw text up to the first close tag (no escapes, no quotes);
//!   `enum`/`const` values are raw too (strings unquoted, other values as JSON), as are
//!   strings with a `pattern` (whole match), a known `format` or length bounds; a type union
//!   with `string` (or an `anyOf` with a plain string) is raw text or the JSON of the rest;
//!   anything else is JSON, with whitespace around inside the element;
//! - `any_order`: the parameters in any order, each at most once, the required ones all
//!   present (XGrammar checks neither; up to 64 parameters, more keep the declared order);
//! - DeepSeek's `string="true"` marks raw values (no whitespace around them) and
//!   `string="false"` JSON ones; Kimi-K3's `type="…"` names the value's JSON type (`number`
//!   for integers; any of the seven names where the schema allows several).
//!
//! Where this is stricter than XGrammar: `additionalProperties` beside `properties` is not
//! offered (XGrammar's strict mode), `format` regexes are exact (dates by month length), and
//! `excludes` also filters `pattern`/`format` strings nested in JSON values. `cohere_xml` and
//! `minimax_m3_xml` (XML values all the way down) are in `xml_nested`; what both read of a
//! parameter schema (`$ref`s included) is in `xml_params`.

use lexer::RegexSpec;
use serde_json::{Map, Value};

use super::json::JsonOpts;
use super::text::{or_lits, text_then, with_tail};
use super::xml_nested::{Conv, Nested};
use super::xml_params::{
    enum_values, required, resolve, string_raw, types, with_defs, ANY_ORDER_MAX,
};
use super::{err, Builder};
use crate::ir::{Expr, RuleAttrs};
use crate::json_schema::resolve::Doc;
use crate::{Error, ErrorKind};

/// The XML-parameter styles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Style {
    Qwen,
    Minimax,
    Glm,
    Deepseek,
    DeepseekV41,
    KimiK3,
    Cohere,
    MinimaxM3,
}

const STYLES: &str = "json, qwen_xml, minimax_xml, glm_xml, deepseek_xml, deepseek_v4_1_xml, \
                      kimi_k3_xml, cohere_xml, minimax_m3_xml";

impl Style {
    /// The style of a `json_schema` format: `None` for `json`.
    pub(super) fn parse(s: &str) -> Result<Option<Style>, Error> {
        Ok(Some(match s {
            "json" => return Ok(None),
            "qwen_xml" => Style::Qwen,
            "minimax_xml" => Style::Minimax,
            "glm_xml" => Style::Glm,
            "deepseek_xml" => Style::Deepseek,
            "deepseek_v4_1_xml" => Style::DeepseekV41,
            "kimi_k3_xml" => Style::KimiK3,
            "cohere_xml" => Style::Cohere,
            "minimax_m3_xml" => Style::MinimaxM3,
            _ => {
                return Err(err(
                    ErrorKind::Value,
                    format!("json_schema style {s:?} is not one of {STYLES}"),
                ))
            }
        }))
    }

    /// DeepSeek's styles: the open tag says whether the value is a raw string.
    fn dsml(self) -> Option<&'static str> {
        match self {
            Style::Deepseek => Some("｜DSML｜"),
            Style::DeepseekV41 => Some("｜DSML｜ "),
            _ => None,
        }
    }

    fn close(self) -> String {
        match self {
            Style::Qwen | Style::Minimax => "</parameter>".into(),
            Style::Glm => "</arg_value>".into(),
            Style::KimiK3 => "<|close|>argument<|sep|>".into(),
            Style::Cohere => "</cofl:value>".into(),
            Style::MinimaxM3 => "]<]minimax[>[".into(),
            Style::Deepseek | Style::DeepseekV41 => {
                format!("</{}parameter>", self.dsml().unwrap_or_default())
            }
        }
    }
}

/// JSON type names of Kimi-K3's `type` attribute.
const KIMI_TYPES: [&str; 7] = ["string", "number", "integer", "boolean", "object", "array", "null"];

/// How a property's value is written.
enum Kind {
    /// Raw text up to the close tag.
    Text,
    /// Raw alternatives: string values (`strs`) and other values written as JSON (`others`);
    /// `ty`: Kimi-K3's type name when one fits all.
    Raw { strs: Vec<RegexSpec>, others: Vec<RegexSpec>, ty: Option<&'static str> },
    /// Raw text, or the JSON of this schema (the union's other members).
    TextOr(Value),
    /// JSON; Kimi-K3's type name when the schema has one type.
    Json(Value, Option<&'static str>),
}

fn kimi_type(t: &str) -> Option<&'static str> {
    Some(match t {
        "string" => "string",
        "integer" | "number" => "number",
        "boolean" => "boolean",
        "object" => "object",
        "array" => "array",
        "null" => "null",
        _ => return None,
    })
}

fn json_type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A string schema with no constraint on its characters.
fn plain_string(s: &Value) -> bool {
    types(s) == ["string"]
        && ["enum", "const", "pattern", "format", "minLength", "maxLength"]
            .iter()
            .all(|k| s.get(k).is_none())
}

fn contains_any(s: &str, bad: &[String]) -> bool {
    bad.iter().any(|b| !b.is_empty() && s.contains(b.as_str()))
}

fn classify(doc: &Doc, sub: &Value, excludes: &[String]) -> Result<Kind, Error> {
    let s = resolve(doc, sub);
    if ["allOf", "not", "if"].iter().any(|k| s.get(*k).is_some()) {
        // Combined schemas: the JSON compiler's exact value.
        let ty = match types(s).as_slice() {
            [t] => kimi_type(t),
            _ => None,
        };
        return Ok(Kind::Json(s.clone(), ty));
    }
    if let Some(values) = enum_values(s) {
        let (mut strs, mut others) = (vec![], vec![]);
        let mut tys: Vec<&str> = vec![];
        for v in values {
            let ty = json_type_of(v);
            match v {
                Value::String(x) if contains_any(x, excludes) => continue,
                Value::String(x) => strs.push(RegexSpec::Literal(x.clone())),
                _ => others.push(RegexSpec::Literal(v.to_string())),
            }
            if !tys.contains(&ty) {
                tys.push(ty);
            }
        }
        let ty = match tys.as_slice() {
            [t] => kimi_type(t),
            _ => None,
        };
        return Ok(Kind::Raw { strs, others, ty });
    }
    let ts = types(s);
    if ts == ["string"] {
        return Ok(match string_raw(s, excludes)? {
            Some(r) => Kind::Raw { strs: vec![r], others: vec![], ty: Some("string") },
            None => Kind::Text,
        });
    }
    if ts.len() > 1 && ts.contains(&"string") {
        let rest: Vec<Value> =
            ts.iter().filter(|t| **t != "string").map(|t| Value::String(t.to_string())).collect();
        let mut r = s.clone();
        r["type"] = Value::Array(rest);
        return Ok(Kind::TextOr(r));
    }
    for k in ["anyOf", "oneOf"] {
        let Some(alts) = s.get(k).and_then(Value::as_array) else { continue };
        if alts.iter().any(|a| plain_string(resolve(doc, a))) {
            let rest: Vec<Value> =
                alts.iter().filter(|a| !plain_string(resolve(doc, a))).cloned().collect();
            if rest.is_empty() {
                return Ok(Kind::Text);
            }
            let mut r = s.clone();
            r[k] = Value::Array(rest);
            return Ok(Kind::TextOr(r));
        }
    }
    let ty = match ts.as_slice() {
        [t] => kimi_type(t),
        _ => None,
    };
    Ok(Kind::Json(s.clone(), ty))
}

impl Builder {
    /// A `json_schema` format in an XML-parameter style; `tail` (a tag's end) joins the
    /// trailing whitespace in one lexeme.
    pub(super) fn xml(
        &mut self,
        schema: &Value,
        style: Style,
        opts: &JsonOpts,
        tail: Option<&[String]>,
    ) -> Result<Expr, Error> {
        for x in &opts.excludes {
            if x.starts_with(char::is_whitespace) || x.ends_with(char::is_whitespace) {
                return Err(err(
                    ErrorKind::Value,
                    format!("json_schema excludes {x:?}: XML styles reject exclusions that start or end with whitespace"),
                ));
            }
        }
        let ws_star = opts.ws_regex(0);
        let doc = Doc::with_addresses(schema)?;
        let nested = match style {
            Style::Cohere => Some(Nested::Cohere),
            Style::MinimaxM3 => Some(Nested::MinimaxM3),
            _ => None,
        };
        if let Some(n) = nested {
            return Conv::new(self, n, opts, &doc).top(schema, tail.map(or_lits));
        }
        let mut x = Xml { b: self, style, opts, ws_star: ws_star.clone(), doc: &doc };
        let s = resolve(&doc, schema);
        let props = s.get("properties").and_then(Value::as_object);
        let mut seq = Vec::new();
        match props {
            Some(props) => {
                let required = required(s);
                let mut items = Vec::new();
                for (k, sub) in props {
                    let item = x.param(RegexSpec::Literal(k.clone()), sub)?;
                    let item = x.b.rule("param", item, RuleAttrs::default());
                    items.push((item, required.contains(&k.as_str())));
                }
                if opts.any_order && items.len() > 1 && items.len() <= ANY_ORDER_MAX {
                    seq.push(self.any_order(items));
                } else {
                    for (item, req) in items {
                        seq.push(if req {
                            item
                        } else {
                            Expr::Repeat { expr: Box::new(item), min: 0, max: Some(1) }
                        });
                    }
                }
            }
            None if types(s).iter().all(|t| *t == "object")
                && s.get("additionalProperties") != Some(&Value::Bool(false)) =>
            {
                let item = x.free_param()?;
                let item = x.b.rule("param", item, RuleAttrs::default());
                seq.push(Expr::Repeat { expr: Box::new(item), min: 0, max: None });
            }
            None => {
                // Not an object of parameters: the JSON of the schema.
                let e = self.json(schema, opts)?;
                return Ok(with_tail(e, tail));
            }
        }
        match tail {
            None => seq.push(Expr::Repeat {
                expr: Box::new(Expr::Lexeme(RegexSpec::Regex(opts.ws_regex(1)))),
                min: 0,
                max: Some(1),
            }),
            Some(t) => seq
                .push(Expr::Lexeme(RegexSpec::Concat(vec![RegexSpec::Regex(ws_star), or_lits(t)]))),
        }
        Ok(Expr::Seq(seq))
    }
}

struct Xml<'b, 'o, 'd, 'v> {
    b: &'b mut Builder,
    style: Style,
    opts: &'o JsonOpts,
    ws_star: String,
    doc: &'d Doc<'v>,
}

impl Xml<'_, '_, '_, '_> {
    /// Whitespace, then the open tag of parameter `name` (Kimi-K3's `type` from `ty`:
    /// `None` any of the seven; DeepSeek's `string` from `raw`), as one lexeme: the lexer
    /// never has to end the whitespace before it sees what follows.
    fn open(&self, name: &RegexSpec, ty: Option<&str>, raw: bool) -> Expr {
        let lit = |s: &str| RegexSpec::Literal(s.to_string());
        let mut v = vec![RegexSpec::Regex(self.ws_star.clone())];
        match self.style {
            // (Cohere and MiniMax M3 are built in `xml_nested`, never here.)
            Style::Qwen | Style::Cohere | Style::MinimaxM3 => {
                v.extend([lit("<parameter="), name.clone(), lit(">")])
            }
            Style::Minimax => v.extend([lit("<parameter name=\""), name.clone(), lit("\">")]),
            Style::Glm => v.extend([
                lit("<arg_key>"),
                name.clone(),
                lit("</arg_key>"),
                RegexSpec::Regex(self.ws_star.clone()),
                lit("<arg_value>"),
            ]),
            Style::KimiK3 => {
                v.extend([lit("<|open|>argument key=\""), name.clone(), lit("\" type=\"")]);
                v.push(match ty {
                    Some(t) => lit(t),
                    None => RegexSpec::Or(KIMI_TYPES.iter().map(|t| lit(t)).collect()),
                });
                v.push(lit("\"<|sep|>"));
            }
            Style::Deepseek | Style::DeepseekV41 => {
                let d = self.style.dsml().unwrap_or_default();
                v.extend([
                    lit(&format!("<{d}parameter name=\"")),
                    name.clone(),
                    lit(if raw { "\" string=\"true\">" } else { "\" string=\"false\">" }),
                ]);
            }
        }
        Expr::Lexeme(RegexSpec::Concat(v))
    }

    /// Raw text up to the first close tag, the close tag included.
    fn text(&self) -> Expr {
        let close = vec![self.style.close()];
        Expr::Lexeme(text_then(&self.opts.excludes, &close, &[], None))
    }

    /// Raw alternatives then the close tag, with whitespace around unless `tight`.
    fn raw(&self, alts: Vec<RegexSpec>, tight: bool) -> Expr {
        let close = RegexSpec::Literal(self.style.close());
        let body = RegexSpec::Or(alts);
        Expr::Lexeme(RegexSpec::Concat(if tight {
            vec![body, close]
        } else {
            let ws = RegexSpec::Regex(self.ws_star.clone());
            vec![ws.clone(), body, ws, close]
        }))
    }

    /// A JSON value with whitespace around, then the close tag.
    fn json(&mut self, schema: &Value) -> Result<Expr, Error> {
        let sub = with_defs(self.doc.root, schema);
        let v = self.b.json(&sub, self.opts)?;
        Ok(Expr::Seq(vec![
            Expr::Repeat {
                expr: Box::new(Expr::Lexeme(RegexSpec::Regex(self.opts.ws_regex(1)))),
                min: 0,
                max: Some(1),
            },
            v,
            Expr::Lexeme(RegexSpec::Concat(vec![
                RegexSpec::Regex(self.ws_star.clone()),
                RegexSpec::Literal(self.style.close()),
            ])),
        ]))
    }

    fn seq(a: Expr, b: Expr) -> Expr {
        Expr::Seq(vec![a, b])
    }

    /// One declared parameter.
    fn param(&mut self, name: RegexSpec, sub: &Value) -> Result<Expr, Error> {
        let kind = classify(self.doc, sub, &self.opts.excludes)?;
        let dsml = self.style.dsml().is_some();
        Ok(match kind {
            Kind::Text => Self::seq(self.open(&name, Some("string"), true), self.text()),
            Kind::Raw { strs, others, ty } if dsml => {
                let mut alts = vec![];
                if !strs.is_empty() {
                    alts.push(Self::seq(self.open(&name, None, true), self.raw(strs, true)));
                }
                if !others.is_empty() {
                    alts.push(Self::seq(self.open(&name, None, false), self.raw(others, false)));
                }
                let _ = ty;
                Expr::Alt(alts)
            }
            Kind::Raw { mut strs, others, ty } => {
                strs.extend(others);
                Self::seq(self.open(&name, ty, true), self.raw(strs, false))
            }
            Kind::TextOr(rest) if dsml => Expr::Alt(vec![
                Self::seq(self.open(&name, None, true), self.text()),
                Self::seq(self.open(&name, None, false), self.json(&rest)?),
            ]),
            Kind::TextOr(rest) => {
                let j = self.json(&rest)?;
                Self::seq(self.open(&name, None, true), Expr::Alt(vec![self.text(), j]))
            }
            Kind::Json(s, ty) => {
                let j = self.json(&s)?;
                Self::seq(self.open(&name, ty, false), j)
            }
        })
    }

    /// A parameter of an object without declared properties: any name, a raw text value
    /// (DeepSeek: or a JSON value marked `string="false"`).
    fn free_param(&mut self) -> Result<Expr, Error> {
        let name = RegexSpec::Regex("[a-zA-Z_][a-zA-Z0-9_]*".into());
        if self.style.dsml().is_some() {
            let mut any = Map::new();
            any.insert(
                "type".into(),
                serde_json::json!(["number", "boolean", "null", "array", "object"]),
            );
            let any = Value::Object(any);
            return Ok(Expr::Alt(vec![
                Self::seq(self.open(&name, None, true), self.text()),
                Self::seq(self.open(&name, None, false), self.json(&any)?),
            ]));
        }
        Ok(Self::seq(self.open(&name, None, true), self.text()))
    }
}
