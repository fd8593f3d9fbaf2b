//! Schemas in a normal form: a schema expression ([`SExpr`]: a location, a constant, or a
//! boolean combination) is normalized to a [`Node`], which splits the instance space by JSON
//! type. Strings and numbers are regexes (so union, intersection and complement are exact);
//! arrays and objects are unions of structural constraints whose children are again
//! expressions, normalized lazily (so recursive schemas stay finite).
//!
//! In reading order: `node.rs` (expressions and nodes), `rx.rs` (regexes over a domain, with
//! typed string length bounds), `algebra.rs` (intersection, union, complement of nodes),
//! `ctx.rs` (the normalization context and its cache), `keywords.rs` (a schema object's
//! keywords applied), `one_of.rs` (`oneOf` and disjointness), `shape.rs` (equal subschemas
//! share a location). The emitter (`../emit/`) reads nodes; nothing here knows of grammar
//! rules.

mod algebra;
mod ctx;
mod keywords;
mod node;
mod one_of;
mod rx;
mod shape;
mod unevaluated;

pub(crate) use ctx::Ctx;
pub(crate) use node::{json_eq, Arr, Exists, Exp, KeyLang, Node, Obj, SExpr};
pub(crate) use rx::{LengthBounds, Rx, STRING_ANY};
