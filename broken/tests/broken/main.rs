//! The catalogue's own tests: each bug (plain and keyed) does what its name says where it
//! shows, and the two cells hold the same state.

mod cells;
mod keyed;
mod planted_bugs;
