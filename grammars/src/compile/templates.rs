//! Parametric rules lowered to `earley` templates (a rule instantiated per parameter value
//! when the parser reaches it).

use std::sync::Arc;

use earley::{ParamMap, TemplateAlt, TemplateIdx, TemplateSym};

use super::Lowering;
use crate::ir::Expr;
use crate::{Error, ErrorKind};

impl Lowering<'_> {
    pub(super) fn template(&self, gi: usize, rule: &str) -> Result<TemplateIdx, Error> {
        self.templates
            .get(&super::NameKey(gi, rule))
            .copied()
            .ok_or_else(|| Error::new(ErrorKind::Name, format!("unknown parametric rule {rule}")))
    }

    /// The alternatives of a parametric rule body (each maybe under `%if`) into template `t`.
    pub(super) fn lower_template(
        &mut self,
        gi: usize,
        body: &Expr,
        t: TemplateIdx,
        depth: usize,
    ) -> Result<(), Error> {
        self.check_depth(depth)?;
        let alts: Vec<&Expr> = match body {
            Expr::Alt(a) => a.iter().collect(),
            e => vec![e],
        };
        for a in alts {
            let (cond, e) = match a {
                Expr::If { cond, expr } => (Some(cond.clone()), &**expr),
                e => (None, e),
            };
            let rhs = self.tseq(gi, e, depth + 1)?;
            let cond = cond.map(|c| {
                let f: earley::ParamCond = Arc::new(move |p| c.eval(p));
                f
            });
            self.b.template_alt(t, TemplateAlt { cond, rhs });
        }
        Ok(())
    }

    pub(super) fn tseq(
        &mut self,
        gi: usize,
        e: &Expr,
        depth: usize,
    ) -> Result<Vec<TemplateSym>, Error> {
        self.flat_seq(gi, e, depth, Self::tsym)
    }

    /// A symbol of a template body: parts that do not depend on the parameter are plain
    /// symbols; groups and repeats around calls become templates of their own, called
    /// with the same parameter.
    pub(super) fn tsym(&mut self, gi: usize, e: &Expr, depth: usize) -> Result<TemplateSym, Error> {
        self.check_depth(depth)?;
        if !e.uses_param() {
            return Ok(TemplateSym::Sym(self.sym(gi, e, depth + 1)?));
        }
        let same: ParamMap = Arc::new(|p| p);
        match e {
            Expr::Call { rule, arg } => {
                let t = self.template(gi, rule)?;
                let arg = arg.clone();
                let f: ParamMap = Arc::new(move |p| arg.eval(p));
                Ok(TemplateSym::Call(t, f))
            }
            Expr::Seq(_) | Expr::Alt(_) | Expr::If { .. } => {
                let t = self.fresh_template("group");
                self.lower_template(gi, e, t, depth + 1)?;
                Ok(TemplateSym::Call(t, same))
            }
            Expr::Repeat { expr, min, max } => {
                if max.is_some_and(|n| n < *min) {
                    return Err(Error::new(
                        ErrorKind::Value,
                        format!("bad repeat range {{{min},{}}}", max.unwrap_or(0)),
                    ));
                }
                let bound = max.unwrap_or(*min);
                if bound > self.limits.max_repeat {
                    return Err(Error::new(
                        ErrorKind::Limit,
                        format!(
                            "repeat bound {bound} is above the limit {}",
                            self.limits.max_repeat
                        ),
                    ));
                }
                let x = self.tsym(gi, expr, depth + 1)?;
                // The tail after the `min` copies: `x*` (left-recursive), or up to `max - min`
                // more as a chain `opt_k := "" | x opt_(k-1)`.
                let tail = match max {
                    None => {
                        let t = self.fresh_template("repeat");
                        let me = TemplateSym::Call(t, same.clone());
                        self.b.template_alt(t, TemplateAlt { cond: None, rhs: vec![] });
                        self.b
                            .template_alt(t, TemplateAlt { cond: None, rhs: vec![me, x.clone()] });
                        Some(TemplateSym::Call(t, same.clone()))
                    }
                    Some(n) => {
                        let mut next: Option<TemplateSym> = None;
                        for _ in *min..*n {
                            let t = self.fresh_template("upto");
                            self.b.template_alt(t, TemplateAlt { cond: None, rhs: vec![] });
                            let mut rhs = vec![x.clone()];
                            rhs.extend(next.take());
                            self.b.template_alt(t, TemplateAlt { cond: None, rhs });
                            next = Some(TemplateSym::Call(t, same.clone()));
                        }
                        next
                    }
                };
                let t = self.fresh_template("repeat");
                let mut rhs = vec![x; *min as usize];
                rhs.extend(tail);
                self.b.template_alt(t, TemplateAlt { cond: None, rhs });
                Ok(TemplateSym::Call(t, same))
            }
            _ => Ok(TemplateSym::Sym(self.sym(gi, e, depth + 1)?)),
        }
    }

    pub(super) fn fresh_template(&mut self, hint: &str) -> TemplateIdx {
        self.fresh += 1;
        self.b.template(&format!("{hint}#{}", self.fresh))
    }
}
