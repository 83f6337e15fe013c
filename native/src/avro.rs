//! Avro bodies of the stage's contracts (schemaless, as `fastavro.schemaless_writer` writes them).
//!
//! The schema is read at start from the contract's JSON text (the same `.avsc` the Python writer
//! reads). A value off the writer's path (a type the generated Python writer would not take, a
//! missing field, a long out of range, text that is not UTF-8) is answered with `None`: the caller
//! hands it to fastavro, whose bytes, defaults and errors are then the answer, as on the Python path.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};
use serde_json::Value;
use std::collections::HashMap;

enum Ty {
    Null,
    Boolean,
    Int,
    Long,
    Double,
    Str,
    Bytes,
    Record(Vec<(Py<PyString>, Ty)>),
    Map(Box<Ty>),
    Array(Box<Ty>),
    Optional(Box<Ty>),
}

struct OffPath;

fn parse(py: Python<'_>, schema: &Value, named: &mut HashMap<String, Value>, space: &str) -> PyResult<Ty> {
    match schema {
        Value::String(name) => match name.as_str() {
            "null" => Ok(Ty::Null),
            "boolean" => Ok(Ty::Boolean),
            "int" => Ok(Ty::Int),
            "long" => Ok(Ty::Long),
            "double" => Ok(Ty::Double),
            "string" => Ok(Ty::Str),
            "bytes" => Ok(Ty::Bytes),
            other => match named.get(other).cloned() {
                Some(def) => parse(py, &def, named, space),
                None => Err(PyValueError::new_err(format!("Avro type {other:?} is not supported natively"))),
            },
        },
        Value::Array(branches) => {
            if branches.len() != 2 || branches[0] != Value::String("null".into()) {
                return Err(PyValueError::new_err("only [\"null\", X] unions are written natively"));
            }
            Ok(Ty::Optional(Box::new(parse(py, &branches[1], named, space)?)))
        }
        Value::Object(obj) => {
            let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
            match kind {
                "record" => {
                    let name = obj.get("name").and_then(Value::as_str).unwrap_or("");
                    let ns = obj.get("namespace").and_then(Value::as_str).unwrap_or(space).to_string();
                    let full = if name.contains('.') || ns.is_empty() { name.to_string() } else { format!("{ns}.{name}") };
                    named.insert(full, schema.clone());
                    named.insert(name.to_string(), schema.clone());
                    let mut fields = Vec::new();
                    for f in obj.get("fields").and_then(Value::as_array).into_iter().flatten() {
                        let fname = f.get("name").and_then(Value::as_str).unwrap_or("");
                        let fty = parse(py, f.get("type").unwrap_or(&Value::Null), named, &ns)?;
                        fields.push((PyString::intern(py, fname).unbind(), fty));
                    }
                    Ok(Ty::Record(fields))
                }
                "map" => Ok(Ty::Map(Box::new(parse(py, obj.get("values").unwrap_or(&Value::Null), named, space)?))),
                "array" => Ok(Ty::Array(Box::new(parse(py, obj.get("items").unwrap_or(&Value::Null), named, space)?))),
                _ => parse(py, &Value::String(kind.to_string()), named, space),
            }
        }
        _ => Err(PyValueError::new_err("not an Avro schema")),
    }
}

#[inline]
fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n > 127 {
        out.push(((n & 127) | 128) as u8);
        n >>= 7;
    }
    out.push(n as u8);
}

#[inline]
fn long(out: &mut Vec<u8>, v: i64) {
    varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

#[inline]
fn sized(out: &mut Vec<u8>, data: &[u8]) {
    long(out, data.len() as i64);
    out.extend_from_slice(data);
}

fn text(out: &mut Vec<u8>, v: &Bound<'_, PyAny>) -> Result<(), OffPath> {
    if !v.is_exact_instance_of::<PyString>() {
        return Err(OffPath);
    }
    // SAFETY of the cast: the exact type was checked above.
    let s = unsafe { v.downcast_unchecked::<PyString>() };
    let utf8 = s.to_str().map_err(|_| OffPath)?; // a lone surrogate: fastavro raises as str.encode() does
    sized(out, utf8.as_bytes());
    Ok(())
}

fn write(out: &mut Vec<u8>, ty: &Ty, v: &Bound<'_, PyAny>) -> Result<(), OffPath> {
    match ty {
        Ty::Null => {
            if v.is_none() { Ok(()) } else { Err(OffPath) }
        }
        Ty::Boolean => {
            if !v.is_exact_instance_of::<PyBool>() {
                return Err(OffPath);
            }
            out.push(u8::from(unsafe { v.downcast_unchecked::<PyBool>() }.is_true()));
            Ok(())
        }
        Ty::Int | Ty::Long => {
            if !v.is_exact_instance_of::<PyInt>() {
                return Err(OffPath); // bool is a subclass of int: not exact, so off path as in Python
            }
            let n: i64 = v.extract().map_err(|_| OffPath)?;
            if matches!(ty, Ty::Int) && (n < i64::from(i32::MIN) || n > i64::from(i32::MAX)) {
                return Err(OffPath);
            }
            long(out, n);
            Ok(())
        }
        Ty::Double => {
            if !v.is_exact_instance_of::<PyFloat>() {
                return Err(OffPath);
            }
            out.extend_from_slice(&unsafe { v.downcast_unchecked::<PyFloat>() }.value().to_le_bytes());
            Ok(())
        }
        Ty::Str => text(out, v),
        Ty::Bytes => {
            if !v.is_exact_instance_of::<PyBytes>() {
                return Err(OffPath);
            }
            sized(out, unsafe { v.downcast_unchecked::<PyBytes>() }.as_bytes());
            Ok(())
        }
        Ty::Optional(inner) => {
            if v.is_none() {
                out.push(0);
                Ok(())
            } else {
                out.push(2);
                write(out, inner, v)
            }
        }
        Ty::Record(fields) => {
            if !v.is_exact_instance_of::<PyDict>() {
                return Err(OffPath);
            }
            let d = unsafe { v.downcast_unchecked::<PyDict>() };
            for (name, fty) in fields {
                // a missing field is fastavro's to fill from the schema's default (or to refuse)
                let item = d.get_item(name.bind(v.py())).map_err(|_| OffPath)?.ok_or(OffPath)?;
                write(out, fty, &item)?;
            }
            Ok(())
        }
        Ty::Map(values) => {
            if !v.is_exact_instance_of::<PyDict>() {
                return Err(OffPath);
            }
            let d = unsafe { v.downcast_unchecked::<PyDict>() };
            if !d.is_empty() {
                long(out, d.len() as i64);
                for (k, item) in d.iter() {
                    text(out, &k)?;
                    write(out, values, &item)?;
                }
            }
            out.push(0);
            Ok(())
        }
        Ty::Array(items) => {
            if !v.is_exact_instance_of::<PyList>() {
                return Err(OffPath);
            }
            let l = unsafe { v.downcast_unchecked::<PyList>() };
            if !l.is_empty() {
                // one block of all items, then the empty block, as the Python writer and fastavro write it
                long(out, l.len() as i64);
                for item in l.iter() {
                    write(out, items, &item)?;
                }
            }
            out.push(0);
            Ok(())
        }
    }
}

/// The schemaless Avro body of one contract.
#[pyclass(module = "streams._native", frozen)]
pub struct AvroWriter {
    root: Ty,
}

#[pymethods]
impl AvroWriter {
    /// `schema`: the contract's JSON text. Raises ValueError for a schema with a type this writer
    /// does not take (the caller keeps the Python writer for that contract).
    #[new]
    fn new(py: Python<'_>, schema: &str) -> PyResult<Self> {
        let value: Value = serde_json::from_str(schema).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let root = parse(py, &value, &mut HashMap::new(), "")?;
        Ok(AvroWriter { root })
    }

    /// The body of ``value``, or None when the value is fastavro's to write.
    fn write<'py>(&self, py: Python<'py>, value: &Bound<'py, PyAny>) -> Option<Bound<'py, PyBytes>> {
        let mut out = Vec::with_capacity(256);
        write(&mut out, &self.root, value).ok()?;
        Some(PyBytes::new(py, &out))
    }

    /// ``prefix`` (the Confluent wire header) then the body, or None as for ``write``.
    fn write_framed<'py>(&self, py: Python<'py>, prefix: &[u8], value: &Bound<'py, PyAny>) -> Option<Bound<'py, PyBytes>> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(prefix);
        write(&mut out, &self.root, value).ok()?;
        Some(PyBytes::new(py, &out))
    }
}
