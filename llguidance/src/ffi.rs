//! The C API (being written).
