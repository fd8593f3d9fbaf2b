//! JSON Schema front end: a schema (drafts 4 to 2020-12, by `$schema`) compiled to a grammar
//! of the IR, strings, numbers and keys as single lexemes, structure as rules.
//!
//! # Semantics
//!
//! The grammar accepts only instances valid under the schema (no over-approximation): what
//! cannot be expressed exactly is an [`ErrorKind::Unsupported`] error naming the keyword.
//! The grammar may reject some valid instances, by design:
//! - **Property order** is fixed (DESIGN.md): the order in `properties`, then the other
//!   `required` keys, then additional and pattern properties.
//! - **Numbers** with bounds or `multipleOf`, and integers, are written without an exponent
//!   (`1e3` is rejected there; unconstrained numbers accept it). `"type": "integer"` rejects
//!   `1.0` (as LLGuidance and MaskBench do), while `not`/`const`/`enum` use exact values.
//! - **`pattern`** is a search, as JSON Schema specifies (`^`/`$` anchor it); MaskBench's
//!   valid instances need this (`"^https?://"` matches `"https://x.org"`). The `x-guidance`
//!   option `pattern_search: false` anchors unanchored patterns at both ends instead (a
//!   subset of the valid strings; `not` of such a pattern is then an error).
//!   `patternProperties` always search. ECMA-262 classes (`\d`, `\w`, `\s`, `.`) keep their
//!   ECMA meaning; a look-ahead at the very start (`^(?!X)Y`, `^(?=X)Y`, one alternative) is
//!   an intersection with (the complement of) `X` then anything; other look-arounds,
//!   backreferences and `\b` are unsupported.
//! - **`format`**: the known formats are asserted (LLGuidance's behaviour; 2019-09 and
//!   2020-12 make every format an annotation): `date-time`, `date`, `time`, `duration`,
//!   `email` (no general address literals `[tag:...]`), `idn-email` (ASCII domains only),
//!   `hostname` (no `--` in label positions 3-4, so no A-labels), `idn-hostname` (ASCII
//!   labels as `hostname`'s only), `ipv4`, `ipv6`, `uuid`, `uri`, `uri-reference`, `iri`,
//!   `iri-reference`, `uri-template`, `json-pointer`, `relative-json-pointer`, and OpenAPI's
//!   `byte`. The four checked on a subset of their strings (`email`, `idn-email`,
//!   `hostname`, `idn-hostname`) cannot be negated (`not`, `if`, an inexpressible `oneOf`:
//!   an error). Any other format, `regex`
//!   included (ECMA-262 regex syntax is not a regular language), is an annotation, as the
//!   spec says: it leaves strings unconstrained and adds a warning naming it (an error with
//!   `strict_formats`).
//! - Keys with escapes (`"\u0061"` for `"a"`) are rejected where a plain key is expected.
//!
//! Supported: `type`, `enum`, `const`, `properties`, `required`, `additionalProperties`,
//! `patternProperties` (up to 6 patterns per object), `minProperties`, `maxProperties`,
//! `propertyNames`, `dependentRequired`, `dependentSchemas`, `dependencies`, `items`,
//! `prefixItems`, `additionalItems`, `minItems`, `maxItems`, `contains`, `minContains`,
//! `maxContains`, `uniqueItems` (when the items are a finite set of values: 12 at most, or
//! more under a small `maxItems`; the sets of values used are the states, 4,096 at most),
//! `minLength`, `maxLength`, `pattern`, `format`, `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum` (number and draft-4 boolean forms), `multipleOf`, `anyOf`, `allOf`,
//! `oneOf` (exact: disjoint branches, or branches whose complements are expressible;
//! disjoint within a sibling `type`, by type, count bounds, or a key one branch requires
//! whose values there and in the other share nothing, such as two `const` strings),
//! `not` (of scalar constraints, `type`, `const`, `enum`, `required`, counts, `properties`,
//! `patternProperties`, `additionalProperties`, `propertyNames`, `items` (after `prefixItems`
//! too: a `contains` counted from the prefix's end), `contains`: the
//! complement of an object keyword is "some member violates it", emitted as a state bit of
//! the object's member loop), `if`/`then`/`else`, `$ref` (local: JSON pointers, `$defs`,
//! `definitions`, `$id`, `$anchor`; recursion becomes grammar recursion),
//! `unevaluatedProperties`/`unevaluatedItems` (beside applicators: the schema split into
//! cases by which `anyOf`/`oneOf` branches, `if` and `dependentSchemas` keys hold, each with
//! the keys or items it evaluated; not beside `contains` for items, nor `$dynamicRef`),
//! boolean schemas.
//! Keywords newer than the declared `$schema` draft (`contains`, `propertyNames` before
//! draft 6, `if` before 7, `dependent*`/`*Contains`/`unevaluated*` before 2019-09,
//! `prefixItems` before 2020-12) are not keywords there and are ignored, as a validator of
//! that draft (and LLGuidance) does; `const` is applied in every draft (draft-04 schemas use
//! it, LLGuidance applies it, and it only narrows). Without `$schema`, 2020-12 applies.
//! Properties of merged schemas (`allOf`, `anyOf`, `oneOf`, `$ref` beside `properties`) are
//! ordered by keyword position, as LLGuidance does: the schema's own properties where its
//! first `properties`/`additionalProperties`/`patternProperties` keyword is.
//! Unknown keywords are annotations (the spec says so) and are ignored; `$dynamicRef`,
//! `$recursiveRef` and remote `$ref`s are errors.
//!
//! # Options
//!
//! From the top-level `"x-guidance"` object, with LLGuidance's names and defaults:
//! `whitespace_flexible` (true: `[ \t\n\r]+` allowed between tokens), `whitespace_pattern`
//! (a regex for that whitespace), `item_separator` (`","`), `key_separator` (`":"`),
//! `coerce_one_of` (false: an inexpressible `oneOf` becomes `anyOf`), `lenient` (false:
//! an unsupported `uniqueItems` is ignored, over-approximating, with a warning), plus ours:
//! `pattern_search` (true) described above and `strict_formats` (false: an unknown
//! `format` is an error instead of an annotation with a warning).
//!
//! # Limits
//!
//! Schema nesting and `$ref` chains: 512 levels (the schema's JSON text: 1,000, checked by
//! the `llguidance` façade, which compiles deep ones on a thread with room); rules: 100,000;
//! `oneOf` branches that need complements: 8; alternatives of one intersection: 256; `contains` on one array: 4;
//! members required by complements on one object: 4;
//! `patternProperties` patterns of distinct schemas on one object: 6 (all
//! [`ErrorKind::Limit`]).

mod ecma;
pub(crate) use ecma::{format_spec, translate_pattern};
mod emit;
mod long_string;
/// Where a JSON string bounded by length alone is chunked: past `LONG_STRING` characters,
/// in chunks of `LONG_STRING_CHUNK` (the module `long_string`).
pub use long_string::{
    CHUNK as LONG_STRING_CHUNK, LEXEME_PREFIX as LONG_STRING_LEXEMES, LONG as LONG_STRING,
};
mod numbers;
pub(crate) mod resolve;
mod schema;

use lexer::RegexSpec;
use serde_json::Value;

use crate::ir::{Grammar, GrammarOptions};
use crate::{Error, ErrorKind};

/// Options of the JSON Schema compiler (the schema's `"x-guidance"` object).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonCompileOptions {
    /// Allow whitespace (`[ \t\n\r]+`) between tokens (default true).
    pub whitespace_flexible: bool,
    /// The whitespace allowed between tokens, as a regex (overrides `whitespace_flexible`).
    pub whitespace_pattern: Option<String>,
    /// The separator between array items and object entries (default `","`).
    pub item_separator: String,
    /// The separator between a key and its value (default `":"`).
    pub key_separator: String,
    /// Treat a `oneOf` that cannot be compiled exactly as `anyOf` (default false).
    pub coerce_one_of: bool,
    /// Ignore an unsupported `uniqueItems` (over-approximating), collecting a warning,
    /// instead of failing (default false).
    pub lenient: bool,
    /// An unknown `format` is an error (default false: an annotation, any string, with a
    /// warning naming it, as JSON Schema 2019-09 and 2020-12 say).
    pub strict_formats: bool,
    /// `pattern` is a search, as JSON Schema specifies (default true); false anchors
    /// unanchored patterns at both ends.
    pub pattern_search: bool,
    /// The escapes allowed after `\` in strings (`json_allowed_escapes`, among
    /// `nrbtf\"u`; default all of them, `u` meaning `\u00XX` for control characters).
    pub allowed_escapes: Option<String>,
    /// Any character may be written as a `\uXXXX` escape (a surrogate pair for those above
    /// U+FFFF) in strings constrained by length only and in free keys
    /// (`json_allow_general_unicode_escapes`, default false: `\u` only for control
    /// characters). Lengths count decoded characters.
    pub general_escapes: bool,
    /// Named properties in any order, each at most once, the required ones all present
    /// (`any_order`, ours; default false: the order of `properties`). Built on a
    /// parametric rule (instances made while parsing), for objects with at most 63 named
    /// properties and no `minProperties`/`maxProperties` (others keep the fixed order).
    pub any_order: bool,
    /// Substrings no string value or key may contain (XGrammar's `json_schema` `excludes`;
    /// default none). Checked on the decoded characters, so stricter than XGrammar where an
    /// escape spells an excluded character, and applied to `pattern`/`format` strings too
    /// (XGrammar leaves those unfiltered).
    pub string_excludes: Vec<String>,
    /// Strings as XGrammar reads them (structural tags): with `general_escapes`, also the
    /// escape `\/` and a raw DEL (0x7F) in strings constrained by length only and in free
    /// keys (default false: LLGuidance's strings).
    pub xgrammar_strings: bool,
}

impl Default for JsonCompileOptions {
    fn default() -> Self {
        JsonCompileOptions {
            whitespace_flexible: true,
            whitespace_pattern: None,
            item_separator: ",".into(),
            key_separator: ":".into(),
            coerce_one_of: false,
            lenient: false,
            strict_formats: false,
            pattern_search: true,
            allowed_escapes: None,
            general_escapes: false,
            any_order: false,
            string_excludes: Vec::new(),
            xgrammar_strings: false,
        }
    }
}

impl JsonCompileOptions {
    /// The options of a schema's top-level `"x-guidance"` object (defaults without one).
    pub fn from_schema(schema: &Value) -> Result<JsonCompileOptions, Error> {
        let mut o = JsonCompileOptions::default();
        let Some(x) = schema.get("x-guidance") else { return Ok(o) };
        let m = x
            .as_object()
            .ok_or_else(|| Error::new(ErrorKind::Value, "x-guidance must be an object"))?;
        let bad = |k: &str, what: &str| {
            Error::new(ErrorKind::Value, format!("x-guidance {k}: expected {what}"))
        };
        for (k, v) in m {
            match k.as_str() {
                "whitespace_flexible"
                | "coerce_one_of"
                | "lenient"
                | "strict_formats"
                | "pattern_search"
                | "any_order"
                | "json_allow_general_unicode_escapes" => {
                    let b = v.as_bool().ok_or_else(|| bad(k, "a boolean"))?;
                    match k.as_str() {
                        "whitespace_flexible" => o.whitespace_flexible = b,
                        "coerce_one_of" => o.coerce_one_of = b,
                        "lenient" => o.lenient = b,
                        "strict_formats" => o.strict_formats = b,
                        "json_allow_general_unicode_escapes" => o.general_escapes = b,
                        "any_order" => o.any_order = b,
                        _ => o.pattern_search = b,
                    }
                }
                "whitespace_pattern" => {
                    o.whitespace_pattern = match v {
                        Value::Null => None,
                        Value::String(s) => Some(s.clone()),
                        _ => return Err(bad(k, "a string")),
                    }
                }
                "item_separator" => {
                    o.item_separator = v.as_str().ok_or_else(|| bad(k, "a string"))?.to_string()
                }
                "key_separator" => {
                    o.key_separator = v.as_str().ok_or_else(|| bad(k, "a string"))?.to_string()
                }
                "json_allowed_escapes" if v.is_null() => o.allowed_escapes = None,
                "json_allowed_escapes" => {
                    let e = v.as_str().ok_or_else(|| bad(k, "a string"))?;
                    if let Some(c) = e.chars().find(|c| !"nrbtf\\\"u".contains(*c)) {
                        return Err(Error::new(
                            ErrorKind::Value,
                            format!(
                                "x-guidance json_allowed_escapes: {c:?} is not a JSON escape \
                                 (allowed: n r b t f \\ \" u)"
                            ),
                        ));
                    }
                    o.allowed_escapes = Some(e.to_string());
                }
                other => {
                    return Err(Error::new(
                        ErrorKind::Name,
                        format!("x-guidance: unknown option {other:?}"),
                    ))
                }
            }
        }
        Ok(o)
    }
}

/// A compiled schema: the grammar and any warnings (unknown formats, and what `lenient`
/// ignored).
#[derive(Clone, Debug)]
pub struct CompiledSchema {
    /// The grammar.
    pub grammar: Grammar,
    /// The sub-grammars it refers to (long strings, `long_string.rs`): they go into the
    /// same grammar set ([`push_subs`]).
    pub subs: Vec<Grammar>,
    /// The unknown formats left as annotations and what `lenient` ignored, one line each.
    pub warnings: Vec<String>,
}

/// Compiles a JSON Schema into a grammar of the IR, with options from the schema's top-level
/// `"x-guidance"` object.
pub fn compile_schema(schema: &Value) -> Result<crate::ir::GrammarSet, Error> {
    let opts = JsonCompileOptions::from_schema(schema)?;
    let c = compile_schema_with(schema, &opts)?;
    let mut grammars = vec![c.grammar];
    push_subs(&mut grammars, c.subs);
    Ok(crate::ir::GrammarSet { grammars })
}

/// Appends sub-grammars to a set's grammars, each name once (a name is made from what the
/// grammar holds, so two schemas' equal sub-grammars are one).
pub fn push_subs(grammars: &mut Vec<Grammar>, subs: Vec<Grammar>) {
    for g in subs {
        if !grammars.iter().any(|h| h.name.is_some() && h.name == g.name) {
            grammars.push(g);
        }
    }
}

/// Compiles a JSON Schema with explicit options (the `"x-guidance"` object is not read).
pub fn compile_schema_with(
    schema: &Value,
    opts: &JsonCompileOptions,
) -> Result<CompiledSchema, Error> {
    let doc = resolve::Doc::new(schema)?;
    let mut ctx = schema::Ctx::new(doc, opts.clone());
    let root = ctx.at(String::new());
    let subs;
    let row_items;
    let (rules, start) = {
        let mut em = emit::Emitter::new(
            &mut ctx,
            opts.item_separator.clone(),
            opts.key_separator.clone(),
            opts.allowed_escapes.clone(),
            opts.general_escapes,
        );
        em.any_order = opts.any_order;
        em.xgrammar_strings = opts.xgrammar_strings;
        em.excludes = opts.string_excludes.iter().filter(|x| !x.is_empty()).cloned().collect();
        let start = em.run(root)?;
        row_items = em.row_items;
        subs = std::mem::take(&mut em.subs);
        (std::mem::take(&mut em.rules), start)
    };
    if !derives_something(&rules, &start) {
        let why = if ctx.unsat.is_empty() {
            "no value is valid under it (e.g. `false`, `not: {}`, or `allOf` of schemas with \
             no value in common)"
                .to_string()
        } else {
            ctx.unsat.join("; ")
        };
        return Err(Error::new(ErrorKind::Value, format!("the schema is unsatisfiable: {why}")));
    }
    let ignore = match (&opts.whitespace_pattern, opts.whitespace_flexible) {
        (Some(p), _) => vec![RegexSpec::And(vec![
            RegexSpec::Regex(p.clone()),
            RegexSpec::Regex("(?s:.)+".into()),
        ])],
        (None, true) => vec![RegexSpec::Regex(r"[ \t\n\r]+".into())],
        (None, false) => vec![],
    };
    // The whitespace pattern is matched at most once where whitespace may go (LLGuidance:
    // bounds such as `[ ]{1,8}` are then enforced).
    // LLGuidance's JSON whitespace is always once-only (a Lark `%ignore` shares its lexeme
    // class only with `ignore_once`).
    let options = GrammarOptions {
        ignore_once: true,
        row_items: (row_items > 0).then_some(row_items),
        ..Default::default()
    };
    let grammar = Grammar { name: None, start, rules, terminals: vec![], ignore, options };
    Ok(CompiledSchema { grammar, subs, warnings: ctx.warnings })
}

/// Whether rule `start` derives some string: the least fixpoint of "productive" over the
/// emitted rules (a lexeme that matches nothing is not). A worklist: a rule is looked at
/// again only when a rule it names becomes productive (a pass over every rule until nothing
/// changed took ~0.7 s on a schema with thousands of rules, Github_ultra---o13934).
fn derives_something(rules: &[crate::ir::Rule], start: &str) -> bool {
    use crate::ir::Expr;
    use hashbrown::HashMap;
    fn productive(e: &Expr, index: &HashMap<&str, usize>, ok: &[bool]) -> bool {
        match e {
            Expr::Empty => true,
            Expr::Lexeme(RegexSpec::NoMatch) => false,
            Expr::Lexeme(_)
            | Expr::Terminal(_)
            | Expr::Special(_)
            | Expr::Grammar(_)
            | Expr::Text(_) => true,
            Expr::Call { .. } => true,
            Expr::Rule(r) => index.get(r.as_str()).is_some_and(|&i| ok[i]),
            Expr::Seq(xs) => xs.iter().all(|x| productive(x, index, ok)),
            Expr::Alt(xs) => xs.iter().any(|x| productive(x, index, ok)),
            Expr::Repeat { expr, min, .. } => *min == 0 || productive(expr, index, ok),
            Expr::If { expr, .. } => productive(expr, index, ok),
        }
    }
    fn named<'a>(e: &'a Expr, out: &mut Vec<&'a str>) {
        match e {
            Expr::Rule(r) => out.push(r.as_str()),
            Expr::Seq(xs) | Expr::Alt(xs) => xs.iter().for_each(|x| named(x, out)),
            Expr::Repeat { expr, .. } | Expr::If { expr, .. } => named(expr, out),
            _ => {}
        }
    }
    // A name given to several rules is productive where one of them is: they share one
    // entry (the first rule's index), and each of them is looked at.
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(rules.len());
    for (i, r) in rules.iter().enumerate() {
        index.entry(r.name.as_str()).or_insert(i);
    }
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); rules.len()];
    let mut names = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        names.clear();
        named(&r.body, &mut names);
        for n in &names {
            if let Some(&j) = index.get(n) {
                if users[j].last() != Some(&i) {
                    users[j].push(i);
                }
            }
        }
    }
    let mut ok = vec![false; rules.len()];
    let mut queue: Vec<usize> = (0..rules.len()).rev().collect();
    while let Some(i) = queue.pop() {
        let slot = index[rules[i].name.as_str()];
        if ok[slot] || !productive(&rules[i].body, &index, &ok) {
            continue;
        }
        ok[slot] = true;
        queue.extend(users[slot].iter().copied().filter(|&u| !ok[index[rules[u].name.as_str()]]));
    }
    index.get(start).is_some_and(|&i| ok[i])
}
