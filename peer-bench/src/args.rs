//! The command line: options (parsed by hand, as before the split) and the MaskBench files
//! they name.

use std::path::{Path, PathBuf};

pub struct Args {
    pub limit: Option<usize>,
    pub every: usize,
    pub json: bool,
    pub tokenizer: PathBuf,
    pub out_dir: PathBuf,
    pub inputs: Vec<PathBuf>,
}

pub fn parse_args() -> Args {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        limit: None,
        every: 1,
        json: false,
        tokenizer: manifest.join("../../shared/tokenizers/llama3.tokenizer.json"),
        out_dir: manifest.join("out"),
        inputs: vec![],
    };
    let mut it = std::env::args().skip(1);
    let usage = "usage: peer-bench [--limit N] [--every K] [--json] [--tokenizer tokenizer.json] [--out-dir DIR] [FILES_OR_DIRS...]\n(default input: ../../shared/data/maskbench relative to the crate)";
    while let Some(x) = it.next() {
        let mut val = |name: &str| {
            it.next().unwrap_or_else(|| {
                eprintln!("{name} needs a value\n{usage}");
                std::process::exit(2)
            })
        };
        match x.as_str() {
            "--limit" => a.limit = Some(val("--limit").parse().expect("--limit N")),
            "--every" => a.every = val("--every").parse::<usize>().expect("--every K").max(1),
            "--json" => a.json = true,
            "--tokenizer" => a.tokenizer = val("--tokenizer").into(),
            "--out-dir" => a.out_dir = val("--out-dir").into(),
            "-h" | "--help" => {
                println!("{usage}");
                std::process::exit(0)
            }
            s if s.starts_with("--") => {
                eprintln!("unknown option {s}\n{usage}");
                std::process::exit(2)
            }
            s => a.inputs.push(s.into()),
        }
    }
    if a.inputs.is_empty() {
        a.inputs.push(manifest.join("../../shared/data/maskbench"));
    }
    a
}

pub fn collect_files(inputs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            v.sort();
            out.extend(v);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            eprintln!("{} does not exist (MaskBench data lives in ../shared)", p.display());
            std::process::exit(2);
        }
    }
    out
}
