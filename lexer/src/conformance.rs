//! Data-driven conformance cases for any [`Lexer`] implementation (feature `conformance`).
//!
//! The cases live in `tests/conformance/*.json`, embedded here with `include_str!`. A suite
//! is a [`LexerSpec`] plus cases; each case gives an input and either the expected lexemes
//! (as found by [`tokenize`]), the offset of the first error, or the bytes forced after the
//! input. A suite may instead expect the spec not to compile (`"compile_error"`, the
//! [`ErrorKind`] in snake case).
//!
//! A custom lexer crate runs the same suite:
//!
//! ```
//! # #[cfg(feature = "derivre")] {
//! let report = lexer::conformance::run(&mut |spec| {
//!     Ok(Box::new(lexer::DerivreLexer::new(spec)?) as Box<dyn lexer::Lexer>)
//! });
//! assert!(report.is_ok(), "{report}");
//! # }
//! ```
//!
//! A suite whose spec uses an extended construct ([`RegexSpec::is_extended`]) is *skipped*,
//! not failed, when the implementation reports [`ErrorKind::Unsupported`] for it.

use std::fmt;

use serde::Deserialize;

use crate::{tokenize, Error, ErrorKind, LexemeSet, Lexer, LexerSpec, Step, TokenizeError};

#[cfg(doc)]
use crate::RegexSpec;

/// The embedded files: (file name, contents).
pub const FILES: &[(&str, &str)] = &[
    ("basic.json", include_str!("../tests/conformance/basic.json")),
    ("lazy.json", include_str!("../tests/conformance/lazy.json")),
    ("json.json", include_str!("../tests/conformance/json.json")),
    ("extended.json", include_str!("../tests/conformance/extended.json")),
    ("errors.json", include_str!("../tests/conformance/errors.json")),
    ("forced.json", include_str!("../tests/conformance/forced.json")),
];

/// One suite: a spec and its cases.
#[derive(Clone, Debug, Deserialize)]
pub struct Suite {
    /// Suite name (unique across files).
    pub name: String,
    /// The lexemes.
    #[serde(flatten)]
    pub spec: LexerSpec,
    /// If set, the spec must fail to compile with this error kind (`regex`,
    /// `invalid_spec`, `too_deep`, ...), and `cases` is empty.
    #[serde(default)]
    pub compile_error: Option<String>,
    /// The cases.
    #[serde(default)]
    pub cases: Vec<Case>,
}

/// One input and what must happen to it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The input text.
    pub input: String,
    /// Names of the allowed lexemes; default: all.
    #[serde(default)]
    pub allowed: Option<Vec<String>>,
    /// Expected `[lexeme name, text]` pairs from [`tokenize`]; the text excludes look-ahead
    /// bytes.
    #[serde(default)]
    pub tokens: Option<Vec<(String, String)>>,
    /// Expected offset of [`TokenizeError::NoMatch`].
    #[serde(default)]
    pub error_at: Option<usize>,
    /// Expected bytes forced after reading `input` as the start of one lexeme (following
    /// [`Lexer::forced_byte`] until it says `None`).
    #[serde(default)]
    pub forced: Option<String>,
}

/// Builds the lexer under test for a spec.
pub type MakeLexer<'a> = dyn FnMut(&LexerSpec) -> Result<Box<dyn Lexer>, Error> + 'a;

/// The outcome of [`run`].
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Cases (and compile-error suites) that passed.
    pub passed: usize,
    /// One line per failure: suite, case, what differed.
    pub failed: Vec<String>,
    /// One line per skipped suite, with the reason.
    pub skipped: Vec<String>,
    /// Cases where the lexer forced fewer bytes than it could have (a correct answer, as
    /// [`Lexer::forced_byte`] may always say `None`; a lexer that forces bytes can check
    /// this is empty).
    pub forced_partial: Vec<String>,
}

impl Report {
    /// No failures.
    pub fn is_ok(&self) -> bool {
        self.failed.is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} passed, {} failed, {} suites skipped",
            self.passed,
            self.failed.len(),
            self.skipped.len()
        )?;
        for l in &self.failed {
            writeln!(f, "FAIL {l}")?;
        }
        for l in &self.skipped {
            writeln!(f, "skip {l}")?;
        }
        Ok(())
    }
}

/// Parses every embedded file. Panics only if an embedded file is malformed (a bug in this
/// crate, caught by its tests).
pub fn suites() -> Vec<Suite> {
    let mut out = Vec::new();
    for (file, text) in FILES {
        let v: Vec<Suite> =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("conformance file {file}: {e}"));
        out.extend(v);
    }
    out
}

/// The snake-case name of an error kind, as used by `compile_error`.
pub fn kind_name(e: &Error) -> &'static str {
    match e.kind() {
        ErrorKind::Regex { .. } => "regex",
        ErrorKind::InvalidSpec { .. } => "invalid_spec",
        ErrorKind::Unsupported { .. } => "unsupported",
        ErrorKind::TooDeep { .. } => "too_deep",
        ErrorKind::StepFuelExhausted { .. } => "step_fuel_exhausted",
        ErrorKind::TotalFuelExhausted { .. } => "total_fuel_exhausted",
        ErrorKind::TooManyStates { .. } => "too_many_states",
        ErrorKind::AutomatonTooBig { .. } => "automaton_too_big",
        ErrorKind::InvalidLexeme { .. } => "invalid_lexeme",
        ErrorKind::InvalidState { .. } => "invalid_state",
        ErrorKind::ForeignLexer { .. } => "foreign_lexer",
        ErrorKind::Interrupted(_) => "interrupted",
    }
}

/// Runs every embedded suite against lexers built by `make`.
pub fn run(make: &mut MakeLexer<'_>) -> Report {
    let mut report = Report::default();
    for suite in suites() {
        run_suite(&suite, make, &mut report);
    }
    report
}

/// Runs one suite, adding to `report`.
pub fn run_suite(suite: &Suite, make: &mut MakeLexer<'_>, report: &mut Report) {
    let name = &suite.name;
    let mut lexer = match (make(&suite.spec), &suite.compile_error) {
        // A lexer may decline a suite it does not support (extended constructs, look-aheads,
        // ...): that suite is skipped, not failed.
        (Err(e), want)
            if matches!(e.kind(), ErrorKind::Unsupported { .. })
                && want.as_deref() != Some("unsupported") =>
        {
            report.skipped.push(format!("{name}: {e}"));
            return;
        }
        (Err(e), Some(want)) if kind_name(&e) == want => {
            report.passed += 1;
            return;
        }
        (Err(e), _) => {
            report.failed.push(format!("{name}: does not compile: {e}"));
            return;
        }
        (Ok(_), Some(want)) => {
            report.failed.push(format!("{name}: compiled, expected a {want} error"));
            return;
        }
        (Ok(l), None) => l,
    };
    for (i, case) in suite.cases.iter().enumerate() {
        match run_case(&suite.spec, &mut *lexer, case) {
            Ok(None) => report.passed += 1,
            Ok(Some(partial)) => {
                report.passed += 1;
                report
                    .forced_partial
                    .push(format!("{name} case {i} ({:?}): {partial}", case.input));
            }
            Err(msg) => report.failed.push(format!("{name} case {i} ({:?}): {msg}", case.input)),
        }
    }
}

/// `Ok(Some(note))` when the case passed with fewer forced bytes than expected.
fn run_case(
    spec: &LexerSpec,
    lexer: &mut dyn Lexer,
    case: &Case,
) -> Result<Option<String>, String> {
    let allowed = match &case.allowed {
        None => spec.all(),
        Some(names) => names
            .iter()
            .map(|n| spec.lookup(n).ok_or_else(|| format!("unknown lexeme {n} in case")))
            .collect::<Result<LexemeSet, String>>()?,
    };
    let input = case.input.as_bytes();
    let mut partial = None;
    if let Some(want) = &case.forced {
        let mut s = lexer.start_state(&allowed).map_err(|e| e.to_string())?;
        for &b in input {
            s = match lexer.step(s, b).map_err(|e| e.to_string())? {
                Step::Continue(s) => s,
                other => return Err(format!("prefix does not stay in one lexeme: {other:?}")),
            };
        }
        let mut got = Vec::new();
        while let Some(b) = lexer.forced_byte(s).map_err(|e| e.to_string())? {
            got.push(b);
            if got.len() > 64 {
                break;
            }
            s = lexer.advance(s, b).map_err(|e| e.to_string())?;
        }
        // Every forced byte must be right; stopping early (`None`) is always allowed.
        if !want.as_bytes().starts_with(&got) {
            return Err(format!(
                "forced bytes {:?}, expected {want:?}",
                String::from_utf8_lossy(&got)
            ));
        }
        if got.len() < want.len() {
            partial = Some(format!("forced {:?} of {want:?}", String::from_utf8_lossy(&got)));
        }
    }
    if case.tokens.is_none() && case.error_at.is_none() {
        return Ok(partial);
    }
    let got = tokenize(lexer, &allowed, input);
    match (got, &case.tokens, case.error_at) {
        (Ok(toks), Some(want), None) => {
            let got: Vec<(String, String)> = toks
                .iter()
                .map(|t| {
                    let name = spec.get(t.lexeme).map(|l| l.name.clone()).unwrap_or_default();
                    let text = String::from_utf8_lossy(&input[t.start..t.end - t.lookahead]);
                    (name, text.into_owned())
                })
                .collect();
            if &got != want {
                return Err(format!("tokens {got:?}, expected {want:?}"));
            }
            Ok(partial)
        }
        (Err(TokenizeError::NoMatch { offset }), None, Some(want)) if offset == want => Ok(partial),
        (got, _, _) => Err(format!(
            "got {got:?}, expected tokens {:?} / error at {:?}",
            case.tokens, case.error_at
        )),
    }
}
