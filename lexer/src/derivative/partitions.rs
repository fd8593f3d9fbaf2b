//! Byte-class partitions: for each state, which byte classes lead to the same next state,
//! worked out from the expressions' own byte splits, so one computed transition fills every
//! class of its part ([`DerivreLexer::spread`]).

use super::*;

/// A state's partition not worked out yet.
pub(super) const NO_PARTITION: u32 = u32::MAX;
/// Every class in one part (an expression that reads no byte apart from another).
pub(super) const TRIVIAL: u32 = 0;
/// Every class apart (nothing merged).
pub(super) const IDENTITY: u32 = 1;

/// Partitions of the byte classes (a part label per class, numbered by first occurrence, so
/// equal partitions are equal arrays), interned, with the partition of each expression and
/// of each state. Two classes in one part of an expression's partition give it the same
/// derivative: a byte set (or single byte) and the first byte of a byte string tell apart
/// the classes they hold; an empty string or no-match tells none apart; a node that reads
/// no byte itself (concatenation, alternation, intersection, complement, repeat,
/// look-ahead) tells apart what its children read (a concatenation's second element only
/// when the first can be empty); a leaf that takes every byte (derivre's `multipleOf`
/// remainder node among them) is taken as telling every class apart.
#[derive(Clone)]
pub(super) struct Partitions {
    /// A byte of each class.
    pub(super) class_rep: Vec<u8>,
    pub(super) labels: Vec<Arc<[u8]>>,
    pub(super) ids: HashMap<Arc<[u8]>, u32>,
    /// Memo of [`Partitions::of_expr`].
    pub(super) of_expr: derivre::HashMap<ExprRef, u32>,
    /// Memo of [`Partitions::refine`] (the same member partitions meet in state after
    /// state).
    pub(super) refined: HashMap<(u32, u32), u32>,
    /// The partition of a byte or byte string by the class of its first byte (that class
    /// apart from the others); [`NO_PARTITION`] until met. A large alternation of literals
    /// (a tool set's names) makes new byte strings in every derivative.
    pub(super) first_byte: Vec<u32>,
    /// Per state; [`NO_PARTITION`] until needed.
    pub(super) of_state: Vec<u32>,
    /// Cold transitions computed per state (counted up to 2).
    pub(super) cold: Vec<u8>,
    /// Off only in tests (the reference the spread table is compared with).
    pub(super) on: bool,
}

impl Partitions {
    /// A copy with room for `states` more states.
    pub(super) fn with_room(&self, states: usize) -> Partitions {
        Partitions {
            class_rep: self.class_rep.clone(),
            labels: self.labels.clone(),
            ids: self.ids.clone(),
            of_expr: self.of_expr.clone(),
            refined: self.refined.clone(),
            first_byte: self.first_byte.clone(),
            of_state: with_room(&self.of_state, states),
            cold: with_room(&self.cold, states),
            on: self.on,
        }
    }

    pub(super) fn new(class_of: &[u8; 256], num_classes: usize) -> Partitions {
        let mut class_rep = vec![0u8; num_classes];
        for b in (0..=255u8).rev() {
            class_rep[class_of[b as usize] as usize] = b;
        }
        let mut p = Partitions {
            class_rep,
            labels: Vec::new(),
            ids: HashMap::new(),
            of_expr: derivre::HashMap::default(),
            refined: HashMap::new(),
            first_byte: vec![NO_PARTITION; num_classes],
            of_state: Vec::new(),
            cold: Vec::new(),
            on: true,
        };
        let trivial = p.intern(vec![0; num_classes]);
        let identity = p.intern((0..num_classes).map(|c| c as u8).collect());
        // With one class the two coincide: nothing to merge either way.
        debug_assert!(trivial == TRIVIAL && (identity == IDENTITY || num_classes == 1));
        if num_classes == 1 {
            p.labels.push(p.labels[0].clone());
        }
        p
    }

    pub(super) fn intern(&mut self, labels: Vec<u8>) -> u32 {
        if let Some(&id) = self.ids.get(labels.as_slice()) {
            return id;
        }
        let id = self.labels.len() as u32;
        let labels: Arc<[u8]> = labels.into();
        self.labels.push(labels.clone());
        self.ids.insert(labels, id);
        id
    }

    /// The coarsest partition finer than both.
    pub(super) fn refine(&mut self, a: u32, b: u32) -> u32 {
        if a == b || b == TRIVIAL {
            return a;
        }
        if a == TRIVIAL {
            return b;
        }
        if a == IDENTITY || b == IDENTITY {
            return IDENTITY;
        }
        let key = (a.min(b), a.max(b));
        if let Some(&r) = self.refined.get(&key) {
            return r;
        }
        let (la, lb) = (&self.labels[a as usize], &self.labels[b as usize]);
        // The pairs of labels met so far, numbered in order of first occurrence (at most one
        // per class).
        let mut pairs: Vec<(u8, u8)> = Vec::with_capacity(16);
        let out: Vec<u8> = la
            .iter()
            .zip(lb.iter())
            .map(|(&x, &y)| match pairs.iter().position(|&p| p == (x, y)) {
                Some(i) => i as u8,
                None => {
                    pairs.push((x, y));
                    (pairs.len() - 1) as u8
                }
            })
            .collect();
        let r = self.intern(out);
        self.refined.insert(key, r);
        r
    }

    /// The partition of expression `e` (memoized; see the type's docs).
    pub(super) fn of_expr(&mut self, exprs: &mut ExprSet, e: ExprRef) -> u32 {
        let mut memo = std::mem::take(&mut self.of_expr);
        let p = exprs.map(
            e,
            &mut memo,
            true,
            |e| e,
            |set, mapped, r| {
                let x = set.get(r);
                // A node with children reads no byte itself unless it is a byte string, which
                // refuses all but one byte: two different bytes taken tell them apart.
                let reps = &self.class_rep;
                if !x.args().is_empty()
                    && reps.len() >= 2
                    && !x.surely_no_match(reps[0])
                    && !x.surely_no_match(reps[1])
                {
                    return mapped.iter().fold(TRIVIAL, |acc, &p| self.refine(acc, p));
                }
                // A byte or byte string: its first byte's class (a literal's byte is a class
                // of its own, so the class's byte is that byte) apart from the others.
                let t = set.get_tag(r) as u8;
                if t == tag::BYTE || t == tag::BYTE_CONCAT {
                    if let Some(c) = reps.iter().position(|&b| !x.surely_no_match(b)) {
                        if self.first_byte[c] == NO_PARTITION {
                            // Numbered by first occurrence, as every partition.
                            let labels = (0..reps.len()).map(|i| ((i == c) != (c == 0)) as u8);
                            let labels = labels.collect();
                            self.first_byte[c] = self.intern(labels);
                        }
                        return self.first_byte[c];
                    }
                }
                let (mut reads, mut skips) = (false, false);
                let labels: Vec<u8> = self
                    .class_rep
                    .iter()
                    .map(|&b| {
                        let no = x.surely_no_match(b);
                        reads |= !no;
                        skips |= no;
                        (!no) as u8
                    })
                    .collect();
                if x.args().is_empty() || skips {
                    // A leaf, or a byte string (its tail is not visited): what its first byte
                    // may be. A leaf that takes every byte may be a remainder node.
                    return match (reads, skips) {
                        (_, false) => IDENTITY,
                        (false, _) => TRIVIAL,
                        _ => {
                            let first = labels[0];
                            self.intern(labels.iter().map(|&l| (l != first) as u8).collect())
                        }
                    };
                }
                mapped.iter().fold(TRIVIAL, |acc, &p| self.refine(acc, p))
            },
        );
        self.of_expr = memo;
        p
    }

    pub(super) fn num_bytes(&self) -> usize {
        let labels: usize = self.labels.iter().map(|l| 2 * l.len() + 32).sum();
        labels
            + self.of_expr.capacity() * 12
            + self.refined.capacity() * 12
            + self.of_state.capacity() * 4
            + self.cold.capacity()
            + self.class_rep.capacity()
    }
}
