//! What the XML-parameter styles (`xml.rs`, `xml_nested.rs`) share: how they read a
//! parameter schema (types, `enum`/`const` values, unions, `required`, raw string values)
//! and the list of parameters in any order.
//!
//! # `$ref`
//!
//! A parameter schema's `$ref` is followed by the JSON Schema front end's resolver
//! (`json_schema/resolve.rs`, [`Doc::follow_refs`]): `#`-fragments as JSON pointers
//! (percent-decoded, `~1`/`~0` per token), `$id` base URIs and `$anchor`s. These styles read
//! a reference as XGrammar 0.2.8 does where the two differ: the `$ref`'s siblings are dropped
//! whatever the draft, a reference that does not resolve is left as it is instead of being
//! an error, and chains end after 16 steps or at a target equal to the schema. Values
//! written as JSON go through the JSON Schema front end on the schema together with the
//! root's `$defs` ([`with_defs`]).

use lexer::RegexSpec;
use serde_json::Value;

use super::{err, Builder};
use crate::ir::{Expr, Rule, RuleAttrs};
use crate::json_schema::resolve::Doc;
use crate::param::{ParamCond, ParamExpr};
use crate::{Error, ErrorKind};

/// `s` with its `$ref` chain followed ([`Doc::follow_refs`]); other schemas as they are.
pub(super) fn resolve<'v>(doc: &Doc<'v>, s: &'v Value) -> &'v Value {
    doc.follow_refs(s)
}

/// `sub` with the root's `$defs`/`definitions`, so its local references resolve when it is
/// compiled alone.
pub(super) fn with_defs(root: &Value, sub: &Value) -> Value {
    let mut sub = sub.clone();
    if let (Some(o), Some(r)) = (sub.as_object_mut(), root.as_object()) {
        for k in ["$defs", "definitions"] {
            if let (Some(d), false) = (r.get(k), o.contains_key(k)) {
                o.insert(k.into(), d.clone());
            }
        }
    }
    sub
}

pub(super) fn types(s: &Value) -> Vec<&str> {
    match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

/// The values of an `enum` or `const`, if the schema has one.
pub(super) fn enum_values(s: &Value) -> Option<Vec<&Value>> {
    match (s.get("enum"), s.get("const")) {
        (_, Some(c)) => Some(vec![c]),
        (Some(Value::Array(a)), None) => Some(a.iter().collect()),
        _ => None,
    }
}

/// The alternatives of an `anyOf` (or else `oneOf`).
pub(super) fn union_branches(s: &Value) -> Option<&Vec<Value>> {
    ["anyOf", "oneOf"].iter().find_map(|k| s.get(*k).and_then(Value::as_array))
}

/// The names in `required`.
pub(super) fn required(s: &Value) -> Vec<&str> {
    s.get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The schema's types: `type`, else `object` for `properties` and `array` for `items`;
/// empty when none follows.
pub(super) fn inferred_types(s: &Value) -> Vec<&str> {
    let ts = types(s);
    if !ts.is_empty() {
        ts
    } else if s.get("properties").is_some() {
        vec!["object"]
    } else if s.get("items").is_some() {
        vec!["array"]
    } else {
        vec![]
    }
}

/// The largest `minLength`/`maxLength` of a raw XML value (a counted repeat in a regex).
const MAX_LENGTH_BOUND: u64 = 100_000;

/// The raw text of a string schema with a `pattern` (whole match), a known `format` or
/// length bounds (dropped when there are `excludes`, as XGrammar does); `None`: any text.
pub(super) fn string_raw(s: &Value, excludes: &[String]) -> Result<Option<RegexSpec>, Error> {
    if let Some(p) = s.get("pattern").and_then(Value::as_str) {
        let rx = crate::json_schema::translate_pattern(p, true)?;
        return Ok(Some(RegexSpec::Regex(rx)));
    }
    if let Some(spec) =
        s.get("format").and_then(Value::as_str).and_then(crate::json_schema::format_spec)
    {
        return Ok(Some(spec));
    }
    let len = |k: &str| s.get(k).and_then(Value::as_u64);
    if (len("minLength").is_some() || len("maxLength").is_some()) && excludes.is_empty() {
        let lo = len("minLength").unwrap_or(0);
        let hi = len("maxLength");
        if lo.max(hi.unwrap_or(0)) > MAX_LENGTH_BOUND {
            return Err(err(
                ErrorKind::Limit,
                format!(
                    "string length bound above the limit {MAX_LENGTH_BOUND} in an XML parameter"
                ),
            ));
        }
        if hi.is_some_and(|h| h < lo) {
            return Err(err(
                ErrorKind::Value,
                format!(
                    "minLength {lo} is above maxLength {} in an XML parameter",
                    hi.unwrap_or(0)
                ),
            ));
        }
        let hi = hi.map(|h| h.to_string()).unwrap_or_default();
        return Ok(Some(RegexSpec::Regex(format!("(?s:.){{{lo},{hi}}}"))));
    }
    Ok(None)
}

/// Most parameters `any_order` takes (one parameter bit each); more keep the declared order.
pub(super) const ANY_ORDER_MAX: usize = 64;

impl Builder {
    /// `any_order`: the parameters in any order, each at most once, the required ones all
    /// present (exact, where XGrammar checks neither presence nor uniqueness): one
    /// parametric rule whose parameter has a bit per parameter written, instances made as
    /// the parser reaches them.
    pub(super) fn any_order(&mut self, items: Vec<(Expr, bool)>) -> Expr {
        self.fresh += 1;
        let name = format!("params_any_{}", self.fresh);
        let mut done = ParamCond::True;
        for (i, (_, req)) in items.iter().enumerate() {
            if *req {
                done = ParamCond::And(Box::new(done), Box::new(ParamCond::BitSet(i as u32)));
            }
        }
        let mut alts = vec![Expr::If { cond: done, expr: Box::new(Expr::Empty) }];
        for (i, (item, _)) in items.into_iter().enumerate() {
            let next = Expr::Call { rule: name.clone(), arg: ParamExpr::BitOr(1 << i) };
            alts.push(Expr::If {
                cond: ParamCond::BitClear(i as u32),
                expr: Box::new(Expr::Seq(vec![item, next])),
            });
        }
        self.rules.push(Rule {
            name: name.clone(),
            body: Expr::Alt(alts),
            attrs: RuleAttrs::default(),
            param: true,
        });
        Expr::Call { rule: name, arg: ParamExpr::Value(0) }
    }
}
