//! Earley + trie-walk benchmark: a JSON grammar, a real JSON document tokenized with the
//! Llama-3.1 tokenizer (../shared/tokenizers/llama3.tokenizer.json; falls back to the
//! built-in o200k vocabulary, saying so, when ../shared is absent). For every token of the
//! document: the mask (timed), a check that the token is in it, then consume.
//!
//! Reports µs per mask (mean, p50, p99, max), rows computed vs reused per mask, and the
//! share of trie nodes at which the parser was involved (a lexeme ended).
//!
//! Run: `cargo bench -p earley --bench json`.

use std::sync::Arc;
use std::time::Instant;

use earley::{Cfg, CfgBuilder, CfgLimits, Parser, ParserOptions};
use lexer::{DerivreLexer, LexemeKind, LexemeSet, LexerSpec, RegexSpec};
use toktrie::{TokTrie, Tokenizer};

const DOC: &str = r#"{
  "id": 1296269,
  "name": "Hello-World",
  "full_name": "octocat/Hello-World",
  "owner": {"login": "octocat", "id": 1, "site_admin": false, "type": "User"},
  "private": false,
  "description": "This your first repo! It has \"quotes\", a tab\t and unicode: café.",
  "fork": false,
  "homepage": "https://github.com",
  "size": 108,
  "stargazers_count": 80,
  "language": null,
  "topics": ["octocat", "atom", "electron", "api"],
  "score": -1.5e-3,
  "permissions": {"admin": false, "push": false, "pull": true},
  "created_at": "2011-01-26T19:01:12Z",
  "license": {"key": "mit", "name": "MIT License", "spdx_id": "MIT"},
  "matrix": [[1, 2, 3], [4.25, 5, 6], []],
  "empty": {}
}"#;

fn json_grammar() -> (LexerSpec, Arc<Cfg>, LexemeSet) {
    let mut spec = LexerSpec::new();
    let mut lex = |name: &str, rx: RegexSpec| spec.add(name, rx, LexemeKind::Greedy);
    let string = lex(
        "STRING",
        RegexSpec::regex(r#""(?:[^"\\\x00-\x1F\x7F]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*""#),
    );
    let number =
        lex("NUMBER", RegexSpec::regex(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"));
    let lits: Vec<_> = ["{", "}", "[", "]", ",", ":", "true", "false", "null"]
        .iter()
        .map(|l| lex(l, RegexSpec::literal(*l)))
        .collect();
    let ws = spec.add("WS", RegexSpec::regex(r"[ \t\n\r]+"), LexemeKind::Skip);

    let mut g = CfgBuilder::new();
    let value = g.nonterminal("value");
    let object = g.nonterminal("object");
    let members = g.nonterminal("members");
    let pair = g.nonterminal("pair");
    let array = g.nonterminal("array");
    let elements = g.nonterminal("elements");
    let t_string = g.lexeme("STRING", string);
    let t_number = g.lexeme("NUMBER", number);
    let t: Vec<_> = lits.iter().enumerate().map(|(i, &l)| g.lexeme(&format!("L{i}"), l)).collect();
    let (lbrace, rbrace, lbrack, rbrack, comma, colon) = (t[0], t[1], t[2], t[3], t[4], t[5]);
    for rhs in [
        vec![object],
        vec![array],
        vec![t_string],
        vec![t_number],
        vec![t[6]],
        vec![t[7]],
        vec![t[8]],
    ] {
        g.rule(value, rhs);
    }
    g.rule(object, vec![lbrace, rbrace]);
    g.rule(object, vec![lbrace, members, rbrace]);
    g.rule(members, vec![pair]);
    g.rule(members, vec![members, comma, pair]);
    g.rule(pair, vec![t_string, colon, value]);
    g.rule(array, vec![lbrack, rbrack]);
    g.rule(array, vec![lbrack, elements, rbrack]);
    g.rule(elements, vec![value]);
    g.rule(elements, vec![elements, comma, value]);
    let cfg = Arc::new(g.build(value, &CfgLimits::default()).expect("the JSON grammar is valid"));
    let mut skip = LexemeSet::new();
    skip.insert(ws);
    (spec, cfg, skip)
}

fn main() -> anyhow::Result<()> {
    let llama = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/tokenizers/llama3.tokenizer.json");
    let tok = if llama.exists() {
        Tokenizer::from_file(&llama)?
    } else {
        println!(
            "../shared is absent ({} not found): using the built-in o200k instead",
            llama.display()
        );
        Tokenizer::builtin("o200k")?
    };
    let vocab = tok.vocab();
    let trie = TokTrie::from_vocab(vocab)?;
    let tokens = tok.tokenize(DOC)?;
    let (spec, cfg, skip) = json_grammar();
    let t0 = Instant::now();
    let lexer = DerivreLexer::new(&spec)?;
    let opts = ParserOptions { skip, eos: vocab.eos_tokens().to_vec(), ..Default::default() };
    let parser0 = Parser::new(cfg, lexer, opts)?;
    println!(
        "{}: JSON grammar compiled in {:.0} µs; document of {} bytes = {} tokens",
        vocab.name(),
        t0.elapsed().as_secs_f64() * 1e6,
        DOC.len(),
        tokens.len()
    );

    // Round 1 warms the lexer table; round 2 is measured (a server reuses the lexer).
    let mut parser = parser0.clone();
    for round in 0..2 {
        if round == 1 {
            let warm_lexer = parser.lexer().clone();
            parser = parser0.clone();
            parser.replace_lexer(warm_lexer);
        }
        let mut times = Vec::new();
        let (mut computed, mut reused, mut pushed, mut ended) = (0u64, 0u64, 0u64, 0u64);
        for &t in tokens.iter().chain(vocab.eos_token().iter()) {
            let s0 = parser.stats();
            let start = Instant::now();
            let mask = parser.compute_mask(&trie)?;
            times.push(start.elapsed().as_secs_f64() * 1e6);
            let s1 = parser.stats();
            computed += s1.rows_computed - s0.rows_computed;
            reused += s1.rows_reused - s0.rows_reused;
            pushed += s1.bytes_pushed - s0.bytes_pushed;
            ended += s1.lexemes_ended - s0.lexemes_ended;
            anyhow::ensure!(mask.contains(t), "token {} not allowed", vocab.token_display(t));
            if Some(t) != vocab.eos_token() {
                parser.consume_token(vocab, t)?;
            }
        }
        anyhow::ensure!(parser.is_accepting()?, "document not accepted");
        let n = times.len() as f64;
        let mean = times.iter().sum::<f64>() / n;
        times.sort_by(f64::total_cmp);
        let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
        println!(
            "{} lexer: {} masks: mean {:.1} µs, p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            if round == 0 { "cold" } else { "warm" },
            times.len(),
            mean,
            pct(0.5),
            pct(0.99),
            pct(1.0)
        );
        println!(
            "  per mask: {:.1} rows computed, {:.1} rows reused, {:.0} trie nodes visited, \
             {:.1} lexeme ends; parser involved at {:.3}% of visited nodes",
            computed as f64 / n,
            reused as f64 / n,
            pushed as f64 / n,
            ended as f64 / n,
            100.0 * ended as f64 / pushed as f64
        );
    }
    Ok(())
}
