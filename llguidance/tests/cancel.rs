//! Cancellation and compile deadlines (LLGuidance 1.9's contract, see `src/cancel.rs`):
//! a cancelled matcher returns the typed error and never a mask (partial or EOS-only),
//! stays cancelled through rollback and reset, clones take a snapshot; a mask or a compile
//! cancelled from another thread stops with the error or finishes whole; a compile past its
//! deadline fails with an error naming it.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use llguidance::{
    CancellationHandle, ErrorKind, GrammarSource, Matcher, ParserFactory, StopReason, TokenSet,
};

fn factory() -> ParserFactory {
    ParserFactory::from_tokenizer_name("o200k").expect("the built-in o200k tokenizer")
}

fn json(schema: &str) -> GrammarSource {
    GrammarSource::JsonSchema(schema.to_string())
}

/// Every operation of a cancelled matcher fails with `Cancelled`; nothing revives it.
fn assert_cancelled(m: &mut Matcher) {
    let e = m.compute_mask().expect_err("no mask after a cancellation");
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    assert!(e.is_cancelled() && e.to_string() == "operation cancelled");
    assert!(m.is_cancelled() && m.is_stopped());
    assert_eq!(m.stop_reason(), StopReason::Cancelled);
    let mut words = vec![0u32; 200_064 / 32 + 1];
    assert!(m.compute_mask_into(&mut words).is_err());
    assert!(m.rollback(1).is_err() || m.tokens().is_empty());
    assert!(m.reset().is_err() || m.tokens().is_empty());
    assert!(m.consume_token(llguidance::TokenId(90)).is_err());
    assert!(m.compute_ff_tokens().is_err());
    assert_eq!(m.compute_mask().unwrap_err().kind(), ErrorKind::Cancelled, "still cancelled");
}

#[test]
fn a_cancelled_matcher_stays_cancelled_and_clones_take_a_snapshot() {
    let f = factory();
    let m =
        f.create_matcher(&json(r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#));
    let m = m.expect("compiles");
    assert!(m.cancellation_handle().is_none(), "not enabled by default");
    let mut m = m.into_cancellable();
    let h = m.cancellation_handle().expect("enabled");
    m.compute_mask().unwrap();
    m.consume_tokens(&f.tokenizer().tokenize("{\"a\": 1").unwrap()).unwrap();
    let mut before = m.deep_clone();
    h.clone().cancel();
    let mut after = m.deep_clone();
    assert_cancelled(&mut m);
    assert_cancelled(&mut after);
    // The clone made before the request has its own state, untouched.
    assert!(!before.is_cancelled());
    assert!(before.compute_mask().unwrap().contains(f.tokenizer().tokenize("}").unwrap()[0]));
    let h2 = before.cancellation_handle().expect("a clone keeps cancellation enabled");
    h2.cancel();
    assert_cancelled(&mut before);
}

/// A mask computed by an uncancelled matcher of the same grammar and position.
fn reference(f: &ParserFactory, src: &GrammarSource) -> TokenSet {
    f.create_matcher(src).unwrap().compute_mask().unwrap()
}

#[test]
fn a_mask_cancelled_from_another_thread_stops_or_is_whole() {
    // Cold first masks of a fresh grammar cost milliseconds (each lexer transition a
    // derivative): a cancellation lands inside the walk.
    let f = factory();
    let mut mid_mask = 0;
    let mut latencies = Vec::new();
    for (i, delay_us) in [0u64, 50, 200, 500, 1000, 2000, 4000].into_iter().enumerate() {
        // A new grammar each time (distinct enum values), so the first mask is cold.
        let schema = format!(
            r#"{{"type": "object", "properties": {{"host{i}": {{"type": "string", "format": "hostname"}},
                "mail": {{"type": "string", "format": "email"}}, "when": {{"type": "string", "format": "date-time"}}}},
                "required": ["host{i}", "mail", "when"]}}"#
        );
        let src = json(&schema);
        let (mut m, _) = f.create_matcher_cancellable(&src, &CancellationHandle::new()).unwrap();
        let h = m.cancellation_handle().unwrap();
        let toks = f.tokenizer().tokenize(&format!("{{\"host{i}\": \"")).unwrap();
        m.consume_tokens(&toks).unwrap();
        let canceller = thread::spawn(move || {
            thread::sleep(Duration::from_micros(delay_us));
            h.cancel();
            Instant::now()
        });
        let t0 = Instant::now();
        let r = m.compute_mask();
        let done = Instant::now();
        let cancelled_at = canceller.join().unwrap();
        match r {
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
                if cancelled_at > t0 {
                    mid_mask += 1;
                    latencies.push(done.saturating_duration_since(cancelled_at));
                }
                assert_cancelled(&mut m);
            }
            Ok(mask) => {
                println!("delay {delay_us} us: the mask finished first, in {:?}", done - t0);
                // Finished before the request: the whole mask.
                let mut r = f.create_matcher(&src).unwrap();
                r.consume_tokens(&toks).unwrap();
                assert_eq!(mask, r.compute_mask().unwrap(), "a complete mask or none");
                assert_cancelled(&mut m);
            }
        }
    }
    println!("cancelled during the mask: {mid_mask}; cancel() to return: {latencies:?}");
    let _ = reference;
}

#[test]
fn compiles_stop_on_cancellation_and_on_their_deadline() {
    let f = factory();
    // 400 properties with their own patterns: a compile of tens of milliseconds.
    let props: Vec<String> = (0..400)
        .map(|i| {
            format!(
                r#""p{i}": {{"type": "string", "pattern": "^(a{i}|b[0-9]{{{}}})x+$"}}"#,
                i % 7 + 1
            )
        })
        .collect();
    let schema = format!(r#"{{"type": "object", "properties": {{{}}}}}"#, props.join(","));
    let src = json(&schema);
    let t0 = Instant::now();
    f.create_matcher(&src).expect("compiles without a deadline");
    let full = t0.elapsed();

    // Cancelled before it starts, and from another thread while it runs.
    let h = CancellationHandle::new();
    h.cancel();
    let e = f.create_matcher_cancellable(&src, &h).map(|_| ()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    let h = CancellationHandle::new();
    let h2 = h.clone();
    let f2 = f.clone();
    let src2 = src.clone();
    let worker = thread::spawn(move || f2.create_matcher_cancellable(&src2, &h2).map(|_| ()));
    thread::sleep(full / 10);
    let asked = Instant::now();
    h.cancel();
    let r = worker.join().unwrap();
    println!(
        "compile of {full:?} cancelled after {:?}: returned {:?} later",
        full / 10,
        asked.elapsed()
    );
    if let Err(e) = &r {
        assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    }

    // A deadline: zero fails at once with an error naming it; a generous one passes.
    let strict = f.with_compile_deadline(Some(Duration::ZERO));
    let e = strict.create_matcher(&src).map(|_| ()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit);
    assert!(e.to_string().contains("compile deadline of 0 ms exceeded"), "{e}");
    let loose = f.with_compile_deadline(Some(Duration::from_secs(60)));
    assert_eq!(loose.compile_deadline(), Some(Duration::from_secs(60)));
    loose.create_matcher(&src).expect("within the deadline");
    let _ = Arc::new(());
}
