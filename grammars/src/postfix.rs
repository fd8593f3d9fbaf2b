//! Stacked postfix operators (`x+*?`, `x{2}{3}`), shared by the Lark and GBNF parsers.
//!
//! `?`, `*` and `+` on top of one another collapse into one repeat (`x++` is `x+`, `x+?` is
//! `x*`): nesting them would give the lexer nested stars whose derivatives blow up (a fuzzed
//! GBNF rule with `.` and 120 `+` took over 10 s). Counted repeats stay nested, at most
//! [`MAX_POSTFIX`] levels deep on one atom.

/// The most nested repeats on one atom (`x{2}{3}{4}...`); beyond, an [`ErrorKind::Limit`]
/// error.
///
/// [`ErrorKind::Limit`]: crate::ErrorKind::Limit
pub const MAX_POSTFIX: usize = 8;

/// The message of the [`MAX_POSTFIX`] limit error, shared by both parsers.
pub(crate) fn too_deep_message() -> String {
    format!("more than {MAX_POSTFIX} nested repeats on one item")
}

/// Bounds of `(x{a,b}){c,d}` as one repeat `x{min,max}`, when both are `?`, `*` or `+`.
pub(crate) fn merge(
    inner: (u32, Option<u32>),
    outer: (u32, Option<u32>),
) -> Option<(u32, Option<u32>)> {
    let simple = |(lo, hi): (u32, Option<u32>)| lo <= 1 && matches!(hi, None | Some(1));
    if !simple(inner) || !simple(outer) {
        return None;
    }
    let max = if inner.1 == Some(1) && outer.1 == Some(1) { Some(1) } else { None };
    Some((inner.0 * outer.0, max))
}

#[cfg(test)]
mod tests {
    use super::merge;

    #[test]
    fn stacked_operators_collapse() {
        let (q, s, p) = ((0, Some(1)), (0, None), (1, None));
        assert_eq!(merge(p, p), Some(p)); // x++ = x+
        assert_eq!(merge(p, q), Some(s)); // x+? = x*
        assert_eq!(merge(q, p), Some(s)); // x?+ = x*
        assert_eq!(merge(q, q), Some(q)); // x?? = x?
        assert_eq!(merge(s, p), Some(s)); // x*+ = x*
        assert_eq!(merge((2, Some(3)), p), None); // x{2,3}+ stays nested
    }
}
