//! Numbers: exact decimals from JSON numbers, and regexes for bounds over the decimal
//! (exponent-free) JSON number syntax.
//!
//! Every regex here describes *exactly* the exponent-free JSON numbers (`-?(0|[1-9][0-9]*)
//! (\.[0-9]+)?`) whose value satisfies the constraint, with one exception taken from
//! LLGuidance: the spellings of negative zero (`-0`, `-0.0`) are left out where the lower
//! bound is 0 or more (`minimum: 0` spells no negative number) and for an exact zero
//! (`const: 0`, `enum: [0]` are the literal `0`); below a negative or no lower bound they
//! stay (LLGuidance spells the negative side as `-` and a range from 0).

use crate::{Error, ErrorKind};
use lexer::RegexSpec;

/// Exponent-free nonnegative JSON numbers.
pub(crate) const NONNEG: &str = r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?";
/// Exponent-free JSON numbers.
pub(crate) const NUMBER_NOEXP: &str = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?";
/// JSON numbers with an exponent.
pub(crate) const NUMBER_EXP: &str = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?[eE][+-]?[0-9]+";
/// Exponent-free JSON numbers whose value is an integer.
pub(crate) const INTEGER: &str = r"-?(?:0|[1-9][0-9]*)(?:\.0+)?";
/// Integers written with a zero fraction (`1.0`, `-3.00`).
pub(crate) const INT_DOT0: &str = r"-?(?:0|[1-9][0-9]*)\.0+";
/// `r` without the integers written with a zero fraction (`1.0`).
pub(crate) fn without_zero_fraction(r: RegexSpec) -> RegexSpec {
    RegexSpec::And(vec![r, RegexSpec::Not(Box::new(RegexSpec::Regex(INT_DOT0.into())))])
}
/// Integers without a fraction.
pub(crate) const INT_PLAIN: &str = r"-?(?:0|[1-9][0-9]*)";

/// An exact decimal: sign, integer digits (no leading zeros, "0" for zero), fraction digits
/// (no trailing zeros).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Decimal {
    pub neg: bool,
    pub int: String,
    pub frac: String,
}

impl Decimal {
    /// From a JSON number's text (as serde_json prints it).
    pub fn parse(text: &str) -> Result<Decimal, Error> {
        let bad = || Error::new(ErrorKind::Value, format!("bad number {text}"));
        let (neg, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let (mant, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().map_err(|_| bad())?),
            None => (rest, 0),
        };
        if !(-400..=400).contains(&exp) {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("number {text}: exponent out of range"),
            ));
        }
        let (ip, fp) = match mant.find('.') {
            Some(i) => (&mant[..i], &mant[i + 1..]),
            None => (mant, ""),
        };
        if ip.is_empty()
            || !ip.bytes().all(|b| b.is_ascii_digit())
            || !fp.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let mut digits: String = format!("{ip}{fp}");
        let mut point = ip.len() as i64 + exp; // digits before the point
        if point < 0 {
            digits = format!("{}{digits}", "0".repeat((-point) as usize));
            point = 0;
        }
        if point as usize > digits.len() {
            digits.push_str(&"0".repeat(point as usize - digits.len()));
        }
        let (i, f) = digits.split_at(point as usize);
        let int = i.trim_start_matches('0');
        let int = if int.is_empty() { "0".to_string() } else { int.to_string() };
        let frac = f.trim_end_matches('0').to_string();
        let is_zero = int == "0" && frac.is_empty();
        Ok(Decimal { neg: neg && !is_zero, int, frac })
    }

    /// From a serde_json number.
    pub fn from_json(n: &serde_json::Number) -> Result<Decimal, Error> {
        Decimal::parse(&n.to_string())
    }

    pub fn is_zero(&self) -> bool {
        self.int == "0" && self.frac.is_empty()
    }

    pub fn abs(&self) -> Decimal {
        Decimal { neg: false, ..self.clone() }
    }

    pub fn is_integer(&self) -> bool {
        self.frac.is_empty()
    }
}

fn esc_digits(s: &str) -> String {
    s.to_string()
}

/// `[lo-hi]` for digits.
fn drange(lo: u8, hi: u8) -> String {
    if lo == hi {
        format!("{}", lo)
    } else {
        format!("[{lo}-{hi}]")
    }
}

fn alt(v: Vec<String>) -> String {
    if v.is_empty() {
        // matches nothing
        "[^\\x00-\\x{10FFFF}]".to_string()
    } else {
        format!("(?:{})", v.join("|"))
    }
}

fn digit(s: &str, i: usize) -> u8 {
    s.as_bytes()[i] - b'0'
}

/// Integer strings (no leading zeros) greater than `d`.
fn int_gt(d: &str) -> Vec<String> {
    let n = d.len();
    let mut out = vec![format!("[1-9][0-9]{{{n},}}")];
    for i in 0..n {
        let di = digit(d, i);
        if di < 9 {
            out.push(format!("{}{}[0-9]{{{}}}", esc_digits(&d[..i]), drange(di + 1, 9), n - i - 1));
        }
    }
    out
}

/// Integer strings (no leading zeros) less than `d`.
fn int_lt(d: &str) -> Vec<String> {
    let n = d.len();
    let mut out = Vec::new();
    if n >= 2 {
        out.push(format!("0|[1-9][0-9]{{0,{}}}", n - 2));
    }
    for i in 0..n {
        let di = digit(d, i);
        let lo = if i == 0 && n > 1 { 1 } else { 0 };
        if di > lo {
            out.push(format!(
                "{}{}[0-9]{{{}}}",
                esc_digits(&d[..i]),
                drange(lo, di - 1),
                n - i - 1
            ));
        }
    }
    out
}

const FRAC_OPT: &str = r"(?:\.[0-9]+)?";

/// Fraction digit strings D (nonempty) with 0.D >= 0.s (or > when `strict`); `s` has no
/// trailing zeros.
fn frac_ge(s: &str, strict: bool) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..s.len() {
        let di = digit(s, i);
        if di < 9 {
            out.push(format!("{}{}[0-9]*", &s[..i], drange(di + 1, 9)));
        }
    }
    if strict {
        out.push(format!("{s}[0-9]*[1-9][0-9]*"));
    } else if s.is_empty() {
        out.push("[0-9]+".to_string());
    } else {
        out.push(format!("{s}[0-9]*"));
    }
    out
}

/// Fraction digit strings D (nonempty) with 0.D <= 0.s (or < when `strict`).
fn frac_le(s: &str, strict: bool) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..s.len() {
        let di = digit(s, i);
        if di > 0 {
            out.push(format!("{}{}[0-9]*", &s[..i], drange(0, di - 1)));
        }
    }
    let last = if strict { s.len().saturating_sub(1) } else { s.len() };
    for i in 1..=last {
        out.push(format!("{}0*", &s[..i]));
    }
    if s.is_empty() && !strict {
        out.push("0+".to_string());
    }
    out
}

/// Nonnegative numbers x with x >= d (x > d if strict); d nonnegative.
fn ge_nonneg(d: &Decimal, strict: bool) -> String {
    let mut out: Vec<String> =
        int_gt(&d.int).into_iter().map(|x| format!("(?:{x}){FRAC_OPT}")).collect();
    let mut tail = vec![];
    if d.frac.is_empty() && !strict {
        tail.push(String::new());
    }
    let fr = frac_ge(&d.frac, strict);
    tail.push(format!(r"\.{}", alt(fr)));
    out.push(format!("{}{}", d.int, alt(tail)));
    alt(out)
}

/// Nonnegative numbers x with x <= d (x < d if strict); d nonnegative.
fn le_nonneg(d: &Decimal, strict: bool) -> String {
    let mut out: Vec<String> =
        int_lt(&d.int).into_iter().map(|x| format!("(?:{x}){FRAC_OPT}")).collect();
    let mut tail = vec![];
    // no fraction: x = int part; equal to d if d.frac empty
    if !(strict && d.frac.is_empty()) {
        tail.push(String::new());
    }
    let fr = frac_le(&d.frac, strict);
    if !fr.is_empty() {
        tail.push(format!(r"\.{}", alt(fr)));
    }
    out.push(format!("{}{}", d.int, alt(tail)));
    alt(out)
}

/// Numbers >= d (> d if strict), exponent-free syntax.
pub(crate) fn ge(d: &Decimal, strict: bool) -> String {
    if !d.neg {
        // No negative spelling, `-0` included (see the module documentation).
        ge_nonneg(d, strict)
    } else {
        alt(vec![NONNEG.to_string(), format!("-{}", le_nonneg(&d.abs(), strict))])
    }
}

/// Numbers <= d (< d if strict), exponent-free syntax.
pub(crate) fn le(d: &Decimal, strict: bool) -> String {
    if !d.neg {
        if d.is_zero() && strict {
            return format!("-{}", ge_nonneg(d, true));
        }
        alt(vec![le_nonneg(d, strict), format!("-{NONNEG}")])
    } else {
        format!("-{}", ge_nonneg(&d.abs(), strict))
    }
}

/// Exactly the value d, exponent-free syntax.
pub(crate) fn exact(d: &Decimal) -> String {
    if d.is_zero() {
        return r"0(?:\.0+)?".to_string();
    }
    let sign = if d.neg { "-" } else { "" };
    if d.frac.is_empty() {
        format!(r"{sign}{}(?:\.0+)?", d.int)
    } else {
        format!(r"{sign}{}\.{}0*", d.int, d.frac)
    }
}

/// `multipleOf` as (divisor, scale) for [`lexer::RegexSpec::MultipleOf`].
pub(crate) fn multiple_of(d: &Decimal) -> Result<(u32, u32), Error> {
    if d.neg || d.is_zero() {
        return Err(Error::new(ErrorKind::Value, "multipleOf must be positive"));
    }
    let digits = format!("{}{}", d.int, d.frac);
    let digits = digits.trim_start_matches('0');
    let v: u32 = digits.parse().map_err(|_| {
        Error::new(
            ErrorKind::Unsupported,
            format!("multipleOf {}.{}: too many digits", d.int, d.frac),
        )
    })?;
    let scale = d.frac.len() as u32;
    // The lexer's remainder arithmetic is in u32: keep (9 * 10^scale + 10 * divisor) in range.
    let fits = scale <= 9 && 9 * 10u64.pow(scale) + 10 * v as u64 <= u32::MAX as u64;
    if !fits {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("multipleOf {}.{}: too many digits", d.int, d.frac),
        ));
    }
    Ok((v, scale))
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_automata::meta::Regex;

    #[test]
    fn bounds_are_exact() {
        let bounds = ["0", "-0.5", "1.5", "10", "-10", "0.25", "99", "100", "7.05", "-3"];
        let mut samples = vec![];
        for i in -1200..=1200 {
            let v = i as f64 / 100.0;
            samples.push(format!("{v}"));
        }
        samples.extend(
            ["-0", "0.0", "-0.00", "1.50", "10.000", "100.0001", "99.999", "7.0500", "7.049"]
                .map(String::from),
        );
        for b in bounds {
            let d = Decimal::parse(b).unwrap();
            let bv: f64 = b.parse().unwrap();
            for (rx, f) in [
                (ge(&d, false), (|x: f64, b: f64| x >= b) as fn(f64, f64) -> bool),
                (ge(&d, true), |x, b| x > b),
                (le(&d, false), |x, b| x <= b),
                (le(&d, true), |x, b| x < b),
                (exact(&d), |x, b| x == b),
            ] {
                let re = Regex::new(&format!("^(?:{rx})$")).unwrap();
                for s in &samples {
                    let x: f64 = s.parse().unwrap();
                    // Negative zero is spelled only below a negative (or no) lower bound.
                    let neg_zero = x == 0.0 && s.starts_with('-');
                    let is_ge = rx == ge(&d, false) || rx == ge(&d, true);
                    let lower_bound_nonneg = (is_ge && !d.neg) || rx == exact(&d);
                    let want = f(x, bv) && !(neg_zero && lower_bound_nonneg);
                    assert_eq!(re.is_match(s), want, "bound {b} rx {rx} sample {s}");
                }
            }
        }
    }
}
