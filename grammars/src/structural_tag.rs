//! XGrammar's structural tags → [`GrammarSet`]: the JSON format vLLM and SGLang use for tool
//! calling (`{"type": "structural_tag", "format": {...}}`), and the legacy form
//! (`structures` of begin / schema / end plus `triggers`). Semantics follow XGrammar 0.2.8.
//!
//! # Formats
//!
//! `const_string`, `regex` (whole match, `.` matches newlines), `grammar` (XGrammar's EBNF,
//! a GBNF dialect with root rule `root`, through the GBNF front end), `json_schema`
//! (styles `json`, `qwen_xml`, `minimax_xml`, `glm_xml`, `deepseek_xml`,
//! `deepseek_v4_1_xml`, `kimi_k3_xml`, `cohere_xml`, `minimax_m3_xml`; `any_order`, `excludes`,
//! `max_whitespace_cnt`),
//! `any_text` (`excludes`, `max_chars`), `token`, `exclude_token`, `any_tokens`, `sequence`,
//! `or`, `optional`, `plus`, `star`, `repeat`, `tag`, `triggered_tags`, `tags_with_separator`,
//! `dispatch`, `token_triggered_tags`, `token_dispatch` (tokens by id, or by name for special
//! tokens), and untyped format objects whose type follows from their fields, as XGrammar
//! infers it. What we do not support is an error naming it (never a looser grammar).
//!
//! # Free text
//!
//! Free text (`any_text`, the text between `triggered_tags`, `dispatch`) may stop anywhere,
//! never contains an exclude, and never completes a trigger unless the matching tag follows.
//! Inside a `tag`, free text also excludes the nearest tag's end strings (XGrammar's end
//! detection), and free text that ends the content is one lexeme with the end string: the
//! first occurrence of an end closes the tag. Each free-text run with what must follow it
//! (a trigger, an end string) is one lexeme, so the lexer's longest match never swallows
//! the delimiter. Where free text is followed by something else that it could also contain
//! (e.g. `sequence[any_text, const_string "Z"]` outside a tag), XGrammar splits the text
//! wherever a parse exists; here the free text is one lexeme and ends at the longest match.
//!
//! # JSON
//!
//! `json_schema` content is a JSON Schema sub-grammar with its own whitespace (flexible
//! inside, none before or after the value), and XGrammar's strict mode: an object schema
//! with `properties` and no `additionalProperties` allows no other keys.

use lexer::RegexSpec;
use serde_json::{Map, Value};

use crate::ir::{Expr, Grammar, GrammarOptions, GrammarSet, Rule, RuleAttrs, SpecialToken};
use crate::{Error, ErrorKind};

mod xml;
mod xml_nested;

/// Nesting limit of formats.
pub const MAX_DEPTH: usize = 100;

/// Any Unicode scalar, newlines included.
const ANY: &str = "(?s:.)";

/// Parses a structural tag (either form) into a grammar set.
pub fn parse(src: &str) -> Result<GrammarSet, Error> {
    let v: Value = serde_json::from_str(src).map_err(|e| {
        err(ErrorKind::Syntax, format!("the structural tag is not valid JSON: {e}"))
    })?;
    from_value(&v)
}

/// [`parse`] on a parsed JSON value.
pub fn from_value(v: &Value) -> Result<GrammarSet, Error> {
    let obj =
        v.as_object().ok_or_else(|| err(ErrorKind::Value, "a structural tag is an object"))?;
    match obj.get("type") {
        None => {}
        Some(Value::String(t)) if t == "structural_tag" => {}
        Some(_) => {
            return Err(err(ErrorKind::Value, "structural tag's type must be \"structural_tag\""))
        }
    }
    let format = match (obj.get("format"), obj.get("structures")) {
        (Some(f), _) => f.clone(),
        (None, Some(structures)) => legacy(structures, obj.get("triggers"))?,
        (None, None) => {
            return Err(err(ErrorKind::Value, "a structural tag needs a \"format\" field"))
        }
    };
    let mut b = Builder { rules: Vec::new(), subs: Vec::new(), fresh: 0 };
    let body = b.format(&format, &Ctx::default(), None, 0)?;
    b.rules.push(Rule { name: "start".into(), body, attrs: RuleAttrs::default(), param: false });
    let top = Grammar {
        name: None,
        start: "start".into(),
        rules: b.rules,
        terminals: vec![],
        ignore: vec![],
        options: GrammarOptions::default(),
    };
    let mut grammars = vec![top];
    grammars.extend(b.subs);
    Ok(GrammarSet { grammars })
}

/// The legacy form: each structure is a tag with JSON content, under `triggered_tags`.
fn legacy(structures: &Value, triggers: Option<&Value>) -> Result<Value, Error> {
    let list = structures
        .as_array()
        .ok_or_else(|| err(ErrorKind::Value, "\"structures\" must be an array"))?;
    let mut tags = Vec::new();
    for s in list {
        let get = |k: &str| {
            s.get(k).ok_or_else(|| err(ErrorKind::Value, format!("a structure needs {k:?}")))
        };
        let schema = match get("schema")? {
            Value::String(t) => serde_json::from_str(t).map_err(|e| {
                err(ErrorKind::Value, format!("a structure's schema string is not JSON: {e}"))
            })?,
            v => v.clone(),
        };
        tags.push(serde_json::json!({"type": "tag", "begin": get("begin")?, "end": get("end")?,
            "content": {"type": "json_schema", "json_schema": schema}}));
    }
    let triggers = triggers.cloned().unwrap_or(Value::Array(vec![]));
    Ok(serde_json::json!({"type": "triggered_tags", "triggers": triggers, "tags": tags}))
}

fn err(kind: ErrorKind, msg: impl Into<String>) -> Error {
    Error::new(kind, msg.into())
}

/// What the enclosing context asks of free text: strings it must not contain (the nearest
/// tag's ends, from XGrammar's end detection).
#[derive(Clone, Debug, Default)]
struct Ctx {
    ends: Vec<String>,
    /// The nearest tag's end when it is a token: token-level free formats exclude it.
    end_tokens: Vec<SpecialToken>,
}

struct Builder {
    rules: Vec<Rule>,
    subs: Vec<Grammar>,
    fresh: usize,
}

/// A string of the structural tag: text, where a special token's name may also be that
/// token (the model writes `<|python_tag|>` as one special token).
fn lit(s: &str) -> Expr {
    if s.is_empty() {
        Expr::Empty
    } else {
        Expr::Text(s.to_string())
    }
}

/// One of the strings, each special-token aware (see [`lit`]).
fn alt_lits(v: &[String]) -> Expr {
    Expr::Alt(v.iter().map(|s| lit(s)).collect())
}

fn or_lits(v: &[String]) -> RegexSpec {
    RegexSpec::Or(v.iter().map(|s| RegexSpec::Literal(s.clone())).collect())
}

/// Σ* x Σ*: strings containing one of `v`.
fn containing(v: &[String]) -> RegexSpec {
    RegexSpec::Concat(vec![any_star(), or_lits(v), any_star()])
}

fn any_star() -> RegexSpec {
    RegexSpec::Regex(format!("{ANY}*"))
}

/// Free text: no string of `bad` inside, at most `max_chars` characters.
fn free_text(bad: &[String], max_chars: Option<u32>) -> RegexSpec {
    let mut parts = vec![match max_chars {
        Some(n) => RegexSpec::Regex(format!("{ANY}{{0,{n}}}")),
        None => any_star(),
    }];
    let bad: Vec<String> = bad.iter().filter(|s| !s.is_empty()).cloned().collect();
    if !bad.is_empty() {
        parts.push(RegexSpec::Not(Box::new(containing(&bad))));
    }
    if parts.len() == 1 {
        parts.pop().expect("one")
    } else {
        RegexSpec::And(parts)
    }
}

/// Free text followed by one of `delims`, up to the first delimiter: `w = s·d` where `s`
/// has no string of `bad` and `w` has no delimiter ending before its end (and, as XGrammar
/// scans excludes over the delimiter's characters too, no string of `excl` at all).
fn text_then(
    bad: &[String],
    delims: &[String],
    excl: &[String],
    max_chars: Option<u32>,
) -> RegexSpec {
    let mut parts = vec![
        RegexSpec::Concat(vec![free_text(bad, max_chars), or_lits(delims)]),
        RegexSpec::Not(Box::new(RegexSpec::Concat(vec![
            any_star(),
            or_lits(delims),
            RegexSpec::Regex(format!("{ANY}+")),
        ]))),
    ];
    let excl: Vec<String> = excl.iter().filter(|s| !s.is_empty()).cloned().collect();
    if !excl.is_empty() {
        parts.push(RegexSpec::Not(Box::new(containing(&excl))));
    }
    RegexSpec::And(parts)
}

/// Free text then a delimiter: [`text_then`] as one lexeme; for a delimiter that may be a
/// special token of the tokenizer (`<|end|>`, `[TOOL_CALLS]`: no spaces, bracketed), also
/// the free text followed by that token.
fn then_delims(bad: &[String], delims: &[String], excl: &[String], max_chars: Option<u32>) -> Expr {
    let text = Expr::Lexeme(text_then(bad, delims, excl, max_chars));
    let specials: Vec<&String> = delims
        .iter()
        .filter(|d| {
            d.len() >= 3
                && !d.contains(char::is_whitespace)
                && ((d.starts_with('<') && d.ends_with('>'))
                    || (d.starts_with('[') && d.ends_with(']')))
        })
        .collect();
    if specials.is_empty() {
        return text;
    }
    let free = Expr::Repeat {
        expr: Box::new(Expr::Lexeme(free_text(bad, max_chars))),
        min: 0,
        max: Some(1),
    };
    let toks =
        specials.into_iter().map(|d| Expr::Special(SpecialToken::NameIfAny(d.clone()))).collect();
    Expr::Alt(vec![text, Expr::Seq(vec![free, Expr::Alt(toks)])])
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

/// `e` then one of the tail strings (a tag's end), if any.
fn with_tail(e: Expr, tail: Option<&[String]>) -> Expr {
    match tail {
        None => e,
        Some(t) => Expr::Seq(vec![e, alt_lits(t)]),
    }
}

/// The options of a `json_schema` format.
#[derive(Clone, Debug, Default)]
struct JsonOpts {
    any_order: bool,
    /// Substrings string values and keys may not contain.
    excludes: Vec<String>,
    /// `max_whitespace_cnt`: the longest whitespace run (`None`: unbounded).
    max_ws: Option<u32>,
}

impl JsonOpts {
    fn parse(o: &Map<String, Value>) -> Result<JsonOpts, Error> {
        let max_ws = match o.get("max_whitespace_cnt") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().filter(|&n| n <= u32::MAX as u64).ok_or_else(|| {
                err(ErrorKind::Value, "max_whitespace_cnt must be a non-negative integer or null")
            })? as u32),
        };
        let excludes = str_list(o.get("excludes"), "json_schema excludes")?;
        if excludes.iter().any(String::is_empty) {
            return Err(err(ErrorKind::Value, "json_schema excludes must be non-empty strings"));
        }
        Ok(JsonOpts { any_order: bool_field(o, "any_order")?, excludes, max_ws })
    }

    /// A whitespace run of at least `min` characters (at most `max_ws`).
    fn ws_regex(&self, min: u32) -> String {
        match self.max_ws {
            None if min == 0 => "[ \n\r\t]*".into(),
            None => format!("[ \n\r\t]{{{min},}}"),
            Some(n) => format!("[ \n\r\t]{{{min},{}}}", n.max(min)),
        }
    }
}

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

fn str_list(v: Option<&Value>, what: &str) -> Result<Vec<String>, Error> {
    match v {
        None | Some(Value::Null) => Ok(vec![]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(String::from)
                    .ok_or_else(|| err(ErrorKind::Value, format!("{what} must be strings")))
            })
            .collect(),
        Some(_) => Err(err(ErrorKind::Value, format!("{what} must be an array of strings"))),
    }
}

fn bool_field(o: &Map<String, Value>, k: &str) -> Result<bool, Error> {
    match o.get(k) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(err(ErrorKind::Value, format!("{k} must be a boolean"))),
    }
}

/// The type of a format object, given or inferred from its fields (as XGrammar 0.2.8).
fn format_type(o: &Map<String, Value>) -> Result<String, Error> {
    if let Some(t) = o.get("type") {
        return t
            .as_str()
            .map(String::from)
            .ok_or_else(|| err(ErrorKind::Value, "a format's type must be a string"));
    }
    let has = |k: &str| o.contains_key(k);
    let t = if has("begin") && has("content") && has("end") {
        "tag"
    } else if has("value") {
        "const_string"
    } else if has("json_schema") {
        "json_schema"
    } else if has("elements") {
        "sequence"
    } else if has("triggers") && has("tags") {
        "triggered_tags"
    } else if has("tags") && has("separator") {
        "tags_with_separator"
    } else if has("excludes") {
        "any_text"
    } else if has("content") {
        "optional"
    } else if has("rules") {
        "dispatch"
    } else {
        return Err(err(ErrorKind::Value, format!("invalid format: {}", Value::Object(o.clone()))));
    };
    Ok(t.to_string())
}

impl Builder {
    fn rule(&mut self, hint: &str, body: Expr, attrs: RuleAttrs) -> Expr {
        self.fresh += 1;
        let name = format!("{hint}_{}", self.fresh);
        self.rules.push(Rule { name: name.clone(), body, attrs, param: false });
        Expr::Rule(name)
    }

    fn sub_grammar(&mut self, hint: &str, mut g: Grammar) -> Expr {
        self.fresh += 1;
        let name = format!("__st_{hint}_{}", self.fresh);
        g.name = Some(name.clone());
        self.subs.push(g);
        Expr::Grammar(name)
    }

    /// A format. With `tail`, the expression also matches one of the tail strings at its
    /// end (a tag's end, handed to a last element that is free text so the two are one
    /// lexeme).
    fn format(
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
                    ("qwen_xml_parameter", _) => Some(xml::Style::Qwen),
                    (_, None) => None,
                    (_, Some(Value::String(s))) => xml::Style::parse(s)?,
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
                match tail {
                    Some(t) => then_delims(&bad, t, &[], max_chars),
                    None => Expr::Lexeme(free_text(&bad, max_chars)),
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
                let one = Expr::Special(except_tokens(ex));
                let e = if ty == "any_tokens" {
                    Expr::Repeat { expr: Box::new(one), min: 0, max: None }
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

    /// `begin content end`; free text at the end of the content is one lexeme with the end.
    fn tag(&mut self, o: &Map<String, Value>, depth: usize) -> Result<Expr, Error> {
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

    fn tag_list(
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

    fn triggered_tags(
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
    fn token_triggered_tags(
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
    fn dispatch_text(
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

    /// A `json_schema` format's content in the `json` style.
    fn json(&mut self, schema: &Value, o: &JsonOpts) -> Result<Expr, Error> {
        let strict = strict_schema(schema);
        let mut opts = crate::json_schema::JsonCompileOptions::from_schema(&strict)?;
        opts.any_order |= o.any_order;
        opts.string_excludes.extend(o.excludes.iter().cloned());
        // XGrammar's JSON strings: any `\uXXXX`, `\/`, a raw DEL.
        opts.general_escapes = true;
        opts.xgrammar_strings = true;
        if let Some(n) = o.max_ws {
            if n == 0 {
                opts.whitespace_flexible = false;
            } else {
                opts.whitespace_pattern = Some(o.ws_regex(1));
            }
        }
        let g = crate::json_schema::compile_schema_with(&strict, &opts)
            .map_err(|e| err(e.kind(), format!("json_schema format: {}", e.message())))?
            .grammar;
        Ok(self.sub_grammar("json", g))
    }
}

/// `token_dispatch`: any tokens but the patterns (and excludes); a pattern token is
/// followed by its format.
fn token_dispatch(
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
fn token_dispatch_with(
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
fn unlimited(f: &Value) -> bool {
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

fn tag_object(t: &Value) -> Result<&Map<String, Value>, Error> {
    let o = t.as_object().ok_or_else(|| err(ErrorKind::Value, "a tag must be an object"))?;
    match o.get("type") {
        None => Ok(o),
        Some(Value::String(s)) if s == "tag" => Ok(o),
        Some(_) => Err(err(ErrorKind::Value, "tag format's type must be a string \"tag\"")),
    }
}

fn token_ref(v: &Value) -> Result<SpecialToken, Error> {
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

fn tokens_of(v: &Value) -> Result<Vec<SpecialToken>, Error> {
    v.as_array()
        .ok_or_else(|| err(ErrorKind::Value, "exclude_tokens must be an array"))?
        .iter()
        .map(token_ref)
        .collect()
}

/// One token other than these (and EOS).
fn except_tokens(ex: Vec<SpecialToken>) -> SpecialToken {
    if ex.is_empty() {
        SpecialToken::Any
    } else {
        SpecialToken::AnyTokenExceptAll(ex)
    }
}

/// XGrammar's strict mode: object schemas with `properties` and no `additionalProperties`
/// allow no other keys (applied to every subschema).
fn strict_schema(v: &Value) -> Value {
    let mut v = v.clone();
    let mut stack = vec![&mut v];
    while let Some(x) = stack.pop() {
        match x {
            Value::Object(o) => {
                if o.contains_key("properties")
                    && !o.contains_key("additionalProperties")
                    && !o.contains_key("patternProperties")
                    && !o.contains_key("unevaluatedProperties")
                {
                    o.insert("additionalProperties".into(), Value::Bool(false));
                }
                for (k, c) in o.iter_mut() {
                    // Values of these are not schemas.
                    if matches!(
                        k.as_str(),
                        "enum" | "const" | "required" | "x-guidance" | "examples" | "default"
                    ) {
                        continue;
                    }
                    stack.push(c);
                }
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
    v
}
