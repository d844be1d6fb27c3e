//! The trial spec: the JSON contract the engine reads (docs/engine-spec.md).
//!
//! `types` mirror the JSON one to one; `validate` checks them part by
//! part (the trial, each port, each stream, each sender, each backend)
//! into a [`Plan`] (`plan`): every default filled in, every name resolved
//! to an index, every rate in frames/s and every count known before a
//! socket is opened. Errors name the field. How a frame is cut at the
//! source is `fragment`.

mod fragment;
mod plan;
mod types;
mod validate;

#[cfg(test)]
mod tests;

pub use fragment::MAX_FRAGMENTS;
pub use plan::*;
pub use types::*;
