//! Keyword application: the schema object at a location read into a node, keyword by
//! keyword (the drafts' differences, `$ref` beside other keywords, the order in which the
//! properties of merged schemas come, contradictions reported for the unsatisfiable-schema
//! error).

use lexer::RegexSpec;
use serde_json::Value;

use super::algebra::{intersect, union_into, unsupported};
use super::ctx::Ctx;
use super::node::{Arr, Clause, Exp, Node, Num, Obj, SExpr};
use super::rx::{LengthBounds, Rx, Term};
use crate::json_schema::ecma;
use crate::json_schema::numbers::{self, Decimal};
use crate::json_schema::resolve::{child_loc, Draft};
use crate::{Error, ErrorKind};

/// Whether `kw` is a keyword only from a draft after `draft` (draft 6 added `contains`,
/// `propertyNames`; draft 7 `if`/`then`/`else`; 2019-09 the `dependent*`, `*Contains` and
/// `unevaluated*` keywords; 2020-12 `prefixItems`). Draft 6's `const` is applied in draft-04
/// schemas too: they use it meaning it, LLGuidance applies it there (beside `type`), and
/// applying it never accepts more.
fn newer_keyword(kw: &str, draft: Draft) -> bool {
    let since = match kw {
        "contains" | "propertyNames" => Draft::D6,
        "if" | "then" | "else" => Draft::D7,
        "dependentRequired"
        | "dependentSchemas"
        | "minContains"
        | "maxContains"
        | "unevaluatedProperties"
        | "unevaluatedItems" => Draft::D2019,
        "prefixItems" => Draft::D2020,
        _ => return false,
    };
    draft < since
}

/// Keywords that never constrain instances (annotations, containers of subschemas).
const IGNORED: &[&str] = &[
    "$schema",
    "$id",
    "id",
    "$comment",
    "$defs",
    "definitions",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "then",
    "else",
    "additionalItems",
    "minContains",
    "maxContains",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "x-guidance",
];

impl Ctx<'_> {
    /// The schema at a location.
    pub(super) fn schema_node(&mut self, loc: &str) -> Result<Node, Error> {
        let v = self
            .doc
            .get(loc)
            .ok_or_else(|| Error::new(ErrorKind::Name, format!("no schema at {loc:?}")))?;
        let m = match v {
            Value::Bool(true) => return Ok(Node::any()),
            Value::Bool(false) => return Ok(Node::nothing()),
            Value::Object(m) => m,
            _ => {
                return Err(Error::new(
                    ErrorKind::Value,
                    format!("schema at {loc:?} is not an object or boolean"),
                ))
            }
        };
        let draft = self.doc.draft;
        // Keywords newer than the schema's declared draft are not keywords there (a validator
        // of that draft ignores them, and so does LLGuidance): left out of a filtered copy.
        let filtered;
        let m = if draft < Draft::D2020 && m.keys().any(|k| newer_keyword(k, draft)) {
            filtered = m
                .iter()
                .filter(|(k, _)| !newer_keyword(k, draft))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<serde_json::Map<String, Value>>();
            &filtered
        } else {
            m
        };
        let sub = |k: &str| child_loc(loc, k);
        let contradicted = contradictions(m, loc);
        if draft <= Draft::D7 {
            if let Some(r) = m.get("$ref") {
                let r = r
                    .as_str()
                    .ok_or_else(|| Error::new(ErrorKind::Value, "$ref must be a string"))?;
                let target = self.doc.resolve_ref(loc, r)?;
                let e = self.at(target);
                return Ok((*self.normalize(&e)?).clone());
            }
        }
        let mut n = Node::any();
        let mut unknown_format: Option<String> = None;
        // Applicators' nodes with the index of their keyword in the schema object: objects'
        // properties are merged in keyword order (LLGuidance's order): the schema's own
        // properties go where its first `properties` / `additionalProperties` /
        // `patternProperties` keyword is, an `allOf` written before it puts its properties first.
        let mut applied: Vec<(usize, Node)> = Vec::new();
        let own_obj_at = m
            .keys()
            .position(|k| {
                matches!(k.as_str(), "properties" | "additionalProperties" | "patternProperties")
            })
            .unwrap_or(0);
        let mut arr = Arr::any();
        let mut has_arr = false;
        let mut clause = Clause { props: vec![], patterns: vec![], additional: SExpr::True };
        let mut obj = Obj::any();
        let mut has_obj = false;
        // The keys read once (a schema object has a few): a hashed lookup per name cost more.
        let has_applicators = m.keys().any(|k| {
            matches!(
                k.as_str(),
                "allOf"
                    | "anyOf"
                    | "oneOf"
                    | "not"
                    | "if"
                    | "$ref"
                    | "dependentSchemas"
                    | "dependencies"
            )
        });
        for (ki, (k, val)) in m.iter().enumerate() {
            let kw = k.as_str();
            match kw {
                "type" => {
                    let t = type_node(val)?;
                    n = intersect(&n, &t)?;
                }
                "const" => {
                    let c = self.value_node(val)?;
                    n = intersect(&n, &c)?;
                }
                "enum" => {
                    let vals = val
                        .as_array()
                        .ok_or_else(|| Error::new(ErrorKind::Value, "enum must be an array"))?;
                    let mut u = Node::nothing();
                    for v in vals {
                        let c = self.value_node(v)?;
                        u = union_into(u, &c)?;
                    }
                    n = intersect(&n, &u)?;
                }
                "minimum" | "maximum" => {
                    let d = number(kw, val)?;
                    let is_min = kw == "minimum";
                    let excl_kw = if is_min { "exclusiveMinimum" } else { "exclusiveMaximum" };
                    let strict = m.get(excl_kw).and_then(Value::as_bool).unwrap_or(false);
                    let rx = if is_min { numbers::ge(&d, strict) } else { numbers::le(&d, strict) };
                    self.num_constraint(&mut n, rx);
                }
                "exclusiveMinimum" | "exclusiveMaximum" if val.is_number() => {
                    let d = number(kw, val)?;
                    let rx = if kw == "exclusiveMinimum" {
                        numbers::ge(&d, true)
                    } else {
                        numbers::le(&d, true)
                    };
                    self.num_constraint(&mut n, rx);
                }
                "multipleOf" => {
                    let d = number(kw, val)?;
                    let (divisor, scale) = numbers::multiple_of(&d)?;
                    let rx = RegexSpec::Concat(vec![
                        RegexSpec::Regex("-?".into()),
                        RegexSpec::MultipleOf { divisor, scale },
                    ]);
                    n.num.rx = n.num.rx.and(&Rx::regex(rx));
                    n.num.exp = exp_restrict(n.num.exp);
                }
                "minLength" | "maxLength" => {
                    let x = count(kw, val)?;
                    // Both bounds as one repeat, and `minLength: 0` as nothing: an
                    // intersection costs the lexer two derivatives and a non-emptiness
                    // check per byte, a repeat one derivative.
                    let bounds = if kw == "minLength" {
                        if m.contains_key("maxLength") {
                            continue;
                        }
                        if x == 0 {
                            continue;
                        }
                        LengthBounds { min: x, max: None }
                    } else {
                        let lo = match m.get("minLength") {
                            Some(v) => count("minLength", v)?,
                            None => 0,
                        };
                        if lo > x {
                            n.str_ = Rx::Nothing;
                            continue;
                        }
                        LengthBounds { min: lo, max: Some(x) }
                    };
                    n.str_ = n.str_.and(&Rx::len(bounds));
                }
                "pattern" => {
                    let p = val
                        .as_str()
                        .ok_or_else(|| Error::new(ErrorKind::Value, "pattern must be a string"))?;
                    let anchored = !self.opts.pattern_search;
                    if let Some((positive, look, rest)) = ecma::leading_lookahead(p) {
                        // `^(?!X)Y`: `^Y` and not `X` then anything (`(?=X)`: and `X` …)
                        let body = ecma::translate_pattern(&rest, anchored)?;
                        check_regex(&body)?;
                        let look = ecma::translate_pattern(&look, false)?;
                        check_regex(&look)?;
                        let look = RegexSpec::Regex(look);
                        let look = if positive { look } else { RegexSpec::Not(Box::new(look)) };
                        let spec = RegexSpec::And(vec![RegexSpec::Regex(body), look]);
                        n.str_ = n.str_.and(&Rx::regex(spec));
                        // anchored mode narrows `^Y` beyond the spec's search: not complemented
                        n.str_approx |= anchored;
                        continue;
                    }
                    let rx = ecma::translate_pattern(p, anchored)?;
                    check_regex(&rx)?;
                    n.str_ = n.str_.and(&Rx::regex(RegexSpec::Regex(rx)));
                    // an anchored pattern without explicit anchors is narrower than the spec's
                    n.str_approx |= anchored
                        && ecma::translate_pattern(p, false)? != ecma::translate_pattern(p, true)?;
                }
                "format" => {
                    let f = val.as_str().unwrap_or("");
                    match ecma::format_spec(f) {
                        Some(spec) => {
                            let rx = match ecma::format_max_len(f) {
                                Some(n) => {
                                    let max = LengthBounds { min: 0, max: Some(n) };
                                    Rx::And(vec![Term::Regex(spec), Term::Len(max)])
                                }
                                None => Rx::regex(spec),
                            };
                            n.str_ = n.str_.and(&rx);
                            n.str_approx |= ecma::format_is_subset(f);
                        }
                        None => unknown_format = Some(f.to_string()),
                    }
                }
                "items" | "prefixItems" | "additionalItems" | "minItems" | "maxItems"
                | "contains" | "uniqueItems" => {
                    has_arr = true;
                    match kw {
                        "items" => match val {
                            Value::Array(a) => {
                                arr.prefix = (0..a.len())
                                    .map(|i| self.at(format!("{}/{i}", sub(kw))))
                                    .collect();
                                arr.items = match m.get("additionalItems") {
                                    Some(_) => self.at(sub("additionalItems")),
                                    None => SExpr::True,
                                };
                            }
                            _ => arr.items = self.at(sub(kw)),
                        },
                        "prefixItems" => {
                            let a = val.as_array().ok_or_else(|| {
                                Error::new(ErrorKind::Value, "prefixItems: not an array")
                            })?;
                            arr.prefix =
                                (0..a.len()).map(|i| self.at(format!("{}/{i}", sub(kw)))).collect();
                        }
                        "additionalItems" => {}
                        "minItems" => arr.min = count(kw, val)?,
                        "maxItems" => arr.max = Some(count(kw, val)?),
                        "contains" => {
                            let lo = match m.get("minContains") {
                                Some(v) => count("minContains", v)?,
                                _ => 1,
                            };
                            let hi = match m.get("maxContains") {
                                Some(v) => Some(count("maxContains", v)?),
                                _ => None,
                            };
                            arr.contains.push((self.at(sub(kw)), lo, hi, 0));
                        }
                        "uniqueItems" => arr.unique = val.as_bool().unwrap_or(false),
                        _ => {}
                    }
                }
                "properties"
                | "patternProperties"
                | "additionalProperties"
                | "required"
                | "minProperties"
                | "maxProperties"
                | "propertyNames" => {
                    has_obj = true;
                    match kw {
                        "properties" => {
                            let o = val.as_object().ok_or_else(|| {
                                Error::new(ErrorKind::Value, "properties: not an object")
                            })?;
                            for name in o.keys() {
                                let e = self.at(child_loc(&sub(kw), name));
                                clause.props.push((name.clone(), e));
                            }
                        }
                        "patternProperties" => {
                            let o = val.as_object().ok_or_else(|| {
                                Error::new(ErrorKind::Value, "patternProperties: not an object")
                            })?;
                            for p in o.keys() {
                                let rx = ecma::translate_pattern(p, false)?;
                                check_regex(&rx)?;
                                let e = self.at(child_loc(&sub(kw), p));
                                clause.patterns.push((rx, e));
                            }
                        }
                        "additionalProperties" => clause.additional = self.at(sub(kw)),
                        "required" => {
                            for r in val.as_array().into_iter().flatten().filter_map(Value::as_str)
                            {
                                if !obj.required.iter().any(|x| x == r) {
                                    obj.required.push(r.to_string());
                                }
                            }
                        }
                        "minProperties" => obj.min = count(kw, val)?,
                        "maxProperties" => obj.max = Some(count(kw, val)?),
                        "propertyNames" => {
                            let e = self.at(sub(kw));
                            let pn = self.normalize(&e)?;
                            obj.names = obj.names.and(&pn.str_);
                        }
                        _ => {}
                    }
                }
                "unevaluatedProperties" => {
                    if val == &Value::Bool(true) || val.as_object().is_some_and(|o| o.is_empty()) {
                        continue;
                    }
                    if has_applicators || m.contains_key("additionalProperties") {
                        // which keys are evaluated depends on the branches that hold
                        let u = self.at(sub(kw));
                        applied.push((ki, self.unevaluated_properties(loc, u)?));
                        continue;
                    }
                    has_obj = true;
                    clause.additional = self.at(sub(kw));
                }
                "unevaluatedItems" => {
                    if val == &Value::Bool(true) || val.as_object().is_some_and(|o| o.is_empty()) {
                        continue;
                    }
                    let items_is_schema = m.get("items").is_some_and(|i| !i.is_array());
                    if has_applicators
                        || items_is_schema
                        || m.contains_key("contains")
                        || m.contains_key("additionalItems")
                    {
                        // which items are evaluated depends on the branches that hold
                        let u = self.at(sub(kw));
                        applied.push((ki, self.unevaluated_items(loc, u)?));
                        continue;
                    }
                    has_arr = true;
                    arr.items = self.at(sub(kw));
                }
                "allOf" | "anyOf" | "oneOf" => {
                    let a = val.as_array().ok_or_else(|| {
                        Error::new(ErrorKind::Value, format!("{kw}: not an array"))
                    })?;
                    let es: Vec<SExpr> =
                        (0..a.len()).map(|i| self.at(format!("{}/{i}", sub(kw)))).collect();
                    let node = match kw {
                        "allOf" => (*self.normalize(&SExpr::all(es))?).clone(),
                        "anyOf" => (*self.normalize(&SExpr::Any(es))?).clone(),
                        _ => {
                            let domain = m.get("type").map(type_node).transpose()?;
                            self.one_of(&es, domain.as_ref())?
                        }
                    };
                    if node_is_nothing(&node) && !a.is_empty() && self.unsat.len() < 8 {
                        let at = if loc.is_empty() { "/" } else { loc };
                        let why = match kw {
                            "allOf" => {
                                format!("the schemas of `allOf` at {at} have no value in common")
                            }
                            _ => format!("no schema of `{kw}` at {at} has a valid value"),
                        };
                        if !self.unsat.contains(&why) {
                            self.unsat.push(why);
                        }
                    }
                    applied.push((ki, node));
                }
                "not" => {
                    let e = SExpr::not(&self.at(sub(kw)));
                    applied.push((ki, (*self.normalize(&e)?).clone()));
                }
                "if" => {
                    let c = self.at(sub("if"));
                    let t = if m.contains_key("then") { self.at(sub("then")) } else { SExpr::True };
                    let f = if m.contains_key("else") { self.at(sub("else")) } else { SExpr::True };
                    if t == SExpr::True && f == SExpr::True {
                        continue;
                    }
                    let e = SExpr::Any(vec![
                        SExpr::all(vec![c.clone(), t]),
                        SExpr::all(vec![SExpr::not(&c), f]),
                    ]);
                    applied.push((ki, (*self.normalize(&e)?).clone()));
                }
                "$ref" => {
                    let r = val
                        .as_str()
                        .ok_or_else(|| Error::new(ErrorKind::Value, "$ref must be a string"))?;
                    let target = self.doc.resolve_ref(loc, r)?;
                    let e = self.at(target);
                    applied.push((ki, (*self.normalize(&e)?).clone()));
                }
                "dependentRequired" | "dependentSchemas" | "dependencies" => {
                    let o = val.as_object().ok_or_else(|| {
                        Error::new(ErrorKind::Value, format!("{kw}: not an object"))
                    })?;
                    // The dependencies are intersected with each other first, then once with
                    // the rest: each is a union of two small objects, where an intersection
                    // with the rest copied the object's whole `properties` clause into every
                    // alternative (a chain of 200 dependencies: 3.2 s of compile).
                    let mut deps: Option<Node> = None;
                    let mut lists: Vec<(String, Vec<String>)> = Vec::new();
                    for (key, dep) in o {
                        if let Value::Array(names) = dep {
                            let mut list: Vec<String> = Vec::new();
                            for r in names.iter().filter_map(Value::as_str) {
                                if r != key && !list.iter().any(|x| x == r) {
                                    list.push(r.to_string());
                                }
                            }
                            if !list.is_empty() {
                                lists.push((key.clone(), list));
                            }
                            continue;
                        }
                        let absent = Obj::without(key);
                        let present = Node {
                            obj: vec![Obj { required: vec![key.clone()], ..Obj::any() }],
                            ..Node::any()
                        };
                        // A schema: it applies when the key is present.
                        let e = self.at(child_loc(&sub(kw), key));
                        let d = self.normalize(&e)?;
                        // non-objects are unconstrained
                        let mut u = intersect(&present, &d)?;
                        u.obj.push(absent);
                        deps = Some(match deps {
                            None => u,
                            Some(d) => intersect(&d, &u)?,
                        });
                    }
                    if !lists.is_empty() {
                        let n =
                            Node { obj: vec![Obj { deps: lists, ..Obj::any() }], ..Node::any() };
                        deps = Some(match deps {
                            None => n,
                            Some(d) => intersect(&d, &n)?,
                        });
                    }
                    if let Some(d) = deps {
                        applied.push((ki, d));
                    }
                }
                "$dynamicRef" | "$recursiveRef" => {
                    return Err(unsupported(kw, "dynamic references are not supported"));
                }
                k if IGNORED.contains(&k) => {}
                k if k.starts_with("x-") => {}
                _ => {
                    // Unknown keywords are annotations by the spec; they never constrain.
                }
            }
        }
        if has_arr {
            let a = Node { arr: vec![arr], ..Node::any() };
            n = intersect(&n, &a)?;
        }
        let mut own_obj = None;
        if has_obj {
            if !clause.props.is_empty()
                || !clause.patterns.is_empty()
                || clause.additional != SExpr::True
            {
                obj.clauses.push(clause);
            }
            own_obj = Some(Node { obj: vec![obj], ..Node::any() });
        }
        for (ki, a) in applied {
            if ki > own_obj_at {
                if let Some(o) = own_obj.take() {
                    n = intersect(&n, &o)?;
                }
            }
            n = intersect(&n, &a)?;
        }
        if let Some(o) = own_obj {
            n = intersect(&n, &o)?;
        }
        // `format` only constrains strings: an unknown one matters only if strings remain.
        // It is an annotation (2019-09 and 2020-12 make every format one) with a warning,
        // or an error under `strict_formats`.
        if let Some(f) = unknown_format {
            if !n.str_.is_nothing() {
                let reason = ecma::unasserted_format_reason(&f);
                if self.opts.strict_formats {
                    let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
                    return Err(Error::new(
                        ErrorKind::Unsupported,
                        format!(
                            "unsupported format {f:?}{why} (strict_formats is set; without it \
                             an unknown format is an annotation)"
                        ),
                    ));
                }
                let w = match reason {
                    Some(r) => format!("format {f:?} is not checked ({r})"),
                    None => format!("unknown format {f:?}"),
                };
                let w = format!("{w}: an annotation, any string is accepted");
                if !self.warnings.contains(&w) {
                    self.warnings.push(w);
                }
            }
        }
        for (part, why) in contradicted {
            match part {
                Part::Numbers => n.num = Node::nothing().num,
                Part::Strings => n.str_ = Rx::Nothing,
                Part::Arrays => n.arr.clear(),
                Part::Objects => n.obj.clear(),
                Part::All => n = Node::nothing(),
            }
            if self.unsat.len() < 8 && !self.unsat.contains(&why) {
                self.unsat.push(why);
            }
        }
        Ok(n)
    }

    fn num_constraint(&mut self, n: &mut Node, rx: String) {
        n.num.rx = n.num.rx.and(&Rx::regex(RegexSpec::Regex(rx)));
        n.num.exp = exp_restrict(n.num.exp);
    }
}

fn exp_restrict(e: Exp) -> Exp {
    match e {
        Exp::None => Exp::None,
        _ => Exp::Unknown,
    }
}

/// Whether a node has no instance at all (no kind of value left).
fn node_is_nothing(n: &Node) -> bool {
    !n.null
        && !n.t
        && !n.f
        && n.num.rx.is_nothing()
        && n.str_.is_nothing()
        && n.arr.is_empty()
        && n.obj.is_empty()
}

/// Which kind of instances a contradiction in one schema object rules out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Numbers,
    Strings,
    Arrays,
    Objects,
    All,
}

/// Numeric bounds for [`contradictions`]: the keyword, whether it is strict, and the draft-4
/// flag that makes it strict.
const NUMERIC_BOUNDS: [(&str, bool, &str); 4] = [
    ("minimum", false, "exclusiveMinimum"),
    ("exclusiveMinimum", true, ""),
    ("maximum", false, "exclusiveMaximum"),
    ("exclusiveMaximum", true, ""),
];

/// Count bounds for [`contradictions`]: the minimum, the maximum, what they rule out.
const COUNT_BOUNDS: [(&str, &str, Part); 3] = [
    ("minLength", "maxLength", Part::Strings),
    ("minItems", "maxItems", Part::Arrays),
    ("minProperties", "maxProperties", Part::Objects),
];

/// Bounds of one schema object that no value meets, in the schema's terms: numeric
/// `minimum`/`maximum` (and the exclusive forms), `minLength`/`maxLength`,
/// `minItems`/`maxItems`, `minProperties`/`maxProperties`, an empty `enum`. Each rules out
/// one kind of instance (numbers for numeric bounds: strings stay valid); when nothing is
/// left of the whole schema, the messages say why.
fn contradictions(m: &serde_json::Map<String, Value>, loc: &str) -> Vec<(Part, String)> {
    // Most schema objects have none of these keys: read off their keys at once, not by a
    // dozen hashed lookups (4 % of a large schema's compile instructions, callgrind).
    let bounds = m.keys().any(|k| {
        k == "enum"
            || NUMERIC_BOUNDS.iter().any(|b| b.0 == k)
            || COUNT_BOUNDS.iter().any(|b| b.0 == k || b.1 == k)
    });
    if !bounds {
        return Vec::new();
    }
    let at = if loc.is_empty() { "/" } else { loc };
    let f = |k: &str| m.get(k).and_then(Value::as_f64);
    let mut out = Vec::new();
    // The tightest lower and upper bounds, with whether each is strict.
    let mut lo: Option<(f64, bool, &str)> = None;
    let mut hi: Option<(f64, bool, &str)> = None;
    for (k, strict, flag) in NUMERIC_BOUNDS {
        let Some(v) = f(k) else { continue };
        let strict = strict || m.get(flag) == Some(&Value::Bool(true));
        if k.ends_with("inimum") {
            if lo.is_none_or(|(x, s, _)| v > x || (v == x && strict && !s)) {
                lo = Some((v, strict, k));
            }
        } else if hi.is_none_or(|(x, s, _)| v < x || (v == x && strict && !s)) {
            hi = Some((v, strict, k));
        }
    }
    if let (Some((a, sa, ka)), Some((b, sb, kb))) = (lo, hi) {
        if a > b || (a == b && (sa || sb)) {
            let rel = if a > b { "is above" } else { "leaves nothing up to" };
            out.push((Part::Numbers, format!("`{ka}` {a} {rel} `{kb}` {b} at {at}")));
        }
    }
    for (min, max, part) in COUNT_BOUNDS {
        if let (Some(a), Some(b)) = (f(min), f(max)) {
            if a > b {
                out.push((part, format!("`{min}` {a} is above `{max}` {b} at {at}")));
            }
        }
    }
    if m.get("enum").and_then(Value::as_array).is_some_and(|a| a.is_empty()) {
        out.push((Part::All, format!("`enum` is empty at {at}")));
    }
    out
}

fn number(kw: &str, v: &Value) -> Result<Decimal, Error> {
    match v {
        Value::Number(n) => Decimal::from_json(n),
        _ => Err(Error::new(ErrorKind::Value, format!("{kw} must be a number"))),
    }
}

fn count(kw: &str, v: &Value) -> Result<u32, Error> {
    let d = number(kw, v)?;
    if d.neg || !d.is_integer() {
        return Err(Error::new(ErrorKind::Value, format!("{kw} must be a nonnegative integer")));
    }
    d.int
        .parse::<u32>()
        .map_err(|_| Error::new(ErrorKind::Limit, format!("{kw} {} is too large", d.int)))
}

/// Checks that a translated regex parses.
fn check_regex(rx: &str) -> Result<(), Error> {
    // Parsed once per process, for the lexer too (`lexer::regex_check`).
    lexer::regex_check(rx).map_err(|e| {
        Error::new(
            ErrorKind::Unsupported,
            format!("pattern translated to {rx:?} does not parse: {e}"),
        )
    })
}

/// The values of the `type` keyword `val` (a name or an array of names).
fn type_node(val: &Value) -> Result<Node, Error> {
    let types: Vec<&str> = match val {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => return Err(Error::new(ErrorKind::Value, "type must be a string or an array")),
    };
    let mut t = Node::nothing();
    t.values = None;
    for ty in types {
        match ty {
            "null" => t.null = true,
            "boolean" => {
                t.t = true;
                t.f = true
            }
            "number" => t.num = Num { rx: Rx::All, exp: Exp::All, int_plain: false },
            "integer" => {
                if t.num.exp != Exp::All {
                    t.num = Num {
                        rx: Rx::regex(RegexSpec::Regex(numbers::INTEGER.into())),
                        exp: Exp::Unknown,
                        int_plain: true,
                    }
                }
            }
            "string" => t.str_ = Rx::All,
            "array" => t.arr = vec![Arr::any()],
            "object" => t.obj = vec![Obj::any()],
            other => return Err(Error::new(ErrorKind::Value, format!("unknown type {other:?}"))),
        }
    }
    Ok(t)
}
