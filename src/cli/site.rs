//! `tern-sim site REPORT.json… --out DIR`: one static folder across
//! implementations and versions (docs/certify.md section 4.4). Every
//! report is read and checked before anything is written, and the site
//! goes in place whole, so a bad input leaves no half-written site.

use std::path::PathBuf;

use clap::Args;
use tern_reports::escape;
use tern_reports::site::{self, folder};

use super::Exit;

#[derive(Debug, Args)]
pub struct SiteArgs {
    /// The report.json files, oldest first: a report holds no date, so
    /// this order is the order of each implementation's versions.
    #[arg(required = true, value_name = "REPORT.json")]
    reports: Vec<PathBuf>,

    /// The folder to write. An existing one is replaced only if it is
    /// empty or a site written by this command.
    #[arg(long, value_name = "DIR", default_value = "tern-sim-site")]
    out: PathBuf,
}

pub fn run(args: SiteArgs) -> Exit {
    let fail = |e: &dyn std::fmt::Display| {
        errln!("tern-sim site: {}", escape::terminal(&e.to_string()));
        Exit::Trouble
    };
    if let Err(e) = folder::check(&args.out) {
        return fail(&e);
    }
    for (n, path) in args.reports.iter().enumerate() {
        if args.reports[..n].contains(path) {
            return fail(&format!(
                "{}: given twice; name each report once",
                path.display()
            ));
        }
    }
    let mut loaded = Vec::with_capacity(args.reports.len());
    for path in &args.reports {
        match site::load(path) {
            Ok(l) => loaded.push(l),
            Err(e) => return fail(&e),
        }
    }
    for l in &loaded {
        for name in &l.missing {
            noteln!(
                "tern-sim site: note: {} names {name}, which is not beside it; its page does not link to it",
                escape::terminal(&l.path)
            );
        }
    }
    let files = site::render(&loaded);
    if let Err(e) = folder::publish(&args.out, &files) {
        return fail(&e);
    }
    let site = site::Site::gather(loaded.iter().map(|l| (l.path.as_str(), &l.report)));
    outln!(
        "site: {} ({} report(s), {} implementation(s), {} version(s), {} files): open {}",
        escape::terminal(&args.out.to_string_lossy()),
        site.sources.len(),
        site.implementations.len(),
        site.entries.len(),
        files.len(),
        escape::terminal(&args.out.join("index.html").to_string_lossy()),
    );
    Exit::Ok
}
