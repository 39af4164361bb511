//! Which mounts this process sees, from `/proc/self/mountinfo`: so that an
//! unmount only ever removes a tern-statefs mount, never whatever else is
//! mounted at the same place.

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// The name tern-statefs mounts carry: the source of a direct mount (type
/// `fuse`), the subtype of one made by fusermount (type `fuse.` and it).
pub(crate) const NAME: &str = "tern-statefs";

/// One line of the table.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// `major:minor` of the mounted file system: tells two mounts at one
    /// place apart.
    pub(crate) dev: String,
    pub(crate) mountpoint: PathBuf,
    pub(crate) fstype: String,
    pub(crate) source: String,
}

impl Entry {
    pub(crate) fn is_ours(&self) -> bool {
        self.fstype == format!("fuse.{NAME}") || (self.fstype == "fuse" && self.source == NAME)
    }
}

/// Parses the table; lines it cannot read are skipped.
pub(crate) fn parse(table: &str) -> Vec<Entry> {
    table
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let dash = fields.iter().position(|f| *f == "-")?;
            Some(Entry {
                dev: fields.get(2)?.to_string(),
                mountpoint: unescape(fields.get(4)?),
                fstype: fields.get(dash + 1)?.to_string(),
                source: fields.get(dash + 2)?.to_string(),
            })
        })
        .collect()
}

/// The kernel writes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> PathBuf {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

/// The device of the topmost tern-statefs mount at `path`, if any.
pub(crate) fn ours_at(path: &Path) -> Option<String> {
    let table = fs::read_to_string("/proc/self/mountinfo").ok()?;
    parse(&table)
        .into_iter()
        .rev()
        .find(|e| e.mountpoint == path)
        .filter(Entry::is_ours)
        .map(|e| e.dev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_and_undoes_the_escapes() {
        let table =
            "36 35 98:0 / /mnt/a\\040b rw,noatime master:1 - fuse.tern-statefs tern-statefs rw\n\
                     37 35 98:1 / /x rw - ext4 /dev/sda rw\n\
                     38 35 0:52 / /y rw - fuse tern-statefs rw\n\
                     39 35 0:53 / /z rw - fuse other rw\n";
        let entries = parse(table);
        assert_eq!(
            entries[0],
            Entry {
                dev: "98:0".into(),
                mountpoint: PathBuf::from("/mnt/a b"),
                fstype: "fuse.tern-statefs".into(),
                source: "tern-statefs".into(),
            }
        );
        let ours: Vec<bool> = entries.iter().map(Entry::is_ours).collect();
        assert_eq!(ours, [true, false, true, false]);
    }
}
