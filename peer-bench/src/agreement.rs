//! Mask agreement: the two engines' allowed sets compared at one step (EOS apart), with the
//! counters over the run and the differing steps of the current file kept for sorting.

/// Disagreement bookkeeping.
#[derive(Default)]
pub struct Agreement {
    pub steps_compared: u64,
    /// Steps where the non-EOS allowed sets differ.
    pub set_diffs: u64,
    /// Steps where "EOS allowed" differs.
    pub eos_diffs: u64,
    /// Instances with at least one difference.
    pub instances_with_diff: u64,
    /// Valid instances where one engine stopped producing masks before the other.
    pub length_diffs: u64,
    /// This file's differing steps and mask-count differences (sorted into classes and
    /// written out after the file).
    pub cur: Vec<StepDiff>,
    pub cur_len: Vec<(usize, usize, usize)>,
    /// Steps compared in this file (instance, step).
    pub cur_compared: std::collections::HashSet<(usize, usize)>,
}

/// One step where the allowed sets differ.
pub struct StepDiff {
    pub inst: usize,
    pub step: usize,
    pub n_tokens: usize,
    pub n_ours: usize,
    pub n_ref: usize,
    pub eos_ours: bool,
    pub eos_ref: bool,
    pub only_ours: Vec<u32>,
    pub only_ref: Vec<u32>,
}

fn bit(words: &[u32], i: u32) -> bool {
    words.get((i / 32) as usize).is_some_and(|w| w >> (i % 32) & 1 == 1)
}

#[allow(clippy::too_many_arguments)]
pub fn compare_masks(
    our_eos: &[u32],
    ref_eos: &[u32],
    inst: usize,
    step: usize,
    ours_w: &[u32],
    ref_w: &[u32],
    n_tokens: usize,
    agr: &mut Agreement,
    had_diff: &mut bool,
) {
    agr.steps_compared += 1;
    agr.cur_compared.insert((inst, step));
    let mut eos_set: Vec<u32> = our_eos.to_vec();
    for &e in ref_eos {
        if !eos_set.contains(&e) {
            eos_set.push(e);
        }
    }
    let n = ours_w.len().max(ref_w.len());
    let mut only_ours = Vec::new();
    let mut only_ref = Vec::new();
    let (mut n_ours, mut n_ref) = (0usize, 0usize);
    for wi in 0..n {
        let a = ours_w.get(wi).copied().unwrap_or(0);
        let b = ref_w.get(wi).copied().unwrap_or(0);
        n_ours += a.count_ones() as usize;
        n_ref += b.count_ones() as usize;
        let mut d = a ^ b;
        while d != 0 {
            let bi = d.trailing_zeros();
            d &= d - 1;
            let id = wi as u32 * 32 + bi;
            if eos_set.contains(&id) {
                continue;
            }
            if a >> bi & 1 == 1 {
                only_ours.push(id);
            } else {
                only_ref.push(id);
            }
        }
    }
    let eos_ours = our_eos.iter().any(|&e| bit(ours_w, e));
    let eos_ref = ref_eos.iter().any(|&e| bit(ref_w, e));
    let set_diff = !only_ours.is_empty() || !only_ref.is_empty();
    let eos_diff = eos_ours != eos_ref;
    if set_diff {
        agr.set_diffs += 1;
    }
    if eos_diff {
        agr.eos_diffs += 1;
    }
    if set_diff || eos_diff {
        *had_diff = true;
        agr.cur.push(StepDiff {
            inst,
            step,
            n_tokens,
            n_ours,
            n_ref,
            eos_ours,
            eos_ref,
            only_ours,
            only_ref,
        });
    }
}
