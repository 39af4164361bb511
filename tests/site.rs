//! `tern-sim site` on real certifications: a mutant, the reference, and
//! the mutant "fixed" in a later version (the reference's report under
//! the mutant's name, as a vendor's next release would be).

mod common;

use std::collections::BTreeMap;
use std::path::{Component, Path};

use common::{run_in, stdout};
use serde_json::Value;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file under `dir`, by its path relative to it, with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// `a/b/../c` as `a/c`.
fn normalize(p: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

/// Every `href` and `src` value in `html`.
fn links(html: &str) -> Vec<String> {
    ["href=\"", "src=\""]
        .iter()
        .flat_map(|attr| html.split(attr).skip(1))
        .filter_map(|s| s.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// The cells of the matrix row of clause `id`, after its first cell.
fn matrix_row(matrix: &str, id: &str) -> Vec<String> {
    let start = matrix
        .find(&format!("<tr id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no row for {id}"));
    let row = &matrix[start..];
    let row = &row[..row.find("</tr>").unwrap()];
    row.split("<td").skip(2).map(str::to_owned).collect()
}

/// A site's files, by path, with their bytes.
type Site = BTreeMap<String, Vec<u8>>;

/// The text of the site's file `name`.
fn text(files: &Site, name: &str) -> String {
    String::from_utf8(
        files
            .get(name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone(),
    )
    .unwrap()
}

/// Certifies in `dir`, expecting `status`.
fn certify(dir: &Path, args: &[&str], status: i32) {
    let mut all = vec!["certify"];
    all.extend_from_slice(args);
    let o = run_in(dir, &all);
    assert_eq!(
        o.status.code(),
        Some(status),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}

#[test]
fn a_site_of_two_implementations_and_three_versions() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    certify(
        dir,
        &[
            "--mutant",
            "trusts-from",
            "--seeds",
            "5",
            "--no-explore",
            "--report-dir",
            "mutant",
        ],
        1,
    );
    certify(
        dir,
        &["--seeds", "5", "--no-explore", "--report-dir", "reference"],
        0,
    );
    // The mutant's next release passes everything: the reference's
    // report under the mutant's name and a later version.
    let mut fixed: Value =
        serde_json::from_slice(&std::fs::read(dir.join("reference/report.json")).unwrap()).unwrap();
    fixed["implementations"][0]["name"] = "tern-sim mutant trusts-from".into();
    fixed["implementations"][0]["version"] = "0.2.0".into();
    std::fs::create_dir(dir.join("fixed")).unwrap();
    std::fs::write(
        dir.join("fixed/report.json"),
        serde_json::to_string_pretty(&fixed).unwrap(),
    )
    .unwrap();

    let inputs = [
        "mutant/report.json",
        "fixed/report.json",
        "reference/report.json",
    ];
    let site = |out: &str| {
        let mut args = vec!["site"];
        args.extend_from_slice(&inputs);
        args.extend_from_slice(&["--out", out]);
        let o = run_in(dir, &args);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        assert!(
            stdout(&o).contains("3 report(s), 2 implementation(s), 3 version(s)"),
            "{}",
            stdout(&o)
        );
        tree(&dir.join(out))
    };
    let files = site("site");

    let mutant_page = index_lists_every_version(&files);
    matrix_and_history_show_the_fix(dir, &files, mutant_page);
    every_link_stays_in_the_site(&files);
    assert_eq!(
        files["reports/01-tern-sim-mutant-trusts-from-0.1.0/report.json"],
        std::fs::read(dir.join("mutant/report.json")).unwrap()
    );
    // The mutant's shrunk run is copied beside its page.
    let traces: Vec<&String> = files.keys().filter(|n| n.contains("/traces/")).collect();
    assert!(!traces.is_empty(), "{:?}", files.keys());
    for name in traces {
        let inside = name.splitn(3, '/').nth(2).unwrap();
        assert_eq!(
            files[name],
            std::fs::read(dir.join("mutant").join(inside)).unwrap(),
            "{name}"
        );
    }

    // The same reports give the same bytes, in a new folder or over the
    // site already there.
    assert_eq!(site("again"), files);
    assert_eq!(site("site"), files);
    let staged: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(staged.is_empty(), "left behind: {staged:?}");
}

/// The index of `a_site_of_two_implementations_and_three_versions`: a row
/// per implementation and version, with its level. The mutant's page.
fn index_lists_every_version(files: &Site) -> &'static str {
    let index = text(files, "index.html");
    let mutant_page = "implementations/tern-sim-mutant-trusts-from.html";
    assert!(
        index.contains(&format!(
            "<a href=\"{mutant_page}\">tern-sim mutant trusts-from</a>"
        )),
        "{index}"
    );
    assert!(
        index
            .contains("<a href=\"implementations/tern-sim-reference.html\">tern-sim reference</a>"),
        "{index}"
    );
    let rows: Vec<&str> = index.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 3, "{index}");
    assert!(
        rows[0].contains("<code>0.1.0</code>") && rows[0].contains("level none"),
        "{}",
        rows[0]
    );
    assert!(
        rows[0].contains("reports/01-tern-sim-mutant-trusts-from-0.1.0/report.html"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains("<code>0.2.0</code>") && rows[1].contains("level profile"),
        "{}",
        rows[1]
    );
    assert!(
        rows[2].contains("tern-sim reference") && rows[2].contains("level profile"),
        "{}",
        rows[2]
    );
    mutant_page
}

/// The matrix and the history of that site: a clause the mutant fails,
/// failing in its first version only and linked to the failure in that
/// report's page; the case and the clause resolved in 0.2.0.
fn matrix_and_history_show_the_fix(dir: &Path, files: &Site, mutant_page: &str) {
    // The matrix: a clause the mutant fails, failing in its first
    // version only, linked to the failure in that report's page.
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.join("mutant/report.json")).unwrap()).unwrap();
    let failing = report["implementations"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["status"] == "fail")
        .expect("the mutant fails a case");
    let case = failing["id"].as_str().unwrap();
    let clause = failing["clauses"][0]["id"].as_str().unwrap();
    let matrix = text(files, "matrix.html");
    let cells = matrix_row(&matrix, clause);
    assert_eq!(cells.len(), 3, "{cells:?}");
    assert!(cells[0].contains("class=\"cell fail\""), "{}", cells[0]);
    assert!(
        cells[0].contains(&format!(
            "reports/01-tern-sim-mutant-trusts-from-0.1.0/report.html#trusts-from-{case}"
        )),
        "{}",
        cells[0]
    );
    assert!(cells[1].contains("class=\"cell pass\""), "{}", cells[1]);
    assert!(cells[2].contains("class=\"cell pass\""), "{}", cells[2]);

    // The history: the case and the clause resolved in 0.2.0.
    let history = text(files, mutant_page);
    let step = &history[history
        .find("<code>0.1.0</code> → <code>0.2.0</code>")
        .expect("a step")..];
    let resolved = &step[step.find("resolved case(s)").expect("resolved cases")..];
    assert!(resolved.contains(&format!("<code>{case}</code>")), "{step}");
    let clauses = &step[step.find("resolved clause(s)").expect("resolved clauses")..];
    assert!(clauses.contains(&format!("matrix.html#{clause}")), "{step}");
}

/// Every link of the site leads to a file of it, and every fragment to an
/// element of it; nothing is loaded from elsewhere.
fn every_link_stays_in_the_site(files: &Site) {
    for (name, bytes) in files {
        let content = String::from_utf8_lossy(bytes);
        let own = content.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        for bad in ["http://", "https://", "<script"] {
            assert!(!own.contains(bad), "{name} holds {bad}");
        }
        if !name.ends_with(".html") {
            continue;
        }
        let folder = Path::new(name).parent().unwrap();
        for link in links(&content) {
            let (file, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                name.clone()
            } else {
                normalize(&folder.join(file))
            };
            let Some(bytes) = files.get(&target) else {
                panic!("{name} links to {link}: no {target} in the site");
            };
            if !fragment.is_empty() {
                let html = String::from_utf8_lossy(bytes);
                assert!(
                    html.contains(&format!("id=\"{fragment}\"")),
                    "{name} links to {link}: no such element"
                );
            }
        }
    }
}

#[test]
fn a_report_copied_without_its_folder_gets_a_page_without_dead_links() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    certify(
        dir,
        &[
            "--mutant",
            "trusts-from",
            "--seeds",
            "5",
            "--no-explore",
            "--report-dir",
            "mutant",
        ],
        1,
    );
    std::fs::create_dir(dir.join("alone")).unwrap();
    std::fs::copy(
        dir.join("mutant/report.json"),
        dir.join("alone/report.json"),
    )
    .unwrap();
    let o = run_in(dir, &["site", "alone/report.json", "--out", "site"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "alone/report.json names traces/trusts-from-seed-1.jsonl, which is not beside it"
        ),
        "{}",
        stderr(&o)
    );
    let files = tree(&dir.join("site"));
    let page = String::from_utf8(
        files["reports/01-tern-sim-mutant-trusts-from-0.1.0/report.html"].clone(),
    )
    .unwrap();
    assert!(!page.contains("href=\"traces/"), "{page}");
    assert!(
        !files.keys().any(|k| k.contains("traces/")),
        "{:?}",
        files.keys()
    );
}

#[test]
fn a_file_that_is_not_a_report_is_named_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("notes.json"), b"{\"schema\": \"something else\"}").unwrap();
    let o = run_in(dir, &["site", "notes.json", "--out", "site"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("notes.json: not a tern-sim report"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("site").exists());

    let o = run_in(dir, &["site", "absent.json", "--out", "site"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("absent.json: cannot read"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("site").exists());

    // A folder that is not a site is left alone.
    std::fs::create_dir(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/keep.txt"), b"mine").unwrap();
    let o = run_in(dir, &["site", "notes.json", "--out", "mine"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("mine: holds files that are not a site"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(dir.join("mine/keep.txt")).unwrap(), b"mine");
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
