//! Compares the `index` crate with the crates.io `outlines-core` on a regex suite:
//! compile time, index memory, mask serve time, and agreement of the allowed sets over every
//! state pair reachable in both automata.
//!
//! Run: `cargo run --release -- [TOKENIZER_FILE_OR_BUILTIN...]` (default: the Llama 3
//! tokenizer from /work/shared and the built-in o200k).

use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use anyhow::{anyhow, Result};
use index::{Config, Index, StateId};
use outlines_core::index::Index as OIndex;
use outlines_core::vocabulary::Vocabulary as OVocab;
use toktrie::{TokenId, Tokenizer, Vocabulary};

const SUITE: &[(&str, &str)] = &[
    (
        "email",
        r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?",
    ),
    ("url", r"(https?:\/\/)?([\da-z\.-]+)\.([a-z\.]{2,6})([\/\w \.-]*)*\/?"),
    ("ipv4", r"((25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(25[0-5]|2[0-4]\d|[01]?\d\d?)"),
    ("date", r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"),
    ("time", r"([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?"),
    ("phone", r"\(?\d{3}\)?[ .-]?\d{3}[ .-]?\d{4}"),
    (
        "json",
        r#"\{"name": "[A-Za-z ]{1,30}", "email": "[a-z0-9.]+@[a-z]+\.[a-z]{2,3}", "age": [0-9]{1,3}, "active": (true|false)\}"#,
    ),
    ("a-z{1,50}", r"[a-z]{1,50}"),
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Approximate heap bytes of outlines-core's index: its transition maps (hashbrown
/// tables: per bucket key + value + 1 control byte, plus the map headers) and final set.
fn outlines_bytes(ix: &OIndex) -> usize {
    let outer = ix.transitions();
    let mut bytes = std::mem::size_of_val(ix);
    bytes += outer.capacity() * (4 + std::mem::size_of_val(outer) + 1);
    for inner in outer.values() {
        bytes += inner.capacity() * (4 + 4 + 1);
    }
    bytes += ix.final_states().capacity() * (4 + 1);
    bytes
}

fn load(name: &str) -> Result<(String, Vocabulary)> {
    let tok = if std::path::Path::new(name).exists() {
        Tokenizer::from_file(name)?
    } else {
        Tokenizer::builtin(name)?
    };
    let mut vocab = tok.vocab().clone();
    let eos = vocab.eos_token().ok_or_else(|| anyhow!("{name}: no EOS"))?;
    // outlines-core has one EOS id; use the same single id on our side.
    vocab.set_eos_tokens(&[eos])?;
    let short = std::path::Path::new(name).file_name().unwrap().to_string_lossy().into_owned();
    Ok((short, vocab))
}

fn outlines_vocab(vocab: &Vocabulary) -> Result<OVocab> {
    let eos = vocab.eos_token().unwrap();
    let mut ov = OVocab::new(eos.0);
    for (id, bytes) in vocab.iter() {
        if vocab.is_special(id) || id == eos {
            continue;
        }
        ov.try_insert(bytes.to_vec(), id.0).map_err(|e| anyhow!("{e:?}"))?;
    }
    Ok(ov)
}

/// BFS over pairs (our state, their state) reachable by the same tokens; compares the
/// allowed sets (EOS included) at every pair. Returns (pairs checked, disagreements).
fn agreement(
    ours: &Index,
    theirs: &OIndex,
    eos: TokenId,
    vocab: &Vocabulary,
) -> (usize, usize, String) {
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([(ours.initial_state(), theirs.initial_state())]);
    seen.insert((ours.initial_state().0, theirs.initial_state()));
    let (mut pairs, mut bad) = (0, 0);
    let mut first_bad = String::new();
    while let Some((s, t)) = queue.pop_front() {
        pairs += 1;
        let a: Vec<u32> = ours.allowed_tokens(s).unwrap().iter().map(|t| t.0).collect();
        let mut b: Vec<u32> = theirs.allowed_tokens(&t).unwrap_or_default();
        if theirs.is_final_state(&t) && !b.contains(&eos.0) {
            b.push(eos.0);
        }
        b.sort_unstable();
        if a != b {
            bad += 1;
            if first_bad.is_empty() {
                first_bad = format!("state {s}/{t}: ours {} theirs {}", a.len(), b.len());
                let extra: Vec<u32> =
                    a.iter().copied().filter(|x| !b.contains(x)).take(6).collect();
                let missing: Vec<u32> =
                    b.iter().copied().filter(|x| !a.contains(x)).take(6).collect();
                let show = |v: &[u32]| {
                    v.iter().map(|t| vocab.token_display(TokenId(*t))).collect::<Vec<_>>()
                };
                eprintln!(
                    "  {first_bad}: only ours {:?}, only theirs {:?}",
                    show(&extra),
                    show(&missing)
                );
                eprintln!(
                    "  {first_bad}: only ours {extra:?}, only theirs {missing:?}, final {}/{}",
                    ours.is_final_state(s),
                    theirs.is_final_state(&t)
                );
            }
            continue;
        }
        for &tok in &a {
            if tok == eos.0 {
                continue;
            }
            let ns = ours.next_state(s, TokenId(tok)).unwrap();
            let Some(nt) = theirs.next_state(&t, &tok) else { continue };
            if seen.insert((ns.0, nt)) {
                queue.push_back((ns, nt));
            }
        }
    }
    (pairs, bad, first_bad)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let names = if args.is_empty() {
        vec!["/work/shared/tokenizers/llama3.tokenizer.json".to_string(), "o200k".to_string()]
    } else {
        args
    };
    println!(
        "{:<10} {:<28} {:>9} {:>9} {:>9} {:>7} {:>6} {:>10} {:>10} {:>8} {:>8} {:>14}",
        "vocab",
        "regex",
        "ours ms",
        "ours1 ms",
        "theirs ms",
        "ratio",
        "states",
        "ours KiB",
        "theirs KiB",
        "ours ns",
        "theirs ns",
        "agreement"
    );
    for name in &names {
        let (vname, vocab) = load(name)?;
        let eos = vocab.eos_token().unwrap();
        let t0 = Instant::now();
        let ovocab = outlines_vocab(&vocab)?;
        eprintln!("{vname}: {} ids, outlines vocab in {:?}", vocab.len(), t0.elapsed());
        let mut ratios = Vec::new();
        for (rname, regex) in SUITE {
            // Ours: median of 5 builds, parallel (rayon) and single-threaded.
            let mut ours_ms = Vec::new();
            let mut ours1_ms = Vec::new();
            let mut ours = None;
            for _ in 0..5 {
                let t = Instant::now();
                let ix = Index::new(regex, &vocab)?;
                ours_ms.push(t.elapsed().as_secs_f64() * 1e3);
                let t = Instant::now();
                let _ = Index::with_config(regex, &vocab, &Config::new().parallel(false))?;
                ours1_ms.push(t.elapsed().as_secs_f64() * 1e3);
                ours = Some(ix);
            }
            let ours = ours.unwrap();
            eprintln!("{vname} {rname}: {:?}", ours.stats());
            // Theirs: one build if slow, else the median of 3.
            let t = Instant::now();
            let theirs = OIndex::new(regex, &ovocab).map_err(|e| anyhow!("{e:?}"))?;
            let mut theirs_ms = vec![t.elapsed().as_secs_f64() * 1e3];
            if theirs_ms[0] < 1000.0 {
                for _ in 0..2 {
                    let t = Instant::now();
                    let _ = OIndex::new(regex, &ovocab).map_err(|e| anyhow!("{e:?}"))?;
                    theirs_ms.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            let (om, om1, tm) = (median(ours_ms), median(ours1_ms), median(theirs_ms));
            ratios.push(tm / om);

            // Mask serve: fill a caller's u32 bitset for every state, many rounds.
            let words = vocab.len().div_ceil(32);
            let mut buf = vec![0u32; words];
            let our_states: Vec<StateId> = (0..ours.num_states() as u32).map(StateId).collect();
            let their_states: Vec<u32> = theirs.transitions().keys().copied().collect();
            let rounds = (20_000 / our_states.len().max(1)).max(5);
            let t = Instant::now();
            for _ in 0..rounds {
                for &s in &our_states {
                    ours.write_mask(s, &mut buf)?;
                    std::hint::black_box(&buf);
                }
            }
            let ours_ns = t.elapsed().as_nanos() as f64 / (rounds * our_states.len()) as f64;
            let rounds = (20_000 / their_states.len().max(1)).max(5);
            let t = Instant::now();
            for _ in 0..rounds {
                for s in &their_states {
                    let allowed = theirs.allowed_tokens(s).unwrap_or_default();
                    buf.fill(0);
                    for tok in allowed {
                        buf[tok as usize / 32] |= 1 << (tok % 32);
                    }
                    std::hint::black_box(&buf);
                }
            }
            let theirs_ns =
                t.elapsed().as_nanos() as f64 / (rounds * their_states.len().max(1)) as f64;

            let (pairs, bad, first_bad) = agreement(&ours, &theirs, eos, &vocab);
            let agree = if bad == 0 {
                format!("{pairs}/{pairs} ok")
            } else {
                format!("{bad}/{pairs} DIFF {first_bad}")
            };
            println!(
                "{:<10} {:<28} {:>9.2} {:>9.2} {:>9.1} {:>6.1}x {:>6} {:>10.1} {:>10.1} {:>8.0} {:>8.0} {:>14}",
                vname,
                rname,
                om,
                om1,
                tm,
                tm / om,
                format!("{}/{}", ours.num_states(), theirs.transitions().len()),
                ours.num_bytes() as f64 / 1024.0,
                outlines_bytes(&theirs) as f64 / 1024.0,
                ours_ns,
                theirs_ns,
                agree
            );
        }
        println!("{vname}: median compile speed-up {:.1}x", median(ratios));
    }
    Ok(())
}
