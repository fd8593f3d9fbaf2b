//! `LLExecutor`: masks and token consumption for a batch of matchers on a thread pool and
//! the calling thread (`llguidance::batch::for_each_split_shared`: the first consume after a
//! batch wakes a pool thread for the next one), with the GIL released for the whole batch.

use llguidance::batch::for_each_split_shared;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::matcher::{check_ptr, LLMatcher, Row};

/// A matcher borrowed for the batch, sendable to a pool thread (each is used by one).
struct Job(*mut LLMatcher);
// SAFETY: the PyRefMut guards held by the caller keep each matcher exclusively borrowed for
// the call, and each Job is handed to exactly one thread.
unsafe impl Send for Job {}
unsafe impl Sync for Job {}

impl Job {
    /// # Safety
    /// The matcher must be exclusively borrowed by the caller for the call.
    unsafe fn get<'a>(&self) -> &'a mut LLMatcher {
        &mut *self.0
    }
}

/// Items of a batch list: each a tuple of `n` items (the `what` of the error message).
fn tuples<'py>(
    list: &Bound<'py, PyList>,
    n: usize,
    what: &str,
) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    let mut out = Vec::with_capacity(list.len());
    for item in list.iter() {
        let t = item.cast_into::<PyTuple>()?;
        if t.len() != n {
            return Err(PyValueError::new_err(format!("Expecting {what} tuple")));
        }
        out.push(t);
    }
    Ok(out)
}

/// A thread pool for batches of matchers.
#[pyclass(frozen, module = "llg_rs._lib")]
pub struct LLExecutor {
    pool: std::sync::Arc<rayon::ThreadPool>,
}

fn default_threads() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpus * 8 / 10).clamp(1, 32)
}

#[pymethods]
impl LLExecutor {
    #[new]
    #[pyo3(signature = (num_threads = None))]
    fn new(num_threads: Option<usize>) -> PyResult<LLExecutor> {
        let n = match num_threads {
            None | Some(0) => default_threads(),
            Some(n) => n,
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("llg_rs-{i}"))
            .build()
            .map_err(|e| PyValueError::new_err(format!("thread pool: {e}")))?;
        Ok(LLExecutor { pool: std::sync::Arc::new(pool) })
    }

    /// The number of threads.
    #[getter]
    fn num_threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Fills the mask of each `(matcher, K)` into row K of the `trg_batch_size` rows of
    /// `one_mask_bytes` at `trg_pointer`, in parallel.
    fn unsafe_compute_mask_ptr(
        &self,
        py: Python<'_>,
        interpreters: &Bound<'_, PyList>,
        trg_pointer: usize,
        one_mask_bytes: usize,
        trg_batch_size: usize,
    ) -> PyResult<()> {
        let mut parsed = Vec::new();
        for t in &tuples(interpreters, 2, "(LLMatcher, int)")? {
            let m = t.get_item(0)?.cast_into::<LLMatcher>()?;
            parsed.push((m, t.get_item(1)?.extract()?, Vec::new()));
        }
        self.fill_rows(py, parsed, trg_pointer, one_mask_bytes, trg_batch_size)
    }

    /// Like `unsafe_compute_mask_ptr`, with draft tokens: the mask of each matcher now into
    /// row K, then after each draft token into rows K+1, K+2, ... (up to the first token
    /// not allowed, an EOS or the end of the batch); the matchers' state is unchanged.
    fn unsafe_compute_mask_ptr_with_draft_token(
        &self,
        py: Python<'_>,
        interpreters: &Bound<'_, PyList>,
        trg_pointer: usize,
        one_mask_bytes: usize,
        trg_batch_size: usize,
    ) -> PyResult<()> {
        let mut parsed = Vec::new();
        for t in &tuples(interpreters, 3, "(LLMatcher, int, List[int])")? {
            let m = t.get_item(0)?.cast_into::<LLMatcher>()?;
            let k: usize = t.get_item(1)?.extract()?;
            let draft: Vec<u32> = t.get_item(2)?.extract()?;
            if draft.is_empty() {
                return Err(PyValueError::new_err("Draft tokens must not be empty"));
            }
            parsed.push((m, k, draft));
        }
        self.fill_rows(py, parsed, trg_pointer, one_mask_bytes, trg_batch_size)
    }

    /// Consumes one token in each `(matcher, token)`, in parallel; returns which succeeded
    /// (a failed matcher is in its error state).
    fn consume_token_par(
        &self,
        py: Python<'_>,
        matchers: &Bound<'_, PyList>,
    ) -> PyResult<Vec<bool>> {
        let items = tuples(matchers, 2, "(LLMatcher, int)")?;
        let mut parsed = Vec::with_capacity(items.len());
        for t in &items {
            let m = t.get_item(0)?.cast_into::<LLMatcher>()?;
            let tok: u32 = t.get_item(1)?.extract()?;
            parsed.push((m, tok));
        }
        if parsed.is_empty() {
            return Err(PyValueError::new_err("No matchers"));
        }
        let mut guards = Vec::with_capacity(parsed.len());
        for (m, t) in &parsed {
            guards.push((m.try_borrow_mut()?, *t));
        }
        let mut jobs: Vec<(Job, u32, bool)> =
            guards.iter_mut().map(|(g, t)| (Job(&mut **g as *mut LLMatcher), *t, false)).collect();
        py.detach(|| {
            for_each_split_shared(&self.pool, &mut jobs, |(job, t, ok)| {
                // SAFETY: each matcher is exclusively borrowed by its guard.
                *ok = unsafe { job.get().consume(*t) };
            })
        });
        drop(guards);
        Ok(jobs.into_iter().map(|j| j.2).collect())
    }
}

impl LLExecutor {
    /// The batch fill behind both `unsafe_compute_mask_ptr` calls: each matcher's mask into
    /// row K, and with a draft the masks after each draft token into the rows after it
    /// (clipped to the batch: LLGuidance does not clip, but writing past the buffer is never
    /// right). Checks in LLGuidance's order, then fills in parallel with the GIL released.
    fn fill_rows(
        &self,
        py: Python<'_>,
        parsed: Vec<(Bound<'_, LLMatcher>, usize, Vec<u32>)>,
        trg_pointer: usize,
        one_mask_bytes: usize,
        trg_batch_size: usize,
    ) -> PyResult<()> {
        if parsed.is_empty() {
            return Err(PyValueError::new_err("No interpreters"));
        }
        if parsed.iter().any(|(_, k, _)| *k >= trg_batch_size) {
            return Err(PyValueError::new_err("Target index out of bounds"));
        }
        let mut guards = Vec::with_capacity(parsed.len());
        for (m, k, d) in &parsed {
            guards.push((m.try_borrow_mut()?, *k, d.clone()));
        }
        let words = guards[0].0.words();
        check_ptr(trg_pointer, one_mask_bytes, words)?;
        if guards.iter().any(|(g, _, _)| g.words() != words) {
            return Err(PyValueError::new_err("Invalid buffer size"));
        }
        let mut jobs: Vec<(Job, Vec<Row>, Vec<u32>)> = guards
            .iter_mut()
            .map(|(g, k, d)| {
                let end = (*k + d.len() + 1).min(trg_batch_size);
                let rows = (*k..end)
                    .map(|r| Row((trg_pointer as *mut u32).wrapping_add(r * words), words))
                    .collect();
                (Job(&mut **g as *mut LLMatcher), rows, std::mem::take(d))
            })
            .collect();
        py.detach(|| {
            for_each_split_shared(&self.pool, &mut jobs, |(job, rows, draft)| {
                // SAFETY: the guards above hold each matcher exclusively; the rows are inside
                // the caller's checked buffer (K < batch, clipped); two matchers share a row
                // only if the caller gave overlapping rows, as in LLGuidance.
                unsafe { job.get().fill_draft(rows, draft) }
            })
        });
        drop(guards);
        Ok(())
    }
}
