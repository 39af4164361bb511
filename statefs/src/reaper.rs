//! Answers held operations whose caller was killed.
//!
//! A request the FUSE thread has already read cannot be aborted by the
//! kernel: a killed caller waits, unkillable, for the answer. So once the
//! harness kills a process stopped at a crash point, this thread notices
//! (the process is gone, a zombie, or has SIGKILL pending) and answers its
//! held operations with an error, unapplied. Without it, a harness that
//! waits for the killed process before calling `power_loss` would wait
//! forever.

use std::collections::BTreeSet;
use std::fs;
use std::sync::Arc;
use std::time::Duration;

use crate::fs::Core;
use crate::state::Verdict;

/// How often a held operation's caller is looked at.
const POLL: Duration = Duration::from_millis(2);

pub(crate) fn run(core: Arc<Core>) {
    let mut st = core.lock();
    loop {
        if !st.open {
            return;
        }
        let pids = st.gate.held_pids();
        if pids.is_empty() {
            st = core
                .changed
                .wait(st)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            continue;
        }
        let dead: BTreeSet<u32> = pids.into_iter().filter(|p| killed(*p)).collect();
        if !dead.is_empty() {
            for job in st.gate.take_where(|op| dead.contains(&op.pid)) {
                job(&mut st, Verdict::Refuse);
            }
        }
        st = core
            .changed
            .wait_timeout(st, POLL)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0;
    }
}

/// Whether thread `pid` is gone, dead, or about to die of SIGKILL.
pub(crate) fn killed(pid: u32) -> bool {
    let status = match fs::read_to_string(format!("/proc/{pid}/status")) {
        Ok(s) => s,
        Err(e) => return e.kind() == std::io::ErrorKind::NotFound,
    };
    let sigkill = 1u64 << (libc::SIGKILL - 1);
    status.lines().any(|line| {
        if let Some(state) = line.strip_prefix("State:") {
            return matches!(state.trim_start().chars().next(), Some('Z' | 'X'));
        }
        let mask = line
            .strip_prefix("SigPnd:")
            .or_else(|| line.strip_prefix("ShdPnd:"));
        mask.and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & sigkill != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_process_is_not_killed_and_a_missing_one_is() {
        assert!(!killed(std::process::id()));
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(!killed(pid));
        child.kill().unwrap();
        // SIGKILL pending, then exiting, then a zombie until waited for:
        // seen as killed within moments, and for good once gone.
        let mut seen = false;
        for _ in 0..2000 {
            if killed(pid) {
                seen = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(seen);
        child.wait().unwrap();
        assert!(killed(pid));
    }
}
