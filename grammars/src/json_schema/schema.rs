//! Schemas in a normal form: a schema expression ([`SExpr`]: a location, a constant, or a
//! boolean combination) is normalized to a [`Node`], which splits the instance space by JSON
//! type. Strings and numbers are regexes (so union, intersection and complement are exact);
//! arrays and objects are unions of structural constraints whose children are again
//! expressions, normalized lazily (so recursive schemas stay finite).

use hashbrown::HashMap;
use std::rc::Rc;

use lexer::RegexSpec;
use serde_json::Value;

use super::ecma;
use super::numbers::{self, Decimal};
use super::resolve::{escape_token, Doc, Draft};
use super::JsonCompileOptions;
use crate::{Error, ErrorKind};

/// The most alternatives an intersection of object or array constraints may produce (the
/// product of the operands' alternatives).
const MAX_ALTS: usize = 256;
/// The most alternatives a union of object or array constraints may have.
const MAX_UNION_ALTS: usize = 10_000;
/// Nesting of schema normalization (`$ref`, `allOf`, ...), an [`ErrorKind::Limit`] beyond.
const MAX_DEPTH: usize = 100;

/// A schema expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum SExpr {
    /// Everything.
    True,
    /// Nothing.
    False,
    /// The schema at a location of the document.
    At(String),
    /// Exactly this value (JSON text).
    Const(String),
    /// All of them (sorted, deduplicated).
    All(Vec<SExpr>),
    /// Any of them.
    Any(Vec<SExpr>),
    /// The complement.
    Not(Box<SExpr>),
}

impl SExpr {
    pub fn all(v: Vec<SExpr>) -> SExpr {
        let mut out = Vec::new();
        for e in v {
            match e {
                SExpr::True => {}
                SExpr::False => return SExpr::False,
                SExpr::All(xs) => out.extend(xs),
                e => out.push(e),
            }
        }
        out.sort();
        out.dedup();
        match out.len() {
            0 => SExpr::True,
            1 => out.pop().unwrap_or(SExpr::True),
            _ => SExpr::All(out),
        }
    }

    pub fn and(a: &SExpr, b: &SExpr) -> SExpr {
        SExpr::all(vec![a.clone(), b.clone()])
    }

    pub fn not(a: &SExpr) -> SExpr {
        match a {
            SExpr::True => SExpr::False,
            SExpr::False => SExpr::True,
            SExpr::Not(x) => (**x).clone(),
            a => SExpr::Not(Box::new(a.clone())),
        }
    }
}

/// A regex over a domain (string contents or number texts): nothing, everything, or a regex.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Rx {
    Nothing,
    All,
    Some(RegexSpec),
}

impl Rx {
    fn and(&self, o: &Rx) -> Rx {
        match (self, o) {
            (Rx::Nothing, _) | (_, Rx::Nothing) => Rx::Nothing,
            (Rx::All, x) | (x, Rx::All) => x.clone(),
            (Rx::Some(a), Rx::Some(b)) => {
                let mut v = flat_and(a, b);
                drop_implied_lengths(&mut v);
                if v.len() == 1 {
                    return Rx::Some(v.pop().unwrap_or(RegexSpec::NoMatch));
                }
                if contradicts(&v) {
                    Rx::Nothing
                } else {
                    Rx::Some(RegexSpec::And(v))
                }
            }
        }
    }
    /// `self | o`, reusing `self`'s alternatives: folding n alternatives is O(n), not O(n²).
    fn or_owned(self, o: &Rx) -> Rx {
        match (self, o) {
            (Rx::All, _) | (_, Rx::All) => Rx::All,
            (Rx::Nothing, x) => x.clone(),
            (x, Rx::Nothing) => x,
            (Rx::Some(a), Rx::Some(b)) => {
                let mut v = match a {
                    RegexSpec::Or(xs) => xs,
                    x => vec![x],
                };
                match b {
                    RegexSpec::Or(xs) => v.extend(xs.iter().cloned()),
                    x => v.push(x.clone()),
                }
                Rx::Some(RegexSpec::Or(v))
            }
        }
    }
    fn not(&self, universe: &str) -> Rx {
        match self {
            Rx::All => Rx::Nothing,
            Rx::Nothing => Rx::All,
            Rx::Some(r) => Rx::Some(RegexSpec::And(vec![
                RegexSpec::Regex(universe.to_string()),
                RegexSpec::Not(Box::new(r.clone())),
            ])),
        }
    }
    pub fn is_nothing(&self) -> bool {
        matches!(self, Rx::Nothing)
    }
    pub fn spec(&self, universe: &str) -> RegexSpec {
        match self {
            Rx::Nothing => RegexSpec::NoMatch,
            Rx::All => RegexSpec::Regex(universe.to_string()),
            Rx::Some(r) => r.clone(),
        }
    }
}

/// Whether an intersection is empty on its face: one element is the complement of another,
/// or of an alternation holding it (`x & ~x`, `x & ~(x | y)`). `oneOf` branches that give a
/// property the same string schema build `x & ~x`; left to the lexer, proving that empty cost
/// derivre 140 ms when `x` was a `date-time` (a mask of JsonSchemaStore's
/// webjob-publish-settings).
fn contradicts(v: &[RegexSpec]) -> bool {
    v.iter().any(|x| match x {
        RegexSpec::Not(y) => {
            v.contains(y) || matches!(&**y, RegexSpec::Or(ys) if ys.iter().any(|y| v.contains(y)))
        }
        _ => false,
    })
}

fn flat_and(a: &RegexSpec, b: &RegexSpec) -> Vec<RegexSpec> {
    let mut v = Vec::new();
    for x in [a, b] {
        match x {
            RegexSpec::And(xs) => v.extend(xs.iter().cloned()),
            x => v.push(x.clone()),
        }
    }
    v
}

/// Drops from an intersection the length-only conjuncts (`(?s:.){m,n}`: `minLength`,
/// `maxLength`) that another conjunct implies, every string of it having between `m` and
/// `n` characters: `format: date-time` beside `minLength: 1`. Exact. The lexer takes one
/// derivative per byte of the format instead of two and proves each new state of the
/// intersection live: a date-time's first masks 2.6-3.1 ms, where the format alone takes
/// tens of microseconds.
///
/// Only real bounds go: the universe (`(?s:.)*`, the positive side of a complement: `oneOf`
/// branches are `P1 & ~P2 & …` over it) stays, as the lexer's structural liveness rules
/// read those shapes (without it, Github_hard---o12278's `oneOf` of unanchored patterns ran
/// a lexer step out of fuel).
fn drop_implied_lengths(v: &mut Vec<RegexSpec>) {
    // A real bound: not the universe.
    let bounds = |x: &RegexSpec| super::emit::length_only(x).filter(|&b| b != (0, None));
    if v.len() < 2 || !v.iter().any(|x| bounds(x).is_some()) {
        return;
    }
    let others: Vec<(u32, Option<u32>)> =
        v.iter().filter(|x| bounds(x).is_none()).filter_map(RegexSpec::char_len_bounds).collect();
    v.retain(|x| match bounds(x) {
        Some((lo, hi)) => !others.iter().any(|&(min, max)| {
            lo <= min
                && match (hi, max) {
                    (None, _) => true,
                    (Some(h), Some(m)) => m <= h,
                    (Some(_), None) => false,
                }
        }),
        None => true,
    });
}

/// Which exponent-form numbers (`1e5`) are in a set: all, none, or unknown (emitted as none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exp {
    All,
    None,
    Unknown,
}

/// Numbers: the exponent-free ones by a regex (exact), the exponent forms by [`Exp`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Num {
    pub rx: Rx,
    pub exp: Exp,
    /// Integer values written with a zero fraction (`1.0`) are left out of the grammar
    /// (LLGuidance's and MaskBench's reading of `"type": "integer"`; a subset, so sound).
    pub int_plain: bool,
}

/// An array constraint.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Arr {
    pub prefix: Vec<SExpr>,
    pub items: SExpr,
    pub min: u32,
    pub max: Option<u32>,
    /// (schema, min count, max count)
    pub contains: Vec<(SExpr, u32, Option<u32>)>,
    pub unique: bool,
}

impl Arr {
    fn any() -> Arr {
        Arr {
            prefix: vec![],
            items: SExpr::True,
            min: 0,
            max: None,
            contains: vec![],
            unique: false,
        }
    }
    pub fn at(&self, i: usize) -> &SExpr {
        self.prefix.get(i).unwrap_or(&self.items)
    }
    fn and(&self, o: &Arr) -> Arr {
        let n = self.prefix.len().max(o.prefix.len());
        Arr {
            prefix: (0..n).map(|i| SExpr::and(self.at(i), o.at(i))).collect(),
            items: SExpr::and(&self.items, &o.items),
            min: self.min.max(o.min),
            max: min_opt(self.max, o.max),
            contains: self.contains.iter().chain(&o.contains).cloned().collect(),
            unique: self.unique || o.unique,
        }
    }
    fn is_any(&self) -> bool {
        *self == Arr::any()
    }
}

/// What one schema says about an object's properties.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Clause {
    pub props: Vec<(String, SExpr)>,
    /// (Rust regex of the key, value schema)
    pub patterns: Vec<(String, SExpr)>,
    pub additional: SExpr,
}

/// An object constraint.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Obj {
    pub clauses: Vec<Clause>,
    pub required: Vec<String>,
    pub min: u32,
    pub max: Option<u32>,
    /// What property names must match (a string-contents regex).
    pub names: Rx,
}

impl Obj {
    fn any() -> Obj {
        Obj { clauses: vec![], required: vec![], min: 0, max: None, names: Rx::All }
    }
    fn and(&self, o: &Obj) -> Obj {
        let mut required = self.required.clone();
        for r in &o.required {
            if !required.contains(r) {
                required.push(r.clone());
            }
        }
        Obj {
            clauses: self.clauses.iter().chain(&o.clauses).cloned().collect(),
            required,
            min: self.min.max(o.min),
            max: min_opt(self.max, o.max),
            names: self.names.and(&o.names),
        }
    }
    fn is_any(&self) -> bool {
        self.required.is_empty()
            && self.min == 0
            && self.max.is_none()
            && self.names == Rx::All
            && self.clauses.iter().all(|c| {
                c.props.iter().all(|(_, s)| *s == SExpr::True)
                    && c.patterns.iter().all(|(_, s)| *s == SExpr::True)
                    && c.additional == SExpr::True
            })
    }
}

fn min_opt(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) | (None, x) => x,
    }
}

/// A normalized schema: the allowed instances, split by type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub null: bool,
    pub t: bool,
    pub f: bool,
    pub num: Num,
    /// String contents.
    pub str_: Rx,
    /// `str_` is a subset of the schema's strings (anchored `pattern`s), so its complement
    /// would be a superset: `not` refuses it.
    pub str_approx: bool,
    pub arr: Vec<Arr>,
    pub obj: Vec<Obj>,
    /// If known: the node's instances are among these values.
    pub values: Option<Vec<Value>>,
}

impl Node {
    pub fn any() -> Node {
        Node {
            null: true,
            t: true,
            f: true,
            num: Num { rx: Rx::All, exp: Exp::All, int_plain: false },
            str_: Rx::All,
            str_approx: false,
            arr: vec![Arr::any()],
            obj: vec![Obj::any()],
            values: None,
        }
    }
    pub fn nothing() -> Node {
        Node {
            null: false,
            t: false,
            f: false,
            num: Num { rx: Rx::Nothing, exp: Exp::None, int_plain: false },
            str_: Rx::Nothing,
            str_approx: false,
            arr: vec![],
            obj: vec![],
            values: Some(vec![]),
        }
    }
}

/// Numeric equality-aware JSON equality.
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (Decimal::from_json(x), Decimal::from_json(y)) {
                (Ok(x), Ok(y)) => x == y,
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn unsupported(kw: &str, msg: &str) -> Error {
    Error::new(ErrorKind::Unsupported, format!("{kw}: {msg}"))
}

/// Whether `kw` is a keyword only from a draft after `draft` (draft 6 added `contains`,
/// `propertyNames`; draft 7 `if`/`then`/`else`; 2019-09 the `dependent*`, `*Contains` and
/// `unevaluated*` keywords; 2020-12 `prefixItems`). Draft 6's `const` is applied in draft-04
/// schemas too: they use it meaning it, LLGuidance applies it there (beside `type`), and
/// applying it never accepts more.
fn newer_keyword(kw: &str, draft: Draft) -> bool {
    let since = match kw {
        "contains" | "propertyNames" => Draft::D6,
        "if" | "then" | "else" => Draft::D7,
        "dependentRequired"
        | "dependentSchemas"
        | "minContains"
        | "maxContains"
        | "unevaluatedProperties"
        | "unevaluatedItems" => Draft::D2019,
        "prefixItems" => Draft::D2020,
        _ => return false,
    };
    draft < since
}

/// Keywords that never constrain instances (annotations, containers of subschemas).
const IGNORED: &[&str] = &[
    "$schema",
    "$id",
    "id",
    "$comment",
    "$defs",
    "definitions",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "then",
    "else",
    "additionalItems",
    "minContains",
    "maxContains",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "x-guidance",
];

/// Normalization context.
pub(crate) struct Ctx<'a> {
    pub doc: Doc<'a>,
    pub opts: JsonCompileOptions,
    cache: HashMap<SExpr, Rc<Node>>,
    depth: usize,
    regexes: HashMap<String, Option<regex_automata::meta::Regex>>,
    /// Warnings (lenient mode).
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
            depth: 0,
            regexes: HashMap::new(),
            warnings: vec![],
            unsat: vec![],
        }
    }

    /// The schema `e` stands for where it is a location holding only a `$ref` (annotations
    /// beside it; any siblings up to draft 7, where `$ref` overrides them, as
    /// [`Ctx::normalize`] reads it): its target, followed through chains. The same schema,
    /// so one grammar rule for all its uses (a definition used under 160 properties was
    /// emitted 160 times: 75,000 rules, 1.5 s to compile, Github_ultra---o13934).
    pub fn canonical(&self, e: &SExpr) -> SExpr {
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
        let mut loc = start.clone();
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
        if loc == *start {
            e.clone()
        } else {
            self.at(loc)
        }
    }

    /// The expression for the subschema at `loc`.
    pub fn at(&self, loc: String) -> SExpr {
        match self.doc.get(&loc) {
            Some(Value::Bool(true)) => SExpr::True,
            Some(Value::Bool(false)) => SExpr::False,
            Some(Value::Object(m)) if m.is_empty() => SExpr::True,
            _ => SExpr::At(loc),
        }
    }

    pub fn normalize(&mut self, e: &SExpr) -> Result<Rc<Node>, Error> {
        if let Some(n) = self.cache.get(e) {
            return Ok(n.clone());
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(Error::new(
                ErrorKind::Limit,
                format!("schema nesting (or a $ref cycle) deeper than {MAX_DEPTH} levels"),
            ));
        }
        let r = self.normalize_uncached(e);
        self.depth -= 1;
        let n = Rc::new(r?);
        self.cache.insert(e.clone(), n.clone());
        Ok(n)
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
                    n = self.intersect(&n, &m)?;
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
                self.complement(&m)?
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
                n.num.rx = Rx::Some(RegexSpec::Regex(numbers::exact(&d)));
                n.num.exp = Exp::Unknown;
            }
            Value::String(s) => n.str_ = Rx::Some(RegexSpec::Literal(s.clone())),
            Value::Array(a) => {
                let c = |x: &Value| SExpr::Const(x.to_string());
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
                            .map(|(k, x)| (k.clone(), SExpr::Const(x.to_string())))
                            .collect(),
                        patterns: vec![],
                        additional: SExpr::False,
                    }],
                    required: m.keys().cloned().collect(),
                    min: 0,
                    max: None,
                    names: Rx::All,
                }]
            }
        }
        n.values = Some(vec![v.clone()]);
        Ok(n)
    }

    pub fn intersect(&mut self, a: &Node, b: &Node) -> Result<Node, Error> {
        let mut arr = Vec::new();
        for x in &a.arr {
            for y in &b.arr {
                if x.is_any() {
                    arr.push(y.clone())
                } else if y.is_any() {
                    arr.push(x.clone())
                } else {
                    arr.push(x.and(y));
                }
            }
        }
        let mut obj = Vec::new();
        for x in &a.obj {
            for y in &b.obj {
                if x.is_any() {
                    obj.push(y.clone())
                } else if y.is_any() {
                    obj.push(x.clone())
                } else {
                    obj.push(x.and(y));
                }
            }
        }
        // An intersection with one alternative never grows; a product beyond the limit fails.
        let limit = |x: usize, y: usize| MAX_ALTS.max(x).max(y);
        if arr.len() > limit(a.arr.len(), b.arr.len())
            || obj.len() > limit(a.obj.len(), b.obj.len())
        {
            return Err(Error::new(
                ErrorKind::Limit,
                "too many alternatives in a schema intersection",
            ));
        }
        let values = match (&a.values, &b.values) {
            (Some(x), Some(y)) => {
                Some(x.iter().filter(|v| y.iter().any(|w| json_eq(v, w))).cloned().collect())
            }
            (Some(x), None) | (None, Some(x)) => Some(x.clone()),
            (None, None) => None,
        };
        let listed = |v: &Option<Vec<Value>>| v.as_ref().is_some_and(|v| !v.is_empty());
        if listed(&a.values) && listed(&b.values) && values.as_ref().is_some_and(|v| v.is_empty()) {
            // Both sides list their values and none is in both (`const` beside a disjoint
            // `enum`). (An empty list alone does not say "nothing": nodes built up from
            // nothing keep it while gaining objects or arrays.)
            return Ok(Node::nothing());
        }
        let exp = match (a.num.exp, b.num.exp) {
            (Exp::None, _) | (_, Exp::None) => Exp::None,
            (Exp::All, x) | (x, Exp::All) => x,
            _ => Exp::Unknown,
        };
        Ok(Node {
            null: a.null && b.null,
            t: a.t && b.t,
            f: a.f && b.f,
            num: Num {
                rx: a.num.rx.and(&b.num.rx),
                exp,
                int_plain: a.num.int_plain || b.num.int_plain,
            },
            str_: a.str_.and(&b.str_),
            str_approx: a.str_approx || b.str_approx,
            arr,
            obj,
            values,
        })
    }

    pub fn complement(&mut self, a: &Node) -> Result<Node, Error> {
        if a.str_approx {
            return Err(unsupported(
                "not",
                "the complement of an anchored `pattern` is inexact (set x-guidance pattern_search for JSON Schema's search semantics)",
            ));
        }
        let mut n = Node {
            null: !a.null,
            t: !a.t,
            f: !a.f,
            num: Num {
                rx: a.num.rx.not(numbers::NUMBER_NOEXP),
                exp: match a.num.exp {
                    Exp::All => Exp::None,
                    Exp::None => Exp::All,
                    Exp::Unknown => Exp::Unknown,
                },
                int_plain: false,
            },
            str_: a.str_.not(STRING_ANY),
            str_approx: false,
            arr: vec![Arr::any()],
            obj: vec![Obj::any()],
            values: None,
        };
        // complement of a union = intersection of complements
        for x in &a.arr {
            let c = Node { arr: self.complement_arr(x)?, ..Node::any() };
            n = self.intersect(&n, &c)?;
        }
        for x in &a.obj {
            let c = Node { obj: self.complement_obj(x)?, ..Node::any() };
            n = self.intersect(&n, &c)?;
        }
        Ok(n)
    }

    fn complement_arr(&mut self, a: &Arr) -> Result<Vec<Arr>, Error> {
        let mut out = Vec::new();
        if a.min > 0 {
            out.push(Arr { max: Some(a.min - 1), ..Arr::any() });
        }
        if let Some(m) = a.max {
            out.push(Arr { min: m + 1, ..Arr::any() });
        }
        for (i, p) in a.prefix.iter().enumerate() {
            if *p != SExpr::True {
                let mut prefix = vec![SExpr::True; i];
                prefix.push(SExpr::not(p));
                out.push(Arr { prefix, min: i as u32 + 1, ..Arr::any() });
            }
        }
        if a.items != SExpr::True {
            let n = a.prefix.len();
            let mut prefix = vec![SExpr::True; n];
            if n == 0 {
                out.push(Arr { contains: vec![(SExpr::not(&a.items), 1, None)], ..Arr::any() });
            } else {
                // some item after the prefix violates `items`
                prefix.clear();
                return Err(unsupported(
                    "not",
                    "the complement of `items` after `prefixItems` is not supported",
                ));
            }
        }
        for (c, lo, hi) in &a.contains {
            if *lo > 0 {
                out.push(Arr { contains: vec![(c.clone(), 0, Some(lo - 1))], ..Arr::any() });
            }
            if let Some(h) = hi {
                out.push(Arr { contains: vec![(c.clone(), h + 1, None)], ..Arr::any() });
            }
        }
        if a.unique {
            return Err(unsupported("not", "the complement of `uniqueItems` is not supported"));
        }
        Ok(out)
    }

    fn complement_obj(&mut self, a: &Obj) -> Result<Vec<Obj>, Error> {
        let mut out = Vec::new();
        if a.min > 0 {
            out.push(Obj { max: Some(a.min - 1), ..Obj::any() });
        }
        if let Some(m) = a.max {
            out.push(Obj { min: m + 1, ..Obj::any() });
        }
        for r in &a.required {
            out.push(Obj {
                clauses: vec![Clause {
                    props: vec![(r.clone(), SExpr::False)],
                    patterns: vec![],
                    additional: SExpr::True,
                }],
                ..Obj::any()
            });
        }
        if a.names != Rx::All {
            return Err(unsupported("not", "the complement of `propertyNames` is not supported"));
        }
        for c in &a.clauses {
            if c.additional != SExpr::True || c.patterns.iter().any(|(_, s)| *s != SExpr::True) {
                return Err(unsupported(
                    "not",
                    "the complement of `additionalProperties` or `patternProperties` is not supported",
                ));
            }
            for (k, s) in &c.props {
                if *s != SExpr::True {
                    out.push(Obj {
                        clauses: vec![Clause {
                            props: vec![(k.clone(), SExpr::not(s))],
                            patterns: vec![],
                            additional: SExpr::True,
                        }],
                        required: vec![k.clone()],
                        ..Obj::any()
                    });
                }
            }
        }
        Ok(out)
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
            Rx::Some(r) => self.spec_matches(r, s),
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

    /// The schema at a location.
    fn schema_node(&mut self, loc: &str) -> Result<Node, Error> {
        let v = self
            .doc
            .get(loc)
            .ok_or_else(|| Error::new(ErrorKind::Name, format!("no schema at {loc:?}")))?;
        let m = match v {
            Value::Bool(true) => return Ok(Node::any()),
            Value::Bool(false) => return Ok(Node::nothing()),
            Value::Object(m) => m,
            _ => {
                return Err(Error::new(
                    ErrorKind::Value,
                    format!("schema at {loc:?} is not an object or boolean"),
                ))
            }
        };
        let draft = self.doc.draft;
        // Keywords newer than the schema's declared draft are not keywords there (a validator
        // of that draft ignores them, and so does LLGuidance): left out of a filtered copy.
        let filtered;
        let m = if draft < Draft::D2020 && m.keys().any(|k| newer_keyword(k, draft)) {
            filtered = m
                .iter()
                .filter(|(k, _)| !newer_keyword(k, draft))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<serde_json::Map<String, Value>>();
            &filtered
        } else {
            m
        };
        let sub = |k: &str| format!("{loc}/{}", escape_token(k));
        let contradicted = contradictions(m, loc);
        if draft <= Draft::D7 {
            if let Some(r) = m.get("$ref") {
                let r = r
                    .as_str()
                    .ok_or_else(|| Error::new(ErrorKind::Value, "$ref must be a string"))?;
                let target = self.doc.resolve_ref(loc, r)?;
                let e = self.at(target);
                return Ok((*self.normalize(&e)?).clone());
            }
        }
        let mut n = Node::any();
        let mut unknown_format: Option<String> = None;
        // Applicators' nodes with the index of their keyword in the schema object: objects'
        // properties are merged in keyword order (LLGuidance's order): the schema's own
        // properties go where its first `properties` / `additionalProperties` /
        // `patternProperties` keyword is, an `allOf` written before it puts its properties first.
        let mut applied: Vec<(usize, Node)> = Vec::new();
        let own_obj_at = m
            .keys()
            .position(|k| {
                matches!(k.as_str(), "properties" | "additionalProperties" | "patternProperties")
            })
            .unwrap_or(0);
        let mut arr = Arr::any();
        let mut has_arr = false;
        let mut clause = Clause { props: vec![], patterns: vec![], additional: SExpr::True };
        let mut obj = Obj::any();
        let mut has_obj = false;
        let has_applicators =
            ["allOf", "anyOf", "oneOf", "not", "if", "$ref", "dependentSchemas", "dependencies"]
                .iter()
                .any(|k| m.contains_key(*k));
        for (ki, (k, val)) in m.iter().enumerate() {
            let kw = k.as_str();
            match kw {
                "type" => {
                    let types: Vec<&str> = match val {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                        _ => {
                            return Err(Error::new(
                                ErrorKind::Value,
                                "type must be a string or an array",
                            ))
                        }
                    };
                    let mut t = Node::nothing();
                    t.values = None;
                    for ty in types {
                        match ty {
                            "null" => t.null = true,
                            "boolean" => {
                                t.t = true;
                                t.f = true
                            }
                            "number" => {
                                t.num = Num { rx: Rx::All, exp: Exp::All, int_plain: false }
                            }
                            "integer" => {
                                if t.num.exp != Exp::All {
                                    t.num = Num {
                                        rx: Rx::Some(RegexSpec::Regex(numbers::INTEGER.into())),
                                        exp: Exp::Unknown,
                                        int_plain: true,
                                    }
                                }
                            }
                            "string" => t.str_ = Rx::All,
                            "array" => t.arr = vec![Arr::any()],
                            "object" => t.obj = vec![Obj::any()],
                            other => {
                                return Err(Error::new(
                                    ErrorKind::Value,
                                    format!("unknown type {other:?}"),
                                ))
                            }
                        }
                    }
                    n = self.intersect(&n, &t)?;
                }
                "const" => {
                    let c = self.value_node(val)?;
                    n = self.intersect(&n, &c)?;
                }
                "enum" => {
                    let vals = val
                        .as_array()
                        .ok_or_else(|| Error::new(ErrorKind::Value, "enum must be an array"))?;
                    let mut u = Node::nothing();
                    for v in vals {
                        let c = self.value_node(v)?;
                        u = union_into(u, &c)?;
                    }
                    n = self.intersect(&n, &u)?;
                }
                "minimum" | "maximum" => {
                    let d = number(kw, val)?;
                    let is_min = kw == "minimum";
                    let excl_kw = if is_min { "exclusiveMinimum" } else { "exclusiveMaximum" };
                    let strict = m.get(excl_kw).and_then(Value::as_bool).unwrap_or(false);
                    let rx = if is_min { numbers::ge(&d, strict) } else { numbers::le(&d, strict) };
                    self.num_constraint(&mut n, rx);
                }
                "exclusiveMinimum" | "exclusiveMaximum" if val.is_number() => {
                    let d = number(kw, val)?;
                    let rx = if kw == "exclusiveMinimum" {
                        numbers::ge(&d, true)
                    } else {
                        numbers::le(&d, true)
                    };
                    self.num_constraint(&mut n, rx);
                }
                "multipleOf" => {
                    let d = number(kw, val)?;
                    let (divisor, scale) = numbers::multiple_of(&d)?;
                    let rx = RegexSpec::Concat(vec![
                        RegexSpec::Regex("-?".into()),
                        RegexSpec::MultipleOf { divisor, scale },
                    ]);
                    n.num.rx = n.num.rx.and(&Rx::Some(rx));
                    n.num.exp = exp_restrict(n.num.exp);
                }
                "minLength" | "maxLength" => {
                    let x = count(kw, val)?;
                    // Both bounds as one repeat, and `minLength: 0` as nothing: an
                    // intersection costs the lexer two derivatives and a non-emptiness
                    // check per byte, a repeat one derivative.
                    let rx = if kw == "minLength" {
                        if m.contains_key("maxLength") {
                            continue;
                        }
                        if x == 0 {
                            continue;
                        }
                        format!("{}{{{x},}}", ecma::ANY_CHAR)
                    } else {
                        let lo = match m.get("minLength") {
                            Some(v) => count("minLength", v)?,
                            None => 0,
                        };
                        if lo > x {
                            n.str_ = Rx::Nothing;
                            continue;
                        }
                        format!("{}{{{lo},{x}}}", ecma::ANY_CHAR)
                    };
                    n.str_ = n.str_.and(&Rx::Some(RegexSpec::Regex(rx)));
                }
                "pattern" => {
                    let p = val
                        .as_str()
                        .ok_or_else(|| Error::new(ErrorKind::Value, "pattern must be a string"))?;
                    let anchored = !self.opts.pattern_search;
                    let rx = ecma::translate_pattern(p, anchored)?;
                    check_regex(&rx)?;
                    n.str_ = n.str_.and(&Rx::Some(RegexSpec::Regex(rx)));
                    // an anchored pattern without explicit anchors is narrower than the spec's
                    n.str_approx |= anchored
                        && ecma::translate_pattern(p, false)? != ecma::translate_pattern(p, true)?;
                }
                "format" => {
                    let f = val.as_str().unwrap_or("");
                    match ecma::format_spec(f) {
                        Some(mut spec) => {
                            if let Some(n) = ecma::format_max_len(f) {
                                let max = format!("{}{{0,{n}}}", ecma::ANY_CHAR);
                                spec = RegexSpec::And(vec![spec, RegexSpec::Regex(max)]);
                            }
                            n.str_ = n.str_.and(&Rx::Some(spec));
                        }
                        None => unknown_format = Some(f.to_string()),
                    }
                }
                "items" | "prefixItems" | "additionalItems" | "minItems" | "maxItems"
                | "contains" | "uniqueItems" => {
                    has_arr = true;
                    match kw {
                        "items" => match val {
                            Value::Array(a) => {
                                arr.prefix = (0..a.len())
                                    .map(|i| self.at(format!("{}/{i}", sub(kw))))
                                    .collect();
                                arr.items = match m.get("additionalItems") {
                                    Some(_) => self.at(sub("additionalItems")),
                                    None => SExpr::True,
                                };
                            }
                            _ => arr.items = self.at(sub(kw)),
                        },
                        "prefixItems" => {
                            let a = val.as_array().ok_or_else(|| {
                                Error::new(ErrorKind::Value, "prefixItems: not an array")
                            })?;
                            arr.prefix =
                                (0..a.len()).map(|i| self.at(format!("{}/{i}", sub(kw)))).collect();
                        }
                        "additionalItems" => {}
                        "minItems" => arr.min = count(kw, val)?,
                        "maxItems" => arr.max = Some(count(kw, val)?),
                        "contains" => {
                            let lo = match m.get("minContains") {
                                Some(v) => count("minContains", v)?,
                                _ => 1,
                            };
                            let hi = match m.get("maxContains") {
                                Some(v) => Some(count("maxContains", v)?),
                                _ => None,
                            };
                            arr.contains.push((self.at(sub(kw)), lo, hi));
                        }
                        "uniqueItems" => arr.unique = val.as_bool().unwrap_or(false),
                        _ => {}
                    }
                }
                "properties"
                | "patternProperties"
                | "additionalProperties"
                | "required"
                | "minProperties"
                | "maxProperties"
                | "propertyNames" => {
                    has_obj = true;
                    match kw {
                        "properties" => {
                            let o = val.as_object().ok_or_else(|| {
                                Error::new(ErrorKind::Value, "properties: not an object")
                            })?;
                            for name in o.keys() {
                                let e = self.at(format!("{}/{}", sub(kw), escape_token(name)));
                                clause.props.push((name.clone(), e));
                            }
                        }
                        "patternProperties" => {
                            let o = val.as_object().ok_or_else(|| {
                                Error::new(ErrorKind::Value, "patternProperties: not an object")
                            })?;
                            for p in o.keys() {
                                let rx = ecma::translate_pattern(p, false)?;
                                check_regex(&rx)?;
                                let e = self.at(format!("{}/{}", sub(kw), escape_token(p)));
                                clause.patterns.push((rx, e));
                            }
                        }
                        "additionalProperties" => clause.additional = self.at(sub(kw)),
                        "required" => {
                            for r in val.as_array().into_iter().flatten().filter_map(Value::as_str)
                            {
                                if !obj.required.iter().any(|x| x == r) {
                                    obj.required.push(r.to_string());
                                }
                            }
                        }
                        "minProperties" => obj.min = count(kw, val)?,
                        "maxProperties" => obj.max = Some(count(kw, val)?),
                        "propertyNames" => {
                            let e = self.at(sub(kw));
                            let pn = self.normalize(&e)?;
                            obj.names = obj.names.and(&pn.str_);
                        }
                        _ => {}
                    }
                }
                "unevaluatedProperties" => {
                    if val == &Value::Bool(true) || val.as_object().is_some_and(|o| o.is_empty()) {
                        continue;
                    }
                    if has_applicators || m.contains_key("additionalProperties") {
                        return Err(unsupported(
                            kw,
                            "only supported without applicators and additionalProperties",
                        ));
                    }
                    has_obj = true;
                    clause.additional = self.at(sub(kw));
                }
                "unevaluatedItems" => {
                    if val == &Value::Bool(true) || val.as_object().is_some_and(|o| o.is_empty()) {
                        continue;
                    }
                    let items_is_schema = m.get("items").is_some_and(|i| !i.is_array());
                    if has_applicators
                        || items_is_schema
                        || m.contains_key("contains")
                        || m.contains_key("additionalItems")
                    {
                        return Err(unsupported(
                            kw,
                            "only supported without applicators, items and contains",
                        ));
                    }
                    has_arr = true;
                    arr.items = self.at(sub(kw));
                }
                "allOf" | "anyOf" | "oneOf" => {
                    let a = val.as_array().ok_or_else(|| {
                        Error::new(ErrorKind::Value, format!("{kw}: not an array"))
                    })?;
                    let es: Vec<SExpr> =
                        (0..a.len()).map(|i| self.at(format!("{}/{i}", sub(kw)))).collect();
                    let node = match kw {
                        "allOf" => (*self.normalize(&SExpr::all(es))?).clone(),
                        "anyOf" => (*self.normalize(&SExpr::Any(es))?).clone(),
                        _ => self.one_of(&es)?,
                    };
                    if node_is_nothing(&node) && !a.is_empty() && self.unsat.len() < 8 {
                        let at = if loc.is_empty() { "/" } else { loc };
                        let why = match kw {
                            "allOf" => {
                                format!("the schemas of `allOf` at {at} have no value in common")
                            }
                            _ => format!("no schema of `{kw}` at {at} has a valid value"),
                        };
                        if !self.unsat.contains(&why) {
                            self.unsat.push(why);
                        }
                    }
                    applied.push((ki, node));
                }
                "not" => {
                    let e = SExpr::not(&self.at(sub(kw)));
                    applied.push((ki, (*self.normalize(&e)?).clone()));
                }
                "if" => {
                    let c = self.at(sub("if"));
                    let t = if m.contains_key("then") { self.at(sub("then")) } else { SExpr::True };
                    let f = if m.contains_key("else") { self.at(sub("else")) } else { SExpr::True };
                    if t == SExpr::True && f == SExpr::True {
                        continue;
                    }
                    let e = SExpr::Any(vec![
                        SExpr::all(vec![c.clone(), t]),
                        SExpr::all(vec![SExpr::not(&c), f]),
                    ]);
                    applied.push((ki, (*self.normalize(&e)?).clone()));
                }
                "$ref" => {
                    let r = val
                        .as_str()
                        .ok_or_else(|| Error::new(ErrorKind::Value, "$ref must be a string"))?;
                    let target = self.doc.resolve_ref(loc, r)?;
                    let e = self.at(target);
                    applied.push((ki, (*self.normalize(&e)?).clone()));
                }
                "dependentRequired" | "dependentSchemas" | "dependencies" => {
                    let o = val.as_object().ok_or_else(|| {
                        Error::new(ErrorKind::Value, format!("{kw}: not an object"))
                    })?;
                    for (key, dep) in o {
                        let absent = Obj {
                            clauses: vec![Clause {
                                props: vec![(key.clone(), SExpr::False)],
                                patterns: vec![],
                                additional: SExpr::True,
                            }],
                            ..Obj::any()
                        };
                        let mut present = Node {
                            obj: vec![Obj { required: vec![key.clone()], ..Obj::any() }],
                            ..Node::any()
                        };
                        match dep {
                            Value::Array(names) => {
                                for r in names.iter().filter_map(Value::as_str) {
                                    if !present.obj[0].required.iter().any(|x| x == r) {
                                        present.obj[0].required.push(r.to_string());
                                    }
                                }
                            }
                            _ => {
                                let e = self.at(format!("{}/{}", sub(kw), escape_token(key)));
                                let d = self.normalize(&e)?;
                                present = self.intersect(&present, &d)?;
                            }
                        }
                        // non-objects are unconstrained
                        let mut u = present;
                        u.obj.push(absent);
                        applied.push((ki, u));
                    }
                }
                "$dynamicRef" | "$recursiveRef" => {
                    return Err(unsupported(kw, "dynamic references are not supported"));
                }
                k if IGNORED.contains(&k) => {}
                k if k.starts_with("x-") => {}
                _ => {
                    // Unknown keywords are annotations by the spec; they never constrain.
                }
            }
        }
        if has_arr {
            let a = Node { arr: vec![arr], ..Node::any() };
            n = self.intersect(&n, &a)?;
        }
        let mut own_obj = None;
        if has_obj {
            if !clause.props.is_empty()
                || !clause.patterns.is_empty()
                || clause.additional != SExpr::True
            {
                obj.clauses.push(clause);
            }
            own_obj = Some(Node { obj: vec![obj], ..Node::any() });
        }
        for (ki, a) in applied {
            if ki > own_obj_at {
                if let Some(o) = own_obj.take() {
                    n = self.intersect(&n, &o)?;
                }
            }
            n = self.intersect(&n, &a)?;
        }
        if let Some(o) = own_obj {
            n = self.intersect(&n, &o)?;
        }
        // `format` only constrains strings: an unknown one matters only if strings remain
        if let Some(f) = unknown_format {
            if !n.str_.is_nothing() {
                if !self.opts.lenient {
                    return Err(unsupported("format", &format!("Unknown format: {f}")));
                }
                self.warnings.push(format!("Unknown format: {f} (ignored)"));
            }
        }
        for (part, why) in contradicted {
            match part {
                Part::Numbers => n.num = Node::nothing().num,
                Part::Strings => n.str_ = Rx::Nothing,
                Part::Arrays => n.arr.clear(),
                Part::Objects => n.obj.clear(),
                Part::All => n = Node::nothing(),
            }
            if self.unsat.len() < 8 && !self.unsat.contains(&why) {
                self.unsat.push(why);
            }
        }
        Ok(n)
    }

    fn num_constraint(&mut self, n: &mut Node, rx: String) {
        n.num.rx = n.num.rx.and(&Rx::Some(RegexSpec::Regex(rx)));
        n.num.exp = exp_restrict(n.num.exp);
    }

    /// `oneOf`: exact when the branches are provably disjoint or their complements are
    /// expressible; otherwise an error, or `anyOf` with `coerce_one_of`.
    fn one_of(&mut self, es: &[SExpr]) -> Result<Node, Error> {
        let nodes: Vec<Rc<Node>> =
            es.iter().map(|e| self.normalize(e)).collect::<Result<_, _>>()?;
        let n = es.len();
        let mut alts = Vec::new();
        let mut need_complement = false;
        for i in 0..n {
            let mut parts = vec![es[i].clone()];
            for j in 0..n {
                if i != j && !self.disjoint(&nodes[i], &nodes[j], 3)? {
                    parts.push(SExpr::not(&es[j]));
                    need_complement = true;
                }
            }
            alts.push(SExpr::all(parts));
        }
        if !need_complement {
            return Ok((*self.normalize(&SExpr::Any(es.to_vec()))?).clone());
        }
        if self.opts.coerce_one_of {
            return Ok((*self.normalize(&SExpr::Any(es.to_vec()))?).clone());
        }
        if n > 32 {
            return Err(unsupported(
                "oneOf",
                "more than 32 branches that are not provably disjoint",
            ));
        }
        self.normalize(&SExpr::Any(alts)).map(|n| (*n).clone()).map_err(|e| {
            Error::new(
                e.kind(),
                format!("oneOf: branches not provably disjoint and not expressible exactly ({}); set x-guidance coerce_one_of to treat it as anyOf", e.message()),
            )
        })
    }

    /// Conservatively: whether no instance satisfies both.
    fn disjoint(&mut self, a: &Node, b: &Node, depth: usize) -> Result<bool, Error> {
        if let (Some(x), Some(y)) = (&a.values, &b.values) {
            if !x.iter().any(|v| y.iter().any(|w| json_eq(v, w))) {
                return Ok(true);
            }
        }
        if (a.null && b.null) || (a.t && b.t) || (a.f && b.f) {
            return Ok(false);
        }
        let num_a = !a.num.rx.is_nothing() || a.num.exp != Exp::None;
        let num_b = !b.num.rx.is_nothing() || b.num.exp != Exp::None;
        if num_a && num_b {
            return Ok(false);
        }
        if !a.str_.is_nothing() && !b.str_.is_nothing() {
            return Ok(false);
        }
        for x in &a.arr {
            for y in &b.arr {
                let lo = x.min.max(y.min);
                let hi = min_opt(x.max, y.max);
                if hi.is_none_or(|h| h >= lo) {
                    return Ok(false);
                }
            }
        }
        for x in &a.obj {
            for y in &b.obj {
                if !self.obj_disjoint(x, y, depth)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    fn obj_disjoint(&mut self, x: &Obj, y: &Obj, depth: usize) -> Result<bool, Error> {
        let lo = x.min.max(y.min);
        if min_opt(x.max, y.max).is_some_and(|h| h < lo) {
            return Ok(true);
        }
        if depth == 0 {
            return Ok(false);
        }
        for (p, q) in [(x, y), (y, x)] {
            for k in &p.required {
                let vq = self.value_for(q, k)?;
                if vq == SExpr::False {
                    return Ok(true);
                }
                if q.required.contains(k) {
                    let vp = self.value_for(p, k)?;
                    let (np, nq) = (self.normalize(&vp)?, self.normalize(&vq)?);
                    if self.disjoint(&np, &nq, depth - 1)? {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    /// The schema a named property's value must satisfy (`False` if the key is forbidden).
    pub fn value_for(&mut self, o: &Obj, key: &str) -> Result<SExpr, Error> {
        if !self.rx_matches(&o.names.clone(), key)? {
            return Ok(SExpr::False);
        }
        let mut parts = Vec::new();
        for c in &o.clauses {
            let mut matched = false;
            if let Some((_, s)) = c.props.iter().find(|(k, _)| k == key) {
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

/// Any string contents.
pub(crate) const STRING_ANY: &str = r"(?s:.)*";

fn exp_restrict(e: Exp) -> Exp {
    match e {
        Exp::None => Exp::None,
        _ => Exp::Unknown,
    }
}

/// The numbers of `a ∪ b` (exponent forms aside). `int_plain` leaves `1.0`-style integers
/// out of one side only: a side with no numbers keeps the other's flag; otherwise the
/// exclusion is written into that side's regex, so the union neither gains those forms from
/// an `integer` branch (`anyOf: [string, integer]` rejects `80.0` as `integer` does) nor
/// loses them from a `number` branch.
fn union_num(a: Num, b: &Num) -> Num {
    let exp = match (a.exp, b.exp) {
        (Exp::All, _) | (_, Exp::All) => Exp::All,
        (Exp::None, x) | (x, Exp::None) => x,
        _ => Exp::Unknown,
    };
    let int_plain = match (&a.rx, &b.rx) {
        (Rx::Nothing, _) => b.int_plain,
        (_, Rx::Nothing) => a.int_plain,
        _ => a.int_plain && b.int_plain,
    };
    let bake = |n: &Num| -> Rx {
        match &n.rx {
            Rx::Some(r) if n.int_plain && !int_plain => {
                Rx::Some(numbers::without_zero_fraction(r.clone()))
            }
            Rx::All if n.int_plain && !int_plain => Rx::Some(numbers::without_zero_fraction(
                RegexSpec::Regex(numbers::NUMBER_NOEXP.into()),
            )),
            x => x.clone(),
        }
    };
    let rb = bake(b);
    let ra = if a.int_plain && !int_plain { bake(&a) } else { a.rx };
    Num { rx: ra.or_owned(&rb), exp, int_plain }
}

/// `a ∪ b`, consuming the accumulator `a` so that a fold over n alternatives (an `enum` of
/// 100k strings) stays linear.
pub(crate) fn union_into(a: Node, b: &Node) -> Result<Node, Error> {
    let mut arr = a.arr;
    arr.extend(b.arr.iter().cloned());
    let mut obj = a.obj;
    obj.extend(b.obj.iter().cloned());
    if arr.len() > MAX_UNION_ALTS || obj.len() > MAX_UNION_ALTS {
        return Err(Error::new(ErrorKind::Limit, "too many alternatives in a schema union"));
    }
    // an unconstrained alternative absorbs the others
    let arr = if arr.iter().any(Arr::is_any) { vec![Arr::any()] } else { arr };
    let obj = if obj.iter().any(Obj::is_any) { vec![Obj::any()] } else { obj };
    Ok(Node {
        null: a.null || b.null,
        t: a.t || b.t,
        f: a.f || b.f,
        num: union_num(a.num, &b.num),
        str_: a.str_.or_owned(&b.str_),
        str_approx: a.str_approx || b.str_approx,
        arr,
        obj,
        values: match (a.values, &b.values) {
            (Some(mut x), Some(y)) => {
                x.extend(y.iter().cloned());
                Some(x)
            }
            _ => None,
        },
    })
}

/// Whether a node has no instance at all (no kind of value left).
fn node_is_nothing(n: &Node) -> bool {
    !n.null
        && !n.t
        && !n.f
        && n.num.rx.is_nothing()
        && n.str_.is_nothing()
        && n.arr.is_empty()
        && n.obj.is_empty()
}

/// Which kind of instances a contradiction in one schema object rules out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Numbers,
    Strings,
    Arrays,
    Objects,
    All,
}

/// Bounds of one schema object that no value meets, in the schema's terms: numeric
/// `minimum`/`maximum` (and the exclusive forms), `minLength`/`maxLength`,
/// `minItems`/`maxItems`, `minProperties`/`maxProperties`, an empty `enum`. Each rules out
/// one kind of instance (numbers for numeric bounds: strings stay valid); when nothing is
/// left of the whole schema, the messages say why.
fn contradictions(m: &serde_json::Map<String, Value>, loc: &str) -> Vec<(Part, String)> {
    let at = if loc.is_empty() { "/" } else { loc };
    let f = |k: &str| m.get(k).and_then(Value::as_f64);
    let mut out = Vec::new();
    // The tightest lower and upper bounds, with whether each is strict.
    let mut lo: Option<(f64, bool, &str)> = None;
    let mut hi: Option<(f64, bool, &str)> = None;
    for (k, strict, flag) in [
        ("minimum", false, "exclusiveMinimum"),
        ("exclusiveMinimum", true, ""),
        ("maximum", false, "exclusiveMaximum"),
        ("exclusiveMaximum", true, ""),
    ] {
        let Some(v) = f(k) else { continue };
        let strict = strict || m.get(flag) == Some(&Value::Bool(true));
        if k.ends_with("inimum") {
            if lo.is_none_or(|(x, s, _)| v > x || (v == x && strict && !s)) {
                lo = Some((v, strict, k));
            }
        } else if hi.is_none_or(|(x, s, _)| v < x || (v == x && strict && !s)) {
            hi = Some((v, strict, k));
        }
    }
    if let (Some((a, sa, ka)), Some((b, sb, kb))) = (lo, hi) {
        if a > b || (a == b && (sa || sb)) {
            let rel = if a > b { "is above" } else { "leaves nothing up to" };
            out.push((Part::Numbers, format!("`{ka}` {a} {rel} `{kb}` {b} at {at}")));
        }
    }
    for (min, max, part) in [
        ("minLength", "maxLength", Part::Strings),
        ("minItems", "maxItems", Part::Arrays),
        ("minProperties", "maxProperties", Part::Objects),
    ] {
        if let (Some(a), Some(b)) = (f(min), f(max)) {
            if a > b {
                out.push((part, format!("`{min}` {a} is above `{max}` {b} at {at}")));
            }
        }
    }
    if m.get("enum").and_then(Value::as_array).is_some_and(|a| a.is_empty()) {
        out.push((Part::All, format!("`enum` is empty at {at}")));
    }
    out
}

fn number(kw: &str, v: &Value) -> Result<Decimal, Error> {
    match v {
        Value::Number(n) => Decimal::from_json(n),
        _ => Err(Error::new(ErrorKind::Value, format!("{kw} must be a number"))),
    }
}

fn count(kw: &str, v: &Value) -> Result<u32, Error> {
    let d = number(kw, v)?;
    if d.neg || !d.is_integer() {
        return Err(Error::new(ErrorKind::Value, format!("{kw} must be a nonnegative integer")));
    }
    d.int
        .parse::<u32>()
        .map_err(|_| Error::new(ErrorKind::Limit, format!("{kw} {} is too large", d.int)))
}

/// Checks that a translated regex parses.
fn check_regex(rx: &str) -> Result<(), Error> {
    // Parsed once per process, for the lexer too (`lexer::regex_check`).
    lexer::regex_check(rx).map_err(|e| {
        Error::new(
            ErrorKind::Unsupported,
            format!("pattern translated to {rx:?} does not parse: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len(lo: u32, hi: Option<u32>) -> Rx {
        let hi = hi.map_or(String::new(), |h| h.to_string());
        Rx::Some(RegexSpec::Regex(format!("{}{{{lo},{hi}}}", ecma::ANY_CHAR)))
    }

    #[test]
    fn lengths_a_format_or_pattern_implies_are_dropped() {
        let dt = Rx::Some(ecma::format_spec("date-time").unwrap());
        // `minLength: 1` beside a date-time (at least 20 characters): the date-time alone.
        assert_eq!(len(1, None).and(&dt), dt);
        assert_eq!(dt.and(&len(1, None)), dt);
        // `maxLength: 30` does not hold every date-time (fractions of a second): kept.
        assert!(matches!(dt.and(&len(0, Some(30))), Rx::Some(RegexSpec::And(v)) if v.len() == 2));
        // A fixed-length pattern under a larger `maxLength`, or above a smaller `minLength`.
        let hex = Rx::Some(RegexSpec::Regex("[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}".into()));
        assert_eq!(hex.and(&len(0, Some(36))), hex);
        assert_eq!(hex.and(&len(23, Some(23))), hex);
        assert!(matches!(hex.and(&len(24, None)), Rx::Some(RegexSpec::And(_))));
        // Characters, not bytes: `é` is one.
        let word = Rx::Some(RegexSpec::Regex("é{2,3}".into()));
        assert_eq!(word.and(&len(2, Some(3))), word);
        assert!(matches!(word.and(&len(0, Some(2))), Rx::Some(RegexSpec::And(_))));
        // Two lengths alone stay.
        assert!(matches!(len(1, None).and(&len(0, Some(5))), Rx::Some(RegexSpec::And(_))));
    }
}
