//! Build options: budgets and switches.

use std::time::Duration;

/// Options of [`crate::Index::with_config`]. Every cost a regex controls is bounded by one of
/// these limits; running over one is [`crate::ErrorKind::OverBudget`], so a caller can fall
/// back to a lazier engine.
#[derive(Clone, Debug)]
pub struct Config {
    pub(crate) max_states: usize,
    pub(crate) max_work: u64,
    pub(crate) max_time: Option<Duration>,
    pub(crate) dfa_size_limit: usize,
    pub(crate) minimize: bool,
    pub(crate) parallel: bool,
    pub(crate) literals: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_states: 100_000,
            max_work: 2_000_000_000,
            max_time: None,
            dfa_size_limit: 64 << 20,
            minimize: true,
            parallel: true,
            literals: true,
        }
    }
}

impl Config {
    /// The defaults: 100 000 token-level states, 2·10⁹ work units, no time limit, a 64 MiB
    /// byte DFA, minimization, parallel walks and the literal fast path on.
    pub fn new() -> Config {
        Config::default()
    }

    /// The most token-level states the index may have (default 100 000).
    pub fn max_states(mut self, n: usize) -> Config {
        self.max_states = n;
        self
    }

    /// The most work units (trie nodes visited during the walks; deterministic, unlike time)
    /// the build may spend (default 2·10⁹).
    pub fn max_work(mut self, n: u64) -> Config {
        self.max_work = n;
        self
    }

    /// A wall-clock limit for the build (default none). Checked between walks, so the
    /// build may overrun it by one walk (at most one pass over the token trie).
    pub fn max_time(mut self, d: Option<Duration>) -> Config {
        self.max_time = d;
        self
    }

    /// The byte limit on the byte-level NFA and DFA built by regex-automata (default 64 MiB).
    pub fn dfa_size_limit(mut self, bytes: usize) -> Config {
        self.dfa_size_limit = bytes;
        self
    }

    /// Whether to minimize the byte-level DFA (Hopcroft, in regex-automata); default on.
    /// Off makes the build of huge regexes cheaper at the cost of more states.
    pub fn minimize(mut self, yes: bool) -> Config {
        self.minimize = yes;
        self
    }

    /// Whether to walk the roots of one BFS level in parallel with rayon (default on).
    pub fn parallel(mut self, yes: bool) -> Config {
        self.parallel = yes;
        self
    }

    /// Whether to walk deterministic sequences (literals) as one ghost symbol (default on).
    /// The result is the same either way; off exists to test and measure that path.
    pub fn literals(mut self, yes: bool) -> Config {
        self.literals = yes;
        self
    }
}
