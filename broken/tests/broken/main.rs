//! The catalogue's own tests: each flaw (plain and keyed) does what its name says where it
//! shows, and the two cells hold the same state.

mod cells;
mod flaws;
mod keyed;
