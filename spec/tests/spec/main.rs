//! The model's own tests: its rules hold on any sequence of attempts, and its extreme values
//! are the ones the specification asks for (`docs/rules.md`: Extreme values).

mod ages;
mod extremes;
mod sequences;
