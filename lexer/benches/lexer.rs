//! Lexer throughput, cold (empty transition table) and warm, and table memory, for a JSON
//! lexer and a programming-language-like lexer. Plain timing binary (`harness = false`):
//! `cargo bench -p lexer`. Inputs are synthesized; nothing is read from disk.

use std::hint::black_box;
use std::time::Instant;

use lexer::{tokenize, AutomataLexer, LexemeKind, Lexer, LexerSpec, RegexSpec};

fn json_spec() -> LexerSpec {
    let mut s = LexerSpec::new();
    for (n, l) in [("LBRACE", "{"), ("RBRACE", "}"), ("LBRACK", "["), ("RBRACK", "]")] {
        s.add(n, RegexSpec::literal(l), LexemeKind::Greedy);
    }
    for (n, l) in [(("COLON"), ":"), ("COMMA", ","), ("TRUE", "true")] {
        s.add(n, RegexSpec::literal(l), LexemeKind::Greedy);
    }
    s.add("FALSE", RegexSpec::literal("false"), LexemeKind::Greedy);
    s.add("NULL", RegexSpec::literal("null"), LexemeKind::Greedy);
    s.add(
        "STRING",
        RegexSpec::regex(r#""(\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}|[^"\\\x00-\x1F])*""#),
        LexemeKind::Greedy,
    );
    s.add(
        "NUMBER",
        RegexSpec::regex(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"),
        LexemeKind::Greedy,
    );
    s.add("WS", RegexSpec::regex(r"[ \t\n\r]+"), LexemeKind::Skip);
    s
}

fn pl_spec() -> LexerSpec {
    let mut s = LexerSpec::new();
    for kw in ["fn", "let", "if", "else", "while", "return", "struct", "for", "in"] {
        s.add(kw.to_uppercase(), RegexSpec::literal(kw), LexemeKind::Greedy);
    }
    s.add("IDENT", RegexSpec::regex(r"[A-Za-z_][A-Za-z0-9_]*"), LexemeKind::Greedy);
    s.add(
        "NUMBER",
        RegexSpec::regex(r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?|0x[0-9a-fA-F]+"),
        LexemeKind::Greedy,
    );
    s.add("STRING", RegexSpec::regex(r#""([^"\\\n]|\\.)*""#), LexemeKind::Greedy);
    s.add("LINE_COMMENT", RegexSpec::regex(r"//[^\n]*"), LexemeKind::Skip);
    s.add("BLOCK_COMMENT", RegexSpec::regex(r"/\*([^*]|\*+[^*/])*\*+/"), LexemeKind::Skip);
    s.add("OP", RegexSpec::regex(r"[-+*/%=<>!&|^]=?|&&|\|\||->|=>"), LexemeKind::Greedy);
    s.add("PUNCT", RegexSpec::regex(r"[(){}\[\];,.:]"), LexemeKind::Greedy);
    s.add("WS", RegexSpec::regex(r"[ \t\r\n]+"), LexemeKind::Skip);
    s
}

/// A deterministic pseudo-random JSON document of about `n` bytes.
fn json_input(n: usize) -> Vec<u8> {
    let mut out = String::from("[");
    let mut i = 0u64;
    while out.len() < n {
        i += 1;
        let x = i.wrapping_mul(0x9E3779B97F4A7C15) >> 40;
        out.push_str(&format!(
            r#"{{"id": {i}, "name": "item \"{x}\" é\n", "price": {}.{:02}e-3, "ok": {}, "tags": ["a{}", null]}}, "#,
            x % 1000,
            x % 100,
            x % 2 == 0,
            x % 7
        ));
    }
    out.push_str("0]");
    out.into_bytes()
}

fn pl_input(n: usize) -> Vec<u8> {
    let mut out = String::new();
    let mut i = 0u64;
    while out.len() < n {
        i += 1;
        out.push_str(&format!(
            "// compute item {i}\nfn item_{i}(x: u32, y_{i}: f64) -> u32 {{\n    let s = \"value {i}\\n\";\n    /* block * comment */ if x >= 0x{i:x} && y_{i} < 1.5e3 {{ return x + {i}; }} else {{ while x != 0 {{ x -= 1; }} }}\n}}\n"
        ));
    }
    out.into_bytes()
}

fn bench<L: Lexer + 'static>(
    name: &str,
    mut make: impl FnMut() -> L,
    spec: &LexerSpec,
    doc: &[u8],
    input: &[u8],
) {
    let all = spec.all();
    let mbs = |bytes: usize, ns: u128| bytes as f64 / (ns as f64 / 1e9) / 1e6;
    // Cold: a fresh lexer (empty table) per pass over a 4 KiB document, as for a new request;
    // compiling the spec is not timed. Every state and transition the document needs is
    // built during the pass.
    let rounds = 50;
    let mut cold_ns = 0u128;
    let mut misses = 0;
    for _ in 0..rounds {
        let mut l = make();
        let t = Instant::now();
        black_box(tokenize(&mut l, &all, doc).expect("lexes"));
        cold_ns += t.elapsed().as_nanos();
        misses = transitions(&l);
    }
    // Warm: the same document and driver, on a lexer whose table the first pass filled.
    let mut l = make();
    tokenize(&mut l, &all, doc).expect("lexes");
    let t = Instant::now();
    for _ in 0..rounds {
        black_box(tokenize(&mut l, &all, doc).expect("lexes"));
    }
    let warm_ns = t.elapsed().as_nanos();
    assert_eq!(transitions(&l), misses, "warm passes computed transitions");
    // Warm over 1 MiB: the tokenize driver, and the bare advance loop.
    tokenize(&mut l, &all, input).expect("lexes");
    let t = Instant::now();
    let ntok = black_box(tokenize(&mut l, &all, input).expect("lexes")).len();
    let big_ns = t.elapsed().as_nanos();
    let start = l.start_state(&all).unwrap();
    let t = Instant::now();
    let mut s = start;
    for &b in input {
        let n = l.advance(s, b).unwrap();
        s = if n.is_dead() { l.advance(start, b).unwrap() } else { n };
    }
    black_box(s);
    let raw_ns = t.elapsed().as_nanos();
    let (cold, warm) = (mbs(doc.len() * rounds, cold_ns), mbs(doc.len() * rounds, warm_ns));
    println!(
        "{name:<14} cold {cold:6.1} MB/s | warm {warm:6.1} MB/s ({:4.1}x) | 1 MiB warm: tokenize {:6.1} MB/s, \
         advance {:6.1} MB/s, {ntok} tokens | cold pass: {misses} transitions computed, {:5.2} us each | \
         {} states x {} classes: table {} B, all memory {} B",
        warm / cold,
        mbs(input.len(), big_ns),
        mbs(input.len(), raw_ns),
        cold_ns as f64 / rounds as f64 / 1e3 / misses.max(1) as f64,
        l.num_states(),
        classes(&l),
        l.num_states() * classes(&l) * 4,
        l.num_bytes(),
    );
}

fn transitions<L: Lexer + 'static>(l: &L) -> usize {
    let any: &dyn std::any::Any = l;
    #[cfg(feature = "derivre")]
    if let Some(d) = any.downcast_ref::<lexer::DerivreLexer>() {
        return d.num_transitions();
    }
    any.downcast_ref::<AutomataLexer>().map_or(0, |a| a.num_transitions())
}

fn classes<L: Lexer + 'static>(l: &L) -> usize {
    let any: &dyn std::any::Any = l;
    #[cfg(feature = "derivre")]
    if let Some(d) = any.downcast_ref::<lexer::DerivreLexer>() {
        return d.num_classes();
    }
    any.downcast_ref::<AutomataLexer>().map_or(0, |a| a.num_classes())
}

fn main() {
    let json = json_input(1 << 20);
    let pl = pl_input(1 << 20);
    let (json_doc, pl_doc) = (json_input(4096), pl_input(4096));
    let (js, ps) = (json_spec(), pl_spec());
    println!("input: JSON {} B, PL {} B", json.len(), pl.len());
    #[cfg(feature = "derivre")]
    {
        bench("derivre/json", || lexer::DerivreLexer::new(&js).unwrap(), &js, &json_doc, &json);
        bench("derivre/pl", || lexer::DerivreLexer::new(&ps).unwrap(), &ps, &pl_doc, &pl);
    }
    bench("automata/json", || AutomataLexer::new(&js).unwrap(), &js, &json_doc, &json);
    bench("automata/pl", || AutomataLexer::new(&ps).unwrap(), &ps, &pl_doc, &pl);
}
