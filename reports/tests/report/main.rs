//! The report rendered from shipped fixtures: complete inputs, missing inputs, unreadable
//! inputs, and traces of broken limiters that the page must flag.

mod broken;
mod fixtures;
mod missing;
mod render;
mod sweep;
