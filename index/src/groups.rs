//! Tokens grouped by their string of byte classes, and the prefix graph (a trie) over those
//! class strings.
//!
//! Two tokens with the same class string go through the same DFA states from every state,
//! so one walk serves the whole group. The trie shares prefixes between groups, so a class
//! prefix that dies prunes every group that extends it.

use toktrie::{TokenId, Vocabulary};

use crate::bytedfa::ByteDfa;

/// "No group ends at this trie node".
pub(crate) const NO_GROUP: u32 = u32::MAX;

/// One node of the class trie, in DFS order. The root is implicit (depth 0).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// The class on the edge into the node.
    pub class: u8,
    /// Depth of the node (1 for the root's children).
    pub depth: u32,
    /// Nodes in the subtree, this one included: `p + size` is the next sibling (or the
    /// next node of an ancestor).
    pub size: u32,
    /// The group whose class string ends here, or [`NO_GROUP`].
    pub group: u32,
}

/// Groups of tokens and the trie over their class strings.
pub(crate) struct Groups {
    /// CSR: the tokens of group `g` are `tokens[start[g]..start[g + 1]]`, ascending.
    pub start: Vec<u32>,
    /// Token ids, group by group.
    pub tokens: Vec<TokenId>,
    /// The class trie in DFS order, children sorted by class. Group ids are assigned in
    /// lexicographic order of class strings, so a DFS walk meets groups in ascending order.
    pub nodes: Vec<Node>,
    /// The longest class string.
    pub max_depth: usize,
    /// Tokens dropped because they hold a byte of a dead class.
    pub dropped: usize,
}

impl Groups {
    pub(crate) fn num_groups(&self) -> usize {
        self.start.len() - 1
    }

    pub(crate) fn tokens_of(&self, group: u32) -> &[TokenId] {
        &self.tokens[self.start[group as usize] as usize..self.start[group as usize + 1] as usize]
    }

    pub(crate) fn new(dfa: &ByteDfa, vocab: &Vocabulary) -> Groups {
        // All class strings in one buffer, then one sort of (offset, len, id) triples: no
        // allocation per token (a HashMap<Vec<u8>, _> took 2/3 of this phase on Llama 3).
        let mut buf: Vec<u8> = Vec::new();
        let mut items: Vec<(u32, u32, TokenId)> = Vec::new();
        let mut dropped = 0;
        let eos = vocab.eos_tokens();
        'tokens: for (id, bytes) in vocab.iter() {
            // Special tokens are never matched by their bytes; EOS is handled separately
            // (allowed exactly in final states), even where it is a regular token.
            if vocab.is_special(id) || bytes.is_empty() || eos.contains(&id) {
                continue;
            }
            let at = buf.len();
            for &b in bytes {
                let c = dfa.classes[b as usize];
                if !dfa.class_live[c as usize] {
                    dropped += 1;
                    buf.truncate(at);
                    continue 'tokens;
                }
                buf.push(c);
            }
            items.push((at as u32, bytes.len() as u32, id));
        }
        let string = |it: &(u32, u32, TokenId)| &buf[it.0 as usize..(it.0 + it.1) as usize];
        items.sort_unstable_by(|a, b| string(a).cmp(string(b)).then(a.2.cmp(&b.2)));
        let mut strings: Vec<(&[u8], Vec<TokenId>)> = Vec::new();
        for it in &items {
            match strings.last_mut() {
                Some((s, toks)) if *s == string(it) => toks.push(it.2),
                _ => strings.push((string(it), vec![it.2])),
            }
        }

        let mut start = vec![0u32];
        let mut tokens = Vec::new();
        let mut nodes: Vec<Node> = Vec::new();
        let mut path: Vec<usize> = Vec::new();
        let mut max_depth = 0;
        let mut prev: &[u8] = &[];
        for (g, (s, toks)) in strings.iter().enumerate() {
            tokens.extend_from_slice(toks);
            start.push(tokens.len() as u32);
            let lcp = prev.iter().zip(s.iter()).take_while(|(a, b)| a == b).count();
            while path.len() > lcp {
                let i = path.pop().unwrap_or_default();
                nodes[i].size = (nodes.len() - i) as u32;
            }
            for (d, &c) in s.iter().enumerate().skip(lcp) {
                path.push(nodes.len());
                nodes.push(Node { class: c, depth: d as u32 + 1, size: 0, group: NO_GROUP });
            }
            // Sorted and unique, so `s` is longer than the common prefix with its predecessor.
            let last = nodes.len() - 1;
            nodes[last].group = g as u32;
            max_depth = max_depth.max(s.len());
            prev = s;
        }
        while let Some(i) = path.pop() {
            nodes[i].size = (nodes.len() - i) as u32;
        }
        Groups { start, tokens, nodes, max_depth, dropped }
    }
}
