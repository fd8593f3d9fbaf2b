//! probe: does each engine accept a JSON text under a schema? For sorting mask differences
//! by hand: `probe SCHEMA.json 'TEXT' ['TEXT'...]` (a MaskBench file's `schema` is used when
//! the file has one). Byte-level replay on both engines (tokenizer: bytes of llama3 tokens
//! are not needed; each engine tokenizes the text itself).

use std::sync::Arc;

use llguidance as ours;
use ref_llg::toktrie::TokEnv;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: probe SCHEMA.json TEXT...");
        std::process::exit(2);
    }
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tok = manifest.join("../../shared/tokenizers/llama3.tokenizer.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&args[0]).expect("read schema"))
            .expect("JSON");
    let schema = v.get("schema").cloned().unwrap_or(v);
    let of = ours::ParserFactory::from_tokenizer_name(&tok.display().to_string()).expect("ours");
    let bt = toktrie_hf_tokenizers::ByteTokenizer::from_file(&tok).expect("ref tokenizer");
    let env: TokEnv = bt.into_tok_env(None).expect("TokEnv");
    let mut rf = ref_llg::ParserFactory::new_simple(&env).expect("ref factory");
    rf.quiet();
    let env2: Arc<_> = env.clone();
    for text in &args[1..] {
        let toks = env2.tokenize(text);
        // ours
        let mut m = of
            .create_matcher(&ours::GrammarSource::JsonSchema(schema.to_string()))
            .expect("ours compile");
        let mut o = "accepted".to_string();
        for (i, &t) in toks.iter().enumerate() {
            if m.consume_token(ours::TokenId(t)).is_err() {
                o = format!("rejected at token {i}");
                break;
            }
        }
        if o == "accepted" && !m.is_accepting().unwrap_or(false) {
            o = "prefix only".into();
        }
        // ref
        let g = ref_llg::api::TopLevelGrammar::from_json_schema(schema.clone());
        let mut r = ref_llg::Matcher::new(rf.create_parser(g));
        let mut rr = "accepted".to_string();
        for (i, &t) in toks.iter().enumerate() {
            if r.consume_token(t).is_err() {
                rr = format!("rejected at token {i}");
                break;
            }
        }
        if rr == "accepted" && !r.is_accepting().unwrap_or(false) {
            rr = "prefix only".into();
        }
        println!("ours: {o:<22} ref: {rr:<22} {text}");
    }
}
