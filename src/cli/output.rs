//! The one way the commands write to standard output and standard error.
//!
//! A reader that goes away (`tern-sim coverage | head`) is not an error of
//! tern-sim: the first write that meets a broken pipe marks standard output
//! closed, that write and every later one are dropped without a word, and
//! the command goes on to finish what it owes (reports, traces) and exits
//! with the status of the work it completed. Commands whose only product is
//! their output stop early by polling [`closed`], and `run`, which writes
//! nothing between its first line and its verdict, [`reader_gone`] too. Any other write failure
//! (a full disk behind a redirection) is said once on standard error and
//! makes the exit status 2. Standard error failing is ignored: there is no
//! one left to tell.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);
static FAILED: AtomicBool = AtomicBool::new(false);
static COLOR: AtomicBool = AtomicBool::new(false);
static QUIET: AtomicBool = AtomicBool::new(false);

/// Colours what is printed on standard output from now on (`--color`).
pub fn set_color(on: bool) {
    COLOR.store(on, Ordering::SeqCst);
}

/// `--quiet`: no progress display and no notes, only results and errors.
pub fn set_quiet(on: bool) {
    QUIET.store(on, Ordering::SeqCst);
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::SeqCst)
}

/// Standard output's reader has gone: printing more is pointless.
pub fn closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}

/// Standard output is a pipe whose reader has gone, seen without writing
/// to it: for work whose only product is its output, which would
/// otherwise go on for no one until its next write (`tern-sim run | head
/// -1` writes nothing between its first line and its verdict).
pub fn reader_gone() -> bool {
    #[cfg(unix)]
    {
        let mut out = libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: 0,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for the length of the call; a timeout
        // of 0 asks without waiting. A pipe's writing end reports POLLERR
        // once no reader is left (a file, a terminal or /dev/null never do).
        let ready = unsafe { libc::poll(&mut out, 1, 0) };
        ready > 0 && out.revents & libc::POLLERR != 0
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Writing standard output failed for another reason than a broken pipe.
pub fn failed() -> bool {
    FAILED.load(Ordering::SeqCst)
}

/// Notes a failed write to standard output (see the module comment).
pub fn note_error(e: &io::Error) {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CLOSED.store(true, Ordering::SeqCst);
    } else if !FAILED.swap(true, Ordering::SeqCst) {
        err(format_args!(
            "tern-sim: cannot write to standard output: {e}\n"
        ));
    }
}

/// Writes to standard output, unless it is closed.
pub fn out(args: fmt::Arguments) {
    if closed() || failed() {
        return;
    }
    let mut stdout = io::stdout().lock();
    let written = if COLOR.load(Ordering::SeqCst) {
        stdout.write_all(super::paint::paint(&args.to_string()).as_bytes())
    } else {
        stdout.write_fmt(args)
    };
    if let Err(e) = written {
        note_error(&e);
    }
}

/// Flushes standard output, noting a failure like a write's.
pub fn flush() {
    if closed() || failed() {
        return;
    }
    if let Err(e) = io::stdout().lock().flush() {
        note_error(&e);
    }
}

/// Writes to standard error, ignoring failure.
pub fn err(args: fmt::Arguments) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// `print!` that survives a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::output::out(format_args!($($arg)*)) };
}

/// `println!` that survives a closed pipe.
macro_rules! outln {
    () => { $crate::cli::output::out(format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::cli::output::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that survives a closed standard error.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::output::err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// A note on standard error that `--quiet` leaves out (timings, shrinking
/// steps); errors go through `errln!` whatever `--quiet` says.
macro_rules! noteln {
    ($($arg:tt)*) => {
        if !$crate::cli::output::quiet() {
            $crate::cli::output::err(format_args!("{}\n", format_args!($($arg)*)))
        }
    };
}
