//! Parameters of parametric rules (LLGuidance's `name::_`): the expressions passed to a
//! call (`set_bit(3)`, `incr([0:3])`, ...) and the `%if` conditions, as serde data with
//! their text syntax and evaluation over the 64-bit parameter `p`.
//!
//! Supported, as LLGuidance's `docs/parametric.md` defines them (`R` is `_` for all 64 bits
//! or a bit range `[x:y]`, `0 <= x < y <= 64`; `v` a decimal or `0x` hex u64; `k` a bit
//! index 0..=63):
//! - expressions: `_`, `v`, `set_bit(k)`, `clear_bit(k)`, `bit_and(v)`, `bit_or(v)`,
//!   `incr(R)` and `decr(R)` (saturating, within the range);
//! - conditions: `true`, `true()`, `bit_set(k)`, `bit_clear(k)`, `is_ones(R)`,
//!   `is_zeros(R)`, `eq|ne|lt|le|gt|ge(R, v)`, `bit_count_eq|ne|lt|le|gt|ge(R, k)`,
//!   `and(c, c)`, `or(c, c)`, `not(c)`. Comparisons are unsigned.

use serde::{Deserialize, Serialize};

/// Bits `lo..hi` of the parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BitRange {
    /// First bit (0..=63).
    pub lo: u32,
    /// One past the last bit (lo+1..=64).
    pub hi: u32,
}

impl BitRange {
    const ALL: BitRange = BitRange { lo: 0, hi: 64 };

    fn mask(self) -> u64 {
        let width = self.hi - self.lo;
        if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        }
    }

    fn get(self, p: u64) -> u64 {
        (p >> self.lo) & self.mask()
    }
}

/// A parameter expression: the value passed to a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamExpr {
    /// A constant.
    Value(u64),
    /// `_`: the caller's parameter.
    SelfRef,
    /// `p | 1 << k`.
    SetBit(u32),
    /// `p & !(1 << k)`.
    ClearBit(u32),
    /// `p & v`.
    BitAnd(u64),
    /// `p | v`.
    BitOr(u64),
    /// Add one to the range unless it is all ones.
    Incr(BitRange),
    /// Subtract one from the range unless it is zero.
    Decr(BitRange),
}

/// How a comparison compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    fn apply(self, a: u64, b: u64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }

    fn from_suffix(s: &str) -> Option<CmpOp> {
        Some(match s {
            "eq" => CmpOp::Eq,
            "ne" => CmpOp::Ne,
            "lt" => CmpOp::Lt,
            "le" => CmpOp::Le,
            "gt" => CmpOp::Gt,
            "ge" => CmpOp::Ge,
            _ => return None,
        })
    }
}

/// A condition on the parameter (`%if`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamCond {
    /// Always.
    True,
    /// Bit k is 1.
    BitSet(u32),
    /// Bit k is 0.
    BitClear(u32),
    /// Every bit of the range is 1.
    IsOnes(BitRange),
    /// Every bit of the range is 0.
    IsZeros(BitRange),
    /// The range's value compared with a constant.
    Cmp(CmpOp, BitRange, u64),
    /// The number of 1 bits of the range compared with a count.
    BitCount(CmpOp, BitRange, u32),
    /// Both.
    And(Box<ParamCond>, Box<ParamCond>),
    /// Either.
    Or(Box<ParamCond>, Box<ParamCond>),
    /// Not.
    Not(Box<ParamCond>),
}

impl ParamExpr {
    /// The value passed, given the caller's parameter `p`.
    pub fn eval(&self, p: u64) -> u64 {
        match *self {
            ParamExpr::Value(v) => v,
            ParamExpr::SelfRef => p,
            ParamExpr::SetBit(k) => p | 1 << k,
            ParamExpr::ClearBit(k) => p & !(1 << k),
            ParamExpr::BitAnd(v) => p & v,
            ParamExpr::BitOr(v) => p | v,
            ParamExpr::Incr(r) => {
                if r.get(p) == r.mask() {
                    p
                } else {
                    p.wrapping_add(1 << r.lo)
                }
            }
            ParamExpr::Decr(r) => {
                if r.get(p) == 0 {
                    p
                } else {
                    p.wrapping_sub(1 << r.lo)
                }
            }
        }
    }

    /// Whether the value depends on the caller's parameter.
    pub fn uses_param(&self) -> bool {
        !matches!(self, ParamExpr::Value(_))
    }

    /// Parses `text` (what follows `::`).
    pub fn parse(text: &str) -> Result<ParamExpr, String> {
        let text = text.trim();
        if text == "_" {
            return Ok(ParamExpr::SelfRef);
        }
        if text.starts_with(|c: char| c.is_ascii_digit()) {
            return number(text).map(ParamExpr::Value);
        }
        let (name, args) = call(text)?;
        let one = |what: &str| -> Result<&str, String> {
            match args.as_slice() {
                [a] => Ok(a.as_str()),
                _ => Err(format!("{name} takes one argument ({what})")),
            }
        };
        Ok(match name {
            "set_bit" => ParamExpr::SetBit(bit(one("a bit index")?)?),
            "clear_bit" => ParamExpr::ClearBit(bit(one("a bit index")?)?),
            "bit_and" => ParamExpr::BitAnd(number(one("a value")?)?),
            "bit_or" => ParamExpr::BitOr(number(one("a value")?)?),
            "incr" => ParamExpr::Incr(range(one("_ or [x:y]")?)?),
            "decr" => ParamExpr::Decr(range(one("_ or [x:y]")?)?),
            other => {
                return Err(format!(
                    "unexpected expression {other:?} (expected _, a number, set_bit, clear_bit, \
                     bit_and, bit_or, incr or decr)"
                ))
            }
        })
    }
}

impl ParamCond {
    /// Whether the condition holds for parameter `p`.
    pub fn eval(&self, p: u64) -> bool {
        // Explicit stack: conditions nest as deep as the text does.
        match self {
            ParamCond::True => true,
            ParamCond::BitSet(k) => p >> k & 1 == 1,
            ParamCond::BitClear(k) => p >> k & 1 == 0,
            ParamCond::IsOnes(r) => r.get(p) == r.mask(),
            ParamCond::IsZeros(r) => r.get(p) == 0,
            ParamCond::Cmp(op, r, v) => op.apply(r.get(p), *v),
            ParamCond::BitCount(op, r, k) => op.apply(r.get(p).count_ones() as u64, *k as u64),
            ParamCond::And(a, b) => a.eval(p) && b.eval(p),
            ParamCond::Or(a, b) => a.eval(p) || b.eval(p),
            ParamCond::Not(a) => !a.eval(p),
        }
    }

    /// Whether the condition depends on the parameter (anything but `true`).
    pub fn uses_param(&self) -> bool {
        !matches!(self, ParamCond::True)
    }

    /// Parses `text` (what follows `%if`). Nesting is limited to 50 levels.
    pub fn parse(text: &str) -> Result<ParamCond, String> {
        Self::parse_depth(text, 0)
    }

    fn parse_depth(text: &str, depth: usize) -> Result<ParamCond, String> {
        if depth > 50 {
            return Err("condition nested deeper than 50 levels".into());
        }
        let text = text.trim();
        if text == "true" {
            return Ok(ParamCond::True);
        }
        let (name, args) = call(text)?;
        let sub = |s: &str| ParamCond::parse_depth(s, depth + 1).map(Box::new);
        let n_args = |n: usize| -> Result<(), String> {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!("{name} takes {n} argument(s), got {}", args.len()))
            }
        };
        Ok(match name {
            "true" => {
                if !args.is_empty() {
                    return Err("true() takes no arguments".into());
                }
                ParamCond::True
            }
            "bit_set" | "bit_clear" => {
                n_args(1)?;
                let k = bit(&args[0])?;
                if name == "bit_set" {
                    ParamCond::BitSet(k)
                } else {
                    ParamCond::BitClear(k)
                }
            }
            "is_ones" | "is_zeros" => {
                n_args(1)?;
                let r = range(&args[0])?;
                if name == "is_ones" {
                    ParamCond::IsOnes(r)
                } else {
                    ParamCond::IsZeros(r)
                }
            }
            "and" | "or" => {
                n_args(2)?;
                let (a, b) = (sub(&args[0])?, sub(&args[1])?);
                if name == "and" {
                    ParamCond::And(a, b)
                } else {
                    ParamCond::Or(a, b)
                }
            }
            "not" => {
                n_args(1)?;
                ParamCond::Not(sub(&args[0])?)
            }
            _ => {
                if let Some(op) = name.strip_prefix("bit_count_").and_then(CmpOp::from_suffix) {
                    n_args(2)?;
                    let k = number(&args[1])?;
                    if k > 64 {
                        return Err(format!("bit count {k} is above 64"));
                    }
                    ParamCond::BitCount(op, range(&args[0])?, k as u32)
                } else if let Some(op) = CmpOp::from_suffix(name) {
                    n_args(2)?;
                    ParamCond::Cmp(op, range(&args[0])?, number(&args[1])?)
                } else {
                    return Err(format!("unexpected condition {name:?}"));
                }
            }
        })
    }
}

/// `name(arg, arg, ...)` with balanced parentheses and brackets in the arguments.
fn call(text: &str) -> Result<(&str, Vec<String>), String> {
    let open = text.find('(').ok_or_else(|| format!("unexpected {text:?}"))?;
    let name = text[..open].trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("unexpected {text:?}"));
    }
    let inner = text[open + 1..]
        .trim_end()
        .strip_suffix(')')
        .ok_or_else(|| format!("missing ')' in {text:?}"))?;
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return Err(format!("unbalanced parentheses in {text:?}"));
        }
        if c == ',' && depth == 0 {
            args.push(std::mem::take(&mut cur).trim().to_string());
        } else {
            cur.push(c);
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced parentheses in {text:?}"));
    }
    if !cur.trim().is_empty() || !args.is_empty() {
        args.push(cur.trim().to_string());
    }
    Ok((name, args))
}

fn number(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("{s:?} is not an unsigned 64-bit number"))
}

fn bit(s: &str) -> Result<u32, String> {
    let k = number(s)?;
    if k > 63 {
        return Err(format!("bit index {k} is above 63"));
    }
    Ok(k as u32)
}

fn range(s: &str) -> Result<BitRange, String> {
    let s = s.trim();
    if s == "_" {
        return Ok(BitRange::ALL);
    }
    let inner = s
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .ok_or_else(|| format!("expected '_' or '[start_bit:stop_bit]', got {s:?}"))?;
    let (a, b) = inner
        .split_once(':')
        .ok_or_else(|| format!("expected '_' or '[start_bit:stop_bit]', got {s:?}"))?;
    let lo = number(a)?;
    let hi = number(b)?;
    if lo > 63 {
        return Err(format!("start bit {lo} is above 63"));
    }
    if hi > 64 {
        return Err(format!("end bit {hi} is above 64"));
    }
    if hi <= lo {
        return Err(format!("end bit index {hi} must be > start bit index {lo}"));
    }
    Ok(BitRange { lo: lo as u32, hi: hi as u32 })
}
