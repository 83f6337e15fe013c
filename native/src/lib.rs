//! `streams._native`: the parts of the assemble stage's per-line path that run in compiled code.
//!
//! The Python core (`streams/assemble/`) is the reference implementation: every function here
//! answers exactly as its Python counterpart does, or says that it cannot (then the caller takes
//! the Python path), and a differential test holds the two to the same bytes.

use pyo3::prelude::*;

mod avro;
mod decode;
mod merger_lines;
mod merger_state;
mod pyjson;
mod table;

/// The version of the native engine's interface: the Python side refuses a build of another one
/// (an extension left over from an older checkout) and falls back to the Python core.
const INTERFACE: u32 = 3;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("INTERFACE", INTERFACE)?;
    m.add_class::<avro::AvroWriter>()?;
    m.add_class::<decode::LineDecoder>()?;
    m.add_class::<merger_lines::LineReader>()?;
    m.add_class::<merger_state::MergerState>()?;
    m.add_class::<table::PatternTable>()?;
    m.add("AVRO_OTHER", decode::AVRO_OTHER)?;
    m.add("AVRO_PLAIN", decode::AVRO_PLAIN)?;
    m.add("AVRO_LOGICAL", decode::AVRO_LOGICAL)?;
    Ok(())
}
