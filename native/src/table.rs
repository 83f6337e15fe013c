//! A table of alternatives (the rule tables of `rules.py`), matched at the start of a text: the first
//! alternative that matches wins, as in Python's `(?P<a>...)|(?P<b>...)`. The patterns come from the
//! Python side already translated (`streams/assemble/rust_regex.py`): the tables stay in Python.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use regex::{Regex, RegexSet};

#[pyclass(module = "streams._native", frozen)]
pub struct PatternTable {
    set: RegexSet,
    each: Vec<Regex>,
}

impl PatternTable {
    /// (index of the first alternative that matches at the start, end of its match in bytes).
    pub fn first(&self, text: &str) -> Option<(usize, usize)> {
        let i = self.set.matches(text).iter().next()?;
        let m = self.each[i].find(text)?;
        Some((i, m.end()))
    }
}

#[pymethods]
impl PatternTable {
    #[new]
    fn new(patterns: Vec<String>) -> PyResult<Self> {
        let anchored: Vec<String> = patterns.iter().map(|p| format!("^(?:{p})")).collect();
        let set = RegexSet::new(&anchored).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let each = anchored.iter().map(|p| Regex::new(p)).collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PatternTable { set, each })
    }

    /// (index, end in characters) of the first alternative matching at the start of ``text``, or None.
    #[pyo3(name = "match")]
    fn match_(&self, text: &str) -> Option<(usize, usize)> {
        let (i, end) = self.first(text)?;
        Some((i, text[..end].chars().count()))
    }
}
