//! The adapter never waits on a child longer than the request timeout, even
//! when the child stops reading a request bigger than a pipe's buffer.

use std::sync::mpsc;
use std::time::Duration;

use tern_harness::contract::plugin::{Implementation, InitParams};
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::World;
use tern_harness::implementations::adapter::{Limits, SubprocessImpl};
use tern_model::ledger::{LedgerConfig, LocalTime};
use tern_model::message::{Participant, Principal};

/// Answers `init`, then never reads its input again.
const DEAF: &str = r#"python3 -c '
import json, sys, time
req = json.loads(sys.stdin.readline())
print(json.dumps({"seq": req["seq"], "ok": {"name": "deaf"}}), flush=True)
time.sleep(3600)
'"#;

#[test]
fn a_request_the_child_does_not_read_fails_within_the_timeout() {
    let (tx, rx) = mpsc::channel();
    // On a thread, so that a hang is a failure rather than a stuck test.
    std::thread::spawn(move || {
        let limits = Limits {
            request: Duration::from_millis(300),
            startup: Duration::from_secs(10),
            ..Limits::default()
        };
        let imp = SubprocessImpl::new(DEAF, limits).expect("a state root");
        let storage = Storage::new();
        let world = World::new().for_agent("alice", &storage);
        let init = InitParams {
            participant: Participant::new("alice").unwrap(),
            principal: Principal::new("pk:alice").unwrap(),
            config: LedgerConfig::open_auditor().into(),
        };
        let mut receiver = match imp.start(&init, storage, world) {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.send(Err(format!("start: {e}")));
                return;
            }
        };
        // Far more than a pipe holds (64 KiB on Linux).
        let frame = vec![b'x'; 1 << 20];
        let principal = Principal::new("pk:bob").unwrap();
        let answer = receiver.deliver(&frame, &principal, LocalTime(0));
        let _ = tx.send(answer.map(|_| ()).map_err(|e| e.to_string()));
    });
    let result = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("deliver hangs: no answer within 30 s");
    let error = result.expect_err("a child that does not read cannot answer");
    assert!(
        error.contains("did not read its input within 300 ms"),
        "{error}"
    );
    assert!(error.contains("of `deliver` (seq 2)"), "{error}");
}
