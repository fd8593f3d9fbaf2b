//! What one engine did on one schema: its [`Outcome`] as in `llg bench` (plus timeout and
//! panic), the compile time (TTFM) and each instance's [`Replay`] (per-token times, trie nodes
//! walked, masks kept for the comparison).

use std::time::Duration;

/// Time limit per schema and engine: past it the schema is a timeout.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    CompileError,
    ValidationError,
    InvalidationError,
    Timeout,
    Panic,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::CompileError => "compile_error",
            Outcome::ValidationError => "validation_error",
            Outcome::InvalidationError => "invalidation_error",
            Outcome::Timeout => "timeout",
            Outcome::Panic => "panic",
        }
    }
    pub const ALL: [Outcome; 6] = [
        Outcome::Pass,
        Outcome::CompileError,
        Outcome::ValidationError,
        Outcome::InvalidationError,
        Outcome::Timeout,
        Outcome::Panic,
    ];
}

/// One instance replayed by one engine.
#[derive(Default)]
pub struct Replay {
    /// Per-token mask + consume times (µs), for the tokens that were consumed or rejected.
    pub times: Vec<f64>,
    /// All tokens allowed and EOS allowed at the end.
    pub accepted: bool,
    /// Masks before each token and at the end (valid instances only; ours only).
    pub masks: Vec<Vec<u32>>,
    /// Trie nodes walked per mask (ours: bytes offered to the parser; the reference: its
    /// `trie_nodes_walked`), parallel to `times`.
    pub nodes: Vec<u64>,
}

pub struct EngineResult {
    pub outcome: Outcome,
    pub detail: String,
    pub ttfm_us: Option<f64>,
    /// Per instance; None for instances not run (compile error, timeout).
    pub replays: Vec<Option<Replay>>,
}

impl EngineResult {
    pub fn failed(outcome: Outcome, detail: String) -> EngineResult {
        EngineResult { outcome, detail, ttfm_us: None, replays: vec![] }
    }
}

pub fn set_outcome(r: &mut EngineResult, valid: bool, accepted: bool, i: usize) {
    if valid && !accepted {
        if matches!(r.outcome, Outcome::Pass | Outcome::InvalidationError) {
            r.outcome = Outcome::ValidationError;
            r.detail = format!("valid test {i} rejected");
        }
    } else if !valid && accepted && r.outcome == Outcome::Pass {
        r.outcome = Outcome::InvalidationError;
        r.detail = format!("invalid test {i} accepted");
    }
}
