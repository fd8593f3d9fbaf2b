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
