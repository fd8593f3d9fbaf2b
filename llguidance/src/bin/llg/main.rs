//! `llg`: the command line of the engine. See `llg --help` and ../shared/DESIGN.md for the
//! contract of `check`, `masks` and `bench`. Arguments are parsed by `clap` (derive API).

mod bench;
mod plot;

use std::process::ExitCode;
use std::time::Instant;

use clap::{CommandFactory, Parser, Subcommand};
use llguidance::{GrammarSource, Matcher, ParserFactory, TokenId};

/// mimalloc, as in the Python package: a compile makes ~30,000 small allocations, and
/// glibc's malloc and free were 40 % of its instructions (BENCHMARKS.md, "Allocator").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The tokenizer argument, in every command's help.
macro_rules! tok_help {
    () => {
        "TOK: bytes (256 byte tokens + EOS 256), o200k, cl100k, or a path to tokenizer.json /
     *.tiktoken / tekken JSON / SentencePiece .model."
    };
}

const AFTER_HELP: &str = concat!(
    tok_help!(),
    "
Grammar formats by extension: .lark, .json (JSON Schema), .regex, .gbnf, .ir.json (IR); or --format.
Exit status: 0 ok, 1 rejected (or incomplete), 2 grammar does not compile, 3 usage error."
);

const BENCH_AFTER_HELP: &str = concat!(
    tok_help!(),
    "
Exit status: 0 done, 1 nothing could be benchmarked (no schema compiled) or the sliced and
unsliced masks differ (--check-slicer), 3 usage error."
);

/// llg: constrained decoding from the command line
#[derive(Parser)]
#[command(name = "llg", version, after_help = AFTER_HELP, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Sample random allowed tokens: mask time per token, then the generated text
    ///
    /// Generate text by sampling random allowed tokens (default: the built-in o200k tokenizer
    /// and an example JSON Schema); prints the mask time per token (stderr) and the output
    /// (stdout).
    #[command(after_help = AFTER_HELP)]
    Demo(DemoArgs),
    /// Check that a grammar accepts an input (exit 0 accepted, 1 rejected, 2 grammar error)
    ///
    /// Consume the whole input (TOK=bytes: one byte per token; else its canonical
    /// tokenization), each token checked against the plain mask. Exit 0 if accepted and the
    /// grammar is accepting at the end; 1 if rejected (at which byte/token) or incomplete; 2 if
    /// the grammar does not compile; 3 for usage errors. Compile warnings (a JSON Schema's
    /// unknown formats) go to stderr.
    #[command(after_help = AFTER_HELP)]
    Check(CheckArgs),
    /// Print the mask before each token of a token-id list, as JSON lines
    ///
    /// For each token id of the JSON array in FILE, print the mask computed before consuming
    /// it, as {"step":i,"allowed":N,"hash":"<fnv1a64>","token":t,"ok":bool}; stop after the
    /// first token not allowed; then {"accepting":bool}.
    #[command(after_help = AFTER_HELP)]
    Masks(MasksArgs),
    /// MaskBench replay: compile time per schema (TTFM), mask time per token (TBM)
    ///
    /// For each MaskBench file: compile time per schema (TTFM), mask + consume time per token
    /// (TBM) over each valid instance, rejection of each invalid one; a summary (--json: as
    /// one JSON object on the last line).
    #[command(after_help = BENCH_AFTER_HELP)]
    Bench(bench::BenchArgs),
}

#[derive(clap::Args)]
struct DemoArgs {
    /// The tokenizer.
    #[arg(long, value_name = "TOK", default_value = "o200k")]
    tokenizer: String,
    /// The grammar file (default: an example JSON Schema).
    #[arg(long, value_name = "FILE")]
    grammar: Option<String>,
    /// The grammar format: lark, json (JSON Schema), regex, gbnf, ir, structural_tag, llguidance (LLGuidance's grammar JSON or Lark) (default: from the extension).
    #[arg(long, value_name = "F")]
    format: Option<String>,
    /// The seed of the random token picks.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Stop after this many tokens.
    #[arg(long, value_name = "N", default_value_t = 400)]
    max_tokens: usize,
}

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("input_source").required(true).args(["input", "text"]))]
struct CheckArgs {
    /// The grammar file.
    #[arg(long, value_name = "FILE")]
    grammar: String,
    /// The grammar format: lark, json (JSON Schema), regex, gbnf, ir, structural_tag, llguidance (LLGuidance's grammar JSON or Lark) (default: from the extension).
    #[arg(long, value_name = "F")]
    format: Option<String>,
    /// The tokenizer.
    #[arg(long, value_name = "TOK", default_value = "bytes")]
    tokenizer: String,
    /// The input, from a file.
    #[arg(long, value_name = "FILE")]
    input: Option<String>,
    /// The input, given inline.
    #[arg(long, value_name = "STR", allow_hyphen_values = true)]
    text: Option<String>,
}

#[derive(clap::Args)]
struct MasksArgs {
    /// The grammar file.
    #[arg(long, value_name = "FILE")]
    grammar: String,
    /// The grammar format: lark, json (JSON Schema), regex, gbnf, ir, structural_tag, llguidance (LLGuidance's grammar JSON or Lark) (default: from the extension).
    #[arg(long, value_name = "F")]
    format: Option<String>,
    /// The tokenizer.
    #[arg(long, value_name = "TOK")]
    tokenizer: String,
    /// A JSON array of token ids.
    #[arg(long, value_name = "FILE")]
    tokens: String,
}

const DEMO_SCHEMA: &str = r#"{
  "x-guidance": {"whitespace_flexible": false},
  "type": "object",
  "properties": {
    "name": {"type": "string", "pattern": "^[A-Z][a-z]{2,8}$"},
    "age": {"type": "integer", "minimum": 1, "maximum": 120},
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

/// The subcommand named on the command line, for the "see `llg CMD --help`" hint.
fn subcommand_in_args(args: &[String]) -> Option<String> {
    let first = args.iter().skip(1).find(|a| !a.starts_with('-'))?;
    Cli::command().get_subcommands().any(|c| c.get_name() == first).then(|| first.clone())
}

/// A usage error: one line, what is wrong and where to get help; exit status 3.
fn usage_error(cmd: Option<&str>, what: &str) -> ExitCode {
    let help = match cmd {
        Some(c) => format!("llg {c} --help"),
        None => "llg --help".to_string(),
    };
    eprintln!("usage error: {what} (see `{help}`)");
    ExitCode::from(3)
}

/// clap's message of a parse error on one line, without its usage and help hint.
fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut out = String::new();
    // Inside a list introduced by "...:" (e.g. the missing required arguments).
    let mut in_list = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if line.is_empty() {
            in_list = false;
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        if out.ends_with(':') {
            out.push(' ');
            in_list = true;
        } else if in_list {
            out.push_str(", ");
        } else if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(line);
    }
    out
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    ExitCode::SUCCESS
                }
                // `llg` alone: the whole help (on stderr), as a usage error.
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = e.print();
                    ExitCode::from(3)
                }
                _ => usage_error(subcommand_in_args(&argv).as_deref(), &one_line(&e)),
            };
        }
    };
    let (name, r) = match cli.command {
        Command::Check(a) => ("check", check(a)),
        Command::Masks(a) => ("masks", masks(a)),
        Command::Demo(a) => ("demo", demo(a)),
        Command::Bench(a) => ("bench", bench::bench(a)),
    };
    match r {
        Ok(code) => code,
        Err(Fail::Usage(m)) => usage_error(Some(name), &m),
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
    ParserFactory::from_tokenizer_name(tok).map_err(|e| Fail::Usage(format!("--tokenizer: {e}")))
}

fn grammar_source(path: &str, format: Option<&str>) -> Result<GrammarSource, Fail> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Fail::Usage(format!("cannot read {path}: {e}")))?;
    let format = match format {
        Some(f) => f.to_string(),
        None => GrammarSource::format_of_path(path)
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
    GrammarSource::from_format(&format, text).map_err(|e| Fail::Usage(e.to_string()))
}

/// The matcher of a grammar; its compile warnings (a JSON Schema's unknown formats, ...) go
/// to stderr.
fn matcher(f: &ParserFactory, src: &GrammarSource) -> Result<Matcher, Fail> {
    let (m, warnings) =
        f.create_matcher_with_warnings(src).map_err(|e| Fail::Grammar(e.to_string()))?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    Ok(m)
}

fn check(args: CheckArgs) -> Result<ExitCode, Fail> {
    let src = grammar_source(&args.grammar, args.format.as_deref())?;
    let tok = args.tokenizer;
    // clap's argument group: exactly one of --input and --text.
    let input = match (args.input, args.text) {
        (Some(p), _) => {
            std::fs::read(&p).map_err(|e| Fail::Usage(format!("cannot read {p}: {e}")))?
        }
        (None, Some(t)) => t.into_bytes(),
        (None, None) => unreachable!("clap requires --input or --text"),
    };
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

fn masks(args: MasksArgs) -> Result<ExitCode, Fail> {
    let src = grammar_source(&args.grammar, args.format.as_deref())?;
    let (tok, tpath) = (args.tokenizer, args.tokens);
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

fn demo(args: DemoArgs) -> Result<ExitCode, Fail> {
    let src = match &args.grammar {
        Some(path) => grammar_source(path, args.format.as_deref())?,
        None => GrammarSource::JsonSchema(DEMO_SCHEMA.into()),
    };
    let (tok, seed, max_tokens) = (args.tokenizer, args.seed, args.max_tokens);
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
