//! `--shard K/N` on the commands that play a body of work: the flags, and
//! writing the part `tern-sim merge` reads (docs/scale.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use tern_harness::shard::Shard;
use tern_reports::certify::write;
use tern_reports::escape;
use tern_reports::shards::{Header, Part};

use super::Exit;

#[derive(Debug, Clone, Args)]
pub struct ShardArgs {
    /// Play shard K of N of the work (seeds by residue, corpus cases,
    /// scopes and mutants by a hash of their names) and write a part for
    /// `tern-sim merge` instead of the results (docs/scale.md).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<Shard>,

    /// Where a shard writes its part, as COMMAND-K-of-N.json.
    #[arg(long, value_name = "DIR", default_value = "tern-sim-parts")]
    part_dir: PathBuf,
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    Shard::parse(s).map_err(|e| e.to_string())
}

impl ShardArgs {
    /// The shard asked for, if any.
    pub fn shard(&self) -> Option<Shard> {
        self.shard
    }

    /// The share to play: all of it when not sharded.
    pub fn share(&self) -> Shard {
        self.shard.unwrap_or(Shard::WHOLE)
    }

    /// Checks, before any work, that the part can be written.
    pub fn prepare(&self, command: &str) -> Result<(), Exit> {
        if self.shard.is_none() {
            return Ok(());
        }
        write::prepare(&self.part_dir).map_err(|e| {
            errln!(
                "tern-sim {command}: --part-dir {}",
                escape::terminal(&e.to_string())
            );
            Exit::Trouble
        })
    }

    /// Writes the part atomically, and says where and what next.
    pub fn write<B: Serialize>(&self, part: &Part<B>, human: bool) -> Exit {
        write_part(&self.part_dir, part, human)
    }
}

fn write_part<B: Serialize>(dir: &Path, part: &Part<B>, human: bool) -> Exit {
    let name = part.part.file_name();
    let command = part.part.command.as_str();
    match write::write_all(dir, &[(name.as_str(), part.to_json().as_bytes())]) {
        Ok(_) => {
            let path = dir.join(&name);
            if human {
                outln!(
                    "shard {}: part written to {}; `tern-sim merge` of all {} parts gives the verdict",
                    part.part.shard,
                    path.display(),
                    part.part.shard.count()
                );
            } else {
                outln!("{}", path.display());
            }
            Exit::Ok
        }
        Err(e) => {
            errln!("tern-sim {command}: {e}");
            Exit::Trouble
        }
    }
}

/// Options as a part records them: by flag, each value as text.
#[derive(Default)]
pub struct Options(pub BTreeMap<String, String>);

impl Options {
    pub fn set(&mut self, flag: &str, value: impl ToString) -> &mut Options {
        self.0.insert(flag.to_owned(), value.to_string());
        self
    }

    /// A repeatable flag's values, in order.
    pub fn list(&mut self, flag: &str, values: &[String]) -> &mut Options {
        let text = serde_json::to_string(values).unwrap_or_default();
        self.set(flag, text)
    }
}

/// The header of a part of `command` with these options.
pub fn header(
    command: tern_reports::shards::Command,
    shard: Shard,
    options: Options,
    complete: bool,
) -> Header {
    Header {
        options: options.0,
        complete,
        ..Header::new(command, shard)
    }
}
