//! Schema documents: the draft, base URIs (`$id`), anchors, and `$ref` resolution to
//! locations (JSON pointers into the document). Only references within the document are
//! supported; remote ones are an error.

use hashbrown::HashMap;

use serde_json::Value;

use crate::{Error, ErrorKind};

/// The JSON Schema draft, from `$schema` (default 2020-12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Draft {
    D4,
    D6,
    D7,
    D2019,
    D2020,
}

impl Draft {
    fn from_uri(s: &str) -> Option<Draft> {
        Some(if s.contains("draft-04") {
            Draft::D4
        } else if s.contains("draft-06") {
            Draft::D6
        } else if s.contains("draft-07") {
            Draft::D7
        } else if s.contains("2019-09") {
            Draft::D2019
        } else if s.contains("2020-12") {
            Draft::D2020
        } else {
            return None;
        })
    }
}

/// A location: a JSON pointer (escaped with `~0`, `~1`) from the document root.
pub(crate) type Loc = String;

/// An indexed schema document.
pub(crate) struct Doc<'a> {
    pub root: &'a Value,
    pub draft: Draft,
    resources: HashMap<String, Loc>,
    anchors: HashMap<(String, String), Loc>,
    /// Each indexed schema object's base URI, and the object (what [`Doc::get`] answers
    /// first: schemas are asked for by location, each walk from the root a hash lookup per
    /// step).
    bases: HashMap<Loc, (String, &'a Value)>,
    /// Where each schema object sits, by address ([`Doc::with_addresses`]; else empty).
    addrs: HashMap<usize, Loc>,
}

const ROOT_BASE: &str = "json-schema:///root";

/// Keywords whose value is a schema.
const SINGLE: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "contains",
    "additionalProperties",
    "additionalItems",
    "items",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];
/// Keywords whose value is an array of schemas.
const ARRAYS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value is an object of schemas.
const MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// The location of `tok` (a key or an index, unescaped) under `loc`: `loc/tok` with `tok`
/// escaped. Locations are built for every subschema of every document: no formatting
/// machinery and one allocation each.
pub(crate) fn child_loc(loc: &str, tok: &str) -> Loc {
    let mut out = String::with_capacity(loc.len() + tok.len() + 1);
    out.push_str(loc);
    out.push('/');
    push_escaped(&mut out, tok);
    out
}

fn push_escaped(out: &mut String, tok: &str) {
    if !tok.contains(['~', '/']) {
        out.push_str(tok);
        return;
    }
    for c in tok.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

fn unescape_token(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('~') {
        s.replace("~1", "/").replace("~0", "~").into()
    } else {
        s.into()
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && b[i + 1].is_ascii_hexdigit()
            && b[i + 2].is_ascii_hexdigit()
        {
            let h = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            out.push(h(b[i + 1]) * 16 + h(b[i + 2]));
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl<'a> Doc<'a> {
    /// Indexes `root`.
    pub fn new(root: &'a Value) -> Result<Doc<'a>, Error> {
        Doc::index(root, false)
    }

    /// Indexes `root` and where each of its schema objects sits, so that [`Doc::follow_refs`]
    /// reads a `$ref` at its own base URI.
    pub fn with_addresses(root: &'a Value) -> Result<Doc<'a>, Error> {
        Doc::index(root, true)
    }

    fn index(root: &'a Value, addresses: bool) -> Result<Doc<'a>, Error> {
        let draft = root
            .get("$schema")
            .and_then(Value::as_str)
            .and_then(Draft::from_uri)
            .unwrap_or(Draft::D2020);
        let mut d = Doc {
            root,
            draft,
            resources: HashMap::new(),
            anchors: HashMap::new(),
            bases: HashMap::new(),
            addrs: HashMap::new(),
        };
        d.resources.insert(ROOT_BASE.to_string(), String::new());
        let mut todo: Vec<(Loc, &Value, String, usize)> =
            vec![(String::new(), root, ROOT_BASE.to_string(), 0)];
        let mut count = 0usize;
        while let Some((loc, v, mut base, depth)) = todo.pop() {
            count += 1;
            if depth > 1_024 || count > 200_000 {
                return Err(Error::new(
                    ErrorKind::Limit,
                    "schema nested deeper than 1,024 levels or too large",
                ));
            }
            let Some(obj) = v.as_object() else { continue };
            if addresses {
                d.addrs.insert(v as *const Value as usize, loc.clone());
            }
            let id_key = if draft == Draft::D4 { "id" } else { "$id" };
            // In drafts <= 7, $ref siblings (including $id) are ignored.
            let ref_only = draft <= Draft::D7 && obj.contains_key("$ref");
            if let Some(id) = obj.get(id_key).and_then(Value::as_str).filter(|_| !ref_only) {
                let abs = resolve_uri(&base, id);
                let (uri, frag) = split_fragment(&abs);
                if uri != base_no_frag(&base) || !id.starts_with('#') {
                    base = uri.to_string();
                    d.resources.entry(base.clone()).or_insert_with(|| loc.clone());
                }
                if let Some(f) = frag.filter(|f| !f.is_empty()) {
                    d.anchors.insert((base.clone(), f.to_string()), loc.clone());
                }
            }
            for key in ["$anchor", "$dynamicAnchor"] {
                if let Some(a) = obj.get(key).and_then(Value::as_str) {
                    d.anchors.entry((base.clone(), a.to_string())).or_insert_with(|| loc.clone());
                }
            }
            for (k, sub) in obj {
                if SINGLE.contains(&k.as_str()) && !sub.is_array() {
                    todo.push((child_loc(&loc, k), sub, base.clone(), depth + 1));
                } else if ARRAYS.contains(&k.as_str()) && sub.is_array() {
                    let kl = child_loc(&loc, k);
                    for (i, s) in sub.as_array().into_iter().flatten().enumerate() {
                        todo.push((child_loc(&kl, &i.to_string()), s, base.clone(), depth + 1));
                    }
                } else if MAPS.contains(&k.as_str()) {
                    let kl = child_loc(&loc, k);
                    for (n, s) in sub.as_object().into_iter().flatten() {
                        todo.push((child_loc(&kl, n), s, base.clone(), depth + 1));
                    }
                }
            }
            d.bases.insert(loc, (base, v));
        }
        Ok(d)
    }

    /// The value at `loc`.
    pub fn get(&self, loc: &str) -> Option<&'a Value> {
        if let Some(&(_, v)) = self.bases.get(loc) {
            return Some(v);
        }
        let mut v = self.root;
        if loc.is_empty() {
            return Some(v);
        }
        for tok in loc.strip_prefix('/')?.split('/') {
            let t = unescape_token(tok);
            v = match v {
                Value::Object(m) => m.get(t.as_ref())?,
                Value::Array(a) => a.get(t.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(v)
    }

    /// Resolves `$ref` found in the schema at `loc`.
    pub fn resolve_ref(&self, loc: &str, reference: &str) -> Result<Loc, Error> {
        let base = self.base_of(loc);
        let abs = resolve_uri(&base, reference);
        let (uri, frag) = split_fragment(&abs);
        let res = self.resources.get(uri).ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!("$ref {reference:?}: remote references are not supported"),
            )
        })?;
        let frag = percent_decode(frag.unwrap_or(""));
        let target = if frag.is_empty() {
            res.clone()
        } else if frag.starts_with('/') {
            format!("{res}{frag}")
        } else {
            self.anchors.get(&(uri.to_string(), frag.clone())).cloned().ok_or_else(|| {
                Error::new(ErrorKind::Name, format!("$ref {reference:?}: unknown anchor {frag:?}"))
            })?
        };
        if self.get(&target).is_none() {
            return Err(Error::new(
                ErrorKind::Name,
                format!("$ref {reference:?}: no such location"),
            ));
        }
        Ok(target)
    }

    /// The schema a chain of `$ref`s from `s` ends at, read as the structural-tag XML styles
    /// read them (XGrammar 0.2.8's reading): the `$ref`'s siblings dropped whatever the
    /// draft, a reference that does not resolve here (remote, an unknown anchor, no such
    /// location) left in place instead of being an error, at most 16 steps, a target equal
    /// to the schema ending the chain. `s` is read at its location's base URI when it is one
    /// of the document's schema objects ([`Doc::with_addresses`]), at the root's otherwise
    /// (a schema built from one of them).
    pub fn follow_refs<'s>(&self, mut s: &'s Value) -> &'s Value
    where
        'a: 's,
    {
        for _ in 0..16 {
            let Some(r) = s.get("$ref").and_then(Value::as_str) else { return s };
            let loc = self.addrs.get(&(s as *const Value as usize)).map_or("", String::as_str);
            match self.resolve_ref(loc, r).ok().and_then(|l| self.get(&l)) {
                Some(t) if t != s => s = t,
                _ => return s,
            }
        }
        s
    }

    /// The base URI at `loc` (that of the nearest indexed schema at or above it).
    pub(crate) fn base_of(&self, loc: &str) -> String {
        let mut l = loc;
        loop {
            if let Some((b, _)) = self.bases.get(l) {
                return b.clone();
            }
            match l.rfind('/') {
                Some(i) => l = &l[..i],
                None => return ROOT_BASE.to_string(),
            }
        }
    }
}

fn base_no_frag(s: &str) -> &str {
    split_fragment(s).0
}

fn split_fragment(s: &str) -> (&str, Option<&str>) {
    match s.find('#') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

struct Parts<'s> {
    scheme: Option<&'s str>,
    authority: Option<&'s str>,
    path: &'s str,
    query: Option<&'s str>,
    fragment: Option<&'s str>,
}

fn parse(s: &str) -> Parts<'_> {
    let (rest, fragment) = split_fragment(s);
    let (rest, query) = match rest.find('?') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (scheme, rest) = match rest.find(':') {
        Some(i)
            if i > 0
                && rest[..i].chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && rest.as_bytes()[0].is_ascii_alphabetic() =>
        {
            (Some(&rest[..i]), &rest[i + 1..])
        }
        _ => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => match r.find('/') {
            Some(i) => (Some(&r[..i]), &r[i..]),
            None => (Some(r), ""),
        },
        None => (None, rest),
    };
    Parts { scheme, authority, path, query, fragment }
}

fn remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segs: Vec<&str> = path.split('/').collect();
    for (i, s) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        match *s {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    out.join("/")
}

/// RFC 3986 reference resolution.
pub(crate) fn resolve_uri(base: &str, reference: &str) -> String {
    let r = parse(reference);
    let b = parse(base);
    let (scheme, authority, path, query);
    if r.scheme.is_some() {
        scheme = r.scheme;
        authority = r.authority;
        path = remove_dots(r.path);
        query = r.query;
    } else {
        scheme = b.scheme;
        if r.authority.is_some() {
            authority = r.authority;
            path = remove_dots(r.path);
            query = r.query;
        } else {
            authority = b.authority;
            if r.path.is_empty() {
                path = b.path.to_string();
                query = r.query.or(b.query);
            } else {
                if r.path.starts_with('/') {
                    path = remove_dots(r.path);
                } else {
                    let merged = if b.authority.is_some() && b.path.is_empty() {
                        format!("/{}", r.path)
                    } else {
                        match b.path.rfind('/') {
                            Some(i) => format!("{}{}", &b.path[..=i], r.path),
                            None => r.path.to_string(),
                        }
                    };
                    path = remove_dots(&merged);
                }
                query = r.query;
            }
        }
    }
    let mut out = String::new();
    if let Some(s) = scheme {
        out.push_str(s);
        out.push(':');
    }
    if let Some(a) = authority {
        out.push_str("//");
        out.push_str(a);
    }
    out.push_str(&path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = r.fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}
