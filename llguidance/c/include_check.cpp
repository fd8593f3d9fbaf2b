// include_check.cpp: the header in a C++17 translation unit (llama.cpp is C++17), built with
// -Wall -Wextra -Werror and linked against the static library by llguidance/tests/c_api.rs.
// Results llama.cpp ignores are ignored here too (the header has no [[nodiscard]]).
#include "llguidance.h"

#include <cstdio>

int main() {
  char err[256];
  LlgTokenizer *tok = llg_x_new_tokenizer("bytes", err, sizeof err);
  if (!tok) return 1;
  LlgConstraintInit init = {};
  llg_constraint_init_set_defaults(&init, tok);
  init.log_stderr_level = 0;
  LlgMatcher *m = llg_new_matcher(&init, "regex", "ab");
  llg_matcher_consume_token(m, 'a');  // result ignored, as llama.cpp's accept does
  llg_matcher_reset(m);               // result ignored, as llama.cpp's reset does
  bool ok = llg_matcher_get_error(m) == nullptr && llg_matcher_compute_mask(m) == 0 &&
            llg_matcher_get_mask(m) != nullptr;
  LlgMatcher *c = llg_clone_matcher(m);
  llg_free_matcher(m);
  llg_free_matcher(c);
  llg_free_tokenizer(tok);
  std::printf(ok ? "ok\n" : "failed\n");
  return ok ? 0 : 1;
}
