//! `llg`: the command line of the engine. See `llg --help` and ../shared/DESIGN.md for the
//! contract of `check` and `masks`.

mod bench;
mod plot;

use std::process::ExitCode;
use std::time::Instant;

use llguidance::{GrammarSource, Matcher, ParserFactory, TokenId};

const USAGE: &str = "\
llg: constrained decoding from the command line

USAGE:
  llg demo [--tokenizer TOK] [--grammar FILE] [--format F] [--seed N] [--max-tokens N]
      Generate text by sampling random allowed tokens (default: built-in o200k tokenizer and
      an example JSON Schema); prints the mask time per token and the output.
  llg check --grammar FILE [--tokenizer TOK] (--input FILE | --text STR) [--format F]
      Consume the input (TOK=bytes: one byte per token; else its canonical tokenization),
      each token checked against the mask. Exit 0 accepted, 1 rejected or incomplete,
      2 grammar error, 3 usage error.
  llg masks --grammar FILE --tokenizer TOK --tokens FILE [--format F]
      For each token id of the JSON array in FILE, print the mask before consuming it as
      {\"step\":i,\"allowed\":N,\"hash\":\"<fnv1a64>\",\"token\":t,\"ok\":bool}; then {\"accepting\":bool}.

  llg bench [--tokenizer TOK] [--json] [--csv FILE] [--plot FILE.svg]
            [--separators compact|spaced] [--time-limit-ms N] [--threads N]
            [--no-slicer] [--check-slicer] [--slowest N] FILES_OR_DIRS...
      MaskBench replay: compile time per schema (TTFM), mask+consume time per token (TBM)
      over each valid instance, rejection of each invalid one; a summary (--json: last line).
      --plot: TBM and TTFM distributions (CDF, log scale) as SVG. --threads: schemas in
      parallel (default 1). --no-slicer: unsliced masks. --check-slicer: also compare every
      mask of every valid instance with the unsliced one (untimed); exit 1 on a difference.
      --slowest N: list the N slowest masks (file, instance, token, text before it).

TOK: bytes (256 byte tokens + EOS 256), o200k, cl100k, or a path to tokenizer.json / *.tiktoken.
Formats: .lark, .json (JSON Schema), .regex, .gbnf, .ir.json (IR), or --format.
";

const DEMO_SCHEMA: &str = r#"{
  "x-guidance": {"whitespace_flexible": false},
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 12},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "languages": {"type": "array", "items": {"enum": ["rust", "python", "c", "lark"]}, "maxItems": 3},
    "admin": {"type": "boolean"}
  },
  "required": ["name", "age", "languages", "admin"],
  "additionalProperties": false
}"#;

pub(crate) enum Fail {
    Usage(String),
    Grammar(String),
    Rejected(String),
}

pub(crate) struct Args {
    pub(crate) rest: Vec<String>,
}

impl Args {
    fn flag(&mut self, flag: &str) -> bool {
        match self.rest.iter().position(|a| a == flag) {
            Some(i) => {
                self.rest.remove(i);
                true
            }
            None => false,
        }
    }

    fn value(&mut self, flag: &str) -> Result<Option<String>, Fail> {
        match self.rest.iter().position(|a| a == flag) {
            None => Ok(None),
            Some(i) if i + 1 < self.rest.len() => {
                let v = self.rest.remove(i + 1);
                self.rest.remove(i);
                Ok(Some(v))
            }
            Some(_) => Err(Fail::Usage(format!("{flag} needs a value"))),
        }
    }
    fn finish(self) -> Result<(), Fail> {
        match self.rest.first() {
            Some(a) => Err(Fail::Usage(format!("unexpected argument {a}"))),
            None => Ok(()),
        }
    }
}

fn main() -> ExitCode {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() || argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help" {
        print!("{USAGE}");
        return if argv.is_empty() { ExitCode::from(3) } else { ExitCode::SUCCESS };
    }
    let cmd = argv.remove(0);
    let args = Args { rest: argv };
    let r = match cmd.as_str() {
        "check" => check(args),
        "masks" => masks(args),
        "demo" => demo(args),
        "bench" => bench::bench(args),
        _ => Err(Fail::Usage(format!("unknown command {cmd}"))),
    };
    match r {
        Ok(code) => code,
        Err(Fail::Usage(m)) => {
            eprintln!("usage error: {m}\n\n{USAGE}");
            ExitCode::from(3)
        }
        Err(Fail::Grammar(m)) => {
            eprintln!("grammar error: {m}");
            ExitCode::from(2)
        }
        Err(Fail::Rejected(m)) => {
            eprintln!("rejected: {m}");
            ExitCode::from(1)
        }
    }
}

pub(crate) fn factory(tok: &str) -> Result<ParserFactory, Fail> {
    ParserFactory::from_tokenizer_name(tok)
        .map_err(|e| Fail::Usage(format!("tokenizer {tok}: {e}")))
}

fn grammar_source(args: &mut Args, required: bool) -> Result<Option<GrammarSource>, Fail> {
    let format = args.value("--format")?;
    let Some(path) = args.value("--grammar")? else {
        return if required {
            Err(Fail::Usage("--grammar FILE is required".into()))
        } else {
            Ok(None)
        };
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Fail::Usage(format!("cannot read {path}: {e}")))?;
    let format = match format {
        Some(f) => f,
        None => GrammarSource::format_of_path(&path)
            .ok_or_else(|| Fail::Usage(format!("cannot tell the format of {path}; use --format")))?
            .to_string(),
    };
    // A regex file's final line break is the editor's, not part of the regex.
    let text = if format == "regex" || format == "re" {
        let t = text.strip_suffix('\n').unwrap_or(&text);
        t.strip_suffix('\r').unwrap_or(t).to_string()
    } else {
        text
    };
    GrammarSource::from_format(&format, text).map(Some).map_err(|e| Fail::Usage(e.to_string()))
}

fn matcher(f: &ParserFactory, src: &GrammarSource) -> Result<Matcher, Fail> {
    f.create_matcher(src).map_err(|e| Fail::Grammar(e.to_string()))
}

fn check(mut args: Args) -> Result<ExitCode, Fail> {
    let src = grammar_source(&mut args, true)?.expect("required");
    let tok = args.value("--tokenizer")?.unwrap_or_else(|| "bytes".into());
    let input = match (args.value("--input")?, args.value("--text")?) {
        (Some(p), None) => {
            std::fs::read(&p).map_err(|e| Fail::Usage(format!("cannot read {p}: {e}")))?
        }
        (None, Some(t)) => t.into_bytes(),
        _ => return Err(Fail::Usage("give exactly one of --input FILE or --text STR".into())),
    };
    args.finish()?;
    let f = factory(&tok)?;
    let mut m = matcher(&f, &src)?;
    let vocab = f.tokenizer().vocab();
    let tokens: Vec<TokenId> = if tok == "bytes" {
        input.iter().map(|&b| TokenId(b as u32)).collect()
    } else {
        f.tokenizer()
            .tokenize_bytes(&input)
            .map_err(|e| Fail::Usage(format!("cannot tokenize the input: {e}")))?
    };
    let mut offset = 0;
    for (i, &t) in tokens.iter().enumerate() {
        let mask = m
            .compute_mask()
            .map_err(|e| Fail::Rejected(format!("at token {i} (byte {offset}): {e}")))?;
        if !mask.contains(t) {
            return Err(Fail::Rejected(format!(
                "token {i} ({}) at byte {offset} is not allowed",
                vocab.token_display(t)
            )));
        }
        m.consume_token(t)
            .map_err(|e| Fail::Rejected(format!("at token {i} (byte {offset}): {e}")))?;
        offset += vocab.token_bytes(t).len();
    }
    match m.is_accepting() {
        Ok(true) => {
            println!("accepted ({} tokens, {} bytes)", tokens.len(), input.len());
            Ok(ExitCode::SUCCESS)
        }
        Ok(false) => Err(Fail::Rejected(format!(
            "the input ({} bytes) is a valid prefix but not a complete string of the grammar",
            input.len()
        ))),
        Err(e) => Err(Fail::Rejected(e.to_string())),
    }
}

/// FNV-1a 64 over the ids, 4 little-endian bytes each.
fn fnv1a(ids: impl Iterator<Item = TokenId>) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for t in ids {
        for b in t.0.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

fn masks(mut args: Args) -> Result<ExitCode, Fail> {
    let src = grammar_source(&mut args, true)?.expect("required");
    let tok = args
        .value("--tokenizer")?
        .ok_or_else(|| Fail::Usage("--tokenizer TOK is required".into()))?;
    let tpath =
        args.value("--tokens")?.ok_or_else(|| Fail::Usage("--tokens FILE is required".into()))?;
    args.finish()?;
    let text = std::fs::read_to_string(&tpath)
        .map_err(|e| Fail::Usage(format!("cannot read {tpath}: {e}")))?;
    let ids: Vec<u32> = serde_json::from_str(&text)
        .map_err(|e| Fail::Usage(format!("{tpath}: expected a JSON array of token ids: {e}")))?;
    let f = factory(&tok)?;
    let mut m = matcher(&f, &src)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    use std::io::Write;
    for (i, &t) in ids.iter().enumerate() {
        let mask = match m.compute_mask() {
            Ok(mask) => mask,
            Err(e) => {
                writeln!(out, "{}", serde_json::json!({"step": i, "error": e.to_string()})).ok();
                out.flush().ok();
                return Ok(ExitCode::from(1));
            }
        };
        let ok = mask.contains(TokenId(t));
        let line = serde_json::json!({
            "step": i, "allowed": mask.count(), "hash": format!("{:016x}", fnv1a(mask.iter())), "token": t, "ok": ok
        });
        writeln!(out, "{line}").ok();
        if !ok {
            break;
        }
        if let Err(e) = m.consume_token(TokenId(t)) {
            writeln!(out, "{}", serde_json::json!({"step": i, "error": e.to_string()})).ok();
            out.flush().ok();
            return Ok(ExitCode::from(1));
        }
    }
    let acc = m.is_accepting().unwrap_or(false);
    writeln!(out, "{}", serde_json::json!({"accepting": acc})).ok();
    out.flush().ok();
    Ok(ExitCode::SUCCESS)
}

/// xorshift64*: a small seeded generator for the demo (no dependency needed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
}

fn demo(mut args: Args) -> Result<ExitCode, Fail> {
    let src = grammar_source(&mut args, false)?
        .unwrap_or_else(|| GrammarSource::JsonSchema(DEMO_SCHEMA.into()));
    let tok = args.value("--tokenizer")?.unwrap_or_else(|| "o200k".into());
    let seed: u64 = args
        .value("--seed")?
        .map_or(Ok(1), |s| s.parse())
        .map_err(|_| Fail::Usage("--seed needs an integer".into()))?;
    let max_tokens: usize = args
        .value("--max-tokens")?
        .map_or(Ok(400), |s| s.parse())
        .map_err(|_| Fail::Usage("--max-tokens needs an integer".into()))?;
    args.finish()?;
    let t0 = Instant::now();
    let f = factory(&tok)?;
    let load = t0.elapsed();
    let t1 = Instant::now();
    let mut m = matcher(&f, &src)?;
    let compile = t1.elapsed();
    let vocab = f.tokenizer().vocab();
    eprintln!(
        "tokenizer {} ({} ids) loaded in {:.0} ms; grammar compiled in {:.0} µs; seed {seed}",
        vocab.name(),
        vocab.len(),
        load.as_secs_f64() * 1e3,
        compile.as_secs_f64() * 1e6
    );
    let mut rng = Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1);
    let mut output = Vec::new();
    let mut times = Vec::new();
    for step in 0..max_tokens {
        let t = Instant::now();
        let mask = m.compute_mask().map_err(|e| Fail::Rejected(e.to_string()))?;
        let us = t.elapsed().as_secs_f64() * 1e6;
        times.push(us);
        let n = mask.count();
        if n == 0 {
            return Err(Fail::Rejected(format!("empty mask at step {step}")));
        }
        let pick = mask.iter().nth((rng.next() % n as u64) as usize).expect("n > 0");
        eprintln!(
            "step {step:>3}: {n:>7} allowed, mask {us:>8.1} µs, token {}",
            vocab.token_display(pick)
        );
        if vocab.eos_tokens().contains(&pick) {
            break;
        }
        m.consume_token(pick).map_err(|e| Fail::Rejected(e.to_string()))?;
        output.extend_from_slice(vocab.token_bytes(pick));
    }
    times.sort_by(f64::total_cmp);
    eprintln!(
        "{} masks: p50 {:.1} µs, max {:.1} µs; accepting: {}",
        times.len(),
        times[times.len() / 2],
        times[times.len() - 1],
        m.is_accepting().unwrap_or(false)
    );
    println!("{}", String::from_utf8_lossy(&output));
    Ok(ExitCode::SUCCESS)
}
