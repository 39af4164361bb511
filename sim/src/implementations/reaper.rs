//! Keeping every process an implementation starts under tern-sim's control.
//!
//! Killing a child's process group is not enough: a program that calls
//! `setsid()` and forks twice leaves the group, and its grandchild would
//! outlive crashes and the harness itself. So tern-sim makes itself a child
//! subreaper (Linux `PR_SET_CHILD_SUBREAPER`), which re-parents such orphans
//! to it instead of to init, and marks each child it spawns with a token in
//! its environment ([`TOKEN_VAR`]), inherited by everything the child
//! starts. Killing a child then means, until a scan of `/proc` finds nothing
//! left: SIGKILL its group, and SIGKILL every process descending from it or
//! from an orphan of ours that carries no token of a child still running.
//!
//! Every spawn and every kill holds one lock, so a scan never mistakes a
//! child being spawned for an orphan. A fork racing a scan is caught by the
//! next round: a process that has been sent SIGKILL can no longer fork, so
//! the rounds end once a scan finds no live process of the tree. Signals go
//! through pidfds where the kernel has them, so a recycled pid is never hit.
//! Zombies re-parented to tern-sim are reaped by their pid, never with
//! `waitpid(-1)`, which would steal the statuses `std::process::Child` owns.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::implementations::locked;
use std::time::Duration;

/// The environment variable that marks a child's whole tree.
pub const TOKEN_VAR: &str = "TERN_SIM_CHILD";

/// Scans before giving up on a tree that keeps forking (each round kills
/// what it finds, and a killed process cannot fork, so two or three rounds
/// are the rule).
const ROUNDS: usize = 200;

/// The children spawned and not yet killed: their pids and tokens.
struct Live {
    pid: i32,
    token: String,
}

static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

/// Held across every spawn (with its registration) and every kill.
static SPAWN: Mutex<()> = Mutex::new(());

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Makes tern-sim the reaper of its descendants' orphans (once).
pub fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(target_os = "linux")]
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag on
        // this process.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
    });
}

/// A spawned child with the token its tree carries.
#[derive(Debug)]
pub struct Marked {
    pub child: Child,
    pub token: String,
}

/// Spawns `command` with a fresh token and registers it as live.
pub fn spawn(command: &mut Command) -> io::Result<Marked> {
    become_subreaper();
    let token = format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    );
    command.env(TOKEN_VAR, &token);
    let _spawning = locked(&SPAWN);
    // `spawn` returns once the child has exec'd (std waits for that), so
    // from here on its environment shows the token.
    let child = command.spawn()?;
    if let Ok(pid) = i32::try_from(child.id()) {
        locked(&LIVE).push(Live {
            pid,
            token: token.clone(),
        });
    }
    Ok(Marked { child, token })
}

/// Kills `marked` and every process of its tree, waits for the child and
/// reaps the orphans it left. Returns when a scan finds none alive.
pub fn kill_tree(marked: &mut Marked) {
    let _killing = locked(&SPAWN);
    let pid = i32::try_from(marked.child.id()).ok();
    locked(&LIVE).retain(|l| l.token != marked.token);
    if let Some(pid) = pid {
        // SAFETY: killpg only sends a signal; the group is the child's own
        // (it was spawned with process_group(0)) and it is not yet reaped,
        // so the id cannot have been reused.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
    let _ = marked.child.kill();
    let _ = marked.child.wait();
    // The child is reaped: its children are ours now, and carry its token.
    // (The FUSE mount helpers that serve power-loss state directories are
    // children of tern-sim too, and live as long as their mounts.)
    sweep(false, |p| !live_token(&p.token) && !p.helper);
}

/// Whether `pid` runs fusermount: the helper that, for a power-loss state
/// directory mounted with `auto_unmount`, waits to unmount it when
/// tern-sim ends. Killing it would unmount a state directory in use. Told
/// by the program the process runs, which no implementation can fake
/// without running fusermount itself.
fn is_mount_helper(pid: i32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| {
        exe.file_name()
            .is_some_and(|n| n == "fusermount3" || n == "fusermount")
    })
}

/// The mount helpers found so far, by pid and start time. A helper lives as
/// long as its mount, and every crash scans tern-sim's children: with the
/// helpers known, a scan reads only their `stat`, not their environment,
/// program and children (four reads of five, for each of up to one helper
/// per kept mount, at every crash). A helper runs fusermount until it ends,
/// so its identity says what it is.
static HELPERS: Mutex<BTreeSet<(i32, u64)>> = Mutex::new(BTreeSet::new());

/// Whether process `pid`, started at `start` and a child of tern-sim, is a
/// mount helper, from [`HELPERS`] or else from its program.
fn known_mount_helper(pid: i32, start: u64) -> bool {
    if locked(&HELPERS).contains(&(pid, start)) {
        return true;
    }
    let helper = is_mount_helper(pid);
    if helper {
        let mut known = locked(&HELPERS);
        // Helpers whose pid came back under another process are gone.
        known.retain(|(p, _)| *p != pid);
        known.insert((pid, start));
    }
    helper
}

/// Kills every descendant of tern-sim, for the exit and for signals.
/// Children still registered are killed but not reaped (their
/// `std::process::Child` will be), and new spawns wait until it returns.
pub fn kill_all() {
    let _killing = locked(&SPAWN);
    sweep(true, |p| !p.helper);
}

/// Like [`kill_all`], but keeps the spawn lock for ever: for a process about
/// to exit, so that no other thread starts a child after the sweep.
pub fn kill_all_and_stop_spawning() {
    let guard = locked(&SPAWN);
    // The mount helpers stay: each unmounts its state directory once
    // tern-sim is gone, which is what they wait for.
    sweep(true, |p| !p.helper);
    std::mem::forget(guard);
}

fn live_token(token: &Option<String>) -> bool {
    let Some(t) = token else { return false };
    locked(&LIVE).iter().any(|l| &l.token == t)
}

fn registered(pid: i32) -> bool {
    locked(&LIVE).iter().any(|l| l.pid == pid)
}

/// Rounds of scan, kill and reap. `claim` says whether a child of ours is
/// to die (a registered child only if `registered_too`); all its
/// descendants die with it.
fn sweep(registered_too: bool, claim: impl Fn(&Proc) -> bool) {
    let me = std::process::id() as i32;
    // A registered child is no orphan: unless it is to die too, neither
    // it nor what it started is read.
    let skipped = |pid: i32| !registered_too && registered(pid);
    for round in 0..ROUNDS {
        let procs = scan(me, skipped);
        let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
        for p in procs.values() {
            children.entry(p.ppid).or_default().push(p.pid);
        }
        let mut doomed: BTreeSet<i32> = BTreeSet::new();
        let mut todo: Vec<i32> = procs
            .values()
            .filter(|p| p.ppid == me && (registered_too || !registered(p.pid)) && claim(p))
            .map(|p| p.pid)
            .collect();
        while let Some(pid) = todo.pop() {
            if doomed.insert(pid) {
                todo.extend(children.get(&pid).into_iter().flatten().copied());
            }
        }
        let mut alive = 0;
        for pid in &doomed {
            let p = &procs[pid];
            if !p.zombie {
                alive += 1;
                signal_exactly(p);
            }
        }
        // Orphans of ours, dead now or soon: reap them by pid. A registered
        // child is never reaped here.
        let mut unreaped = 0;
        for pid in &doomed {
            if procs[pid].ppid == me && !registered(*pid) {
                let mut status = 0;
                // SAFETY: waitpid on a specific pid that is our child.
                let r = unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) };
                if r == 0 {
                    unreaped += 1;
                }
            }
        }
        if alive == 0 && unreaped == 0 {
            return;
        }
        if round > 2 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// One process as `/proc` shows it.
#[derive(Debug, Clone)]
struct Proc {
    pid: i32,
    ppid: i32,
    zombie: bool,
    /// Start time in clock ticks since boot: with the pid, an identity.
    start: u64,
    /// Its [`TOKEN_VAR`], if it is a child of tern-sim and its environment
    /// is readable and has one.
    token: Option<String>,
    /// A child of tern-sim that is a mount helper ([`is_mount_helper`]).
    helper: bool,
}

/// Reads `/proc/PID/stat`: (ppid, state, start time).
fn stat(pid: i32) -> Option<(i32, char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything: read after
    // the last `)`.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    // Field 22 of stat is the start time; `fields` starts at field 3.
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, state, start))
}

fn token_of(pid: i32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{TOKEN_VAR}=");
    environ
        .split(|&b| b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|t| String::from_utf8_lossy(t).into_owned())
}

/// Whether the kernel lists each task's children
/// (`/proc/PID/task/TID/children`, CONFIG_PROC_CHILDREN, on by default in
/// the common distributions' kernels).
fn children_listed() -> bool {
    static LISTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LISTED.get_or_init(|| std::path::Path::new("/proc/thread-self/children").exists())
}

/// The children of every thread of process `pid`.
fn children_of(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|w| w.parse::<i32>().ok()),
            );
        }
    }
    out
}

/// Every descendant of `me` but those below a child `skipped`, with the
/// token of `me`'s own children: only they are ever claimed by their token
/// (the others die as descendants), and reading environments cost a scan
/// most of its time.
///
/// Where the kernel lists children, the scan walks down from `me` and reads
/// nothing else: a crash then costs a few reads, not one per process of the
/// machine (over the protocol, with a crash in most schedules explored, the
/// full scan was a fifth of the harness's time). Elsewhere it reads every
/// process, which holds the same descendants.
fn scan(me: i32, skipped: impl Fn(i32) -> bool) -> BTreeMap<i32, Proc> {
    if !children_listed() {
        return scan_all(me);
    }
    let mut out = BTreeMap::new();
    let mut todo: Vec<i32> = children_of(me)
        .into_iter()
        .filter(|&p| !skipped(p))
        .collect();
    while let Some(pid) = todo.pop() {
        if out.contains_key(&pid) {
            continue;
        }
        let Some(p) = read_proc(pid, me) else {
            continue;
        };
        // A helper starts nothing: nothing under it is read.
        if !p.helper {
            todo.extend(children_of(pid));
        }
        out.insert(pid, p);
    }
    out
}

/// [`scan`] by reading every process of the machine.
fn scan_all(me: i32) -> BTreeMap<i32, Proc> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if let Some(p) = read_proc(pid, me) {
            out.insert(pid, p);
        }
    }
    out
}

/// Process `pid` as `/proc` shows it, with its token (or what tells it for
/// a mount helper) if its parent is `me`.
fn read_proc(pid: i32, me: i32) -> Option<Proc> {
    let (ppid, state, start) = stat(pid)?;
    let zombie = matches!(state, 'Z' | 'X');
    let helper = ppid == me && !zombie && known_mount_helper(pid, start);
    Some(Proc {
        pid,
        ppid,
        zombie,
        start,
        token: if ppid == me && !helper {
            token_of(pid)
        } else {
            None
        },
        helper,
    })
}

/// SIGKILLs `p` and only `p`: through a pidfd, checked to be the process the
/// scan saw, where the kernel offers pidfds; by pid otherwise.
fn signal_exactly(p: &Proc) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, p.pid, 0) };
        if fd >= 0 {
            let fd = fd as libc::c_int;
            // With the pidfd held the pid cannot be reused: if it still
            // names the process the scan saw, it is the one.
            if stat(p.pid).is_some_and(|(_, _, start)| start == p.start) {
                // SAFETY: pidfd_send_signal on a pidfd we own.
                unsafe {
                    libc::syscall(
                        libc::SYS_pidfd_send_signal,
                        fd,
                        libc::SIGKILL,
                        std::ptr::null::<libc::siginfo_t>(),
                        0,
                    );
                }
            }
            // SAFETY: closing the pidfd we opened.
            unsafe {
                libc::close(fd);
            }
            return;
        }
        if io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS) {
            // Gone already.
            return;
        }
    }
    // SAFETY: kill only sends a signal.
    unsafe {
        libc::kill(p.pid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_reads_past_a_command_name_with_spaces_and_parentheses() {
        let me = std::process::id() as i32;
        let (ppid, state, start) = stat(me).expect("our own stat");
        assert!(ppid > 0);
        assert!(state.is_ascii_alphabetic());
        assert!(start > 0);
    }

    #[test]
    fn the_walk_down_from_tern_sim_finds_what_the_full_scan_finds() {
        let mut cmd = Command::new("sh");
        std::os::unix::process::CommandExt::process_group(
            cmd.arg("-c").arg("sleep 60 & sleep 60 & wait"),
            0,
        );
        let mut marked = spawn(&mut cmd).unwrap();
        let me = std::process::id() as i32;
        let shell = marked.child.id() as i32;
        let descendants = |procs: &BTreeMap<i32, Proc>| -> BTreeSet<i32> {
            let mut found = BTreeSet::from([shell]);
            // Parents before children is not guaranteed by pid order: close
            // the set under "child of" until it stops growing.
            loop {
                let more: BTreeSet<i32> = procs
                    .values()
                    .filter(|p| found.contains(&p.ppid))
                    .map(|p| p.pid)
                    .collect();
                if more.is_subset(&found) {
                    return found;
                }
                found.extend(more);
            }
        };
        // Both sleepers are up once the shell has two children.
        assert!((0..500).any(|_| {
            let up = children_of(shell).len() == 2;
            if !up {
                std::thread::sleep(Duration::from_millis(10));
            }
            up
        }));
        // (Where the kernel lists no children, `scan` is the full scan.)
        let walked = scan(me, |_| false);
        let all = scan_all(me);
        assert_eq!(descendants(&walked), descendants(&all));
        assert_eq!(descendants(&walked).len(), 3);
        assert_eq!(walked[&shell].token, all[&shell].token);
        assert!(walked[&shell].token.is_some());
        // A skipped child is not read, nor anything under it.
        if children_listed() {
            let skipping = scan(me, |pid| pid == shell);
            for pid in descendants(&all) {
                assert!(!skipping.contains_key(&pid));
            }
        }
        kill_tree(&mut marked);
    }

    #[test]
    fn a_mount_helper_is_told_by_its_program_and_remembered() {
        // `sleep` under the name of the helper's program.
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("fusermount3");
        let sleep = ["/bin/sleep", "/usr/bin/sleep"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .expect("a sleep program");
        std::fs::copy(sleep, &fake).unwrap();
        let mut helper = Command::new(&fake).arg("60").spawn().unwrap();
        let mut other = Command::new(sleep).arg("60").spawn().unwrap();
        let me = std::process::id() as i32;
        let (pid, other_pid) = (helper.id() as i32, other.id() as i32);
        let seen = read_proc(pid, me).expect("the helper is up");
        assert!(seen.helper);
        assert_eq!(seen.token, None);
        assert!(locked(&HELPERS).contains(&(pid, seen.start)));
        // Remembered now, a scan tells it too.
        let scanned = scan(me, |_| false);
        assert!(scanned[&pid].helper);
        // Anything else is no helper, and is not remembered as one.
        let plain = read_proc(other_pid, me).expect("the other is up");
        assert!(!plain.helper);
        assert!(!locked(&HELPERS).iter().any(|(p, _)| *p == other_pid));
        for child in [&mut helper, &mut other] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    #[test]
    fn a_double_forked_grandchild_dies_with_its_tree() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // The shell's child leaves the group with setsid and its parent exits
        // at once: the sleeper is an orphan (ours, as subreaper) in a session
        // of its own.
        let script = format!(
            "setsid sh -c 'sleep 60 & echo $! > {}' ; sleep 60",
            pidfile.display()
        );
        let mut cmd = Command::new("sh");
        std::os::unix::process::CommandExt::process_group(cmd.arg("-c").arg(script), 0);
        let mut marked = spawn(&mut cmd).unwrap();
        let grandchild: i32 = (0..500)
            .find_map(|_| {
                let pid = std::fs::read_to_string(&pidfile)
                    .ok()
                    .and_then(|s| s.trim().parse().ok());
                if pid.is_none() {
                    std::thread::sleep(Duration::from_millis(10));
                }
                pid
            })
            .expect("the grandchild started");
        // Wait until it is re-parented to us.
        let me = std::process::id() as i32;
        assert!((0..500).any(|_| {
            let ours = stat(grandchild).is_some_and(|(ppid, _, _)| ppid == me);
            if !ours {
                std::thread::sleep(Duration::from_millis(10));
            }
            ours
        }));
        kill_tree(&mut marked);
        let state = stat(grandchild).map(|(_, s, _)| s);
        assert!(
            state.is_none() || state == Some('Z'),
            "the grandchild {grandchild} survived: {state:?}"
        );
    }
}
