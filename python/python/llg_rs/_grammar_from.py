import json
from typing import List, Literal, Union

from ._lib import LLMatcher

GrammarFormat = Literal[
    "lark",
    "gbnf",
    "ebnf",
    "cfg",
    "grammar",
    "json_schema",
    "json",
    "regex",
    "choice",
    "llguidance",
    "structural_tag",
]


def _gbnf(text: str) -> str:
    return json.dumps({"grammars": [{"name": "gbnf", "gbnf_grammar": text}]})


def grammar_from(format: GrammarFormat, text: Union[str, List[str], dict]) -> str:
    """A grammar for ``LLMatcher`` from grammar text of the given format.

    - ``"lark"``: LLGuidance's Lark dialect.
    - ``"gbnf"``, ``"ebnf"``, ``"cfg"``, ``"grammar"``: llama.cpp GBNF (text with ``::=``),
      else Lark. GBNF is compiled by this engine's own GBNF front end.
    - ``"json_schema"``, ``"json"``: a JSON Schema (text or dict).
    - ``"regex"``: a regular expression.
    - ``"choice"``: a JSON list of strings (or a list), one of which is the output.
    - ``"llguidance"``: already a grammar (returned as is).
    - ``"structural_tag"``: XGrammar's structural tag (text or dict; ours, not in the
      ``llguidance`` wheel), e.g. what ``xgrammar.get_model_structural_tag(...)`` builds,
      dumped as JSON: tool calling in a model's own format.

    Raises ``ValueError`` for an unknown format.
    """
    if format == "lark":
        return LLMatcher.grammar_from_lark(text)
    if format in ("gbnf", "ebnf", "cfg", "grammar"):
        if "::=" in text:
            err = LLMatcher.validate_grammar(_gbnf(text))
            if err:
                raise ValueError(f"Failed to convert the grammar from GBNF: {err}")
            return _gbnf(text)
        return LLMatcher.grammar_from_lark(text)
    if format in ("json_schema", "json"):
        return LLMatcher.grammar_from_json_schema(text)
    if format == "regex":
        return LLMatcher.grammar_from_regex(text)
    if format == "choice":
        options = json.loads(text) if isinstance(text, str) else list(text)
        return LLMatcher.grammar_from_lark("start: " + " | ".join(json.dumps(o) for o in options))
    if format == "llguidance":
        return text
    if format == "structural_tag":
        tag = json.loads(text) if isinstance(text, str) else text
        if not isinstance(tag, dict):
            raise ValueError("a structural tag is a JSON object")
        return json.dumps({"grammars": [{"name": "structural_tag", "structural_tag": tag}]})
    raise ValueError(f"Unknown grammar type: {format}")
