//! Whether FUSE can be used here, asked before a harness plans on power
//! losses: it falls back to plain crashes (SIGKILL) when the answer is no.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Set to a reason (any non-empty text) to make [`probe`] and
/// [`crate::mount`] refuse with that reason, as if FUSE were missing: a
/// test of the fallback needs no machine without FUSE.
pub const NO_FUSE_ENV: &str = "TERN_SIM_NO_FUSE";

/// FUSE cannot be used, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("FUSE is unavailable: {reason}")]
pub struct Unavailable {
    /// A sentence for the user: what was missing or refused.
    pub reason: String,
}

impl Unavailable {
    /// An `Unavailable` with this reason.
    pub fn new(reason: impl Into<String>) -> Unavailable {
        Unavailable {
            reason: reason.into(),
        }
    }

    /// The refusal [`NO_FUSE_ENV`] asks for, if it is set and not empty.
    pub fn from_env() -> Option<Unavailable> {
        Unavailable::from_env_value(std::env::var_os(NO_FUSE_ENV))
    }

    /// [`Unavailable::from_env`] for a given value of the variable.
    pub fn from_env_value(value: Option<OsString>) -> Option<Unavailable> {
        let value = value?;
        let reason = value.to_string_lossy().trim().to_owned();
        (!reason.is_empty()).then(|| Unavailable::new(reason))
    }
}

/// Whether FUSE works here: [`NO_FUSE_ENV`] is not set, `/dev/fuse`
/// opens (it is missing in many containers, and only root may open it on
/// some systems), and a scratch folder mounts (as root, or through
/// fusermount3), answers a write and a read, and unmounts. Nothing stays
/// mounted. (The crate builds only on Linux, like the rest of tern-sim.)
pub fn probe() -> Result<(), Unavailable> {
    if let Some(refused) = Unavailable::from_env() {
        return Err(refused);
    }
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .map_err(|e| Unavailable::new(format!("/dev/fuse: {e}")))?;
    let base = scratch().map_err(|e| Unavailable::new(format!("a scratch folder: {e}")))?;
    let result = round_trip(&base);
    remove_scratch(&base);
    result
}

/// A new folder under the temporary directory.
fn scratch() -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("tern-statefs-probe-{}-{n}", std::process::id()));
        match fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn round_trip(base: &Path) -> Result<(), Unavailable> {
    let (backing, mnt) = (base.join("backing"), base.join("mnt"));
    for dir in [&backing, &mnt] {
        fs::create_dir(dir).map_err(|e| Unavailable::new(format!("{}: {e}", dir.display())))?;
    }
    let mounted = crate::mount(&backing, &mnt).map_err(|e| Unavailable::new(e.to_string()))?;
    let file = mnt.join("probe");
    let answered = fs::write(&file, b"tern")
        .and_then(|()| fs::read(&file))
        .map_err(|e| Unavailable::new(format!("a file on the mount: {e}")));
    let unmounted = mounted
        .unmount()
        .map_err(|e| Unavailable::new(e.to_string()));
    match answered? {
        bytes if bytes == b"tern" => unmounted,
        _ => Err(Unavailable::new("a file on the mount read back wrong")),
    }
}

/// Removes the scratch folder, unless something is still mounted in it
/// (then deleting would reach through the mount).
fn remove_scratch(base: &Path) {
    use std::os::unix::fs::MetadataExt;
    let dev = |p: &Path| fs::symlink_metadata(p).map(|m| m.dev()).ok();
    if dev(base).is_some() && dev(base) == dev(&base.join("mnt")) {
        let _ = fs::remove_dir_all(base);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_gives_the_reason() {
        assert_eq!(Unavailable::from_env_value(None), None);
        assert_eq!(Unavailable::from_env_value(Some("".into())), None);
        assert_eq!(
            Unavailable::from_env_value(Some("no FUSE in CI".into())),
            Some(Unavailable::new("no FUSE in CI"))
        );
    }
}
