// Both llguidance crates (ours and the crates.io reference) export the same `#[no_mangle]`
// C API symbols (llg_matcher_*). The bench never calls the C API, so let the linker keep
// the first definition instead of failing on the duplicates.
fn main() {
    println!("cargo:rustc-link-arg-bins=-Wl,--allow-multiple-definition");
}
