//! Colour on a terminal: verdicts, failures and table headers stand out.
//! Colour is added to finished text at the moment it is printed, never to
//! what is written to files or to JSON, so reports stay plain whatever
//! `--color` says.

use anstyle::{AnsiColor, Style};

/// Whether standard output gets colour: `always`, `never`, or (`auto`) a
/// terminal whose user has not asked for none (`NO_COLOR`, a dumb `TERM`).
pub fn wanted(choice: super::ColorArg) -> bool {
    use std::io::IsTerminal;
    match choice {
        super::ColorArg::Always => true,
        super::ColorArg::Never => false,
        super::ColorArg::Auto => {
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
            std::io::stdout().is_terminal() && !no_color && !dumb
        }
    }
}

const PASS: Style = AnsiColor::Green.on_default().bold();
const FAIL: Style = AnsiColor::Red.on_default().bold();
const HEADER: Style = Style::new().bold();

/// `text` with its verdict lines (`✔`, `✘`), its failing cells
/// (`VIOLATION`, `NOT CERTIFIED`, `FAILS`) and the first row of each table
/// coloured. Lines of JSON never start with those marks, and are left alone.
pub fn paint(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut after_top_border = false;
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let trimmed = body.trim_start();
        let style = if trimmed.starts_with('✘') {
            Some(FAIL)
        } else if trimmed.starts_with('✔') {
            Some(PASS)
        } else if after_top_border && trimmed.starts_with('│') {
            Some(HEADER)
        } else {
            None
        };
        match style {
            Some(s) => out.push_str(&format!("{}{body}{}", s.render(), s.render_reset())),
            None if trimmed.starts_with('│') || trimmed.starts_with("reference FAILS") => {
                out.push_str(&mark_failures(body))
            }
            None => out.push_str(body),
        }
        out.push_str(end);
        after_top_border = trimmed.starts_with('╭');
    }
    out
}

/// The failing words of a table row or a selftest line, in red.
fn mark_failures(line: &str) -> String {
    let mut out = line.to_owned();
    for word in ["VIOLATION", "NOT CERTIFIED", "FAILS", "survived"] {
        out = out.replace(
            word,
            &format!("{}{word}{}", FAIL.render(), FAIL.render_reset()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_failures_and_headers_are_coloured_and_json_is_not() {
        let text =
            "╭──┬──╮\n│ a │ b │\n├──┼──┤\n│ x │ VIOLATION │\n╰──┴──╯\n✔ ok\n  ✘ bad\nplain\n";
        let painted = paint(text);
        assert!(painted.contains(&format!(
            "{}│ a │ b │{}",
            HEADER.render(),
            HEADER.render_reset()
        )));
        assert!(painted.contains(&format!(
            "{}VIOLATION{}",
            FAIL.render(),
            FAIL.render_reset()
        )));
        assert!(painted.contains(&format!("{}✔ ok{}", PASS.render(), PASS.render_reset())));
        assert!(painted.contains(&format!("{}  ✘ bad{}", FAIL.render(), FAIL.render_reset())));
        assert!(painted.ends_with("plain\n"));
        let json = "{\n  \"shorthand\": [\n    \"✘ at-most-once\"\n  ]\n}\n{\"a\":\"✔\"}\n";
        assert_eq!(paint(json), json);
    }
}
