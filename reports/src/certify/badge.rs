//! The badge a vendor can show for a certification: `badge.json` for
//! shields.io's endpoint badges, and `badge.svg`, the same badge drawn by
//! tern-sim, for a page that should not depend on a third party.
//!
//! The message names the level certified, the tern-sim that certified and
//! the corpus it played, since a badge that says only "certified" cannot
//! be checked against a report. shields reads only its own keys, so the
//! versions go in the message.

use std::fmt::Write as _;

use tern_harness::corpus::Level;

use super::diagram::esc;
use super::Report;

/// The label's text: what the badge certifies.
pub const LABEL: &str = "tern 0.1";

/// One badge, as both files state it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Badge {
    pub label: String,
    pub message: String,
    /// A shields.io colour name, one of [`COLORS`].
    pub color: &'static str,
}

/// The colours a badge uses, by shields.io name, with the hex value the
/// SVG draws: the level certified, from best to none.
pub const COLORS: [(&str, &str); 3] = [
    ("brightgreen", "#4c1"),
    ("green", "#97ca00"),
    ("red", "#e05d44"),
];

impl Badge {
    /// The badge of `report`: the level every implementation in it is
    /// certified at (the lowest of theirs, so a badge never claims more
    /// than one of them reached), or "not certified".
    pub fn of(report: &Report) -> Badge {
        let rank = |level: Option<Level>| match level {
            Some(Level::Profile) => 2,
            Some(Level::Core) => 1,
            None => 0,
        };
        let lowest = report
            .implementations
            .iter()
            .map(|i| rank(i.verdict.level))
            .min()
            .unwrap_or(0);
        let (reached, color) = match lowest {
            2 => ("profile", "brightgreen"),
            1 => ("core", "green"),
            _ => ("not certified", "red"),
        };
        Badge {
            label: LABEL.to_owned(),
            message: format!(
                "{reached} · tern-sim {} · corpus {}",
                report.tern_sim_version,
                report.corpus.version()
            ),
            color,
        }
    }

    /// `badge.json`, in shields.io's endpoint format (schema version 1).
    pub fn to_json(&self) -> String {
        let value = serde_json::json!({
            "schemaVersion": 1,
            "label": self.label,
            "message": self.message,
            "color": self.color,
        });
        let mut out = serde_json::to_string_pretty(&value).unwrap_or_default();
        out.push('\n');
        out
    }

    /// `badge.svg`: a flat two-part badge, grey label and coloured
    /// message, sized from the text's width in Verdana 11 px. Coordinates
    /// are in tenths of a pixel (the drawing is scaled by 0.1), so every
    /// number is an integer and the bytes are the same on every machine.
    pub fn to_svg(&self) -> String {
        let hex = COLORS
            .iter()
            .find(|(name, _)| *name == self.color)
            .map_or("#9f9f9f", |(_, hex)| hex);
        let (label_text, message_text) = (text_width(&self.label), text_width(&self.message));
        // 5 px of room on each side of each text, in whole pixels.
        let label_w = label_text.div_ceil(10) + 10;
        let message_w = message_text.div_ceil(10) + 10;
        let width = label_w + message_w;
        let (label, message) = (esc(&self.label), esc(&self.message));
        let mut out = String::new();
        let _ = write!(
            out,
            concat!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"20\" role=\"img\" aria-label=\"{l}: {m}\">",
                "<title>{l}: {m}</title>",
                "<linearGradient id=\"s\" x2=\"0\" y2=\"100%\"><stop offset=\"0\" stop-color=\"#bbb\" stop-opacity=\".1\"/><stop offset=\"1\" stop-opacity=\".1\"/></linearGradient>",
                "<clipPath id=\"r\"><rect width=\"{w}\" height=\"20\" rx=\"3\" fill=\"#fff\"/></clipPath>",
                "<g clip-path=\"url(#r)\"><rect width=\"{lw}\" height=\"20\" fill=\"#555\"/><rect x=\"{lw}\" width=\"{mw}\" height=\"20\" fill=\"{hex}\"/><rect width=\"{w}\" height=\"20\" fill=\"url(#s)\"/></g>",
                "<g fill=\"#fff\" text-anchor=\"middle\" font-family=\"Verdana,Geneva,DejaVu Sans,sans-serif\" text-rendering=\"geometricPrecision\" font-size=\"110\">",
                "<text aria-hidden=\"true\" x=\"{lx}\" y=\"150\" fill=\"#010101\" fill-opacity=\".3\" transform=\"scale(.1)\" textLength=\"{lt}\">{l}</text>",
                "<text x=\"{lx}\" y=\"140\" transform=\"scale(.1)\" fill=\"#fff\" textLength=\"{lt}\">{l}</text>",
                "<text aria-hidden=\"true\" x=\"{mx}\" y=\"150\" fill=\"#010101\" fill-opacity=\".3\" transform=\"scale(.1)\" textLength=\"{mt}\">{m}</text>",
                "<text x=\"{mx}\" y=\"140\" transform=\"scale(.1)\" fill=\"#fff\" textLength=\"{mt}\">{m}</text>",
                "</g></svg>\n"
            ),
            w = width,
            lw = label_w,
            mw = message_w,
            hex = hex,
            l = label,
            m = message,
            lx = label_w * 5,
            lt = label_text,
            mx = label_w * 10 + message_w * 5,
            mt = message_text,
        );
        out
    }
}

/// The width of `text` in Verdana at 11 px, in tenths of a pixel: each
/// character's advance, from a table of the printable ASCII characters
/// (in font units of 1/2048 em), a digit's width for any other, and a
/// full em for the wide scripts.
pub fn text_width(text: &str) -> u32 {
    /// Advances of ' ' through '~', in units of 1/2048 em.
    const ASCII: [u32; 95] = [
        720, 806, 940, 1716, 1302, 2216, 1511, 550, 909, 909, 1302, 1716, 745, 909, 745,
        909, // ' '..'/'
        1302, 1302, 1302, 1302, 1302, 1302, 1302, 1302, 1302, 1302, // '0'..'9'
        909, 909, 1716, 1716, 1716, 1116, 2048, // ':'..'@'
        1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 862, 931, 1423, 1141,
        1726, // 'A'..'M'
        1532, 1612, 1235, 1612, 1423, 1396, 1237, 1499, 1401, 2025, 1403, 1235,
        1399, // 'N'..'Z'
        909, 909, 909, 1716, 1302, 1302, // '['..'`'
        1229, 1276, 1067, 1276, 1220, 720, 1276, 1296, 562, 683, 1212, 562, 1992, // 'a'..'m'
        1296, 1243, 1276, 1276, 874, 1067, 807, 1296, 1212, 1675, 1212, 1212,
        1075, // 'n'..'z'
        1300, 909, 1300, 1716, // '{'..'~'
    ];
    let units: u32 = text
        .chars()
        .map(|c| match c {
            ' '..='~' => ASCII[c as usize - ' ' as usize],
            '·' => 745,
            c if (c as u32) >= 0x1100 => 2048,
            _ => 1302,
        })
        .sum();
    // 11 px per em, in tenths: units × 110 / 2048, rounded up.
    (units * 110).div_ceil(2048)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_grow_with_the_text_and_wide_letters_count_more() {
        assert_eq!(text_width(""), 0);
        assert!(text_width("mmm") > text_width("iii"));
        assert!(text_width("tern 0.1") > text_width("tern"));
        // "0" is 1302/2048 em: 7 px at 11 px.
        assert_eq!(text_width("0"), 70);
    }

    #[test]
    fn the_svg_escapes_its_text_and_is_the_same_every_time() {
        let badge = Badge {
            label: "<script>alert(1)</script> & \"x\"".to_owned(),
            message: "core · tern-sim 0.1.0 · corpus 0123456789ab".to_owned(),
            color: "green",
        };
        let svg = badge.to_svg();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>\n"));
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"));
        assert!(svg.contains("fill=\"#97ca00\""));
        assert_eq!(svg, badge.to_svg());
        // Every tag opened is closed: a rough well-formedness check.
        for tag in ["svg", "title", "g", "text", "linearGradient", "clipPath"] {
            let opened = svg.matches(&format!("<{tag}")).count();
            let closed = svg.matches(&format!("</{tag}>")).count();
            assert_eq!(opened, closed, "<{tag}>");
        }
    }

    #[test]
    fn the_json_has_the_four_keys_shields_reads() {
        let badge = Badge {
            label: LABEL.to_owned(),
            message: "profile · tern-sim 0.1.0 · corpus 0123456789ab".to_owned(),
            color: "brightgreen",
        };
        let v: serde_json::Value = serde_json::from_str(&badge.to_json()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "schemaVersion": 1,
                "label": "tern 0.1",
                "message": "profile · tern-sim 0.1.0 · corpus 0123456789ab",
                "color": "brightgreen"
            })
        );
    }
}
