//! What tern-sim owes the machine when it stops: no implementation process
//! left running, and no state directory left behind, on every way out.
//!
//! A normal exit runs an `atexit` hook. SIGINT, SIGTERM and SIGHUP are
//! caught by a handler that only writes the signal's number into a pipe; a
//! dedicated thread reads it and does the work a handler may not do
//! (scanning `/proc`, removing trees, taking locks): it kills every
//! descendant of tern-sim ([`reaper::kill_all`]), removes every registered
//! state root, and exits with 128 plus the signal. After
//! [`defer_interrupts`], the first signal only kills the children and is
//! remembered for [`interrupted`], so that the caller can finish what it
//! owes (a report). Signals come in pairs more often than people send
//! them: GNU `timeout`, and a terminal's Ctrl-C, signal the process and
//! then its group, so a second signal within [`SAME_INTERRUPT`] of the
//! first is the same interrupt. A later second signal, or a third, exits
//! at once.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

use crate::implementations::reaper;

/// State roots to remove at exit, whatever the way out.
static ROOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

static DEFER: AtomicBool = AtomicBool::new(false);
static INTERRUPTED: AtomicI32 = AtomicI32::new(0);
/// The write end of the self-pipe, for the handler.
static PIPE_W: AtomicI32 = AtomicI32::new(-1);

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// How close behind the first a second signal must come to be taken as
/// the same interrupt: far longer than the milliseconds between a
/// process's signal and its group's, and shorter than a person's second
/// Ctrl-C when the first seems not to work.
pub const SAME_INTERRUPT: std::time::Duration = std::time::Duration::from_millis(500);

fn roots() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    super::locked(&ROOTS)
}

/// Removes `root` (recursively) at exit unless [`forget_root`] comes first.
pub fn register_root(root: &Path) {
    install();
    roots().push(root.to_owned());
}

/// The state roots in use now.
pub fn registered_roots() -> Vec<PathBuf> {
    roots().clone()
}

/// The root was removed by its owner.
pub fn forget_root(root: &Path) {
    roots().retain(|r| r != root);
}

/// From now on, Ctrl-C, SIGTERM and SIGHUP kill every child and are
/// reported by [`interrupted`] rather than ending the process at once; a
/// second signal still ends it.
pub fn defer_interrupts() {
    DEFER.store(true, Ordering::SeqCst);
    install();
}

/// The signal received since [`defer_interrupts`], if any.
pub fn interrupted() -> Option<i32> {
    match INTERRUPTED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    // SAFETY: only async-signal-safe calls (an atomic, write) here, and errno
    // is restored for the interrupted code.
    unsafe {
        let errno = *libc::__errno_location();
        let _ = INTERRUPTED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        let fd = PIPE_W.load(Ordering::SeqCst);
        if fd >= 0 {
            let byte = signal as u8;
            libc::write(fd, (&byte as *const u8).cast(), 1);
        } else {
            libc::_exit(128 + signal);
        }
        *libc::__errno_location() = errno;
    }
}

extern "C" fn at_exit() {
    // Never unwind out of an atexit hook.
    let _ = std::panic::catch_unwind(|| {
        reaper::kill_all_and_stop_spawning();
        remove_roots();
    });
}

fn remove_roots() {
    let all: Vec<PathBuf> = roots().drain(..).collect();
    for root in all {
        // The power-loss state directories: detached first, so that the
        // removal neither walks into a live mount nor leaves a dead one.
        tern_statefs::detach_all_under(&root);
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// The thread that acts on signals.
fn watch(read: libc::c_int) {
    let mut seen = 0u32;
    let mut first: Option<std::time::Instant> = None;
    loop {
        let mut byte = 0u8;
        // SAFETY: reading one byte into a local buffer from our own pipe.
        let n = unsafe { libc::read(read, (&mut byte as *mut u8).cast(), 1) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return;
        }
        seen += 1;
        let signal = libc::c_int::from(byte);
        if DEFER.load(Ordering::SeqCst) {
            let echo = seen == 2 && first.is_some_and(|at| at.elapsed() < SAME_INTERRUPT);
            if seen == 1 || echo {
                first.get_or_insert_with(std::time::Instant::now);
                reaper::kill_all();
                continue;
            }
        }
        reaper::kill_all_and_stop_spawning();
        remove_roots();
        // SAFETY: ends the process without running the atexit hook again
        // (its work is done) or unwinding other threads' stacks.
        unsafe { libc::_exit(128 + signal) }
    }
}

/// Installs the handlers, the thread and the exit hook, once; called before
/// the first state root is made and the first child starts.
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 fills two fds; both are close-on-exec so no child
        // inherits them.
        let piped = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0;
        if piped {
            let read = fds[0];
            let spawned = std::thread::Builder::new()
                .name("tern-sim-signals".into())
                .spawn(move || watch(read))
                .is_ok();
            if spawned {
                PIPE_W.store(fds[1], Ordering::SeqCst);
            }
        }
        // SAFETY: the handler is async-signal-safe (see on_signal); the
        // atexit hook is a plain function.
        unsafe {
            for signal in SIGNALS {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
            libc::atexit(at_exit);
        }
    });
}
