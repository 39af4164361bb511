//! A harness killed while its file system is mounted leaves nothing in the
//! way of the next run: the mount goes with it (fusermount's
//! `auto_unmount`), or the next mount at the same place removes it.
//!
//! The killed "harness" is this test binary run again, in a mode where the
//! one test it runs mounts and waits to be killed.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tern_statefs::{mount, probe};

const CHILD_BACKING: &str = "TERN_STATEFS_TEST_BACKING";
const CHILD_MNT: &str = "TERN_STATEFS_TEST_MNT";

/// Only does something in the child: mounts, says so, and waits.
#[test]
fn child_mounts_and_waits_to_be_killed() {
    let (Some(backing), Some(mnt)) = (std::env::var_os(CHILD_BACKING), std::env::var_os(CHILD_MNT))
    else {
        return;
    };
    let _mounted = mount(Path::new(&backing), Path::new(&mnt)).unwrap();
    println!("mounted");
    std::thread::sleep(Duration::from_secs(120));
}

fn mount_state(path: &Path) -> Option<Result<(), i32>> {
    let table = fs::read_to_string("/proc/self/mountinfo").unwrap();
    let wanted = path.to_string_lossy();
    table
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(wanted.as_ref()))
        .then(|| {
            // A listing, which the kernel always asks the file system for:
            // the root's attributes it may answer from its cache (statefs
            // lets it keep them an hour), even once the file system is dead.
            fs::read_dir(path)
                .map(|_| ())
                .map_err(|e| e.raw_os_error().unwrap_or(0))
        })
}

#[test]
fn a_killed_harness_leaves_no_mount_in_the_way() {
    if let Err(why) = probe() {
        eprintln!("skipped: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let backing = tmp.path().join("backing");
    let mnt: PathBuf = tmp.path().join("mnt");
    fs::create_dir(&backing).unwrap();
    fs::create_dir(&mnt).unwrap();
    fs::write(backing.join("state"), b"kept").unwrap();

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_mounts_and_waits_to_be_killed",
            "--nocapture",
        ])
        .env(CHILD_BACKING, &backing)
        .env(CHILD_MNT, &mnt)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.unwrap() == "mounted"));
    let mnt = mnt.canonicalize().unwrap();
    assert_eq!(mount_state(&mnt), Some(Ok(())));
    child.kill().unwrap();
    child.wait().unwrap();

    // With fusermount the mount goes away by itself; without, it stays,
    // dead ("Transport endpoint is not connected").
    let fusermount = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path)
            .any(|d| d.join("fusermount3").is_file() || d.join("fusermount").is_file())
    });
    let start = Instant::now();
    while fusermount && mount_state(&mnt).is_some() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    match mount_state(&mnt) {
        None => eprintln!("the mount went with the harness"),
        Some(state) => {
            assert!(!fusermount, "fusermount's auto_unmount left {state:?}");
            assert_eq!(state, Err(libc::ENOTCONN));
            eprintln!("the mount stayed, dead");
        }
    }

    // Either way the next run mounts there, and sees the state.
    let again = mount(&backing, &mnt).unwrap();
    assert_eq!(fs::read(mnt.join("state")).unwrap(), b"kept");
    again.unmount().unwrap();
    assert_eq!(mount_state(&mnt), None);
}
