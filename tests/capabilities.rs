//! The protocol's capabilities of cost. `reinit`: a process that claims it
//! is given another `init` for a fresh start instead of being replaced, and
//! a restart after a crash always gets a new process (what each start was
//! is in the thread's stderr log, where the adapter writes one line per
//! start). `pipeline`: the views of a step go in one write to a process
//! that claims it, and one at a time to any other; the views after a
//! delivery go in its write, and are read whatever the harness asks next.

use std::time::Duration;
use tern_harness::contract::plugin::{Capability, Implementation, InitParams, Receiver};
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::World;
use tern_harness::implementations::adapter::{Limits, SubprocessImpl};

use tern_harness::contract::plugin::View;
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
        config: config.into(),
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
fn a_kept_process_goes_only_to_a_worker_on_its_core() {
    use tern_harness::implementations::affinity;
    let imp = SubprocessImpl::new(format!("{BIN} agent"), Limits::default()).unwrap();
    let imp = &imp;
    // Started and dismissed on one thread: kept, on that thread's core.
    let kept_on = std::thread::scope(|s| {
        s.spawn(|| {
            let mut r = start(imp, &Storage::new(), &World::new());
            r.dismiss();
            assert_eq!(starts(imp), (1, 0));
            affinity::home()
        })
        .join()
        .unwrap()
    });
    if kept_on.is_none() {
        // One core, or binding refused: every worker shares the pool.
        let mut r = start(imp, &Storage::new(), &World::new());
        assert_eq!(starts(imp), (0, 1));
        r.dismiss();
        return;
    }
    // Threads take the cores in turn: one of the next few is elsewhere,
    // and it starts a process of its own.
    let elsewhere = (0..16).find_map(|_| {
        std::thread::scope(|s| {
            s.spawn(|| {
                let home = affinity::home();
                (home != kept_on).then(|| {
                    let mut r = start(imp, &Storage::new(), &World::new());
                    let seen = starts(imp);
                    r.dismiss();
                    (home, seen)
                })
            })
            .join()
            .unwrap()
        })
    });
    let (home, seen) = elsewhere.expect("a thread on another core");
    assert!(home.is_some());
    assert_eq!(seen, (1, 0), "a process kept on another core is not taken");
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

/// Holds the first request whose op is `HELD` and answers it only when a
/// `view` comes after it, then answers that view. Harness and process wait
/// on each other for ever unless both requests come in one write: with
/// `HELD` a view, two views; with `HELD` a deliver, a delivery and the view
/// after it. `CLAIMS` is its list of capabilities.
const HOLDING: &str = r#"python3 -c '
import json, sys
def answer(seq, ok):
    print(json.dumps({"seq": seq, "ok": ok}, separators=(",", ":"), sort_keys=True), flush=True)
def reply(req):
    if req["op"] == "view":
        return {"commitments": [], "effects": [], "messages": [], "pending": [], "revisions": [], "thread": req["thread"]}
    if req["op"] == "deliver":
        return {"events": [{"event": "delivered", "id": "drafter:1", "thread": "design", "outcome": "accepted"}], "outgoing": []}
    return None
held = None
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "init":
        answer(req["seq"], {"name": "holding", "capabilities": CLAIMS})
    elif req["op"] == "HELD" and held is None:
        held = req
    elif req["op"] == "view" and held is not None:
        answer(held["seq"], reply(held))
        held = None
        answer(req["seq"], reply(req))
    else:
        answer(req["seq"], reply(req))
'"#;

fn holding(held: &str, claims: &str) -> SubprocessImpl {
    let limits = Limits {
        request: Duration::from_millis(500),
        ..Limits::default()
    };
    let command = HOLDING.replace("HELD", held).replace("CLAIMS", claims);
    SubprocessImpl::new(command, limits).unwrap()
}

fn two_views(claims: &str) -> Result<Vec<View>, String> {
    let imp = holding("view", claims);
    let storage = Storage::new();
    let mut r = start(&imp, &storage, &World::new());
    // The views it gives, expected: the views of empty threads.
    let wanted: Vec<(ThreadId, View)> = ["design", "ops"]
        .iter()
        .map(|t| {
            let empty = serde_json::json!({"commitments": [], "effects": [], "messages": [],
                "pending": [], "revisions": [], "thread": t});
            (ThreadId::new(t).unwrap(), View::from_value(&empty))
        })
        .collect();
    r.views_against(&wanted).map_err(|e| e.to_string())
}

#[test]
fn the_views_of_a_step_go_in_one_write_to_a_process_that_claims_pipeline() {
    let views = two_views(r#"["pipeline"]"#).expect("both views, in one round trip");
    assert_eq!(views.len(), 2);
    // The answers were the bytes expected, so they are those views.
    assert!(views[0].as_str().contains(r#""thread":"design""#));
    assert!(views[1].as_str().contains(r#""thread":"ops""#));
}

#[test]
fn a_process_that_does_not_claim_pipeline_gets_one_request_at_a_time() {
    let error = two_views("[]").expect_err("the harness waits for each answer");
    assert!(error.contains("did not answer `view`"), "{error}");
}

/// Claims `reinit`, then exits when given a second `init`.
const ONE_SESSION: &str = r#"python3 -c '
import json, sys
sessions = 0
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "init":
        sessions += 1
        if sessions > 1:
            sys.exit(3)
        print(json.dumps({"seq": req["seq"], "ok": {"name": "one session", "capabilities": ["reinit"]}}), flush=True)
    else:
        print(json.dumps({"seq": req["seq"], "ok": None}), flush=True)
'"#;

#[test]
fn a_false_reinit_claim_is_named_in_the_verdict() {
    let imp = SubprocessImpl::new(ONE_SESSION, Limits::default()).unwrap();
    let world = World::new();
    let mut r = start(&imp, &Storage::new(), &world);
    r.dismiss();
    drop(r);
    let second = Storage::new();
    let error = match imp.start(
        &init(),
        second.clone(),
        world.for_agent("reviewer", &second),
    ) {
        Ok(_) => panic!("a process that exits cannot start a session"),
        Err(e) => e.to_string(),
    };
    assert!(error.contains("exited"), "{error}");
    assert!(
        error.contains(
            "at an `init` that starts a new session in a process kept from an earlier one, \
             as its claim `reinit` allows: `python3"
        ),
        "{error}"
    );
}

fn design() -> ThreadId {
    ThreadId::new("design").unwrap()
}

/// The view the model gives after `frames`, as the harness expects it.
fn expected_after(frames: &[&str], thread: &ThreadId) -> View {
    let mut ledger = tern_model::ledger::Ledger::new(init().config);
    for frame in frames {
        ledger.deliver(
            frame.as_bytes(),
            &Principal::new("pk-drafter").unwrap(),
            LocalTime(1_000),
        );
    }
    ledger.view_text(thread)
}

#[test]
fn the_views_after_a_delivery_go_in_its_write() {
    let imp = holding("deliver", r#"["pipeline"]"#);
    let storage = Storage::new();
    let mut r = start(&imp, &storage, &World::new());
    let empty = View::from_value(&serde_json::json!({"commitments": [], "effects": [],
        "messages": [], "pending": [], "revisions": [], "thread": "design"}));
    r.views_follow(&[design()]);
    let delivered = r
        .deliver(
            REQUEST.as_bytes(),
            &Principal::new("pk-drafter").unwrap(),
            LocalTime(1_000),
        )
        .expect("answered once the view request came with the frame");
    assert_eq!(delivered.events.len(), 1);
    let views = r
        .views_against(&[(design(), empty.clone())])
        .expect("the view, already asked");
    assert_eq!(views, vec![empty]);
}

#[test]
fn views_asked_with_a_delivery_are_read_whatever_the_harness_asks_next() {
    let imp = SubprocessImpl::new(format!("{BIN} agent"), Limits::default()).unwrap();
    let storage = Storage::new();
    let world = World::new();
    let mut r = start(&imp, &storage, &world);
    let drafter = Principal::new("pk-drafter").unwrap();
    // Guessed right: the views asked are the ones written with the frame.
    r.views_follow(&[design()]);
    r.deliver(REQUEST.as_bytes(), &drafter, LocalTime(1_000))
        .expect("delivered");
    let expected = expected_after(&[REQUEST], &design());
    assert!(expected.as_str().contains("drafter:1"));
    let views = r
        .views_against(&[(design(), expected.clone())])
        .expect("the view");
    assert_eq!(views, vec![expected.clone()]);
    // Guessed wrong: another thread is asked, then a single view, then a
    // delivery. Each gets its own answer, not one left over.
    let ops = ThreadId::new("ops").unwrap();
    for next in 0..3 {
        r.views_follow(&[design()]);
        let d = r
            .deliver(REQUEST.as_bytes(), &drafter, LocalTime(1_000))
            .expect("a duplicate");
        assert!(format!("{:?}", d.events).contains("Duplicate"), "{d:?}");
        match next {
            0 => {
                let empty = expected_after(&[], &ops);
                let views = r.views_against(&[(ops.clone(), empty.clone())]).unwrap();
                assert_eq!(views, vec![empty]);
            }
            1 => assert_eq!(r.view(&design()).unwrap(), expected),
            _ => {}
        }
    }
    assert!(holds_the_request(&mut r));
    // Answers still unread when the session ends: the process is not kept.
    r.views_follow(&[design()]);
    r.deliver(REQUEST.as_bytes(), &drafter, LocalTime(1_000))
        .expect("a duplicate");
    assert_eq!(starts(&imp), (1, 0));
    r.dismiss();
    drop(r);
    let mut r = start(&imp, &Storage::new(), &world);
    assert_eq!(
        starts(&imp),
        (1, 0),
        "a fresh process, not the one with answers unread"
    );
    assert!(!holds_the_request(&mut r));
    r.dismiss();
}
