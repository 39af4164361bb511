//! `tern-sim coverage`: the traceability matrix, clause → cases →
//! invariants → mutants. Exits 1 when a clause has no case.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::Args;
use serde_json::json;
use tern_harness::implementations::mutants::Mutant;

use super::corpus::load_corpus;
use super::{Exit, FormatArg};
use tern_reports::escape;

#[derive(Debug, Args)]
pub struct CoverageArgs {
    /// The corpus folder, instead of the corpus built into tern-sim.
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,

    /// Output format: `human` (a table), or `json` for the matrix as one document.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,
}

pub fn run(args: CoverageArgs) -> Exit {
    let corpus = match load_corpus(args.scenarios.as_deref(), "coverage") {
        Ok(c) => c,
        Err(s) => return s,
    };
    let matrix = corpus.coverage();
    let mut rows = Vec::new();
    let mut uncovered = Vec::new();
    for clause in corpus.clauses.all() {
        let cases = &matrix[clause.id.as_str()];
        if cases.is_empty() {
            uncovered.push(clause.id.clone());
        }
        let invariants: BTreeSet<&str> = cases
            .iter()
            .flat_map(|c| c.invariants.iter().map(|i| i.name))
            .collect();
        let mutants: Vec<&str> = Mutant::ALL
            .iter()
            .filter(|m| invariants.contains(m.target().name))
            .map(|m| m.name())
            .collect();
        rows.push((clause, cases, invariants, mutants));
    }
    match args.format {
        FormatArg::Json => {
            let out = json!({
                "clauses": corpus.clauses.all().len(),
                "cases": corpus.cases.len(),
                "uncovered": uncovered,
                "matrix": rows.iter().map(|(c, cases, inv, mutants)| json!({
                    "clause": c.id,
                    "section": c.section,
                    "sentence": c.sentence,
                    "cases": cases.iter().map(|k| json!({"id": k.id, "level": k.level.as_str()})).collect::<Vec<_>>(),
                    "invariants": inv,
                    "mutants": mutants,
                })).collect::<Vec<_>>(),
            });
            outln!("{out}");
        }
        FormatArg::Human => {
            let mut table = vec![vec![
                "clause".to_owned(),
                "cases".to_owned(),
                "invariants".to_owned(),
                "mutants".to_owned(),
            ]];
            for (c, cases, inv, mutants) in &rows {
                // IDs come from the corpus files, which --scenarios may
                // point anywhere: escaped for the terminal.
                table.push(vec![
                    escape::t(&c.id),
                    if cases.is_empty() {
                        "✘ none".to_owned()
                    } else {
                        cases
                            .iter()
                            .map(|k| escape::t(&k.id))
                            .collect::<Vec<_>>()
                            .join("\n")
                    },
                    inv.iter().copied().collect::<Vec<_>>().join("\n"),
                    mutants.join("\n"),
                ]);
            }
            outln!("{}", tern_reports::run::table(table));
            outln!(
                "{} clauses, {} cases, {} clause(s) without a case{}",
                corpus.clauses.all().len(),
                corpus.cases.len(),
                uncovered.len(),
                if uncovered.is_empty() {
                    String::new()
                } else {
                    format!(": {}", escape::t(&uncovered.join(", ")))
                }
            );
        }
    }
    if uncovered.is_empty() {
        Exit::Ok
    } else {
        Exit::Violation
    }
}
