//! Shared by the benches.

use llguidance::GrammarSource;

/// Qwen 3's tool-call structural tag (`<tool_call>` trigger, `<think>` and `</think>`
/// excluded from the free text) for `tools`, as `grammars::tool_calls` builds it.
pub fn qwen3_tag(tools: &[serde_json::Value]) -> GrammarSource {
    let tag = grammars::tool_calls::structural_tag(
        "qwen_3",
        tools,
        &serde_json::json!("auto"),
        grammars::tool_calls::Reasoning::Disabled,
        true,
    )
    .expect("tag");
    GrammarSource::StructuralTag(tag.to_string())
}
