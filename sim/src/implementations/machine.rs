//! The machine's faults, kept apart from the implementation's. An
//! implementation over the protocol that fails a request may have failed
//! because the file system under its state directory is full or broken:
//! a verdict must not blame it for that. So whenever a process fails, the
//! state file systems are probed (free space, and a small synced write);
//! a fault found there is recorded here, the command stops, and it exits
//! 2 saying what the machine lacks, with no verdict.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static FAULT: OnceLock<MachineFault> = OnceLock::new();

/// Why the machine, not the implementation, failed a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the file system of the implementations' state directories ({}) {why}; no verdict can be given, since the implementation would be blamed for the machine. Free some space there, or point TERN_SIM_STATE_DIR at another file system", root.display())]
pub struct MachineFault {
    pub root: PathBuf,
    pub why: String,
}

/// The machine fault met so far, if any: the first one found.
pub fn fault() -> Option<&'static MachineFault> {
    FAULT.get()
}

/// Records a fault of the machine found by tern-sim itself (a state
/// directory it could not serve), if none was found before.
pub(crate) fn record(root: &Path, why: String) {
    let _ = FAULT.set(MachineFault {
        root: root.to_owned(),
        why,
    });
}

/// Probes the file system of every state root in use, after an
/// implementation failed; records the first fault found.
pub(crate) fn probe_state_roots() {
    if FAULT.get().is_some() {
        return;
    }
    for root in super::exit_guard::registered_roots() {
        if let Err(why) = probe(&root) {
            let _ = FAULT.set(MachineFault { root, why });
            return;
        }
    }
}

/// Bytes the probe writes: a few pages, as much as a log record or two.
const PROBE_BYTES: usize = 16 * 1024;

/// Whether the file system holding `root` can take a small synced write.
fn probe(root: &Path) -> Result<(), String> {
    if !root.is_dir() {
        // The root went away with its owner: nothing to probe.
        return Ok(());
    }
    // SAFETY: statvfs fills the struct it is given; the path is a valid
    // C string for the duration of the call.
    let stat = std::ffi::CString::new(root.as_os_str().as_encoded_bytes())
        .ok()
        .and_then(|path| unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            (libc::statvfs(path.as_ptr(), &mut st) == 0).then_some(st)
        });
    if let Some(st) = stat {
        if st.f_bavail == 0 {
            return Err("is full (no block free)".to_owned());
        }
        if st.f_files > 0 && st.f_favail == 0 {
            return Err("is full (no inode free)".to_owned());
        }
    }
    let written = tempfile::Builder::new()
        .prefix(".tern-sim-probe.")
        .tempfile_in(root)
        .and_then(|mut f| {
            f.write_all(&[0u8; PROBE_BYTES])?;
            f.as_file().sync_all()
        });
    match written {
        Ok(()) => Ok(()),
        Err(e) if is_machine_error(&e) => Err(format!("cannot take a write: {e}")),
        // Anything else (a permission changed by the implementation, say)
        // is not the machine's doing.
        Err(_) => Ok(()),
    }
}

/// Errors that say the storage itself failed.
fn is_machine_error(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSPC | libc::EDQUOT | libc::EIO | libc::EROFS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_healthy_folder_passes_the_probe_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(probe(dir.path()), Ok(()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(probe(&dir.path().join("gone")), Ok(()));
    }

    #[test]
    fn only_storage_errors_are_the_machines() {
        for (errno, machine) in [
            (libc::ENOSPC, true),
            (libc::EDQUOT, true),
            (libc::EIO, true),
            (libc::EROFS, true),
            (libc::EACCES, false),
            (libc::ENOENT, false),
        ] {
            let e = std::io::Error::from_raw_os_error(errno);
            assert_eq!(is_machine_error(&e), machine, "{e}");
        }
    }
}
