//! Real vocabulary: the built-in o200k. Masks equal the brute-force reference along the
//! canonical tokenization of sample strings and along random token paths.

mod common;

use common::{check_paths, Reference};
use index::Index;
use toktrie::Tokenizer;

#[test]
fn o200k_regex_suite() {
    let tok = Tokenizer::builtin("o200k").unwrap();
    let vocab = tok.vocab();
    let cases: &[(&str, &str)] = &[
        (r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,4}", "john.doe42@example.com"),
        (
            r"(https?:\/\/)?([\da-z\.-]+)\.([a-z\.]{2,6})([\/\w \.-]*)*\/?",
            "https://www.rust-lang.org/learn/get-started/",
        ),
        (r"((25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(25[0-5]|2[0-4]\d|[01]?\d\d?)", "192.168.10.255"),
        (r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])", "2024-02-29"),
        (
            r#"\{"name": "[A-Za-z ]{1,20}", "age": [0-9]{1,3}\}"#,
            r#"{"name": "Ada Lovelace", "age": 36}"#,
        ),
        (r"[a-z]{1,50}", "constrained"),
    ];
    for (i, (regex, sample)) in cases.iter().enumerate() {
        let index = Index::new(regex, vocab).unwrap();
        let reference = Reference::new(regex);
        let mut path = tok.tokenize(sample).unwrap();
        path.push(vocab.eos_token().unwrap());
        check_paths(&index, &reference, vocab, i as u64 + 100, 1, 8, &path);
    }
}
