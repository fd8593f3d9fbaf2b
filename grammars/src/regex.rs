//! The regex front end: a Rust-syntax regex, implicitly anchored at both ends, as a grammar
//! of one lexeme.

use lexer::RegexSpec;

use crate::ir::{Expr, Grammar, GrammarSet, Rule};
use crate::{Error, ErrorKind};

/// Parses `src` as a regex (checked here, so errors carry line:column).
pub fn parse(src: &str) -> Result<GrammarSet, Error> {
    if let Err(e) = regex_syntax::ParserBuilder::new().build().parse(src) {
        let (offset, msg) = match &e {
            regex_syntax::Error::Parse(p) => (p.span().start.offset, p.kind().to_string()),
            regex_syntax::Error::Translate(t) => (t.span().start.offset, t.kind().to_string()),
            _ => (0, e.to_string()),
        };
        return Err(Error::at(ErrorKind::Value, format!("invalid regex: {msg}"), src, offset));
    }
    Ok(GrammarSet {
        grammars: vec![Grammar {
            name: None,
            start: "start".into(),
            rules: vec![Rule {
                name: "start".into(),
                body: Expr::Lexeme(RegexSpec::Regex(src.to_string())),
                attrs: Default::default(),
                param: false,
            }],
            terminals: vec![],
            ignore: vec![],
            options: Default::default(),
        }],
    })
}
