//! Subschemas written out more than once: one location stands for all equal copies, so one
//! grammar rule serves them. Generators inline a definition wherever it is used, and a
//! nesting of such copies doubles or triples at each level (`anyOf` of an object with two
//! properties and an array, 10 deep, all of the same leaf: 3.7 MB of JSON, 59,049 copies
//! of the leaf and as many rules, past the rule limit after 1.3 s).
//!
//! Two subschemas are the same when their JSON text is (property order included: it is the
//! order of the grammar's properties) and so is their base URI (a `$ref` resolves against
//! it). A subschema that names a place (`$id`, anchors) or reads the dynamic scope
//! (`$dynamicRef`, `$recursiveRef`) keeps its own location.

use hashbrown::{DefaultHashBuilder, HashMap};
use std::hash::{BuildHasher, Hash, Hasher};
use std::rc::Rc;

use serde_json::Value;

/// Keywords that tie a subschema to its place in the document.
const PLACED: &[&str] = &[
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
    "$dynamicRef",
    "$recursiveRef",
    "$schema",
];

/// Values nested deeper than this below a subschema asked for keep their own location (the
/// hash and the comparison recurse; a deep `default` or `enum` value must not exhaust a
/// thread's stack).
const MAX_DEPTH: usize = 64;

/// A location standing for its subschema's copies, and the subschema.
type Standing<'a> = (Rc<str>, &'a Value);

/// The locations that stand for equal subschemas, found as they are asked for.
#[derive(Default)]
pub(crate) struct Shapes<'a> {
    /// By a value's address: the hash of its text, and whether it may share a location.
    hashes: HashMap<usize, (u64, bool)>,
    /// By base URI and hash: the locations standing for subschemas of that hash.
    first: HashMap<(String, u64), Vec<Standing<'a>>>,
    /// Each location asked for: the location standing for it.
    reps: HashMap<Rc<str>, Rc<str>>,
    /// The hash of texts (one seed for the whole compile).
    build: DefaultHashBuilder,
}

impl<'a> Shapes<'a> {
    /// The location standing for the subschema `v` at `loc` (base URI `base`): the first
    /// location asked for whose subschema is the same, else `loc` itself. `draft4`: `id`
    /// names a place too.
    pub fn representative(
        &mut self,
        loc: &Rc<str>,
        v: &'a Value,
        base: impl FnOnce() -> String,
        draft4: bool,
    ) -> Rc<str> {
        if let Some(r) = self.reps.get(loc) {
            return r.clone();
        }
        let rep = match v {
            Value::Object(_) | Value::Array(_) => {
                let (h, free) = self.hash(v, draft4, 0);
                if free {
                    let seen = self.first.entry((base(), h)).or_default();
                    // The hash only narrows the candidates: compared by text.
                    match seen.iter().find(|(_, o)| std::ptr::eq(*o, v) || same_text(o, v)) {
                        Some((r, _)) => r.clone(),
                        None => {
                            seen.push((loc.clone(), v));
                            loc.clone()
                        }
                    }
                } else {
                    loc.clone()
                }
            }
            _ => loc.clone(),
        };
        self.reps.insert(loc.clone(), rep.clone());
        rep
    }

    /// The hash of `v`'s text, and whether no object in it names a place ([`PLACED`]).
    /// Not free past [`MAX_DEPTH`] below the first value asked for (and so, memoized, for
    /// the values it holds).
    fn hash(&mut self, v: &Value, draft4: bool, depth: usize) -> (u64, bool) {
        let addr = v as *const Value as usize;
        if let Some(&h) = self.hashes.get(&addr) {
            return h;
        }
        if depth > MAX_DEPTH {
            return (addr as u64, false);
        }
        let mut s = self.build.build_hasher();
        let mut free = true;
        match v {
            Value::Object(m) => {
                (0u8, m.len()).hash(&mut s);
                for (k, x) in m {
                    k.hash(&mut s);
                    let (h, f) = self.hash(x, draft4, depth + 1);
                    h.hash(&mut s);
                    free &= f && !PLACED.contains(&k.as_str()) && !(draft4 && k == "id");
                }
            }
            Value::Array(a) => {
                (1u8, a.len()).hash(&mut s);
                for x in a {
                    let (h, f) = self.hash(x, draft4, depth + 1);
                    h.hash(&mut s);
                    free &= f;
                }
            }
            Value::String(x) => (2u8, x).hash(&mut s),
            Value::Number(n) => (3u8, n.to_string()).hash(&mut s),
            Value::Bool(b) => (4u8, b).hash(&mut s),
            Value::Null => 5u8.hash(&mut s),
        }
        let r = (s.finish(), free);
        // Scalars are hashed where they sit, never asked for twice.
        if v.is_object() || v.is_array() {
            self.hashes.insert(addr, r);
        }
        r
    }
}

/// Whether `a` and `b` are written the same (objects' keys in the same order).
fn same_text(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((k, v), (l, w))| k == l && same_text(v, w))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_text(v, w))
        }
        (Value::Number(x), Value::Number(y)) => x.to_string() == y.to_string(),
        _ => a == b,
    }
}
