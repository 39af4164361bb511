//! What a subprocess implementation writes on stderr, kept whole (up to a
//! bound) for the failure it explains.
//!
//! A verdict quotes the last lines of stderr, which is rarely enough to
//! understand a failure: the trouble often starts in an earlier process of
//! the same case, or long before the last lines. So every process started
//! on a thread writes into that thread's log, and the corpus player and
//! the simulation take the log after a failing case or run: certify puts
//! it in a file of the report folder. A worker thread plays one case or
//! run at a time, so a thread's log is that case's, whatever `--jobs` is.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

/// The most bytes one log keeps; the rest is counted and said.
pub const LOG_BYTES: usize = 1 << 20;

/// One thread's stderr, from every process started on it since it was
/// last taken.
#[derive(Debug, Default)]
pub struct StderrLog {
    bytes: Vec<u8>,
    cut: usize,
}

impl StderrLog {
    pub fn push(&mut self, chunk: &[u8]) {
        let room = LOG_BYTES.saturating_sub(self.bytes.len());
        let kept = chunk.len().min(room);
        self.bytes.extend_from_slice(&chunk[..kept]);
        self.cut += chunk.len() - kept;
    }

    /// Everything kept, and a last line saying how much was not.
    fn take(&mut self) -> Vec<u8> {
        let mut bytes = std::mem::take(&mut self.bytes);
        if self.cut > 0 {
            if !bytes.ends_with(b"\n") && !bytes.is_empty() {
                bytes.push(b'\n');
            }
            bytes.extend_from_slice(
                format!(
                    "[tern-sim] {} more bytes of stderr left out (the log keeps {} bytes)\n",
                    self.cut, LOG_BYTES
                )
                .as_bytes(),
            );
            self.cut = 0;
        }
        bytes
    }
}

/// The log of each thread that starts processes.
#[derive(Debug, Default)]
pub struct ThreadLogs {
    logs: Mutex<HashMap<ThreadId, Arc<Mutex<StderrLog>>>>,
}

impl ThreadLogs {
    /// The calling thread's log, for a process it starts.
    pub fn for_this_thread(&self) -> Arc<Mutex<StderrLog>> {
        let mut logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
        logs.entry(std::thread::current().id()).or_default().clone()
    }

    /// Takes what the calling thread's processes wrote since last time.
    pub fn take(&self) -> Vec<u8> {
        let log = self.for_this_thread();
        let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
        log.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_keeps_its_bound_and_says_what_it_left_out() {
        let mut log = StderrLog::default();
        log.push(b"first\n");
        log.push(&vec![b'x'; LOG_BYTES]);
        let taken = log.take();
        assert!(taken.starts_with(b"first\n"));
        let text = String::from_utf8_lossy(&taken);
        assert!(
            text.ends_with(
                "[tern-sim] 6 more bytes of stderr left out (the log keeps 1048576 bytes)\n"
            ),
            "{}",
            &text[text.len() - 100..]
        );
        assert!(log.take().is_empty(), "taken means emptied");
    }

    #[test]
    fn each_thread_has_its_own_log() {
        let logs = ThreadLogs::default();
        logs.for_this_thread().lock().unwrap().push(b"main");
        std::thread::scope(|s| {
            s.spawn(|| {
                logs.for_this_thread().lock().unwrap().push(b"worker");
                assert_eq!(logs.take(), b"worker");
            });
        });
        assert_eq!(logs.take(), b"main");
    }
}
