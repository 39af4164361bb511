//! The file system mounted for real: processes write through FUSE, and a
//! power loss leaves what the durability model says. Skipped, with the
//! reason printed, only where `probe()` says FUSE cannot be used.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tern_statefs::{mount, probe, Cut, HeldOp, Mounted, Node, OpKind, Tree};

/// A mounted scratch state_dir. Fields drop in order: unmount first, then
/// the folders go.
struct Fixture {
    fs: Mounted,
    mnt: PathBuf,
    backing: PathBuf,
    _tmp: tempfile::TempDir,
}

/// Mounts a backing folder prepared by `prepare`, or says why FUSE is not
/// there and returns `None`.
fn mounted(prepare: impl FnOnce(&Path)) -> Option<Fixture> {
    if let Err(why) = probe() {
        eprintln!("skipped: {why}");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let backing = tmp.path().join("backing");
    let mnt = tmp.path().join("mnt");
    fs::create_dir(&backing).unwrap();
    fs::create_dir(&mnt).unwrap();
    prepare(&backing);
    let fs = mount(&backing, &mnt).unwrap();
    let mnt = fs.mountpoint().to_path_buf();
    let backing = fs.backing().to_path_buf();
    Some(Fixture {
        fs,
        mnt,
        backing,
        _tmp: tmp,
    })
}

/// A backing folder with `state` holding "old", durable from the start.
fn with_state(backing: &Path) {
    fs::write(backing.join("state"), b"old").unwrap();
}

fn fsync_dir(dir: &Path) {
    File::open(dir).unwrap().sync_all().unwrap();
}

/// Runs a Python program in `dir` and waits for it.
fn python(dir: &Path, program: &str) {
    let status = Command::new("python3")
        .arg("-c")
        .arg(program)
        .current_dir(dir)
        .status()
        .expect("python3 runs the programs that get killed");
    assert!(status.success(), "{program}");
}

fn spawn_python(dir: &Path, program: &str) -> Child {
    Command::new("python3")
        .arg("-c")
        .arg(program)
        .current_dir(dir)
        .stdin(Stdio::null())
        .spawn()
        .expect("python3 runs the programs that get killed")
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Whether `path` is a mountpoint in this process's namespace.
fn is_mounted(path: &Path) -> bool {
    let table = fs::read_to_string("/proc/self/mountinfo").unwrap();
    let wanted = path.to_string_lossy();
    table
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(wanted.as_ref()))
}

#[test]
fn a_write_without_fsync_is_gone_after_a_power_loss() {
    let Some(f) = mounted(with_state) else { return };
    fs::write(f.mnt.join("new"), b"never synced").unwrap();
    fs::write(f.mnt.join("state"), b"new").unwrap();
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"new");
    let lost = f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(names(&f.mnt), ["state"]);
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"old");
    assert_eq!(fs::read(f.backing.join("state")).unwrap(), b"old");
    assert_eq!(lost.names_gone, [PathBuf::from("new")]);
    assert!(lost.dropped_data());
}

#[test]
fn fsync_of_the_file_but_not_its_directory_loses_the_name() {
    let Some(f) = mounted(|_| {}) else { return };
    python(
        &f.mnt,
        "import os\n\
         fd = os.open('a', os.O_WRONLY | os.O_CREAT, 0o644)\n\
         os.write(fd, b'synced data')\n\
         os.fsync(fd)\n\
         os.close(fd)\n",
    );
    assert_eq!(fs::read(f.mnt.join("a")).unwrap(), b"synced data");
    let lost = f.fs.power_loss(Cut::Clean).unwrap();
    assert!(names(&f.mnt).is_empty());
    assert_eq!(lost.names_gone, [PathBuf::from("a")]);
}

#[test]
fn fsync_of_the_file_and_its_directory_keeps_it() {
    let Some(f) = mounted(|_| {}) else { return };
    python(
        &f.mnt,
        "import os\n\
         fd = os.open('a', os.O_WRONLY | os.O_CREAT, 0o644)\n\
         os.write(fd, b'synced data')\n\
         os.fsync(fd)\n\
         os.close(fd)\n\
         d = os.open('.', os.O_RDONLY)\n\
         os.fsync(d)\n\
         os.close(d)\n",
    );
    let lost = f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(fs::read(f.mnt.join("a")).unwrap(), b"synced data");
    assert!(lost.is_empty(), "{lost:?}");
}

#[test]
fn a_directory_fsync_alone_leaves_an_empty_file() {
    let Some(f) = mounted(|_| {}) else { return };
    fs::write(f.mnt.join("a"), b"data").unwrap();
    fsync_dir(&f.mnt);
    f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(fs::read(f.mnt.join("a")).unwrap(), b"");
}

const REPLACE_STATE: &str = "import os\n\
    fd = os.open('state.tmp', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)\n\
    os.write(fd, b'new')\n\
    os.fsync(fd)\n\
    os.close(fd)\n\
    os.rename('state.tmp', 'state')\n";

#[test]
fn a_rename_without_a_directory_fsync_brings_the_old_name_back() {
    let Some(f) = mounted(with_state) else { return };
    python(&f.mnt, REPLACE_STATE);
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"new");
    let lost = f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(names(&f.mnt), ["state"]);
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"old");
    assert_eq!(lost.names_changed, [PathBuf::from("state")]);
}

#[test]
fn a_rename_with_a_directory_fsync_is_durable() {
    let Some(f) = mounted(with_state) else { return };
    python(
        &f.mnt,
        &format!("{REPLACE_STATE}d = os.open('.', os.O_RDONLY)\nos.fsync(d)\nos.close(d)\n"),
    );
    let lost = f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(names(&f.mnt), ["state"]);
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"new");
    assert!(lost.is_empty(), "{lost:?}");
}

#[test]
fn an_unlink_without_a_directory_fsync_brings_the_file_back() {
    let Some(f) = mounted(with_state) else { return };
    fs::remove_file(f.mnt.join("state")).unwrap();
    assert!(names(&f.mnt).is_empty());
    let lost = f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"old");
    assert_eq!(lost.names_back, [PathBuf::from("state")]);

    fs::remove_file(f.mnt.join("state")).unwrap();
    fsync_dir(&f.mnt);
    f.fs.power_loss(Cut::Clean).unwrap();
    assert!(names(&f.mnt).is_empty());
}

#[test]
fn mkdir_and_files_below_need_every_directory_synced() {
    let Some(f) = mounted(|_| {}) else { return };
    fs::create_dir_all(f.mnt.join("d/e")).unwrap();
    let mut file = File::create(f.mnt.join("d/e/f")).unwrap();
    file.write_all(b"deep").unwrap();
    file.sync_all().unwrap();
    drop(file);
    fsync_dir(&f.mnt.join("d/e"));
    fsync_dir(&f.mnt.join("d"));
    let preview = f.fs.preview(Cut::Clean);
    assert!(preview.nodes.is_empty(), "the root was never synced");
    fsync_dir(&f.mnt);
    f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(fs::read(f.mnt.join("d/e/f")).unwrap(), b"deep");
}

#[test]
fn truncate_is_durable_at_the_file_fsync() {
    let Some(f) = mounted(with_state) else { return };
    let file = OpenOptions::new()
        .write(true)
        .open(f.mnt.join("state"))
        .unwrap();
    file.set_len(1).unwrap();
    assert_eq!(f.fs.preview(Cut::Clean).file("state"), Some(&b"old"[..]));
    file.sync_data().unwrap();
    drop(file);
    f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"o");
}

#[test]
fn an_o_sync_write_is_durable_when_it_returns() {
    let Some(f) = mounted(with_state) else { return };
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DSYNC)
        .open(f.mnt.join("state"))
        .unwrap();
    file.write_all_at(b"NEW", 0).unwrap();
    drop(file);
    f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"NEW");
}

/// Write "A" at 0, fsync, write "B" at 1, to `state` (which holds "old").
const WRITE_FSYNC_WRITE: &str = "import os\n\
    fd = os.open('state', os.O_WRONLY)\n\
    os.pwrite(fd, b'A', 0)\n\
    os.fsync(fd)\n\
    os.pwrite(fd, b'B', 1)\n\
    os.close(fd)\n";

/// Runs `program` with the `k`-th mutating operation armed: returns the
/// held operation, after the program was killed and the power lost.
fn crash_at(f: &Fixture, k: u64, program: &str) -> HeldOp {
    f.fs.arm(k).unwrap();
    let mut child = spawn_python(&f.mnt, program);
    let held = f.fs.wait_held(Duration::from_secs(20));
    child.kill().unwrap();
    // The held request is answered once its caller is killed, so the
    // process can exit; if it cannot, the power loss below frees it.
    let start = Instant::now();
    let mut exited = false;
    while start.elapsed() < Duration::from_secs(10) {
        if child.try_wait().unwrap().is_some() {
            exited = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    f.fs.power_loss(Cut::Clean).unwrap();
    child.wait().unwrap();
    assert!(exited, "a killed process stopped at a crash point exits");
    held.expect("the armed operation was reached")
}

#[test]
fn a_request_makes_three_crash_points() {
    let Some(f) = mounted(with_state) else { return };
    let before = f.fs.mutating_ops();
    python(&f.mnt, WRITE_FSYNC_WRITE);
    assert_eq!(f.fs.mutating_ops() - before, 3);
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"ABd");
}

#[test]
fn a_crash_at_the_fsync_leaves_the_state_before_it() {
    let Some(f) = mounted(with_state) else { return };
    let held = crash_at(&f, 2, WRITE_FSYNC_WRITE);
    assert_eq!(held.kind, OpKind::Fsync);
    assert_eq!(held.path, PathBuf::from("state"));
    assert_eq!(held.seq, 2);
    // The write before it was never synced; the fsync never happened.
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"old");
}

#[test]
fn a_crash_at_the_second_write_keeps_the_synced_first() {
    let Some(f) = mounted(with_state) else { return };
    let held = crash_at(&f, 3, WRITE_FSYNC_WRITE);
    assert_eq!(held.kind, OpKind::Write);
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"Ald");
}

#[test]
fn a_crash_at_a_rename_keeps_the_old_file() {
    let Some(f) = mounted(with_state) else { return };
    // create, write, fsync, rename: hold the rename.
    let held = crash_at(&f, 4, REPLACE_STATE);
    assert_eq!(held.kind, OpKind::Rename);
    assert_eq!(held.path, PathBuf::from("state.tmp"));
    assert_eq!(held.to, Some(PathBuf::from("state")));
    assert_eq!(names(&f.mnt), ["state"]);
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"old");
}

#[test]
fn a_killed_process_with_a_shared_mapping_exits() {
    let Some(f) = mounted(|_| {}) else { return };
    // create, size change, then the create of `other` is held. Killed, the
    // process writes its mapped page back on the way out: that write-back
    // must not be held, or the process never exits.
    let held = crash_at(
        &f,
        3,
        "import mmap, os\n\
         fd = os.open('m', os.O_RDWR | os.O_CREAT, 0o644)\n\
         os.ftruncate(fd, 4096)\n\
         mm = mmap.mmap(fd, 4096)\n\
         mm[0:5] = b'hello'\n\
         os.open('other', os.O_WRONLY | os.O_CREAT, 0o644)\n",
    );
    assert_eq!(held.kind, OpKind::Create);
    assert_eq!(held.path, PathBuf::from("other"));
    assert!(names(&f.mnt).is_empty());
}

#[test]
fn a_held_operation_can_resume() {
    let Some(f) = mounted(with_state) else { return };
    f.fs.arm(1).unwrap();
    let mut child = spawn_python(&f.mnt, WRITE_FSYNC_WRITE);
    let held = f.fs.wait_held(Duration::from_secs(20)).unwrap();
    assert_eq!(held.kind, OpKind::Write);
    assert_ne!(held.pid, 0);
    // Held: the write has not happened.
    assert_eq!(fs::read(f.backing.join("state")).unwrap(), b"old");
    assert_eq!(f.fs.resume(), 1);
    assert!(child.wait().unwrap().success());
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"ABd");
    f.fs.power_loss(Cut::Clean).unwrap();
    // The fsync made "A" durable, "B" was not synced.
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"Ald");
}

/// Several files, each written twice and never synced, their names durable.
fn torn_history(mnt: &Path) {
    for i in 0..6u8 {
        let mut file = File::create(mnt.join(format!("f{i}"))).unwrap();
        file.write_all(&[b'a' + i; 3000]).unwrap();
        file.write_all(&[b'Z'; 2000]).unwrap();
    }
    fsync_dir(mnt);
}

#[test]
fn a_torn_power_loss_is_the_same_for_the_same_history_and_seed() {
    let Some(one) = mounted(|_| {}) else { return };
    let Some(two) = mounted(|_| {}) else { return };
    torn_history(&one.mnt);
    torn_history(&two.mnt);
    let preview = one.fs.preview(Cut::Torn { seed: 42 });
    let lost_one = one.fs.power_loss(Cut::Torn { seed: 42 }).unwrap();
    let lost_two = two.fs.power_loss(Cut::Torn { seed: 42 }).unwrap();
    let tree_one = Tree::read(&one.mnt).unwrap();
    assert_eq!(tree_one, Tree::read(&two.mnt).unwrap());
    assert_eq!(tree_one, Tree::read(&one.backing).unwrap());
    assert_eq!(tree_one, preview);
    assert_eq!(lost_one, lost_two);
    // Each file is a prefix of what was written, and the cuts differ.
    let mut lengths = std::collections::BTreeSet::new();
    for i in 0..6u8 {
        let data = tree_one.file(format!("f{i}")).unwrap();
        let mut full = vec![b'a' + i; 3000];
        full.extend_from_slice(&[b'Z'; 2000]);
        assert!(full.starts_with(data));
        lengths.insert(data.len());
    }
    assert!(lengths.len() > 1, "{lengths:?}");
    assert!(lost_one.torn_writes() > 0);
}

#[test]
fn a_reset_mount_is_empty_and_cuts_like_a_fresh_one() {
    let Some(used) = mounted(with_state) else {
        return;
    };
    let Some(fresh) = mounted(|_| {}) else { return };
    // A history on the first mount, then a reset: nothing of it stays,
    // durable or not, and open files are closed.
    torn_history(&used.mnt);
    let open = File::open(used.mnt.join("f0")).unwrap();
    used.fs.reset().unwrap();
    assert!(names(&used.mnt).is_empty(), "{:?}", names(&used.mnt));
    assert!(names(&used.backing).is_empty());
    let mut buf = [0u8; 1];
    assert!(
        open.read_at(&mut buf, 0).is_err(),
        "an old handle is closed"
    );
    // The same history after the reset cuts exactly as on a fresh mount,
    // although the inode numbers went on from where they were.
    torn_history(&used.mnt);
    torn_history(&fresh.mnt);
    let one = used.fs.power_loss(Cut::Torn { seed: 7 }).unwrap();
    let two = fresh.fs.power_loss(Cut::Torn { seed: 7 }).unwrap();
    assert_eq!(one, two);
    assert_eq!(
        Tree::read(&used.mnt).unwrap(),
        Tree::read(&fresh.mnt).unwrap()
    );
}

#[test]
fn stepping_lets_one_operation_through_at_a_time() {
    let Some(f) = mounted(with_state) else { return };
    let mark = f.fs.mutating_ops();
    f.fs.arm(1).unwrap();
    let mut child = spawn_python(&f.mnt, WRITE_FSYNC_WRITE);
    let mut kinds = Vec::new();
    // Each held operation is let through and the next one held, until the
    // program ends: it sees no difference, and each was held in turn.
    loop {
        match f.fs.wait_held(Duration::from_millis(300)) {
            Some(op) => {
                kinds.push(op.kind);
                assert_eq!(op.seq, mark + kinds.len() as u64);
                assert_eq!(f.fs.step(), 1);
            }
            None => {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
            }
        }
    }
    f.fs.disarm();
    assert!(child.wait().unwrap().success());
    assert_eq!(kinds, [OpKind::Write, OpKind::Fsync, OpKind::Write]);
    assert_eq!(f.fs.ops_since(mark), kinds);
    assert_eq!(fs::read(f.mnt.join("state")).unwrap(), b"ABd");
}

#[test]
fn the_passthrough_does_what_a_program_does_in_a_state_dir() {
    let Some(f) = mounted(with_state) else { return };
    let m = &f.mnt;
    fs::create_dir(m.join("d")).unwrap();
    fs::write(m.join("d/x"), b"0123456789").unwrap();
    // Reads at offsets, appends, truncation, sizes.
    let file = File::open(m.join("d/x")).unwrap();
    let mut buf = [0; 4];
    file.read_exact_at(&mut buf, 3).unwrap();
    assert_eq!(&buf, b"3456");
    let mut app = OpenOptions::new().append(true).open(m.join("d/x")).unwrap();
    app.write_all(b"ab").unwrap();
    assert_eq!(fs::metadata(m.join("d/x")).unwrap().len(), 12);
    app.set_len(5).unwrap();
    assert_eq!(fs::read(m.join("d/x")).unwrap(), b"01234");
    // chmod, symlink, readlink, hard link.
    fs::set_permissions(m.join("d/x"), fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(fs::metadata(m.join("d/x")).unwrap().mode() & 0o777, 0o600);
    std::os::unix::fs::symlink("d/x", m.join("sym")).unwrap();
    assert_eq!(fs::read_link(m.join("sym")).unwrap(), PathBuf::from("d/x"));
    assert_eq!(fs::read(m.join("sym")).unwrap(), b"01234");
    fs::hard_link(m.join("d/x"), m.join("hard")).unwrap();
    assert_eq!(fs::metadata(m.join("hard")).unwrap().nlink(), 2);
    // Times.
    let t = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    File::options()
        .write(true)
        .open(m.join("hard"))
        .unwrap()
        .set_modified(t)
        .unwrap();
    assert_eq!(fs::metadata(m.join("d/x")).unwrap().modified().unwrap(), t);
    // rename, RENAME_NOREPLACE and RENAME_EXCHANGE.
    fs::rename(m.join("hard"), m.join("d/y")).unwrap();
    let rename2 = |a: &str, b: &str, flags: u32| {
        let a = std::ffi::CString::new(m.join(a).to_str().unwrap()).unwrap();
        let b = std::ffi::CString::new(m.join(b).to_str().unwrap()).unwrap();
        // SAFETY: valid paths.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                flags,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    let refused = rename2("state", "d/y", libc::RENAME_NOREPLACE).unwrap_err();
    assert_eq!(refused.raw_os_error(), Some(libc::EEXIST));
    rename2("state", "d/y", libc::RENAME_EXCHANGE).unwrap();
    assert_eq!(fs::read(m.join("state")).unwrap(), b"01234");
    assert_eq!(fs::read(m.join("d/y")).unwrap(), b"old");
    // unlink, rmdir, a directory that is not empty.
    fs::create_dir(m.join("gone")).unwrap();
    fs::remove_dir(m.join("gone")).unwrap();
    assert_eq!(
        fs::remove_dir(m.join("d")).unwrap_err().raw_os_error(),
        Some(libc::ENOTEMPTY)
    );
    fs::remove_file(m.join("sym")).unwrap();
    // A FIFO.
    let fifo = std::ffi::CString::new(m.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    // statfs and access.
    let root = std::ffi::CString::new(m.to_str().unwrap()).unwrap();
    // SAFETY: statvfs is plain data; the path is valid.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(root.as_ptr(), &mut st) }, 0);
    assert!(st.f_bsize > 0);
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::access(root.as_ptr(), libc::W_OK) }, 0);
    // An unlinked file that is still open keeps working.
    let mut open = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(m.join("tmp"))
        .unwrap();
    fs::remove_file(m.join("tmp")).unwrap();
    open.write_all(b"still here").unwrap();
    assert_eq!(open.metadata().unwrap().len(), 10);
    drop(open);

    assert_eq!(names(m), ["d", "fifo", "state"]);
    assert_eq!(names(&m.join("d")), ["x", "y"]);
    // The mount, the backing folder and the model agree.
    let seen = Tree::read(m).unwrap();
    assert_eq!(seen, Tree::read(&f.backing).unwrap());
    assert_eq!(seen, f.fs.live());
    assert!(matches!(seen.get("fifo"), Some(Node::Special { .. })));

    // A power loss with everything settled loses nothing.
    f.fs.settle();
    let lost = f.fs.power_loss(Cut::Clean).unwrap();
    assert!(lost.is_empty(), "{lost:?}");
    assert_eq!(Tree::read(m).unwrap(), seen);
}

#[test]
fn the_mount_goes_on_after_a_power_loss() {
    let Some(f) = mounted(with_state) else { return };
    let mut open = File::create(f.mnt.join("open")).unwrap();
    f.fs.power_loss(Cut::Clean).unwrap();
    // A handle from before the power loss is dead.
    assert!(open.write_all(b"x").is_err());
    drop(open);
    fs::write(f.mnt.join("after"), b"fine").unwrap();
    let file = File::open(f.mnt.join("after")).unwrap();
    file.sync_all().unwrap();
    fsync_dir(&f.mnt);
    f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(names(&f.mnt), ["after", "state"]);
    assert_eq!(fs::read(f.mnt.join("after")).unwrap(), b"fine");
}

#[test]
fn unmounting_a_busy_mount_leaves_no_stale_mount() {
    let Some(f) = mounted(|_| {}) else { return };
    let mnt = f.mnt.clone();
    assert!(is_mounted(&mnt));
    let mut sleeper = Command::new("sleep")
        .arg("30")
        .current_dir(&mnt)
        .spawn()
        .unwrap();
    let Fixture { fs, _tmp, .. } = f;
    fs.unmount().unwrap();
    assert!(!is_mounted(&mnt));
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    drop(_tmp);
}

#[test]
fn attributes_the_kernel_keeps_never_outlive_a_power_loss_or_a_reset() {
    let Some(f) = mounted(with_state) else { return };
    // The kernel may keep a file's attributes: every size below is asked
    // right after a change the kernel did not make itself.
    let log = f.mnt.join("log");
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .unwrap();
    file.write_all(b"synced;").unwrap();
    file.sync_all().unwrap();
    fsync_dir(&f.mnt);
    file.write_all(b"unsynced;").unwrap();
    assert_eq!(fs::metadata(&log).unwrap().len(), 16);
    assert_eq!(file.metadata().unwrap().len(), 16);
    drop(file);
    f.fs.power_loss(Cut::Clean).unwrap();
    assert_eq!(
        fs::metadata(&log).unwrap().len(),
        7,
        "the size after the loss"
    );
    // An append after the loss starts at the size the loss left.
    let mut file = OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(b"again;").unwrap();
    drop(file);
    assert_eq!(fs::read(&log).unwrap(), b"synced;again;");
    assert_eq!(fs::metadata(f.mnt.join("state")).unwrap().len(), 3);
    f.fs.reset().unwrap();
    assert!(fs::metadata(&log).is_err(), "gone with the reset");
    assert!(fs::metadata(f.mnt.join("state")).is_err());
    fs::write(&log, b"x").unwrap();
    assert_eq!(fs::metadata(&log).unwrap().len(), 1);
}
