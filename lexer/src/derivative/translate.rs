//! The lexer specification ([`RegexSpec`]) translated into derivre expressions: literals
//! joined into one spelling, unions without two spellings of one string (derivre's prefix
//! tree panics on those), byte sets, and the process-wide structural parse of regexes
//! (`crate::parsed`) where it applies.

use super::*;

/// Translates one node of a containment query straight into an expression store (no
/// builder); `None` for `json_quote` and for a regex that does not parse.
pub(super) fn translate_raw(
    x: &mut ExprSet,
    node: &RegexSpec,
    mut args: Vec<ExprRef>,
) -> Option<ExprRef> {
    Some(match node {
        RegexSpec::Literal(s) => x.mk_literal(s),
        RegexSpec::Bytes(s) => x.mk_byte_literal(s),
        RegexSpec::ByteSet(ranges) => match byte_set(ranges) {
            RegexAst::Byte(b) => x.mk_byte(b),
            RegexAst::ByteSet(set) => x.mk_byte_set(&set),
            _ => ExprRef::NO_MATCH,
        },
        RegexSpec::Regex(rx) => {
            x.parse_expr(regex_syntax::ParserBuilder::new().build(), rx, false).ok()?
        }
        RegexSpec::Concat(_) => x.mk_concat_vec(&args),
        RegexSpec::Or(_) => mk_union(x, &args),
        RegexSpec::And(_) => x.mk_and(&mut args),
        RegexSpec::Not(_) => x.mk_not(args[0]),
        RegexSpec::Repeat { min, max, .. } => x.mk_repeat(args[0], *min, max.unwrap_or(u32::MAX)),
        RegexSpec::MultipleOf { divisor, scale } => {
            x.mk_remainder_is(*divisor, *divisor, *scale, false)
        }
        RegexSpec::LookAhead(_) => x.mk_lookahead(args[0], 0),
        RegexSpec::Empty => ExprRef::EMPTY_STRING,
        RegexSpec::NoMatch => ExprRef::NO_MATCH,
        RegexSpec::JsonQuote { .. } => return None,
    })
}

/// The union of `args` ([`distinct_alternatives`] first).
pub(super) fn mk_union(x: &mut ExprSet, args: &[ExprRef]) -> ExprRef {
    x.mk_or(&mut distinct_alternatives(x, args))
}

/// `args` for a union, without the alternatives that spell the same concatenation as an
/// earlier one (the same bytes, then the same expressions) under another node: `"b" "aa"`
/// and `"baa"` (Lark `A: "b" "aa" | "baa"`). derivre (0.3.13) hash-conses nodes, not
/// spellings, and its prefix tree for a union whose alternatives share a first byte
/// panics on such a pair. Nested unions are flattened first, as derivre does.
pub(super) fn distinct_alternatives(x: &ExprSet, args: &[ExprRef]) -> Vec<ExprRef> {
    let mut flat = Vec::with_capacity(args.len());
    for &a in args {
        if x.get_tag(a) as u8 == tag::OR {
            flat.extend_from_slice(x.get_args(a));
        } else {
            flat.push(a);
        }
    }
    if flat.len() < 2 {
        return flat;
    }
    // Sorted by spelling (compared lazily, as derivre sorts them), equal spellings adjacent.
    flat.sort_unstable_by(|&a, &b| x.iter_concat_bytes(a).cmp(x.iter_concat_bytes(b)));
    flat.dedup_by(|a, b| x.iter_concat_bytes(*a).eq(x.iter_concat_bytes(*b)));
    flat
}

/// Whether byte `c` stands for itself in a JSON string quoted by derivre, the only way it
/// writes it there (not a control character, DEL, quote or backslash).
pub(super) fn plain_in_json(c: u8) -> bool {
    c >= 0x20 && c != 0x7f && c != b'"' && c != b'\\'
}

/// The bytes of `expr` JSON-quoted (with the quotes unless `raw`) when it is a literal that
/// derivre's quoting writes one way only (every byte [`plain_in_json`]; it passes those
/// through): object keys are such literals, and derivre's quoting walk took 5 % of
/// MaskBench's compile instructions.
fn plain_quoted(expr: &RegexSpec, raw: bool) -> Option<Vec<u8>> {
    let lit = expr.literal_bytes().filter(|l| l.iter().all(|&c| plain_in_json(c)))?;
    Some(if raw { lit.into_owned() } else { [&b"\""[..], &lit, b"\""].concat() })
}

/// Translates one spec node into derivre, given its children's expressions.
pub(super) fn translate(
    b: &mut RegexBuilder,
    lexeme: &str,
    node: &RegexSpec,
    args: Vec<ExprRef>,
) -> Result<ExprRef, Error> {
    let refs = |args: Vec<ExprRef>| args.into_iter().map(RegexAst::ExprRef).collect::<Vec<_>>();
    let one = |args: &[ExprRef]| Box::new(RegexAst::ExprRef(args[0]));
    let ast = match node {
        RegexSpec::Literal(s) => RegexAst::Literal(s.clone()),
        RegexSpec::Bytes(s) => RegexAst::ByteLiteral(s.clone()),
        RegexSpec::ByteSet(ranges) => byte_set(ranges),
        RegexSpec::Regex(rx) => {
            // Parsed once per process where the translation covers the regex.
            let parsed = crate::parsed::parsed(rx);
            let ast = match &parsed.ast {
                Some(ast) => ast.as_ref(),
                None => &RegexAst::Regex(rx.clone()),
            };
            return b.mk(ast).map_err(|e| {
                ErrorKind::Regex { lexeme: lexeme.to_string(), message: e.to_string() }.into()
            });
        }
        // Adjacent literal parts as one literal, so that one string has one spelling
        // whether written whole or in pieces (`"baa"`, `"b" "aa"`): derivre hash-conses
        // nodes, not spellings, and a union meeting two spellings of one string, at build
        // or in a derivative (`[ab] "b" "aa" | "abaa"` after `a`), panicked in derivre.
        RegexSpec::Concat(parts) => {
            let mut out: Vec<RegexAst> = Vec::with_capacity(parts.len());
            let mut run: Vec<u8> = Vec::new();
            for (part, &e) in parts.iter().zip(&args) {
                match part.literal_bytes() {
                    Some(bytes) => run.extend_from_slice(&bytes),
                    None => {
                        if !run.is_empty() {
                            out.push(RegexAst::ByteLiteral(std::mem::take(&mut run)));
                        }
                        out.push(RegexAst::ExprRef(e));
                    }
                }
            }
            if !run.is_empty() {
                out.push(RegexAst::ByteLiteral(run));
            }
            RegexAst::Concat(out)
        }
        // Plain literals and regexes are spelled one way each (hash-consed): a union of
        // those alone (a JSON `enum`) needs no check.
        RegexSpec::Or(alts)
            if alts.iter().all(|a| {
                matches!(a, RegexSpec::Literal(_) | RegexSpec::Bytes(_) | RegexSpec::Regex(_))
            }) =>
        {
            RegexAst::Or(refs(args))
        }
        RegexSpec::Or(_) => RegexAst::Or(refs(distinct_alternatives(b.exprset(), &args))),
        RegexSpec::And(_) => RegexAst::And(refs(args)),
        RegexSpec::Not(_) => RegexAst::Not(one(&args)),
        RegexSpec::Repeat { min, max, .. } => {
            // validate() has checked min <= max (derivre panics otherwise).
            RegexAst::Repeat(one(&args), *min, max.unwrap_or(u32::MAX))
        }
        RegexSpec::JsonQuote { expr, raw, .. } if let Some(bytes) = plain_quoted(expr, *raw) => {
            RegexAst::ByteLiteral(bytes)
        }
        RegexSpec::JsonQuote { raw, allowed_escapes, .. } => RegexAst::JsonQuote(
            one(&args),
            JsonQuoteOptions {
                allowed_escapes: allowed_escapes
                    .clone()
                    .unwrap_or_else(|| "nrbtf\\\"u".to_string()),
                raw_mode: *raw,
            },
        ),
        // validate() has checked divisor > 0.
        RegexSpec::MultipleOf { divisor, scale } => RegexAst::MultipleOf(*divisor, *scale),
        RegexSpec::LookAhead(_) => RegexAst::LookAhead(one(&args)),
        RegexSpec::Empty => RegexAst::EmptyString,
        RegexSpec::NoMatch => RegexAst::NoMatch,
    };
    b.mk(&ast).map_err(|e| {
        ErrorKind::InvalidSpec { lexeme: lexeme.to_string(), message: e.to_string() }.into()
    })
}

#[cfg(test)]
mod quote_tests {
    use super::*;

    /// The strings of `e` over `alphabet` up to `n` bytes (derivatives byte by byte).
    fn strings(x: &mut ExprSet, d: &mut DerivCache, e: ExprRef, n: usize) -> Vec<Vec<u8>> {
        let alphabet: Vec<u8> = (0..=255u8).collect();
        let mut out = Vec::new();
        let mut todo = vec![(e, Vec::new())];
        while let Some((e, s)) = todo.pop() {
            if x.is_nullable(e) {
                out.push(s.clone());
            }
            if s.len() < n {
                for &b in &alphabet {
                    let next = d.derivative(x, e, b);
                    if next != ExprRef::NO_MATCH {
                        todo.push((next, [&s[..], &[b]].concat()));
                    }
                }
            }
        }
        out.sort();
        out
    }

    /// A plain literal's quoted bytes are exactly the strings of derivre's quoting (one
    /// string); a literal with a byte JSON may write two ways is left to derivre, which
    /// gives the other spellings too.
    #[test]
    fn plain_literals_are_quoted_as_derivre_quotes_them() {
        for raw in [false, true] {
            let printable: String =
                (0x20u8..0x7f).map(char::from).filter(|c| !"\"\\".contains(*c)).collect();
            let keys =
                ["name", "", "a b", "é😀", "x\u{7f}y", "tab\there", "q\"", "b\\s", &printable];
            for key in keys {
                let mut b = RegexBuilder::new();
                let lit = b.mk(&RegexAst::Literal(key.to_string())).unwrap();
                let spec = RegexSpec::JsonQuote {
                    expr: Box::new(RegexSpec::Literal(key.to_string())),
                    raw,
                    allowed_escapes: None,
                };
                let ours = translate(&mut b, "k", &spec, vec![lit]).unwrap();
                let options =
                    JsonQuoteOptions { allowed_escapes: "nrbtf\\\"u".to_string(), raw_mode: raw };
                let theirs =
                    b.mk(&RegexAst::JsonQuote(Box::new(RegexAst::ExprRef(lit)), options)).unwrap();
                let mut x = b.into_exprset();
                let mut d = DerivCache::new();
                let n = key.len() * 6 + 2;
                let (a, t) = (strings(&mut x, &mut d, ours, n), strings(&mut x, &mut d, theirs, n));
                assert_eq!(a, t, "{key:?} raw {raw}");
                if key.bytes().all(plain_in_json) {
                    assert_eq!(t.len(), 1, "{key:?}: one spelling");
                }
            }
        }
    }
}
