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
