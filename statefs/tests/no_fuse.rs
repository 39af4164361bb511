//! TERN_SIM_NO_FUSE makes FUSE look unavailable, with the reason given, so
//! that a harness's fallback can be tested on a machine that has FUSE.
//! (Its own test binary: it changes the environment of the process.)

use tern_statefs::{mount, probe, MountError, Unavailable, NO_FUSE_ENV};

#[test]
fn the_variable_makes_probe_and_mount_refuse_with_its_reason() {
    std::env::set_var(NO_FUSE_ENV, "FUSE switched off for this test");
    let refused = Unavailable::new("FUSE switched off for this test");
    assert_eq!(probe(), Err(refused.clone()));
    let tmp = tempfile::tempdir().unwrap();
    let (backing, mnt) = (tmp.path().join("b"), tmp.path().join("m"));
    std::fs::create_dir(&backing).unwrap();
    std::fs::create_dir(&mnt).unwrap();
    match mount(&backing, &mnt) {
        Err(MountError::Unavailable(why)) => assert_eq!(why, refused),
        other => panic!("mounted anyway: {other:?}"),
    }
    assert_eq!(
        refused.to_string(),
        "FUSE is unavailable: FUSE switched off for this test"
    );
}
