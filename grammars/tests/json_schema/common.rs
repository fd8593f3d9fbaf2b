//! Shared helpers of the JSON Schema tests: compile a schema, check instances.
#![allow(dead_code)]

use std::sync::Arc;

use grammars::compile::{compile, CompileLimits};
use grammars::json_schema::compile_schema;

/// A schema compiled down to what a parser needs.
pub struct Checker {
    cfg: Arc<earley::Cfg>,
    lexer: lexer::DerivreLexer,
    /// The compiled grammar's parser options (skip lexemes per lexeme class, once-only).
    opts: earley::ParserOptions,
}

impl Checker {
    /// Compiles `schema` (an error if the front end or the grammar compiler rejects it).
    pub fn new(schema: &serde_json::Value) -> anyhow::Result<Checker> {
        let set = compile_schema(schema)?;
        let c = compile(&set, None, &CompileLimits::default())?;
        let lexer = lexer::DerivreLexer::new(&c.spec)?;
        Ok(Checker { cfg: c.cfg.clone(), lexer, opts: c.parser_options(Vec::new()) })
    }

    /// Whether the grammar accepts `text`.
    pub fn accepts(&self, text: &str) -> bool {
        let opts = self.opts.clone();
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
