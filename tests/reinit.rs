//! `reinit`: a process that claims it is given another `init` for a fresh
//! start instead of being replaced, and a restart after a crash always gets
//! a new process. What each start was is in the thread's stderr log, where
//! the adapter writes one line per start.

use tern_harness::contract::plugin::{Capability, Implementation, InitParams, Receiver};
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::World;
use tern_harness::implementations::adapter::{Limits, SubprocessImpl};
use tern_model::ledger::{LedgerConfig, LocalTime};
use tern_model::message::{Participant, Principal, ThreadId};

const BIN: &str = env!("CARGO_BIN_EXE_tern-sim");

/// The REQUEST `drafter:1` of docs/protocol.md section 11.
const REQUEST: &str = r#"{"tern":"0.1","id":"drafter:1","from":"drafter","to":["reviewer"],"thread":"design","reply":null,"act":"REQUEST","body":{"action":"Review the ACK rule in the supplied draft.","done_when":"Identify whether ACK implies agreement and explain why.","constraints":["Review only; do not edit files."],"authority_ref":null}}"#;

fn init() -> InitParams {
    let config = LedgerConfig::from_json(
        r#"{"participant":"reviewer","contexts":{"c1":{"drafter":"pk-drafter","reviewer":"pk-reviewer"}},"threads":{"design":"c1"},"grants":[],"policy":{"permitted_without_grant":["design"]}}"#,
    )
    .expect("the example's configuration");
    InitParams {
        participant: Participant::new("reviewer").unwrap(),
        principal: Principal::new("pk-reviewer").unwrap(),
        config,
    }
}

fn start(imp: &SubprocessImpl, storage: &Storage, world: &World) -> Box<dyn Receiver> {
    imp.start(
        &init(),
        storage.clone(),
        world.for_agent("reviewer", storage),
    )
    .expect("the agent starts")
}

fn holds_the_request(r: &mut Box<dyn Receiver>) -> bool {
    let view = r.view(&ThreadId::new("design").unwrap()).expect("a view");
    view.as_str().contains("drafter:1")
}

/// How many starts of each kind the log tells since it was last taken.
fn starts(imp: &SubprocessImpl) -> (usize, usize) {
    let log = String::from_utf8(imp.take_log().expect("a subprocess keeps logs")).unwrap();
    (
        log.matches("` started for reviewer").count(),
        log.matches("` started over (reinit) for reviewer").count(),
    )
}

#[test]
fn a_fresh_start_reuses_a_dismissed_process_and_a_restart_never_does() {
    let imp = SubprocessImpl::new(format!("{BIN} agent"), Limits::default()).unwrap();
    let world = World::new();
    let first = Storage::new();
    let mut r = start(&imp, &first, &world);
    assert!(r.identity().claims(Capability::Reinit));
    let principal = Principal::new("pk-drafter").unwrap();
    r.deliver(REQUEST.as_bytes(), &principal, LocalTime(1000))
        .expect("delivered");
    assert!(holds_the_request(&mut r));
    r.dismiss();
    drop(r);
    assert_eq!(starts(&imp), (1, 0));

    // A fresh start: the same process, told to start over, knows nothing
    // of the last session.
    let second = Storage::new();
    let mut r = start(&imp, &second, &world);
    assert_eq!(starts(&imp), (0, 1));
    assert!(!holds_the_request(&mut r), "a new session forgets the last");
    r.deliver(REQUEST.as_bytes(), &principal, LocalTime(1000))
        .expect("delivered");

    // A crash, then a restart on the same storage: a new process, which
    // finds the request in its state directory.
    r.kill();
    drop(r);
    second.crash();
    let mut r = start(&imp, &second, &world);
    assert_eq!(starts(&imp), (1, 0), "a restart is a new process");
    assert!(
        holds_the_request(&mut r),
        "recovered from its state directory"
    );

    // A process killed by a crash is never kept: the next fresh start
    // needs a new one.
    r.kill();
    drop(r);
    let third = Storage::new();
    let mut r = start(&imp, &third, &world);
    assert_eq!(starts(&imp), (1, 0));
    r.dismiss();
}

#[test]
fn a_process_that_does_not_claim_reinit_is_never_reused() {
    // The agent with `reinit` taken out of its claims.
    let command = format!(r#"{BIN} agent | sed -u 's/,"reinit"//'"#);
    let imp = SubprocessImpl::new(command, Limits::default()).unwrap();
    let world = World::new();
    let mut r = start(&imp, &Storage::new(), &world);
    assert!(r.identity().claims(Capability::Execute));
    assert!(!r.identity().claims(Capability::Reinit));
    r.dismiss();
    drop(r);
    let mut r = start(&imp, &Storage::new(), &world);
    assert_eq!(starts(&imp), (2, 0));
    r.dismiss();
}
