/*
 * llguidance.h: the C API of llg-rs.
 *
 * It is LLGuidance's C API (as of LLGuidance 1.9.1: the same names, struct layouts, field
 * order, signatures and semantics), so a program written for LLGuidance, such as
 * llama.cpp's common/llguidance.cpp, compiles against this header and links this library
 * (libllguidance.a / libllguidance.so, built by `cargo build --release -p llguidance`)
 * unchanged. Link the static library with -lpthread -ldl -lm.
 *
 * Our extensions are at the end, all named llg_x_* / LLG_X_* (names LLGuidance does not
 * use). Hand-written; it mirrors llguidance/src/ffi/ (keep the two in sync).
 *
 * Conventions
 * - Objects (LlgTokenizer, LlgMatcher, LlgConstraint, LlgCancellationHandle) are opaque and
 *   owned by the caller, who frees each exactly once (the free functions accept NULL). A
 *   matcher keeps its tokenizer's data alive: a tokenizer (or the tokenizer a clone was made
 *   from) may be freed while its matchers and clones live.
 * - Threads: a tokenizer may be used from several threads at once; a matcher or constraint
 *   by one thread at a time. The tokenize callback must be thread-safe.
 * - Errors never panic or abort: llg_new_matcher and llg_new_constraint* never return NULL;
 *   a grammar that does not compile gives an object in its error state, whose
 *   llg_matcher_get_error / llg_get_error says why (the same pointer until it is freed).
 *   In the error state every operation returns -1 (or false).
 * - Masks: bit t of word t / 32 is set iff token t may come next; a mask has
 *   (vocab_size + 31) / 32 uint32_t words (llg_matcher_get_mask_byte_size bytes). EOS is
 *   allowed iff the grammar accepts. Where the grammar forces the next bytes, the mask holds
 *   only the first token of their canonical tokenization (LLGuidance's served masks; see
 *   llg_x_matcher_set_pure_masks for the pure mask).
 * - JSON numbers never take the spelling -0 where the lower bound is 0 or more, nor for an
 *   exact zero (as LLGuidance; docs/differences.md, entry 4).
 */
#ifndef LLGUIDANCE_H
#define LLGUIDANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* llg_decode_tokens flags. */
#define LLG_DECODE_NONE 0            /* special tokens left out, bytes as they are */
#define LLG_DECODE_INCLUDE_SPECIAL 1 /* special tokens by name (<[id]> if unnamed) */
#define LLG_DECODE_VALID_UTF8 2      /* invalid UTF-8 replaced by U+FFFD */

typedef struct LlgCancellationHandle LlgCancellationHandle;
typedef struct LlgConstraint LlgConstraint;
typedef struct LlgMatcher LlgMatcher;
typedef struct LlgStopController LlgStopController;
typedef struct LlgTokenizer LlgTokenizer;

/* Limits. 0 in a field takes its default. max_grammar_size (default 500000 symbols) and
 * initial_lexer_fuel (default 1000000) are checked on the compiled grammar when set below
 * their defaults; the others are accepted (this engine bounds per-step work with its own
 * limits, reported as errors). */
typedef struct LlgParserLimits {
  size_t max_items_in_row;
  uint64_t initial_lexer_fuel;
  uint64_t step_lexer_fuel;
  size_t step_max_items;
  size_t max_lexer_states;
  size_t max_grammar_size;
  bool precompute_large_lexemes;
  bool verbose_errors;
} LlgParserLimits;

/* How to build a matcher or constraint. Zero-initialize it, or call
 * llg_constraint_init_set_defaults, then set the fields you need. */
typedef struct LlgConstraintInit {
  const struct LlgTokenizer *tokenizer;
  uint32_t log_buffer_level; /* accepted; nothing is logged to the buffer */
  uint32_t log_stderr_level; /* 1 and up: a warning on stderr when an error stops a matcher */
  bool ff_tokens_ok;         /* LlgConstraint: llg_commit_token also returns forced tokens */
  bool backtrack_ok;         /* accepted */
  struct LlgParserLimits limits;
} LlgConstraintInit;

typedef struct LlgMaskResult {
  const uint32_t *sample_mask; /* valid until the next call on the constraint; NULL when stopped */
  float temperature;           /* 0.0: the caller's default */
  bool is_stop;
} LlgMaskResult;

typedef uint32_t LlgToken;

typedef struct LlgCommitResult {
  const uint32_t *tokens; /* valid until the next call on the constraint */
  uint32_t n_tokens;
  bool is_stop;
} LlgCommitResult;

typedef struct LlgConstraintStep {
  struct LlgConstraint *constraint;
  uint32_t *mask_dest;
  size_t mask_byte_len; /* bytes, not words */
} LlgConstraintStep;

typedef void (*LlgCallback)(const void *user_data);

/* Tokenizes bytes[0..bytes_len] (no BOS or other added tokens): writes at most
 * output_tokens_len tokens and returns the number of tokens of the whole tokenization.
 * Must be thread-safe and must not throw. */
typedef size_t (*LlgTokenizeFn)(const void *user_data, const uint8_t *bytes, size_t bytes_len,
                                uint32_t *output_tokens, size_t output_tokens_len);

/* A tokenizer. Zero-initialize, then set the fields. The vocabulary is given as token_lens
 * (vocab_size lengths) and token_bytes (all tokens' bytes, one after the other; a special
 * token's bytes are 0xFF followed by its name, e.g. "\xff<|eot_id|>"; a length of 0 leaves
 * the id unused), or as the text of a HF tokenizer.json in tokenizer_json. tokenize_fn is the
 * model's tokenizer, used for forced tokens (its output is checked: tokens that do not
 * spell the input make that call fall back to greedy longest match); it is required unless
 * use_approximate_greedy_tokenize_fn is set. tokenize_assumes_string: the callback only
 * takes valid UTF-8. slices: NULL-terminated list of slice regexes; NULL: the defaults; an
 * empty list: no slices. tokenize_user_data must stay valid while the tokenizer, its clones
 * and their matchers live. */
typedef struct LlgTokenizerInit {
  uint32_t vocab_size;
  LlgToken tok_eos;
  const uint32_t *token_lens;
  const uint8_t *token_bytes;
  const char *tokenizer_json;
  bool tokenize_assumes_string;
  LlgTokenizeFn tokenize_fn;
  bool use_approximate_greedy_tokenize_fn;
  const void *tokenize_user_data;
  const char *const *slices;
} LlgTokenizerInit;

/* LlgTokenizerInit with struct_size first (set it to sizeof(LlgTokenizerInitV2); only that
 * many bytes are read) and more EOS ids last. */
typedef struct LlgTokenizerInitV2 {
  size_t struct_size;
  uint32_t vocab_size;
  LlgToken tok_eos;
  const uint32_t *token_lens;
  const uint8_t *token_bytes;
  const char *tokenizer_json;
  bool tokenize_assumes_string;
  LlgTokenizeFn tokenize_fn;
  bool use_approximate_greedy_tokenize_fn;
  const void *tokenize_user_data;
  const char *const *slices;
  const LlgToken *tok_eos_extra;
  uint32_t tok_eos_extra_count;
} LlgTokenizerInitV2;

/* ---- Constraint init ----------------------------------------------------------------- */

/* Zeroes *init and sets: tokenizer, log_stderr_level 1, no forced tokens in commits, no
 * backtracking, the default limits. */
void llg_constraint_init_set_defaults(struct LlgConstraintInit *init,
                                      const struct LlgTokenizer *tokenizer);

/* ---- The constraint API (older; LlgMatcher below is the current one) ----------------- */

/* From LLGuidance's grammar JSON ({"grammars": [...]}) or Lark text. Never NULL. */
struct LlgConstraint *llg_new_constraint(const struct LlgConstraintInit *init,
                                         const char *llguidance);
/* From a regex (Rust regex syntax). Never NULL. */
struct LlgConstraint *llg_new_constraint_regex(const struct LlgConstraintInit *init,
                                               const char *regex);
/* From a JSON Schema. Never NULL. */
struct LlgConstraint *llg_new_constraint_json(const struct LlgConstraintInit *init,
                                              const char *json_schema);
/* From a Lark grammar. Never NULL. */
struct LlgConstraint *llg_new_constraint_lark(const struct LlgConstraintInit *init,
                                              const char *lark);
/* Any constraint_type llg_new_matcher takes. Never NULL. */
struct LlgConstraint *llg_new_constraint_any(const struct LlgConstraintInit *init,
                                             const char *constraint_type, const char *data);
/* The error, or NULL (the same pointer until llg_free_constraint). */
const char *llg_get_error(const struct LlgConstraint *cc);
/* 0.0 (the caller's default temperature). */
float llg_get_temperature(const struct LlgConstraint *cc);
bool llg_is_stopped(const struct LlgConstraint *cc);
/* The mask for the next token into *res_p (sample_mask NULL and is_stop when done).
 * 0 on success, -1 on error. */
int32_t llg_compute_mask(struct LlgConstraint *cc, struct LlgMaskResult *res_p);
/* Commits the sampled token; *res_p gets the tokens to append. 0 on success, -1 on error. */
int32_t llg_commit_token(struct LlgConstraint *cc, LlgToken token, struct LlgCommitResult *res_p);
/* Masks of several constraints on worker threads. With done_cb NULL it returns when done;
 * otherwise it returns at once and done_cb(user_data) runs on a worker thread when done.
 * Each step's constraint and mask_dest must stay valid and unshared until then. */
void llg_par_compute_mask(const struct LlgConstraintStep *steps, size_t n_steps,
                          const void *user_data, LlgCallback done_cb);
struct LlgConstraint *llg_clone_constraint(const struct LlgConstraint *cc);
void llg_free_constraint(struct LlgConstraint *cc);
/* Always "" (warnings go to stderr). */
const char *llg_flush_logs(struct LlgConstraint *cc);

/* ---- Tokenizers ---------------------------------------------------------------------- */

/* NULL on error, with the message in error_string (NUL-terminated). */
struct LlgTokenizer *llg_new_tokenizer(const struct LlgTokenizerInit *tok_init,
                                       char *error_string, size_t error_string_len);
struct LlgTokenizer *llg_new_tokenizer_v2(const struct LlgTokenizerInitV2 *tok_init,
                                          char *error_string, size_t error_string_len);
/* Another handle to the same tokenizer; it outlives the original. */
struct LlgTokenizer *llg_clone_tokenizer(const struct LlgTokenizer *tok);
/* Canonical tokenization (0xFF is an ordinary byte). Returns the number of tokens; writes
 * at most output_tokens_len of them. */
size_t llg_tokenize_bytes(const struct LlgTokenizer *tok, const uint8_t *bytes, size_t bytes_len,
                          uint32_t *output_tokens, size_t output_tokens_len);
/* As llg_tokenize_bytes, where 0xFF followed by a special token's name is that token. */
size_t llg_tokenize_bytes_marker(const struct LlgTokenizer *tok, const uint8_t *bytes,
                                 size_t bytes_len, uint32_t *output_tokens,
                                 size_t output_tokens_len);
/* A debug string of tokens, NUL-terminated; returns the bytes a large enough buffer takes
 * (the NUL included). */
size_t llg_stringify_tokens(const struct LlgTokenizer *tok, const uint32_t *tokens,
                            size_t n_tokens, char *output, size_t output_len);
/* The text of tokens under LLG_DECODE_* flags, NUL-terminated; returns the bytes a large
 * enough buffer takes (the NUL included). */
size_t llg_decode_tokens(const struct LlgTokenizer *tok, const uint32_t *tokens, size_t n_tokens,
                         char *output, size_t output_len, uint32_t flags);
void llg_free_tokenizer(struct LlgTokenizer *tok);

/* ---- Stop controllers: stop tokens and a stop regex over generated text; the text that may  */
/* still become part of a match is held back (llguidance/src/ffi/stop.rs) ------------------- */

struct LlgStopController *llg_new_stop_controller(const struct LlgTokenizer *tokenizer,
                                                  const uint32_t *stop_tokens,
                                                  size_t stop_tokens_len, const char *stop_rx,
                                                  char *error_string, size_t error_string_len);
const char *llg_stop_commit_token(struct LlgStopController *stop_ctrl, uint32_t token,
                                  size_t *output_len_p, bool *is_stopped_p);
struct LlgStopController *llg_clone_stop_controller(const struct LlgStopController *stop_ctrl);
void llg_free_stop_controller(struct LlgStopController *stop_ctrl);

/* ---- Matchers ------------------------------------------------------------------------ */

/* A matcher. constraint_type: "regex" (Rust regex syntax), "json" or "json_schema" (a JSON
 * Schema), "json_object" (any JSON object; data is ignored), "lark" (LLGuidance's Lark),
 * "llguidance" or "guidance" (LLGuidance's grammar JSON); ours: "gbnf", "structural_tag"
 * (XGrammar's structural tags), "ir". Never NULL: check llg_matcher_get_error. */
struct LlgMatcher *llg_new_matcher(const struct LlgConstraintInit *init,
                                   const char *constraint_type, const char *data);
/* 0 if the grammar compiles, 1 if it compiles with warnings, -1 if not; the error or the
 * warnings in message (always NUL-terminated). */
int32_t llg_validate_grammar(const struct LlgConstraintInit *init, const char *constraint_type,
                             const char *data, char *message, size_t message_len);
/* The mask into mask_dest; mask_byte_len must equal llg_matcher_get_mask_byte_size.
 * 0 on success, -1 on error. */
int32_t llg_matcher_compute_mask_into(struct LlgMatcher *matcher, uint32_t *mask_dest,
                                      size_t mask_byte_len);
/* Computes the mask (read it with llg_matcher_get_mask). 0 on success, -1 on error. */
int32_t llg_matcher_compute_mask(struct LlgMatcher *matcher);
/* The mask of the last llg_matcher_compute_mask, or NULL: none computed since the matcher
 * last moved (consume, rollback, reset), an error, or cancellation. Valid until the next
 * call on the matcher. */
const uint32_t *llg_matcher_get_mask(struct LlgMatcher *matcher);
/* (vocab_size + 31) / 32 * 4. */
size_t llg_matcher_get_mask_byte_size(const struct LlgMatcher *matcher);
/* A handle that cancels the matcher (from any thread; it may outlive the matcher). After
 * llg_cancel the matcher's operations return -1, it is stopped and cancelled, no mask is
 * published, and rollback or reset do not revive it. Checked when an operation starts and,
 * once a handle was asked for, inside a mask computation (between the slicer's steps and on
 * the parser's slow path): a mask under way returns -1 within a few steps. */
struct LlgCancellationHandle *llg_matcher_get_cancellation_handle(struct LlgMatcher *matcher);
struct LlgCancellationHandle *llg_clone_cancellation_handle(
    const struct LlgCancellationHandle *handle);
void llg_cancel(const struct LlgCancellationHandle *handle);
void llg_free_cancellation_handle(struct LlgCancellationHandle *handle);
/* True after llg_cancel, unless another error stopped the matcher first. */
bool llg_matcher_is_cancelled(const struct LlgMatcher *matcher);
/* 0 on success, -1 on error (a token the grammar does not allow: the error state). */
int32_t llg_matcher_consume_token(struct LlgMatcher *matcher, uint32_t token);
int32_t llg_matcher_consume_tokens(struct LlgMatcher *matcher, const uint32_t *tokens,
                                   size_t n_tokens);
/* The error, or NULL (the same pointer until llg_free_matcher). */
const char *llg_matcher_get_error(struct LlgMatcher *matcher);
bool llg_matcher_is_error(const struct LlgMatcher *matcher);
void llg_free_matcher(struct LlgMatcher *matcher);
/* Undoes the last num_tokens tokens. 0 on success, -1 on error. */
int32_t llg_matcher_rollback(struct LlgMatcher *matcher, size_t num_tokens);
/* Back to the start; not from the error state. 0 on success, -1 on error. */
int32_t llg_matcher_reset(struct LlgMatcher *matcher);
bool llg_matcher_is_accepting(struct LlgMatcher *matcher);
/* Complete (EOS consumed, or nothing but EOS can follow), error, or cancelled. */
bool llg_matcher_is_stopped(const struct LlgMatcher *matcher);
/* How many leading tokens would be accepted (the state is unchanged), or -1 on error. */
int32_t llg_matcher_validate_tokens(struct LlgMatcher *matcher, const uint32_t *tokens,
                                    size_t n_tokens);
/* The forced tokens (canonical tokenization of the bytes every continuation starts with,
 * the last one left out when a longer token could start with it): writes at most
 * output_len and returns how many it wrote, or -1 on error. */
int32_t llg_matcher_compute_ff_tokens(struct LlgMatcher *matcher, uint32_t *output,
                                      size_t output_len);
/* An independent copy at the same position. */
struct LlgMatcher *llg_clone_matcher(const struct LlgMatcher *matcher);
/* "llg-rs@VERSION ..." for the life of the process. */
const char *llg_get_version(void);

/* ---- Extensions of llg-rs (llg_x_*) -------------------------------------------------- */

#define LLG_X_STOP_NOT_STOPPED 0
#define LLG_X_STOP_END 1        /* EOS consumed, or nothing but EOS can follow */
#define LLG_X_STOP_MAX_TOKENS 2 /* the grammar's max_tokens reached */
#define LLG_X_STOP_ERROR 3
#define LLG_X_STOP_CANCELLED 4

/* A tokenizer by name: "bytes", "o200k", "cl100k", or the path of a tokenizer file
 * (tokenizer.json, *.tiktoken, tekken, SentencePiece .model), with its canonical tokenizer
 * built in. NULL on error (message in error_string). */
struct LlgTokenizer *llg_x_new_tokenizer(const char *name, char *error_string,
                                         size_t error_string_len);
/* The number of token ids; 0 for NULL. */
size_t llg_x_tokenizer_vocab_size(const struct LlgTokenizer *tok);
/* pure: masks hold every grammar-consistent token, also where bytes are forced.
 * 0 on success, -1 for NULL or a matcher whose grammar did not compile. */
int32_t llg_x_matcher_set_pure_masks(struct LlgMatcher *matcher, bool pure);
/* The request's own stop set (special token ids) in place of the tokenizer's EOS ids
 * (XGrammar's override_stop_tokens), before the first token: each id masked until the
 * grammar accepts, allowed once it does, and ending the matcher. 0, or -1 (see
 * llg_matcher_get_error). */
int32_t llg_x_matcher_set_stop_tokens(struct LlgMatcher *matcher, const uint32_t *ids, size_t n);
/* One of LLG_X_STOP_*; -1 for NULL. */
int32_t llg_x_matcher_stop_reason(const struct LlgMatcher *matcher);
/* Masks now and after each prefix of draft (speculative decoding) into n_rows rows of
 * mask_byte_len bytes at masks, up to the first draft token the grammar rejects; the state
 * is unchanged. Returns the number of rows written, or -1 on error. */
int32_t llg_x_matcher_compute_masks_for_draft(struct LlgMatcher *matcher, const uint32_t *draft,
                                              size_t n_draft, uint32_t *masks,
                                              size_t mask_byte_len, size_t n_rows);
/* The masks of n distinct matchers in parallel, matcher i's into masks[i] (mask_byte_len
 * bytes each; the EOS-only mask for a matcher in its error state). 0, or -1 for a bad
 * argument. */
int32_t llg_x_par_compute_masks(struct LlgMatcher *const *matchers, uint32_t *const *masks,
                                size_t n, size_t mask_byte_len);

#ifdef __cplusplus
}
#endif

#endif /* LLGUIDANCE_H */
