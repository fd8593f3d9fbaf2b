//! `format`: an unknown format is an annotation (any string, with a warning naming it) or,
//! under `x-guidance` `strict_formats`, an error; the formats of JSON Schema 2020-12 that
//! are asserted, each with valid and invalid strings written from its RFC.

#[path = "json_schema/common.rs"]
mod common;

use common::Checker;
use grammars::json_schema::{compile_schema_with, JsonCompileOptions};
use serde_json::{json, Value};

/// `s` as a JSON string.
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// The schema `{"format": name}` accepts each of `good` and rejects each of `bad` (string
/// contents, quoted here).
fn check_format(name: &str, good: &[&str], bad: &[&str]) {
    let schema = json!({"format": name});
    let c = Checker::new(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for g in good {
        assert!(c.accepts(&q(g)), "format {name} should accept {g:?}");
    }
    for b in bad {
        assert!(!c.accepts(&q(b)), "format {name} should reject {b:?}");
    }
}

/// The warnings of compiling `schema` with the options of its `x-guidance`.
fn warnings(schema: &Value) -> Vec<String> {
    let opts = JsonCompileOptions::from_schema(schema).expect("valid options");
    compile_schema_with(schema, &opts).unwrap_or_else(|e| panic!("{schema}: {e}")).warnings
}

#[test]
fn an_unknown_format_is_an_annotation_with_a_warning() {
    let s = json!({"type": "string", "format": "foo"});
    let c = Checker::new(&s).unwrap();
    for v in ["", "2962", "anything at all", "{}"] {
        assert!(c.accepts(&q(v)), "{v:?}");
    }
    assert!(!c.accepts("1"), "the type still applies");
    assert_eq!(
        warnings(&s),
        vec![r#"unknown format "foo": an annotation, any string is accepted"#]
    );
    // Other kinds of values are untouched, as by every format.
    let c = Checker::new(&json!({"format": "foo"})).unwrap();
    assert!(c.accepts("12") && c.accepts("null") && c.accepts("[]") && c.accepts("\"x\""));
    // Known formats warn about nothing; nor does a format where no string is valid.
    assert!(warnings(&json!({"format": "date"})).is_empty());
    assert!(warnings(&json!({"type": "integer", "format": "foo"})).is_empty());
    // One warning per format, however many places use it.
    let s = json!({"properties": {"a": {"format": "foo"}, "b": {"format": "foo"},
        "c": {"format": "bar"}}});
    let w = warnings(&s);
    assert!(w.len() == 2 && w[0].contains("\"foo\"") && w[1].contains("\"bar\""), "{w:?}");
    // An annotation holds of every value: its negation of none.
    let e = Checker::new(&json!({"not": {"format": "foo"}})).err().expect("an error");
    assert!(e.to_string().contains("unsatisfiable"), "{e}");
}

#[test]
fn regex_is_an_annotation_with_its_reason() {
    // ECMA-262 regex syntax is not a regular language: no exact check, so any string.
    let s = json!({"format": "regex"});
    let w = warnings(&s);
    assert!(w.len() == 1 && w[0].contains("\"regex\"") && w[0].contains("ECMA-262"), "{w:?}");
    let c = Checker::new(&s).unwrap();
    assert!(c.accepts(&q("([abc])+\\s+$")) && c.accepts(&q("^(abc]")));
}

#[test]
fn strict_formats_makes_an_unknown_format_an_error() {
    let strict = |f: &str| json!({"format": f, "x-guidance": {"strict_formats": true}});
    let e = Checker::new(&strict("foo")).err().expect("an error").to_string();
    assert!(
        e.contains(r#"unsupported format "foo" (strict_formats is set; without it an unknown format is an annotation)"#),
        "{e}"
    );
    let e = Checker::new(&strict("regex")).err().expect("an error").to_string();
    assert!(e.contains("\"regex\"") && e.contains("ECMA-262"), "{e}");
    // `lenient` (for `uniqueItems`) does not undo it.
    let s = json!({"format": "foo", "x-guidance": {"strict_formats": true, "lenient": true}});
    assert!(Checker::new(&s).is_err());
    // Known formats compile; so does an unknown one where no string is valid.
    assert!(Checker::new(&strict("date")).is_ok());
    let s = json!({"type": "integer", "format": "foo", "x-guidance": {"strict_formats": true}});
    assert!(Checker::new(&s).is_ok());
    // The option: a boolean, false by default.
    assert!(!JsonCompileOptions::default().strict_formats);
    assert!(JsonCompileOptions::from_schema(&strict("x")).unwrap().strict_formats);
    let bad = json!({"x-guidance": {"strict_formats": "yes"}});
    assert!(JsonCompileOptions::from_schema(&bad).is_err());
}

#[test]
fn lenient_still_ignores_unique_items() {
    let s = json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true});
    assert!(Checker::new(&s).is_err());
    let mut s = s;
    s["x-guidance"] = json!({"lenient": true});
    assert_eq!(warnings(&s), vec!["uniqueItems ignored"]);
}

#[test]
fn uri_template() {
    // RFC 6570 §2 (level 4), with erratum 6937: `'` is a literal.
    check_format(
        "uri-template",
        &[
            "",
            "http://example.com/dictionary",
            "http://example.com/dictionary/{term:1}/{term}",
            "{+path}/here",
            "{#frag}",
            "X{.x,y}",
            "{/list*}",
            "{;p}{?q,r}{&s}",
            "{a.b_c}",
            "{%41b}",
            "{v:1}{w:9999}",
            "a'b",
            "a%7Eb",
            "caf\u{e9}",
            "\u{e000}",
            "\u{1F600}",
        ],
        &[
            "{",
            "}",
            "{}",
            "{{a}}",
            "{a,}",
            "{,a}",
            "{a,,b}",
            "{a..b}",
            "{a.}",
            "{.}",
            "{v:0}",
            "{v:01}",
            "{v:10000}",
            "{v:3*}",
            "{=a}",
            "{|a}",
            "{a b}",
            "{a-b}",
            "a b",
            "a<b",
            "a\"b",
            "a\\b",
            "a^b",
            "a|b",
            "a`b",
            "a\u{7f}b",
            "a\u{85}b",
            "%4",
            "%GG",
        ],
    );
}

#[test]
fn idn_email() {
    // RFC 6531: RFC 5321 addresses with UTF-8 in the local part.
    check_format(
        "idn-email",
        &[
            "joe.bloggs@example.com",
            "\u{3b4}\u{3bf}\u{3ba}\u{3b9}\u{3bc}\u{3ae}@example.com",
            "\"\u{3b4}\u{3bf}\u{3ba} \u{3b9}\"@example.com",
            "\u{7528}\u{6237}.\u{540d}@example.com",
            "a.b@[127.0.0.1]",
            "x@[IPv6:::1]",
        ],
        &[
            "2962",
            "\u{3b4}\u{3bf}\u{3ba}",
            "@example.com",
            "a@",
            ".a@example.com",
            "a.@example.com",
            "a..b@example.com",
            "a b@example.com",
            "user\u{ff20}example.com",
            "a@b_c.com",
            "a@-b.com",
            "a@[127.0.0.300]",
            "a@b@c.com",
        ],
    );
    // By design (a subset): U-label and A-label domains are rejected.
    let c = Checker::new(&json!({"format": "idn-email"})).unwrap();
    assert!(!c.accepts(&q("a@\u{c2e4}\u{b840}.\u{d14c}\u{c2a4}\u{d2b8}")));
    assert!(!c.accepts(&q("a@xn--ihqwcrb4cv8a8dqg056pqjye")));
}

#[test]
fn idn_hostname() {
    // RFC 5890 NR-LDH labels, separated by any of RFC 3490's full stops; 63 per label, 253
    // in all.
    let l63 = "a".repeat(63);
    let long = format!("{l63}.{l63}.{l63}.{}", "b".repeat(61));
    let too_long = format!("{long}b");
    let too_long_label = "a".repeat(64);
    check_format(
        "idn-hostname",
        &[
            "example.com",
            "host-name",
            "1host",
            "a\u{3002}b",
            "a\u{ff0e}b",
            "a\u{ff61}b",
            &l63,
            &long,
        ],
        &[
            "",
            ".",
            "\u{3002}",
            "a.",
            "a\u{3002}",
            "\u{ff0e}a",
            "-a",
            "a-",
            "a..b",
            "ab--cd",
            "a_b",
            "a b",
            "a\u{b7}l",
            &too_long,
            &too_long_label,
        ],
    );
    // By design (a subset): U-labels and A-labels are rejected.
    let c = Checker::new(&json!({"format": "idn-hostname"})).unwrap();
    assert!(!c.accepts(&q("\u{c2e4}\u{b840}.\u{d14c}\u{c2a4}\u{d2b8}")));
    assert!(!c.accepts(&q("xn--ihqwcrb4cv8a8dqg056pqjye")));
}

#[test]
fn formats_checked_on_a_subset_cannot_be_negated() {
    // Their complement would take valid strings (an A-label, a U-label).
    for f in ["hostname", "email", "idn-hostname", "idn-email"] {
        let e = Checker::new(&json!({"not": {"format": f}})).err();
        assert!(e.is_some_and(|e| e.to_string().contains("subset")), "not {f}");
    }
    let c = Checker::new(&json!({"not": {"format": "ipv4"}})).unwrap();
    assert!(c.accepts(&q("1.2.3")) && !c.accepts(&q("1.2.3.4")));
}

#[test]
fn duration() {
    // RFC 3339 appendix A.
    check_format(
        "duration",
        &["P4DT12H30M5S", "P1Y", "P1Y2M", "P1M2D", "P2W", "PT36H", "PT1M2S", "PT0S", "P01D"],
        &[
            "", "P", "PT", "P1YT", "PT1D", "P1D2H", "P2D1Y", "P1Y2D", "PT1H2S", "P1Y2W", "PT0.5S",
            "-P1D", "P1",
        ],
    );
}

#[test]
fn json_pointers() {
    // RFC 6901; relative JSON pointers (draft-handrews-relative-json-pointer-01, 2020-12's).
    check_format(
        "json-pointer",
        &["", "/", "/a~0b/c~1d", "/0", "//", "/ x", "/\u{e9}"],
        &["a", "/~", "/~2", "/a~", "#/a"],
    );
    check_format(
        "relative-json-pointer",
        &["0", "1/a", "120/a/b", "2#", "0//"],
        &["", "01", "-1", "+1/a", "/a", "0##", "1#/a", "0/~2"],
    );
}

#[test]
fn iris() {
    // RFC 3987: URIs with non-ASCII characters.
    check_format(
        "iri",
        &["http://\u{e9}x.org/p\u{e4}th?q=\u{fc}#f", "urn:isbn:0451450523", "http://[::1]/"],
        &["//x.org/", "\u{e9}x", "http://a b", "http://x.org/\u{7f}", ""],
    );
    check_format(
        "iri-reference",
        &["http://\u{e9}x.org/", "//x.org/p", "p\u{e4}th/x", "#frag", "?q", ""],
        &["\\\\x", "a b", "#a#b", "%GG"],
    );
}
