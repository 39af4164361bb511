//! `tern-sim site`: one static folder across implementations and
//! versions, built from their report.json files: an index with a row per
//! implementation and version, the clause matrix of all of them side by
//! side, each implementation's history, and every report's own page.
//! Like report.html it needs nothing but itself (no script, no network),
//! and the same reports give the same bytes.

pub mod folder;
pub mod history;
pub mod index;
pub mod load;
pub mod matrix;
pub mod model;
pub mod page;

pub use load::{load, Loaded};
pub use model::Site;

use crate::certify::html;

/// Every file of the site, by its path in the site's folder, in path
/// order.
pub fn render(loaded: &[Loaded]) -> Vec<(String, Vec<u8>)> {
    let site = Site::gather(loaded.iter().map(|l| (l.path.as_str(), &l.report)));
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("index.html".to_owned(), index::render(&site).into_bytes()),
        ("matrix.html".to_owned(), matrix::render(&site).into_bytes()),
    ];
    for implementation in &site.implementations {
        files.push((
            history::path(implementation),
            history::render(&site, implementation).into_bytes(),
        ));
    }
    for (source, l) in site.sources.iter().zip(loaded) {
        let folder = &source.folder;
        files.push((
            format!("{folder}/report.html"),
            html::render_within(&l.report, Some("../../index.html")).into_bytes(),
        ));
        files.push((format!("{folder}/report.json"), l.json.clone()));
        for (name, bytes) in &l.attachments {
            files.push((format!("{folder}/{name}"), bytes.clone()));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

#[cfg(test)]
mod tests;
