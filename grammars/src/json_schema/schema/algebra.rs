//! The set algebra of nodes: intersection, union and complement, each exact on every part of
//! a node (regexes for numbers and strings; unions of structural constraints for arrays and
//! objects, whose children stay expressions: a complement's children are the children's
//! complements as expressions, normalized when reached). Complements that would not be
//! exact are [`ErrorKind::Unsupported`] errors.

use std::hash::BuildHasher;

use lexer::RegexSpec;
use serde_json::Value;

use super::node::{json_eq, Arr, Clause, Exists, Exp, KeyLang, Node, Num, Obj, SExpr};
use super::rx::{LengthBounds, Rx, Term};
use crate::json_schema::numbers;
use crate::{Error, ErrorKind};

/// The most alternatives an intersection of object or array constraints may produce (the
/// product of the operands' alternatives).
const MAX_ALTS: usize = 256;
/// The most alternatives a union of object or array constraints may have.
const MAX_UNION_ALTS: usize = 10_000;

/// An [`ErrorKind::Unsupported`] error naming the keyword.
pub(crate) fn unsupported(kw: &str, msg: &str) -> Error {
    Error::new(ErrorKind::Unsupported, format!("{kw}: {msg}"))
}

/// `a ∩ b`.
pub(crate) fn intersect(a: &Node, b: &Node) -> Result<Node, Error> {
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
    // The hashes of the kept objects, compared before the objects: a product of many
    // alternatives compared each new object with every kept one, field by field (18 % of
    // a 70 ms compile, Github_hard o90607).
    let hasher = hashbrown::DefaultHashBuilder::default();
    let mut hashes: Vec<u64> = Vec::new();
    for x in &a.obj {
        for y in &b.obj {
            if x.is_any() {
                obj.push(y.clone());
                hashes.push(hasher.hash_one(y));
            } else if y.is_any() {
                obj.push(x.clone());
                hashes.push(hasher.hash_one(x));
            } else {
                let o = x.and(y);
                if o.surely_empty() {
                    continue;
                }
                let h = hasher.hash_one(&o);
                if !hashes.iter().zip(&obj).any(|(&k, kept)| k == h && *kept == o) {
                    obj.push(o);
                    hashes.push(h);
                }
            }
        }
    }
    // An intersection with one alternative never grows; a product beyond the limit fails.
    let limit = |x: usize, y: usize| MAX_ALTS.max(x).max(y);
    if arr.len() > limit(a.arr.len(), b.arr.len()) || obj.len() > limit(a.obj.len(), b.obj.len()) {
        return Err(Error::new(ErrorKind::Limit, "too many alternatives in a schema intersection"));
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

/// The complement of `a`: the instances `a` does not allow.
pub(crate) fn complement(a: &Node) -> Result<Node, Error> {
    if a.str_approx {
        return Err(unsupported(
            "not",
            "the complement of an anchored `pattern` (set x-guidance pattern_search for JSON \
             Schema's search semantics) or of a `format` checked on a subset of its strings \
             (hostname, email, idn-hostname, idn-email) is inexact",
        ));
    }
    let mut n = Node {
        null: !a.null,
        t: !a.t,
        f: !a.f,
        num: Num {
            rx: a.num.rx.not(Term::Regex(RegexSpec::Regex(numbers::NUMBER_NOEXP.into()))),
            exp: match a.num.exp {
                Exp::All => Exp::None,
                Exp::None => Exp::All,
                Exp::Unknown => Exp::Unknown,
            },
            int_plain: false,
        },
        str_: a.str_.not(Term::Len(LengthBounds::ANY)),
        str_approx: false,
        arr: vec![Arr::any()],
        obj: vec![Obj::any()],
        values: None,
    };
    // complement of a union = intersection of complements
    for x in &a.arr {
        let c = Node { arr: complement_arr(x)?, ..Node::any() };
        n = intersect(&n, &c)?;
    }
    for x in &a.obj {
        let c = Node { obj: complement_obj(x)?, ..Node::any() };
        n = intersect(&n, &c)?;
    }
    Ok(n)
}

fn complement_arr(a: &Arr) -> Result<Vec<Arr>, Error> {
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
        // some item after the prefix violates `items`
        let n = a.prefix.len() as u32;
        out.push(Arr {
            contains: vec![(SExpr::not(&a.items), 1, None, n)],
            min: n + 1,
            ..Arr::any()
        });
    }
    for (c, lo, hi, from) in &a.contains {
        if *lo > 0 {
            out.push(Arr { contains: vec![(c.clone(), 0, Some(lo - 1), *from)], ..Arr::any() });
        }
        if let Some(h) = hi {
            out.push(Arr { contains: vec![(c.clone(), h + 1, None, *from)], ..Arr::any() });
        }
    }
    if a.unique {
        return Err(unsupported("not", "the complement of `uniqueItems` is not supported"));
    }
    Ok(out)
}

fn complement_obj(a: &Obj) -> Result<Vec<Obj>, Error> {
    let mut out = Vec::new();
    if a.min > 0 {
        out.push(Obj { max: Some(a.min - 1), ..Obj::any() });
    }
    if let Some(m) = a.max {
        out.push(Obj { min: m + 1, ..Obj::any() });
    }
    for r in &a.required {
        out.push(Obj::without(r));
    }
    // A dependency broken: its key present, one of its list absent.
    for (k, list) in &a.deps {
        for t in list {
            out.push(Obj { required: vec![k.clone()], ..Obj::without(t) });
        }
    }
    if a.names != Rx::All {
        // a key outside `propertyNames`
        out.push(Obj {
            some: vec![Exists { key: KeyLang::NotNames(a.names.clone()), value: SExpr::True }],
            ..Obj::any()
        });
    }
    for c in &a.clauses {
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
        // A member violating `patternProperties` or `additionalProperties`.
        let some = |key: KeyLang, s: &SExpr| Obj {
            some: vec![Exists { key, value: SExpr::not(s) }],
            ..Obj::any()
        };
        for (p, s) in &c.patterns {
            if *s != SExpr::True {
                out.push(some(KeyLang::Pattern(p.clone()), s));
            }
        }
        if c.additional != SExpr::True {
            let key = KeyLang::Other {
                props: c.props.iter().map(|(k, _)| k.clone()).collect(),
                patterns: c.patterns.iter().map(|(p, _)| p.clone()).collect(),
            };
            out.push(some(key, &c.additional));
        }
    }
    // Not "some member (k, v)": every member with such a key has a value outside v.
    for e in &a.some {
        if let KeyLang::NotNames(rx) = &e.key {
            // every key outside `rx` has a value outside `e.value`
            if e.value != SExpr::True {
                return Err(unsupported(
                    "not",
                    "the complement of a `propertyNames` complement with a value schema is not supported",
                ));
            }
            out.push(Obj { names: rx.clone(), ..Obj::any() });
            continue;
        }
        let v = SExpr::not(&e.value);
        let clause = match &e.key {
            KeyLang::Pattern(p) => {
                Clause { props: vec![], patterns: vec![(p.clone(), v)], additional: SExpr::True }
            }
            KeyLang::Other { props, patterns } => Clause {
                props: props.iter().map(|k| (k.clone(), SExpr::True)).collect(),
                patterns: patterns.iter().map(|p| (p.clone(), SExpr::True)).collect(),
                additional: v,
            },
            KeyLang::NotNames(_) => continue,
        };
        out.push(Obj { clauses: vec![clause], ..Obj::any() });
    }
    Ok(out)
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
            Rx::And(_) | Rx::All if n.int_plain && !int_plain => {
                Rx::regex(numbers::without_zero_fraction(n.rx.spec(numbers::NUMBER_NOEXP)))
            }
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
