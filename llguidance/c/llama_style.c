/*
 * llama_style.c: calls the C API the way llama.cpp's common/llguidance.cpp does, with a real
 * vocabulary (o200k, built in, no files): the token bytes are read one token at a time as
 * llama.cpp reads them from llama_detokenize (a special token, empty without specials, gets
 * the 0xFF prefix), the tokenizer is made once from one buffer plus lengths and a tokenize
 * callback (LlgTokenizerInit initialised positionally, as llama.cpp does), each sampler gets a
 * clone of it, and the original is freed while the clones live. Grammars are Lark with
 * %llguidance {} and %json blocks; masks are read through llg_matcher_get_mask; tokens are
 * consumed; matchers are reset and cloned; errors are read from the matcher.
 *
 * Exits 0 and prints "ok" when every check passes. Built with -Wall -Wextra -Werror and run
 * by llguidance/tests/c_api.rs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llguidance.h"

static int failures = 0;

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "llama_style.c:%d: check failed: %s\n", __LINE__, #cond);          \
      failures++;                                                                        \
    }                                                                                    \
  } while (0)

/* The "model": a tokenizer with its own canonical tokenization (llama.cpp's llama_vocab). */
static LlgTokenizer *model;

/* llama_sampler_llg_tokenize_fn: the model's tokenizer (llama_tokenize in llama.cpp). */
static size_t tokenize_fn(const void *user_data, const uint8_t *bytes, size_t bytes_len,
                          uint32_t *output_tokens, size_t output_tokens_len) {
  return llg_tokenize_bytes((const LlgTokenizer *)user_data, bytes, bytes_len, output_tokens,
                            output_tokens_len);
}

/* The vocabulary as llama.cpp builds it. */
static uint32_t n_vocab;
static uint32_t *token_lens;
static uint8_t *token_bytes;
static size_t *token_off;

/* llama_sampler_llg_new_tokenizer. */
static LlgTokenizer *new_tokenizer(uint32_t tok_eos) {
  n_vocab = (uint32_t)llg_x_tokenizer_vocab_size(model);
  token_lens = calloc(n_vocab, sizeof(uint32_t));
  token_off = calloc(n_vocab, sizeof(size_t));
  size_t cap = (size_t)n_vocab * 16 + 1024 * 1024;
  token_bytes = malloc(cap);
  size_t offset = 0;
  for (uint32_t i = 0; i < n_vocab; i++) {
    char *dp = (char *)token_bytes + offset;
    size_t max_token = 1024;
    /* llama_detokenize(vocab, &token, 1, dp, max_token, false, false): no specials. */
    size_t size = llg_decode_tokens(model, &i, 1, dp, max_token, LLG_DECODE_NONE) - 1;
    if (size == 0) {
      /* Again with specials; a special token gets the 0xFF prefix. */
      size = llg_decode_tokens(model, &i, 1, dp + 1, max_token - 1, LLG_DECODE_INCLUDE_SPECIAL) - 1;
      if (size != 0) {
        *dp = (char)0xff;
        size += 1;
      }
    }
    token_lens[i] = (uint32_t)size;
    token_off[i] = offset;
    offset += size;
  }
  LlgTokenizerInit tinit = {
      /* .vocab_size                         = */ n_vocab,
      /* .tok_eos                            = */ tok_eos,
      /* .token_lens                         = */ token_lens,
      /* .token_bytes                        = */ token_bytes,
      /* .tokenizer_json                     = */ NULL,
      /* .tokenize_assumes_string            = */ true,
      /* .tokenize_fn                        = */ tokenize_fn,
      /* .use_approximate_greedy_tokenize_fn = */ false,
      /* .tokenize_user_data                 = */ model,
      /* .slices                             = */ NULL,
  };
  char error_buffer[1024];
  LlgTokenizer *t = llg_new_tokenizer(&tinit, error_buffer, sizeof(error_buffer));
  if (!t) fprintf(stderr, "llg_new_tokenizer: %s\n", error_buffer);
  return t;
}

/* llama_sampler_llg_new. */
static LlgMatcher *new_matcher(LlgTokenizer *tokenizer, const char *kind, const char *data) {
  LlgConstraintInit cinit;
  llg_constraint_init_set_defaults(&cinit, tokenizer);
  cinit.log_stderr_level = 0;
  return llg_new_matcher(&cinit, kind, data);
}

static int allowed(const uint32_t *mask, uint32_t t) { return (mask[t / 32] >> (t % 32)) & 1; }

/* Generates `text` under the grammar as a sampler would: at each step compute the mask
 * (once per position, as llama.cpp's has_llg_res), take the longest allowed token that
 * spells the next bytes of text, consume it. Returns the number of tokens, -1 on failure. */
static int feed(LlgMatcher *m, const char *text, uint32_t eos) {
  size_t at = 0, len = strlen(text);
  int n = 0;
  while (at < len) {
    if (llg_matcher_compute_mask(m) != 0) {
      fprintf(stderr, "compute_mask: %s\n", llg_matcher_get_error(m));
      return -1;
    }
    const uint32_t *mask = llg_matcher_get_mask(m);
    CHECK(mask != NULL);
    if (!mask) return -1;
    CHECK(!allowed(mask, eos));
    uint32_t best = UINT32_MAX, best_len = 0;
    for (uint32_t t = 0; t < n_vocab; t++) {
      uint32_t l = token_lens[t];
      if (!allowed(mask, t) || l == 0 || l <= best_len || l > len - at) continue;
      if (token_bytes[token_off[t]] == 0xff) continue;
      if (memcmp(token_bytes + token_off[t], text + at, l) == 0) {
        best = t;
        best_len = l;
      }
    }
    if (best == UINT32_MAX) {
      fprintf(stderr, "no allowed token spells %.20s...\n", text + at);
      return -1;
    }
    if (llg_matcher_consume_token(m, best) != 0) return -1;
    /* llama.cpp's accept: the mask is gone until computed again. */
    CHECK(llg_matcher_get_mask(m) == NULL);
    at += best_len;
    n++;
  }
  return n;
}

/* feed, then the end: EOS allowed and the grammar accepting. */
static int generate(LlgMatcher *m, const char *text, uint32_t eos) {
  int n = feed(m, text, eos);
  if (n < 0) return n;
  CHECK(llg_matcher_compute_mask(m) == 0);
  const uint32_t *mask = llg_matcher_get_mask(m);
  CHECK(mask && allowed(mask, eos));
  CHECK(llg_matcher_is_accepting(m));
  return n;
}

static const char *LARK_JSON =
    "%llguidance {}\n"
    "start: \"Answer: \" answer\n"
    "answer: %json {\n"
    "  \"type\": \"object\",\n"
    "  \"properties\": {\"name\": {\"type\": \"string\"}, \"age\": {\"type\": \"integer\", "
    "\"minimum\": 0}},\n"
    "  \"required\": [\"name\", \"age\"], \"additionalProperties\": false\n"
    "}\n";

int main(void) {
  char err[256];
  model = llg_x_new_tokenizer("o200k", err, sizeof err);
  if (!model) {
    fprintf(stderr, "o200k: %s\n", err);
    return 1;
  }
  uint32_t eos = 199999; /* <|endoftext|> */
  LlgTokenizer *cached = new_tokenizer(eos);
  CHECK(cached != NULL);
  if (!cached) return 1;
  /* One clone per sampler; the cached original is freed while they live. */
  LlgTokenizer *t1 = llg_clone_tokenizer(cached);
  LlgTokenizer *t2 = llg_clone_tokenizer(cached);
  llg_free_tokenizer(cached);

  LlgMatcher *m = new_matcher(t1, "lark", LARK_JSON);
  CHECK(llg_matcher_get_error(m) == NULL);
  CHECK(llg_matcher_get_mask(m) == NULL);
  CHECK(llg_matcher_get_mask_byte_size(m) == (n_vocab + 31) / 32 * 4);

  /* Served masks: "Answer: " is forced, so the first mask is its first token only. */
  CHECK(llg_matcher_compute_mask(m) == 0);
  const uint32_t *mask = llg_matcher_get_mask(m);
  size_t allowed_n = 0;
  for (uint32_t t = 0; t < n_vocab; t++) allowed_n += allowed(mask, t);
  CHECK(allowed_n == 1);
  uint32_t ff[8];
  int nff = llg_matcher_compute_ff_tokens(m, ff, 8);
  CHECK(nff >= 1 && allowed(mask, ff[0]));

  const char *text = "Answer: {\"name\": \"Ada\", \"age\": 36}";
  CHECK(generate(m, text, eos) > 0);
  CHECK(llg_matcher_consume_token(m, eos) == 0);
  CHECK(llg_matcher_is_stopped(m));

  /* Reset (llama.cpp's llama_sampler_llg_reset) and generate again. */
  CHECK(llg_matcher_reset(m) == 0);
  CHECK(llg_matcher_is_stopped(m) == false);
  CHECK(generate(m, text, eos) > 0);

  /* A clone (llama_sampler_llg_clone) continues on its own. */
  CHECK(llg_matcher_reset(m) == 0);
  CHECK(feed(m, "Answer: {\"name\": \"B", eos) > 0);
  LlgMatcher *c = llg_clone_matcher(m);
  llg_free_matcher(m);
  CHECK(llg_matcher_get_error(c) == NULL);
  CHECK(generate(c, "ob\", \"age\": 7}", eos) > 0);

  /* -0 is not an integer with bounds (as LLGuidance). */
  LlgMatcher *num = new_matcher(t2, "json", "{\"type\": \"integer\", \"minimum\": 0}");
  uint32_t minus[4];
  size_t nm = llg_tokenize_bytes(model, (const uint8_t *)"-", 1, minus, 4);
  CHECK(nm == 1);
  CHECK(llg_matcher_compute_mask(num) == 0);
  CHECK(!allowed(llg_matcher_get_mask(num), minus[0]));
  llg_free_matcher(num);

  /* A rejected token: the error state, with a message that stays. */
  LlgMatcher *r = new_matcher(t2, "regex", "[0-9]+");
  uint32_t a_tok[4];
  size_t na = llg_tokenize_bytes(model, (const uint8_t *)"a", 1, a_tok, 4);
  CHECK(na == 1);
  CHECK(llg_matcher_consume_token(r, a_tok[0]) == -1);
  const char *e1 = llg_matcher_get_error(r);
  CHECK(e1 != NULL);
  CHECK(llg_matcher_is_error(r));
  CHECK(llg_matcher_compute_mask(r) == -1);
  CHECK(llg_matcher_get_mask(r) == NULL);
  CHECK(llg_matcher_get_error(r) == e1);
  llg_free_matcher(r);

  /* A grammar that does not compile: never NULL, the error names the problem. */
  LlgMatcher *bad = new_matcher(t2, "lark", "start: foo");
  CHECK(bad != NULL);
  CHECK(llg_matcher_get_error(bad) != NULL);
  CHECK(llg_matcher_compute_mask(bad) == -1);
  llg_free_matcher(bad);

  /* %llguidance with a stop-terminated free text and a nested %json grammar. */
  LlgMatcher *lz = new_matcher(t2, "lark",
                               "%llguidance {}\nstart: \"<think>\" think j\n"
                               "think[stop=\"</think>\"]: /(.|\\n)*/\n"
                               "j: %json {\"type\": \"boolean\"}\n");
  CHECK(llg_matcher_get_error(lz) == NULL);
  CHECK(generate(lz, "<think>hmm</think>true", eos) > 0);
  llg_free_matcher(lz);

  llg_free_matcher(c);
  llg_free_tokenizer(t1);
  llg_free_tokenizer(t2);
  llg_free_tokenizer(model);
  free(token_lens);
  free(token_bytes);
  free(token_off);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
