//! The syntax tree of a Lark grammar as parsed, before names are resolved: expressions
//! ([`LExpr`], with source offsets on names for errors) and definitions ([`Def`]). Trees
//! are at most [`MAX_NESTING`] groups deep (the parser's limit), which bounds the depth of
//! the walks over them.

use lexer::RegexSpec;

use crate::ir::{RuleAttrs, SpecialToken};
use crate::param::{ParamCond, ParamExpr};

/// Nesting limit of parentheses, brackets, `~`, and nested `%lark` blocks.
pub const MAX_NESTING: usize = 50;

/// A parsed expression before names are resolved.
#[derive(Clone, Debug)]
pub(super) enum LExpr {
    Empty,
    Seq(Vec<LExpr>),
    Alt(Vec<LExpr>),
    Repeat(Box<LExpr>, u32, Option<u32>),
    RuleRef(String, usize),
    TermRef(String, usize),
    Lit(RegexSpec),
    Special(SpecialToken),
    Grammar(String),
    And(Vec<LExpr>),
    Not(Box<LExpr>),
    /// `name::expr`.
    Call(String, ParamExpr, usize),
    /// `alternative %if cond`.
    If(ParamCond, Box<LExpr>),
}

/// A rule or terminal definition.
pub(super) struct Def {
    pub(super) name: String,
    pub(super) at: usize,
    /// A parametric rule (`name::_`).
    pub(super) param: bool,
    pub(super) body: LExpr,
    pub(super) attrs: RuleAttrs,
    /// `stop=NAME` / `suffix=NAME`: a terminal resolved when lowered (is it the suffix,
    /// the name, where).
    pub(super) stop_term: Option<(bool, String, usize)>,
}
