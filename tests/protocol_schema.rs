//! The protocol's schema and `--strict-protocol`: the schema in docs/ is
//! the one the code generates, the reference agent's lines have its exact
//! form, and a line that only the lenient reading lets through is caught
//! when strictness is asked for, with its pointer.

mod common;

use common::{run_in, stdout, BIN};

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.schema.json");

/// `TERN_SIM_BLESS=1 cargo test --test protocol_schema` writes the file
/// after a change to the protocol's types.
#[test]
fn the_schema_in_docs_is_the_one_the_types_give() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), &["schema"]);
    assert_eq!(o.status.code(), Some(0));
    let generated = stdout(&o);
    if std::env::var_os("TERN_SIM_BLESS").is_some() {
        std::fs::write(SCHEMA, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(SCHEMA).unwrap_or_default();
    assert!(
        generated == checked_in,
        "docs/protocol.schema.json is out of date: run `TERN_SIM_BLESS=1 cargo test --test protocol_schema`"
    );
    let schema: serde_json::Value = serde_json::from_str(&generated).unwrap();
    for definition in [
        "Request",
        "Line",
        "InitAnswer",
        "DeliverAnswer",
        "ExecuteAnswer",
        "ViewAnswer",
        "EventLine",
        "Seq",
        "InitLine",
        "DeliverLine",
        "ExecuteLine",
        "ViewLine",
        "ShutdownLine",
    ] {
        assert!(
            schema["$defs"][definition].is_object(),
            "no definition {definition}"
        );
    }
    // The answers are closed, so a stray member is a deviation in any
    // validator, as it is for --strict-protocol.
    for closed in ["InitAnswer", "DeliverAnswer", "EventLine", "ViewAnswer"] {
        assert_eq!(
            schema["$defs"][closed]["additionalProperties"],
            serde_json::json!(false),
            "{closed}"
        );
    }
}

fn agent() -> String {
    format!("{BIN} agent")
}

#[test]
fn the_reference_agent_has_the_exact_form_of_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let imp = agent();
    let o = run_in(
        dir.path(),
        &[
            "run",
            "--impl",
            &imp,
            "--strict-protocol",
            "--seeds",
            "3",
            "--agents",
            "3",
            "--steps",
            "60",
            "--faults",
            "--seed",
            "5",
            "--jobs",
            "1",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        stdout(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run_in(
        dir.path(),
        &[
            "certify",
            "--impl",
            &imp,
            "--strict-protocol",
            "--only",
            "execution",
            "--seeds",
            "0",
            "--no-explore",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "a partial run never certifies");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r/report.json")).unwrap()).unwrap();
    let cases = report["implementations"][0]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 15, "the execution cases");
    for case in cases {
        assert_eq!(case["status"], "pass", "{case}");
    }
}

/// The agent's answers with a member the protocol does not have, added on
/// the way out: the lenient reading ignores it, strictness names it.
#[test]
fn a_stray_member_passes_the_lenient_reading_and_fails_the_strict_one() {
    let dir = tempfile::tempdir().unwrap();
    let imp =
        format!("{BIN} agent | sed -u 's/\"ok\":{{\"events\"/\"ok\":{{\"outgoin\":[],\"events\"/'");
    let args = |strict: bool| {
        let mut a = vec![
            "run",
            "--impl",
            &imp,
            "--seeds",
            "1",
            "--agents",
            "2",
            "--steps",
            "20",
            "--seed",
            "3",
            "--no-shrink",
            "--jobs",
            "1",
        ];
        if strict {
            a.push("--strict-protocol");
        }
        a
    };
    let lenient = run_in(dir.path(), &args(false));
    assert_eq!(
        lenient.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&lenient.stderr)
    );
    let strict = run_in(dir.path(), &args(true));
    assert_eq!(strict.status.code(), Some(1));
    let said = stdout(&strict);
    assert!(
        said.contains("breaks the protocol's form")
            && said.contains("at /ok/outgoin: a member the protocol does not have here")
            && said.contains("the line: {\"seq\":"),
        "{said}"
    );
}

/// The agent's seqs rewritten as `2.0`: the same number, so the same seq,
/// to the schema, to strict mode and to the harness's own reading alike.
#[test]
fn a_seq_is_read_by_value_under_strict_mode_and_without() {
    let dir = tempfile::tempdir().unwrap();
    let imp = format!("{BIN} agent | sed -u 's/^{{\"seq\":\\([0-9]*\\),/{{\"seq\":\\1.0,/'");
    for strict in [false, true] {
        let mut args = vec![
            "run",
            "--impl",
            &imp,
            "--seeds",
            "1",
            "--agents",
            "2",
            "--steps",
            "20",
            "--seed",
            "3",
            "--no-shrink",
            "--jobs",
            "1",
        ];
        if strict {
            args.push("--strict-protocol");
        }
        let o = run_in(dir.path(), &args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "strict: {strict}\n{}{}",
            stdout(&o),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
