//! Random byte automata for the slicer's table tests.

use lexer::RUN_DEAD;

/// The transition table (256 entries per state) of `n` states over bytes `a`..`d`, the
/// others dead: state `s` on the `j`th of them goes to `table[(4s + j) % len]`, dead
/// past `n`.
pub fn next_over_abcd(n: usize, table: &[u8]) -> Vec<u8> {
    let mut next = vec![RUN_DEAD; n * 256];
    for s in 0..n {
        for (j, b) in (b'a'..=b'd').enumerate() {
            let t = table[(s * 4 + j) % table.len()];
            next[s * 256 + b as usize] = if (t as usize) < n { t } else { RUN_DEAD };
        }
    }
    next
}
