//! Regexes parsed once per process: a `RegexSpec::Regex` string is parsed by `regex_syntax`
//! every time a grammar's lexer is built (derivre's own path), which made a `date-time`
//! format (its leap-second relations are ~100 small regexes) cost 11 of a schema's 15 M
//! compile instructions. Here the parse is translated into derivre's structural AST and
//! kept per process, so a regex that comes back (formats, common patterns) is only mapped
//! into the new grammar's expressions.
//!
//! The translation covers what maps one to one (literals, byte classes, ASCII classes,
//! concatenation, alternation, repetition, groups); a regex with anything else (anchors
//! and other look-arounds, non-ASCII classes, a group named `stop`, which derivre reads as
//! a lookahead) is left to derivre's own parse, as before.

use std::sync::{Arc, Mutex};

use derivre::RegexAst;
use hashbrown::HashMap;
use regex_syntax::hir::{Class, Hir, HirKind};

/// Memory the memo may hold (approximate bytes of ASTs); cleared past it.
const MAX_BYTES: usize = 16 << 20;
/// Regexes longer than this are not kept (each is parsed as before).
const MAX_LEN: usize = 16 << 10;
/// Approximate bytes per AST node, for [`MAX_BYTES`].
const NODE_BYTES: usize = 64;

type Memo = (HashMap<String, Option<Arc<RegexAst>>>, usize);

static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

/// The structural AST of `rx` (parsed as derivre parses it: `regex_syntax`'s default
/// parser, the regex anchored at both ends), from the process's memo; `None` when the
/// regex has something the translation leaves to derivre (or does not parse: derivre's
/// parse then reports the error).
pub(crate) fn structural(rx: &str) -> Option<Arc<RegexAst>> {
    if rx.len() > MAX_LEN {
        return None;
    }
    let lock = || MEMO.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(hit) = lock().as_ref().and_then(|(m, _)| m.get(rx)) {
        return hit.clone();
    }
    let mut nodes = 0usize;
    let ast = regex_syntax::ParserBuilder::new()
        .build()
        .parse(rx)
        .ok()
        .and_then(|hir| to_ast(&hir, &mut nodes))
        .map(Arc::new);
    let mut guard = lock();
    let (map, bytes) = guard.get_or_insert_with(|| (HashMap::new(), 0));
    let size = rx.len() + nodes * NODE_BYTES;
    if *bytes + size > MAX_BYTES {
        map.clear();
        *bytes = 0;
    }
    if map.insert(rx.to_string(), ast.clone()).is_none() {
        *bytes += size;
    }
    ast
}

fn to_ast(h: &Hir, nodes: &mut usize) -> Option<RegexAst> {
    *nodes += 1;
    let all = |v: &[Hir], nodes: &mut usize| -> Option<Vec<RegexAst>> {
        v.iter().map(|h| to_ast(h, nodes)).collect()
    };
    Some(match h.kind() {
        HirKind::Empty => RegexAst::EmptyString,
        HirKind::Literal(lit) => RegexAst::ByteLiteral(lit.0.to_vec()),
        HirKind::Class(Class::Bytes(c)) => {
            byte_set(c.ranges().iter().map(|r| (r.start(), r.end())))
        }
        HirKind::Class(Class::Unicode(c)) => {
            if c.ranges().iter().any(|r| r.end() > '\x7F') {
                return None;
            }
            byte_set(c.ranges().iter().map(|r| (r.start() as u8, r.end() as u8)))
        }
        HirKind::Repetition(r) => {
            RegexAst::Repeat(Box::new(to_ast(&r.sub, nodes)?), r.min, r.max.unwrap_or(u32::MAX))
        }
        // derivre reads a group named `stop` as a lookahead.
        HirKind::Capture(c) if c.name.as_deref() == Some("stop") => return None,
        HirKind::Capture(c) => to_ast(&c.sub, nodes)?,
        HirKind::Concat(v) => RegexAst::Concat(all(v, nodes)?),
        HirKind::Alternation(v) => RegexAst::Or(all(v, nodes)?),
        HirKind::Look(_) => return None,
    })
}

/// A byte class as derivre wants it (`Byte` for one byte, `NoMatch` for none).
fn byte_set(ranges: impl Iterator<Item = (u8, u8)>) -> RegexAst {
    let ranges: Vec<(u8, u8)> = ranges.collect();
    crate::derivre_lexer::byte_set(&ranges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use derivre::RegexBuilder;

    /// The structural AST and derivre's own parse give the same expression (derivre
    /// hash-conses expressions: the same node when the same language is built the same way)
    /// or, where the shapes differ, the same strings on samples.
    #[test]
    fn the_structural_ast_matches_derivres_parse() {
        let cases = [
            "abc",
            "[0-9]{4}-(?:0[1-9]|1[0-2])",
            "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})",
            "[a-z]*",
            "(a|bc)+x?",
            "[^\"\\\\]{0,12}",
            "(?i)abc",
            "",
        ];
        for rx in cases {
            let mut b = RegexBuilder::new();
            let theirs = b.mk(&RegexAst::Regex(rx.into())).unwrap();
            match structural(rx) {
                Some(ast) => {
                    let ours = b.mk(&ast).unwrap();
                    assert_eq!(ours, theirs, "{rx}");
                }
                // Only non-ASCII classes are left to derivre among these.
                None => assert!(rx.contains("[^"), "{rx} not translated"),
            }
        }
    }

    #[test]
    fn anchors_and_unicode_classes_are_left_to_derivre() {
        assert!(structural("^abc$").is_none());
        assert!(structural("é|[α-ω]").is_none());
        assert!(structural("\\bword").is_none());
        assert!(structural("(").is_none());
        assert!(structural("a(?P<stop>b)").is_none());
        assert!(structural("a(?P<name>b)").is_some());
        // Repeated: from the memo, the same answer.
        assert!(structural("[0-9]+").is_some());
        assert!(structural("[0-9]+").is_some());
    }
}
