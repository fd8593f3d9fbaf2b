//! Cancellation: a [`CancellationHandle`] another thread uses to stop a matcher (and the
//! compile that makes it), LLGuidance 1.9's contract.
//!
//! - A handle is `Send + Sync` and cheap to clone; every clone controls the same request,
//!   which is permanent ([`CancellationHandle::cancel`] never waits for the worker).
//! - A matcher reads it when an operation starts and, during a mask, on the parser's slow
//!   path (lexer derivatives, lexeme ends; see `earley::Parser::set_cancel`): a cancelled
//!   mask call returns [`Cancelled`] (as [`ErrorKind::Cancelled`](crate::ErrorKind)) and
//!   publishes no mask, partial or EOS-only. The matcher then stays cancelled:
//!   [`StopReason::Cancelled`](crate::StopReason), reset and rollback do not revive it.
//! - A compile given a handle ([`ParserFactory::create_matcher_cancellable`](crate::ParserFactory))
//!   reads it at each schema node, rule and lexeme (`lexer::interrupt`), and the matcher it
//!   makes keeps the handle. A compile deadline
//!   ([`ParserFactory::with_compile_deadline`](crate::ParserFactory)) is read at the same
//!   points.
//! - A clone of a matcher ([`Matcher::deep_clone`](crate::Matcher), `Clone`) gets its own
//!   state, holding the request as it was when cloned; later requests to the original do
//!   not reach it.
//! - Cooperative: work inside one step of the derivative engine finishes before the next
//!   check, and a complete mask can win a race with a request made after the last check.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A permanent cancellation request for one matcher (and its compile); see the module doc.
#[derive(Clone, Debug, Default)]
pub struct CancellationHandle(pub(crate) Arc<AtomicBool>);

impl CancellationHandle {
    /// A new handle, not cancelled.
    pub fn new() -> CancellationHandle {
        CancellationHandle::default()
    }

    /// Requests cancellation (permanent; returns at once).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// A new handle holding this one's request as it is now (for a cloned matcher).
    pub(crate) fn snapshot(&self) -> CancellationHandle {
        CancellationHandle(Arc::new(AtomicBool::new(self.is_cancelled())))
    }

    /// Whether `other` controls the same request.
    pub(crate) fn same(&self, other: &Arc<AtomicBool>) -> bool {
        Arc::ptr_eq(&self.0, other)
    }
}

/// The typed error of an operation that observed a cancellation request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("operation cancelled")
    }
}

impl std::error::Error for Cancelled {}

impl From<Cancelled> for crate::Error {
    fn from(_: Cancelled) -> crate::Error {
        crate::Error::new(crate::ErrorKind::Cancelled, Cancelled.to_string())
    }
}

/// A matcher's cancellation state: cloning it takes a snapshot (a clone of a matcher has a
/// state of its own).
#[derive(Debug, Default)]
pub(crate) struct CancelSlot(pub(crate) Option<CancellationHandle>);

impl Clone for CancelSlot {
    fn clone(&self) -> CancelSlot {
        CancelSlot(self.0.as_ref().map(CancellationHandle::snapshot))
    }
}

impl CancelSlot {
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(CancellationHandle::is_cancelled)
    }
}
