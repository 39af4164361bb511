//! The readers a case file and a scope file share: where an error is
//! (the file, the JSON pointer), a setup, a local time, a checked name,
//! and serde's reading with the path of the member it stopped at. One
//! place for them, so that both kinds of file explain a mistake alike.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use tern_model::ledger::{LedgerConfig, LocalTime};
use tern_model::message::{Participant, Principal, Timestamp};

use super::case::Setup;
use super::CorpusError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSetup {
    participant: String,
    principal: String,
    config: Value,
}

/// A setup as a case or a scope spells it; `pointer` is where it sits in
/// the file.
pub(crate) fn setup_of(at: &At, pointer: &str, raw: RawSetup) -> Result<Setup, CorpusError> {
    let participant = name(
        at,
        &format!("{pointer}/participant"),
        &raw.participant,
        |s| Participant::new(s),
    )?;
    let principal = name(at, &format!("{pointer}/principal"), &raw.principal, |s| {
        Principal::new(s)
    })?;
    let mut config = raw.config;
    match config.as_object_mut() {
        Some(o) => match o.get("participant") {
            None => {
                o.insert("participant".into(), Value::String(participant.to_string()));
            }
            Some(Value::String(p)) if p == participant.as_str() => {}
            Some(_) => {
                return Err(at.err(
                    format!("{pointer}/config/participant"),
                    "must be left out or equal `setup.participant`",
                ))
            }
        },
        None => return Err(at.err(format!("{pointer}/config"), "must be an object")),
    }
    let config = LedgerConfig::from_json(&config.to_string())
        .map_err(|e| at.err(format!("{pointer}/config"), e.to_string()))?;
    Ok(Setup {
        participant,
        principal,
        config,
    })
}

/// Builds errors that name the file and the member.
pub(crate) struct At<'a> {
    pub(crate) file: &'a Path,
}

impl At<'_> {
    pub(crate) fn err(
        &self,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> CorpusError {
        CorpusError::Invalid {
            file: self.file.to_path_buf(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

pub(crate) fn local_time(
    at: &At,
    pointer: &str,
    text: Option<&str>,
) -> Result<LocalTime, CorpusError> {
    match text {
        None => Ok(LocalTime(0)),
        Some(t) => Timestamp::parse(t)
            .map(|ts| LocalTime::from_timestamp(&ts))
            .map_err(|e| at.err(pointer, format!("not an RFC 3339 timestamp: {e}"))),
    }
}

pub(crate) fn name<T>(
    at: &At,
    pointer: &str,
    text: &str,
    make: impl Fn(&str) -> Result<T, String>,
) -> Result<T, CorpusError> {
    make(text).map_err(|e| at.err(pointer, e))
}

/// A file's text as `T`; an error names the file and the path of the
/// member serde stopped at.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(
    file: &Path,
    text: &str,
) -> Result<T, CorpusError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        CorpusError::Invalid {
            file: file.to_path_buf(),
            pointer: if path == "." { String::new() } else { path },
            message: e.into_inner().to_string(),
        }
    })
}
