/*
 * llguidance.h: the C API of the llguidance constrained-decoding engine.
 *
 * Hand-written; it mirrors llguidance/src/ffi.rs (keep the two in sync).
 * Link with the static library (libllguidance.a) plus -lpthread -ldl -lm, or with the
 * shared library (libllguidance.so).
 *
 * Conventions
 * -----------
 * - Objects: LlgFactory (one per tokenizer; immutable after creation) and LlgMatcher (one
 *   per sequence). Both are opaque. The caller owns every object returned by llg_*_new and
 *   llg_matcher_clone and frees it exactly once with llg_factory_free / llg_matcher_free
 *   (which accept NULL). A matcher keeps the factory's tokenizer alive (reference-counted):
 *   a factory may be freed while its matchers are still in use.
 * - Threads: a factory may be used from several threads at once (creating matchers,
 *   queries). A matcher may be used by one thread at a time; different matchers may be used
 *   in parallel. A tokenize callback must therefore be thread-safe.
 * - Errors: functions returning a pointer return NULL on error and, where they take
 *   err_buf/err_len, write a NUL-terminated message there (truncated to err_len - 1 bytes;
 *   an empty string on success; err_buf may be NULL). Functions returning int32_t return -1
 *   on error; the message is then returned by llg_matcher_last_error.
 * - A matcher that hits an error (a token the grammar does not allow, a limit, an internal
 *   error) enters a sticky error state: every later call on it fails with that error, and
 *   llg_matcher_get_error returns it. It never returns a wrong mask.
 * - NULL pointer arguments are reported as errors, never undefined behaviour. Pointers that
 *   are dangling, misaligned, or point to fewer elements than the length passed with them
 *   are undefined behaviour (C cannot check them).
 * - No Rust panic ever unwinds into C: each function catches panics and reports them as
 *   errors (for a matcher, a sticky one).
 * - Strings passed in are NUL-terminated UTF-8. Strings returned are owned by the library
 *   and must not be freed by the caller.
 * - Masks: bit t of word t / 32 is set iff token t is allowed; a mask has
 *   (vocab_size + 31) / 32 u32 words (llg_factory_mask_words / llg_matcher_mask_words).
 *   EOS tokens are allowed iff the grammar is accepting.
 */
#ifndef LLGUIDANCE_H
#define LLGUIDANCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LlgFactory LlgFactory;
typedef struct LlgMatcher LlgMatcher;

/* Stop reasons (llg_matcher_stop_reason). */
#define LLG_STOP_NOT_STOPPED 0
#define LLG_STOP_EOS 1
#define LLG_STOP_MAX_TOKENS 2
#define LLG_STOP_ERROR 3

/*
 * A tokenize callback: writes the canonical tokenization of bytes[0..bytes_len] into
 * out[0..out_len] and returns the number of tokens of the full tokenization. If that
 * number exceeds out_len, the library calls it again with a buffer of that size. It must be
 * thread-safe and must not throw (no C++ exceptions across this boundary). Its output is
 * checked: ids must be in range and their bytes must spell the input, else the call that
 * used it fails.
 */
typedef size_t (*LlgTokenizeFn)(const void *user_data, const uint8_t *bytes,
                                size_t bytes_len, uint32_t *out, size_t out_len);

/* A vocabulary given token by token (llg_factory_new_from_vocab). Read during the call only,
 * except tokenize_user_data. */
typedef struct LlgVocabInit {
  /* Number of token ids (the width of the logits). */
  uint32_t n_vocab;
  /* n_vocab pointers: the bytes of each token; for a special token, its name (e.g.
   * "<|eot_id|>", UTF-8), which grammars use to refer to it. */
  const uint8_t *const *token_bytes;
  /* n_vocab lengths; 0 leaves the id unused (never allowed; the pointer is not read). */
  const uint32_t *token_lens;
  /* n_vocab flags (nonzero: special token); may be NULL (no special tokens). */
  const uint8_t *is_special;
  /* n_eos EOS ids; may be NULL if n_eos is 0: then the first special token named </s>,
   * <|endoftext|>, <|end_of_text|>, <｜end▁of▁sentence｜> or <eos> is the EOS. */
  const uint32_t *eos_tokens;
  size_t n_eos;
  /* Used to tokenize forced bytes (llg_matcher_compute_ff_tokens); may be NULL, then those
   * are tokenized by greedy longest match, which may differ from the model's tokenizer. */
  LlgTokenizeFn tokenize_fn;
  /* Passed to tokenize_fn; must stay valid until the factory and all matchers created from
   * it (and their clones) are freed. */
  const void *tokenize_user_data;
  /* A name for messages; may be NULL. */
  const char *name;
} LlgVocabInit;

/* ---- Factories ---------------------------------------------------------------------- */

/* A factory for a tokenizer: "bytes" (256 byte tokens + EOS 256), a built-in name ("o200k",
 * "cl100k"), or a path to a tokenizer file (tokenizer.json, *.tiktoken). Canonical
 * tokenization is built in. NULL on error (message in err_buf). Free with
 * llg_factory_free. */
LlgFactory *llg_factory_new(const char *tokenizer, char *err_buf, size_t err_len);

/* A factory for a vocabulary given token by token. NULL on error (message in err_buf).
 * Free with llg_factory_free. */
LlgFactory *llg_factory_new_from_vocab(const LlgVocabInit *init, char *err_buf,
                                       size_t err_len);

/* Frees a factory; NULL is ignored. Its matchers stay valid. */
void llg_factory_free(LlgFactory *factory);

/* The number of token ids (mask bits); 0 for NULL. */
size_t llg_factory_vocab_size(const LlgFactory *factory);

/* The number of u32 words of a mask, (vocab_size + 31) / 32; 0 for NULL. */
size_t llg_factory_mask_words(const LlgFactory *factory);

/* ---- Matchers ----------------------------------------------------------------------- */

/* A matcher for a grammar given as text in a format: "lark", "json" (JSON Schema), "regex",
 * "gbnf", "ir" (the grammar IR as JSON) or "structural_tag" (XGrammar's structural tags,
 * for tool calling). NULL on error (message, with line:column for
 * grammar errors, in err_buf). Free with llg_matcher_free. */
LlgMatcher *llg_matcher_new(const LlgFactory *factory, const char *format,
                            const char *grammar, char *err_buf, size_t err_len);

/* An independent copy at the same position (its own state, error state included). NULL on
 * a NULL argument. Free with llg_matcher_free. */
LlgMatcher *llg_matcher_clone(const LlgMatcher *matcher);

/* Frees a matcher; NULL is ignored. */
void llg_matcher_free(LlgMatcher *matcher);

/* The number of u32 words of a mask; 0 for NULL. */
size_t llg_matcher_mask_words(const LlgMatcher *matcher);

/* Computes the set of tokens allowed next into mask[0..mask_words]. mask_words must be at
 * least llg_matcher_mask_words (extra words are zeroed); a shorter or NULL buffer is an
 * error that is not sticky. After a stop, only EOS is allowed. 0 on success, -1 on error. */
int32_t llg_matcher_compute_mask(LlgMatcher *matcher, uint32_t *mask, size_t mask_words);

/* Consumes one token. A token the grammar does not allow is a sticky error. EOS after a
 * stop is accepted and changes nothing. 0 on success, -1 on error. */
int32_t llg_matcher_consume_token(LlgMatcher *matcher, uint32_t token);

/* Consumes tokens[0..n] in order (tokens may be NULL if n is 0). 0 on success, -1 on error
 * (sticky; the tokens before the rejected one stay consumed). */
int32_t llg_matcher_consume_tokens(LlgMatcher *matcher, const uint32_t *tokens, size_t n);

/* How many leading tokens of tokens[0..n] would be accepted, without changing the state
 * (for speculative decoding). A rejected token is not an error here. -1 on error. */
int32_t llg_matcher_validate_tokens(LlgMatcher *matcher, const uint32_t *tokens, size_t n);

/* Undoes the last n consumed tokens (also undoes a stop). More than were consumed is a
 * (sticky) error. 0 on success, -1 on error. */
int32_t llg_matcher_rollback(LlgMatcher *matcher, size_t n);

/* Back to the start of the grammar; an error state stays. 0 on success, -1 on error. */
int32_t llg_matcher_reset(LlgMatcher *matcher);

/* The fast-forward tokens: the canonical tokenization of the bytes every continuation must
 * start with, except that the last token is left out when a longer token could start with
 * it. Writes the first min(count, out_len) tokens into out and returns count (a result
 * above out_len means the buffer was too small; any prefix of them may be consumed).
 * Consuming them is up to the caller. out may be NULL if out_len is 0. -1 on error. */
int32_t llg_matcher_compute_ff_tokens(LlgMatcher *matcher, uint32_t *out, size_t out_len);

/* 1 if the tokens so far form a complete string of the grammar (or EOS was consumed), 0 if
 * not, -1 on error. */
int32_t llg_matcher_is_accepting(LlgMatcher *matcher);

/* 1 if the matcher stopped (EOS consumed, max tokens reached, or error state), 0 if not, -1
 * for NULL. */
int32_t llg_matcher_is_stopped(const LlgMatcher *matcher);

/* Why it stopped: one of LLG_STOP_*; -1 for NULL. */
int32_t llg_matcher_stop_reason(const LlgMatcher *matcher);

/* Stops the matcher after max_tokens consumed tokens (0: no limit). 0 on success, -1 on
 * error. */
int32_t llg_matcher_set_max_tokens(LlgMatcher *matcher, size_t max_tokens);

/* 1 if the matcher is in its sticky error state, 0 if not, -1 for NULL. */
int32_t llg_matcher_is_error(const LlgMatcher *matcher);

/* The sticky error message, or NULL when not in the error state (or for NULL). Owned by the
 * matcher: valid until the next call on it or llg_matcher_free. */
const char *llg_matcher_get_error(const LlgMatcher *matcher);

/* The message of the last call on this matcher if it failed (sticky or not, e.g. a mask
 * buffer too small), else NULL. Owned by the matcher: valid until the next call on it or
 * llg_matcher_free. */
const char *llg_matcher_last_error(const LlgMatcher *matcher);

#ifdef __cplusplus
}
#endif

#endif /* LLGUIDANCE_H */
