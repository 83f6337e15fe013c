//! The multiline merger's per-source state (`streams/assemble/merger.py`: `_Open.to_dict`/`from_dict`,
//! `MultilineMerger.source_state`/`restore_source`), read and written as the Python core does: the same
//! JSON bytes out, the same older states read. A state this reader is not sure of (a value of another
//! type than the Python core writes, a float, a lone surrogate, a field it does not know) is `Defer`:
//! the caller reads it in Python.

use std::collections::{HashMap, HashSet};

use pyo3::prelude::*;
use serde_json::{Map, Value};

use crate::pyjson::{self, py_isspace, truthy, Defer};

/// One line as `RawLine` holds it.
pub struct Line {
    pub text: String,
    pub file_offset: Option<i64>,
    pub ts_ms: Option<i64>,
    pub source: Value,
    pub labels: Value,
    pub partial: bool,
    pub index: i64,
    /// the envelope's level and figures (`RawLine.level`, `.fields`), written only where an agent gave them
    pub level: Option<String>,
    pub fields: Option<Value>,
}

/// An open block's lines so far, as `Block` holds them.
pub struct Block {
    pub source_id: String,
    pub texts: Vec<String>,
    pub first_offset: i64,
    pub last_offset: i64,
    pub first_index: i64,
    pub first_file_offset: Option<i64>,
    pub last_file_offset: Option<i64>,
    pub first_ts_ms: i64,
    pub last_ts_ms: i64,
    pub source: Value,
    pub labels: Value,
    pub kind: Option<String>,
    pub truncated: bool,
    pub nbytes: i64,
    pub prefix: String,
    pub level: Option<String>,
    pub fields: Option<Value>,
}

/// A line held beside a block: (line, Kafka offset, arrival ms).
pub type Held = (Line, i64, i64);

/// `_Open`: an open block and the merger's state about it.
pub struct Open {
    pub block: Block,
    pub mode: String,
    pub indent0: i64,
    pub head0: String,
    pub rhead: Option<String>,
    pub last_body: String,
    pub depth: i64,
    pub side_run: i64,
    pub every: bool,
    pub spaced: i64,
    pub cindent: String,
    /// the lines held are the rest of a line a terminal cut at its width
    pub wrap_tent: bool,
    /// blank lines since the last line, each with whether it is visible (a prefix with nothing after it)
    pub held: Vec<(Held, bool)>,
    /// lines held until the grammar confirms them
    pub tent: Vec<Held>,
}

/// The merger's part of one source's state: its open blocks by prefix, in their order.
pub struct SourceState {
    pub open: Vec<(String, Open)>,
    pub last_key: Option<String>,
    pub shift: Option<(i64, i64)>,
    /// what a terminal's hard wraps say of the source: its longest line, the width it wrapped at, whether
    /// one line alone is that long
    pub wide: Option<(i64, i64, bool)>,
}

/// What a restore needs from the Python side: the modes of `rules.MODES` and the names older states used.
pub struct Modes {
    pub modes: HashSet<String>,
    pub old_modes: HashMap<String, String>,
    pub old_table_modes: HashMap<String, String>,
    /// the old "panic" mode's successors: for a block of kind rust_panic, for any other
    pub panic_modes: (String, String),
    pub source_fields: Vec<String>,
}

fn int(v: &Value) -> Result<i64, Defer> {
    v.as_i64().ok_or(Defer)
}

fn opt_int(v: &Value) -> Result<Option<i64>, Defer> {
    if v.is_null() {
        return Ok(None);
    }
    int(v).map(Some)
}

fn string(v: &Value) -> Result<String, Defer> {
    v.as_str().map(str::to_owned).ok_or(Defer)
}

fn opt_string(v: &Value) -> Result<Option<String>, Defer> {
    if v.is_null() {
        return Ok(None);
    }
    string(v).map(Some)
}

fn boolean(v: &Value) -> Result<bool, Defer> {
    v.as_bool().ok_or(Defer)
}

/// A value kept as it is (a source or labels dict): written back as read, so no float in it.
fn kept(v: &Value) -> Result<Value, Defer> {
    let mut probe = String::new();
    pyjson::write_value(&mut probe, v)?;
    Ok(v.clone())
}

/// An optional kept value: null reads as absent.
fn opt_kept(v: &Value) -> Result<Option<Value>, Defer> {
    if v.is_null() {
        return Ok(None);
    }
    kept(v).map(Some)
}

/// The envelope's level and figures, after the other fields and only where present, as `lines.saved` writes them.
fn write_envelope(out: &mut String, level: Option<&str>, fields: Option<&Value>) -> Result<(), Defer> {
    if let Some(level) = level {
        out.push_str(",\"level\":");
        pyjson::write_str(out, level);
    }
    if let Some(fields) = fields {
        out.push_str(",\"fields\":");
        pyjson::write_value(out, fields)?;
    }
    Ok(())
}

/// `d.get(name)` with a default when absent; a present value must read.
fn get_or<T>(d: &Map<String, Value>, name: &str, default: T, read: fn(&Value) -> Result<T, Defer>) -> Result<T, Defer> {
    d.get(name).map_or(Ok(default), read)
}

impl Line {
    /// `RawLine(**d)`: the text required, the rest defaulted, no other field.
    fn from_value(v: &Value, fields: &[String]) -> Result<Line, Defer> {
        let d = v.as_object().ok_or(Defer)?;
        let mut line = Line {
            text: String::new(),
            file_offset: None,
            ts_ms: None,
            source: empty_source(fields),
            labels: Value::Object(Map::new()),
            partial: false,
            index: 0,
            level: None,
            fields: None,
        };
        let mut text = None;
        for (k, v) in d {
            match k.as_str() {
                "text" => text = Some(string(v)?),
                "file_offset" => line.file_offset = opt_int(v)?,
                "ts_ms" => line.ts_ms = opt_int(v)?,
                "source" => line.source = kept(v)?,
                "labels" => line.labels = kept(v)?,
                "partial" => line.partial = boolean(v)?,
                "index" => line.index = int(v)?,
                "level" => line.level = opt_string(v)?,
                "fields" => line.fields = opt_kept(v)?,
                _ => return Err(Defer),
            }
        }
        line.text = text.ok_or(Defer)?;
        Ok(line)
    }

    fn write(&self, out: &mut String) -> Result<(), Defer> {
        out.push_str("{\"text\":");
        pyjson::write_str(out, &self.text);
        out.push_str(",\"file_offset\":");
        pyjson::write_opt_int(out, self.file_offset);
        out.push_str(",\"ts_ms\":");
        pyjson::write_opt_int(out, self.ts_ms);
        out.push_str(",\"source\":");
        pyjson::write_value(out, &self.source)?;
        out.push_str(",\"labels\":");
        pyjson::write_value(out, &self.labels)?;
        out.push_str(",\"partial\":");
        pyjson::write_bool(out, self.partial);
        out.push_str(",\"index\":");
        pyjson::write_int(out, self.index);
        write_envelope(out, self.level.as_deref(), self.fields.as_ref())?;
        out.push('}');
        Ok(())
    }
}

fn empty_source(fields: &[String]) -> Value {
    Value::Object(fields.iter().map(|f| (f.clone(), Value::Null)).collect())
}

impl Block {
    /// `Block(**d)`: the fields without a default required, no other field.
    fn from_value(v: &Value) -> Result<Block, Defer> {
        let d = v.as_object().ok_or(Defer)?;
        let need = |name: &str| d.get(name).ok_or(Defer);
        let known = ["source_id", "texts", "first_offset", "last_offset", "first_index", "first_file_offset",
                     "last_file_offset", "first_ts_ms", "last_ts_ms", "source", "labels", "kind", "truncated",
                     "nbytes", "prefix", "level", "fields"];
        if d.keys().any(|k| !known.contains(&k.as_str())) {
            return Err(Defer);
        }
        let texts = need("texts")?.as_array().ok_or(Defer)?.iter().map(string).collect::<Result<Vec<_>, _>>()?;
        Ok(Block {
            source_id: string(need("source_id")?)?,
            texts,
            first_offset: int(need("first_offset")?)?,
            last_offset: int(need("last_offset")?)?,
            first_index: int(need("first_index")?)?,
            first_file_offset: opt_int(need("first_file_offset")?)?,
            last_file_offset: opt_int(need("last_file_offset")?)?,
            first_ts_ms: int(need("first_ts_ms")?)?,
            last_ts_ms: int(need("last_ts_ms")?)?,
            source: kept(need("source")?)?,
            labels: kept(need("labels")?)?,
            kind: get_or(d, "kind", None, opt_string)?,
            truncated: get_or(d, "truncated", false, boolean)?,
            nbytes: get_or(d, "nbytes", 0, int)?,
            prefix: get_or(d, "prefix", String::new(), string)?,
            level: get_or(d, "level", None, opt_string)?,
            fields: get_or(d, "fields", None, opt_kept)?,
        })
    }

    fn write(&self, out: &mut String) -> Result<(), Defer> {
        out.push_str("{\"source_id\":");
        pyjson::write_str(out, &self.source_id);
        out.push_str(",\"texts\":[");
        for (i, t) in self.texts.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            pyjson::write_str(out, t);
        }
        out.push_str("],\"first_offset\":");
        pyjson::write_int(out, self.first_offset);
        out.push_str(",\"last_offset\":");
        pyjson::write_int(out, self.last_offset);
        out.push_str(",\"first_index\":");
        pyjson::write_int(out, self.first_index);
        out.push_str(",\"first_file_offset\":");
        pyjson::write_opt_int(out, self.first_file_offset);
        out.push_str(",\"last_file_offset\":");
        pyjson::write_opt_int(out, self.last_file_offset);
        out.push_str(",\"first_ts_ms\":");
        pyjson::write_int(out, self.first_ts_ms);
        out.push_str(",\"last_ts_ms\":");
        pyjson::write_int(out, self.last_ts_ms);
        out.push_str(",\"source\":");
        pyjson::write_value(out, &self.source)?;
        out.push_str(",\"labels\":");
        pyjson::write_value(out, &self.labels)?;
        out.push_str(",\"kind\":");
        pyjson::write_opt_str(out, self.kind.as_deref());
        out.push_str(",\"truncated\":");
        pyjson::write_bool(out, self.truncated);
        out.push_str(",\"nbytes\":");
        pyjson::write_int(out, self.nbytes);
        out.push_str(",\"prefix\":");
        pyjson::write_str(out, &self.prefix);
        write_envelope(out, self.level.as_deref(), self.fields.as_ref())?;
        out.push('}');
        Ok(())
    }
}

impl Open {
    /// `_Open.from_dict`, older states' modes and blank lines included.
    fn from_value(v: &Value, modes: &Modes) -> Result<Open, Defer> {
        let d = v.as_object().ok_or(Defer)?;
        let block = Block::from_value(d.get("block").ok_or(Defer)?)?;
        let saved = d.get("mode").ok_or(Defer)?.as_str().ok_or(Defer)?;
        let mut mode = saved.to_owned();
        if !modes.modes.contains(saved) {
            mode = modes.old_modes.get(saved).cloned().unwrap_or_else(|| "plain".to_owned());
            if saved == "table" {
                let close = match d.get("close") {
                    None => "",
                    Some(Value::String(s)) => s.as_str(),
                    Some(_) => return Err(Defer),
                };
                mode = modes.old_table_modes.get(close).cloned().unwrap_or_else(|| "plain".to_owned());
            } else if saved == "panic" {
                let (rust, other) = &modes.panic_modes;
                mode = if block.kind.as_deref() == Some("rust_panic") { rust.clone() } else { other.clone() };
            }
        }
        let mut held = Vec::new();
        if let Some(v) = d.get("held") {
            for entry in v.as_array().ok_or(Defer)? {
                match entry.as_array().map(Vec::as_slice) {
                    Some([rl, o, ms, vis]) => held.push((
                        (Line::from_value(rl, &modes.source_fields)?, int(o)?, int(ms)?), boolean(vis)?)),
                    _ => return Err(Defer),
                }
            }
        }
        if let Some(v) = d.get("pending") {
            // older states held blank texts only: (text, offset, file offset), arrived with the block's last line
            for entry in v.as_array().ok_or(Defer)? {
                match entry.as_array().map(Vec::as_slice) {
                    Some([t, o, fo]) => {
                        let text = string(t)?;
                        let visible = !text.chars().all(py_isspace);
                        let line = Line {
                            text,
                            file_offset: opt_int(fo)?,
                            ts_ms: None,
                            source: empty_source(&modes.source_fields),
                            labels: Value::Object(Map::new()),
                            partial: false,
                            index: 0,
                            level: None,
                            fields: None,
                        };
                        held.push(((line, int(o)?, block.last_ts_ms), visible));
                    }
                    _ => return Err(Defer),
                }
            }
        }
        let mut tent = Vec::new();
        if let Some(v) = d.get("tent") {
            for entry in v.as_array().ok_or(Defer)? {
                match entry.as_array().map(Vec::as_slice) {
                    Some([rl, o, ms]) => tent.push((Line::from_value(rl, &modes.source_fields)?, int(o)?, int(ms)?)),
                    _ => return Err(Defer),
                }
            }
        }
        Ok(Open {
            mode,
            indent0: get_or(d, "indent0", 0, int)?,
            head0: get_or(d, "head0", String::new(), string)?,
            rhead: get_or(d, "rhead", None, opt_string)?,
            last_body: get_or(d, "last_body", String::new(), string)?,
            depth: get_or(d, "depth", 0, int)?,
            side_run: get_or(d, "side_run", 0, int)?,
            every: get_or(d, "every", false, boolean)?,
            spaced: get_or(d, "spaced", 0, int)?,
            cindent: get_or(d, "cindent", String::new(), string)?,
            wrap_tent: get_or(d, "wrap_tent", false, boolean)?,
            block,
            held,
            tent,
        })
    }

    /// `_Open.to_dict` as JSON.
    fn write(&self, out: &mut String) -> Result<(), Defer> {
        out.push_str("{\"block\":");
        self.block.write(out)?;
        out.push_str(",\"mode\":");
        pyjson::write_str(out, &self.mode);
        out.push_str(",\"indent0\":");
        pyjson::write_int(out, self.indent0);
        out.push_str(",\"head0\":");
        pyjson::write_str(out, &self.head0);
        out.push_str(",\"rhead\":");
        pyjson::write_opt_str(out, self.rhead.as_deref());
        out.push_str(",\"last_body\":");
        pyjson::write_str(out, &self.last_body);
        out.push_str(",\"depth\":");
        pyjson::write_int(out, self.depth);
        out.push_str(",\"side_run\":");
        pyjson::write_int(out, self.side_run);
        out.push_str(",\"every\":");
        pyjson::write_bool(out, self.every);
        out.push_str(",\"spaced\":");
        pyjson::write_int(out, self.spaced);
        out.push_str(",\"cindent\":");
        pyjson::write_str(out, &self.cindent);
        out.push_str(",\"wrap_tent\":");
        pyjson::write_bool(out, self.wrap_tent);
        out.push_str(",\"held\":[");
        for (i, ((line, o, ms), visible)) in self.held.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('[');
            line.write(out)?;
            out.push(',');
            pyjson::write_int(out, *o);
            out.push(',');
            pyjson::write_int(out, *ms);
            out.push(',');
            pyjson::write_bool(out, *visible);
            out.push(']');
        }
        out.push_str("],\"tent\":[");
        for (i, (line, o, ms)) in self.tent.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('[');
            line.write(out)?;
            out.push(',');
            pyjson::write_int(out, *o);
            out.push(',');
            pyjson::write_int(out, *ms);
            out.push(']');
        }
        out.push_str("]}");
        Ok(())
    }
}

impl SourceState {
    /// `MultilineMerger.restore_source`: the merger's part of a whole state document.
    pub fn from_doc(doc: &Value, modes: &Modes) -> Result<SourceState, Defer> {
        let doc = doc.as_object().ok_or(Defer)?;
        let open = doc.get("open").ok_or(Defer)?.as_object().ok_or(Defer)?.iter()
            .map(|(k, v)| Ok((k.clone(), Open::from_value(v, modes)?)))
            .collect::<Result<Vec<_>, Defer>>()?;
        let last_key = match doc.get("last_key") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(Defer),
        };
        let shift = match doc.get("shift") {
            Some(v) if truthy(v) => match v.as_array().map(Vec::as_slice) {
                Some([n, ms]) => Some((int(n)?, int(ms)?)),
                _ => return Err(Defer),
            },
            _ => None,
        };
        let wide = match doc.get("wide") {
            Some(v) if truthy(v) => match v.as_array().map(Vec::as_slice) {
                Some([n, w, alone]) => Some((int(n)?, int(w)?, boolean(alone)?)),
                _ => return Err(Defer),
            },
            _ => None,
        };
        Ok(SourceState { open, last_key, shift, wide })
    }

    /// `MultilineMerger.source_state` as the JSON members `"open":{...},"last_key":...,"shift":...`.
    pub fn write_members(&self, out: &mut String) -> Result<(), Defer> {
        out.push_str("\"open\":{");
        for (i, (key, ob)) in self.open.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            pyjson::write_str(out, key);
            out.push(':');
            ob.write(out)?;
        }
        out.push_str("},\"last_key\":");
        pyjson::write_opt_str(out, self.last_key.as_deref());
        out.push_str(",\"shift\":");
        match self.shift {
            Some((n, ms)) => {
                out.push('[');
                pyjson::write_int(out, n);
                out.push(',');
                pyjson::write_int(out, ms);
                out.push(']');
            }
            None => out.push_str("null"),
        }
        out.push_str(",\"wide\":");
        match self.wide {
            Some((n, w, alone)) => {
                out.push('[');
                pyjson::write_int(out, n);
                out.push(',');
                pyjson::write_int(out, w);
                out.push(',');
                pyjson::write_bool(out, alone);
                out.push(']');
            }
            None => out.push_str("null"),
        }
        Ok(())
    }
}

/// The merger's state reader and writer, given the modes by the Python side at start.
#[pyclass(module = "streams._native", frozen)]
pub struct MergerState {
    modes: Modes,
}

#[pymethods]
impl MergerState {
    #[new]
    fn new(modes: Vec<String>, old_modes: HashMap<String, String>, old_table_modes: HashMap<String, String>,
           panic_modes: (String, String), source_fields: Vec<String>) -> Self {
        MergerState {
            modes: Modes { modes: modes.into_iter().collect(), old_modes, old_table_modes, panic_modes, source_fields },
        }
    }

    /// The merger's part of a saved source state (the JSON bytes `streams/assemble/state.py` wrote, of
    /// this version or an older one), read natively and written again as `{"open":...,"last_key":...,
    /// "shift":...}` in the Python core's bytes; None when the Python core is to read it.
    fn reread(&self, doc: &[u8]) -> Option<String> {
        let value: Value = serde_json::from_slice(doc).ok()?;
        let state = SourceState::from_doc(&value, &self.modes).ok()?;
        let mut out = String::from("{");
        state.write_members(&mut out).ok()?;
        out.push('}');
        Some(out)
    }
}
