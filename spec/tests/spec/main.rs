//! The model's own tests: its rules hold on any sequence of attempts, and its extreme values
//! are the ones SPEC.md asks for.

mod extremes;
mod sequences;
