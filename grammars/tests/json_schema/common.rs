//! Shared helpers of the JSON Schema tests: compile a schema, check instances.
#![allow(dead_code)]

use std::sync::Arc;

use grammars::compile::{compile, CompileLimits};
use grammars::ir::GrammarSet;
use grammars::json_schema::compile_schema;

/// A schema compiled down to what a parser needs.
pub struct Checker {
    cfg: Arc<earley::Cfg>,
    lexer: lexer::DerivreLexer,
    skip: lexer::LexemeSet,
}

impl Checker {
    /// Compiles `schema` (an error if the front end or the grammar compiler rejects it).
    pub fn new(schema: &serde_json::Value) -> anyhow::Result<Checker> {
        let g = compile_schema(schema)?;
        let c = compile(&GrammarSet { grammars: vec![g] }, None, &CompileLimits::default())?;
        let lexer = lexer::DerivreLexer::new(&c.spec)?;
        Ok(Checker { cfg: c.cfg.clone(), lexer, skip: c.skip.clone() })
    }

    /// Whether the grammar accepts `text`.
    pub fn accepts(&self, text: &str) -> bool {
        let opts = earley::ParserOptions { skip: self.skip.clone(), ..Default::default() };
        let Ok(mut p) = earley::Parser::new(self.cfg.clone(), self.lexer.clone(), opts) else {
            return false;
        };
        if p.consume_bytes(text.as_bytes()).is_err() {
            return false;
        }
        p.is_accepting().unwrap_or(false)
    }

    /// Whether the grammar accepts the compact serialization of `v`.
    pub fn accepts_value(&self, v: &serde_json::Value) -> bool {
        self.accepts(&serde_json::to_string(v).expect("serializable"))
    }
}
