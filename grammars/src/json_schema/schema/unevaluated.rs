//! `unevaluatedProperties` beside applicators. Which keys count as evaluated depends on
//! which subschemas an instance validates against (`anyOf` branches that hold, `if` when it
//! holds, `$ref`, `allOf`), so the schema's instances are split into cases, each a condition
//! (an expression over the subschemas: a branch holds or does not) with the keys that case
//! has evaluated; the keyword then asks, per case, that every other key's value meet its
//! schema. The cases cover every instance the schema allows (the schema's other keywords
//! are applied beside), so the result is exact; their number is bounded.

use serde_json::Value;

use super::algebra::{intersect, union_into, unsupported};
use super::ctx::Ctx;
use super::node::{Arr, Clause, Node, Obj, SExpr};
use crate::json_schema::ecma;
use crate::json_schema::resolve::child_loc;
use crate::{Error, ErrorKind};

/// The most cases one `unevaluatedProperties` splits its schema into.
const MAX_CASES: usize = 64;
/// The deepest nesting of subschemas (`$ref` chains included) looked into.
const MAX_DEPTH: usize = 32;

/// The keys a validation has evaluated: all of them, or these names and patterns; and
/// the keys the case's object has or lacks (`dependentSchemas` applies by a key's presence).
#[derive(Clone, Default)]
struct Evaluated {
    all: bool,
    keys: Vec<String>,
    /// Rust regexes of keys, as in [`Clause::patterns`].
    patterns: Vec<String>,
    present: Vec<String>,
    absent: Vec<String>,
    /// Array items evaluated: all of them, or the first `items_prefix`; `contains` (which
    /// evaluates the items it matches, wherever they are) is not expressed.
    items_all: bool,
    items_prefix: usize,
    contains: bool,
}

impl Evaluated {
    fn union(&self, o: &Evaluated) -> Evaluated {
        let mut e = self.clone();
        e.all |= o.all;
        for k in &o.keys {
            if !e.keys.contains(k) {
                e.keys.push(k.clone());
            }
        }
        for p in &o.patterns {
            if !e.patterns.contains(p) {
                e.patterns.push(p.clone());
            }
        }
        e.present.extend(o.present.iter().cloned());
        e.absent.extend(o.absent.iter().cloned());
        e.items_all |= o.items_all;
        e.items_prefix = e.items_prefix.max(o.items_prefix);
        e.contains |= o.contains;
        e
    }
}

type Cases = Vec<(SExpr, Evaluated)>;

fn product(a: &Cases, b: &Cases) -> Result<Cases, Error> {
    if a.len() * b.len() > MAX_CASES {
        return Err(Error::new(
            ErrorKind::Limit,
            format!(
                "unevaluatedProperties: more than {MAX_CASES} cases of evaluated properties \
                 (branches of anyOf/oneOf/if)"
            ),
        ));
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for (c, e) in a {
        for (d, f) in b {
            let cond = SExpr::all(vec![c.clone(), d.clone()]);
            if cond != SExpr::False {
                out.push((cond, e.union(f)));
            }
        }
    }
    Ok(out)
}

impl Ctx<'_> {
    /// What `unevaluatedProperties: u` at `loc` asks, as a node (non-objects unconstrained).
    pub(super) fn unevaluated_properties(&mut self, loc: &str, u: SExpr) -> Result<Node, Error> {
        let cases = self.eval_cases(loc, 0, true)?;
        let mut n = Node::nothing();
        for (cond, ev) in cases {
            let c = self.normalize(&cond)?;
            let mut clauses = vec![];
            if !ev.all {
                clauses.push(Clause {
                    props: ev.keys.iter().map(|k| (k.clone(), SExpr::True)).collect(),
                    patterns: ev.patterns.iter().map(|p| (p.clone(), SExpr::True)).collect(),
                    additional: u.clone(),
                });
            }
            if !ev.absent.is_empty() {
                clauses.push(Clause {
                    props: ev.absent.iter().map(|k| (k.clone(), SExpr::False)).collect(),
                    patterns: vec![],
                    additional: SExpr::True,
                });
            }
            let o = Obj { clauses, required: ev.present.clone(), ..Obj::any() };
            if o.surely_empty() {
                continue;
            }
            let rest = intersect(&c, &Node { obj: vec![o], ..Node::any() })?;
            n = union_into(n, &rest)?;
        }
        Ok(n)
    }

    /// What `unevaluatedItems: u` at `loc` asks, as a node (non-arrays unconstrained).
    pub(super) fn unevaluated_items(&mut self, loc: &str, u: SExpr) -> Result<Node, Error> {
        let cases = self.eval_cases(loc, 0, true)?;
        let mut n = Node::nothing();
        for (cond, ev) in cases {
            if !ev.present.is_empty() {
                continue; // a case of objects only (a `dependentSchemas` key is there)
            }
            if ev.contains && !ev.items_all {
                return Err(unsupported(
                    "unevaluatedItems",
                    "not supported beside `contains` (the items it evaluates are anywhere)",
                ));
            }
            let c = self.normalize(&cond)?;
            let rest = if ev.items_all {
                (*c).clone()
            } else {
                let a = Arr {
                    prefix: vec![SExpr::True; ev.items_prefix],
                    items: u.clone(),
                    ..Arr::any()
                };
                intersect(&c, &Node { arr: vec![a], ..Node::any() })?
            };
            n = union_into(n, &rest)?;
        }
        Ok(n)
    }

    /// The cases of the schema at `loc` (`top`: the schema holding the keyword, whose own
    /// `unevaluatedProperties` is the one being applied).
    fn eval_cases(&mut self, loc: &str, depth: usize, top: bool) -> Result<Cases, Error> {
        if depth > MAX_DEPTH {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("unevaluatedProperties: subschemas nested deeper than {MAX_DEPTH}"),
            ));
        }
        let m = match self.doc.get(loc) {
            Some(Value::Object(m)) => m.clone(),
            Some(Value::Bool(false)) => return Ok(vec![]),
            _ => return Ok(vec![(SExpr::True, Evaluated::default())]),
        };
        let sub = |k: &str| child_loc(loc, k);
        let mut own = Evaluated::default();
        if let Some(Value::Object(p)) = m.get("properties") {
            own.keys = p.keys().cloned().collect();
        }
        if let Some(Value::Object(p)) = m.get("patternProperties") {
            for k in p.keys() {
                own.patterns.push(ecma::translate_pattern(k, false)?);
            }
        }
        // `additionalProperties` evaluates every other key; so does a nested
        // `unevaluatedProperties` once its schema holds.
        own.all = m.contains_key("additionalProperties")
            || (!top && m.contains_key("unevaluatedProperties"));
        match m.get("items") {
            Some(Value::Array(a)) => {
                own.items_prefix = a.len();
                own.items_all = m.contains_key("additionalItems");
            }
            Some(_) => own.items_all = true,
            None => {}
        }
        if let Some(Value::Array(a)) = m.get("prefixItems") {
            own.items_prefix = own.items_prefix.max(a.len());
        }
        own.items_all |= !top && m.contains_key("unevaluatedItems");
        own.contains = m.contains_key("contains");
        let mut cases: Cases = vec![(SExpr::True, own)];
        for (k, val) in &m {
            match k.as_str() {
                "allOf" | "anyOf" | "oneOf" => {
                    let n = val.as_array().map_or(0, |a| a.len());
                    for i in 0..n {
                        let at = format!("{}/{i}", sub(k));
                        let inner = self.eval_cases(&at, depth + 1, false)?;
                        let branch = if k == "allOf" {
                            inner
                        } else {
                            // the branch holds (its cases) or it does not (nothing evaluated)
                            let e = self.at(at);
                            let mut b: Cases = inner
                                .into_iter()
                                .map(|(c, ev)| (SExpr::all(vec![e.clone(), c]), ev))
                                .collect();
                            b.push((SExpr::not(&e), Evaluated::default()));
                            b
                        };
                        cases = product(&cases, &branch)?;
                    }
                }
                "$ref" => {
                    let r = val
                        .as_str()
                        .ok_or_else(|| Error::new(ErrorKind::Value, "$ref must be a string"))?;
                    let target = self.doc.resolve_ref(loc, r)?;
                    let inner = self.eval_cases(&target, depth + 1, false)?;
                    cases = product(&cases, &inner)?;
                }
                "if" => {
                    let c = self.at(sub("if"));
                    let ci = self.eval_cases(&sub("if"), depth + 1, false)?;
                    let part = |s: &mut Self, kw: &str| -> Result<Cases, Error> {
                        if m.contains_key(kw) {
                            s.eval_cases(&sub(kw), depth + 1, false)
                        } else {
                            Ok(vec![(SExpr::True, Evaluated::default())])
                        }
                    };
                    let ct = part(self, "then")?;
                    let cf = part(self, "else")?;
                    let mut branch = product(&ci, &ct)?
                        .into_iter()
                        .map(|(d, ev)| (SExpr::all(vec![c.clone(), d]), ev))
                        .collect::<Cases>();
                    for (d, ev) in cf {
                        branch.push((SExpr::all(vec![SExpr::not(&c), d]), ev));
                    }
                    cases = product(&cases, &branch)?;
                }
                "dependentSchemas" | "dependencies" => {
                    let Some(o) = val.as_object() else { continue };
                    for (key, dep) in o {
                        if dep.is_array() {
                            continue; // `dependencies` naming keys evaluates nothing
                        }
                        // the key is there (the schema holds, its cases) or it is not
                        let at = child_loc(&sub(k), key);
                        let mut branch = self.eval_cases(&at, depth + 1, false)?;
                        for (_, ev) in branch.iter_mut() {
                            ev.present.push(key.clone());
                        }
                        let absent =
                            Evaluated { absent: vec![key.clone()], ..Evaluated::default() };
                        branch.push((SExpr::True, absent));
                        cases = product(&cases, &branch)?;
                    }
                }
                "$dynamicRef" | "$recursiveRef" => {
                    return Err(unsupported(k, "dynamic references are not supported"));
                }
                _ => {}
            }
        }
        Ok(cases)
    }
}
