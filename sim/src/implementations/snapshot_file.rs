//! `tern-agent.snapshot`, the file in which `tern-sim agent` keeps a
//! snapshot of its state beside its log (docs/protocol.md section 7), so
//! that a start reads its state instead of replaying its whole history.
//!
//! The file is written whole to `tern-agent.snapshot.new`, synced, renamed
//! into place and the directory synced ([`super::file_log::FileLog`]), so
//! the name always holds a whole snapshot, the old one or the new one. The
//! format still lets a reader tell a whole file from anything else (a
//! durability bug that renamed it unsynced, a power loss that kept a torn
//! prefix): a magic line, the number of log records the snapshot covers,
//! the length of what follows, the receiver's bytes, and a checksum of
//! everything before it. A file that fails any of these is not used.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::contract::plugin::ImplError;
use crate::contract::storage::StoredSnapshot;

pub(crate) const SNAPSHOT_NAME: &str = "tern-agent.snapshot";
pub(crate) const NEW_SNAPSHOT_NAME: &str = "tern-agent.snapshot.new";

/// The first bytes of a snapshot file, format included.
const MAGIC: &[u8] = b"tern-agent snapshot 1\n";

/// Magic, records covered, length of the receiver's bytes.
const HEAD: usize = MAGIC.len() + 16;

/// A 64-bit checksum of `bytes`, eight bytes at a time: a snapshot is
/// read at every start, so its check must cost little beside reading it.
/// It tells a whole file from a torn or damaged one; it is no defence
/// against anyone who means harm (nothing in a state directory is).
pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = 0x9e37_79b9_7f4a_7c15 ^ (bytes.len() as u64);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(a)).wrapping_mul(K);
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h.rotate_left(5) ^ u64::from_le_bytes(last)).wrapping_mul(K);
    h ^ (h >> 29)
}

/// The whole file for a snapshot of `records` records holding `payload`.
pub(crate) fn encode(records: usize, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEAD + payload.len() + 8);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(records as u64).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let mut a = [0u8; 8];
    a.copy_from_slice(bytes.get(at..at + 8)?);
    Some(u64::from_le_bytes(a))
}

/// The snapshot in a file's bytes, or why they are not a whole one.
pub(crate) fn decode(mut bytes: Vec<u8>, source: &Path) -> Result<StoredSnapshot, String> {
    if bytes.is_empty() {
        return Err("it is empty".into());
    }
    if !bytes.starts_with(MAGIC) {
        return Err(if MAGIC.starts_with(&bytes) {
            format!("it ends after {} bytes, in its header", bytes.len())
        } else {
            "it does not begin as a snapshot does".into()
        });
    }
    let (Some(records), Some(len)) = (u64_at(&bytes, MAGIC.len()), u64_at(&bytes, MAGIC.len() + 8))
    else {
        return Err(format!(
            "it ends after {} bytes, in its header",
            bytes.len()
        ));
    };
    let whole = usize::try_from(len)
        .ok()
        .and_then(|len| len.checked_add(HEAD + 8));
    if whole != Some(bytes.len()) {
        return Err(format!(
            "it holds {} bytes where its header announces {}",
            bytes.len(),
            len.saturating_add((HEAD + 8) as u64)
        ));
    }
    let end = bytes.len() - 8;
    if u64_at(&bytes, end) != Some(checksum(&bytes[..end])) {
        return Err("its checksum does not match its bytes".into());
    }
    let records = usize::try_from(records).map_err(|_| "it covers too many records".to_owned())?;
    bytes.truncate(end);
    bytes.drain(..HEAD);
    Ok(StoredSnapshot {
        records,
        bytes,
        source: source.display().to_string(),
    })
}

/// What a start finds at `path`.
pub(crate) enum Found {
    /// No snapshot file: no snapshot was ever made durable.
    Absent,
    /// A file that is not a whole snapshot, and why.
    Unusable(String),
    Whole(StoredSnapshot),
}

/// Reads the snapshot file at `path`.
pub(crate) fn read(path: &Path) -> Result<Found, ImplError> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes).map_err(|e| {
                ImplError::Misbehaved(format!("cannot read {}: {e}", path.display()))
            })?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Absent),
        Err(e) => {
            return Err(ImplError::Misbehaved(format!(
                "cannot open {}: {e}",
                path.display()
            )))
        }
    }
    Ok(match decode(bytes, path) {
        Ok(s) => Found::Whole(s),
        Err(why) => Found::Unusable(why),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_file_round_trips() {
        for payload in [&b""[..], b"x", b"twelve bytes", &[7u8; 1000]] {
            let file = encode(42, payload);
            let back = decode(file, Path::new("s")).unwrap();
            assert_eq!(back.records, 42);
            assert_eq!(back.bytes, payload);
        }
    }

    /// Every prefix of a snapshot file (what a power loss can keep of one
    /// renamed before it was synced) and every file with one byte changed
    /// is refused, with a reason.
    #[test]
    fn a_torn_or_damaged_snapshot_file_is_refused() {
        let file = encode(7, b"the state of a receiver, in its own bytes");
        for cut in 0..file.len() {
            let why = decode(file[..cut].to_vec(), Path::new("s")).unwrap_err();
            assert!(!why.is_empty(), "{cut}");
        }
        for at in 0..file.len() {
            let mut changed = file.clone();
            changed[at] ^= 0x10;
            assert!(
                decode(changed, Path::new("s")).is_err(),
                "byte {at} changed"
            );
        }
        let mut longer = file.clone();
        longer.push(0);
        assert!(decode(longer, Path::new("s")).is_err());
        assert!(decode(b"something else entirely".to_vec(), Path::new("s"))
            .unwrap_err()
            .contains("does not begin"));
    }

    #[test]
    fn reading_a_missing_file_finds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SNAPSHOT_NAME);
        assert!(matches!(read(&path).unwrap(), Found::Absent));
        std::fs::write(&path, &encode(3, b"abc")[..10]).unwrap();
        assert!(matches!(read(&path).unwrap(), Found::Unusable(_)));
        std::fs::write(&path, encode(3, b"abc")).unwrap();
        match read(&path).unwrap() {
            Found::Whole(s) => assert_eq!((s.records, s.bytes.as_slice()), (3, &b"abc"[..])),
            _ => panic!("a whole snapshot"),
        }
    }
}
