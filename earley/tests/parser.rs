//! The parser against a naive recognizer, the trie-walk mask against brute force, rollback
//! against fresh computation; with the derivre lexer and the regex-automata lexer.

use std::sync::Arc;

use earley::{Cfg, CfgBuilder, CfgLimits, ErrorKind, Parser, ParserLimits, ParserOptions, SymIdx};
use lexer::{AutomataLexer, DerivreLexer, LexemeKind, LexemeSet, Lexer, LexerSpec, RegexSpec};
use proptest::prelude::*;
use toktrie::{TokTrie, TokenId, TokenSet, VocabBuilder, Vocabulary};

const TERMINALS: &[u8] = b"abc";
const NUM_NT: usize = 4;

/// A random grammar: nonterminals 0..NUM_NT, then terminals a, b, c; start 0.
#[derive(Clone, Debug)]
struct RandomGrammar {
    rules: Vec<(usize, Vec<usize>)>,
}

fn grammar_strategy() -> impl Strategy<Value = RandomGrammar> {
    let sym = 0..NUM_NT + TERMINALS.len();
    let rule = (0..NUM_NT, prop::collection::vec(sym, 0..4));
    prop::collection::vec(rule, 1..9).prop_map(|mut rules| {
        // Every nonterminal gets a terminal rule so most grammars are productive.
        for nt in 0..NUM_NT {
            rules.push((nt, vec![NUM_NT + nt % TERMINALS.len()]));
        }
        RandomGrammar { rules }
    })
}

fn spec() -> LexerSpec {
    let mut spec = LexerSpec::new();
    for &t in TERMINALS {
        spec.add(
            (t as char).to_string(),
            RegexSpec::literal((t as char).to_string()),
            LexemeKind::Greedy,
        );
    }
    spec
}

fn cfg_of(g: &RandomGrammar) -> Option<Cfg> {
    let mut b = CfgBuilder::new();
    let nts: Vec<SymIdx> = (0..NUM_NT).map(|i| b.nonterminal(&format!("n{i}"))).collect();
    let ts: Vec<SymIdx> = (0..TERMINALS.len())
        .map(|i| b.lexeme(&format!("T{i}"), lexer::LexemeIdx(i as u32)))
        .collect();
    let sym = |s: usize| if s < NUM_NT { nts[s] } else { ts[s - NUM_NT] };
    for (lhs, rhs) in &g.rules {
        b.rule(nts[*lhs], rhs.iter().map(|&s| sym(s)).collect());
    }
    b.build(nts[0], &CfgLimits::default()).ok()
}

/// Naive recognizer: `d[s][i][j]` = symbol s derives input[i..j], to a fixpoint.
fn naive_accepts(g: &RandomGrammar, input: &[u8]) -> bool {
    let n = input.len();
    let nsym = NUM_NT + TERMINALS.len();
    let mut d = vec![vec![vec![false; n + 1]; n + 1]; nsym];
    for i in 0..n {
        let t = TERMINALS.iter().position(|&c| c == input[i]).unwrap();
        d[NUM_NT + t][i][i + 1] = true;
    }
    loop {
        let mut changed = false;
        for (lhs, rhs) in &g.rules {
            for i in 0..=n {
                // reach[j]: the prefix of rhs seen so far derives input[i..j].
                let mut reach = vec![false; n + 1];
                reach[i] = true;
                for &s in rhs {
                    let mut next = vec![false; n + 1];
                    for m in i..=n {
                        if reach[m] {
                            for j in m..=n {
                                if d[s][m][j] {
                                    next[j] = true;
                                }
                            }
                        }
                    }
                    reach = next;
                }
                for j in i..=n {
                    if reach[j] && !d[*lhs][i][j] {
                        d[*lhs][i][j] = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    d[0][0][n]
}

fn opts(vocab: &Vocabulary) -> ParserOptions {
    ParserOptions { eos: vocab.eos_tokens().to_vec(), ..Default::default() }
}

fn accepts<L: Lexer>(cfg: &Arc<Cfg>, lexer: L, input: &[u8]) -> bool {
    let mut p = Parser::new(cfg.clone(), lexer, ParserOptions::default()).unwrap();
    // One byte per token, as `llg check --tokenizer bytes`.
    input.iter().all(|&b| p.consume_bytes(&[b]).is_ok()) && p.is_accepting().unwrap()
}

fn small_vocab() -> Vocabulary {
    let mut b = VocabBuilder::new();
    let toks: &[&[u8]] =
        &[b"a", b"b", b"c", b"ab", b"ba", b"abc", b"cc", b"cab", b"x", b"aa", b"bcb"];
    for (i, t) in toks.iter().enumerate() {
        b.token(TokenId(i as u32), t).unwrap();
    }
    b.special(TokenId(toks.len() as u32), "</s>").unwrap();
    b.build().unwrap()
}

/// The mask by definition: consume each token on a fresh copy of the parser.
fn brute_mask<L: Lexer + Clone>(p: &Parser<L>, vocab: &Vocabulary) -> TokenSet {
    let mut mask = TokenSet::new(vocab.len());
    for (t, _) in vocab.iter() {
        let mut q = p.clone();
        if q.consume_token(vocab, t).is_ok() {
            mask.insert(t);
        }
    }
    mask
}

fn check_masks<L: Lexer + Clone>(
    cfg: &Arc<Cfg>,
    lexer: L,
    input: &[u8],
) -> Result<(), TestCaseError> {
    let vocab = small_vocab();
    let trie = TokTrie::from_vocab(&vocab).unwrap();
    let mut p = Parser::new(cfg.clone(), lexer, opts(&vocab)).unwrap();
    let mut masks = Vec::new();
    for &b in input {
        let m = p.compute_mask(&trie).unwrap();
        prop_assert_eq!(&m, &brute_mask(&p, &vocab));
        masks.push(m);
        if p.consume_bytes(&[b]).is_err() {
            break;
        }
    }
    // Rollback then recompute equals the fresh masks.
    let n = p.num_tokens();
    for k in (0..n).rev() {
        p.rollback(1).unwrap();
        prop_assert_eq!(&p.compute_mask(&trie).unwrap(), &masks[k]);
    }
    Ok(())
}

/// Strings of the grammar by random leftmost derivation (bounded), for positive cases.
fn derive(g: &RandomGrammar, choices: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack = vec![0usize];
    let mut k = 0;
    while let Some(s) = stack.pop() {
        if out.len() > 8 || k > 64 {
            return None;
        }
        if s >= NUM_NT {
            out.push(TERMINALS[s - NUM_NT]);
            continue;
        }
        let rules: Vec<&Vec<usize>> =
            g.rules.iter().filter(|(l, _)| *l == s).map(|(_, r)| r).collect();
        let c = choices.get(k).copied().unwrap_or(0) as usize;
        k += 1;
        // Past the choices, prefer the shortest rule to terminate.
        let rule = if k <= choices.len() {
            rules[c % rules.len()]
        } else {
            rules.iter().min_by_key(|r| r.len()).unwrap()
        };
        stack.extend(rule.iter().rev());
    }
    Some(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn parser_equals_naive(g in grammar_strategy(), input in prop::collection::vec(prop::sample::select(TERMINALS), 0..7),
                           choices in prop::collection::vec(any::<u8>(), 0..12)) {
        let Some(cfg) = cfg_of(&g) else { return Ok(()) };
        let cfg = Arc::new(cfg);
        let spec = spec();
        for s in [input.clone(), derive(&g, &choices).unwrap_or_default()] {
            let expected = naive_accepts(&g, &s);
            prop_assert_eq!(accepts(&cfg, DerivreLexer::new(&spec).unwrap(), &s), expected, "input {:?}", String::from_utf8_lossy(&s));
            prop_assert_eq!(accepts(&cfg, AutomataLexer::new(&spec).unwrap(), &s), expected);
        }
    }

    #[test]
    fn trie_mask_equals_brute_force(g in grammar_strategy(), choices in prop::collection::vec(any::<u8>(), 0..12),
                                    noise in prop::collection::vec(prop::sample::select(TERMINALS), 0..4)) {
        let Some(cfg) = cfg_of(&g) else { return Ok(()) };
        let cfg = Arc::new(cfg);
        let spec = spec();
        let mut input = derive(&g, &choices).unwrap_or_default();
        input.extend(noise);
        check_masks(&cfg, DerivreLexer::new(&spec).unwrap(), &input)?;
        check_masks(&cfg, AutomataLexer::new(&spec).unwrap(), &input)?;
    }
}

/// A small JSON-ish grammar with multi-byte greedy lexemes, a lazy lexeme and whitespace
/// skipping: value := NUM | STR | "[" [value ("," value)*] "]".
fn list_grammar() -> (LexerSpec, Arc<Cfg>, LexemeSet) {
    let mut spec = LexerSpec::new();
    let num = spec.add("NUM", RegexSpec::regex("-?[0-9]+"), LexemeKind::Greedy);
    let s = spec.add("STR", RegexSpec::regex(r#""[a-z]*""#), LexemeKind::Greedy);
    let lb = spec.add("LB", RegexSpec::literal("["), LexemeKind::Greedy);
    let rb = spec.add("RB", RegexSpec::literal("]"), LexemeKind::Greedy);
    let comma = spec.add("COMMA", RegexSpec::literal(","), LexemeKind::Greedy);
    let ws = spec.add("WS", RegexSpec::regex("[ \n]+"), LexemeKind::Skip);
    let mut b = CfgBuilder::new();
    let value = b.nonterminal("value");
    let items = b.nonterminal("items");
    let (t_num, t_str, t_lb, t_rb, t_comma) = (
        b.lexeme("NUM", num),
        b.lexeme("STR", s),
        b.lexeme("LB", lb),
        b.lexeme("RB", rb),
        b.lexeme("COMMA", comma),
    );
    b.rule(value, vec![t_num]);
    b.rule(value, vec![t_str]);
    b.rule(value, vec![t_lb, t_rb]);
    b.rule(value, vec![t_lb, items, t_rb]);
    b.rule(items, vec![value]);
    b.rule(items, vec![items, t_comma, value]);
    let cfg = Arc::new(b.build(value, &CfgLimits::default()).unwrap());
    let mut skip = LexemeSet::new();
    skip.insert(ws);
    (spec, cfg, skip)
}

#[test]
fn multi_byte_lexemes_and_skip() {
    let (spec, cfg, skip) = list_grammar();
    let vocab = Vocabulary::bytes();
    let trie = TokTrie::from_vocab(&vocab).unwrap();
    let o = ParserOptions { skip, eos: vocab.eos_tokens().to_vec(), ..Default::default() };
    let mut p = Parser::new(cfg.clone(), DerivreLexer::new(&spec).unwrap(), o.clone()).unwrap();
    for &b in br#"[12, "ab" ,[ ],-3]"#.iter() {
        let mask = p.compute_mask(&trie).unwrap();
        assert!(mask.contains(TokenId(b as u32)), "byte {:?} not in mask", b as char);
        assert_eq!(mask, brute_mask(&p, &vocab));
        p.consume_bytes(&[b]).unwrap();
    }
    assert!(p.is_accepting().unwrap());
    let mask = p.compute_mask(&trie).unwrap();
    assert!(mask.contains(TokenId(256)));
    // After a complete value only EOS: skip lexemes go between lexemes, not after the last.
    assert_eq!(mask.count(), 1);
    assert!(p.consume_bytes(b"1").is_err());

    let mut p = Parser::new(cfg, DerivreLexer::new(&spec).unwrap(), o).unwrap();
    p.consume_bytes(b"[12").unwrap();
    let before = p.stats();
    let mask = p.compute_mask(&trie).unwrap();
    let after = p.stats();
    // Each of the 246 non-digit bytes ends NUMBER at the same row in the same lexer state
    // (most are then rejected by the next row), and so does the EOS check: the row after
    // NUMBER is computed once and reused 246 times; ',' and ']' then end their own one-byte
    // lexemes (two more rows).
    assert_eq!(after.rows_computed - before.rows_computed, 3);
    assert_eq!(after.rows_reused - before.rows_reused, 246);
    // Digits continue the number; ',' ']' ' ' '\n' end it.
    assert_eq!(mask.count(), 14);
    assert!(!mask.contains(TokenId(256)));
}

#[test]
fn forced_bytes_and_captures() {
    let mut spec = LexerSpec::new();
    let kw = spec.add("KW", RegexSpec::literal("name:"), LexemeKind::Greedy);
    let id = spec.add("ID", RegexSpec::regex("[a-z]+"), LexemeKind::Greedy);
    let semi = spec.add("SEMI", RegexSpec::literal(";"), LexemeKind::Greedy);
    let mut b = CfgBuilder::new();
    let start = b.nonterminal("start");
    let name = b.nonterminal("name");
    let (t_kw, t_id, t_semi) = (b.lexeme("KW", kw), b.lexeme("ID", id), b.lexeme("SEMI", semi));
    b.rule(start, vec![t_kw, name, t_semi]);
    b.rule(name, vec![t_id]);
    b.set_props(name, earley::SymbolProps { capture: Some("who".into()), ..Default::default() });
    let cfg = Arc::new(b.build(start, &CfgLimits::default()).unwrap());
    let mut p =
        Parser::new(cfg, DerivreLexer::new(&spec).unwrap(), ParserOptions::default()).unwrap();
    assert_eq!(p.forced_bytes().unwrap(), b"name:");
    p.consume_bytes(b"name:bo").unwrap();
    assert_eq!(p.forced_bytes().unwrap(), b"");
    p.consume_bytes(b"b;").unwrap();
    assert!(p.is_accepting().unwrap());
    assert_eq!(p.captures(), vec![("who".to_string(), b"bob".to_vec())]);
}

#[test]
fn limits_are_typed_errors() {
    // Highly ambiguous: s -> s s | "a"; rows grow quadratically.
    let mut spec = LexerSpec::new();
    let a = spec.add("A", RegexSpec::literal("a"), LexemeKind::Greedy);
    let mut b = CfgBuilder::new();
    let s = b.nonterminal("s");
    let ta = b.lexeme("A", a);
    b.rule(s, vec![s, s]);
    b.rule(s, vec![ta]);
    let cfg = Arc::new(b.build(s, &CfgLimits::default()).unwrap());
    let limits = ParserLimits { max_items_in_row: 50, ..Default::default() };
    let mut p = Parser::new(
        cfg,
        DerivreLexer::new(&spec).unwrap(),
        ParserOptions { limits, ..Default::default() },
    )
    .unwrap();
    let err = (0..100).find_map(|_| p.consume_bytes(b"a").err()).expect("the limit is hit");
    assert_eq!(err.kind(), ErrorKind::Limit);
    assert!(err.message().contains("items per row"), "{err}");
}

#[test]
fn unproductive_start_is_an_error() {
    let mut b = CfgBuilder::new();
    let s = b.nonterminal("s");
    b.rule(s, vec![s]);
    let err = b.build(s, &CfgLimits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Grammar);
}

/// A set cancellation flag fails the next mask on the parser's slow path (a fresh parser's
/// first bytes are cold transitions), with a sticky `Cancelled` error and no mask; a
/// cleared flag does not bring the parser back, and an unset flag changes nothing.
#[test]
fn the_cancellation_flag_stops_a_mask_on_the_slow_path() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let (spec, cfg, skip) = list_grammar();
    let vocab = Vocabulary::bytes();
    let trie = TokTrie::from_vocab(&vocab).unwrap();
    let o = ParserOptions { skip, eos: vocab.eos_tokens().to_vec(), ..Default::default() };
    let flag = Arc::new(AtomicBool::new(false));
    let mut p = Parser::new(cfg.clone(), DerivreLexer::new(&spec).unwrap(), o.clone()).unwrap();
    p.set_cancel(Some(flag.clone()));
    let mut plain = Parser::new(cfg, DerivreLexer::new(&spec).unwrap(), o).unwrap();
    assert_eq!(p.compute_mask(&trie).unwrap(), plain.compute_mask(&trie).unwrap());
    p.consume_bytes(b"[1").unwrap();
    flag.store(true, Ordering::Relaxed);
    let e = p.compute_mask(&trie).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    flag.store(false, Ordering::Relaxed);
    assert_eq!(p.compute_mask(&trie).unwrap_err().kind(), ErrorKind::Cancelled, "sticky");
    assert!(p.consume_bytes(b"2").is_err());
}
