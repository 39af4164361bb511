//! What every page of the site shares: the style, inline like
//! report.html's so that a page needs nothing but itself, and the frame
//! with its navigation. Links are relative, so the folder can be served
//! from anywhere or opened from disk.

use std::fmt::Write;

use crate::certify::diagram::esc;

/// The `generator` a site's index.html names: `site` replaces a folder
/// only when its index says it was written by this command.
pub const GENERATOR: &str = "tern-sim site";

const STYLE: &str = r#"
:root{--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--ink:#1f2328;--mute:#59636e;--line:#d1d9e0;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:#fff}
main{max-width:1200px;margin:0 auto;padding:16px}
nav{font-size:.92em;margin-bottom:.4em}nav a{margin-right:1em}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid var(--line)}
.meta{color:var(--mute);font-size:.9em;overflow-wrap:anywhere}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--bg)}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:var(--ok)}.fail{color:var(--bad);font-weight:600}.na{color:var(--mute)}
.level{display:inline-block;border-radius:8px;padding:0 8px;font-weight:600;color:#fff;background:var(--bad)}
.level.profile{background:var(--ok)}.level.core{background:#4d8a2f}
code{font-size:.9em;overflow-wrap:anywhere}
table.index td{white-space:nowrap}table.index td.name,table.index td.src{white-space:normal;min-width:9em}
table.matrix{font-size:.85em}
table.matrix td,table.matrix th{white-space:nowrap}table.matrix th.impl{white-space:normal;min-width:6em}
table.matrix th.clause,table.matrix td.clause{position:sticky;left:0;background:#fff;white-space:normal;min-width:9em;max-width:22em}
table.matrix th.clause{background:var(--bg)}
table.matrix tr.section td{background:var(--bg);font-weight:600;position:static}
table.matrix td.clause small{display:block;color:var(--mute);line-height:1.3}
table.matrix td.cell{text-align:center}
table.matrix td.cell.fail{background:#ffebe9}
table.matrix td.cell.fail a{color:var(--bad)}
p.broken{overflow-wrap:anywhere}
ul.changes{margin:.2em 0 .8em;padding-left:1.4em}ul.changes li{overflow-wrap:anywhere}
@media (max-width:760px){main{padding:10px}table.matrix td.clause small{display:none}table.matrix th.clause,table.matrix td.clause{min-width:6em}}
"#;

/// A page of the site: `title`, then `body`. `root` is the way from the
/// page to the site's root (`""` or `"../"`), for the navigation.
pub fn page(title: &str, root: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 4096);
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="generator" content="{GENERATOR}"><title>{}</title><style>{STYLE}</style></head><body><main><nav><a href="{root}index.html">Implementations and versions</a><a href="{root}matrix.html">Clause matrix</a></nav><h1>{}</h1>"#,
        esc(title),
        esc(title),
    );
    out.push_str(body);
    out.push_str("</main></body></html>\n");
    out
}

/// A level as a coloured label.
pub fn level_badge(level: Option<tern_harness::corpus::Level>) -> String {
    let text = super::model::level_text(level);
    format!(r#"<span class="level {text}">{text}</span>"#)
}
