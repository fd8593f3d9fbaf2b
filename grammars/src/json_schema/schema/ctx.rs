//! Normalization: the context ([`Ctx`]) that turns schema expressions into nodes, once each
//! (a cache keyed by expression, so `$ref`s shared across a schema cost one normalization
//! and recursive schemas stay finite: a node's array and object children are expressions,
//! normalized only when the emitter reaches them). A location is read by the keyword
//! application in `keywords.rs`, combinations by the set algebra in `algebra.rs`.

use hashbrown::{HashMap, HashSet};
use std::rc::Rc;

use lexer::RegexSpec;
use serde_json::Value;

use super::algebra::{complement, intersect, union_into};
use super::node::{Arr, Clause, Exp, Node, Obj, SExpr};
use super::rx::{Rx, Term};
use super::shape::Shapes;
use crate::json_schema::numbers::{self, Decimal};
use crate::json_schema::resolve::{Doc, Draft};
use crate::json_schema::JsonCompileOptions;
use crate::{Error, ErrorKind};

/// Nesting of schema normalization (`$ref`, `allOf`, ...), an [`ErrorKind::Limit`] beyond.
const MAX_DEPTH: usize = 512;

/// Normalization context.
pub(crate) struct Ctx<'a> {
    pub doc: Doc<'a>,
    pub opts: JsonCompileOptions,
    cache: HashMap<SExpr, Rc<Node>>,
    /// One location for each set of equal subschemas ([`Shapes`]).
    shapes: Shapes<'a>,
    depth: usize,
    /// The expressions being normalized (the stack of [`Ctx::normalize`]): met again, a
    /// cycle that no object or array child breaks, which would recurse without end.
    active: HashSet<SExpr>,
    /// Cycles met ([`Ctx::normalize_or_cycle`] reads it).
    cycles: usize,
    /// Expressions whose normalization met a cycle in a proof: not tried again by proofs
    /// (an error is not cached, and each retry would repeat the recursion up to the cycle,
    /// once per key and pair of branches above it).
    cyclic: HashSet<SExpr>,
    regexes: HashMap<String, Option<regex_automata::meta::Regex>>,
    /// Warnings: unknown formats, what `lenient` ignored.
    pub warnings: Vec<String>,
    /// Contradictions found in schema objects (`minimum` above `maximum`, ...), for the
    /// error when nothing is left of the whole schema.
    pub unsat: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub fn new(doc: Doc<'a>, opts: JsonCompileOptions) -> Ctx<'a> {
        Ctx {
            doc,
            opts,
            cache: HashMap::new(),
            shapes: Shapes::default(),
            depth: 0,
            active: HashSet::new(),
            cycles: 0,
            cyclic: HashSet::new(),
            regexes: HashMap::new(),
            warnings: vec![],
            unsat: vec![],
        }
    }

    /// The schema `e` stands for where it is a location holding only a `$ref` (annotations
    /// beside it; any siblings up to draft 7, where `$ref` overrides them, as
    /// [`Ctx::normalize`] reads it): its target, followed through chains. The same schema,
    /// so one grammar rule for all its uses (a definition used under 160 properties was
    /// emitted 160 times: 75,000 rules, 1.5 s to compile, Github_ultra---o13934); then the
    /// first location asked for whose subschema is written the same ([`Shapes`]: inline
    /// copies of one definition).
    pub fn canonical(&mut self, e: &SExpr) -> SExpr {
        /// Keywords that say nothing about which values are valid (with `x-` extensions;
        /// the non-standard ones here are unknown keywords, annotations to `normalize`).
        const ANNOTATIONS: &[&str] = &[
            "title",
            "description",
            "$comment",
            "examples",
            "default",
            "deprecated",
            "readOnly",
            "writeOnly",
            "markdownDescription",
            "markdownEnumDescriptions",
            "enumDescriptions",
            "propertyOrder",
            "javaType",
        ];
        let SExpr::At(start) = e else { return e.clone() };
        let mut loc = start.to_string();
        // A chain longer than this (or a cycle) is left to `normalize`, which reports it.
        for _ in 0..32 {
            let Some(Value::Object(m)) = self.doc.get(&loc) else { break };
            let Some(Value::String(r)) = m.get("$ref") else { break };
            let only_ref = self.doc.draft <= Draft::D7
                || m.keys().all(|k| {
                    k == "$ref" || k.starts_with("x-") || ANNOTATIONS.contains(&k.as_str())
                });
            if !only_ref {
                break;
            }
            match self.doc.resolve_ref(&loc, r) {
                Ok(target) => loc = target,
                Err(_) => break,
            }
        }
        let e = if *loc == **start { e.clone() } else { self.at(loc) };
        let SExpr::At(loc) = &e else { return e };
        let Some(v) = self.doc.get(loc) else { return e };
        let doc = &self.doc;
        let rep = self.shapes.representative(loc, v, || doc.base_of(loc), doc.draft == Draft::D4);
        if rep == *loc {
            e
        } else {
            SExpr::At(rep)
        }
    }

    /// The expression for the subschema at `loc`.
    pub fn at(&self, loc: String) -> SExpr {
        match self.doc.get(&loc) {
            Some(Value::Bool(true)) => SExpr::True,
            Some(Value::Bool(false)) => SExpr::False,
            Some(Value::Object(m)) if m.is_empty() => SExpr::True,
            _ => SExpr::At(loc.into()),
        }
    }

    pub fn normalize(&mut self, e: &SExpr) -> Result<Rc<Node>, Error> {
        if let Some(n) = self.cache.get(e) {
            return Ok(n.clone());
        }
        lexer::interrupt::check()?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(Error::new(
                ErrorKind::Limit,
                format!("schema nesting (or a $ref cycle) deeper than {MAX_DEPTH} levels"),
            ));
        }
        // A schema met again inside its own normalization (a `$ref` cycle through `oneOf`
        // disjointness, `not` or `allOf`): the same recursion again, without end (it ran to
        // the depth limit: 8 MaskBench files). An error now, which a disjointness proof
        // reads as "unknown" ([`Ctx::normalize_or_cycle`]).
        if !self.active.insert(e.clone()) {
            self.depth -= 1;
            self.cycles += 1;
            return Err(Error::new(
                ErrorKind::Limit,
                "a $ref cycle that no object property or array item breaks (through oneOf, \
                 not, allOf or anyOf)",
            ));
        }
        let r = self.normalize_uncached(e);
        self.active.remove(e);
        self.depth -= 1;
        let n = Rc::new(r?);
        self.cache.insert(e.clone(), n.clone());
        Ok(n)
    }

    /// [`Ctx::normalize`], `None` where it met a cycle ([`Ctx::active`]): for proofs that
    /// may give up (what they do not know, they do not prove).
    pub fn normalize_or_cycle(&mut self, e: &SExpr) -> Result<Option<Rc<Node>>, Error> {
        if self.cyclic.contains(e) {
            return Ok(None);
        }
        let before = self.cycles;
        match self.normalize(e) {
            Ok(n) => Ok(Some(n)),
            Err(_) if self.cycles > before => {
                self.cyclic.insert(e.clone());
                Ok(None)
            }
            Err(err) => Err(err),
        }
    }

    fn normalize_uncached(&mut self, e: &SExpr) -> Result<Node, Error> {
        Ok(match e {
            SExpr::True => Node::any(),
            SExpr::False => Node::nothing(),
            SExpr::Const(text) => {
                let v: Value = serde_json::from_str(text)
                    .map_err(|e| Error::new(ErrorKind::Value, e.to_string()))?;
                self.value_node(&v)?
            }
            SExpr::All(xs) => {
                let mut n = Node::any();
                for x in xs {
                    let m = self.normalize(x)?;
                    n = intersect(&n, &m)?;
                }
                n
            }
            SExpr::Any(xs) => {
                let mut n = Node::nothing();
                for x in xs {
                    let m = self.normalize(x)?;
                    n = union_into(n, &m)?;
                }
                n
            }
            SExpr::Not(x) => {
                let m = self.normalize(x)?;
                complement(&m)?
            }
            SExpr::At(loc) => self.schema_node(loc)?,
        })
    }

    /// A node for exactly one value.
    pub fn value_node(&mut self, v: &Value) -> Result<Node, Error> {
        let mut n = Node::nothing();
        match v {
            Value::Null => n.null = true,
            Value::Bool(true) => n.t = true,
            Value::Bool(false) => n.f = true,
            Value::Number(x) => {
                let d = Decimal::from_json(x)?;
                n.num.rx = Rx::regex(RegexSpec::Regex(numbers::exact(&d)));
                n.num.exp = Exp::Unknown;
            }
            Value::String(s) => n.str_ = Rx::regex(RegexSpec::Literal(s.clone())),
            Value::Array(a) => {
                let c = |x: &Value| SExpr::Const(x.to_string().into());
                n.arr = vec![Arr {
                    prefix: a.iter().map(c).collect(),
                    items: SExpr::False,
                    min: a.len() as u32,
                    max: Some(a.len() as u32),
                    contains: vec![],
                    unique: false,
                }]
            }
            Value::Object(m) => {
                n.obj = vec![Obj {
                    clauses: vec![Clause {
                        props: m
                            .iter()
                            .map(|(k, x)| (k.clone(), SExpr::Const(x.to_string().into())))
                            .collect(),
                        patterns: vec![],
                        additional: SExpr::False,
                    }],
                    required: m.keys().cloned().collect(),
                    min: 0,
                    max: None,
                    names: Rx::All,
                    some: vec![],
                    deps: vec![],
                }]
            }
        }
        n.values = Some(vec![v.clone()]);
        Ok(n)
    }

    /// Whether `key` matches the Rust regex `rx` (whole string).
    pub fn key_matches(&mut self, rx: &str, key: &str) -> Result<bool, Error> {
        if !self.regexes.contains_key(rx) {
            let r = regex_automata::meta::Regex::new(&format!("^(?:{rx})$")).ok();
            self.regexes.insert(rx.to_string(), r);
        }
        match &self.regexes[rx] {
            Some(r) => Ok(r.is_match(key)),
            None => {
                Err(Error::new(ErrorKind::Unsupported, format!("regex {rx:?} cannot be evaluated")))
            }
        }
    }

    /// Whether a string-contents regex matches `s`.
    pub fn rx_matches(&mut self, rx: &Rx, s: &str) -> Result<bool, Error> {
        match rx {
            Rx::All => Ok(true),
            Rx::Nothing => Ok(false),
            Rx::And(v) => {
                for t in v {
                    let m = match t {
                        Term::Len(b) => self.spec_matches(&b.regex(), s)?,
                        Term::Regex(r) => self.spec_matches(r, s)?,
                    };
                    if !m {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }

    fn spec_matches(&mut self, r: &RegexSpec, s: &str) -> Result<bool, Error> {
        Ok(match r {
            RegexSpec::Literal(l) => l == s,
            RegexSpec::Regex(x) => self.key_matches(x, s)?,
            RegexSpec::And(xs) => {
                for x in xs {
                    if !self.spec_matches(x, s)? {
                        return Ok(false);
                    }
                }
                true
            }
            RegexSpec::Or(xs) => {
                for x in xs {
                    if self.spec_matches(x, s)? {
                        return Ok(true);
                    }
                }
                false
            }
            RegexSpec::Not(x) => !self.spec_matches(x, s)?,
            RegexSpec::Empty => s.is_empty(),
            RegexSpec::NoMatch => false,
            other => {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!("cannot evaluate a {} regex", other.tag()),
                ))
            }
        })
    }

    /// The schema a named property's value must satisfy (`False` if the key is forbidden).
    pub fn value_for(&mut self, o: &Obj, key: &str) -> Result<SExpr, Error> {
        self.value_in(o, key, |i, key| {
            o.clauses[i].props.iter().find(|(k, _)| k == key).map(|(_, s)| s)
        })
    }

    /// [`Ctx::value_for`], clause `i`'s schema for a named key found by `named(i, key)` (an
    /// index where an object names thousands of keys: a search per key was quadratic).
    pub fn value_in<'o>(
        &mut self,
        o: &'o Obj,
        key: &str,
        named: impl Fn(usize, &str) -> Option<&'o SExpr>,
    ) -> Result<SExpr, Error> {
        if !self.rx_matches(&o.names, key)? {
            return Ok(SExpr::False);
        }
        let mut parts = Vec::new();
        for (i, c) in o.clauses.iter().enumerate() {
            let mut matched = false;
            if let Some(s) = named(i, key) {
                parts.push(s.clone());
                matched = true;
            }
            for (p, s) in &c.patterns {
                if self.key_matches(p, key)? {
                    parts.push(s.clone());
                    matched = true;
                }
            }
            if !matched {
                parts.push(c.additional.clone());
            }
        }
        Ok(SExpr::all(parts))
    }
}
