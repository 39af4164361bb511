//! `tern-sim check` end to end: output formats and exit statuses.

mod common;

use common::{json_lines, run_with_stdin as run};

use serde_json::Value;

const WORKED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/worked-exchange.jsonl"
);

#[test]
fn the_worked_exchange_is_valid() {
    let out = run(&["check", WORKED], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("4 messages checked: 4 valid, 0 invalid"),
        "{stdout}"
    );
}

#[test]
fn json_output_has_one_record_per_message_in_order() {
    let worked = std::fs::read_to_string(WORKED).unwrap();
    let first = worked.lines().next().unwrap();
    let input = format!(
        "{first}\n{{\"a\":1,\"a\":2}}\n\n{}\n[1]\n",
        first.replace("\"0.1\"", "\"9\"")
    );
    let out = run(&["check", "--format", "json", "-"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let records = json_lines(&out);
    assert_eq!(records.len(), 5);
    let lines: Vec<u64> = records
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [1, 2, 3, 4, 5]);
    assert_eq!(records[0]["valid"], true);
    assert_eq!(records[0]["act"], "REQUEST");
    assert_eq!(records[1]["valid"], false);
    assert_eq!(records[1]["error"]["class"], "parse");
    assert_eq!(records[1]["error"]["pointer"], "/a");
    assert_eq!(records[2]["error"]["class"], "parse");
    assert_eq!(records[3]["error"]["class"], "version");
    assert_eq!(records[3]["error"]["pointer"], "/tern");
    assert_eq!(records[4]["error"]["class"], "envelope");
    assert!(records[4]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("JSON object"));
}

#[test]
fn human_output_names_file_line_column_pointer_and_class() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.jsonl");
    let worked = std::fs::read_to_string(WORKED).unwrap();
    let second = worked
        .lines()
        .nth(1)
        .unwrap()
        .replace("\"due\":null", "\"due\":7");
    std::fs::write(
        &path,
        format!("{}\n{second}\n", worked.lines().next().unwrap()),
    )
    .unwrap();
    let out = run(&["check", path.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let first = stdout.lines().next().unwrap();
    let expected_prefix = format!("{}:2:", path.display());
    assert!(first.starts_with(&expected_prefix), "{first}");
    assert!(first.contains("error[body] at /body/due:"), "{first}");
    assert!(
        stdout.contains("2 messages checked: 1 valid, 1 invalid"),
        "{stdout}"
    );
}

#[test]
fn a_pretty_printed_document_is_checked_whole() {
    let worked = std::fs::read_to_string(WORKED).unwrap();
    let value: Value = serde_json::from_str(worked.lines().nth(2).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.json");
    std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    let out = run(
        &[
            "check",
            "--document",
            path.to_str().unwrap(),
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(json_lines(&out)[0]["act"], "REPORT");

    // The same document as JSON lines is many broken frames.
    let out = run(&["check", path.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));

    // A document error reports the line inside the document.
    let broken = serde_json::to_string_pretty(&value)
        .unwrap()
        .replace("\"blocked\"", "\"stuck\"");
    std::fs::write(&path, broken).unwrap();
    let out = run(
        &[
            "check",
            "--document",
            path.to_str().unwrap(),
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let record = &json_lines(&out)[0];
    assert_eq!(record["error"]["pointer"], "/body/state");
    assert!(record["error"]["line"].as_u64().unwrap() > 1, "{record}");
}

#[test]
fn invalid_utf8_lines_are_reported_not_fatal() {
    let out = run(
        &["check", "--format", "json", "-"],
        b"{\"a\":\"\xff\"}\n{}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let records = json_lines(&out);
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["error"]["class"], "parse");
    assert_eq!(records[1]["error"]["class"], "envelope");
}

#[test]
fn an_oversized_line_is_one_parse_error_and_reading_goes_on() {
    let mut input = vec![b'['; 2 << 20];
    input.extend_from_slice(b"\n{}\n");
    let out = run(&["check", "--format", "json", "-"], &input);
    assert_eq!(out.status.code(), Some(1));
    let records = json_lines(&out);
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["error"]["class"], "parse");
    assert!(records[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("exceeds the limit"));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let out = run(&["check", "/definitely/not/here.jsonl"], b"");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("cannot read /definitely/not/here.jsonl"),
        "{stderr}"
    );

    assert_eq!(run(&["check"], b"").status.code(), Some(2));
    assert_eq!(
        run(&["check", "--format", "xml", "-"], b"").status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["check", "a", "--document", "b"], b"").status.code(),
        Some(2)
    );
    assert_eq!(run(&["frobnicate"], b"").status.code(), Some(2));
    assert_eq!(run(&["--version"], b"").status.code(), Some(0));
}

#[test]
fn empty_input_is_zero_messages_and_success() {
    let out = run(&["check", "-"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("0 messages checked"));
}

// ---- --stateful ---------------------------------------------------------------

#[test]
fn stateful_reports_each_outcome_and_releases_on_the_released_line() {
    let worked = std::fs::read_to_string(WORKED).unwrap();
    let reversed: Vec<&str> = worked.lines().rev().collect();
    let out = run(
        &["check", "--stateful", "--format", "json", "-"],
        reversed.join("\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let events = json_lines(&out);
    assert_eq!(events.len(), 7);
    assert_eq!(events[0]["outcome"], "pending");
    assert_eq!(events[0]["missing"], serde_json::json!(["reviewer:2"]));
    let released: Vec<(u64, &str)> = events
        .iter()
        .filter(|e| e["event"] == "released")
        .map(|e| (e["line"].as_u64().unwrap(), e["id"].as_str().unwrap()))
        .collect();
    assert_eq!(
        released,
        [(3, "reviewer:1"), (2, "reviewer:2"), (1, "drafter:2")]
    );
}

#[test]
fn stateful_exits_1_on_rejections_or_messages_left_pending() {
    let worked = std::fs::read_to_string(WORKED).unwrap();
    let commit_only = worked.lines().nth(1).unwrap();
    let out = run(&["check", "--stateful", "-"], commit_only.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("pending reviewer:1: waiting for drafter:1"),
        "{stdout}"
    );
    assert!(stdout.contains("1 messages still pending"), "{stdout}");

    // Reusing an ID for other content.
    let first = worked.lines().next().unwrap();
    let input = format!(
        "{first}\n{}\n",
        first.replace("Review the ACK rule", "Delete the draft")
    );
    let out = run(
        &["check", "--stateful", "--format", "json", "-"],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let events = json_lines(&out);
    assert_eq!(events[1]["error"]["class"], "id_conflict");
    assert_eq!(events[2]["event"], "invalidated");
    assert_eq!(events[2]["line"], 1);
}

#[test]
fn stateful_with_contexts_and_a_participants_view() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ledger.json");
    std::fs::write(
        &config,
        r#"{"contexts": {"c": {"drafter": "pk-d", "reviewer": "pk-r"}}, "threads": {"design": "c"}}"#,
    )
    .unwrap();
    let worked = std::fs::read_to_string(WORKED).unwrap();
    let cfg = config.to_str().unwrap();
    let out = run(&["check", "--stateful", "--context", cfg, WORKED], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    let stranger = worked
        .lines()
        .next()
        .unwrap()
        .replace("\"reviewer\"]", "\"editor\"]");
    let out = run(
        &[
            "check",
            "--stateful",
            "--format",
            "json",
            "--context",
            cfg,
            "-",
        ],
        stranger.as_bytes(),
    );
    assert_eq!(json_lines(&out)[0]["error"]["class"], "unknown_participant");

    let other_thread = worked
        .lines()
        .next()
        .unwrap()
        .replace("\"design\"", "\"ops\"");
    let out = run(
        &[
            "check",
            "--stateful",
            "--format",
            "json",
            "--context",
            cfg,
            "-",
        ],
        other_thread.as_bytes(),
    );
    assert_eq!(json_lines(&out)[0]["error"]["class"], "unknown_thread");

    let out = run(
        &[
            "check",
            "--stateful",
            "--format",
            "json",
            "--as",
            "editor",
            WORKED,
        ],
        b"",
    );
    let events = json_lines(&out);
    assert!(
        events
            .iter()
            .all(|e| e["error"]["class"] == "not_addressed"),
        "{events:?}"
    );

    let out = run(
        &["check", "--stateful", "--views", "--format", "json", WORKED],
        b"",
    );
    let last = json_lines(&out).pop().unwrap();
    assert_eq!(last["view"]["commitments"][0]["progress"], "blocked");
}

#[test]
fn stateful_configuration_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ledger.json");
    std::fs::write(&config, r#"{"threads": {"design": "c"}}"#).unwrap();
    let out = run(
        &[
            "check",
            "--stateful",
            "--context",
            config.to_str().unwrap(),
            WORKED,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("`contexts` and `threads` must be given together"),
        "{stderr}"
    );
    std::fs::write(
        &config,
        r#"{"contexts": {}, "threads": {"design": "nowhere"}}"#,
    )
    .unwrap();
    let out = run(
        &[
            "check",
            "--stateful",
            "--context",
            config.to_str().unwrap(),
            WORKED,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("not defined"));
    assert_eq!(
        run(&["check", "--context", "x", WORKED], b"").status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["check", "--stateful", "--as", "a:b", WORKED], b"")
            .status
            .code(),
        Some(2)
    );
}
