//! Normalized schemas to grammar rules: one rule per schema expression (so recursion in the
//! schema is recursion in the grammar), scalars as single lexemes, arrays and objects as
//! small state machines over counts.

use std::collections::VecDeque;

use hashbrown::HashMap;

use lexer::RegexSpec;

mod array;
mod object;

use super::long_string;
use super::numbers;
use super::schema::{Ctx, Exp, LengthBounds, Node, Rx, SExpr, STRING_ANY};
use crate::ir::{Expr, Grammar, Rule, RuleAttrs};
use crate::{Error, ErrorKind};

/// The most grammar rules one schema may produce.
const MAX_RULES: usize = 100_000;
/// The most distinct `patternProperties` patterns of one object.
const MAX_PATTERNS: usize = 6;
/// The most `contains` constraints on one array (each element is counted by a subset).
const MAX_CONTAINS: usize = 4;
/// Most named properties an `any_order` object may have (one parameter bit each, bit 63 is
/// the separator's); more fall back to the fixed order.
const ANY_ORDER_MAX: usize = 63;

/// The most `some` constraints (complements of `patternProperties` / `additionalProperties`)
/// on one object (each member's state is a subset of them).
const MAX_SOME: usize = 4;

/// The most values of closed objects [`Emitter::finite_values`] enumerates.
const MAX_FINITE_VALUES: usize = 64;

/// The most states `uniqueItems` over a finite item domain may use (sets of values used so
/// far: 2^d for d values, fewer under a small `maxItems`).
const MAX_UNIQUE_STATES: usize = 4096;

pub(crate) struct Emitter<'c, 'a> {
    pub ctx: &'c mut Ctx<'a>,
    pub rules: Vec<Rule>,
    names: HashMap<SExpr, String>,
    queue: VecDeque<(SExpr, String)>,
    item_sep: String,
    key_sep: String,
    /// The escapes allowed in strings (`json_allowed_escapes`; `None`: all of them).
    escapes: Option<String>,
    /// `json_allow_general_unicode_escapes`.
    general_escapes: bool,
    /// `any_order`: named properties in any order (each at most once).
    pub any_order: bool,
    /// `string_excludes`: substrings no string or key contains.
    pub excludes: Vec<String>,
    /// `xgrammar_strings`: `\/` and raw DEL in general-escape strings.
    pub xgrammar_strings: bool,
    /// The sub-grammars of long strings ([`long_string`]), one per bound and quoting.
    pub subs: Vec<Grammar>,
    /// The most Earley items a parser row of the emitted grammar may need (see
    /// [`crate::ir::GrammarOptions::row_items`]): an object's longest run of optional keys.
    pub row_items: usize,
}

fn lit(s: &str) -> Expr {
    Expr::Lexeme(RegexSpec::Literal(s.to_string()))
}

/// A separator: a regex (LLGuidance reads `item_separator` / `key_separator` as regexes);
/// plain text stays a literal.
fn sep(s: &str) -> Expr {
    if s.bytes().any(|b| b"\\.+*?()|[]{}^$".contains(&b)) {
        Expr::Lexeme(RegexSpec::Regex(s.to_string()))
    } else {
        lit(s)
    }
}

fn alt(mut v: Vec<Expr>) -> Expr {
    if v.len() == 1 {
        v.pop().unwrap_or(Expr::Empty)
    } else {
        Expr::Alt(v)
    }
}

impl<'c, 'a> Emitter<'c, 'a> {
    /// `"` (raw character | allowed named escape | `\uXXXX` of any character, a surrogate
    /// pair counting as one) repeated `len` times `"`.
    fn general_quote(&self, len: LengthBounds) -> RegexSpec {
        let (lo, hi) = (len.min, len.max);
        let count = match hi {
            Some(h) => format!("{{{lo},{h}}}"),
            None => format!("{{{lo},}}"),
        };
        RegexSpec::Regex(format!(r#""(?:{}){count}""#, self.general_unit()))
    }

    /// One character of a general-escape string: raw, a named escape, or `\uXXXX` (a
    /// surrogate pair counting as one), as a regex.
    fn general_unit(&self) -> String {
        let named: String = self
            .escapes
            .as_deref()
            .unwrap_or("nrbtf\\\"")
            .chars()
            .filter(|c| "nrbtf\\\"".contains(*c))
            .map(|c| if c == '\\' { "\\\\".to_string() } else { c.to_string() })
            .collect();
        let hex = "[0-9a-fA-F]";
        let mut unit = vec![if self.xgrammar_strings {
            r#"[^"\\\x00-\x1F]"#.to_string()
        } else {
            r#"[^"\\\x00-\x1F\x7F]"#.to_string()
        }];
        let named = if self.xgrammar_strings { format!("{named}/") } else { named };
        if !named.is_empty() {
            unit.push(format!(r"\\[{named}]"));
        }
        unit.push(format!(r"\\u(?:[0-9a-cA-Ce-fE-F]{hex}{{3}}|[dD][0-7]{hex}{{2}})"));
        unit.push(format!(r"\\u[dD][89abAB]{hex}{{2}}\\u[dD][c-fC-F]{hex}{{2}}"));
        unit.join("|")
    }

    /// A long string ([`long_string`]) of the characters of `class` (any without): a
    /// reference to its sub-grammar, made once per class, bound and quoting.
    fn long_string(&mut self, class: Option<String>, len: LengthBounds) -> Expr {
        // A class's characters are quoted canonically, as the same repeat in one lexeme
        // would be (`key_spec`); general escapes apply to length-only strings.
        let general = self.general_escapes && class.is_none();
        let quoting = format!(
            "{:?}{}{}{}",
            self.escapes,
            if general { self.general_unit() } else { String::new() },
            self.xgrammar_strings,
            class.as_deref().unwrap_or("")
        );
        // FNV-1a: a short tag naming the quoting, so equal sub-grammars share a name.
        let tag = quoting
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
        let hi = len.max.map_or_else(|| "inf".to_string(), |h| h.to_string());
        let name = format!("__json_str_{}_{hi}_{tag:016x}", len.min);
        if !self.subs.iter().any(|g| g.name.as_deref() == Some(name.as_str())) {
            let unit = general.then(|| self.general_unit());
            let escapes = self.escapes.clone();
            let body = |lo: u32, hi: u32| match (&unit, &class) {
                (Some(u), _) => RegexSpec::Regex(format!("(?:{u}){{{lo},{hi}}}")),
                (None, c) => RegexSpec::JsonQuote {
                    expr: Box::new(match c {
                        Some(c) => RegexSpec::Regex(format!("(?:{c}){{{lo},{hi}}}")),
                        None => LengthBounds { min: lo, max: Some(hi) }.regex(),
                    }),
                    raw: true,
                    allowed_escapes: escapes.clone(),
                },
            };
            self.subs.push(long_string::grammar(name.clone(), len, body));
        }
        Expr::Seq(vec![lit("\""), Expr::Grammar(name)])
    }

    pub fn new(
        ctx: &'c mut Ctx<'a>,
        item_sep: String,
        key_sep: String,
        escapes: Option<String>,
        general_escapes: bool,
    ) -> Self {
        Emitter {
            ctx,
            rules: vec![],
            names: HashMap::new(),
            queue: VecDeque::new(),
            item_sep,
            key_sep,
            escapes,
            general_escapes,
            any_order: false,
            row_items: 0,
            excludes: Vec::new(),
            xgrammar_strings: false,
            subs: Vec::new(),
        }
    }

    fn key_lexeme(&self, content: RegexSpec, length_only: Option<LengthBounds>) -> Expr {
        Expr::Lexeme(self.key_spec(content, length_only))
    }

    /// A JSON string holding exactly the strings of `content`, quoted canonically (or, with
    /// general escapes and a content constrained by length only, any character escaped).
    /// `length_only`: the length bounds where `content` is nothing more.
    fn key_spec(&self, content: RegexSpec, length_only: Option<LengthBounds>) -> RegexSpec {
        let content = if self.excludes.is_empty() {
            content
        } else {
            let any = RegexSpec::Regex(STRING_ANY.to_string());
            let mut inner = vec![any.clone()];
            inner.push(RegexSpec::Or(
                self.excludes.iter().map(|x| RegexSpec::Literal(x.clone())).collect(),
            ));
            inner.push(any);
            RegexSpec::And(vec![content, RegexSpec::Not(Box::new(RegexSpec::Concat(inner)))])
        };
        if self.general_escapes && self.excludes.is_empty() {
            if let Some(len) = length_only {
                return self.general_quote(len);
            }
        }
        RegexSpec::JsonQuote {
            expr: Box::new(content),
            raw: false,
            allowed_escapes: self.escapes.clone(),
        }
    }

    /// Emits the rules for `root` and everything it reaches; returns the start rule.
    pub fn run(&mut self, root: SExpr) -> Result<String, Error> {
        let start = self.rule_for(&root);
        while let Some((e, name)) = self.queue.pop_front() {
            if self.rules.len() > MAX_RULES {
                return Err(Error::new(
                    ErrorKind::Limit,
                    format!("the schema needs more than {MAX_RULES} rules"),
                ));
            }
            let node = self.ctx.normalize(&e)?;
            let body = self.node(&name, &node)?;
            self.push(name, body);
        }
        Ok(start)
    }

    fn push(&mut self, name: String, body: Expr) {
        self.rules.push(Rule { name, body, attrs: RuleAttrs::default(), param: false });
    }

    fn rule_for(&mut self, e: &SExpr) -> String {
        let e = &self.ctx.canonical(e);
        if let Some(n) = self.names.get(e) {
            return n.clone();
        }
        let name = format!("j{}", self.names.len());
        self.names.insert(e.clone(), name.clone());
        self.queue.push_back((e.clone(), name.clone()));
        name
    }

    fn r(&mut self, e: &SExpr) -> Expr {
        Expr::Rule(self.rule_for(e))
    }

    fn node(&mut self, name: &str, n: &Node) -> Result<Expr, Error> {
        lexer::interrupt::check()?;
        let mut alts = Vec::new();
        if n.null {
            alts.push(lit("null"));
        }
        if n.t {
            alts.push(lit("true"));
        }
        if n.f {
            alts.push(lit("false"));
        }
        let mut num = Vec::new();
        let integer = RegexSpec::Regex(numbers::INTEGER.into());
        // Integers written without a fraction (`int_plain`) whose regex has INTEGER as a
        // conjunct: NUMBER_NOEXP & INTEGER & C & ~(x.0) is exactly INT_PLAIN & C, and one
        // plain regex costs the lexer one derivative per byte where the intersection cost
        // three plus a non-emptiness check.
        let plain_int = n.num.int_plain && n.num.rx.has_conjunct(&integer);
        match &n.num.rx {
            Rx::And(v) if plain_int => {
                let int_plain = RegexSpec::Regex(numbers::INT_PLAIN.into());
                num.push(if v.len() > 1 {
                    RegexSpec::And(
                        v.iter()
                            .map(|t| if t.is(&integer) { int_plain.clone() } else { t.spec() })
                            .collect(),
                    )
                } else {
                    RegexSpec::Regex(numbers::INT_PLAIN.into())
                });
            }
            Rx::Nothing => {}
            Rx::All => num.push(RegexSpec::Regex(numbers::NUMBER_NOEXP.into())),
            rx @ Rx::And(_) => num.push(RegexSpec::And(vec![
                RegexSpec::Regex(numbers::NUMBER_NOEXP.into()),
                rx.spec(numbers::NUMBER_NOEXP),
            ])),
        }
        if n.num.int_plain && !plain_int {
            if let Some(r) = num.pop() {
                num.push(numbers::without_zero_fraction(r));
            }
        }
        if n.num.exp == Exp::All {
            num.push(RegexSpec::Regex(numbers::NUMBER_EXP.into()));
        }
        match num.len() {
            0 => {}
            1 => alts.push(Expr::Lexeme(num.pop().unwrap_or(RegexSpec::NoMatch))),
            _ => alts.push(Expr::Lexeme(RegexSpec::Or(num))),
        }
        if !n.str_.is_nothing() {
            let len = n.str_.length_only();
            // Long: bounded by length alone, or a repeated class (a one-class `pattern`
            // fused with the bounds).
            let long =
                len.map(|l| (None, l)).or_else(|| n.str_.class_repeat().map(|(c, l)| (Some(c), l)));
            match long.filter(|&(_, l)| long_string::is_long(l) && self.excludes.is_empty()) {
                Some((class, l)) => {
                    let e = self.long_string(class, l);
                    alts.push(e);
                }
                None => alts.push(self.key_lexeme(n.str_.spec(STRING_ANY), len)),
            }
        }
        for (i, a) in n.arr.iter().enumerate() {
            if let Some(e) = self.array(&format!("{name}_a{i}"), a)? {
                alts.push(e);
            }
        }
        for (i, o) in n.obj.iter().enumerate() {
            if let Some(e) = self.object(&format!("{name}_o{i}"), o)? {
                alts.push(e);
            }
        }
        Ok(alt(alts))
    }

    fn sep(&self, first: bool) -> Vec<Expr> {
        if first {
            vec![]
        } else {
            vec![sep(&self.item_sep)]
        }
    }

    fn check_states(&self, n: usize) -> Result<(), Error> {
        if n > MAX_RULES || self.rules.len() + n > MAX_RULES {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("the schema needs more than {MAX_RULES} rules"),
            ));
        }
        Ok(())
    }
}
