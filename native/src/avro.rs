//! Avro bodies of the stage's contracts (schemaless, as `fastavro.schemaless_writer` writes them).
//!
//! The schema is read at start from the contract's JSON text (the same `.avsc` the Python writer
//! reads). A value off the writer's path (a type the generated Python writer would not take, a
//! missing field, a long out of range, text that is not UTF-8) is answered with `None`: the caller
//! hands it to fastavro, whose bytes, defaults and errors are then the answer, as on the Python path.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::PyTypeInfo;
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

/// ``v`` as a ``T`` when its type is exactly ``T`` (a subclass is fastavro's to write, as on the Python path).
fn exact<'a, 'py, T: PyTypeInfo>(v: &'a Bound<'py, PyAny>) -> Result<&'a Bound<'py, T>, OffPath> {
    if !v.is_exact_instance_of::<T>() {
        return Err(OffPath);
    }
    // SAFETY of the cast: the exact type was checked above.
    Ok(unsafe { v.downcast_unchecked::<T>() })
}

fn text(out: &mut Vec<u8>, v: &Bound<'_, PyAny>) -> Result<(), OffPath> {
    let utf8 = exact::<PyString>(v)?.to_str().map_err(|_| OffPath)?; // a lone surrogate: fastavro raises as str.encode() does
    sized(out, utf8.as_bytes());
    Ok(())
}

/// A map's or an array's items: one block of all of them, then the empty block, as the Python writer and fastavro
/// write it (an empty one is the empty block alone).
fn blocks(out: &mut Vec<u8>, len: usize, items: impl FnOnce(&mut Vec<u8>) -> Result<(), OffPath>)
          -> Result<(), OffPath> {
    if len > 0 {
        long(out, len as i64);
        items(out)?;
    }
    out.push(0);
    Ok(())
}

fn write(out: &mut Vec<u8>, ty: &Ty, v: &Bound<'_, PyAny>) -> Result<(), OffPath> {
    match ty {
        Ty::Null => {
            if v.is_none() { Ok(()) } else { Err(OffPath) }
        }
        Ty::Boolean => {
            out.push(u8::from(exact::<PyBool>(v)?.is_true()));
            Ok(())
        }
        Ty::Int | Ty::Long => {
            // bool is a subclass of int: not exact, so off path as in Python
            let n: i64 = exact::<PyInt>(v)?.extract().map_err(|_| OffPath)?;
            if matches!(ty, Ty::Int) && (n < i64::from(i32::MIN) || n > i64::from(i32::MAX)) {
                return Err(OffPath);
            }
            long(out, n);
            Ok(())
        }
        Ty::Double => {
            out.extend_from_slice(&exact::<PyFloat>(v)?.value().to_le_bytes());
            Ok(())
        }
        Ty::Str => text(out, v),
        Ty::Bytes => {
            sized(out, exact::<PyBytes>(v)?.as_bytes());
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
            let d = exact::<PyDict>(v)?;
            for (name, fty) in fields {
                // a missing field is fastavro's to fill from the schema's default (or to refuse)
                let item = d.get_item(name.bind(v.py())).map_err(|_| OffPath)?.ok_or(OffPath)?;
                write(out, fty, &item)?;
            }
            Ok(())
        }
        Ty::Map(values) => {
            let d = exact::<PyDict>(v)?;
            blocks(out, d.len(), |out| {
                for (k, item) in d.iter() {
                    text(out, &k)?;
                    write(out, values, &item)?;
                }
                Ok(())
            })
        }
        Ty::Array(items) => {
            let l = exact::<PyList>(v)?;
            blocks(out, l.len(), |out| {
                for item in l.iter() {
                    write(out, items, &item)?;
                }
                Ok(())
            })
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
