//! Both implementations pass the embedded conformance suite.

use lexer::conformance::{run, suites};
use lexer::{AutomataLexer, Lexer};

#[test]
fn suites_parse_and_names_are_unique() {
    let s = suites();
    assert!(s.len() >= 20, "{}", s.len());
    let mut names: Vec<_> = s.iter().map(|s| s.name.clone()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), s.len());
}

#[cfg(feature = "derivre")]
#[test]
fn derivre_passes_everything() {
    let report = run(&mut |spec| Ok(Box::new(lexer::DerivreLexer::new(spec)?) as Box<dyn Lexer>));
    assert!(report.is_ok(), "{report}");
    assert!(report.skipped.is_empty(), "{report}");
    assert!(report.forced_partial.is_empty(), "{:?}", report.forced_partial);
    assert!(report.passed > 50, "{report}");
}

#[test]
fn automata_passes_or_skips_only_extended_suites() {
    let report = run(&mut |spec| Ok(Box::new(AutomataLexer::new(spec)?) as Box<dyn Lexer>));
    assert!(report.is_ok(), "{report}");
    let extended =
        suites().iter().filter(|s| s.compile_error.is_none() && s.spec.uses_extended()).count();
    assert_eq!(report.skipped.len(), extended, "{report}");
    assert!(report.passed > 40, "{report}");
}

#[test]
fn checked_wrapper_passes_too() {
    let report = run(&mut |spec| {
        Ok(Box::new(lexer::Checked::new(AutomataLexer::new(spec)?)) as Box<dyn Lexer>)
    });
    assert!(report.is_ok(), "{report}");
}

/// A minimal lexer that supports literal lexemes only and never forces bytes (the trait's
/// defaults): every suite it cannot build is skipped, not failed, and `forced_byte` = `None`
/// passes the forced-bytes cases (recorded as partial).
#[test]
fn literal_only_lexer_skips_what_it_does_not_support() {
    use lexer::{Error, ErrorKind, LexemeSet, LexerSpec, RegexSpec, StateFlags, StateId};

    /// States: (lexeme, bytes matched so far) pairs, interned; state 0 is DEAD.
    struct Literals {
        lits: Vec<Vec<u8>>,
        states: Vec<Vec<(usize, usize)>>,
        sets: Vec<LexemeSet>,
        possible: Vec<LexemeSet>,
    }
    impl Literals {
        fn intern(&mut self, mut st: Vec<(usize, usize)>) -> StateId {
            st.sort();
            if st.is_empty() {
                return StateId::DEAD;
            }
            if let Some(i) = self.states.iter().position(|s| *s == st) {
                return StateId(i as u32);
            }
            let acc = st.iter().filter(|&&(l, n)| self.lits[l].len() == n).map(|&(l, _)| l);
            self.sets.push(acc.map(lexer::LexemeIdx::new).collect());
            self.possible.push(st.iter().map(|&(l, _)| lexer::LexemeIdx::new(l)).collect());
            self.states.push(st);
            StateId((self.states.len() - 1) as u32)
        }
    }
    impl Lexer for Literals {
        fn num_lexemes(&self) -> usize {
            self.lits.len()
        }
        fn num_states(&self) -> usize {
            self.states.len()
        }
        fn start_state(&mut self, allowed: &LexemeSet) -> Result<StateId, Error> {
            let st = allowed.iter().map(|l| (l.as_usize(), 0)).collect();
            Ok(self.intern(st))
        }
        fn advance(&mut self, s: StateId, b: u8) -> Result<StateId, Error> {
            let st = self.states.get(s.as_usize()).cloned().unwrap_or_default();
            let next = st
                .into_iter()
                .filter(|&(l, n)| self.lits[l].get(n) == Some(&b))
                .map(|(l, n)| (l, n + 1))
                .collect();
            Ok(self.intern(next))
        }
        fn flags(&self, s: StateId) -> StateFlags {
            match self.sets.get(s.as_usize()) {
                Some(a) if !a.is_empty() => {
                    let ext =
                        self.states[s.as_usize()].iter().any(|&(l, n)| self.lits[l].len() > n);
                    let f = StateFlags::ACCEPTING;
                    if ext {
                        f
                    } else {
                        f | StateFlags::NO_EXTENSION
                    }
                }
                _ => StateFlags::empty(),
            }
        }
        fn accepting(&self, s: StateId) -> &LexemeSet {
            static EMPTY: LexemeSet = LexemeSet::new();
            self.sets.get(s.as_usize()).unwrap_or(&EMPTY)
        }
        fn possible(&self, s: StateId) -> &LexemeSet {
            static EMPTY: LexemeSet = LexemeSet::new();
            self.possible.get(s.as_usize()).unwrap_or(&EMPTY)
        }
        fn num_bytes(&self) -> usize {
            0
        }
    }
    let make = |spec: &LexerSpec| -> Result<Box<dyn Lexer>, Error> {
        let mut lits = Vec::new();
        for l in &spec.lexemes {
            match &l.regex {
                RegexSpec::Literal(s) if !s.is_empty() && !l.kind.is_skip() => {
                    lits.push(s.as_bytes().to_vec())
                }
                _ => {
                    return Err(
                        ErrorKind::Unsupported { lexeme: l.name.clone(), feature: "regex" }.into()
                    )
                }
            }
        }
        let dead = vec![(usize::MAX, 0)];
        Ok(Box::new(Literals {
            lits,
            states: vec![dead],
            sets: vec![LexemeSet::new()],
            possible: vec![LexemeSet::new()],
        }))
    };
    let report = run(&mut |spec| make(spec));
    assert!(report.is_ok(), "{report}");
    assert!(!report.skipped.is_empty(), "{report}");
    assert!(report.passed > 0, "{report}");
}
