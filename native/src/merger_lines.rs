//! The multiline merger's reading of one line's body (`streams/assemble/merger.py`): its record heads
//! (`_split_head`) and its grammar token (`_token`), from the tables of `rules.py` handed over at start.
//!
//! The Python core tries a table's patterns only where a line's first character can start them
//! (`firstchar.Dispatch`: ASCII characters by their own, every other character as one); the
//! characters each pattern is tried on come with it, so that a pattern whose class reaches past
//! what that reading saw (a `\d` before a non-ASCII digit) is skipped here as it is there.

use std::collections::HashSet;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use regex::Regex;

use crate::pyjson::py_isspace;

/// A table's patterns, each with the first characters the Python core tries it on.
pub struct Dispatched {
    each: Vec<Regex>,
    /// per first character (ASCII by its code, any other at 128): the patterns tried on it, in order
    tried: Vec<Vec<usize>>,
}

impl Dispatched {
    /// ``items``: (Rust pattern, first characters or None for any; "\x80" stands for every non-ASCII one).
    fn new(items: &[(String, Option<String>)]) -> PyResult<Dispatched> {
        let each = items.iter().map(|(p, _)| Regex::new(&format!("^(?:{p})"))).collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let mut tried = vec![Vec::new(); 129];
        for (i, (_, firsts)) in items.iter().enumerate() {
            match firsts {
                None => tried.iter_mut().for_each(|on| on.push(i)),
                Some(f) => f.chars().for_each(|c| tried[(c as usize).min(128)].push(i)),
            }
        }
        Ok(Dispatched { each, tried })
    }

    /// (index, end in bytes) of the first pattern tried on ``text``'s first character that matches at its
    /// start: each tried in turn, as an alternation tries its branches (most fail at once).
    pub fn first(&self, text: &str) -> Option<(usize, usize)> {
        let c = text.chars().next()?;
        self.tried[(c as usize).min(128)].iter().find_map(|&i| self.each[i].find(text).map(|m| (i, m.end())))
    }
}

/// What `_split_head` answers: (heads, repeated head, every line, innermost head's name, rest).
pub type HeadSplit<'a> = (Option<String>, Option<String>, bool, &'a str, &'a str);

fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(py_isspace)
}

#[pyclass(module = "streams._native", frozen)]
pub struct LineReader {
    heads: Dispatched,
    head_names: Vec<String>,
    head_repeats: Vec<bool>,
    every_line: HashSet<String>,
    tokens: Dispatched,
    token_names: Vec<String>,
    /// (literal the line must hold, order in the whole token table, name, pattern): tried after the table
    gated: Vec<(String, usize, String, Regex)>,
    /// order in the whole token table of each of ``tokens``
    token_order: Vec<usize>,
}

impl LineReader {
    /// `_split_head`: at most two heads, a relay's then the program's own.
    pub fn split_head<'a>(&'a self, mut body: &'a str) -> HeadSplit<'a> {
        let mut head: Option<String> = None;
        let mut rhead = None;
        let mut every = false;
        let mut name = "";
        for _ in 0..2 {
            let Some((i, end)) = self.heads.first(body) else { break };
            let h = &body[..end];
            match head.as_mut() {
                Some(all) => all.push_str(h),
                None => head = Some(h.to_owned()),
            }
            name = &self.head_names[i];
            rhead = self.head_repeats[i].then(|| py_rstrip(h).to_owned());
            every = self.every_line.contains(name);
            body = &body[end..];
        }
        (head, rhead, every, name, body)
    }

    /// `_token` of a body that is neither empty nor blank.
    pub fn token<'a>(&'a self, body: &str) -> &'a str {
        let found = self.tokens.first(body).map(|(i, _)| i);
        let order = found.map(|i| self.token_order[i]);
        for (gate, gorder, name, rx) in &self.gated {
            if body.contains(gate.as_str()) && order.is_none_or(|o| *gorder < o) && rx.is_match(body) {
                return name;
            }
        }
        match found {
            Some(i) => &self.token_names[i],
            None if body.starts_with([' ', '\t']) => "indent",
            None => "text",
        }
    }
}

type Item = (String, String, Option<String>);

#[pymethods]
impl LineReader {
    /// ``heads``: (name, Rust pattern, first characters), with whether each head repeats on a record's
    /// lines and the names of those written on every line; ``tokens``: likewise, each with its order in
    /// the whole token table; ``gated``: (literal, order, name, Rust pattern).
    #[new]
    fn new(heads: Vec<Item>, head_repeats: Vec<bool>, every_line: HashSet<String>, tokens: Vec<Item>,
           token_order: Vec<usize>, gated: Vec<(String, usize, String, String)>) -> PyResult<Self> {
        if head_repeats.len() != heads.len() || token_order.len() != tokens.len() {
            return Err(PyValueError::new_err("one entry per head and per token"));
        }
        let split = |items: Vec<Item>| -> PyResult<(Dispatched, Vec<String>)> {
            let table = Dispatched::new(&items.iter().map(|(_, p, f)| (p.clone(), f.clone())).collect::<Vec<_>>())?;
            Ok((table, items.into_iter().map(|(n, _, _)| n).collect()))
        };
        let (heads, head_names) = split(heads)?;
        let (tokens, token_names) = split(tokens)?;
        let gated = gated.into_iter().map(|(lit, order, name, p)| {
            Regex::new(&format!("^(?:{p})")).map(|rx| (lit, order, name, rx))
                .map_err(|e| PyValueError::new_err(e.to_string()))
        }).collect::<PyResult<Vec<_>>>()?;
        Ok(LineReader { heads, head_names, head_repeats, every_line, tokens, token_names, gated, token_order })
    }

    /// `merger._split_head(body, None)`: (head, repeated head, every line, name, rest).
    #[pyo3(name = "split_head")]
    fn split_head_py<'a>(&'a self, body: &'a str) -> HeadSplit<'a> {
        self.split_head(body)
    }

    /// `merger._token(body)`.
    #[pyo3(name = "token")]
    fn token_py(&self, body: &str) -> String {
        self.token(body).to_owned()
    }
}
