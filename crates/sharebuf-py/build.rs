//! The engine's source revision: a hash (64-bit FNV-1a, stable across toolchains) of every file
//! the engine is built from (sharebuf-core's and this crate's `src/`, the crates' manifests and
//! the workspace's Cargo.lock), as `SHAREBUF_ENGINE_SOURCE`. sharebuf puts it in every run's key,
//! so a run directory made by another build of the engine is never taken for this build's.

use std::fs;
use std::path::{Path, PathBuf};

/// Every file at `path`: the path itself if it is a file, everything below it if a directory.
fn files_under(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(rd) = fs::read_dir(path) else { return };
    for e in rd.flatten() {
        files_under(&e.path(), out);
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let core = here.join("../sharebuf-core");
    let inputs = [core.join("src"), here.join("src"), core.join("Cargo.toml"), here.join("Cargo.toml"), here.join("../../Cargo.lock")];
    let mut files = Vec::new();
    for input in &inputs {
        files_under(input, &mut files);
        println!("cargo:rerun-if-changed={}", input.display());
    }
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| (p.strip_prefix(&here).map(|r| r.to_string_lossy().replace('\\', "/")).unwrap_or_default(), p))
        .collect();
    named.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (name, path) in &named {
        eat(name.as_bytes());
        eat(&[0]);
        eat(&fs::read(path).unwrap_or_default());
        eat(&[0]);
    }
    println!("cargo:rustc-env=SHAREBUF_ENGINE_SOURCE={h:016x}");
}
