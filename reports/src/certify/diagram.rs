//! Sequence (Lamport) diagrams in inline SVG: one lifeline per participant,
//! time flowing down, a message as an arrow from its send to its delivery
//! (slanted when the network delayed it), faults marked on the lifeline
//! they hit. Plain SVG with no script and no external asset, so the report
//! stays one self-contained file.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{SeqEvent, StepReport};

const LANE_W: usize = 190;
const ROW_H: usize = 46;
const TOP: usize = 64;
const MARGIN: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Normal,
    Fault,
    Failed,
    Quiet,
}

impl Tone {
    fn class(self) -> &'static str {
        match self {
            Tone::Normal => "n",
            Tone::Fault => "f",
            Tone::Failed => "x",
            Tone::Quiet => "q",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Shape {
    Arrow {
        from: usize,
        from_row: usize,
        to: usize,
        to_row: usize,
        label: String,
        answer: String,
        tone: Tone,
        /// Never arrived (lost, or still in flight when the run ended).
        open: bool,
    },
    Mark {
        lane: usize,
        row: usize,
        text: String,
        tone: Tone,
    },
}

#[derive(Debug, Clone, Default)]
pub struct Diagram {
    pub lanes: Vec<(String, bool)>,
    pub shapes: Vec<Shape>,
    pub rows: usize,
}

impl Diagram {
    fn lane(&mut self, name: &str) -> usize {
        if let Some(i) = self.lanes.iter().position(|(n, _)| n == name) {
            return i;
        }
        self.lanes.push((name.to_owned(), false));
        self.lanes.len() - 1
    }

    fn row(&mut self) -> usize {
        self.rows += 1;
        self.rows - 1
    }

    /// The crash scheduled inside a step, on a row of its own below it.
    fn crash_mark(&mut self, lane: usize, s: &StepReport) {
        if let Some(f) = &s.fault {
            let row = self.row();
            self.shapes.push(Shape::Mark {
                lane,
                row,
                text: format!("⚡ {f}"),
                tone: Tone::Fault,
            });
        }
    }

    /// A failed corpus case: senders on the left, the receiver under test,
    /// then the world its effects go to.
    pub fn from_transcript(steps: &[StepReport], under_test: &str) -> Diagram {
        let mut d = Diagram::default();
        for s in steps {
            if let Some(sender) = &s.sender {
                if s.op == "deliver" && sender != under_test {
                    d.lane(sender);
                }
            }
        }
        let me = d.lane(under_test);
        d.lanes[me].1 = true;
        let world = if steps.iter().any(|s| s.op == "execute" || s.op == "effects") {
            Some(d.lane("world"))
        } else {
            None
        };
        let network = if steps.iter().any(|s| s.op == "outgoing") {
            Some(d.lane("network"))
        } else {
            None
        };
        for s in steps {
            let tone = if s.ok { Tone::Normal } else { Tone::Failed };
            let row = d.row();
            match s.op.as_str() {
                "deliver" => {
                    let from = d.lane(s.sender.as_deref().unwrap_or("?"));
                    let label = format!("{}. {}", s.step + 1, s.gloss);
                    if from == me {
                        // The receiver's own message, recorded as sent.
                        d.shapes.push(Shape::Mark {
                            lane: me,
                            row,
                            text: format!("{label} → {}", s.answer),
                            tone: if s.ok { Tone::Quiet } else { Tone::Failed },
                        });
                    } else {
                        d.shapes.push(Shape::Arrow {
                            from,
                            from_row: row,
                            to: me,
                            to_row: row,
                            label,
                            answer: s.answer.clone(),
                            tone,
                            open: false,
                        });
                    }
                    d.crash_mark(me, s);
                }
                "outgoing" => d.shapes.push(Shape::Arrow {
                    from: me,
                    from_row: row,
                    to: network.unwrap_or(me),
                    to_row: row,
                    label: format!("sends {}", s.gloss),
                    answer: String::new(),
                    tone,
                    open: false,
                }),
                "execute" => {
                    d.shapes.push(Shape::Arrow {
                        from: me,
                        from_row: row,
                        to: world.unwrap_or(me),
                        to_row: row,
                        label: format!("{}. {}", s.step + 1, s.gloss),
                        answer: s.answer.clone(),
                        tone,
                        open: false,
                    });
                    d.crash_mark(me, s);
                }
                "effects" => d.shapes.push(Shape::Mark {
                    lane: world.unwrap_or(me),
                    row,
                    text: format!("{}. effects: {}", s.step + 1, s.answer),
                    tone: if s.ok { Tone::Quiet } else { Tone::Failed },
                }),
                "view" => d.shapes.push(Shape::Mark {
                    lane: me,
                    row,
                    text: format!(
                        "{}. {}{}",
                        s.step + 1,
                        s.gloss,
                        if s.ok { "" } else { " ✘ differs" }
                    ),
                    tone: if s.ok { Tone::Quiet } else { Tone::Failed },
                }),
                "crash" => d.shapes.push(Shape::Mark {
                    lane: me,
                    row,
                    text: format!("{}. ⚡ crash", s.step + 1),
                    tone: Tone::Fault,
                }),
                _ => d.shapes.push(Shape::Mark {
                    lane: me,
                    row,
                    text: format!("{}. ↺ {}", s.step + 1, s.gloss),
                    tone: Tone::Fault,
                }),
            }
        }
        d
    }

    /// A shrunk simulation run: every agent a lifeline, each copy of a
    /// message an arrow from its send row to its delivery row.
    pub fn from_sequence(events: &[SeqEvent]) -> Diagram {
        let mut d = Diagram::default();
        for e in events {
            if let Some(a) = &e.agent {
                d.lane(a);
            }
            for t in &e.to {
                d.lane(t);
            }
        }
        // Send row and open recipients of each message.
        let mut sends: BTreeMap<usize, (usize, usize, Vec<String>, bool)> = BTreeMap::new();
        for e in events {
            let row = d.row();
            let agent = e.agent.as_deref().map(|a| d.lane(a));
            match e.kind.as_str() {
                "send" => {
                    let from = agent.unwrap_or(0);
                    sends.insert(
                        e.message.unwrap_or(usize::MAX),
                        (from, row, e.to.clone(), e.spoofed),
                    );
                    d.shapes.push(Shape::Mark {
                        lane: from,
                        row,
                        text: format!("{}{}", if e.spoofed { "☠ " } else { "" }, e.text),
                        tone: if e.spoofed { Tone::Fault } else { Tone::Quiet },
                    });
                }
                "deliver" | "lost" => {
                    let to = agent.unwrap_or(0);
                    if let Some((from, from_row, open, spoofed)) =
                        e.message.and_then(|m| sends.get_mut(&m))
                    {
                        let lost = e.kind == "lost";
                        if !lost {
                            if let Some(n) = open.iter().position(|t| Some(t) == e.agent.as_ref()) {
                                open.remove(n);
                            }
                        }
                        d.shapes.push(Shape::Arrow {
                            from: *from,
                            from_row: *from_row,
                            to,
                            to_row: row,
                            // The send is labelled once, on the sender's lifeline.
                            label: String::new(),
                            answer: e.text.clone(),
                            tone: if lost || *spoofed {
                                Tone::Fault
                            } else {
                                Tone::Normal
                            },
                            open: lost,
                        });
                    }
                }
                "violation" => d.shapes.push(Shape::Mark {
                    lane: agent.unwrap_or(0),
                    row,
                    text: e.text.clone(),
                    tone: Tone::Failed,
                }),
                "fault" => d.shapes.push(Shape::Mark {
                    lane: agent.unwrap_or(0),
                    row,
                    text: e.text.clone(),
                    tone: Tone::Fault,
                }),
                _ => d.shapes.push(Shape::Mark {
                    lane: agent.unwrap_or(0),
                    row,
                    text: e.text.clone(),
                    tone: Tone::Normal,
                }),
            }
        }
        d
    }

    fn x(&self, lane: usize) -> usize {
        MARGIN + LANE_W / 2 + lane * LANE_W
    }

    fn y(row: usize) -> usize {
        TOP + 20 + row * ROW_H
    }

    pub fn svg(&self, title: &str) -> String {
        let width = MARGIN * 2 + self.lanes.len().max(1) * LANE_W;
        let height = Self::y(self.rows) + 10;
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="seq" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}"><title>{}</title><defs><marker id="ah" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>"#,
            esc(title)
        );
        for (i, (name, under_test)) in self.lanes.iter().enumerate() {
            let x = self.x(i);
            let _ = write!(
                s,
                r#"<line class="life" x1="{x}" y1="{}" x2="{x}" y2="{}"/><rect class="head{}" x="{}" y="8" width="{}" height="30" rx="6"/><text class="lane" x="{x}" y="28" text-anchor="middle">{}</text>"#,
                TOP - 26,
                height - 4,
                if *under_test { " iut" } else { "" },
                x - LANE_W / 2 + 10,
                LANE_W - 20,
                esc(&clip(name, 22)),
            );
            if *under_test {
                let _ = write!(
                    s,
                    r#"<text class="sub" x="{x}" y="52" text-anchor="middle">under test</text>"#
                );
            }
        }
        for shape in &self.shapes {
            match shape {
                Shape::Arrow {
                    from,
                    from_row,
                    to,
                    to_row,
                    label,
                    answer,
                    tone,
                    open,
                } => {
                    let (x1, y1, x2, y2) = (
                        self.x(*from),
                        Self::y(*from_row),
                        self.x(*to),
                        Self::y(*to_row),
                    );
                    let (x2, y2) = if *open {
                        ((x1 + x2) / 2, (y1 + y2) / 2)
                    } else {
                        (x2, y2)
                    };
                    let mid = (x1 + x2) / 2;
                    let _ = write!(
                        s,
                        r#"<g class="{}"><title>{}{}</title><line class="msg" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" marker-end="url(#ah)"/>"#,
                        tone.class(),
                        esc(label),
                        if answer.is_empty() {
                            String::new()
                        } else {
                            format!(" → {}", esc(answer))
                        },
                    );
                    if *open {
                        let _ = write!(
                            s,
                            r#"<text class="lost" x="{x2}" y="{}" text-anchor="middle">✗</text>"#,
                            y2 + 5
                        );
                    }
                    if !label.is_empty() {
                        let _ = write!(
                            s,
                            r#"<text class="lbl" x="{mid}" y="{}" text-anchor="middle">{}</text>"#,
                            y1.min(y2) - 6,
                            esc(&clip(label, 34)),
                        );
                    }
                    if !answer.is_empty() && !*open {
                        let anchor = if x2 >= x1 { "end" } else { "start" };
                        let ax = if x2 >= x1 { x2 - 4 } else { x2 + 4 };
                        let _ = write!(
                            s,
                            r#"<text class="ans" x="{ax}" y="{}" text-anchor="{anchor}">{}</text>"#,
                            y2 + 15,
                            esc(&clip(answer, 30)),
                        );
                    }
                    s.push_str("</g>");
                }
                Shape::Mark {
                    lane,
                    row,
                    text,
                    tone,
                } => {
                    let x = self.x(*lane);
                    let y = Self::y(*row);
                    let w = LANE_W - 12;
                    let _ = write!(
                        s,
                        r#"<g class="{}"><title>{}</title><rect class="mark" x="{}" y="{}" width="{w}" height="24" rx="4"/><text class="mk" x="{x}" y="{}" text-anchor="middle">{}</text></g>"#,
                        tone.class(),
                        esc(text),
                        x - w / 2,
                        y - 14,
                        y + 2,
                        esc(&clip(text, 30)),
                    );
                }
            }
        }
        s.push_str("</svg>");
        s
    }
}

/// At most `n` characters, with an ellipsis when cut.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!(
            "{}…",
            s.chars().take(n.saturating_sub(1)).collect::<String>()
        )
    }
}

/// Escapes text for XML and HTML content and attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0, and bidi
            // controls would reorder what the page shows: both are shown
            // as visible escapes.
            c if c != '\n' && c != '\t' && crate::escape::is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(op: &str, sender: Option<&str>, ok: bool) -> StepReport {
        StepReport {
            step: 0,
            op: op.into(),
            sender: sender.map(str::to_owned),
            gloss: "alice → bob | ASK | <why?> & \"how\"".into(),
            frame: None,
            frame_base64: None,
            answer: "alice:1 accepted".into(),
            fault: None,
            ok,
        }
    }

    #[test]
    fn a_transcript_draws_lifelines_arrows_and_escapes_text() {
        let d = Diagram::from_transcript(
            &[
                step("deliver", Some("alice"), true),
                step("crash", None, true),
                step("deliver", Some("mallory"), false),
            ],
            "bob",
        );
        assert_eq!(
            d.lanes.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["alice", "mallory", "bob"]
        );
        let svg = d.svg("case");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("class=\"msg\"").count(), 2);
        assert!(svg.contains("⚡ crash"));
        assert!(svg.contains("&lt;why?&gt; &amp; &quot;how&quot;"));
        assert!(!svg.contains("<why?>"));
        assert!(
            svg.contains("<g class=\"x\">"),
            "the failed step is drawn as failed"
        );
    }

    #[test]
    fn a_delayed_message_is_slanted_and_a_lost_one_open() {
        let ev = |kind: &str, agent: &str, message: Option<usize>| SeqEvent {
            at: 0,
            kind: kind.into(),
            message,
            agent: Some(agent.into()),
            to: if kind == "send" {
                vec!["bob".into(), "carol".into()]
            } else {
                vec![]
            },
            text: kind.into(),
            frame: None,
            frame_base64: None,
            spoofed: false,
        };
        let d = Diagram::from_sequence(&[
            ev("send", "alice", Some(0)),
            ev("fault", "carol", None),
            ev("deliver", "bob", Some(0)),
            ev("lost", "carol", Some(0)),
        ]);
        let arrows: Vec<_> = d
            .shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Arrow {
                    from_row,
                    to_row,
                    open,
                    ..
                } => Some((*from_row, *to_row, *open)),
                _ => None,
            })
            .collect();
        assert_eq!(arrows, [(0, 2, false), (0, 3, true)]);
    }
}
