//! The normal form's nodes: a schema expression ([`SExpr`]: a location, a constant, or a
//! boolean combination of them) and what it normalizes to, a [`Node`] that splits the
//! allowed instances by JSON type: numbers and strings as regexes ([`Rx`]), arrays and
//! objects as unions of structural constraints ([`Arr`], [`Obj`]) whose children are again
//! expressions.

use std::rc::Rc;

use serde_json::Value;

use super::rx::Rx;
use crate::json_schema::numbers::Decimal;

/// A schema expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum SExpr {
    /// Everything.
    True,
    /// Nothing.
    False,
    /// The schema at a location of the document (shared: expressions are cloned into the
    /// normal form's caches and queues many times per schema node).
    At(Rc<str>),
    /// Exactly this value (JSON text).
    Const(Rc<str>),
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
        // Locations in natural order (`/allOf/2` before `/allOf/10`): the order of the
        // parts is the order their properties are written in (with a plain string order,
        // an `allOf` of 12 objects wanted the keys of its 11th before those of its 3rd).
        out.sort_by(|a, b| match (a, b) {
            (SExpr::At(x), SExpr::At(y)) => natural_cmp(x, y),
            _ => a.cmp(b),
        });
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

/// Strings compared with their runs of digits as numbers (`a2` < `a10`); ties (`a02`,
/// `a2`) by plain order, so only equal strings compare equal.
pub(crate) fn natural_cmp(x: &str, y: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (x.as_bytes(), y.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            // Leading zeros aside, the longer run is the larger number.
            let da = a[si..i].iter().skip_while(|&&c| c == b'0').count();
            let db = b[sj..j].iter().skip_while(|&&c| c == b'0').count();
            let o = da.cmp(&db).then_with(|| a[i - da..i].cmp(&b[j - db..j]));
            if o != Ordering::Equal {
                return o;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j)).then_with(|| x.cmp(y))
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
    /// (schema, min count, max count, first index counted): `contains` counts from 0; the
    /// complement of `items` after `prefixItems` counts from the prefix's end.
    pub contains: Vec<(SExpr, u32, Option<u32>, u32)>,
    pub unique: bool,
}

impl Arr {
    pub fn any() -> Arr {
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
    pub fn and(&self, o: &Arr) -> Arr {
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
    pub fn is_any(&self) -> bool {
        *self == Arr::any()
    }
}

/// What one schema says about an object's properties.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Clause {
    pub props: Vec<(String, SExpr)>,
    /// (Rust regex of the key, value schema)
    pub patterns: Vec<(String, SExpr)>,
    pub additional: SExpr,
}

impl Clause {
    /// Whether the clause only forbids keys: every named property `false`, no patterns,
    /// other keys free.
    pub fn only_forbids(&self) -> bool {
        self.patterns.is_empty()
            && self.additional == SExpr::True
            && !self.props.is_empty()
            && self.props.iter().all(|(_, v)| *v == SExpr::False)
    }
}

/// Which keys an [`Exists`] constraint looks at.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum KeyLang {
    /// Keys matching this Rust regex (as in [`Clause::patterns`]).
    Pattern(String),
    /// Keys that are none of `props` and match none of `patterns`: the keys a clause's
    /// `additional` schema applies to.
    Other { props: Vec<String>, patterns: Vec<String> },
    /// Keys outside this string-contents regex (the complement of `propertyNames`).
    NotNames(Rx),
}

/// "Some member has a key in `key` and a value in `value`": what the complement of
/// `patternProperties` and `additionalProperties` needs (an object violates them exactly
/// when one of its members does).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Exists {
    pub key: KeyLang,
    pub value: SExpr,
}

/// An object constraint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Obj {
    pub clauses: Vec<Clause>,
    pub required: Vec<String>,
    pub min: u32,
    pub max: Option<u32>,
    /// What property names must match (a string-contents regex).
    pub names: Rx,
    /// Members that must be present (each constraint by at least one member).
    pub some: Vec<Exists>,
    /// `dependentRequired`: if the key is present, so is each of its list. Kept as a
    /// constraint of the object (the emitter tracks the keys written) rather than as the
    /// union "absent, or present with the list", whose products grew with every
    /// dependency (nine independent ones: more alternatives than an intersection may make).
    pub deps: Vec<(String, Vec<String>)>,
}

impl Obj {
    pub fn any() -> Obj {
        Obj {
            clauses: vec![],
            required: vec![],
            min: 0,
            max: None,
            names: Rx::All,
            some: vec![],
            deps: vec![],
        }
    }
    pub fn and(&self, o: &Obj) -> Obj {
        let mut required = self.required.clone();
        for r in &o.required {
            if !required.contains(r) {
                required.push(r.clone());
            }
        }
        // Clauses that only forbid keys (`dependentRequired`'s "key absent" side) are merged
        // into one: a chain of 100 dependencies made objects of 100 such clauses, which
        // every later intersection copied and `surely_empty` scanned per required key.
        let mut clauses: Vec<Clause> = Vec::with_capacity(self.clauses.len() + o.clauses.len());
        let mut forbid_at = None;
        for c in self.clauses.iter().chain(&o.clauses) {
            match forbid_at {
                Some(i) if c.only_forbids() => {
                    let m: &mut Clause = &mut clauses[i];
                    for (k, _) in &c.props {
                        if !m.props.iter().any(|(x, _)| x == k) {
                            m.props.push((k.clone(), SExpr::False));
                        }
                    }
                }
                _ => {
                    if c.only_forbids() {
                        forbid_at = Some(clauses.len());
                    }
                    clauses.push(c.clone());
                }
            }
        }
        Obj {
            clauses,
            required,
            min: self.min.max(o.min),
            max: min_opt(self.max, o.max),
            names: self.names.and(&o.names),
            some: self.some.iter().chain(&o.some).cloned().collect(),
            deps: {
                let mut d = self.deps.clone();
                for x in &o.deps {
                    if !d.contains(x) {
                        d.push(x.clone());
                    }
                }
                d
            },
        }
    }
    /// The objects without `key`.
    pub fn without(key: &str) -> Obj {
        Obj {
            clauses: vec![Clause {
                props: vec![(key.to_string(), SExpr::False)],
                patterns: vec![],
                additional: SExpr::True,
            }],
            ..Obj::any()
        }
    }
    /// Whether an object whose keys are those `present` answers yes for meets `deps`.
    pub fn deps_hold(&self, present: impl Fn(&str) -> bool) -> bool {
        self.deps.iter().all(|(k, list)| !present(k) || list.iter().all(|t| present(t)))
    }
    /// Whether no object meets this, by what can be seen without normalizing a schema: too
    /// few properties allowed, a required key that a clause forbids, or a `some` member whose
    /// keys a closed clause excludes. (False when unsure.)
    pub fn surely_empty(&self) -> bool {
        if self.max.is_some_and(|m| m < self.min || (m as usize) < self.required.len()) {
            return true;
        }
        // The keys a clause allows, when it names them all: no patterns, no other keys.
        fn closed(c: &Clause) -> Option<impl Iterator<Item = &String>> {
            (c.additional == SExpr::False && c.patterns.is_empty())
                .then(|| c.props.iter().filter(|(_, v)| *v != SExpr::False).map(|(k, _)| k))
        }
        let props: usize = self.clauses.iter().map(|c| c.props.len()).sum();
        if self.required.len() * props <= 1024 {
            for r in &self.required {
                for c in &self.clauses {
                    if c.props.iter().any(|(k, v)| k == r && *v == SExpr::False) {
                        return true;
                    }
                    if let Some(mut keys) = closed(c) {
                        if !keys.any(|k| k == r) {
                            return true;
                        }
                    }
                }
            }
        } else {
            // The same questions through sets: many required keys against large clauses.
            let required: hashbrown::HashSet<&str> =
                self.required.iter().map(String::as_str).collect();
            for c in &self.clauses {
                let forbids = c.props.iter().filter(|(_, v)| *v == SExpr::False);
                if forbids.into_iter().any(|(k, _)| required.contains(k.as_str())) {
                    return true;
                }
                if let Some(keys) = closed(c) {
                    let allowed: hashbrown::HashSet<&str> = keys.map(String::as_str).collect();
                    if required.iter().any(|r| !allowed.contains(r)) {
                        return true;
                    }
                }
            }
        }
        for e in &self.some {
            if let KeyLang::Other { props, patterns } = &e.key {
                if patterns.is_empty()
                    && self
                        .clauses
                        .iter()
                        .any(|c| closed(c).is_some_and(|mut ks| ks.all(|k| props.contains(k))))
                {
                    return true;
                }
            }
        }
        false
    }
    pub fn is_any(&self) -> bool {
        self.required.is_empty()
            && self.some.is_empty()
            && self.deps.is_empty()
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

/// The smaller of two upper bounds (`None`: unbounded).
pub(crate) fn min_opt(a: Option<u32>, b: Option<u32>) -> Option<u32> {
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
    /// `str_` is a subset of the schema's strings (anchored `pattern`s, the formats of
    /// `ecma::format_is_subset`), so its complement
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

#[cfg(test)]
mod tests {
    use super::natural_cmp;
    use std::cmp::Ordering::{Equal, Greater, Less};

    #[test]
    fn locations_compare_by_number() {
        assert_eq!(natural_cmp("/allOf/2", "/allOf/10"), Less);
        assert_eq!(natural_cmp("/allOf/10/properties", "/allOf/9"), Greater);
        assert_eq!(natural_cmp("/a/002", "/a/2"), Less, "ties by plain order");
        assert_eq!(natural_cmp("/a/2", "/a/2"), Equal);
        assert_eq!(natural_cmp("/a", "/a/0"), Less);
        assert_eq!(natural_cmp("/b/1", "/a/10"), Greater);
        let mut v = vec!["/x/10", "/x/9", "/x/1/y", "/x/1", "/x/100", "/x/01"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["/x/01", "/x/1", "/x/1/y", "/x/9", "/x/10", "/x/100"]);
    }
}
