//! Receivers that honour the contract: the reference, its mutants, the
//! adapter that runs an implementation in another process (with the
//! process plumbing it needs), and `tern-sim agent`, the reference served
//! over the protocol.

pub mod adapter;
pub mod affinity;
pub mod agent;
pub(crate) mod child_io;
pub(crate) mod child_process;
pub(crate) mod exit_guard;
pub(crate) mod file_log;
pub mod latency;
pub mod machine;
pub mod mutants;
pub(crate) mod reaper;
pub mod reference;
pub(crate) mod snapshot_file;
pub(crate) mod state_dirs;
pub(crate) mod stderr_log;
pub(crate) mod stderr_poller;

/// A mutex's guard, even if a thread panicked while holding it: the harness
/// keeps process tables, state directories and logs behind mutexes, and a
/// panic elsewhere must not stop it from killing children or cleaning up
/// (nor a display, which only draws, from drawing).
pub fn locked<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
