//! Arrays: prefix states then a counted tail; `contains` counts as states; `uniqueItems`
//! over a finite item domain as the sets of values used.

use hashbrown::HashMap;
use serde_json::Value;

use super::{alt, lit, sep, Emitter, MAX_CONTAINS, MAX_FINITE_VALUES, MAX_UNIQUE_STATES};
use crate::ir::Expr;
use crate::json_schema::schema::{json_eq, Arr, Exp, Node, SExpr};
use crate::{Error, ErrorKind};

impl Emitter<'_, '_> {
    pub(super) fn array(&mut self, base: &str, a: &Arr) -> Result<Option<Expr>, Error> {
        if a.max.is_some_and(|m| m < a.min) {
            return Ok(None);
        }
        if a.contains.len() > MAX_CONTAINS {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("contains: more than {MAX_CONTAINS} `contains` on one array"),
            ));
        }
        if a.unique && a.max.is_none_or(|m| m > 1) {
            return self.unique_array(base, a).map(Some);
        }
        let p = a.prefix.len() as u32;
        let body = if !a.contains.is_empty() {
            if a.contains.iter().any(|(_, lo, hi, _)| hi.is_some_and(|h| h < *lo)) {
                return Ok(None);
            }
            self.contains_array(base, a)?
        } else {
            // prefix states 0..p, then the tail as a counted repeat
            let tail = if a.max == Some(p) || a.items == SExpr::False {
                if a.min > p {
                    return Ok(None);
                }
                Expr::Empty
            } else {
                let lo = a.min.saturating_sub(p);
                let hi = a.max.map(|m| m - p);
                let e = self.r(&a.items.clone());
                let more = |lo: u32, hi: Option<u32>| Expr::Repeat {
                    expr: Box::new(Expr::Seq(vec![sep(&self.item_sep), e.clone()])),
                    min: lo,
                    max: hi,
                };
                if p == 0 {
                    let first = Expr::Seq(vec![
                        e.clone(),
                        more(lo.saturating_sub(1), hi.map(|h| h.saturating_sub(1))),
                    ]);
                    if lo == 0 {
                        Expr::Alt(vec![Expr::Empty, first])
                    } else {
                        first
                    }
                } else {
                    more(lo, hi)
                }
            };
            // Left-linear: `{base}_n` is the first n + 1 prefix items, each rule the one
            // before it and one item, and the array ends after any of them (from `minItems`
            // on) or goes on with the tail after the last. Nested the other way (the rest
            // after each item), every item written nested one level deeper and each mask
            // completed them all: 1,000 `prefixItems` cost 33 µs per mask at p50, growing
            // with the position (32 µs per 1,000 tokens).
            if p == 0 {
                tail
            } else {
                let mut ends = Vec::new();
                let mut prev: Option<String> = None;
                for n in 0..p {
                    if n >= a.min {
                        ends.push(prev.clone().map_or(Expr::Empty, Expr::Rule));
                    }
                    let name = format!("{base}_{n}");
                    let mut seq: Vec<Expr> = prev.iter().cloned().map(Expr::Rule).collect();
                    seq.extend(self.sep(n == 0));
                    seq.push(self.r(&a.prefix[n as usize].clone()));
                    self.push(name.clone(), Expr::Seq(seq));
                    prev = Some(name);
                }
                ends.push(Expr::Seq(prev.into_iter().map(Expr::Rule).chain([tail]).collect()));
                alt(ends)
            }
        };
        Ok(Some(Expr::Seq(vec![lit("["), body, lit("]")])))
    }

    /// An array with `contains` constraints (each a schema and a count range): states are
    /// (elements so far, the count of each `contains` so far, capped). Each element is
    /// counted or not by each `contains`: where the count has a maximum, counted means it
    /// matches and not counted that it does not (exact counts); where only a minimum is
    /// asked, counted means it matches and not counted asks nothing (ambiguous but exact).
    fn contains_array(&mut self, base: &str, a: &Arr) -> Result<Expr, Error> {
        let p = a.prefix.len() as u32;
        let cs = a.contains.clone();
        // uncapped counts must reach the first index each `contains` counts from
        let from = cs.iter().map(|c| c.3).max().unwrap_or(0);
        let ncap = match a.max {
            Some(m) => m,
            None => p.max(a.min).max(from).max(1),
        };
        let kcaps: Vec<u32> = cs.iter().map(|(_, lo, hi, _)| hi.unwrap_or(*lo)).collect();
        let states =
            kcaps.iter().fold(ncap as usize + 1, |acc, &k| acc.saturating_mul(k as usize + 1));
        self.check_states(states.saturating_mul(1 << cs.len()))?;
        let name = |n: u32, ks: &[u32]| {
            let ks: Vec<String> = ks.iter().map(u32::to_string).collect();
            format!("{base}_{n}_{}", ks.join("_"))
        };
        // Every count tuple.
        let mut tuples: Vec<Vec<u32>> = vec![vec![]];
        for &cap in &kcaps {
            tuples = tuples
                .into_iter()
                .flat_map(|t| (0..=cap).map(move |k| [t.clone(), vec![k]].concat()))
                .collect();
        }
        // Left-linear, as the prefix above: `name(n, ks)` is the items so far that lead to
        // state (n, ks), each alternative a state before it and one more item; the array
        // is any final state's items. (The rest after each item nested one level deeper
        // per item written: `minContains: 500` masks grew by 846 µs per 1,000 tokens.)
        // A minimum-only count is exact either way: counted means the item matches, and
        // not counted means it does not where that complement normalizes (one state per
        // position) or asks nothing (ambiguous: after i matching items every count up to i
        // is live, and each mask worked through them all); once the count reaches its
        // minimum, items are not split at all.
        let mut exact_miss = Vec::with_capacity(cs.len());
        for (c, _, hi, _) in &cs {
            exact_miss.push(hi.is_some() || self.ctx.normalize(&SExpr::not(c)).is_ok());
        }
        let start = (0, vec![0; cs.len()]);
        let mut into: HashMap<(u32, Vec<u32>), Vec<Expr>> = HashMap::new();
        let mut ends = Vec::new();
        for n in 0..=ncap {
            for ks in &tuples {
                let here = (n, ks.clone());
                let before = |at: &(u32, Vec<u32>)| {
                    if *at == start {
                        vec![]
                    } else {
                        vec![Expr::Rule(name(at.0, &at.1))]
                    }
                };
                if n >= a.min && cs.iter().zip(ks).all(|((_, lo, _, _), k)| k >= lo) {
                    ends.push(if here == start { Expr::Empty } else { Expr::Rule(name(n, ks)) });
                }
                if a.max.is_none_or(|m| n < m) {
                    let n2 = if a.max.is_none() { (n + 1).min(ncap) } else { n + 1 };
                    let elem = a.at(n as usize).clone();
                    // Each subset of the `contains` counting this element.
                    for mask in 0u32..(1 << cs.len()) {
                        let mut parts = vec![elem.clone()];
                        let mut ks2 = ks.clone();
                        let mut ok = true;
                        for (i, (c, _, hi, from)) in cs.iter().enumerate() {
                            if n < *from {
                                // not counted before its first index
                                if mask & (1 << i) != 0 {
                                    ok = false;
                                    break;
                                }
                                continue;
                            }
                            if hi.is_none() && ks[i] >= kcaps[i] {
                                // the minimum is met: the item is not split
                                if mask & (1 << i) != 0 {
                                    ok = false;
                                    break;
                                }
                                continue;
                            }
                            if mask & (1 << i) != 0 {
                                if hi.is_some() && ks[i] >= kcaps[i] {
                                    ok = false;
                                    break;
                                }
                                ks2[i] = ks[i] + 1;
                                parts.push(c.clone());
                            } else if exact_miss[i] {
                                parts.push(SExpr::not(c));
                            }
                        }
                        if !ok {
                            continue;
                        }
                        let mut seq = before(&here);
                        seq.extend(self.sep(n == 0));
                        seq.push(self.r(&SExpr::all(parts)));
                        into.entry((n2, ks2)).or_default().push(Expr::Seq(seq));
                    }
                }
            }
        }
        // Every state's rule (a state no item leads to matches nothing).
        for n in 0..=ncap {
            for ks in &tuples {
                let key = (n, ks.clone());
                if key == start {
                    continue;
                }
                let alts = into.remove(&key).unwrap_or_default();
                self.push(name(n, ks), Expr::Alt(alts));
            }
        }
        if ends.is_empty() {
            return Ok(Expr::Alt(vec![]));
        }
        Ok(alt(ends))
    }

    /// The values of `n` when they are known and few: its listed values (`enum`, `const`),
    /// or objects closed over their keys (`additionalProperties: false`, no patterns) whose
    /// every value is known so (a discriminator and fixed fields): each combination, with
    /// optional keys present or not, up to [`MAX_FINITE_VALUES`]. `None` otherwise.
    fn finite_values(&mut self, n: &Node, depth: usize) -> Result<Option<Vec<Value>>, Error> {
        if let Some(v) = &n.values {
            return Ok(Some(v.clone()));
        }
        let open = !n.num.rx.is_nothing()
            || n.num.exp != Exp::None
            || !n.str_.is_nothing()
            || !n.arr.is_empty();
        if depth == 0 || open {
            return Ok(None);
        }
        let mut out: Vec<Value> = Vec::new();
        for (on, v) in [(n.null, Value::Null), (n.t, Value::Bool(true)), (n.f, Value::Bool(false))]
        {
            if on {
                out.push(v);
            }
        }
        for o in &n.obj {
            let closed =
                o.clauses.iter().find(|c| c.additional == SExpr::False && c.patterns.is_empty());
            let (Some(c), true) = (closed, o.some.is_empty()) else {
                return Ok(None);
            };
            let mut objs = vec![serde_json::Map::new()];
            for (k, _) in &c.props {
                let v = self.ctx.value_for(o, k)?;
                if v == SExpr::False {
                    continue; // never there (a required one leaves no object below)
                }
                let vn = self.ctx.normalize(&v)?;
                let Some(vals) = self.finite_values(&vn, depth - 1)? else {
                    return Ok(None);
                };
                let optional = !o.required.contains(k);
                let mut next = Vec::new();
                for m in &objs {
                    if optional {
                        next.push(m.clone());
                    }
                    for x in &vals {
                        let mut m2 = m.clone();
                        m2.insert(k.clone(), x.clone());
                        next.push(m2);
                    }
                }
                if next.len() > MAX_FINITE_VALUES {
                    return Ok(None);
                }
                objs = next;
            }
            for m in objs {
                let len = m.len() as u32;
                if o.required.iter().all(|r| m.contains_key(r))
                    && o.deps_hold(|k| m.contains_key(k))
                    && len >= o.min
                    && o.max.is_none_or(|x| len <= x)
                {
                    out.push(Value::Object(m));
                }
            }
            if out.len() > MAX_FINITE_VALUES {
                return Ok(None);
            }
        }
        Ok(Some(out))
    }

    fn unique_array(&mut self, base: &str, a: &Arr) -> Result<Expr, Error> {
        let err = |m: &str| Error::new(ErrorKind::Unsupported, format!("uniqueItems: {m}"));
        if !a.prefix.is_empty() || !a.contains.is_empty() {
            return Err(err("not supported with prefixItems or contains"));
        }
        let node = self.ctx.normalize(&a.items)?;
        let Some(vals) = self.finite_values(&node, 3)? else {
            if self.ctx.opts.lenient {
                self.ctx.warnings.push("uniqueItems ignored".into());
                let mut b = a.clone();
                b.unique = false;
                return Ok(self.array(base, &b)?.unwrap_or(Expr::Alt(vec![])));
            }
            return Err(err(
                "supported only when the items are a small finite set (enum, const, boolean, or \
                 objects closed over keys whose values are such sets)",
            ));
        };
        let mut dom: Vec<serde_json::Value> = Vec::new();
        for v in vals {
            if !dom.iter().any(|w| json_eq(&v, w)) {
                dom.push(v);
            }
        }
        let d = dom.len();
        let max = a.max.unwrap_or(u32::MAX);
        // States: the sets of values used so far (each value at most once), reachable from
        // the empty set while under `maxItems`: 2^d without a bound, fewer with a small one
        // (a larger domain is fine when `maxItems` is small).
        let mut states: Vec<Vec<usize>> = vec![vec![]];
        let mut index: HashMap<Vec<usize>, usize> = HashMap::new();
        index.insert(vec![], 0);
        let mut i = 0;
        while i < states.len() {
            if (states[i].len() as u32) < max {
                for v in 0..d {
                    if !states[i].contains(&v) {
                        let mut t = states[i].clone();
                        t.push(v);
                        t.sort_unstable();
                        if !index.contains_key(&t) {
                            if states.len() >= MAX_UNIQUE_STATES {
                                return Err(err(&format!(
                                    "{d} distinct item values under maxItems {} need more than \
                                     {MAX_UNIQUE_STATES} states (sets of values used)",
                                    a.max.map_or("unbounded".to_string(), |m| m.to_string())
                                )));
                            }
                            index.insert(t.clone(), states.len());
                            states.push(t);
                        }
                    }
                }
            }
            i += 1;
        }
        self.check_states(states.len())?;
        let elems: Vec<Expr> = dom
            .iter()
            .map(|v| self.r(&SExpr::and(&a.items, &SExpr::Const(v.to_string().into()))))
            .collect();
        for (si, set) in states.iter().enumerate() {
            let cnt = set.len() as u32;
            let mut alts = vec![];
            if cnt >= a.min {
                alts.push(Expr::Empty);
            }
            if cnt < max {
                for (v, e) in elems.iter().enumerate() {
                    if !set.contains(&v) {
                        let mut t = set.clone();
                        t.push(v);
                        t.sort_unstable();
                        let mut seq = self.sep(set.is_empty());
                        seq.push(e.clone());
                        seq.push(Expr::Rule(format!("{base}_{}", index[&t])));
                        alts.push(Expr::Seq(seq));
                    }
                }
            }
            self.push(format!("{base}_{si}"), alt(alts));
        }
        Ok(Expr::Seq(vec![lit("["), Expr::Rule(format!("{base}_0")), lit("]")]))
    }
}
