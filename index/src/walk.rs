//! The walk: from one DFA state, run the class trie through the byte DFA, pruning every
//! subtree whose prefix dies, and list `(group, end state)` for each group that survives.

use crate::bytedfa::{ByteDfa, DEAD};
use crate::groups::{Groups, NO_GROUP};

/// Scratch space of one walker (one per rayon task).
pub(crate) struct Walker<'a> {
    dfa: &'a ByteDfa,
    groups: &'a Groups,
    /// For each state: the forced next byte class and state (see [`ByteDfa::forced`]), when
    /// the literal fast path is on.
    forced: Option<&'a [Option<(u8, u32)>]>,
    /// `states[d]`: the DFA state after the first `d` classes of the current path.
    states: Vec<u32>,
}

impl<'a> Walker<'a> {
    pub(crate) fn new(
        dfa: &'a ByteDfa,
        groups: &'a Groups,
        forced: Option<&'a [Option<(u8, u32)>]>,
    ) -> Walker<'a> {
        Walker { dfa, groups, forced, states: vec![DEAD; groups.max_depth + 1] }
    }

    /// Appends `(group, end state)` for every group whose class string leads from `root`
    /// to a live state, in ascending group order. Returns the work done (nodes visited).
    pub(crate) fn walk(&mut self, root: u32, out: &mut Vec<(u32, u32)>) -> u64 {
        self.states[0] = root;
        let nodes = &self.groups.nodes;
        if let Some(forced) = self.forced {
            if let Some((c0, s1)) = forced[root as usize] {
                if forced[s1 as usize].is_some() {
                    return self.walk_literal(root, c0, s1, forced, out);
                }
            }
        }
        self.walk_range(0, nodes.len(), out)
    }

    /// The plain walk over the nodes `lo..hi`, whose parents' states are in `self.states`.
    fn walk_range(&mut self, lo: usize, hi: usize, out: &mut Vec<(u32, u32)>) -> u64 {
        let nodes = &self.groups.nodes;
        let mut work = 0u64;
        let mut p = lo;
        while p < hi {
            let n = nodes[p];
            work += 1;
            let d = n.depth as usize;
            let t = self.dfa.next(self.states[d - 1], n.class);
            if t == DEAD {
                p += n.size as usize;
                continue;
            }
            self.states[d] = t;
            if n.group != NO_GROUP {
                out.push((n.group, t));
            }
            p += 1;
        }
        work
    }

    /// The ghost-symbol path for a root that starts a deterministic sequence (a literal of
    /// at least two forced bytes): the literal is matched against the trie as one symbol,
    /// following one child per level instead of stepping the DFA under every child, then
    /// the plain walk resumes in the state after the literal.
    fn walk_literal(
        &mut self,
        root: u32,
        c0: u8,
        s1: u32,
        forced: &[Option<(u8, u32)>],
        out: &mut Vec<(u32, u32)>,
    ) -> u64 {
        let nodes = &self.groups.nodes;
        let mut work = 0u64;
        let (mut lo, mut hi) = (0usize, nodes.len());
        let mut class = c0;
        let mut state = s1;
        let mut depth = 1usize;
        debug_assert_eq!(self.states[0], root);
        loop {
            // Find the child of class `class` among the siblings in lo..hi.
            let mut p = lo;
            let mut found = None;
            while p < hi {
                work += 1;
                let n = nodes[p];
                if n.class == class {
                    found = Some(p);
                    break;
                }
                if n.class > class {
                    break;
                }
                p += n.size as usize;
            }
            let Some(p) = found else { return work };
            let n = nodes[p];
            self.states[depth] = state;
            if n.group != NO_GROUP {
                out.push((n.group, state));
            }
            lo = p + 1;
            hi = p + n.size as usize;
            if lo >= hi || depth >= self.groups.max_depth {
                return work;
            }
            match forced[state as usize] {
                Some((c, t)) => {
                    class = c;
                    state = t;
                    depth += 1;
                }
                None => return work + self.walk_range(lo, hi, out),
            }
        }
    }
}
