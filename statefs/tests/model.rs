//! The durability model alone, no FUSE: for each operation, a power loss
//! drops the change that was not made durable and keeps the one that was.

use std::ffi::OsStr;
use std::path::PathBuf;

use tern_statefs::{Cut, Kind, Model, ModelError, Node, NodeSpec, RenameMode, ROOT};

fn n(s: &str) -> &OsStr {
    OsStr::new(s)
}

fn file(m: &mut Model, parent: u64, name: &str) -> u64 {
    m.create(parent, n(name), NodeSpec::File { mode: 0o644 })
        .unwrap()
}

fn dir(m: &mut Model, parent: u64, name: &str) -> u64 {
    m.create(parent, n(name), NodeSpec::Dir { mode: 0o755 })
        .unwrap()
}

fn paths(m: &Model) -> Vec<String> {
    m.tree()
        .nodes
        .keys()
        .map(|p| p.display().to_string())
        .collect()
}

/// A model with `state` (content "old") durable in the root.
fn with_durable_state() -> (Model, u64) {
    let mut m = Model::default();
    let f = file(&mut m, ROOT, "state");
    m.write(f, 0, b"old").unwrap();
    m.sync_file(f).unwrap();
    m.sync_dir(ROOT).unwrap();
    (m, f)
}

#[test]
fn an_unsynced_write_is_dropped_and_a_synced_one_kept() {
    let (mut m, f) = with_durable_state();
    m.write(f, 0, b"new").unwrap();
    let mut lost_clean = m.clone();
    let lost = lost_clean.power_loss(Cut::Clean);
    assert_eq!(lost_clean.tree().file("state"), Some(&b"old"[..]));
    assert!(lost.dropped_data());
    assert_eq!(lost.bytes_dropped(), 3);
    assert_eq!(lost.files[0].path, PathBuf::from("state"));
    assert!(lost.files[0].survived);

    m.sync_data(f).unwrap();
    let lost = m.power_loss(Cut::Clean);
    assert_eq!(m.tree().file("state"), Some(&b"new"[..]));
    assert!(lost.is_empty(), "{lost:?}");
}

#[test]
fn a_file_synced_but_not_its_directory_loses_its_name() {
    let mut m = Model::default();
    let f = file(&mut m, ROOT, "a");
    m.write(f, 0, b"data").unwrap();
    m.sync_file(f).unwrap();
    let mut crashed = m.clone();
    let lost = crashed.power_loss(Cut::Clean);
    assert!(crashed.tree().nodes.is_empty());
    assert_eq!(lost.names_gone, vec![PathBuf::from("a")]);

    m.sync_dir(ROOT).unwrap();
    let lost = m.power_loss(Cut::Clean);
    assert_eq!(m.tree().file("a"), Some(&b"data"[..]));
    assert!(lost.is_empty());
}

#[test]
fn a_durable_name_whose_data_was_never_synced_is_an_empty_file() {
    let mut m = Model::default();
    let f = file(&mut m, ROOT, "a");
    m.write(f, 0, b"data").unwrap();
    m.sync_dir(ROOT).unwrap();
    let lost = m.power_loss(Cut::Clean);
    assert_eq!(m.tree().file("a"), Some(&b""[..]));
    assert_eq!(lost.files.len(), 1);
    assert_eq!(lost.files[0].unsynced_bytes, 4);
    assert_eq!(lost.files[0].kept_bytes, 0);
}

#[test]
fn create_is_durable_only_with_its_directory() {
    let mut m = Model::default();
    let d = dir(&mut m, ROOT, "d");
    m.sync_dir(ROOT).unwrap();
    file(&mut m, d, "x");
    let mut crashed = m.clone();
    crashed.power_loss(Cut::Clean);
    assert_eq!(paths(&crashed), ["d"]);
    m.sync_dir(d).unwrap();
    m.power_loss(Cut::Clean);
    assert_eq!(paths(&m), ["d", "d/x"]);
}

#[test]
fn mkdir_needs_the_parent_synced_and_its_children_need_it_synced() {
    let mut m = Model::default();
    let d = dir(&mut m, ROOT, "d");
    let e = dir(&mut m, d, "e");
    let f = file(&mut m, e, "f");
    m.sync_file(f).unwrap();
    m.sync_dir(e).unwrap();
    m.sync_dir(d).unwrap();
    // The root was never synced: nothing below it survives.
    let mut crashed = m.clone();
    let lost = crashed.power_loss(Cut::Clean);
    assert!(paths(&crashed).is_empty());
    assert_eq!(lost.names_gone.len(), 3);
    m.sync_dir(ROOT).unwrap();
    m.power_loss(Cut::Clean);
    assert_eq!(paths(&m), ["d", "d/e", "d/e/f"]);
}

#[test]
fn rename_without_a_directory_fsync_brings_the_old_name_back() {
    let (mut m, f) = with_durable_state();
    let tmp = file(&mut m, ROOT, "state.tmp");
    m.write(tmp, 0, b"new").unwrap();
    m.sync_file(tmp).unwrap();
    m.rename(ROOT, n("state.tmp"), ROOT, n("state"), RenameMode::Replace)
        .unwrap();
    assert_eq!(m.tree().file("state"), Some(&b"new"[..]));
    assert_eq!(m.lookup(ROOT, n("state")), Some(tmp));
    assert!(m.contains(f), "the replaced file is still durable");

    let mut crashed = m.clone();
    let lost = crashed.power_loss(Cut::Clean);
    assert_eq!(crashed.tree().file("state"), Some(&b"old"[..]));
    assert_eq!(lost.names_changed, vec![PathBuf::from("state")]);

    m.sync_dir(ROOT).unwrap();
    assert!(!m.contains(f), "nothing names the replaced file any more");
    let lost = m.power_loss(Cut::Clean);
    assert_eq!(m.tree().file("state"), Some(&b"new"[..]));
    assert_eq!(paths(&m), ["state"]);
    assert!(lost.is_empty());
}

#[test]
fn a_rename_across_directories_needs_both_synced() {
    let mut m = Model::default();
    let a = dir(&mut m, ROOT, "a");
    let b = dir(&mut m, ROOT, "b");
    let f = file(&mut m, a, "f");
    m.write(f, 0, b"x").unwrap();
    m.sync_all();
    m.rename(a, n("f"), b, n("g"), RenameMode::Replace).unwrap();

    // Only the destination synced: the file has both names.
    let mut only_dst = m.clone();
    only_dst.sync_dir(b).unwrap();
    only_dst.power_loss(Cut::Clean);
    assert_eq!(paths(&only_dst), ["a", "a/f", "b", "b/g"]);

    // Only the source synced: the file has no name at all.
    let mut only_src = m.clone();
    only_src.sync_dir(a).unwrap();
    only_src.power_loss(Cut::Clean);
    assert_eq!(paths(&only_src), ["a", "b"]);

    // Both: the rename is durable.
    m.sync_dir(a).unwrap();
    m.sync_dir(b).unwrap();
    m.power_loss(Cut::Clean);
    assert_eq!(paths(&m), ["a", "b", "b/g"]);
    assert_eq!(m.tree().file("b/g"), Some(&b"x"[..]));
}

#[test]
fn a_directory_durable_under_two_names_keeps_the_first_met() {
    let mut m = Model::default();
    let a = dir(&mut m, ROOT, "a");
    let b = dir(&mut m, ROOT, "b");
    dir(&mut m, a, "d");
    m.sync_all();
    m.rename(a, n("d"), b, n("d"), RenameMode::Replace).unwrap();
    m.sync_dir(b).unwrap();
    m.power_loss(Cut::Clean);
    // Breadth-first in name order meets a/d before b/d.
    assert_eq!(paths(&m), ["a", "a/d", "b"]);
}

#[test]
fn unlink_without_a_directory_fsync_brings_the_file_back() {
    let (mut m, _) = with_durable_state();
    m.unlink(ROOT, n("state")).unwrap();
    let mut crashed = m.clone();
    let lost = crashed.power_loss(Cut::Clean);
    assert_eq!(crashed.tree().file("state"), Some(&b"old"[..]));
    assert_eq!(lost.names_back, vec![PathBuf::from("state")]);
    m.sync_dir(ROOT).unwrap();
    m.power_loss(Cut::Clean);
    assert!(paths(&m).is_empty());
}

#[test]
fn rmdir_without_a_directory_fsync_brings_the_directory_back() {
    let mut m = Model::default();
    dir(&mut m, ROOT, "d");
    m.sync_dir(ROOT).unwrap();
    m.rmdir(ROOT, n("d")).unwrap();
    let mut crashed = m.clone();
    crashed.power_loss(Cut::Clean);
    assert_eq!(paths(&crashed), ["d"]);
    m.sync_dir(ROOT).unwrap();
    m.power_loss(Cut::Clean);
    assert!(paths(&m).is_empty());
}

#[test]
fn truncate_is_a_data_change_durable_at_file_fsync() {
    let (mut m, f) = with_durable_state();
    m.set_len(f, 1).unwrap();
    let mut crashed = m.clone();
    crashed.power_loss(Cut::Clean);
    assert_eq!(crashed.tree().file("state"), Some(&b"old"[..]));
    // fdatasync is enough for a size change.
    m.sync_data(f).unwrap();
    m.power_loss(Cut::Clean);
    assert_eq!(m.tree().file("state"), Some(&b"o"[..]));
}

#[test]
fn a_directory_fsync_does_not_sync_file_data() {
    let (mut m, f) = with_durable_state();
    m.write(f, 3, b"more").unwrap();
    m.sync_dir(ROOT).unwrap();
    m.power_loss(Cut::Clean);
    assert_eq!(m.tree().file("state"), Some(&b"old"[..]));
}

#[test]
fn link_and_symlink_are_durable_with_their_directory() {
    let (mut m, f) = with_durable_state();
    m.link(f, ROOT, n("again")).unwrap();
    m.create(
        ROOT,
        n("sym"),
        NodeSpec::Symlink {
            target: "state".into(),
        },
    )
    .unwrap();
    let mut crashed = m.clone();
    crashed.power_loss(Cut::Clean);
    assert_eq!(paths(&crashed), ["state"]);
    m.sync_dir(ROOT).unwrap();
    m.power_loss(Cut::Clean);
    assert_eq!(paths(&m), ["again", "state", "sym"]);
    assert_eq!(m.tree().file("again"), Some(&b"old"[..]));
    assert_eq!(
        m.tree().get("sym"),
        Some(&Node::Symlink {
            target: "state".into()
        })
    );
    // Both names are one inode after the power loss too.
    let ino = m.lookup(ROOT, n("again")).unwrap();
    assert_eq!(m.lookup(ROOT, n("state")), Some(ino));
}

#[test]
fn chmod_is_durable_at_fsync_but_not_at_fdatasync() {
    let (mut m, f) = with_durable_state();
    m.set_mode(f, 0o600).unwrap();
    let mut datasync = m.clone();
    datasync.sync_data(f).unwrap();
    datasync.power_loss(Cut::Clean);
    assert_eq!(
        datasync.tree().get("state"),
        Some(&Node::File {
            mode: 0o644,
            data: b"old".to_vec()
        })
    );
    m.sync_file(f).unwrap();
    m.power_loss(Cut::Clean);
    assert_eq!(
        m.tree().get("state"),
        Some(&Node::File {
            mode: 0o600,
            data: b"old".to_vec()
        })
    );
}

#[test]
fn exchange_and_noreplace() {
    let mut m = Model::default();
    let a = file(&mut m, ROOT, "a");
    let b = file(&mut m, ROOT, "b");
    assert_eq!(
        m.rename(ROOT, n("a"), ROOT, n("b"), RenameMode::NoReplace),
        Err(ModelError::Exists)
    );
    m.rename(ROOT, n("a"), ROOT, n("b"), RenameMode::Exchange)
        .unwrap();
    assert_eq!(m.lookup(ROOT, n("a")), Some(b));
    assert_eq!(m.lookup(ROOT, n("b")), Some(a));
}

#[test]
fn the_model_refuses_what_a_file_system_refuses() {
    let mut m = Model::default();
    let d = dir(&mut m, ROOT, "d");
    let e = dir(&mut m, d, "e");
    file(&mut m, ROOT, "f");
    assert_eq!(m.rmdir(ROOT, n("d")), Err(ModelError::NotEmpty));
    assert_eq!(m.unlink(ROOT, n("d")), Err(ModelError::IsDir));
    assert_eq!(m.rmdir(ROOT, n("f")), Err(ModelError::NotDir));
    assert_eq!(
        m.rename(ROOT, n("d"), e, n("x"), RenameMode::Replace),
        Err(ModelError::Loop)
    );
    assert_eq!(
        m.rename(ROOT, n("f"), ROOT, n("d"), RenameMode::Replace),
        Err(ModelError::IsDir)
    );
    assert_eq!(m.unlink(ROOT, n("nope")), Err(ModelError::NotFound));
    assert_eq!(
        m.create(ROOT, n("f"), NodeSpec::File { mode: 0 }),
        Err(ModelError::Exists)
    );
    assert_eq!(m.kind(e), Some(Kind::Dir));
    assert_eq!(m.path(e), Some(PathBuf::from("d/e")));
}

#[test]
fn a_torn_cut_keeps_a_prefix_of_the_unsynced_writes() {
    let (base, f) = with_durable_state();
    let mut seen_torn = false;
    let mut seen_lengths = std::collections::BTreeSet::new();
    for seed in 0..64 {
        let mut m = base.clone();
        m.write(f, 3, b"0123456789").unwrap();
        m.write(f, 13, b"abcdefghij").unwrap();
        let lost = m.power_loss(Cut::Torn { seed });
        let data = m.tree().file("state").unwrap().to_vec();
        let full = b"old0123456789abcdefghij";
        assert!(full.starts_with(&data), "seed {seed}: {data:?}");
        assert!(data.len() >= 3);
        assert_eq!(lost.files[0].kept_bytes, (data.len() - 3) as u64);
        seen_lengths.insert(data.len());
        seen_torn |= lost.torn_writes() == 1;
    }
    assert!(seen_torn, "some seed cuts inside a write");
    assert!(seen_lengths.len() > 5, "seeds choose different cuts");
}

#[test]
fn a_torn_cut_keeps_synced_data_and_drops_nothing_durable() {
    let (mut m, f) = with_durable_state();
    m.write(f, 0, b"NEW").unwrap();
    m.sync_data(f).unwrap();
    m.write(f, 3, b"tail").unwrap();
    for seed in 0..32 {
        let mut c = m.clone();
        c.power_loss(Cut::Torn { seed });
        let data = c.tree().file("state").unwrap().to_vec();
        assert!(b"NEWtail".starts_with(&data) && data.starts_with(b"NEW"));
    }
}

#[test]
fn torn_cuts_are_deterministic_for_a_seed() {
    let build = || {
        let mut m = Model::default();
        for i in 0..5 {
            let f = file(&mut m, ROOT, &format!("f{i}"));
            m.write(f, 0, &[b'a' + i as u8; 100]).unwrap();
            m.write(f, 50, &[b'z'; 100]).unwrap();
        }
        m.sync_dir(ROOT).unwrap();
        m
    };
    let mut one = build();
    let mut two = build();
    let lost_one = one.power_loss(Cut::Torn { seed: 7 });
    let lost_two = two.power_loss(Cut::Torn { seed: 7 });
    assert_eq!(one.tree(), two.tree());
    assert_eq!(lost_one, lost_two);
    let mut three = build();
    three.power_loss(Cut::Torn { seed: 8 });
    assert_ne!(one.tree(), three.tree(), "another seed cuts elsewhere");
}

#[test]
fn after_a_power_loss_everything_is_durable_and_renumbered() {
    let (mut m, f) = with_durable_state();
    m.write(f, 0, b"x").unwrap();
    m.power_loss(Cut::Clean);
    let g = m.lookup(ROOT, n("state")).unwrap();
    assert_ne!(g, f, "survivors get new inode numbers");
    assert!(!m.contains(f));
    let again = m.clone().power_loss(Cut::Clean);
    assert!(again.is_empty());
    assert_eq!(m.crash_tree(Cut::Clean), m.tree());
}

#[test]
fn crash_tree_previews_the_power_loss() {
    let (mut m, f) = with_durable_state();
    file(&mut m, ROOT, "new");
    m.write(f, 0, b"abcdef").unwrap();
    let preview = m.crash_tree(Cut::Torn { seed: 3 });
    m.power_loss(Cut::Torn { seed: 3 });
    assert_eq!(preview, m.tree());
}

#[test]
fn the_handles_a_harness_keeps_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<tern_statefs::Mounted>();
    shared::<tern_statefs::Lost>();
    shared::<tern_statefs::HeldOp>();
    shared::<Model>();
}
