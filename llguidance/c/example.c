/*
 * example.c: drives the llguidance C API end to end. Exits 0 if every check passes, 1
 * otherwise (printing the failed check). Built and run by llguidance/tests/c_api.rs:
 *
 *   gcc example.c -I ../include -L <target>/debug -l:libllguidance.a -lpthread -ldl -lm
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llguidance.h"

static int failures = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "example.c:%d: check failed: %s\n", __LINE__, #cond);      \
      failures++;                                                                \
    }                                                                            \
  } while (0)

static int allowed(const uint32_t *mask, uint32_t t) {
  return (mask[t / 32] >> (t % 32)) & 1;
}

static size_t count(const uint32_t *mask, size_t words) {
  size_t n = 0;
  for (size_t i = 0; i < words; i++) n += (size_t)__builtin_popcount(mask[i]);
  return n;
}

static const char *GRAMMAR =
    "start: \"{\\\"name\\\": \" NAME \", \\\"n\\\": \" NUM \"}\"\n"
    "NAME: /\"[a-z]{1,8}\"/\n"
    "NUM: /[0-9]{1,3}/\n";

/* Drives a matcher over the bytes of text with the "bytes" tokenizer (token = byte). */
static void mask_consume_loop(LlgFactory *f) {
  char err[256];
  LlgMatcher *m = llg_matcher_new(f, "lark", GRAMMAR, err, sizeof err);
  if (!m) {
    fprintf(stderr, "grammar error: %s\n", err);
    failures++;
    return;
  }
  CHECK(err[0] == 0);
  size_t words = llg_matcher_mask_words(m);
  CHECK(words == llg_factory_mask_words(f));
  CHECK(words == (257 + 31) / 32);
  uint32_t *mask = calloc(words, sizeof(uint32_t));

  const char *text = "{\"name\": \"ada\", \"n\": 42}";
  uint32_t eos = 256;
  for (size_t i = 0; text[i]; i++) {
    uint32_t t = (unsigned char)text[i];
    CHECK(llg_matcher_compute_mask(m, mask, words) == 0);
    CHECK(allowed(mask, t));
    CHECK(!allowed(mask, eos));
    CHECK(llg_matcher_consume_token(m, t) == 0);
  }
  CHECK(llg_matcher_compute_mask(m, mask, words) == 0);
  CHECK(allowed(mask, eos));
  CHECK(count(mask, words) == 1);
  CHECK(llg_matcher_is_accepting(m) == 1);
  CHECK(llg_matcher_is_stopped(m) == 0);
  CHECK(llg_matcher_consume_token(m, eos) == 0);
  CHECK(llg_matcher_is_stopped(m) == 1);
  CHECK(llg_matcher_stop_reason(m) == LLG_STOP_EOS);
  CHECK(llg_matcher_get_error(m) == NULL);

  /* Rollback and reset. */
  CHECK(llg_matcher_rollback(m, 3) == 0); /* EOS, '}', '2' */
  CHECK(llg_matcher_is_stopped(m) == 0);
  CHECK(llg_matcher_is_accepting(m) == 0);
  CHECK(llg_matcher_reset(m) == 0);
  CHECK(llg_matcher_compute_mask(m, mask, words) == 0);
  CHECK(count(mask, words) == 1 && allowed(mask, '{'));

  /* Forced tokens at the start: the literal up to the opening quote of the name. */
  uint32_t ff[64];
  int32_t nff = llg_matcher_compute_ff_tokens(m, ff, 64);
  CHECK(nff == 10); /* {"name": " */
  CHECK(nff >= 1 && ff[0] == '{');
  CHECK(llg_matcher_compute_ff_tokens(m, ff, 2) == nff); /* too small: count returned */
  CHECK(llg_matcher_compute_ff_tokens(m, NULL, 0) == nff);

  /* validate_tokens does not move the matcher. */
  uint32_t draft[] = {'{', '"', 'n', 'x'};
  CHECK(llg_matcher_validate_tokens(m, draft, 4) == 3);
  CHECK(llg_matcher_compute_mask(m, mask, words) == 0);
  CHECK(count(mask, words) == 1 && allowed(mask, '{'));
  CHECK(llg_matcher_consume_tokens(m, draft, 3) == 0);

  /* A clone is independent. */
  LlgMatcher *c = llg_matcher_clone(m);
  CHECK(c != NULL);
  CHECK(llg_matcher_consume_token(c, 'a') == 0);
  CHECK(llg_matcher_compute_mask(m, mask, words) == 0);
  CHECK(count(mask, words) == 1 && allowed(mask, 'a'));

  /* A too-small buffer is an error that is not sticky. */
  CHECK(llg_matcher_compute_mask(m, mask, words - 1) == -1);
  CHECK(llg_matcher_last_error(m) != NULL);
  CHECK(llg_matcher_is_error(m) == 0);
  CHECK(llg_matcher_compute_mask(m, mask, words) == 0);
  CHECK(llg_matcher_last_error(m) == NULL);

  /* A disallowed token is sticky. */
  CHECK(llg_matcher_consume_token(m, 'z') == -1);
  CHECK(llg_matcher_is_error(m) == 1);
  CHECK(llg_matcher_stop_reason(m) == LLG_STOP_ERROR);
  const char *e = llg_matcher_get_error(m);
  CHECK(e != NULL && strlen(e) > 0);
  CHECK(llg_matcher_compute_mask(m, mask, words) == -1);
  CHECK(llg_matcher_consume_token(m, 'a') == -1);
  CHECK(llg_matcher_is_accepting(m) == -1);
  CHECK(llg_matcher_reset(m) == -1);
  /* The clone is not affected. */
  CHECK(llg_matcher_is_error(c) == 0);
  CHECK(llg_matcher_compute_mask(c, mask, words) == 0);

  free(mask);
  llg_matcher_free(c);
  llg_matcher_free(m);
}

/* Null pointers and bad arguments are errors, never crashes. */
static void errors(LlgFactory *f) {
  char err[128];
  CHECK(llg_factory_new(NULL, err, sizeof err) == NULL);
  CHECK(strstr(err, "null") != NULL);
  CHECK(llg_factory_new("no-such-tokenizer", err, sizeof err) == NULL);
  CHECK(strlen(err) > 0);
  char tiny[4];
  CHECK(llg_factory_new("no-such-tokenizer", tiny, sizeof tiny) == NULL);
  CHECK(strlen(tiny) == 3); /* truncated, NUL-terminated */
  CHECK(llg_matcher_new(NULL, "lark", "start: \"a\"", err, sizeof err) == NULL);
  CHECK(llg_matcher_new(f, "lark", "start: \"a", err, sizeof err) == NULL);
  CHECK(strlen(err) > 0);
  CHECK(llg_matcher_new(f, "cobol", "start: \"a\"", err, sizeof err) == NULL);
  CHECK(llg_matcher_new(f, "lark", NULL, NULL, 0) == NULL);
  CHECK(llg_matcher_compute_mask(NULL, NULL, 0) == -1);
  CHECK(llg_matcher_consume_token(NULL, 0) == -1);
  CHECK(llg_matcher_is_accepting(NULL) == -1);
  CHECK(llg_matcher_is_stopped(NULL) == -1);
  CHECK(llg_matcher_clone(NULL) == NULL);
  CHECK(llg_matcher_get_error(NULL) == NULL);
  CHECK(llg_factory_mask_words(NULL) == 0);
  llg_matcher_free(NULL);
  llg_factory_free(NULL);

  LlgMatcher *m = llg_matcher_new(f, "regex", "[0-9]+", err, sizeof err);
  CHECK(m != NULL);
  if (m) {
    CHECK(llg_matcher_compute_mask(m, NULL, 9) == -1);
    CHECK(llg_matcher_consume_token(m, 100000) == -1); /* out of range */
    CHECK(llg_matcher_is_error(m) == 1);
    llg_matcher_free(m);
  }
}

/* A vocabulary given token by token, with multi-byte tokens and a tokenize callback. */
static const char *VOCAB[] = {"a", "b", "ab", "abc", "c", "<|end|>"};
static int callback_calls = 0;

static size_t greedy_tokenize(const void *user_data, const uint8_t *bytes, size_t len,
                              uint32_t *out, size_t out_len) {
  (void)user_data;
  size_t n = 0;
  for (size_t i = 0; i < len;) {
    uint32_t best = 0;
    size_t best_len = 0;
    for (uint32_t t = 0; t < 5; t++) {
      size_t tl = strlen(VOCAB[t]);
      if (tl > best_len && tl <= len - i && memcmp(bytes + i, VOCAB[t], tl) == 0) {
        best = t;
        best_len = tl;
      }
    }
    if (best_len == 0) return 0;
    if (n < out_len) out[n] = best;
    n++;
    i += best_len;
  }
  __atomic_add_fetch(&callback_calls, 1, __ATOMIC_RELAXED);
  return n;
}

static void custom_vocab(void) {
  const uint8_t *ptrs[6];
  uint32_t lens[6];
  uint8_t special[6] = {0, 0, 0, 0, 0, 1};
  for (int i = 0; i < 6; i++) {
    ptrs[i] = (const uint8_t *)VOCAB[i];
    lens[i] = (uint32_t)strlen(VOCAB[i]);
  }
  uint32_t eos = 5;
  LlgVocabInit init = {6, ptrs, lens, special, &eos, 1, greedy_tokenize, NULL, "tiny"};
  char err[256];
  LlgFactory *f = llg_factory_new_from_vocab(&init, err, sizeof err);
  if (!f) {
    fprintf(stderr, "vocab error: %s\n", err);
    failures++;
    return;
  }
  CHECK(llg_factory_vocab_size(f) == 6);
  LlgMatcher *m = llg_matcher_new(f, "lark", "start: \"abcab\" /[bc]+/", err, sizeof err);
  llg_factory_free(f); /* the matcher keeps what it needs */
  if (!m) {
    fprintf(stderr, "grammar error: %s\n", err);
    failures++;
    return;
  }
  uint32_t mask[1];
  CHECK(llg_matcher_compute_mask(m, mask, 1) == 0);
  /* a, ab, abc can start "abcab..."; b, c and EOS cannot. */
  CHECK(mask[0] == ((1u << 0) | (1u << 2) | (1u << 3)));
  uint32_t ff[8];
  /* forced "abcab": abc ab, and "ab" is dropped since "abc" extends it. */
  CHECK(llg_matcher_compute_ff_tokens(m, ff, 8) == 1);
  CHECK(ff[0] == 3);
  CHECK(callback_calls > 0);
  CHECK(llg_matcher_consume_token(m, 3) == 0);
  CHECK(llg_matcher_consume_token(m, 2) == 0);
  CHECK(llg_matcher_is_accepting(m) == 0);
  CHECK(llg_matcher_consume_token(m, 4) == 0);
  CHECK(llg_matcher_is_accepting(m) == 1);
  CHECK(llg_matcher_compute_mask(m, mask, 1) == 0);
  CHECK(mask[0] == ((1u << 1) | (1u << 4) | (1u << 5)));
  llg_matcher_free(m);
}

int main(void) {
  char err[256];
  LlgFactory *f = llg_factory_new("bytes", err, sizeof err);
  if (!f) {
    fprintf(stderr, "factory error: %s\n", err);
    return 1;
  }
  CHECK(llg_factory_vocab_size(f) == 257);
  mask_consume_loop(f);
  errors(f);
  llg_factory_free(f);
  custom_vocab();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
