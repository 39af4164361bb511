//! The seed's human shorthand (section 7): `drafter → reviewer | ASK | text`.
//! A readable gloss for traces and reports, never executable.

use serde_json::Value;

fn first_claim(body: &Value) -> Option<&str> {
    body["claims"].get(0).and_then(|c| c["text"].as_str())
}

/// The gloss of one message's content.
pub fn gloss(m: &Value) -> String {
    let body = &m["body"];
    let text = match m["act"].as_str().unwrap_or("") {
        "ASK" => body["question"].as_str().unwrap_or("").to_owned(),
        "TELL" => first_claim(body).unwrap_or("").to_owned(),
        "PROPOSE" => body["proposal"].as_str().unwrap_or("").to_owned(),
        "REQUEST" => {
            let mut s = body["action"].as_str().unwrap_or("").to_owned();
            if let Some(r) = body["replaces"].as_str() {
                s.push_str(&format!(" (replaces {r})"));
            }
            s
        }
        "COMMIT" => format!(
            "{} (to {})",
            body["action"].as_str().unwrap_or(""),
            body["request"].as_str().unwrap_or("")
        ),
        "REPORT" => format!(
            "{} is {}{}",
            body["commitment"].as_str().unwrap_or(""),
            body["state"].as_str().unwrap_or(""),
            first_claim(body)
                .map(|c| format!(": {c}"))
                .unwrap_or_default()
        ),
        "REVISE" => format!(
            "{} {} (after {})",
            body["mode"].as_str().unwrap_or(""),
            body["target"].as_str().unwrap_or(""),
            body["previous"].as_str().unwrap_or("")
        ),
        "ACK" => format!("received {}", body["target"].as_str().unwrap_or("")),
        "CHALLENGE" => format!(
            "{} of {}: {}",
            body["kind"].as_str().unwrap_or(""),
            body["target"].as_str().unwrap_or(""),
            body["reason"].as_str().unwrap_or("")
        ),
        _ => String::new(),
    };
    text
}

/// `from → to, to | ACT | gloss   [id, thread]` for a message, or a note on
/// a frame that is not one.
pub fn line(frame: &[u8], claimed_by: Option<&str>) -> String {
    match serde_json::from_slice::<Value>(frame) {
        Ok(m) if m.is_object() && m["act"].is_string() => {
            let to: Vec<&str> = m["to"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            format!(
                "{} → {} | {} | {}   [{}, {}]",
                m["from"].as_str().unwrap_or("?"),
                to.join(", "),
                m["act"].as_str().unwrap_or("?"),
                gloss(&m),
                m["id"].as_str().unwrap_or("?"),
                m["thread"].as_str().unwrap_or("?"),
            )
        }
        _ => format!(
            "{} → … | (not a valid frame: {} bytes)",
            claimed_by.unwrap_or("?"),
            frame.len()
        ),
    }
}

/// "1st", "2nd", "11th": for the crash points told in words.
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_example_reads_as_in_section_7() {
        let m = br#"{"tern":"0.1","id":"drafter:1","from":"drafter","to":["reviewer"],"thread":"design","reply":null,"act":"ASK","body":{"question":"Which assumption is weakest?"}}"#;
        assert_eq!(
            line(m, None),
            "drafter → reviewer | ASK | Which assumption is weakest?   [drafter:1, design]"
        );
        assert!(line(b"{\"a\"", Some("mallory")).starts_with("mallory → … | (not a valid frame"));
    }
}
