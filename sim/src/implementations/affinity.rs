//! A home core for each thread that talks to implementation processes.
//!
//! Over the protocol every operation is a round trip: the harness writes a
//! request and sleeps, the process wakes, answers and sleeps. When the two
//! sit on different cores, each wake-up is an interrupt sent across cores,
//! which on a virtual machine costs more than the work it wakes. A harness
//! thread and the processes it starts therefore share one core: the thread
//! is bound to it the first time it starts a process, and a process
//! inherits its starter's binding. Threads are given the cores this
//! process may use in turn, so the workers of a batch spread over them.
//!
//! Binding only places work; it changes no result. Where the system
//! refuses it, or `TERN_SIM_NO_AFFINITY` is set (on a machine shared with
//! other busy work, a bound thread cannot move off a loaded core), nothing
//! is bound and everything runs as before.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The cores the calling thread may run on; empty when the system does
/// not say.
fn bound_to() -> Vec<usize> {
    // SAFETY: `set` is a plain bit set that `sched_getaffinity` fills; the
    // size given is its own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

/// The cores this process could use before any thread was bound, read
/// once: a thread started by a bound thread inherits its binding, so a
/// later reading would see one core.
fn allowed() -> &'static [usize] {
    static ALLOWED: OnceLock<Vec<usize>> = OnceLock::new();
    ALLOWED.get_or_init(bound_to)
}

/// Whether `TERN_SIM_NO_AFFINITY` asks for no binding (any value but
/// empty).
fn unbound_by_request() -> bool {
    std::env::var_os("TERN_SIM_NO_AFFINITY").is_some_and(|v| !v.is_empty())
}

/// Binds the calling thread to `cpu`. False when the system refuses.
fn bind(cpu: usize) -> bool {
    // SAFETY: a plain bit set, written within by `CPU_SET`; the size given
    // is its own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

thread_local! {
    /// `None`: not chosen yet; `Some(None)`: nothing to bind to.
    static HOME: Cell<Option<Option<usize>>> = const { Cell::new(None) };
}

/// The core the `turn`th thread gets: each in turn, none when there is
/// no choice to make.
fn in_turn(cores: &[usize], turn: usize) -> Option<usize> {
    (cores.len() > 1).then(|| cores[turn % cores.len()])
}

/// The calling thread's home core, bound on the first call. `None` on the
/// main thread, when there is a single core to use (nothing to choose), or
/// when binding failed or was declined.
pub fn home() -> Option<usize> {
    HOME.with(|home| {
        if let Some(chosen) = home.get() {
            return chosen;
        }
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        // The main thread is never bound: every thread it starts later
        // would inherit the binding, and the in-process work of those
        // (an exploration after the corpus, say) would share one core.
        let main = std::thread::current().name() == Some("main");
        let chosen = if main || unbound_by_request() {
            None
        } else {
            in_turn(allowed(), NEXT.fetch_add(1, Ordering::Relaxed)).filter(|&cpu| bind(cpu))
        };
        home.set(Some(chosen));
        chosen
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_take_the_cores_in_turn() {
        assert_eq!(in_turn(&[3], 0), None);
        assert_eq!(in_turn(&[], 5), None);
        let turns: Vec<_> = (0..5).map(|t| in_turn(&[0, 2, 5], t)).collect();
        assert_eq!(turns, [Some(0), Some(2), Some(5), Some(0), Some(2)]);
    }

    #[test]
    fn the_main_thread_is_never_bound() {
        let before = bound_to();
        let (home, after) = std::thread::Builder::new()
            .name("main".into())
            .spawn(|| (home(), bound_to()))
            .expect("thread")
            .join()
            .expect("thread");
        assert_eq!(home, None);
        assert_eq!(after, before, "it keeps the binding it was started with");
    }

    #[test]
    fn a_thread_is_bound_to_its_home() {
        let cores = allowed().to_vec();
        let homes: Vec<(Option<usize>, Vec<usize>)> = (0..cores.len().max(2) * 2)
            .map(|_| {
                std::thread::spawn(|| {
                    let first = home();
                    // Asked again, the same core, without binding anew.
                    assert_eq!(home(), first);
                    (first, bound_to())
                })
                .join()
                .expect("thread")
            })
            .collect();
        if cores.len() < 2 {
            assert!(homes.iter().all(|(h, _)| h.is_none()));
            return;
        }
        for (home, bound) in &homes {
            let home = home.expect("a core to bind to");
            assert!(cores.contains(&home));
            assert_eq!(bound, &vec![home]);
        }
    }
}
