//! Byte classes: a partition of the 256 byte values such that no lexeme of a spec can tell
//! two bytes of one class apart. The transition table has one column per class.
//!
//! The classes only index the table: derivatives are always taken on the raw byte that
//! missed in the table, and the result is stored for the whole class. That is sound because
//! every atomic byte set of every expression (and everything the engine derives from them:
//! complements, intersections, JSON escapes) is a union of classes.

use crate::{LexerSpec, RegexSpec};

/// A map from byte to class index; classes are intervals of byte values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteClasses {
    map: [u8; 256],
    num_classes: usize,
}

impl ByteClasses {
    /// Every byte in its own class.
    pub fn singletons() -> Self {
        let mut b = Boundaries::default();
        b.all_singletons();
        b.finish()
    }

    /// The coarsest interval partition that respects every byte set in `spec`. A regex that
    /// does not parse is ignored here (compiling it reports the error).
    pub fn for_spec(spec: &LexerSpec) -> Self {
        let mut b = Boundaries::default();
        for l in &spec.lexemes {
            let mut todo = vec![&l.regex];
            while let Some(e) = todo.pop() {
                todo.extend(e.children());
                b.add_spec_node(e);
            }
        }
        b.finish()
    }

    /// The class of `byte`.
    #[inline(always)]
    pub fn class_of(&self, byte: u8) -> usize {
        self.map[byte as usize] as usize
    }

    /// The number of classes (1 to 256).
    pub fn num_classes(&self) -> usize {
        self.num_classes
    }

    /// The byte-to-class map.
    pub fn map(&self) -> &[u8; 256] {
        &self.map
    }

    /// Builds classes from "byte `b` and byte `b + 1` must be in different classes" flags.
    pub(crate) fn from_boundaries(boundary_after: &[bool; 256]) -> Self {
        Boundaries { after: *boundary_after }.finish()
    }
}

/// `after[b]`: a class ends at byte `b`.
struct Boundaries {
    after: [bool; 256],
}

impl Default for Boundaries {
    fn default() -> Self {
        Boundaries { after: [false; 256] }
    }
}

/// The class boundaries regex `rx` needs (none if it does not parse), through the
/// process's parse of each regex ([`crate::parsed`]): grammars of one kind repeat the same
/// regexes (JSON strings, numbers), and parsing them here was a third of building a
/// MaskBench schema's lexer.
fn regex_boundaries(rx: &str) -> [bool; 256] {
    crate::parsed::parsed(rx).boundaries
}

impl Boundaries {
    fn range(&mut self, lo: u8, hi: u8) {
        if lo > 0 {
            self.after[lo as usize - 1] = true;
        }
        self.after[hi as usize] = true;
    }

    fn all_singletons(&mut self) {
        self.after = [true; 256];
    }

    fn json_quote(&mut self) {
        self.range(0x00, 0x1F);
        for &b in b"\"\\/\x7F0123456789abcdefABCDEFnrtu" {
            self.range(b, b);
        }
    }

    fn ascii_singletons(&mut self) {
        for b in 0..=0x7f {
            self.after[b] = true;
        }
    }

    fn add_spec_node(&mut self, e: &RegexSpec) {
        match e {
            RegexSpec::Literal(s) => s.bytes().for_each(|b| self.range(b, b)),
            RegexSpec::Bytes(s) => s.iter().for_each(|&b| self.range(b, b)),
            RegexSpec::ByteSet(r) => r.iter().for_each(|&(lo, hi)| {
                if lo <= hi {
                    self.range(lo, hi)
                }
            }),
            RegexSpec::Regex(rx) => {
                let cut = regex_boundaries(rx);
                for (a, c) in self.after.iter_mut().zip(cut.iter()) {
                    *a |= *c;
                }
            }
            // JSON quoting (derivre's `json_quote`) keeps the body's byte sets minus control
            // characters, `"`, `\` and DEL (the body's own sets are visited as children),
            // and adds escapes built from `\`, `"`, the letters `bfnrtu`, `u00` and hex
            // digits (two per quoted control character, either case): those bytes as
            // singletons plus the control block as one range refine every set it builds.
            // All ASCII singletons (the earlier choice) doubled the table's width and the
            // cold transitions of every state of a JSON grammar.
            RegexSpec::JsonQuote { .. } => self.json_quote(),
            // multiple_of reads digits, `.` and signs: ASCII singletons are a sound (if fine)
            // refinement.
            RegexSpec::MultipleOf { .. } => self.ascii_singletons(),
            // These combine their children's byte sets without adding new ones.
            RegexSpec::Concat(_)
            | RegexSpec::Or(_)
            | RegexSpec::And(_)
            | RegexSpec::Not(_)
            | RegexSpec::Repeat { .. }
            | RegexSpec::LookAhead(_)
            | RegexSpec::Empty
            | RegexSpec::NoMatch => {}
        }
    }

    fn finish(self) -> ByteClasses {
        let mut map = [0u8; 256];
        let mut class = 0usize;
        for (b, m) in map.iter_mut().enumerate() {
            *m = class as u8;
            if self.after[b] && b < 255 {
                class += 1;
            }
        }
        ByteClasses { map, num_classes: class + 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LexemeKind;

    #[test]
    fn intervals() {
        let mut spec = LexerSpec::new();
        spec.add("d", RegexSpec::regex("[0-9]+"), LexemeKind::Greedy);
        spec.add("x", RegexSpec::literal("x"), LexemeKind::Greedy);
        let c = ByteClasses::for_spec(&spec);
        // [0, '0'), ['0', '9'], ('9', 'x'), 'x', ('x', 255]
        assert_eq!(c.num_classes(), 5);
        assert_eq!(c.class_of(b'0'), c.class_of(b'9'));
        assert_ne!(c.class_of(b'9'), c.class_of(b':'));
        assert_eq!(c.class_of(0), c.class_of(b'/'));
        assert_eq!(ByteClasses::singletons().num_classes(), 256);
    }
}
