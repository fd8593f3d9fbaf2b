//! The grammar IR: what every front end produces and [`crate::compile()`] consumes. Plain
//! serde data (JSON round-trips), so a compiled grammar can be saved and loaded.

use lexer::RegexSpec;
use serde::{Deserialize, Serialize};

use crate::param::{ParamCond, ParamExpr};

/// A set of grammars: the first is the top-level one; `@name` refers to another by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GrammarSet {
    /// The grammars; `grammars[0]` is where parsing starts.
    pub grammars: Vec<Grammar>,
}

/// One grammar: rules over named terminals, inline lexemes and other rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grammar {
    /// The name `@name` refers to (`None` for an anonymous top-level grammar).
    #[serde(default)]
    pub name: Option<String>,
    /// The start rule.
    pub start: String,
    /// The rules, each a name and an EBNF body.
    pub rules: Vec<Rule>,
    /// Named terminals (one lexeme each).
    #[serde(default)]
    pub terminals: Vec<TerminalDef>,
    /// Patterns skipped between lexemes (`%ignore`).
    #[serde(default)]
    pub ignore: Vec<RegexSpec>,
    /// Options (`%llguidance {...}`).
    #[serde(default)]
    pub options: GrammarOptions,
}

/// A rule: `name: body`, with attributes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// The rule's name.
    pub name: String,
    /// Its body.
    pub body: Expr,
    /// Attributes (`[capture]`, `[lazy]`, `[stop=...]`, ...).
    #[serde(default)]
    pub attrs: RuleAttrs,
    /// A parametric rule (`name::_`): one rule per 64-bit parameter value, made as the
    /// parser reaches it; its body may use [`Expr::Call`] with the parameter and
    /// [`Expr::If`].
    #[serde(default)]
    pub param: bool,
}

/// A named terminal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TerminalDef {
    /// The terminal's name.
    pub name: String,
    /// What it matches.
    pub regex: RegexSpec,
    /// Shortest match instead of longest.
    #[serde(default)]
    pub lazy: bool,
}

/// A rule body: EBNF over symbols.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    /// The empty string.
    Empty,
    /// Each in turn.
    Seq(Vec<Expr>),
    /// One of them.
    Alt(Vec<Expr>),
    /// `min` to `max` (unbounded if `None`) repetitions: `?` `*` `+` `{m,n}`.
    Repeat {
        /// What is repeated.
        expr: Box<Expr>,
        /// At least this many.
        min: u32,
        /// At most this many.
        max: Option<u32>,
    },
    /// A rule by name.
    Rule(String),
    /// A named terminal by name.
    Terminal(String),
    /// An anonymous lexeme (`"literal"`, `/regex/` in a rule body).
    Lexeme(RegexSpec),
    /// A special token.
    Special(SpecialToken),
    /// Another grammar of the set (`@name`).
    Grammar(String),
    /// A parametric rule with a parameter: `name::expr`.
    Call {
        /// The parametric rule.
        rule: String,
        /// Its parameter (from the enclosing rule's, in a parametric rule).
        arg: ParamExpr,
    },
    /// Literal text in which the names of the vocabulary's special tokens may also be those
    /// tokens (`"<|python_tag|>{"` matches the text, or the special token then `{`): for
    /// structural tags, whose strings are written as the model's text.
    Text(String),
    /// An alternative taken only when the parameter meets a condition: `expr %if cond`.
    If {
        /// The condition.
        cond: ParamCond,
        /// The alternative.
        expr: Box<Expr>,
    },
}

impl Expr {
    /// Whether the expression depends on the enclosing rule's parameter (a call with a
    /// non-constant parameter, or a condition other than `true`).
    pub fn uses_param(&self) -> bool {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            match e {
                Expr::Seq(xs) | Expr::Alt(xs) => stack.extend(xs),
                Expr::Repeat { expr, .. } => stack.push(expr),
                Expr::Call { arg, .. } if arg.uses_param() => return true,
                Expr::If { cond, expr } => {
                    if cond.uses_param() {
                        return true;
                    }
                    stack.push(expr);
                }
                _ => {}
            }
        }
        false
    }
}

/// A special-token terminal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecialToken {
    /// By name, e.g. `<|eot_id|>`.
    Name(String),
    /// By name if the vocabulary has it, else nothing (structural tags: a delimiter that
    /// some tokenizers have as a special token).
    NameIfAny(String),
    /// The regular tokens whose bytes are exactly this text (none if no token is): a
    /// delimiter some tokenizers have as one ordinary token (Qwen 3's `</think>`).
    Spelled(String),
    /// By id ranges (inclusive), e.g. `<[128009]>`, `<[100-200]>`.
    Ids(Vec<(u32, u32)>),
    /// Any single token (regular or special, not EOS) except these id ranges, `<[^...]>`.
    NotIds(Vec<(u32, u32)>),
    /// Any single token (regular or special, not EOS), `<[*]>`.
    Any,
    /// Any single token, regular or special, except these and EOS: GBNF `!<[id]>`,
    /// `!<name>`.
    AnyTokenExcept(Box<SpecialToken>),
    /// Any single token, regular or special, except those of every one of these and EOS
    /// (structural tags' `exclude_tokens`).
    AnyTokenExceptAll(Vec<SpecialToken>),
}

/// Rule attributes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RuleAttrs {
    /// Capture the rule's text under this name.
    #[serde(default)]
    pub capture: Option<String>,
    /// The rule is one lazy lexeme (shortest match); its body must be terminal-like.
    #[serde(default)]
    pub lazy: bool,
    /// The rule is one lazy lexeme: its body followed by this stop pattern.
    #[serde(default)]
    pub stop: Option<RegexSpec>,
    /// Like `stop`, for a suffix that belongs to the output.
    #[serde(default)]
    pub suffix: Option<RegexSpec>,
    /// Capture the stop string under this name.
    #[serde(default)]
    pub stop_capture: Option<String>,
    /// At most this many tokens inside the rule (the rule becomes one lexeme; when it has
    /// used them, it ends at the next token boundary if it can, else the parse dies there).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// With `max_tokens`: once the tokens are used, the lexeme goes on only with a string
    /// of this (the rest of a tag's end already begun, or all of it) instead of ending
    /// there (structural tags' `any_text` with `max_tokens` before a tag's end).
    #[serde(default)]
    pub finish: Option<RegexSpec>,
    /// Sampling temperature inside the rule.
    #[serde(default)]
    pub temperature: Option<f32>,
}

impl RuleAttrs {
    /// Whether the rule must become one lexeme (as in LLGuidance, `max_tokens` applies to
    /// such rules: their body must be a token expression).
    pub fn is_lexeme(&self) -> bool {
        self.lazy || self.stop.is_some() || self.suffix.is_some() || self.max_tokens.is_some()
    }

    /// Whether the rule's lexeme is lazy (shortest match) rather than greedy. `stop=""`
    /// (LLGuidance: the model's EOS ends the text) leaves it greedy: nothing in the text
    /// stops it.
    pub fn is_lazy(&self) -> bool {
        let non_empty = |s: &Option<RegexSpec>| {
            s.as_ref().is_some_and(|s| !matches!(s, RegexSpec::Literal(l) if l.is_empty()))
        };
        self.lazy || non_empty(&self.stop) || non_empty(&self.suffix)
    }
}

/// Grammar options (`%llguidance {...}`), with LLGuidance's names and defaults.
/// Unknown keys are ignored, as LLGuidance 1.9 ignores them (a wrong type is an error).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GrammarOptions {
    /// Allow skipped (`%ignore`) text before the first lexeme (default false).
    #[serde(default)]
    pub allow_initial_skip: bool,
    /// Never force tokens (fast-forward) for this grammar.
    #[serde(default)]
    pub no_forcing: bool,
    /// Allow lexemes to match invalid UTF-8.
    #[serde(default)]
    pub allow_invalid_utf8: bool,
    /// Ignored lexemes are allowed at most once between two lexemes.
    #[serde(default)]
    pub ignore_once: bool,
    /// Earley items one parser row of this grammar may need, where more than the parser's
    /// default limit (a JSON object's run of optional keys: each key may come next, three
    /// items each); the parser's per-row limit is raised to it, up to
    /// [`crate::compile::MAX_ROW_ITEMS`]. Not an LLGuidance option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_items: Option<usize>,
}
