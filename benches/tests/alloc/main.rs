//! Zero allocations per call: a counting allocator (`allocation-counter`, which counts the
//! current thread's allocations) around many calls on the permit and rejection paths, and the
//! same checker shown catching a limiter that allocates.

mod broken;
mod checker;
mod keyed;
mod paths;
