//! The CI examples of docs/scale.md (examples/ci/) parse, and every
//! tern-sim command in them names a subcommand and flags that exist.

mod common;

use std::path::Path;
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/ci")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn yaml(name: &str) -> Yaml {
    let mut docs =
        YamlLoader::load_from_str(&example(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(docs.len(), 1, "{name}: one document");
    docs.remove(0)
}

/// Every `run:` or `script:` text in a workflow, wherever it is.
fn scripts(y: &Yaml, out: &mut Vec<String>) {
    match y {
        Yaml::Hash(h) => {
            for (k, v) in h {
                let key = k.as_str().unwrap_or_default();
                match (key, v) {
                    ("run", Yaml::String(s)) => out.push(s.clone()),
                    ("script" | "before_script", Yaml::Array(lines)) => {
                        out.extend(lines.iter().filter_map(|l| l.as_str().map(str::to_owned)))
                    }
                    _ => scripts(v, out),
                }
            }
        }
        Yaml::Array(a) => a.iter().for_each(|v| scripts(v, out)),
        _ => {}
    }
}

/// Checks each `tern-sim SUB --flag...` in `text` against `tern-sim SUB
/// --help`; returns the subcommands seen.
fn check_commands(name: &str, text: &str) -> Vec<String> {
    let mut seen = Vec::new();
    // Lines continued with a backslash are one command.
    let joined = text.replace("\\\n", " ");
    for line in joined.lines() {
        let mut words = line.split_whitespace().skip_while(|w| *w != "tern-sim");
        if words.next().is_none() {
            continue;
        }
        let Some(sub) = words.next() else { continue };
        let help = Command::new(common::BIN)
            .args([sub, "--help"])
            .output()
            .unwrap();
        assert!(
            help.status.success(),
            "{name}: `tern-sim {sub}` is not a command"
        );
        let help = String::from_utf8(help.stdout).unwrap();
        for flag in words.filter(|w| w.starts_with("--")) {
            let flag = flag.split('=').next().unwrap();
            assert!(
                help.split(|c: char| !(c.is_alphanumeric() || c == '-'))
                    .any(|w| w == flag),
                "{name}: `tern-sim {sub}` has no flag {flag}"
            );
        }
        seen.push(sub.to_owned());
    }
    seen
}

#[test]
fn the_github_actions_workflow_shards_certify_and_merges_the_parts() {
    let y = yaml("github-actions.yml");
    let shards = y["jobs"]["shard"]["strategy"]["matrix"]["shard"]
        .as_vec()
        .expect("a matrix of shards");
    let n = shards.len();
    assert!(n > 1);
    for (i, k) in shards.iter().enumerate() {
        assert_eq!(k.as_i64(), Some(i as i64 + 1), "shards are 1 to N in order");
    }
    let mut texts = Vec::new();
    scripts(&y["jobs"]["shard"], &mut texts);
    let shard_text = texts.join("\n");
    assert!(
        shard_text.contains(&format!("--shard ${{{{ matrix.shard }}}}/{n}")),
        "the shard job passes K/N with N = {n}: {shard_text}"
    );
    assert_eq!(
        check_commands("github-actions.yml", &shard_text),
        ["certify"]
    );
    let mut texts = Vec::new();
    scripts(&y["jobs"]["merge"], &mut texts);
    assert_eq!(
        check_commands("github-actions.yml", &texts.join("\n")),
        ["merge"]
    );
    // The merge job waits for every shard, and downloads what they upload.
    assert_eq!(y["jobs"]["merge"]["needs"].as_str(), Some("shard"));
    let steps = |job: &str| y["jobs"][job]["steps"].as_vec().unwrap().clone();
    let upload = steps("shard")
        .into_iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact"))
        })
        .expect("each shard uploads its part");
    let download = steps("merge")
        .into_iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/download-artifact"))
        })
        .expect("the merge downloads the parts");
    let name = upload["with"]["name"].as_str().unwrap();
    let pattern = download["with"]["pattern"].as_str().unwrap();
    let prefix = pattern.trim_end_matches('*');
    assert!(name.starts_with(prefix), "{name} matches {pattern}");
    assert_eq!(download["with"]["merge-multiple"].as_bool(), Some(true));
}

#[test]
fn the_gitlab_pipeline_and_the_hosts_script_name_real_commands() {
    let y = yaml("gitlab-ci.yml");
    let mut texts = Vec::new();
    scripts(&y, &mut texts);
    let seen = check_commands("gitlab-ci.yml", &texts.join("\n"));
    assert!(
        seen.contains(&"certify".to_owned()) && seen.contains(&"merge".to_owned()),
        "{seen:?}"
    );
    let seen = check_commands("hosts.sh", &example("hosts.sh"));
    assert!(seen.contains(&"merge".to_owned()), "{seen:?}");
}

#[test]
#[should_panic(expected = "`tern-sim certify` has no flag --bogus")]
fn the_check_catches_a_flag_that_does_not_exist() {
    check_commands("test", "tern-sim certify --shard 1/2 \\\n  --bogus 3");
}

#[test]
#[should_panic(expected = "`tern-sim certfy` is not a command")]
fn the_check_catches_a_command_that_does_not_exist() {
    check_commands("test", "  tern-sim certfy --shard 1/2");
}

/// What the local runs swap in, and why: the example certifies
/// `python3 agent.py` with 8,000 seeds, which is the vendor's to choose;
/// here the implementation is tern-sim's own agent as a mutant (so that
/// the run has failures to annotate) and the budget is no simulation seed (the corpus alone gives failures to annotate), so the
/// test takes seconds. Every other word of the steps runs as written.
fn localised(script: &str) -> String {
    script
        .replace("python3 agent.py", "tern-sim agent --mutant trusts-from")
        .replace("--seeds 8000", "--seeds 0")
}

/// A folder whose `tern-sim` is the binary under test, for PATH.
fn bin_dir(root: &Path) -> std::path::PathBuf {
    let dir = root.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(common::BIN, dir.join("tern-sim")).unwrap();
    dir
}

/// Runs one step's shell text in `workspace` as a runner would (`bash -e`,
/// with pipefail as GitHub's default shell has it), with `env` set.
fn run_step(
    script: &str,
    workspace: &Path,
    bin: &Path,
    env: &[(&str, String)],
) -> std::process::Output {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-e", "-o", "pipefail", "-c"])
        .arg(script)
        .current_dir(workspace)
        .env("PATH", path)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_ACTIONS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("bash starts")
}

/// The steps of a job that run shell text, with their names; the ones
/// that install tern-sim or system packages are left out (tern-sim is on
/// PATH already, and FUSE is whatever this machine has).
fn shell_steps(job: &Yaml) -> Vec<(String, String)> {
    job["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|s| {
            let run = s["run"].as_str()?;
            let name = s["name"].as_str().unwrap_or_default().to_owned();
            (!name.starts_with("Install ")).then(|| (name, run.to_owned()))
        })
        .collect()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git starts");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn the_github_actions_workflow_runs_here_with_the_runners_variables() {
    let y = yaml("github-actions.yml");
    let root = tempfile::tempdir().unwrap();
    let bin = bin_dir(root.path());
    let artifacts = root.path().join("artifacts");
    let shards = y["jobs"]["shard"]["strategy"]["matrix"]["shard"]
        .as_vec()
        .unwrap()
        .clone();
    // Each shard job on its own runner: a workspace of its own, then its
    // `parts/` uploaded as the artifact tern-sim-part-K.
    for k in &shards {
        let k = k.as_i64().unwrap().to_string();
        let ws = root.path().join(format!("shard-{k}"));
        std::fs::create_dir_all(&ws).unwrap();
        let summary = ws.join("step-summary.md");
        for (name, run) in shell_steps(&y["jobs"]["shard"]) {
            let script = localised(&run.replace("${{ matrix.shard }}", &k));
            let o = run_step(
                &script,
                &ws,
                &bin,
                &[
                    ("GITHUB_ACTIONS", "true".into()),
                    ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
                ],
            );
            assert!(
                o.status.success(),
                "shard {k}, step {name}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        // A shard writes only its part: no summary, no annotation.
        assert!(!summary.exists(), "shard {k} wrote a step summary");
        let dest = artifacts.join(format!("tern-sim-part-{k}"));
        std::fs::create_dir_all(&dest).unwrap();
        for part in std::fs::read_dir(ws.join("parts")).unwrap() {
            let part = part.unwrap().path();
            std::fs::copy(&part, dest.join(part.file_name().unwrap())).unwrap();
        }
    }
    // The merge job: a checkout (a git repository whose origin is a bare
    // one here), the artifacts downloaded with merge-multiple into parts/.
    let origin = root.path().join("origin.git");
    std::fs::create_dir_all(&origin).unwrap();
    git(&origin, &["init", "-q", "--bare"]);
    let ws = root.path().join("merge");
    std::fs::create_dir_all(ws.join("parts")).unwrap();
    git(&ws, &["init", "-q"]);
    git(&ws, &["remote", "add", "origin", origin.to_str().unwrap()]);
    for dir in std::fs::read_dir(&artifacts).unwrap() {
        for part in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let part = part.unwrap().path();
            std::fs::copy(&part, ws.join("parts").join(part.file_name().unwrap())).unwrap();
        }
    }
    let summary = ws.join("step-summary.md");
    let env = [
        ("GITHUB_ACTIONS", "true".to_owned()),
        ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
        ("GITHUB_SHA", "0123abc".to_owned()),
    ];
    let steps = shell_steps(&y["jobs"]["merge"]);
    let names: Vec<&str> = steps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Merge the parts", "Publish the badge"]);
    // The merge fails the job: the mutant is not certified.
    let merged = run_step(&localised(&steps[0].1), &ws, &bin, &env);
    assert_eq!(
        merged.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let out = String::from_utf8_lossy(&merged.stdout);
    assert!(out.contains("::error title="), "no annotation:\n{out}");
    let page = std::fs::read_to_string(&summary).expect("the job's summary page");
    assert!(page.contains("not certified at `profile`"), "{page}");
    let report = ws.join("tern-sim-report");
    for file in [
        "report.html",
        "report.json",
        "junit.xml",
        "summary.md",
        "badge.json",
        "badge.svg",
    ] {
        assert!(report.join(file).is_file(), "{file} is not in the report");
    }
    // The badge step runs after a failed merge (`always()`), and pushes a
    // branch that holds the badge alone.
    let badge_if = y["jobs"]["merge"]["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str() == Some("Publish the badge"))
        .and_then(|s| s["if"].as_str())
        .unwrap();
    assert!(badge_if.starts_with("always()"), "{badge_if}");
    let pushed = run_step(&steps[1].1, &ws, &bin, &env);
    assert!(
        pushed.status.success(),
        "{}",
        String::from_utf8_lossy(&pushed.stderr)
    );
    assert_eq!(
        git(&origin, &["ls-tree", "--name-only", "tern-sim-badge"]),
        "badge.json\nbadge.svg\n"
    );
    assert_eq!(
        git(&origin, &["show", "tern-sim-badge:badge.json"]),
        std::fs::read_to_string(report.join("badge.json")).unwrap()
    );
    assert!(git(&origin, &["log", "-1", "--format=%s", "tern-sim-badge"]).contains("0123abc"));
}

#[test]
fn the_gitlab_pipeline_runs_here_and_its_merge_leaves_the_junit_report() {
    let y = yaml("gitlab-ci.yml");
    let root = tempfile::tempdir().unwrap();
    let bin = bin_dir(root.path());
    let total = y["shard"]["parallel"].as_i64().unwrap();
    let script = |job: &str| -> String {
        let lines: Vec<String> = y[job]["script"]
            .as_vec()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect();
        localised(&lines.join("\n"))
    };
    let merge_ws = root.path().join("merge");
    std::fs::create_dir_all(&merge_ws).unwrap();
    for k in 1..=total {
        let ws = root.path().join(format!("shard-{k}"));
        std::fs::create_dir_all(&ws).unwrap();
        let o = run_step(
            &script("shard"),
            &ws,
            &bin,
            &[
                ("GITLAB_CI", "true".into()),
                ("CI_NODE_INDEX", k.to_string()),
                ("CI_NODE_TOTAL", total.to_string()),
            ],
        );
        assert!(
            o.status.success(),
            "shard {k}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // Artifacts of every shard job unpack into the merge job's folder.
        for path in y["shard"]["artifacts"]["paths"].as_vec().unwrap() {
            let dir = path.as_str().unwrap().trim_end_matches('/');
            std::fs::create_dir_all(merge_ws.join(dir)).unwrap();
            for f in std::fs::read_dir(ws.join(dir)).unwrap() {
                let f = f.unwrap().path();
                std::fs::copy(&f, merge_ws.join(dir).join(f.file_name().unwrap())).unwrap();
            }
        }
    }
    let o = run_step(
        &script("merge"),
        &merge_ws,
        &bin,
        &[("GITLAB_CI", "true".into())],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let junit = y["merge"]["artifacts"]["reports"]["junit"]
        .as_str()
        .unwrap();
    let xml = std::fs::read_to_string(merge_ws.join(junit)).expect("the JUnit report GitLab reads");
    assert!(
        xml.starts_with("<?xml") && xml.contains("<testsuites"),
        "{xml}"
    );
    assert!(xml.contains("<failure"), "the mutant's failures are in it");
    assert_eq!(y["merge"]["artifacts"]["when"].as_str(), Some("always"));
}
