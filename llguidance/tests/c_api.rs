//! Compiles `c/example.c` against `include/llguidance.h` and the crate's static library, and
//! runs it: the C API works from C, end to end.
//!
//! The static library is the one cargo built for this test run: an integration test
//! depends on the library target, which is built with all its crate types
//! (`rlib`, `staticlib`, `cdylib`) into `<target>/<profile>/`, the parent of the test
//! binary's `deps/` folder. If it is missing (an unusual build setup), the test builds it
//! with `cargo build -p llguidance --lib` into the same target folder.

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
    if lib.exists() {
        return lib;
    }
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
    assert!(lib.exists(), "{} still missing after cargo build", lib.display());
    lib
}

#[test]
fn c_example_compiles_and_runs() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let profile = profile_dir();
    let lib = static_lib(&profile);
    let out_dir = std::env::temp_dir().join(format!("llg-c-api-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("create temp dir");
    let exe = out_dir.join("example");
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".into());
    let out = Command::new(&cc)
        .arg(manifest.join("c/example.c"))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
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
        "compiling c/example.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run the C example");
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(
        run.status.success(),
        "c/example.c failed ({}):\nstdout: {}\nstderr: {}",
        run.status,
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "ok");
}
