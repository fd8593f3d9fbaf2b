//! Structural tags for tool calling, built from OpenAI-style `tools` and `tool_choice` for
//! a model's wire format, with its reasoning section; compile the result with
//! [`crate::structural_tag::from_value`].
//!
//! Models (the shapes XGrammar 0.2.8's presets and SGLang's tool parsers use):
//!
//! | model | a call |
//! |---|---|
//! | `llama` | `{"name": "f", "parameters": {...}}` (Llama 3.x JSON) |
//! | `llama_python_tag` | `<|python_tag|>{"name": "f", "parameters": {...}}` |
//! | `qwen_3`, `hermes` | `<tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>` |
//! | `qwen_3_coder` | `<tool_call>\n<function=f>\n<parameter=k>v</parameter>…\n</function>\n</tool_call>` |
//! | `deepseek_r1` | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{...}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>` |
//! | `deepseek_v3_1` | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>` |
//! | `mistral` | `[TOOL_CALLS] [{"name": "f", "arguments": {...}}]` |
//! | `harmony` (gpt-oss) | `<|channel|>commentary to=functions.f<|constrain|>json<|message|>{...}<|call|>`, channels separated by `<|start|>assistant` |
//!
//! `tool_choice`: `"auto"` (text, calls optional), `"required"` (the output starts with a
//! call), `"none"` (text only), or `{"type": "function", "function": {"name": f}}` (a call
//! of `f`). `parallel_tool_calls: false` allows at most one call. Reasoning: `Disabled`
//! (none), `Enabled` (the prompt opened `<think>`: thinking text up to `</think>` comes
//! first), `Auto` (an optional `<think>…</think>` section first); for harmony, the
//! `analysis` channel. [`structural_tag_with`] adds a thinking budget and strict thinking
//! ([`Thinking`]).

use serde_json::{json, Value};

use crate::{Error, ErrorKind};

/// The reasoning section before the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reasoning {
    /// No reasoning section.
    Disabled,
    /// The prompt already opened `<think>`: thinking text up to `</think>` comes first.
    Enabled,
    /// An optional `<think>…</think>` section first.
    Auto,
}

/// How the reasoning section may be written ([`structural_tag_with`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Thinking {
    /// At most this many tokens between `<think>` and `</think>` (vLLM's
    /// `thinking_token_budget`): after them only the close comes, as its token or its text.
    /// The thinking is then any tokens (a token-level count), not text.
    pub budget: Option<u32>,
    /// No tool-call trigger inside the thinking (SGLang's `--enable-strict-thinking`); EOS
    /// is never allowed there (the grammar does not accept inside it). With a budget, the
    /// thinking is tokens and the triggers are not excluded.
    pub strict: bool,
}

/// The models [`structural_tag`] knows.
pub const MODELS: &[&str] = &[
    "llama",
    "llama_python_tag",
    "qwen_3",
    "hermes",
    "qwen_3_coder",
    "deepseek_r1",
    "deepseek_v3_1",
    "mistral",
    "harmony",
];

fn err(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Value, msg.into())
}

/// `(name, parameters schema)` of each OpenAI-style tool.
fn functions(tools: &[Value]) -> Result<Vec<(String, Value)>, Error> {
    tools
        .iter()
        .map(|t| {
            let f = t.get("function").unwrap_or(t);
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| err("a tool needs function.name"))?;
            let params = f.get("parameters").cloned().unwrap_or(json!({"type": "object"}));
            Ok((name.to_string(), params))
        })
        .collect()
}

/// The structural tag for `model`'s tool calls.
pub fn structural_tag(
    model: &str,
    tools: &[Value],
    tool_choice: &Value,
    reasoning: Reasoning,
    parallel_tool_calls: bool,
) -> Result<Value, Error> {
    structural_tag_with(
        model,
        tools,
        tool_choice,
        reasoning,
        parallel_tool_calls,
        Thinking::default(),
    )
}

/// [`structural_tag`] with a thinking budget and strict thinking ([`Thinking`]).
pub fn structural_tag_with(
    model: &str,
    tools: &[Value],
    tool_choice: &Value,
    reasoning: Reasoning,
    parallel_tool_calls: bool,
    thinking: Thinking,
) -> Result<Value, Error> {
    let mut fns = functions(tools)?;
    let (required, none) = match tool_choice {
        Value::String(s) if s == "auto" => (false, false),
        Value::String(s) if s == "required" => (true, false),
        Value::String(s) if s == "none" => (false, true),
        Value::Object(o) => {
            let name = o
                .get("function")
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .ok_or_else(|| err("a named tool_choice needs function.name"))?;
            fns.retain(|(n, _)| n == name);
            if fns.is_empty() {
                return Err(err(format!(
                    "tool_choice names {name:?}, which is not among the tools"
                )));
            }
            (true, false)
        }
        other => return Err(err(format!("unknown tool_choice {other}"))),
    };
    if fns.is_empty() && !none {
        return Err(err("no tools"));
    }
    let think = ["<think>".to_string(), "</think>".to_string()];
    let body = if none {
        // Text only: none of the model's call triggers.
        json!({"type": "any_text", "excludes": triggers_of(model)?})
    } else {
        calls(model, &fns, required, !parallel_tool_calls)?
    };
    let with_reasoning =
        |prefix: Value| json!({"type": "sequence", "elements": [prefix, body.clone()]});
    let think_text = match thinking.budget {
        Some(n) => json!({"type": "any_tokens", "max_tokens": n}),
        None if thinking.strict => {
            let mut ex: Vec<String> = think.to_vec();
            ex.extend(triggers_of(model)?.into_iter().map(str::to_string));
            json!({"type": "any_text", "excludes": ex})
        }
        None => json!({"type": "any_text", "excludes": think}),
    };
    let tag = match (model, reasoning) {
        (_, Reasoning::Disabled) | ("llama" | "llama_python_tag" | "mistral" | "harmony", _) => {
            body.clone()
        }
        ("qwen_3" | "hermes" | "qwen_3_coder", Reasoning::Enabled) => with_reasoning(json!({
            "type": "sequence", "elements": [
                {"type": "tag", "begin": "", "content": think_text, "end": "</think>"},
                {"type": "const_string", "value": "\n\n"}]})),
        ("qwen_3" | "hermes" | "qwen_3_coder", Reasoning::Auto) => with_reasoning(json!({
            "type": "optional", "content": {"type": "sequence", "elements": [
                {"type": "tag", "begin": "<think>", "content": think_text, "end": "</think>"},
                {"type": "const_string", "value": "\n\n"}]}})),
        (_, Reasoning::Enabled) => with_reasoning(
            json!({"type": "tag", "begin": "", "content": think_text, "end": "</think>"}),
        ),
        (_, Reasoning::Auto) => with_reasoning(json!({"type": "optional", "content":
            {"type": "tag", "begin": "<think>", "content": think_text, "end": "</think>"}})),
    };
    let tag = if model == "harmony" && reasoning != Reasoning::Disabled {
        harmony(&fns, required, true)
    } else {
        tag
    };
    Ok(json!({"type": "structural_tag", "format": tag}))
}

fn triggers_of(model: &str) -> Result<Vec<&'static str>, Error> {
    Ok(match model {
        "llama" => vec!["{\"name\": "],
        "llama_python_tag" => vec!["<|python_tag|>"],
        "qwen_3" | "hermes" | "qwen_3_coder" => vec!["<tool_call>"],
        "deepseek_r1" | "deepseek_v3_1" => vec!["<｜tool▁calls▁begin｜>"],
        "mistral" => vec!["[TOOL_CALLS]"],
        "harmony" => vec!["<|channel|>commentary"],
        other => {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("no tool-call format for model {other:?} (known: {})", MODELS.join(", ")),
            ))
        }
    })
}

/// The calls part: `triggered_tags` over one tag per function (or the model's own shape).
fn calls(
    model: &str,
    fns: &[(String, Value)],
    required: bool,
    single: bool,
) -> Result<Value, Error> {
    let schema = |s: &Value| json!({"type": "json_schema", "json_schema": s});
    let think = json!(["<think>", "</think>"]);
    let triggered = |trigger: &str, tags: Vec<Value>, excludes: Value| {
        json!({"type": "triggered_tags", "triggers": [trigger], "tags": tags,
            "at_least_one": required, "stop_after_first": single, "excludes": excludes})
    };
    Ok(match model {
        "llama" => triggered(
            "{\"name\": ",
            fns.iter()
                .map(|(n, s)| {
                    json!({"type": "tag", "begin": format!("{{\"name\": \"{n}\", \"parameters\": "),
                    "content": schema(s), "end": "}"})
                })
                .collect(),
            think,
        ),
        "llama_python_tag" => triggered(
            "<|python_tag|>",
            fns.iter()
                .map(|(n, s)| {
                    json!({"type": "tag",
                    "begin": format!("<|python_tag|>{{\"name\": \"{n}\", \"parameters\": "),
                    "content": schema(s), "end": "}"})
                })
                .collect(),
            json!([]),
        ),
        "qwen_3" | "hermes" => triggered(
            "<tool_call>",
            fns.iter()
                .map(|(n, s)| {
                    json!({"type": "tag",
                    "begin": format!("<tool_call>\n{{\"name\": \"{n}\", \"arguments\": "),
                    "content": schema(s), "end": "}\n</tool_call>"})
                })
                .collect(),
            think,
        ),
        "qwen_3_coder" => triggered(
            "<tool_call>\n<function=",
            fns.iter()
                .map(|(n, s)| {
                    json!({"type": "tag", "begin": format!("<tool_call>\n<function={n}>\n"),
                    "content": {"type": "json_schema", "json_schema": s, "style": "qwen_xml"},
                    "end": "\n</function>\n</tool_call>"})
                })
                .collect(),
            think,
        ),
        "deepseek_r1" | "deepseek_v3_1" => {
            let (sep, inner): (&str, Vec<Value>) = if model == "deepseek_r1" {
                (
                    "\n",
                    fns.iter()
                        .map(|(n, s)| {
                            json!({"type": "tag",
                    "begin": format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n"),
                    "content": schema(s), "end": "\n```<｜tool▁call▁end｜>"})
                        })
                        .collect(),
                )
            } else {
                (
                    "",
                    fns.iter()
                        .map(|(n, s)| {
                            json!({"type": "tag",
                    "begin": format!("<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>"),
                    "content": schema(s), "end": "<｜tool▁call▁end｜>"})
                        })
                        .collect(),
                )
            };
            let calls = json!({"type": "tags_with_separator", "tags": inner, "separator": sep,
                "at_least_one": true, "stop_after_first": single});
            triggered(
                "<｜tool▁calls▁begin｜>",
                vec![json!({"type": "tag", "begin": "<｜tool▁calls▁begin｜>", "content": calls,
                    "end": "<｜tool▁calls▁end｜>"})],
                think,
            )
        }
        "mistral" => triggered(
            "[TOOL_CALLS]",
            fns.iter()
                .map(|(n, s)| {
                    json!({"type": "tag",
                    "begin": format!("[TOOL_CALLS] [{{\"name\": \"{n}\", \"arguments\": "),
                    "content": schema(s), "end": "}]"})
                })
                .collect(),
            json!([]),
        ),
        "harmony" => harmony(fns, required, false),
        other => {
            triggers_of(other)?;
            unreachable!("every known model has a shape")
        }
    })
}

/// gpt-oss harmony: channels separated by `<|start|>assistant`; tool calls on the
/// commentary channel; `final` (and, with reasoning, `analysis`) text channels unless a
/// call is required.
fn harmony(fns: &[(String, Value)], required: bool, reasoning: bool) -> Value {
    let mut tags = Vec::new();
    for (n, s) in fns {
        let content = json!({"type": "json_schema", "json_schema": s});
        for begin in [
            format!("<|channel|>commentary to=functions.{n}<|constrain|>json<|message|>"),
            format!(" to=functions.{n}<|channel|>commentary <|constrain|>json<|message|>"),
            format!(" to=functions.{n}<|channel|>commentary json<|message|>"),
        ] {
            tags.push(
                json!({"type": "tag", "begin": begin, "content": content, "end": "<|call|>"}),
            );
        }
    }
    if !required {
        tags.push(json!({"type": "tag", "begin": "<|channel|>final<|message|>",
            "content": {"type": "any_text"}, "end": ["<|end|>", "<|return|>"]}));
        if reasoning {
            tags.push(json!({"type": "tag", "begin": "<|channel|>analysis<|message|>",
                "content": {"type": "any_text"}, "end": ["<|end|>", "<|return|>"]}));
        }
    }
    json!({"type": "tags_with_separator", "tags": tags, "separator": "<|start|>assistant",
        "at_least_one": required})
}
