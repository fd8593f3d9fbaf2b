//! Fuzz target: json_schema grammar text (before the first NUL byte) and an input (after it).
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use llguidance::GrammarSource;

fuzz_target!(|data: &[u8]| {
    let (g, input) = common::split(data);
    if g.len() > 4096 {
        return;
    }
    common::run(GrammarSource::JsonSchema(g.to_string()), input);
});
