/* A process that forks after compiling a grammar can still compile in the child.
 *
 * Compiles run on kept-alive threads (src/factory.rs, `compile_thread`); a forked child has
 * none of the parent's threads, so it must start its own rather than wait on one of the
 * parent's forever. Prints "ok" when the child compiled and exited 0; a hang is caught by
 * the test's timeout (tests/c_api.rs). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llguidance.h"

static int compile_one(const LlgTokenizer *t) {
  LlgConstraintInit init;
  llg_constraint_init_set_defaults(&init, t);
  LlgMatcher *m = llg_new_matcher(&init, "lark", "start: \"a\"+");
  int bad = llg_matcher_is_error(m);
  if (bad) fprintf(stderr, "compile failed: %s\n", llg_matcher_get_error(m));
  llg_free_matcher(m);
  return bad ? 1 : 0;
}

int main(void) {
  char err[256];
  LlgTokenizer *f = llg_x_new_tokenizer("bytes", err, sizeof err);
  if (!f) {
    fprintf(stderr, "tokenizer failed: %s\n", err);
    return 1;
  }
  /* The parent's compile leaves an idle compile thread behind. */
  if (compile_one(f)) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) _exit(compile_one(f));
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  llg_free_tokenizer(f);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "child failed (status %d)\n", status);
    return 1;
  }
  printf("ok\n");
  return 0;
}
