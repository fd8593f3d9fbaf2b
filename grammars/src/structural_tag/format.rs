//! A format object read and dispatched on its type: the leaf formats here (`const_string`,
//! `regex`, `grammar`, `any_text`, tokens), the combinators (`sequence`, `or`, repeats), and
//! the others handed to `tags.rs`, `json.rs` and `xml.rs`.

use lexer::RegexSpec;
use serde_json::{Map, Value};

use super::json::{strict_schema, JsonOpts};
use super::tags::{except_tokens, token_dispatch, token_ref, tokens_of};
use super::text::{
    delim_suffixes, free_text, lit, or_special_end, text_then, then_delims, with_tail,
};
use super::xml::Style;
use super::{bool_field, err, format_type, str_list, Builder, Ctx, MAX_DEPTH};
use crate::ir::{Expr, RuleAttrs, SpecialToken};
use crate::{Error, ErrorKind};

/// A dispatch format's `rules`: `[pattern, format]` pairs.
fn rule_pairs<'v>(rules: &'v Value, ty: &str) -> Result<Vec<(&'v Value, &'v Value)>, Error> {
    rules
        .as_array()
        .ok_or_else(|| err(ErrorKind::Value, format!("{ty} format's rules must be an array")))?
        .iter()
        .map(|r| match r.as_array().map(Vec::as_slice) {
            Some([p, f]) => Ok((p, f)),
            _ => Err(err(ErrorKind::Value, format!("a {ty} rule is a [pattern, format] pair"))),
        })
        .collect()
}

/// A dispatch format's `loop` (default true).
fn loop_flag(o: &Map<String, Value>) -> Result<bool, Error> {
    match o.get("loop") {
        None => Ok(true),
        Some(v) => v.as_bool().ok_or_else(|| err(ErrorKind::Value, "loop must be a boolean")),
    }
}

/// XGrammar's `\d` and `\w` (and `\D`, `\W`) are ASCII classes, where Rust's regex
/// syntax has Unicode ones: rewritten as POSIX classes, inside brackets too.
fn ascii_classes(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 16);
    let mut in_class = false;
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('d' | 'D' | 'w' | 'W')) => {
                    let name = if e.eq_ignore_ascii_case(&'d') { "digit" } else { "word" };
                    let neg = if e.is_ascii_uppercase() { "^" } else { "" };
                    if in_class {
                        out.push_str(&format!("[:{neg}{name}:]"));
                    } else {
                        out.push_str(&format!("[[:{neg}{name}:]]"));
                    }
                }
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` right after `[` or `[^` is a literal.
                let rest = chars.as_str();
                let skip = if rest.starts_with("^]") {
                    2
                } else if rest.starts_with(']') {
                    1
                } else {
                    0
                };
                out.push_str(&rest[..skip]);
                chars = rest[skip..].chars();
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

impl Builder {
    /// A format. With `tail`, the expression also matches one of the tail strings at its
    /// end (a tag's end, handed to a last element that is free text so the two are one
    /// lexeme).
    pub(super) fn format(
        &mut self,
        f: &Value,
        ctx: &Ctx,
        tail: Option<&[String]>,
        depth: usize,
    ) -> Result<Expr, Error> {
        if depth > MAX_DEPTH {
            return Err(err(ErrorKind::Limit, format!("formats nested deeper than {MAX_DEPTH}")));
        }
        let o = f.as_object().ok_or_else(|| err(ErrorKind::Value, "a format must be an object"))?;
        let ty = format_type(o)?;
        let field = |k: &str| {
            o.get(k)
                .ok_or_else(|| err(ErrorKind::Value, format!("{ty} format needs a {k:?} field")))
        };
        let sub =
            |b: &mut Builder, f: &Value, tail: Option<&[String]>| b.format(f, ctx, tail, depth + 1);
        Ok(match ty.as_str() {
            "const_string" => {
                let v = field("value")?.as_str().ok_or_else(|| {
                    err(ErrorKind::Value, "const_string format needs a \"value\" string")
                })?;
                with_tail(lit(v), tail)
            }
            "regex" => {
                let p = field("pattern")?.as_str().ok_or_else(|| {
                    err(ErrorKind::Value, "regex format needs a \"pattern\" string")
                })?;
                let rx = format!("(?s:{})", ascii_classes(p));
                regex_syntax::ParserBuilder::new().build().parse(&rx).map_err(|e| {
                    err(ErrorKind::Value, format!("regex format: bad pattern {p:?}: {e}"))
                })?;
                let x =
                    self.rule("regex", Expr::Lexeme(RegexSpec::Regex(rx)), RuleAttrs::default());
                with_tail(x, tail)
            }
            "grammar" => {
                let text = field("grammar")?.as_str().ok_or_else(|| {
                    err(ErrorKind::Value, "grammar format needs a \"grammar\" string")
                })?;
                let set = crate::gbnf::parse(text)
                    .map_err(|e| err(e.kind(), format!("grammar format: {e}")))?;
                if set.grammars.len() != 1 {
                    return Err(err(
                        ErrorKind::Unsupported,
                        "grammar format: one grammar expected",
                    ));
                }
                let g = set.grammars.into_iter().next().expect("one grammar");
                with_tail(self.sub_grammar("ebnf", g), tail)
            }
            "json_schema" | "qwen_xml_parameter" => {
                let schema = field("json_schema")?;
                if !schema.is_object() && !schema.is_boolean() {
                    return Err(err(
                        ErrorKind::Value,
                        "json_schema format needs a \"json_schema\" object or boolean",
                    ));
                }
                let style = match (ty.as_str(), o.get("style")) {
                    ("qwen_xml_parameter", _) => Some(Style::Qwen),
                    (_, None) => None,
                    (_, Some(Value::String(s))) => Style::parse(s)?,
                    _ => return Err(err(ErrorKind::Value, "json_schema style must be a string")),
                };
                let opts = JsonOpts::parse(o)?;
                match style {
                    // The trailing whitespace and the tail are one lexeme (a tail may start
                    // with whitespace itself, as Qwen3-Coder's "\n</function>").
                    Some(style) => self.xml(&strict_schema(schema), style, &opts, tail)?,
                    None => {
                        let e = self.json(schema, &opts)?;
                        with_tail(e, tail)
                    }
                }
            }
            "any_text" => {
                let mut bad = str_list(o.get("excludes"), "any_text excludes")?;
                bad.extend(ctx.ends.iter().cloned());
                let max_chars = match o.get("max_chars") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(v.as_u64().filter(|&n| n <= i32::MAX as u64).ok_or_else(|| {
                        err(ErrorKind::Value, "max_chars in any_text must be a non-negative 32-bit integer or null")
                    })? as u32),
                };
                // XGrammar 0.2.8's `max_tokens`: the text in at most that many tokens, a rule
                // with a token budget (the text lexeme ends at the token boundary where the
                // budget runs out). Before a tag's end the text and the end are one lexeme
                // (so that the end ends the text): once its tokens are used, that lexeme goes
                // on only with the rest of the end (`RuleAttrs::finish`), and the free text
                // before a special-token end ends there. The end's tokens are not counted.
                let max_tokens = match o.get("max_tokens") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(v.as_u64().filter(|&n| n <= i32::MAX as u64).ok_or_else(|| {
                        err(ErrorKind::Value, "max_tokens in any_text must be a non-negative 32-bit integer or null")
                    })? as usize),
                };
                match (tail, max_tokens) {
                    (Some(t), Some(0)) => then_delims(&bad, t, &[], Some(0)),
                    (Some(t), Some(n)) => {
                        let budget = |finish| RuleAttrs {
                            max_tokens: Some(n),
                            finish,
                            ..RuleAttrs::default()
                        };
                        let text = Expr::Lexeme(text_then(&bad, t, &[], max_chars));
                        let text = self.rule("any_text", text, budget(Some(delim_suffixes(t))));
                        let free = Expr::Lexeme(free_text(&bad, max_chars));
                        let free = self.rule("any_text", free, budget(None));
                        or_special_end(text, free, t)
                    }
                    (Some(t), None) => then_delims(&bad, t, &[], max_chars),
                    (None, Some(n)) => self.rule(
                        "any_text",
                        Expr::Lexeme(free_text(&bad, max_chars)),
                        RuleAttrs { max_tokens: Some(n), ..RuleAttrs::default() },
                    ),
                    (None, None) => Expr::Lexeme(free_text(&bad, max_chars)),
                }
            }
            "token" => {
                let t = token_ref(field("token")?)?;
                with_tail(Expr::Special(t), tail)
            }
            "exclude_token" | "any_tokens" => {
                let mut ex =
                    o.get("exclude_tokens").map(tokens_of).transpose()?.unwrap_or_default();
                ex.extend(ctx.end_tokens.iter().cloned());
                // The tag's text ends as one token, special or regular: a token-level format
                // must leave them to the end (a token terminal takes any token it expects,
                // so the end would otherwise be read as content).
                for e in &ctx.ends {
                    ex.push(SpecialToken::NameIfAny(e.clone()));
                    ex.push(SpecialToken::Spelled(e.clone()));
                }
                let one = Expr::Special(except_tokens(ex));
                let e = if ty == "any_tokens" {
                    // XGrammar 0.2.8's `max_tokens`: at most that many tokens.
                    let max = match o.get("max_tokens") {
                        None | Some(Value::Null) => None,
                        Some(v) => Some(v.as_u64().filter(|&n| n <= i32::MAX as u64).ok_or_else(|| {
                            err(ErrorKind::Value, "max_tokens in any_tokens must be a non-negative 32-bit integer or null")
                        })? as u32),
                    };
                    Expr::Repeat { expr: Box::new(one), min: 0, max }
                } else {
                    one
                };
                with_tail(e, tail)
            }
            "sequence" | "or" => {
                let els =
                    field("elements")?.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
                        err(ErrorKind::Value, format!("{ty} format must have at least one element"))
                    })?;
                if ty == "sequence" {
                    let mut out = Vec::new();
                    for (i, e) in els.iter().enumerate() {
                        let t = if i + 1 == els.len() { tail } else { None };
                        out.push(sub(self, e, t)?);
                    }
                    Expr::Seq(out)
                } else {
                    Expr::Alt(els.iter().map(|e| sub(self, e, tail)).collect::<Result<_, _>>()?)
                }
            }
            "optional" | "plus" | "star" | "repeat" => {
                let c = field("content")?;
                let (min, max) = match ty.as_str() {
                    "optional" => (0, Some(1)),
                    "plus" => (1, None),
                    "star" => (0, None),
                    _ => {
                        let min = o.get("min").and_then(Value::as_i64).ok_or_else(|| {
                            err(ErrorKind::Value, "repeat format must have a min field (number)")
                        })?;
                        let max = o.get("max").and_then(Value::as_i64).ok_or_else(|| {
                            err(ErrorKind::Value, "repeat format must have a max field (number)")
                        })?;
                        if min < 0 {
                            return Err(err(ErrorKind::Value, "repeat min must be >= 0"));
                        }
                        let max = if max < 0 { None } else { Some(max as u32) };
                        if max.is_some_and(|m| (m as i64) < min) {
                            return Err(err(ErrorKind::Value, "repeat min must be <= max"));
                        }
                        (min as u32, max)
                    }
                };
                let x = sub(self, c, None)?;
                with_tail(Expr::Repeat { expr: Box::new(x), min, max }, tail)
            }
            "tag" => with_tail(self.tag(o, depth)?, tail),
            "triggered_tags" => self.triggered_tags(o, ctx, tail, depth)?,
            "tags_with_separator" => {
                let tags = self.tag_list(o.get("tags"), depth, "tags_with_separator")?;
                let sep = field("separator")?.as_str().ok_or_else(|| {
                    err(
                        ErrorKind::Value,
                        "tags_with_separator format's separator field must be a string",
                    )
                })?;
                let one = Expr::Alt(tags);
                let e = match (bool_field(o, "at_least_one")?, bool_field(o, "stop_after_first")?) {
                    (true, true) => one,
                    (false, true) => Expr::Repeat { expr: Box::new(one), min: 0, max: Some(1) },
                    (alo, false) => {
                        let x = self.rule("tag", one, RuleAttrs::default());
                        let more = Expr::Repeat {
                            expr: Box::new(Expr::Seq(vec![lit(sep), x.clone()])),
                            min: 0,
                            max: None,
                        };
                        let list = Expr::Seq(vec![x, more]);
                        if alo {
                            list
                        } else {
                            Expr::Repeat { expr: Box::new(list), min: 0, max: Some(1) }
                        }
                    }
                };
                with_tail(e, tail)
            }
            "dispatch" => {
                let mut groups = Vec::new();
                for (pat, f) in rule_pairs(field("rules")?, &ty)? {
                    let pat = pat.as_str().filter(|p| !p.is_empty()).ok_or_else(|| {
                        err(ErrorKind::Value, "a dispatch pattern must be a non-empty string")
                    })?;
                    groups.push((pat.to_string(), vec![sub(self, f, None)?]));
                }
                let excl = str_list(o.get("excludes"), "dispatch excludes")?;
                // dispatch gets no end detection from an enclosing tag.
                self.dispatch_text(groups, &excl, loop_flag(o)?, tail)?
            }
            "token_triggered_tags" => with_tail(self.token_triggered_tags(o, ctx, depth)?, tail),
            "token_dispatch" => {
                let mut groups = Vec::new();
                for (tok, f) in rule_pairs(field("rules")?, &ty)? {
                    groups.push((token_ref(tok)?, vec![sub(self, f, None)?]));
                }
                let mut excl =
                    o.get("exclude_tokens").map(tokens_of).transpose()?.unwrap_or_default();
                excl.extend(ctx.end_tokens.iter().cloned());
                with_tail(token_dispatch(groups, excl, loop_flag(o)?), tail)
            }
            other => {
                return Err(err(ErrorKind::Value, format!("format type not recognized: {other}")))
            }
        })
    }
}
