#!/usr/bin/env python3
"""Constrained generation with transformers and llg_rs: a JSON schema forces the output of
``model.generate`` through ``llg_rs.hf.LogitsProcessor``.

The model is a tiny, randomly initialised Llama-architecture model built from a config
(no download): its output is noise, yet the constraint makes it valid JSON for the schema.
The tokenizer is the real Llama-3 one, read from a local ``tokenizer.json``.

    pip install torch transformers        # and llg_rs: pip install ./python
    python python/examples/hf_generate.py                 # the default person schema
    python python/examples/hf_generate.py --schema my_schema.json --seed 3 --greedy

Exit status: 0 when the output parsed and matched the schema, 1 when not, 2 on bad input
(a missing tokenizer or schema file, missing packages).
"""

import argparse
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TOKENIZER = (REPO_ROOT / ".." / "shared" / "tokenizers" / "llama3.tokenizer.json").resolve()

PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 16},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}

# Llama-3's end tokens (the tokenizer.json alone does not say which is EOS).
LLAMA3_EOS = ["<|eot_id|>", "<|end_of_text|>"]

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def check_schema(value, schema, path="$"):
    """A small by-hand validator (type, enum, const, properties, required,
    additionalProperties, items, min/max, lengths): the list of problems found. Keywords it
    does not know are ignored; ``jsonschema`` is used instead when it is installed."""
    errors = []
    if not isinstance(schema, dict):
        return errors
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_TYPES.get(x, lambda v: True)(value) for x in types):
            return [f"{path}: {value!r} is not of type {t}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: {value!r} != {schema['const']!r}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for k in schema.get("required", []):
            if k not in value:
                errors.append(f"{path}: missing required {k!r}")
        for k, v in value.items():
            if k in props:
                errors += check_schema(v, props[k], f"{path}.{k}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected property {k!r}")
            elif isinstance(schema.get("additionalProperties"), dict):
                errors += check_schema(v, schema["additionalProperties"], f"{path}.{k}")
    if isinstance(value, list):
        if isinstance(schema.get("items"), dict):
            for i, v in enumerate(value):
                errors += check_schema(v, schema["items"], f"{path}[{i}]")
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']}")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} > maximum {schema['maximum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            errors.append(f"{path}: {value} <= exclusiveMinimum {schema['exclusiveMinimum']}")
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            errors.append(f"{path}: {value} >= exclusiveMaximum {schema['exclusiveMaximum']}")
    return errors


def validate(value, schema):
    """(validator name, problems)."""
    try:
        import jsonschema
    except ImportError:
        return "by hand", check_schema(value, schema)
    v = jsonschema.validators.validator_for(schema)(schema)
    return "jsonschema", [f"{'/'.join(map(str, e.path)) or '$'}: {e.message}" for e in v.iter_errors(value)]


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Generate JSON for a schema with a tiny random Llama model, constrained by llg_rs.",
        epilog="Exit status: 0 valid output, 1 invalid output, 2 bad input.",
    )
    p.add_argument(
        "--tokenizer",
        type=Path,
        default=DEFAULT_TOKENIZER,
        help="Llama-3 tokenizer.json (default: %(default)s)",
    )
    p.add_argument("--schema", type=Path, help="JSON schema file (default: a small person schema)")
    p.add_argument("--prompt", default="Here is a person, as JSON:\n", help="the prompt (default: %(default)r)")
    p.add_argument("--max-new-tokens", type=int, default=80, help="default: %(default)s")
    p.add_argument("--seed", type=int, default=0, help="seed of the model weights and sampling (default: 0)")
    p.add_argument("--greedy", action="store_true", help="greedy decoding instead of sampling")
    p.add_argument(
        "--flexible-whitespace",
        action="store_true",
        help="allow any JSON whitespace (by default compact JSON: a random model would mostly sample spaces)",
    )
    p.add_argument(
        "--vocab-size",
        type=int,
        help="the model's vocabulary (logits) size; default: the tokenizer's (padded ids are masked)",
    )
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.tokenizer.is_file():
        print(
            f"error: tokenizer file not found: {args.tokenizer}\n"
            "Pass --tokenizer PATH to a Llama-3 tokenizer.json.",
            file=sys.stderr,
        )
        return 2
    if args.schema is not None:
        try:
            schema = json.loads(args.schema.read_text())
        except (OSError, ValueError) as e:
            print(f"error: cannot read schema {args.schema}: {e}", file=sys.stderr)
            return 2
    else:
        schema = PERSON_SCHEMA
    try:
        import torch
        import transformers
    except ImportError as e:
        print(f"error: {e}; install with: pip install torch transformers", file=sys.stderr)
        return 2
    import llg_rs
    import llg_rs.hf

    t0 = time.perf_counter()
    hf_tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(args.tokenizer))
    eos_ids = [i for i in hf_tok.convert_tokens_to_ids(LLAMA3_EOS) if i is not None and i != hf_tok.unk_token_id]
    if not eos_ids:
        print(f"error: {args.tokenizer} has none of the end tokens {LLAMA3_EOS}", file=sys.stderr)
        return 2
    hf_tok.eos_token = hf_tok.convert_ids_to_tokens(eos_ids[0])
    n_tok = len(hf_tok)
    vocab_size = args.vocab_size or n_tok
    if vocab_size < n_tok:
        print(f"error: --vocab-size {vocab_size} is below the tokenizer's {n_tok} tokens", file=sys.stderr)
        return 2
    ll_tok = llg_rs.hf.from_tokenizer(
        hf_tok, n_vocab=vocab_size if vocab_size != n_tok else None, eos_token=eos_ids
    )
    t1 = time.perf_counter()

    overrides = None if args.flexible_whitespace else {"whitespace_flexible": False}
    grammar = llg_rs.LLMatcher.grammar_from_json_schema(schema, overrides=overrides)
    matcher = llg_rs.LLMatcher(ll_tok, grammar)
    if matcher.is_error():
        print(f"error: the schema does not compile: {matcher.get_error()}", file=sys.stderr)
        return 2

    torch.manual_seed(args.seed)
    config = transformers.LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=1024,
        bos_token_id=hf_tok.convert_tokens_to_ids("<|begin_of_text|>"),
        eos_token_id=eos_ids,
        pad_token_id=eos_ids[0],
    )
    model = transformers.LlamaForCausalLM(config).eval()

    prompt_ids = hf_tok(args.prompt, return_tensors="pt")
    processor = llg_rs.hf.LogitsProcessor(matcher)
    t2 = time.perf_counter()
    with torch.no_grad():
        out = model.generate(
            **prompt_ids,
            logits_processor=transformers.LogitsProcessorList([processor]),
            max_new_tokens=args.max_new_tokens,
            do_sample=not args.greedy,
            eos_token_id=eos_ids,
            pad_token_id=eos_ids[0],
        )
    t3 = time.perf_counter()
    new = out[0, prompt_ids["input_ids"].shape[1]:].tolist()
    ended = any(t in eos_ids for t in new)
    if ended:
        new = new[: min(new.index(t) for t in eos_ids if t in new)]
    text = hf_tok.decode(new)

    print(f"tokenizer: {args.tokenizer} ({n_tok} tokens, EOS {eos_ids}; llg_rs tokenizer built in {t1 - t0:.2f}s)")
    print(f"model: random LlamaForCausalLM, vocab {vocab_size}, seed {args.seed}, {'greedy' if args.greedy else 'sampling'}")
    print(f"schema: {json.dumps(schema)}")
    print(f"generated {len(new)} tokens in {t3 - t2:.2f}s, ended by {'EOS' if ended else 'max_new_tokens'}:")
    print(text)
    try:
        value = json.loads(text)
    except ValueError as e:
        print(f"parsed: no ({e})")
        return 1
    print("parsed: yes")
    how, problems = validate(value, schema)
    if problems:
        print(f"valid ({how}): no")
        for p in problems:
            print(f"  {p}")
        return 1
    print(f"valid ({how}): yes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
