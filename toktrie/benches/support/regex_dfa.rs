//! A regex compiled by `regex-automata` into a [`toktrie::ByteDfa`] (for the benchmark and
//! the example; the library itself has no regex engine).

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use toktrie::ByteDfa;

/// The DFA of `regex` anchored at both ends: a byte is accepted iff the bytes so far can
/// still be extended to a full match.
pub fn byte_dfa(regex: &str) -> anyhow::Result<ByteDfa> {
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .start_kind(StartKind::Anchored)
                .match_kind(MatchKind::All)
                .minimize(true),
        )
        .build(&format!(r"^(?:{regex})$"))?;
    let start = dfa.start_state(&start::Config::new().anchored(Anchored::Yes))?;
    let mut ids = vec![None, Some(start)];
    let mut index = std::collections::HashMap::new();
    index.insert(start, 1u32);
    let mut table = vec![0u32; 256];
    let mut accepting = vec![false];
    let mut i = 1;
    while i < ids.len() {
        let s = ids[i].expect("live states have ids");
        accepting.push(dfa.is_match_state(dfa.next_eoi_state(s)));
        for b in 0..=255u8 {
            let t = dfa.next_state(s, b);
            let target = if dfa.is_dead_state(t) || dfa.is_quit_state(t) {
                0
            } else {
                *index.entry(t).or_insert_with(|| {
                    ids.push(Some(t));
                    (ids.len() - 1) as u32
                })
            };
            table.push(target);
        }
        i += 1;
    }
    ByteDfa::new(table, accepting, 1).ok_or_else(|| anyhow::anyhow!("bad DFA table"))
}
