//! `oneOf`: exact when the branches are provably disjoint (then it is their union), else
//! each branch intersected with the complements of the branches it may overlap; an error
//! when those are not expressible (or `anyOf`, with `coerce_one_of`).

use std::rc::Rc;

use super::algebra::{intersect, unsupported};
use super::ctx::Ctx;
use super::node::{json_eq, min_opt, Exp, Node, Obj, SExpr};
use crate::Error;

impl Ctx<'_> {
    /// `oneOf`: exact when the branches are provably disjoint or their complements are
    /// expressible; otherwise an error, or `anyOf` with `coerce_one_of`.
    ///
    /// `domain`: the values a sibling `type` allows, which the caller intersects with the
    /// result. Within it, exactly one branch holds iff exactly one branch within it holds, so
    /// branches need only be disjoint there (object branches without `type`, each of which
    /// allows every scalar, under an object `type`).
    pub(super) fn one_of(&mut self, es: &[SExpr], domain: Option<&Node>) -> Result<Node, Error> {
        let mut nodes: Vec<Rc<Node>> =
            es.iter().map(|e| self.normalize(e)).collect::<Result<_, _>>()?;
        if let Some(d) = domain {
            for n in nodes.iter_mut() {
                *n = Rc::new(intersect(n, d)?);
            }
        }
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
                // A value both accept has `k` (`p` requires it) with a value both allow,
                // whether or not `q` requires it.
                let vp = self.value_for(p, k)?;
                // A value inside a cycle through this very `oneOf` proves nothing here.
                let Some(np) = self.normalize_or_cycle(&vp)? else { continue };
                let Some(nq) = self.normalize_or_cycle(&vq)? else { continue };
                if self.disjoint(&np, &nq, depth - 1)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}
