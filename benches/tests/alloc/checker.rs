//! The checker: how many allocations a run of calls makes.

/// Calls per measured run: enough that an allocation on any one call, however rare the path
/// that makes it, shows.
pub const CALLS: u32 = 10_000;

/// The number of heap allocations `run` makes on this thread.
pub fn allocations(run: impl FnOnce()) -> u64 {
    allocation_counter::measure(run).count_total
}
