//! Builds the in-process observer (`src/observe/preload.c`) into a shared object that the
//! binary carries (`include_bytes!`) and writes out for the runs it observes. `cc` finds the
//! target's C compiler and flags; the link into a shared object is asked of it directly,
//! since `cc` itself makes static archives only.

// A build script's inputs are cargo's variables; ralph_base::env is for the binary's.
#![allow(clippy::disallowed_methods)]

fn main() {
    let source = "src/observe/preload.c";
    println!("cargo:rerun-if-changed={source}");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let object = out.join("ralph_gate_preload.so");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let observer = std::env::var_os("CARGO_FEATURE_OBSERVE").is_some();
    // `cfg(observer)`: the one place that decides whether the observer is built (Linux, with
    // the `observe` feature); the code asks the cfg, never the OS.
    println!("cargo::rustc-check-cfg=cfg(observer)");
    if target_os == "linux" && observer {
        println!("cargo::rustc-cfg=observer");
    } else {
        // Observation is Linux's alone, and only with the `observe` feature: an empty file
        // stands in, never written out.
        std::fs::write(&object, b"").expect("write the empty stand-in");
        return;
    }
    let compiler = cc::Build::new()
        .opt_level(2)
        .pic(true)
        .warnings(true)
        .get_compiler();
    let status = compiler
        .to_command()
        .args([
            "-shared",
            "-fno-delete-null-pointer-checks",
            "-Wall",
            "-Wextra",
        ])
        .arg("-o")
        .arg(&object)
        .arg(source)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "building {source} failed");
}
