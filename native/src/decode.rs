//! Raw record values -> lines, as `streams/assemble/decode.py` reads them, for the shapes that carry
//! most lines: plain text, CRI lines and `sluice.v1.RawBatch` Avro bodies.
//!
//! Every answer is either exactly the Python decoder's (the same `RawLine` values, dicts shared as
//! the Python decoder shares them) or `None`: "decode this record in Python". Envelopes (JSON,
//! syslog, OTLP), empty values, Avro of another schema or anything this reader is not sure of (a
//! corrupt body, whose dead letter carries fastavro's own message; a CRI time in non-ASCII digits,
//! which Python's `\d` reads) take the Python path; the differential test holds the rest to it.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

/// How a record's Avro schema id reads (decided in Python, once per schema id).
pub const AVRO_OTHER: u8 = 0; // not the RawBatch contract: the Python decoder reads it
pub const AVRO_PLAIN: u8 = 1; // RawBatch without logical types: times are the longs on the wire
pub const AVRO_LOGICAL: u8 = 2; // RawBatch with timestamp-millis: times go through datetime, as in Python

pub struct Defer;

/// `final_redraw` where it is the last non-empty `\r` segment: the text has no `\r`, or its first
/// segment is empty (a bar that starts with `\r`), or that segment is the one shown. Otherwise
/// `Err(Defer)`: a relay's prefix before the first segment is kept by rules of the merger's
/// (`split_prefix`), which the Python `final_redraw` applies.
pub fn final_redraw(text: &str) -> Result<&str, Defer> {
    if !text.contains('\r') {
        return Ok(text);
    }
    let mut segs = text.split('\r');
    let first = segs.next().unwrap_or("");
    let last = text.rsplit('\r').find(|s| !s.is_empty());
    match last {
        None => Ok(""),
        Some(seg) if first.is_empty() || std::ptr::eq(seg.as_ptr(), first.as_ptr()) => Ok(seg),
        Some(_) => Err(Defer),
    }
}

fn strip_one(s: &str, c: char) -> &str {
    s.strip_suffix(c).unwrap_or(s)
}

fn no_nul(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        std::borrow::Cow::Owned(s.replace('\0', ""))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0')))
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn month_days(y: u32, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `int(x.timestamp() * 1000)` of an aware datetime ``us`` microseconds after the epoch, with the
/// float steps Python takes (exact only where ``us`` is a float exactly: otherwise Python decides).
pub fn py_timestamp_ms(us: i64) -> Result<i64, Defer> {
    if us.unsigned_abs() >= 1u64 << 53 {
        return Err(Defer);
    }
    let seconds = us as f64 / 1e6;
    Ok((seconds * 1000.0) as i64)
}

/// `rfc3339_ms` of a CRI time (ASCII, the CRI pattern matched): Ok(None) where Python answers None.
fn rfc3339_ms(token: &str, max_ms: i64) -> Result<Option<i64>, Defer> {
    let b = token.as_bytes();
    // ^(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d): the CRI pattern gave the date and the T already
    if b.len() < 19 || b[13] != b':' || b[16] != b':' {
        return Ok(None);
    }
    let (Some(h), Some(mi), Some(s)) = (digits(&b[11..13]), digits(&b[14..16]), digits(&b[17..19])) else {
        return Ok(None);
    };
    let (y, mo, d) = (digits(&b[0..4]).ok_or(Defer)?, digits(&b[5..7]).ok_or(Defer)?, digits(&b[8..10]).ok_or(Defer)?);
    let mut i = 19;
    let mut micro = 0u32;
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = &b[start..i.min(start + 6)]; // Python keeps 6 digits
        micro = digits(frac).ok_or(Defer)? * 10u32.pow(6 - frac.len() as u32);
    }
    let rest = &b[i..];
    let (sign, oh, om) = match rest {
        [b'Z'] => (1, 0, 0),
        [sg @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let oh = digits(&[*h1, *h2]).ok_or(Defer)?;
            let om = digits(&[*m1, *m2]).ok_or(Defer)?;
            (if *sg == b'+' { 1 } else { -1 }, oh, om)
        }
        _ => return Err(Defer), // whatever else fromisoformat makes of it, Python decides
    };
    if !(1..=9999).contains(&y) || !(1..=12).contains(&mo) || d < 1 || d > month_days(y, mo) || h > 23 || mi > 59
        || s > 59 || oh > 23 || om > 59
    {
        return Err(Defer);
    }
    let days = days_from_civil(i64::from(y), i64::from(mo), i64::from(d));
    let secs = days * 86_400 + i64::from(h * 3600 + mi * 60 + s) - sign * i64::from(oh * 3600 + om * 60);
    py_timestamp_ms(secs * 1_000_000 + i64::from(micro)).map(|ms| agent_ms(Some(ms), max_ms))
}

/// `agent_ms`: an agent's time only where a date of the contract holds it (else the record's time).
pub fn agent_ms(ms: Option<i64>, max_ms: i64) -> Option<i64> {
    ms.filter(|v| 0 < *v && *v <= max_ms)
}

pub struct Cri<'a> {
    pub ts: Option<i64>,
    pub stream: &'static str,
    pub partial: bool,
    pub body: &'a str,
}

/// `_CRI_RE.match` on a decoded text (one trailing newline dropped first, as `_cri` does).
pub fn cri(text: &str, max_ms: i64) -> Result<Option<Cri<'_>>, Defer> {
    let t = strip_one(text, '\n');
    let Some(sp) = t.find(' ') else { return Ok(None) };
    let token = &t[..sp];
    if !token.is_ascii() {
        return Err(Defer); // Python's \d also reads other scripts' digits
    }
    let b = token.as_bytes();
    let shape = b.len() >= 12
        && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-' && b[8..10].iter().all(u8::is_ascii_digit) && b[10] == b'T';
    if !shape {
        return Ok(None);
    }
    let run = b[11..].iter().take_while(|c| c.is_ascii_digit() || **c == b':' || **c == b'.').count();
    let tz = &b[11 + run..];
    let tz_ok = matches!(tz, [b'Z'])
        || matches!(tz, [b'+' | b'-', h1, h2, b':', m1, m2] if [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()));
    if run == 0 || !tz_ok {
        return Ok(None);
    }
    let after = &t[sp + 1..];
    let stream = if after.starts_with("stdout ") {
        "stdout"
    } else if after.starts_with("stderr ") {
        "stderr"
    } else {
        return Ok(None);
    };
    let after = &after[7..];
    let partial = match after.as_bytes().first() {
        Some(b'P') => true,
        Some(b'F') => false,
        _ => return Ok(None),
    };
    let body = after[1..].strip_prefix(' ').unwrap_or(&after[1..]);
    let ts = rfc3339_ms(token, max_ms)?;
    Ok(Some(Cri { ts, stream, partial, body }))
}

/// A zigzag varint long, as fastavro reads it (at most 10 bytes; anything else is Python's to report).
fn read_long(buf: &[u8], pos: &mut usize) -> Result<i64, Defer> {
    let mut n: u64 = 0;
    let mut shift = 0;
    loop {
        let byte = *buf.get(*pos).ok_or(Defer)?;
        *pos += 1;
        if shift == 63 && byte > 1 {
            return Err(Defer);
        }
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 63 {
            return Err(Defer);
        }
    }
    Ok(((n >> 1) as i64) ^ -((n & 1) as i64))
}

fn read_str<'a>(buf: &'a [u8], pos: &mut usize) -> Result<&'a str, Defer> {
    let n = usize::try_from(read_long(buf, pos)?).map_err(|_| Defer)?;
    let end = pos.checked_add(n).filter(|e| *e <= buf.len()).ok_or(Defer)?;
    let s = std::str::from_utf8(&buf[*pos..end]).map_err(|_| Defer)?; // strict, as fastavro
    *pos = end;
    Ok(s)
}

fn read_optional_long(buf: &[u8], pos: &mut usize) -> Result<Option<i64>, Defer> {
    match read_long(buf, pos)? {
        0 => Ok(None),
        1 => read_long(buf, pos).map(Some),
        _ => Err(Defer),
    }
}

/// Items of an Avro array or map: blocks of a count (negative: followed by a byte size) until 0.
fn blocks(buf: &[u8], pos: &mut usize, mut item: impl FnMut(&mut usize) -> Result<(), Defer>) -> Result<(), Defer> {
    loop {
        let mut count = read_long(buf, pos)?;
        if count == 0 {
            return Ok(());
        }
        if count < 0 {
            count = count.checked_neg().ok_or(Defer)?;
            read_long(buf, pos)?;
        }
        for _ in 0..count {
            item(pos)?;
        }
    }
}

pub struct Batch<'a> {
    pub source: Vec<Option<SourceValue<'a>>>,
    pub labels: Vec<(&'a str, &'a str)>,
    pub lines: Vec<(&'a str, Option<i64>, Option<i64>)>,
}

pub enum SourceValue<'a> {
    Text(&'a str),
    Int(i64),
}

/// A RawBatch body (after the 5-byte header) as fastavro reads it, or Defer.
pub fn raw_batch(body: &[u8], mode: u8, max_ms: i64) -> Result<Batch<'_>, Defer> {
    let mut pos = 0;
    let mut source = Vec::with_capacity(8);
    for field in 0..8 {
        source.push(match read_long(body, &mut pos)? {
            0 => None,
            1 if field == 7 => {
                let n = read_long(body, &mut pos)?;
                if i32::try_from(n).is_err() {
                    return Err(Defer);
                }
                Some(SourceValue::Int(n))
            }
            1 => Some(SourceValue::Text(read_str(body, &mut pos)?)),
            _ => return Err(Defer),
        });
    }
    let mut labels = Vec::new();
    blocks(body, &mut pos, |p| {
        let k = read_str(body, p)?;
        let v = read_str(body, p)?;
        labels.push((k, v));
        Ok(())
    })?;
    let mut lines = Vec::new();
    blocks(body, &mut pos, |p| {
        let line = read_str(body, p)?;
        let file_offset = read_optional_long(body, p)?;
        let mut ts = read_optional_long(body, p)?;
        if mode == AVRO_LOGICAL {
            ts = match ts {
                Some(ms) if (0..(1i64 << 53) / 1000).contains(&ms) => Some(py_timestamp_ms(ms * 1000)?),
                Some(_) => return Err(Defer), // far from now: fastavro's datetime may refuse it
                None => None,
            };
        }
        lines.push((line, file_offset, agent_ms(ts, max_ms)));
        Ok(())
    })?;
    let sent = read_optional_long(body, &mut pos)?;
    if mode == AVRO_LOGICAL && sent.is_some_and(|ms| !(0..(1i64 << 53) / 1000).contains(&ms)) {
        return Err(Defer);
    }
    if pos != body.len() {
        return Err(Defer); // trailing bytes: the Python decoder's dead letter says how many
    }
    Ok(Batch { source, labels, lines })
}

/// Builds the Python values: `RawLine`s and their source dicts, with the field names interned once.
#[pyclass(module = "streams._native", frozen)]
pub struct LineDecoder {
    raw_line: Py<PyAny>,
    fields: Vec<Py<PyString>>,
    max_ms: i64,
}

/// Where a line sits: RawLine's fields besides its text, source and labels.
struct At {
    file_offset: Option<i64>,
    ts: Option<i64>,
    partial: bool,
    index: usize,
}

impl At {
    fn index(index: usize) -> Self {
        At { file_offset: None, ts: None, partial: false, index }
    }
}

impl LineDecoder {
    fn empty_source<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for f in &self.fields {
            d.set_item(f.bind(py), py.None())?;
        }
        Ok(d)
    }

    fn line<'py>(&self, py: Python<'py>, text: &str, at: At, source: &Bound<'py, PyDict>,
                 labels: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
        self.raw_line.bind(py).call1((text, at.file_offset, at.ts, source, labels, at.partial, at.index))
    }

    /// Ok(false): a line of the text is the Python decoder's (see `final_redraw`).
    fn plain<'py>(&self, py: Python<'py>, text: &str, out: &Bound<'py, PyList>) -> PyResult<bool> {
        let text = strip_one(text, '\n');
        if !text.contains('\n') {
            let Ok(t) = final_redraw(strip_one(text, '\r')) else { return Ok(false) };
            out.append(self.line(py, t, At::index(0), &self.empty_source(py)?, &PyDict::new(py))?)?;
            return Ok(true);
        }
        for (i, part) in text.split('\n').enumerate() {
            let Ok(t) = final_redraw(strip_one(part, '\r')) else { return Ok(false) };
            out.append(self.line(py, t, At::index(i), &self.empty_source(py)?, &PyDict::new(py))?)?;
        }
        Ok(true)
    }

    fn avro<'py>(&self, py: Python<'py>, body: &[u8], mode: u8, out: &Bound<'py, PyList>) -> PyResult<bool> {
        let Ok(batch) = raw_batch(body, mode, self.max_ms) else { return Ok(false) };
        let src = PyDict::new(py);
        for (f, v) in self.fields.iter().zip(&batch.source) {
            match v {
                None => src.set_item(f.bind(py), py.None())?,
                Some(SourceValue::Text(s)) => src.set_item(f.bind(py), *s)?,
                Some(SourceValue::Int(n)) => src.set_item(f.bind(py), *n)?,
            }
        }
        let labels = PyDict::new(py);
        for (k, v) in &batch.labels {
            labels.set_item(*k, *v)?;
        }
        for (i, (line, file_offset, ts)) in batch.lines.iter().enumerate() {
            let text = no_nul(line);
            let Ok(t) = final_redraw(&text) else { return Ok(false) };
            out.append(self.line(py, t, At { file_offset: *file_offset, ts: *ts, partial: false, index: i }, &src, &labels)?)?;
        }
        Ok(true)
    }
}

#[pymethods]
impl LineDecoder {
    /// ``raw_line``: the RawLine class; ``fields``: the Source record's field names, in order;
    /// ``max_ms``: the latest time an agent's line may carry (``streams.assemble.times.MAX_MS``).
    #[new]
    fn new(py: Python<'_>, raw_line: Py<PyAny>, fields: Vec<String>, max_ms: i64) -> Self {
        let fields = fields.iter().map(|f| PyString::intern(py, f).unbind()).collect();
        LineDecoder { raw_line, fields, max_ms }
    }

    /// The lines of one record value, or None: decode it in Python. ``avro``: how the record's schema
    /// id reads (AVRO_OTHER, AVRO_PLAIN, AVRO_LOGICAL), for a value that starts with the magic byte.
    fn decode<'py>(&self, py: Python<'py>, value: &[u8], avro: u8) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(&first) = value.first() else { return Ok(None) };
        let out = PyList::empty(py);
        match first {
            0 => {
                if avro == AVRO_OTHER || value.len() < 5 || !self.avro(py, &value[5..], avro, &out)? {
                    return Ok(None);
                }
                return Ok(Some(out));
            }
            b'{' | b'"' | b'<' | b'\n' => return Ok(None), // envelopes, syslog, OTLP: the Python decoder
            0x80..=0x8f | 0xde | 0xdf => return Ok(None), // a MessagePack map (Fluent Bit's msgpack format)
            _ => {}
        }
        let decoded = String::from_utf8_lossy(value);
        let text = no_nul(&decoded);
        if first.is_ascii_digit() {
            match cri(&text, self.max_ms) {
                Err(Defer) => return Ok(None),
                // Invalid UTF-8 in a CRI line may be half a character that the runtime split between
                // a `P` fragment and the next: the Python decoder keeps those bytes for the join.
                Ok(Some(_)) if matches!(decoded, std::borrow::Cow::Owned(_)) => return Ok(None),
                Ok(Some(c)) => {
                    let src = self.empty_source(py)?;
                    src.set_item(self.fields[5].bind(py), c.stream)?;
                    let Ok(body) = final_redraw(strip_one(c.body, '\r')) else { return Ok(None) };
                    out.append(self.line(py, body, At { file_offset: None, ts: c.ts, partial: c.partial, index: 0 }, &src, &PyDict::new(py))?)?;
                    return Ok(Some(out));
                }
                Ok(None) => {}
            }
        }
        Ok(if self.plain(py, &text, &out)? { Some(out) } else { None })
    }
}
