//! Compiles the C programs of `c/` against `include/llguidance.h` and the crate's static
//! library, and runs them: the C API works from C, end to end.
//!
//! The static library is built here with `cargo build -p llguidance --lib` into this test
//! run's target folder (a no-op when it is up to date): cargo does not rebuild the
//! `staticlib` for an integration test, so a library left there by an earlier build could
//! be stale.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `<target>/<profile>`: the test binary lives in `<target>/<profile>/deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("test binary has a parent folder");
    deps.parent().expect("deps has a parent folder").to_path_buf()
}

fn static_lib(profile: &Path) -> PathBuf {
    let lib = profile.join("libllguidance.a");
    let target = profile.parent().expect("profile dir has a parent");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "llguidance", "--lib"])
        .env("CARGO_TARGET_DIR", target)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile.file_name().is_some_and(|p| p == "release") {
        cmd.arg("--release");
    }
    let st = cmd.status().expect("run cargo build");
    assert!(st.success(), "cargo build -p llguidance --lib failed");
    assert!(lib.exists(), "{} missing after cargo build", lib.display());
    lib
}

/// Compiles `c/<name>.c` against the static library, runs it (killed after `timeout`) and
/// checks it printed "ok".
fn compile_and_run(name: &str, timeout: std::time::Duration) {
    compile_and_run_with(name, "c", timeout)
}

/// As [`compile_and_run`], for `c/<name>.<ext>`: C11 with gcc, or C++17 with g++ for `cpp`.
fn compile_and_run_with(name: &str, ext: &str, timeout: std::time::Duration) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let profile = profile_dir();
    let lib = static_lib(&profile);
    let out_dir = std::env::temp_dir().join(format!("llg-c-api-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("create temp dir");
    let exe = out_dir.join(name);
    let (cc, std) = if ext == "cpp" {
        (std::env::var("CXX").unwrap_or_else(|_| "g++".into()), "-std=c++17")
    } else {
        (std::env::var("CC").unwrap_or_else(|_| "gcc".into()), "-std=c11")
    };
    let out = Command::new(&cc)
        .arg(manifest.join(format!("c/{name}.{ext}")))
        .args([std, "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg("-I")
        .arg(manifest.join("include"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-o"])
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run the C compiler {cc:?} ({e}); install gcc or set CC to run this test")
        });
    assert!(
        out.status.success(),
        "compiling c/{name}.{ext} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = Command::new(&exe)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the C program");
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait for the C program").is_none() {
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&out_dir);
            panic!("c/{name}.c did not finish within {timeout:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let run = child.wait_with_output().expect("collect the C program's output");
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(
        run.status.success(),
        "c/{name}.c failed ({}):\nstdout: {}\nstderr: {}",
        run.status,
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "ok");
}

/// llama.cpp's use of the API (common/llguidance.cpp), from C with -Werror.
#[test]
fn llama_style_c_client_compiles_and_runs() {
    compile_and_run("llama_style", std::time::Duration::from_secs(300));
}

/// The header in a C++17 translation unit (llama.cpp is C++17), linked and run.
#[test]
fn header_compiles_as_cpp17() {
    compile_and_run_with("include_check", "cpp", std::time::Duration::from_secs(60));
}

/// A child forked after a compile compiles too (it does not wait on the parent's kept-alive
/// compile thread, which the child does not have).
#[test]
fn fork_after_compile_does_not_hang() {
    compile_and_run("fork_after_compile", std::time::Duration::from_secs(60));
}
