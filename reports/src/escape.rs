//! Text from the input (report labels, case IDs, implementation names,
//! frames, answers) made safe to print on a terminal.
//!
//! A terminal obeys escape sequences (ANSI colours, OSC titles and
//! hyperlinks, cursor moves) and Unicode bidirectional controls reorder
//! what it shows, so a hostile report or implementation could forge or
//! hide lines of a verdict. Every control character and every bidi control
//! is therefore shown as a visible escape, `\u{1b}`, `\n`, `\u{202e}`,
//! instead of being obeyed. Everything else, including non-ASCII text,
//! is printed as it is.

use std::borrow::Cow;
use std::fmt::Write;

/// Unicode's bidirectional formatting characters: the embeddings and
/// overrides U+202A–U+202E, the isolates U+2066–U+2069, the marks U+200E,
/// U+200F and the Arabic letter mark U+061C.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// Whether `c` must not reach a terminal as it is: a control character
/// (C0, DEL, C1) or a bidi control.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// `s` with every control and bidi character written as a visible escape
/// (`\t`, `\n`, `\r`, else `\u{hex}`). Borrows when nothing needs escaping.
pub fn terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`terminal`] for text of several lines that people read in a file (a
/// CI system shows JUnit messages as they are): line breaks and tabs stay,
/// every other control and every bidi control becomes a visible escape.
pub fn multiline(s: &str) -> Cow<'_, str> {
    let keep = |c: char| c == '\n' || c == '\t';
    if !s.chars().any(|c| is_unsafe(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe(c) && !keep(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`terminal`], owned.
pub fn t(s: &str) -> String {
    terminal(s).into_owned()
}

/// `s` as one Markdown code span, so that nothing in it is read as
/// Markdown: no link, image, HTML tag, emphasis or mention can come out of
/// an implementation's label or message. Controls are first made visible
/// ([`terminal`]), so the span stays on one line; the fence is one
/// backtick longer than the longest run of backticks inside, and padded
/// with a space where the text starts or ends with one (CommonMark takes
/// one space off each end). Not for a table cell, where a `|` would end
/// the cell.
pub fn markdown_code(s: &str) -> String {
    let s = terminal(s);
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with(['`', ' ']) || s.ends_with(['`', ' ']) || s.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_ansi_osc_newlines_c1_and_bidi_and_keeps_the_rest() {
        assert_eq!(terminal("plain – ünïcode ✔"), "plain – ünïcode ✔");
        assert_eq!(t("\x1b[31mred\x1b[0m"), "\\u{1b}[31mred\\u{1b}[0m");
        assert_eq!(t("\x1b]0;title\x07"), "\\u{1b}]0;title\\u{7}");
        assert_eq!(t("a\nb\tc\rd"), "a\\nb\\tc\\rd");
        assert_eq!(t("\u{9b}\u{7f}"), "\\u{9b}\\u{7f}");
        for bidi in [
            '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
        ] {
            let escaped = t(&format!("x{bidi}y"));
            assert!(!escaped.chars().any(is_unsafe), "{escaped}");
            assert_eq!(escaped, format!("x\\u{{{:x}}}y", bidi as u32));
        }
    }

    #[test]
    fn markdown_code_spans_hold_any_text_as_text() {
        assert_eq!(markdown_code("reference"), "`reference`");
        assert_eq!(
            markdown_code("[x](https://evil.invalid) <b>@all"),
            "`[x](https://evil.invalid) <b>@all`"
        );
        assert_eq!(markdown_code("a`b"), "``a`b``");
        assert_eq!(markdown_code("``x"), "``` ``x ```");
        assert_eq!(markdown_code("a\nb"), "`a\\nb`");
        assert_eq!(markdown_code("x\n# heading"), "`x\\n# heading`");
        assert_eq!(markdown_code(""), "`  `");
    }

    #[test]
    fn multiline_text_keeps_its_lines_and_escapes_the_rest() {
        assert_eq!(multiline("a\n\tb ✔"), "a\n\tb ✔");
        assert_eq!(
            multiline("x\u{202e}y\r\u{1b}[2J\nz"),
            "x\\u{202e}y\\u{d}\\u{1b}[2J\nz"
        );
    }
}
