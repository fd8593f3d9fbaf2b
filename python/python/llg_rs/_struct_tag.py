import json
from typing import Any, Dict, List, Union


def _lit(s: str) -> str:
    return json.dumps(s) if s else ""


class StructTag:
    """A tool-call tag inside free text: when the model writes ``trigger``, the text must go
    on as ``begin``, then match ``grammar``, then ``end``.

    Args:
        trigger: the text that starts the tag (e.g. ``"<function"`` or ``"<|python_tag|>"``).
        begin: the whole opening, starting with ``trigger`` (e.g. ``"<function=foo>"``).
        grammar: the body: a JSON Schema (dict, or text starting with ``{``) or a Lark
            grammar (text with a ``start:`` rule).
        end: the text that closes the tag (may be empty).
    """

    def __init__(self, *, trigger: str, begin: str, grammar: Union[str, Dict[str, Any]], end: str):
        self.trigger = trigger
        self.begin = begin
        self.grammar = grammar
        self.end = end
        self._validate()

    def _validate(self) -> None:
        assert len(self.trigger) > 0, "trigger must not be empty"
        assert self.begin.startswith(self.trigger), "begin must start with trigger"

    def __repr__(self) -> str:
        return f"StructTag(trigger={self.trigger!r}, begin={self.begin!r}, end={self.end!r})"

    @staticmethod
    def to_grammar(
        tags: List["StructTag"],
        *,
        assume_special: bool = True,
        text_regex: str = r"(.|\n)*",
    ) -> str:
        """A grammar for free text (``text_regex``) with any number of the tags in it.

        A trigger is matched lazily in the text (the text ends at its first occurrence).
        With ``assume_special``, a trigger of the form ``<...>`` is taken to be a special
        token of the tokenizer. Returns Lark text, or grammar JSON when a tag's body is a
        Lark grammar of its own.
        """
        assert len(tags) > 0, "tags must not be empty"
        assert "/" not in text_regex, "text_regex must not contain /"
        lines = [
            "%llguidance {}",
            "start: (" + " | ".join(f"tag_{i}" for i in range(len(tags))) + ")* tag_end",
            "tag_end: TAG_TEXT",
            f"TAG_TEXT: /{text_regex}/",
        ]
        extra: List[Dict[str, Any]] = []
        for i, tag in enumerate(tags):
            assert isinstance(tag, StructTag), "tags must be StructTag instances"
            tag._validate()
            g = tag.grammar
            if isinstance(g, dict):
                body = "%json " + json.dumps(g)
            elif isinstance(g, str) and g.lstrip().startswith("{"):
                body = "%json " + g
            elif isinstance(g, str):
                name = f"tag_{i}_grm"
                extra.append({"name": name, "lark_grammar": g})
                body = "@" + name
            else:
                raise ValueError("grammar must be a string or a dictionary")
            rest = f"{_lit(tag.begin[len(tag.trigger):])} {body} {_lit(tag.end)}"
            trig = tag.trigger
            lines.append("")
            if assume_special and trig.startswith("<") and trig.endswith(">"):
                lines.append(f"tag_{i}: TAG_TEXT {trig} {rest}")
            else:
                lines.append(f"tag_{i}_trig[lazy]: TAG_TEXT {json.dumps(trig)}")
                lines.append(f"tag_{i}: tag_{i}_trig {rest}")
        lark = "\n".join(lines) + "\n"
        if not extra:
            return lark
        return json.dumps({"grammars": [{"name": "struct_tag", "lark_grammar": lark}] + extra})
