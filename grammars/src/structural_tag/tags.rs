//! Tags (`begin content end`) and the formats made of them: lists of tags with a
//! separator, triggered tags (free text, a trigger starting a tag), dispatch on text or on
//! tokens.

use serde_json::{Map, Value};

use super::text::{alt_lits, free_text, lit, then_delims};
use super::{bool_field, err, format_type, str_list, Builder, Ctx};
use crate::ir::{Expr, RuleAttrs, SpecialToken};
use crate::{Error, ErrorKind};

impl Builder {
    /// `begin content end`; free text at the end of the content is one lexeme with the end.
    pub(super) fn tag(&mut self, o: &Map<String, Value>, depth: usize) -> Result<Expr, Error> {
        let begin = match o.get("begin") {
            Some(Value::String(s)) => lit(s),
            Some(t @ Value::Object(_)) => Expr::Special(token_ref(
                t.get("token")
                    .ok_or_else(|| err(ErrorKind::Value, "a token begin needs \"token\""))?,
            )?),
            _ => return Err(err(ErrorKind::Value, "tag format's begin field must be a string")),
        };
        let content = o
            .get("content")
            .ok_or_else(|| err(ErrorKind::Value, "tag format must have a content field"))?;
        let ends: Vec<String> = match o.get("end") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => {
                if a.is_empty() {
                    return Err(err(ErrorKind::Value, "tag format's end array cannot be empty"));
                }
                a.iter()
                    .map(|x| {
                        x.as_str().map(String::from).ok_or_else(|| {
                            err(ErrorKind::Value, "tag format's end must be strings")
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
            Some(t @ Value::Object(_)) => {
                // A token end: no end detection on text (as XGrammar across levels).
                let tok = token_ref(
                    t.get("token")
                        .ok_or_else(|| err(ErrorKind::Value, "a token end needs \"token\""))?,
                )?;
                let ctx = Ctx { ends: vec![], end_tokens: vec![tok.clone()] };
                let c = self.format(content, &ctx, None, depth + 1)?;
                return Ok(Expr::Seq(vec![begin, c, Expr::Special(tok)]));
            }
            _ => return Err(err(ErrorKind::Value, "tag format must have an end field")),
        };
        let nonempty: Vec<String> = ends.iter().filter(|e| !e.is_empty()).cloned().collect();
        if unlimited(content) && nonempty.is_empty() {
            return Err(err(
                ErrorKind::Value,
                "when the content is unlimited, at least one end string must be non-empty",
            ));
        }
        let ctx = Ctx { ends: nonempty.clone(), end_tokens: vec![] };
        let body = if ends.iter().any(|e| e.is_empty()) {
            // An optional end: the content with one of the other ends, or with none.
            let open = self.format(content, &ctx, None, depth + 1)?;
            if nonempty.is_empty() {
                open
            } else {
                let closed = self.format(content, &ctx, Some(&nonempty), depth + 1)?;
                Expr::Alt(vec![closed, open])
            }
        } else {
            self.format(content, &ctx, Some(&ends), depth + 1)?
        };
        Ok(Expr::Seq(vec![begin, body]))
    }

    pub(super) fn tag_list(
        &mut self,
        v: Option<&Value>,
        depth: usize,
        what: &str,
    ) -> Result<Vec<Expr>, Error> {
        let a = v.and_then(Value::as_array).filter(|a| !a.is_empty()).ok_or_else(|| {
            err(ErrorKind::Value, format!("{what} format's tags must be non-empty"))
        })?;
        a.iter()
            .map(|t| {
                let o = tag_object(t)?;
                self.tag(o, depth + 1)
            })
            .collect()
    }

    pub(super) fn triggered_tags(
        &mut self,
        o: &Map<String, Value>,
        ctx: &Ctx,
        tail: Option<&[String]>,
        depth: usize,
    ) -> Result<Expr, Error> {
        let triggers = str_list(o.get("triggers"), "triggered tags format's triggers")?;
        if triggers.is_empty() {
            return Err(err(
                ErrorKind::Value,
                "triggered tags format's triggers must be non-empty",
            ));
        }
        if triggers.iter().any(|t| t.is_empty()) {
            return Err(err(
                ErrorKind::Value,
                "triggered tags format's triggers must be non-empty strings",
            ));
        }
        let tags =
            o.get("tags").and_then(Value::as_array).filter(|a| !a.is_empty()).ok_or_else(|| {
                err(ErrorKind::Value, "triggered tags format's tags must be non-empty")
            })?;
        let mut excl = str_list(o.get("excludes"), "triggered tags excludes")?;
        if excl.iter().any(|e| e.is_empty()) {
            return Err(err(
                ErrorKind::Value,
                "triggered tags format's excluded_strs must be non-empty strings",
            ));
        }
        excl.extend(ctx.ends.iter().cloned());
        // Each tag under the one trigger its begin starts with: (trigger, rest of the tag).
        let mut groups: Vec<(String, Vec<Expr>)> =
            triggers.iter().map(|t| (t.clone(), vec![])).collect();
        let mut full = Vec::new();
        for t in tags {
            let to = tag_object(t)?;
            let begin = to
                .get("begin")
                .and_then(Value::as_str)
                .ok_or_else(|| err(ErrorKind::Value, "triggered tags need string begins"))?;
            let hits: Vec<usize> =
                (0..triggers.len()).filter(|&i| begin.starts_with(&triggers[i])).collect();
            let i = match hits.as_slice() {
                [i] => *i,
                [] => {
                    return Err(err(
                        ErrorKind::Value,
                        format!(
                        "one tag ({begin:?}) does not match any trigger in a triggered tags format"
                    ),
                    ))
                }
                _ => {
                    return Err(err(
                        ErrorKind::Value,
                        format!(
                        "one tag ({begin:?}) matches multiple triggers in a triggered tags format"
                    ),
                    ))
                }
            };
            let mut rest = to.clone();
            rest.insert("begin".into(), Value::String(begin[triggers[i].len()..].to_string()));
            groups[i].1.push(self.tag(&rest, depth + 1)?);
            full.push(self.tag(to, depth + 1)?);
        }
        if let Some((t, _)) = groups.iter().find(|(_, g)| g.is_empty()) {
            return Err(err(ErrorKind::Value, format!("trigger {t:?} is used by no tag")));
        }
        let at_least_one = bool_field(o, "at_least_one")?;
        let stop_after_first = bool_field(o, "stop_after_first")?;
        let groups: Vec<(String, Vec<Expr>)> = groups;
        Ok(match (at_least_one, stop_after_first) {
            (true, true) => {
                let one = Expr::Alt(full);
                match tail {
                    Some(t) => Expr::Seq(vec![one, alt_lits(t)]),
                    None => one,
                }
            }
            (true, false) => {
                let first = self.rule("first_tag", Expr::Alt(full), RuleAttrs::default());
                let rest = self.dispatch_text(groups, &excl, true, tail)?;
                Expr::Seq(vec![first, rest])
            }
            (false, lp) => self.dispatch_text(groups, &excl, !lp, tail)?,
        })
    }

    /// `token_triggered_tags`: any tokens but the triggers (and excludes) between tags, a
    /// trigger token starting the tag whose begin it is.
    pub(super) fn token_triggered_tags(
        &mut self,
        o: &Map<String, Value>,
        ctx: &Ctx,
        depth: usize,
    ) -> Result<Expr, Error> {
        let triggers = o
            .get("trigger_tokens")
            .map(tokens_of)
            .transpose()?
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                err(
                    ErrorKind::Value,
                    "token triggered tags format's trigger_tokens must be non-empty",
                )
            })?;
        let tags =
            o.get("tags").and_then(Value::as_array).filter(|a| !a.is_empty()).ok_or_else(|| {
                err(ErrorKind::Value, "token triggered tags format's tags must be non-empty")
            })?;
        let mut excl = o.get("exclude_tokens").map(tokens_of).transpose()?.unwrap_or_default();
        excl.extend(ctx.end_tokens.iter().cloned());
        let mut groups: Vec<(SpecialToken, Vec<Expr>)> =
            triggers.iter().map(|t| (t.clone(), vec![])).collect();
        let mut full = Vec::new();
        for t in tags {
            let to = tag_object(t)?;
            let begin = to
                .get("begin")
                .and_then(|b| b.get("token"))
                .map(token_ref)
                .transpose()?
                .ok_or_else(|| err(ErrorKind::Value, "token triggered tags need token begins"))?;
            let i = groups.iter().position(|(t, _)| *t == begin).ok_or_else(|| {
                err(
                    ErrorKind::Value,
                    "one tag does not match any trigger token in a token triggered tags format",
                )
            })?;
            let mut rest = to.clone();
            rest.insert("begin".into(), Value::String(String::new()));
            groups[i].1.push(self.tag(&rest, depth + 1)?);
            full.push(self.tag(to, depth + 1)?);
        }
        let at_least_one = bool_field(o, "at_least_one")?;
        let stop_after_first = bool_field(o, "stop_after_first")?;
        let mut free_ex = triggers.clone();
        free_ex.extend(excl.iter().cloned());
        let groups: Vec<(SpecialToken, Vec<Expr>)> = groups;
        Ok(match (at_least_one, stop_after_first) {
            (true, true) => Expr::Alt(full),
            (true, false) => {
                let first = self.rule("first_tag", Expr::Alt(full), RuleAttrs::default());
                Expr::Seq(vec![first, token_dispatch_with(groups, free_ex, true)])
            }
            (false, lp) => token_dispatch_with(groups, free_ex, !lp),
        })
    }

    /// Free text with dispatch: text up to a trigger, then that trigger's group; with
    /// `lp`, free text resumes after a group (repeatedly), else the format ends after it.
    /// The text that ends the region (no trigger) may be empty; with `tail` it is one
    /// lexeme with the tail strings.
    pub(super) fn dispatch_text(
        &mut self,
        groups: Vec<(String, Vec<Expr>)>,
        excl: &[String],
        lp: bool,
        tail: Option<&[String]>,
    ) -> Result<Expr, Error> {
        let triggers: Vec<String> = groups.iter().map(|(t, _)| t.clone()).collect();
        let mut bad = excl.to_vec();
        bad.extend(triggers.iter().cloned());
        let mut alts = Vec::new();
        for (t, g) in groups {
            let lead = then_delims(&bad, std::slice::from_ref(&t), excl, None);
            alts.push(Expr::Seq(vec![lead, Expr::Alt(g)]));
        }
        let step = self.rule("dispatch", Expr::Alt(alts), RuleAttrs::default());
        let last = match tail {
            Some(t) => then_delims(&bad, t, &[], None),
            None => Expr::Lexeme(free_text(&bad, None)),
        };
        Ok(if lp {
            Expr::Seq(vec![Expr::Repeat { expr: Box::new(step), min: 0, max: None }, last])
        } else {
            // At most one dispatch, and nothing after it (but the tail).
            let after = match tail {
                Some(t) => alt_lits(t),
                None => Expr::Empty,
            };
            Expr::Alt(vec![last, Expr::Seq(vec![step, after])])
        })
    }
}

/// `token_dispatch`: any tokens but the patterns (and excludes); a pattern token is
/// followed by its format.
pub(super) fn token_dispatch(
    groups: Vec<(SpecialToken, Vec<Expr>)>,
    excl: Vec<SpecialToken>,
    lp: bool,
) -> Expr {
    let mut free_ex: Vec<SpecialToken> = groups.iter().map(|(t, _)| t.clone()).collect();
    free_ex.extend(excl);
    token_dispatch_with(groups, free_ex, lp)
}

/// Tokens other than `free_ex` freely; a group's token starts its alternatives; with `lp`
/// repeatedly, else at most once and nothing after it.
pub(super) fn token_dispatch_with(
    groups: Vec<(SpecialToken, Vec<Expr>)>,
    free_ex: Vec<SpecialToken>,
    lp: bool,
) -> Expr {
    let free =
        Expr::Repeat { expr: Box::new(Expr::Special(except_tokens(free_ex))), min: 0, max: None };
    let step = Expr::Alt(
        groups
            .into_iter()
            .map(|(t, g)| Expr::Seq(vec![free.clone(), Expr::Special(t), Expr::Alt(g)]))
            .collect(),
    );
    if lp {
        Expr::Seq(vec![Expr::Repeat { expr: Box::new(step), min: 0, max: None }, free])
    } else {
        Expr::Alt(vec![free, step])
    }
}

/// Whether a format's content is unlimited text (XGrammar's check for tags with only empty
/// ends): `any_text` or `triggered_tags` anywhere inside, not under a nested tag.
pub(super) fn unlimited(f: &Value) -> bool {
    let mut stack = vec![f];
    while let Some(f) = stack.pop() {
        let Some(o) = f.as_object() else { continue };
        match format_type(o).as_deref() {
            Ok("any_text") | Ok("triggered_tags") => return true,
            Ok("sequence") | Ok("or") => {
                if let Some(a) = o.get("elements").and_then(Value::as_array) {
                    stack.extend(a);
                }
            }
            Ok("optional") | Ok("plus") | Ok("star") | Ok("repeat") => {
                stack.extend(o.get("content"));
            }
            _ => {}
        }
    }
    false
}

pub(super) fn tag_object(t: &Value) -> Result<&Map<String, Value>, Error> {
    let o = t.as_object().ok_or_else(|| err(ErrorKind::Value, "a tag must be an object"))?;
    match o.get("type") {
        None => Ok(o),
        Some(Value::String(s)) if s == "tag" => Ok(o),
        Some(_) => Err(err(ErrorKind::Value, "tag format's type must be a string \"tag\"")),
    }
}

pub(super) fn token_ref(v: &Value) -> Result<SpecialToken, Error> {
    match v {
        Value::Number(n) => {
            let id =
                n.as_u64().filter(|&x| x <= u32::MAX as u64).ok_or_else(|| {
                    err(ErrorKind::Value, "a token id must be a non-negative integer")
                })? as u32;
            Ok(SpecialToken::Ids(vec![(id, id)]))
        }
        Value::String(s) => Ok(SpecialToken::Name(s.clone())),
        _ => Err(err(ErrorKind::Value, "a token is an id or a token string")),
    }
}

pub(super) fn tokens_of(v: &Value) -> Result<Vec<SpecialToken>, Error> {
    v.as_array()
        .ok_or_else(|| err(ErrorKind::Value, "exclude_tokens must be an array"))?
        .iter()
        .map(token_ref)
        .collect()
}

/// One token other than these (and EOS).
pub(super) fn except_tokens(ex: Vec<SpecialToken>) -> SpecialToken {
    if ex.is_empty() {
        SpecialToken::Any
    } else {
        SpecialToken::AnyTokenExceptAll(ex)
    }
}
