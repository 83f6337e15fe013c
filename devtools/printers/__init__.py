"""Labelled multiline events printed by the real printers (CPython, the JDK, the Go runtime, Rust's
std, glibc, gdb): the generator of ``corpus/printers``. Dev tooling, not shipped."""
