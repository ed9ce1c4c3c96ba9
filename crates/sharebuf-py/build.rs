//! The engine's source revision: a hash (64-bit FNV-1a, stable across toolchains) of every file
//! the engine is built from (sharebuf-core's and this crate's `src/`, the crates' manifests and
//! the workspace's Cargo.lock), as `SHAREBUF_ENGINE_SOURCE`. sharebuf puts it in every run's key,
//! so a run directory made by another build of the engine is never taken for this build's.

use std::fs;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let core = here.join("../sharebuf-core");
    let mut files = Vec::new();
    files_under(&core.join("src"), &mut files);
    files_under(&here.join("src"), &mut files);
    for f in [core.join("Cargo.toml"), here.join("Cargo.toml"), here.join("../../Cargo.lock")] {
        if f.is_file() {
            files.push(f);
        }
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
    for d in [core.join("src"), here.join("src"), core.join("Cargo.toml"), here.join("Cargo.toml"), here.join("../../Cargo.lock")] {
        println!("cargo:rerun-if-changed={}", d.display());
    }
}
