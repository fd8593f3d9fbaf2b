//! The promise of `docs/json-schema.md`, checked from the document itself: every row of its
//! keyword tables is compiled and run. An enforced keyword must reject the row's invalid
//! instance and accept its valid one (a keyword dropped silently fails here); an error row
//! must fail to compile with the text given; an annotation must not narrow anything.

#[path = "json_schema/common.rs"]
mod common;

use common::Checker;

const DOC: &str = include_str!("../../docs/json-schema.md");

struct Row {
    keyword: String,
    status: String,
    schema: String,
    rejects: Option<String>,
    accepts: Option<String>,
}

/// The rows of the tables in `section` (the text between its heading and the next `## `;
/// `None`: before the first `## `).
fn rows(section: Option<&str>) -> Vec<Row> {
    let text = match section {
        None => DOC.split("\n## ").next().unwrap_or(""),
        Some(h) => {
            let start = DOC.find(&format!("\n## {h}")).unwrap_or_else(|| panic!("no section {h}"));
            let rest = &DOC[start + 4..];
            &rest[..rest.find("\n## ").unwrap_or(rest.len())]
        }
    };
    let cell = |c: &str| {
        let c = c.trim();
        let c = c.strip_prefix('`').and_then(|c| c.strip_suffix('`')).unwrap_or(c);
        (!c.is_empty()).then(|| c.to_string())
    };
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            // No cell holds a `|`.
            let cells: Vec<&str> =
                l.trim().trim_start_matches('|').trim_end_matches('|').split('|').collect();
            assert_eq!(cells.len(), 5, "a row of five cells: {l}");
            Row {
                keyword: cells[0].trim().to_string(),
                status: cells[1].trim().to_string(),
                schema: cell(cells[2]).unwrap_or_else(|| panic!("no schema: {l}")),
                rejects: cell(cells[3]),
                accepts: cell(cells[4]),
            }
        })
        .collect()
}

fn check(rows: &[Row]) {
    for r in rows {
        let schema: serde_json::Value = serde_json::from_str(&r.schema)
            .unwrap_or_else(|e| panic!("{}: the schema is not JSON: {e}", r.keyword));
        let compiled = Checker::new(&schema);
        match r.status.as_str() {
            "error" => {
                let e = compiled.err().unwrap_or_else(|| panic!("{}: compiled", r.keyword));
                let want = r.rejects.as_deref().expect("an error row names its message");
                assert!(e.to_string().contains(want), "{}: {e}", r.keyword);
            }
            "enforced" | "enforced (bound)" | "annotation" => {
                let c = compiled.unwrap_or_else(|e| panic!("{}: {e}", r.keyword));
                if let Some(bad) = &r.rejects {
                    assert!(!c.accepts(bad), "{}: {} accepted {bad}", r.keyword, r.schema);
                }
                if let Some(good) = &r.accepts {
                    assert!(c.accepts(good), "{}: {} rejected {good}", r.keyword, r.schema);
                }
                if r.status != "annotation" {
                    assert!(
                        r.rejects.is_some(),
                        "{}: an enforced row needs a rejection",
                        r.keyword
                    );
                }
            }
            other => panic!("{}: unknown status {other}", r.keyword),
        }
    }
}

#[test]
fn every_keyword_does_what_the_table_says() {
    let rows = rows(None);
    assert!(rows.len() >= 60, "the keyword table has {} rows", rows.len());
    check(&rows);
}

#[test]
fn sglang_rejects_what_we_enforce() {
    let rows = rows(Some("SGLang"));
    assert_eq!(rows.len(), 10, "SGLang's list");
    check(&rows);
}
