//! XGrammar's XML styles whose values are XML all the way down: `cohere_xml`
//! (`<cofl:value name="k" type="raw|json|dict|list">…</cofl:value>`) and `minimax_m3_xml`
//! (`]<]minimax[>[<k>…]<]minimax[>[</k>`, arrays as `<item>` elements).
//!
//! As XGrammar 0.2.8 behaves (checked with `peer-bench/xgrammar/diff_masks.py`):
//! - Cohere: a string is `raw` text up to the close tag (with `enum`, `pattern`, `format` or
//!   length bounds: those raw values, whitespace around); numbers, booleans, null and
//!   non-string `enum` values are `json`; objects are `dict` elements holding one named
//!   element per property (an object without `properties`: any names `[^\0"&<>]` or XML
//!   entities, any values); arrays are `list` elements holding unnamed elements, back to
//!   back; unions offer each type;
//! - MiniMax M3: strings are raw text without the namespace marker, numbers, booleans,
//!   null and `enum` values raw, objects nested elements, arrays `<item>` elements (empty:
//!   nothing; an object without `properties` or an array without `items` is empty, as
//!   XGrammar has it); `pattern`, `format`, length bounds and schemas without a type are
//!   errors, as in XGrammar.
//! - arrays: `prefixItems` elements in order (Cohere: all present; M3: each optional in a
//!   chain), then `items` ones;
//!   `allOf`, `not` and `if` are errors in Cohere's style (never a looser value).
//!
//! Both reject non-empty `excludes`, as XGrammar does.

use std::collections::HashMap;

use lexer::RegexSpec;
use serde_json::Value;

use super::json::JsonOpts;
use super::text::{free_text, text_then};
use super::xml_params::{
    enum_values, inferred_types, required, resolve, string_raw, types, union_branches, with_defs,
    ANY_ORDER_MAX,
};
use super::{err, Builder};
use crate::ir::{Expr, Rule, RuleAttrs};
use crate::json_schema::resolve::Doc;
use crate::{Error, ErrorKind};

/// MiniMax M3's namespace marker, before every open and close tag.
const NS: &str = "]<]minimax[>[";
const COHERE_CLOSE: &str = "</cofl:value>";
/// An XML attribute value: no `"`, `&`, `<`, `>`, NUL, except as entities.
const COHERE_KEY: &str = r#"(?:[^\x00"&<>]|&amp;|&lt;|&gt;|&quot;)+"#;
/// Nesting of schemas followed here (refs are shared rules, so only literal nesting counts).
const MAX_NESTING: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Nested {
    Cohere,
    MinimaxM3,
}

pub(super) struct Conv<'b, 'o, 'd, 'v> {
    pub(super) b: &'b mut Builder,
    pub(super) style: Nested,
    pub(super) opts: &'o JsonOpts,
    pub(super) doc: &'d Doc<'v>,
    /// Rules already made for (schema, close) pairs: `$ref` cycles end here.
    memo: HashMap<String, String>,
    /// Cohere's schema-free value, once made.
    cohere_any: Option<String>,
}

fn lit(s: &str) -> RegexSpec {
    RegexSpec::Literal(s.to_string())
}

fn unsupported(style: Nested, what: &str) -> Error {
    let name = match style {
        Nested::Cohere => "cohere_xml",
        Nested::MinimaxM3 => "minimax_m3_xml",
    };
    err(ErrorKind::Unsupported, format!("json_schema style {name}: {what}"))
}

fn opt(e: Expr) -> Expr {
    Expr::Repeat { expr: Box::new(e), min: 0, max: Some(1) }
}

/// Raw text of an `enum`/`const` value: strings unquoted, other values as JSON.
fn raw_value(v: &Value) -> RegexSpec {
    match v {
        Value::String(s) => lit(s),
        _ => lit(&v.to_string()),
    }
}

impl<'b, 'o, 'd, 'v> Conv<'b, 'o, 'd, 'v> {
    pub(super) fn new(
        b: &'b mut Builder,
        style: Nested,
        opts: &'o JsonOpts,
        doc: &'d Doc<'v>,
    ) -> Self {
        Conv { b, style, opts, doc, memo: HashMap::new(), cohere_any: None }
    }

    fn ws(&self) -> RegexSpec {
        RegexSpec::Regex(self.opts.ws_regex(0))
    }

    fn ws_opt(&self) -> Expr {
        opt(Expr::Lexeme(RegexSpec::Regex(self.opts.ws_regex(1))))
    }

    /// Whitespace then `close`, one lexeme.
    fn ws_close(&self, close: &str) -> Expr {
        Expr::Lexeme(RegexSpec::Concat(vec![self.ws(), lit(close)]))
    }

    /// A rule to be filled later (recursion), and its index.
    fn placeholder(&mut self, hint: &str) -> (String, usize) {
        self.b.fresh += 1;
        let name = format!("{hint}_{}", self.b.fresh);
        self.b.rules.push(Rule {
            name: name.clone(),
            body: Expr::Empty,
            attrs: RuleAttrs::default(),
            param: false,
        });
        (name, self.b.rules.len() - 1)
    }

    /// The JSON of a scalar schema (its `type` narrowed to `t`).
    fn json_scalar(&mut self, s: &Value, t: &str) -> Result<Expr, Error> {
        let mut s = with_defs(self.doc.root, s);
        if let Some(o) = s.as_object_mut() {
            o.insert("type".into(), Value::String(t.into()));
        }
        self.b.json(&s, self.opts)
    }

    /// The top level: the function's parameters (an object schema), then whitespace and
    /// `end` (a tag's end strings), as one lexeme.
    pub(super) fn top(&mut self, s: &Value, end: Option<RegexSpec>) -> Result<Expr, Error> {
        if !self.opts.excludes.is_empty() {
            return Err(unsupported(self.style, "excludes must be empty"));
        }
        let s = resolve(self.doc, s);
        if s.get("properties").is_none() {
            let body = if !types(s).iter().all(|t| *t == "object")
                || s.get("additionalProperties") == Some(&Value::Bool(false))
            {
                // Not an object of parameters: the JSON of the schema (as XGrammar).
                let s = with_defs(self.doc.root, s);
                self.b.json(&s, self.opts)?
            } else {
                match self.style {
                    Nested::Cohere => self.cohere_free_object(),
                    // XGrammar's M3 value of an object without properties is empty.
                    Nested::MinimaxM3 => Expr::Empty,
                }
            };
            return Ok(Expr::Seq(vec![body, self.ws_end(end)]));
        }
        self.members(s, 0, end)
    }

    /// Whitespace then `end` (nothing more where `None`), one lexeme.
    fn ws_end(&self, end: Option<RegexSpec>) -> Expr {
        Expr::Lexeme(match end {
            Some(e) => RegexSpec::Concat(vec![self.ws(), e]),
            None => self.ws(),
        })
    }

    /// An object's declared properties as named elements (each with whitespace before),
    /// then whitespace and `end`. In MiniMax M3, as XGrammar has it, whitespace alone is not
    /// an object: where no property is required, either nothing comes before `end` or at
    /// least one element does.
    fn members(&mut self, s: &Value, depth: usize, end: Option<RegexSpec>) -> Result<Expr, Error> {
        let props = s.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        let required = required(s);
        let mut items = Vec::new();
        for (k, sub) in &props {
            let e = match self.style {
                Nested::Cohere => {
                    let open = RegexSpec::Concat(vec![
                        self.ws(),
                        lit(&format!("<cofl:value name=\"{}\"", xml_attr(k))),
                    ]);
                    Expr::Seq(vec![Expr::Lexeme(open), self.cohere_typed(sub, depth + 1)?])
                }
                Nested::MinimaxM3 => {
                    let open = RegexSpec::Concat(vec![self.ws(), lit(&format!("{NS}<{k}>"))]);
                    let close = format!("{NS}</{k}>");
                    Expr::Seq(vec![Expr::Lexeme(open), self.m3_value(sub, &close, depth + 1)?])
                }
            };
            let e = self.b.rule("param", e, RuleAttrs::default());
            items.push((e, required.contains(&k.as_str())));
        }
        let tail = self.ws_end(end.clone());
        if self.opts.any_order && items.len() > 1 && items.len() <= ANY_ORDER_MAX {
            return Ok(Expr::Seq(vec![self.b.any_order(items), tail]));
        }
        if self.style == Nested::MinimaxM3 && !items.iter().any(|(_, req)| *req) {
            // Nothing, or the first element present being the i-th.
            let mut alts = vec![end.map_or(Expr::Empty, Expr::Lexeme)];
            for i in 0..items.len() {
                let mut seq = vec![items[i].0.clone()];
                seq.extend(items[i + 1..].iter().map(|(e, _)| opt(e.clone())));
                seq.push(tail.clone());
                alts.push(Expr::Seq(seq));
            }
            return Ok(Expr::Alt(alts));
        }
        let mut seq: Vec<Expr> =
            items.into_iter().map(|(e, req)| if req { e } else { opt(e) }).collect();
        seq.push(tail);
        Ok(Expr::Seq(seq))
    }

    // ----- Cohere -----

    /// ` type="T">` then the value and the close tag, for each type the schema allows.
    fn cohere_typed(&mut self, sub: &Value, depth: usize) -> Result<Expr, Error> {
        if depth > MAX_NESTING {
            return Err(unsupported(self.style, "schema nested too deeply"));
        }
        let key = format!("c{sub}");
        if let Some(n) = self.memo.get(&key) {
            return Ok(Expr::Rule(n.clone()));
        }
        let (name, idx) = self.placeholder("cohere_value");
        self.memo.insert(key, name.clone());
        let body = self.cohere_typed_body(sub, depth)?;
        self.b.rules[idx].body = body;
        Ok(Expr::Rule(name))
    }

    fn typed(&self, t: &str, rest: Expr) -> Expr {
        Expr::Seq(vec![Expr::Lexeme(lit(&format!(" type=\"{t}\">"))), rest])
    }

    fn cohere_typed_body(&mut self, sub: &Value, depth: usize) -> Result<Expr, Error> {
        let s = resolve(self.doc, sub);
        check_combinators(self.style, s)?;
        let values = enum_values(s);
        let ws = self.ws();
        let raw_alts = |alts: Vec<RegexSpec>| {
            Expr::Lexeme(RegexSpec::Concat(vec![
                ws.clone(),
                RegexSpec::Or(alts),
                ws.clone(),
                lit(COHERE_CLOSE),
            ]))
        };
        if let Some(values) = values {
            let strs: Vec<RegexSpec> =
                values.iter().filter(|v| v.is_string()).map(|v| raw_value(v)).collect();
            let others: Vec<RegexSpec> =
                values.iter().filter(|v| !v.is_string()).map(|v| raw_value(v)).collect();
            let mut alts = vec![];
            if !strs.is_empty() {
                alts.push(self.typed("raw", raw_alts(strs)));
            }
            if !others.is_empty() {
                alts.push(self.typed("json", raw_alts(others)));
            }
            return Ok(Expr::Alt(alts));
        }
        if let Some(branches) = union_branches(s) {
            let mut alts = vec![];
            for br in branches {
                alts.push(self.cohere_typed(br, depth + 1)?);
            }
            return Ok(Expr::Alt(alts));
        }
        let ts = inferred_types(s);
        if ts.is_empty() {
            return Ok(Expr::Rule(self.cohere_any()));
        }
        let mut alts = vec![];
        for t in ts {
            alts.push(match t {
                "string" => {
                    let raw = match string_raw(s, &[])? {
                        Some(r) => raw_alts(vec![r]),
                        None => Expr::Lexeme(text_then(&[], &[COHERE_CLOSE.into()], &[], None)),
                    };
                    self.typed("raw", raw)
                }
                "integer" | "number" | "boolean" | "null" => {
                    let j = self.json_scalar(s, t)?;
                    let body = Expr::Seq(vec![self.ws_opt(), j, self.ws_close(COHERE_CLOSE)]);
                    self.typed("json", body)
                }
                "object" => {
                    let body = if s.get("properties").is_some() {
                        self.members(s, depth, Some(lit(COHERE_CLOSE)))?
                    } else {
                        Expr::Seq(vec![self.cohere_free_object(), self.ws_close(COHERE_CLOSE)])
                    };
                    self.typed("dict", body)
                }
                "array" => {
                    let mut prefix = Vec::new();
                    for p in prefix_items(s) {
                        prefix.push(self.cohere_typed(p, depth + 1)?);
                    }
                    let item = match s.get("items") {
                        Some(Value::Bool(false)) => None,
                        items => Some(self.cohere_item(items, depth)?),
                    };
                    let (min, max) = array_bounds(s);
                    let open = lit("<cofl:value");
                    let first = RegexSpec::Concat(vec![self.ws(), open.clone()]);
                    let empty = self.ws_close(COHERE_CLOSE);
                    let body =
                        self.list(&first, &open, prefix, item, (min, max), COHERE_CLOSE, empty);
                    self.typed("list", body)
                }
                other => return Err(unsupported(self.style, &format!("type {other:?}"))),
            });
        }
        Ok(Expr::Alt(alts))
    }

    /// An unnamed list element's typed value (after `<cofl:value`).
    fn cohere_item(&mut self, items: Option<&Value>, depth: usize) -> Result<Expr, Error> {
        Ok(match items {
            None | Some(Value::Bool(true)) => Expr::Rule(self.cohere_any()),
            Some(Value::Object(o)) if o.is_empty() => Expr::Rule(self.cohere_any()),
            Some(i @ Value::Object(_)) => self.cohere_typed(i, depth + 1)?,
            Some(_) => return Err(unsupported(self.style, "array items must be a schema")),
        })
    }

    /// A list's elements then the close tag: the `prefix` elements in order (Cohere: all
    /// of them; MiniMax M3: a chain of optional ones, as XGrammar has `prefixItems`), then
    /// `items` elements up to `min..=max` in all (none without `items`; M3: no bounds with
    /// `prefixItems`, as XGrammar). The first element's open lexeme is `first` (whitespace and
    /// the open tag in one lexeme, so the lexer never ends the whitespace early), the
    /// others' `next`; `empty` is the list with no element.
    #[allow(clippy::too_many_arguments)]
    fn list(
        &self,
        first: &RegexSpec,
        next: &RegexSpec,
        prefix: Vec<Expr>,
        items: Option<Expr>,
        (min, max): (u32, Option<u32>),
        close: &str,
        empty: Expr,
    ) -> Expr {
        let k = prefix.len() as u32;
        let el = |open: &RegexSpec, body: Expr| Expr::Seq(vec![Expr::Lexeme(open.clone()), body]);
        if self.style == Nested::MinimaxM3 && k > 0 {
            // MiniMax M3 (as XGrammar): each prefix element optional, in a chain (a later one
            // only after the earlier ones), then any number of `items` ones.
            let mut tail = match items {
                Some(body) => Expr::Repeat { expr: Box::new(el(next, body)), min: 0, max: None },
                None => Expr::Empty,
            };
            let mut prefix = prefix.into_iter();
            let p0 = prefix.next().unwrap_or(Expr::Empty);
            for p in prefix.rev() {
                tail = Expr::Alt(vec![Expr::Empty, Expr::Seq(vec![el(next, p), tail])]);
            }
            let some = Expr::Seq(vec![el(next, p0), tail]);
            return Expr::Alt(vec![empty, Expr::Seq(vec![some, self.ws_close(close)])]);
        }
        let mut seq = Vec::new();
        for (i, p) in prefix.into_iter().enumerate() {
            seq.push(el(if i == 0 { first } else { next }, p));
        }
        let (lo, hi) = (min.saturating_sub(k), max.map(|m| m.saturating_sub(k)));
        let Some(body) = items.filter(|_| hi != Some(0)) else {
            return if k == 0 {
                empty
            } else {
                Expr::Seq([seq, vec![self.ws_close(close)]].concat())
            };
        };
        if k == 0 {
            seq.push(el(first, body.clone()));
        }
        let more = if k == 0 { (lo.saturating_sub(1), hi.map(|h| h - 1)) } else { (lo, hi) };
        seq.push(Expr::Repeat { expr: Box::new(el(next, body)), min: more.0, max: more.1 });
        seq.push(self.ws_close(close));
        if k == 0 && lo == 0 {
            Expr::Alt(vec![empty, Expr::Seq(seq)])
        } else {
            Expr::Seq(seq)
        }
    }

    /// Elements with any names and values (an object without `properties`).
    fn cohere_free_object(&mut self) -> Expr {
        let any = self.cohere_any();
        let open = RegexSpec::Concat(vec![
            self.ws(),
            lit("<cofl:value name=\""),
            RegexSpec::Regex(COHERE_KEY.into()),
            lit("\""),
        ]);
        let member = Expr::Seq(vec![Expr::Lexeme(open), Expr::Rule(any)]);
        Expr::Repeat { expr: Box::new(member), min: 0, max: None }
    }

    /// The typed value of a schema-free element: raw text, a JSON scalar, a free `dict`,
    /// or a `list` of such elements.
    fn cohere_any(&mut self) -> String {
        if let Some(n) = &self.cohere_any {
            return n.clone();
        }
        let (name, idx) = self.placeholder("cohere_any");
        self.cohere_any = Some(name.clone());
        let scalar = serde_json::json!({"type": ["number", "boolean", "null"]});
        let scalar = self.b.json(&scalar, self.opts).unwrap_or(Expr::Empty);
        let raw = Expr::Lexeme(text_then(&[], &[COHERE_CLOSE.into()], &[], None));
        let dict = Expr::Seq(vec![self.cohere_free_object(), self.ws_close(COHERE_CLOSE)]);
        let open = lit("<cofl:value");
        let first = RegexSpec::Concat(vec![self.ws(), open.clone()]);
        let empty = self.ws_close(COHERE_CLOSE);
        let list = self.list(
            &first,
            &open,
            vec![],
            Some(Expr::Rule(name.clone())),
            (0, None),
            COHERE_CLOSE,
            empty,
        );
        let json = Expr::Seq(vec![self.ws_opt(), scalar, self.ws_close(COHERE_CLOSE)]);
        self.b.rules[idx].body = Expr::Alt(vec![
            self.typed("raw", raw),
            self.typed("json", json),
            self.typed("dict", dict),
            self.typed("list", list),
        ]);
        name
    }

    // ----- MiniMax M3 -----

    /// A value then `close`.
    fn m3_value(&mut self, sub: &Value, close: &str, depth: usize) -> Result<Expr, Error> {
        if depth > MAX_NESTING {
            return Err(unsupported(self.style, "schema nested too deeply"));
        }
        let key = format!("m{close}\u{0}{sub}");
        if let Some(n) = self.memo.get(&key) {
            return Ok(Expr::Rule(n.clone()));
        }
        let (name, idx) = self.placeholder("m3_value");
        self.memo.insert(key, name.clone());
        let body = self.m3_value_body(sub, close, depth)?;
        self.b.rules[idx].body = body;
        Ok(Expr::Rule(name))
    }

    fn m3_value_body(&mut self, sub: &Value, close: &str, depth: usize) -> Result<Expr, Error> {
        let s = resolve(self.doc, sub);
        check_combinators(self.style, s)?;
        let values = enum_values(s);
        if let Some(values) = values {
            let alts = values.into_iter().map(raw_value).collect();
            return Ok(Expr::Lexeme(RegexSpec::Concat(vec![RegexSpec::Or(alts), lit(close)])));
        }
        if let Some(branches) = union_branches(s) {
            let mut alts = vec![];
            for br in branches {
                alts.push(self.m3_value(br, close, depth + 1)?);
            }
            return Ok(Expr::Alt(alts));
        }
        let ts = inferred_types(s);
        if ts.is_empty() {
            return Err(unsupported(self.style, "schemas without a type are not supported"));
        }
        let mut alts = vec![];
        for t in ts {
            alts.push(match t {
                "string" => {
                    if ["pattern", "format", "minLength", "maxLength"]
                        .iter()
                        .any(|k| s.get(k).is_some())
                    {
                        return Err(unsupported(
                            self.style,
                            "string pattern, format and length bounds are not supported",
                        ));
                    }
                    Expr::Lexeme(RegexSpec::Concat(vec![free_text(&[NS.into()], None), lit(close)]))
                }
                "integer" | "number" | "boolean" | "null" => {
                    let j = self.json_scalar(s, t)?;
                    Expr::Seq(vec![j, Expr::Lexeme(lit(close))])
                }
                // Without `properties` (or `items`), XGrammar's value is empty.
                "object" if s.get("properties").is_none() => Expr::Lexeme(lit(close)),
                "object" => self.members(s, depth, Some(lit(close)))?,
                "array" => {
                    let mut prefix = Vec::new();
                    let item_close = format!("{NS}</item>");
                    for p in prefix_items(s) {
                        prefix.push(self.m3_value(p, &item_close, depth + 1)?);
                    }
                    let item = match s.get("items") {
                        Some(i @ Value::Object(_)) => {
                            Some(self.m3_value(i, &item_close, depth + 1)?)
                        }
                        _ => None,
                    };
                    let open = RegexSpec::Concat(vec![self.ws(), lit(&format!("{NS}<item>"))]);
                    let empty = Expr::Lexeme(lit(close));
                    self.list(&open, &open, prefix, item, array_bounds(s), close, empty)
                }
                other => return Err(unsupported(self.style, &format!("type {other:?}"))),
            });
        }
        Ok(Expr::Alt(alts))
    }
}

/// Keywords the XML value builders here do not combine (they would be ignored, a looser
/// value): an error naming them instead.
fn check_combinators(style: Nested, s: &Value) -> Result<(), Error> {
    match ["allOf", "not", "if"].iter().find(|k| s.get(**k).is_some()) {
        Some(k) => Err(unsupported(style, &format!("`{k}` in a parameter schema"))),
        None => Ok(()),
    }
}

/// The schemas of `prefixItems`.
fn prefix_items(s: &Value) -> &[Value] {
    s.get("prefixItems").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn array_bounds(s: &Value) -> (u32, Option<u32>) {
    let get = |k: &str| s.get(k).and_then(Value::as_u64).map(|n| n.min(u32::MAX as u64) as u32);
    (get("minItems").unwrap_or(0), get("maxItems"))
}

/// A property name as an XML attribute value.
fn xml_attr(k: &str) -> String {
    k.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
