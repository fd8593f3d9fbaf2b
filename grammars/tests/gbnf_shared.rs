//! Every llama.cpp example grammar in ../shared/data/gbnf compiles and accepts sample texts
//! written for it (ignored without ../shared; .ci/run runs it when ../shared is there).

use std::path::Path;

use earley::{Parser, ParserOptions};
use grammars::{compile, CompileLimits};

/// (file, texts the grammar must accept, texts it must reject)
const SAMPLES: &[(&str, &[&str], &[&str])] = &[
    ("arithmetic.gbnf", &["x=1\n", "a+12 = (b*c)\nd=2\n"], &["x=1", "=1\n"]),
    (
        "json.gbnf",
        &["{\"a\": [1, 2.5, \"x\"], \"b\": {\"c\": null}}", "{}"],
        &["{\"a\" 1}", "[1]x"],
    ),
    ("json_arr.gbnf", &["[\n{\"a\": 1},\n{\"b\": true}]", "[\n]"], &["[1,]", "[]"]),
    ("list.gbnf", &["- one\n- two\n"], &["one\n"]),
    (
        "chess.gbnf",
        &["1. e4 e5\n2. Nf3 Nc6\n", "1. O-O-O exd5+\n12. Qxf7# a8=Q\n"],
        &["1. e4 e5\n", "1. z9 e5\n2. a1 a2\n"],
    ),
    ("english.gbnf", &["Hello, world."], &[]),
    ("japanese.gbnf", &["こんにちは"], &[]),
    (
        "c.gbnf",
        &["int main(int a){return a;}", "float f(){x = 1+2*y;while(x<3){x = x-1;}}"],
        &["int main( { }", "main(){}"],
    ),
    (
        "vllm-sql.gbnf",
        &["SELECTcol_1fromtable_1wherecol_2=2"],
        &["SELECT col_1 from table_1 where col_1=1", "SELECTcol_3fromtable_1wherecol_1=1"],
    ),
];

fn accepts(g: &grammars::CompiledGrammar, text: &str) -> bool {
    let lexer = lexer::DerivreLexer::new(&g.spec).expect("lexer builds");
    let opts = ParserOptions { skip: g.skip.clone(), ..Default::default() };
    let mut p = Parser::new(g.cfg.clone(), lexer, opts).expect("parser starts");
    text.bytes().all(|b| p.consume_bytes(&[b]).is_ok()) && p.is_accepting().unwrap_or(false)
}

#[test]
#[ignore = "needs ../shared/data/gbnf; .ci/run runs it with --ignored when ../shared is there"]
fn shared_gbnf_grammars() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/gbnf");
    assert!(dir.exists(), "{} not found (this test needs ../shared)", dir.display());
    let mut failures = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut n = 0;
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "gbnf")) {
        n += 1;
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(path).unwrap();
        let g = match grammars::gbnf::parse(&src)
            .and_then(|s| compile(&s, None, &CompileLimits::default()))
        {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{name}: does not compile: {e}"));
                continue;
            }
        };
        let Some((_, good, bad)) = SAMPLES.iter().find(|s| s.0 == name) else {
            failures.push(format!("{name}: no sample texts"));
            continue;
        };
        for t in *good {
            if !accepts(&g, t) {
                failures.push(format!("{name}: should accept {t:?}"));
            }
        }
        for t in *bad {
            if accepts(&g, t) {
                failures.push(format!("{name}: should reject {t:?}"));
            }
        }
    }
    println!("{n} grammars checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
