//! `tern-sim agent`'s durable storage: a log of records in its state
//! directory, and beside it a snapshot of the receiver's state, so that a
//! start replays only the records the snapshot does not cover
//! (docs/protocol.md section 7 says why each step is crash-safe).

use std::cell::{Cell, RefCell};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::contract::plugin::ImplError;
use crate::contract::storage::{Durable, StoredSnapshot};
use crate::implementations::snapshot_file::{self, Found, NEW_SNAPSHOT_NAME, SNAPSHOT_NAME};

/// A way `tern-sim agent --mutant` gets its log's durability wrong. Each
/// survives every SIGKILL (the kernel keeps what was written), and loses
/// what it answered when the power goes: only a power-loss state directory
/// (docs/statefs.md) tells it from the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFlaw {
    /// Never syncs: not the log, not its directory, not its snapshot.
    SkipsFsync,
    /// Syncs its log's data but never its directory, so the log's name
    /// (made at the first record, and again when a restart writes the log
    /// afresh) is never durable.
    SkipsDirFsync,
    /// When a restart writes the log afresh, renames the new file over
    /// the old one without syncing it first: the name can be durable before
    /// the data it names.
    RenamesUnsynced,
    /// Syncs at every second sync only: half its answers are given before
    /// their records are durable.
    SyncsEverySecond,
    /// Renames a new snapshot into place without syncing it first, then
    /// drops from the log the records it covers: after a power loss the
    /// snapshot is torn and nothing holds those records.
    RenamesSnapshotUnsynced,
}

/// The log's name in the state directory, and the name its rewrite is
/// written under before it is renamed into place.
const LOG_NAME: &str = "tern-agent.log";
const NEW_LOG_NAME: &str = "tern-agent.log.new";

/// How often a start keeps a snapshot: once it replayed this many records
/// that no snapshot covered. A start then reads the snapshot and replays
/// at most about this many records (plus what one process appended),
/// whatever the history, and a snapshot costs writing the whole state once
/// per this many records. The runs of `run` and `certify` at their default
/// length (200 steps) leave at most about 130 records in an agent's log,
/// so they never reach it, and their file operations, crash points and
/// outputs stay those of the log alone.
pub const SNAPSHOT_AFTER: usize = 256;

/// The first record of a log whose first records a snapshot holds: the
/// tag (a byte no record of a receiver begins with), then the number of
/// the log's first record, little-endian. A log without it begins at
/// record 0, as every log did before snapshots.
const BASE_TAG: &[u8] = b"\xfftern-agent log, first record ";

fn base_record(base: usize) -> Vec<u8> {
    let mut r = BASE_TAG.to_vec();
    r.extend_from_slice(&(base as u64).to_le_bytes());
    r
}

fn base_of(record: &[u8]) -> Option<usize> {
    let n = record.strip_prefix(BASE_TAG)?;
    let a: [u8; 8] = n.try_into().ok()?;
    usize::try_from(u64::from_le_bytes(a)).ok()
}

/// An append-only log file of length-prefixed records, in the state
/// directory, and the snapshot beside it. A record is durable once `sync`
/// has written it and the file's data reached the disk; a record that does
/// not end (a crash mid-write, or a power loss that kept part of an
/// unsynced write) is ignored.
///
/// Each record is written as two writes, its length and then its body,
/// and the file is synced after the last: a crash can then fall between
/// two writes of one request, which is where a torn record comes from. A
/// new log file's name is made durable by syncing the directory. After a
/// crash, the start writes the whole records it read to a new file, syncs
/// it, renames it over the log and syncs the directory, so that what the
/// crash left past the last whole record is gone for good and no append
/// ever follows it.
///
/// Records are numbered from the first ever written. A snapshot says how
/// many it covers; the log then holds only the records after those, and
/// says in its first record where it begins.
pub struct FileLog {
    dir: PathBuf,
    path: PathBuf,
    pending: RefCell<Vec<Vec<u8>>>,
    /// Opened for appending at the first sync and kept: a sync then costs
    /// the writes and a `fdatasync`, not an `open` and a `close` as well.
    file: RefCell<Option<File>>,
    /// The records read at the start, for the recovery to take.
    loaded: RefCell<Option<Vec<Vec<u8>>>>,
    /// The number of the log's first record: how many records the
    /// snapshot it was begun after covers.
    base: Cell<usize>,
    /// How many records were written in all, those of earlier logs
    /// included: the next record's number.
    written: Cell<usize>,
    /// The snapshot read at the start, until the recovery takes it.
    snapshot: RefCell<Option<StoredSnapshot>>,
    snapshot_after: Option<usize>,
    flaw: Option<LogFlaw>,
    /// Syncs asked so far (for [`LogFlaw::SyncsEverySecond`]).
    syncs: Cell<u64>,
}

fn io_error(what: &str, path: &Path, e: io::Error) -> ImplError {
    ImplError::Misbehaved(format!("{what} {}: {e}", path.display()))
}

impl FileLog {
    /// The log of the state directory `dir` and its snapshot, read, and
    /// the log written afresh if a crash left one there. A snapshot is
    /// kept after `snapshot_after` records (`None`: never).
    pub fn open(
        dir: PathBuf,
        flaw: Option<LogFlaw>,
        snapshot_after: Option<usize>,
    ) -> Result<FileLog, ImplError> {
        let path = dir.join(LOG_NAME);
        let (mut records, had_bytes) = read_log(&path)?;
        let base = match records.first().and_then(|r| base_of(r)) {
            Some(base) => {
                records.remove(0);
                base
            }
            None => 0,
        };
        let snapshot_path = dir.join(SNAPSHOT_NAME);
        let snapshot = match snapshot_file::read(&snapshot_path)? {
            Found::Whole(s) if s.records >= base => Some(s),
            Found::Whole(s) => {
                return Err(ImplError::Misbehaved(format!(
                    "{} begins at record {base}, but {} covers only {} records",
                    path.display(),
                    snapshot_path.display(),
                    s.records
                )))
            }
            found if base > 0 => {
                let why = match found {
                    Found::Unusable(why) => format!("is not a whole snapshot: {why}"),
                    _ => "does not exist".into(),
                };
                return Err(ImplError::Misbehaved(format!(
                    "{} begins at record {base}, and {} {why}: nothing holds the records before it",
                    path.display(),
                    snapshot_path.display()
                )));
            }
            // A snapshot never made durable, or torn: the log holds every
            // record from the first.
            _ => None,
        };
        // The log goes on from the snapshot. It may still hold records the
        // snapshot covers (a crash after the snapshot was durable, before
        // the log was begun again): they are dropped, and the log is
        // written afresh beginning after the snapshot.
        let start = snapshot.as_ref().map_or(base, |s| s.records);
        records.drain(..(start - base).min(records.len()));
        let log = FileLog {
            written: Cell::new(start + records.len()),
            dir,
            path,
            pending: RefCell::new(Vec::new()),
            file: RefCell::new(None),
            loaded: RefCell::new(Some(records)),
            base: Cell::new(start),
            snapshot: RefCell::new(snapshot),
            snapshot_after,
            flaw,
            syncs: Cell::new(0),
        };
        if had_bytes || start != base {
            let records = log.loaded.borrow();
            log.write_afresh(start, records.iter().flatten())?;
        }
        Ok(log)
    }

    /// Replaces the log by one that begins at record `base` and holds
    /// exactly `records`: written to a new file, synced, renamed into
    /// place, and the directory synced. The file kept for appending, if
    /// any, is the old log's: it is let go.
    fn write_afresh<'r>(
        &self,
        base: usize,
        records: impl Iterator<Item = &'r Vec<u8>>,
    ) -> Result<(), ImplError> {
        let mut bytes = Vec::new();
        let mut put = |r: &[u8]| {
            bytes.extend_from_slice(&(r.len() as u32).to_le_bytes());
            bytes.extend_from_slice(r);
        };
        if base > 0 {
            put(&base_record(base));
        }
        for r in records {
            put(r);
        }
        let unsynced = matches!(
            self.flaw,
            Some(LogFlaw::SkipsFsync | LogFlaw::RenamesUnsynced)
        );
        self.replace(NEW_LOG_NAME, LOG_NAME, &bytes, unsynced)?;
        *self.file.borrow_mut() = None;
        Ok(())
    }

    /// Puts `bytes` in place as the file `name`: written to `new`, synced
    /// (unless `unsynced`), renamed over `name`, and the directory synced.
    /// At any crash, `name` holds either its old bytes or all of these.
    fn replace(
        &self,
        new: &str,
        name: &str,
        bytes: &[u8],
        unsynced: bool,
    ) -> Result<(), ImplError> {
        let new = self.dir.join(new);
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&new)
            .map_err(|e| io_error("cannot make", &new, e))?;
        file.write_all(bytes)
            .map_err(|e| io_error("cannot write", &new, e))?;
        if !unsynced {
            file.sync_data()
                .map_err(|e| io_error("cannot sync", &new, e))?;
        }
        let path = self.dir.join(name);
        std::fs::rename(&new, &path).map_err(|e| io_error("cannot rename into", &path, e))?;
        self.sync_dir()
    }

    /// Makes the directory's entries durable (unless the flaw skips it).
    fn sync_dir(&self) -> Result<(), ImplError> {
        if matches!(
            self.flaw,
            Some(LogFlaw::SkipsFsync | LogFlaw::SkipsDirFsync)
        ) {
            return Ok(());
        }
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_error("cannot sync the state directory", &self.dir, e))
    }
}

/// The whole records of the log at `path`, and whether it held any byte.
fn read_log(path: &Path) -> Result<(Vec<Vec<u8>>, bool), ImplError> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes)
                .map_err(|e| io_error("cannot read", path, e))?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), false)),
        Err(e) => return Err(io_error("cannot open", path, e)),
    }
    let mut out = Vec::new();
    let mut rest = bytes.as_slice();
    while rest.len() >= 4 {
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let Some(record) = rest.get(4..4 + len) else {
            break;
        };
        out.push(record.to_vec());
        rest = &rest[4 + len..];
    }
    Ok((out, !bytes.is_empty()))
}

impl Durable for FileLog {
    fn append(&self, record: Vec<u8>) -> Result<(), ImplError> {
        self.pending.borrow_mut().push(record);
        Ok(())
    }

    fn sync(&self) -> Result<(), ImplError> {
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        if pending.is_empty() {
            return Ok(());
        }
        let mut held = self.file.borrow_mut();
        // The first sync of a process also syncs the directory, whether
        // this process made the log or found it: an earlier process may
        // have made it and been killed before its name was durable, and a
        // power loss would then take the log with everything synced into
        // it since.
        let first = held.is_none();
        let file = match &mut *held {
            Some(file) => file,
            None => {
                let opened = match OpenOptions::new().append(true).open(&self.path) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => OpenOptions::new()
                        .create_new(true)
                        .append(true)
                        .open(&self.path),
                    other => other,
                };
                held.insert(opened.map_err(|e| io_error("cannot open", &self.path, e))?)
            }
        };
        for r in &pending {
            file.write_all(&(r.len() as u32).to_le_bytes())
                .and_then(|()| file.write_all(r))
                .map_err(|e| io_error("cannot write", &self.path, e))?;
        }
        self.written.set(self.written.get() + pending.len());
        self.syncs.set(self.syncs.get() + 1);
        let skip = match self.flaw {
            Some(LogFlaw::SkipsFsync) => true,
            Some(LogFlaw::SyncsEverySecond) => self.syncs.get() % 2 == 1,
            _ => false,
        };
        if !skip {
            file.sync_data()
                .map_err(|e| io_error("cannot sync", &self.path, e))?;
        }
        drop(held);
        if first {
            // The log's name, durable.
            self.sync_dir()?;
        }
        Ok(())
    }

    fn records(&self) -> Result<Vec<Vec<u8>>, ImplError> {
        if let Some(records) = self.loaded.borrow_mut().take() {
            return Ok(records);
        }
        let (mut records, _) = read_log(&self.path)?;
        if records.first().and_then(|r| base_of(r)).is_some() {
            records.remove(0);
        }
        Ok(records)
    }

    /// The records from the `from`-th on, counted from the first ever
    /// written; those a snapshot covers are no longer in the log.
    fn records_from(&self, from: usize) -> Result<Vec<Vec<u8>>, ImplError> {
        let base = self.base.get();
        if from < base {
            return Err(ImplError::Misbehaved(format!(
                "{} begins at record {base}; record {from} is only in a snapshot",
                self.path.display()
            )));
        }
        let mut all = self.records()?;
        Ok(all.split_off((from - base).min(all.len())))
    }

    fn snapshot(&self) -> Option<StoredSnapshot> {
        self.snapshot.borrow_mut().take()
    }

    fn snapshot_after(&self) -> Option<usize> {
        self.snapshot_after
    }

    /// The snapshot first, made durable by a synced rename, and only then
    /// the log begun again after it: at any crash, either the old snapshot
    /// and a log that holds every record after it are in place, or the new
    /// snapshot and a log whose records it covers (skipped at the next
    /// start) or that begins after it.
    fn keep_snapshot(&self, records: usize, bytes: &[u8]) -> Result<(), ImplError> {
        if records != self.written.get() || !self.pending.borrow().is_empty() {
            return Err(ImplError::Misbehaved(format!(
                "a snapshot of {records} records asked of a log that holds {} and {} unsynced",
                self.written.get(),
                self.pending.borrow().len()
            )));
        }
        let unsynced = matches!(
            self.flaw,
            Some(LogFlaw::SkipsFsync | LogFlaw::RenamesSnapshotUnsynced)
        );
        let file = snapshot_file::encode(records, bytes);
        self.replace(NEW_SNAPSHOT_NAME, SNAPSHOT_NAME, &file, unsynced)?;
        self.write_afresh(records, std::iter::empty::<&Vec<u8>>())?;
        self.base.set(records);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(dir: &Path) -> FileLog {
        FileLog::open(dir.to_path_buf(), None, Some(4)).unwrap()
    }

    fn records(n: std::ops::Range<u8>) -> Vec<Vec<u8>> {
        n.map(|i| vec![i; usize::from(i) + 1]).collect()
    }

    fn append_synced(l: &FileLog, rs: &[Vec<u8>]) {
        for r in rs {
            l.append(r.clone()).unwrap();
        }
        l.sync().unwrap();
    }

    #[test]
    fn a_snapshot_covers_its_records_and_the_log_goes_on_after_them() {
        let dir = tempfile::tempdir().unwrap();
        let l = log(dir.path());
        append_synced(&l, &records(0..5));
        l.keep_snapshot(5, b"state after five").unwrap();
        append_synced(&l, &records(5..7));
        drop(l);
        let l = log(dir.path());
        let s = l.snapshot().expect("a whole snapshot");
        assert_eq!(
            (s.records, s.bytes.as_slice()),
            (5, &b"state after five"[..])
        );
        assert_eq!(l.records_from(5).unwrap(), records(5..7));
        // Records before the log's first are only in the snapshot.
        assert!(l.records_from(4).is_err());
    }

    #[test]
    fn a_snapshot_of_fewer_records_than_written_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let l = log(dir.path());
        append_synced(&l, &records(0..3));
        assert!(l.keep_snapshot(2, b"x").is_err());
        l.append(vec![9]).unwrap();
        assert!(l.keep_snapshot(3, b"x").is_err(), "a record is unsynced");
    }

    /// A crash after the snapshot was durable and before the log was
    /// begun again leaves the new snapshot beside the old log: the start
    /// skips the records the snapshot covers.
    #[test]
    fn a_snapshot_beside_the_log_it_was_made_from_skips_its_records() {
        let dir = tempfile::tempdir().unwrap();
        let l = log(dir.path());
        append_synced(&l, &records(0..6));
        let old = std::fs::read(dir.path().join(LOG_NAME)).unwrap();
        l.keep_snapshot(6, b"six").unwrap();
        drop(l);
        std::fs::write(dir.path().join(LOG_NAME), old).unwrap();
        let l = log(dir.path());
        assert_eq!(l.snapshot().unwrap().records, 6);
        assert_eq!(l.records_from(6).unwrap(), Vec::<Vec<u8>>::new());
        // The log was begun again after the snapshot: what is appended
        // now is numbered from there.
        append_synced(&l, &records(6..8));
        drop(l);
        let l = log(dir.path());
        assert_eq!(l.snapshot().unwrap().records, 6);
        assert_eq!(l.records_from(6).unwrap(), records(6..8));
    }

    /// A torn snapshot is not used: with the log still holding every
    /// record, the start replays them all; with a log that begins after
    /// it, the start refuses, naming both files.
    #[test]
    fn a_torn_snapshot_is_ignored_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let l = log(dir.path());
        append_synced(&l, &records(0..4));
        let file = snapshot_file::encode(4, b"four");
        std::fs::write(dir.path().join(SNAPSHOT_NAME), &file[..file.len() - 3]).unwrap();
        drop(l);
        let l = log(dir.path());
        assert!(l.snapshot().is_none());
        assert_eq!(l.records_from(0).unwrap(), records(0..4));
        l.keep_snapshot(4, b"four").unwrap();
        drop(l);
        std::fs::write(dir.path().join(SNAPSHOT_NAME), &file[..20]).unwrap();
        let e = FileLog::open(dir.path().to_path_buf(), None, Some(4))
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("tern-agent.log begins at record 4"), "{e}");
        assert!(
            e.contains("tern-agent.snapshot is not a whole snapshot"),
            "{e}"
        );
    }

    /// What a crash leaves past the last whole record is cut at the next
    /// start, the base record kept.
    #[test]
    fn a_torn_tail_after_a_snapshot_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let l = log(dir.path());
        append_synced(&l, &records(0..2));
        l.keep_snapshot(2, b"two").unwrap();
        append_synced(&l, &records(2..4));
        drop(l);
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.path().join(LOG_NAME))
            .unwrap();
        f.write_all(&[200, 0, 0, 0, 1, 2]).unwrap();
        let l = log(dir.path());
        assert_eq!(l.records_from(2).unwrap(), records(2..4));
        append_synced(&l, &records(4..5));
        drop(l);
        let l = log(dir.path());
        assert_eq!(l.snapshot().unwrap().records, 2);
        assert_eq!(l.records_from(2).unwrap(), records(2..5));
    }
}
