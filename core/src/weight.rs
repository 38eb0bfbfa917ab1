//! How many permits a claim takes: one (every single-permit call, a type of its own so that
//! its claim compiles to exactly the single-permit code), or a count checked against the limit.

/// The permits a claim takes, and the test and arithmetic that depend on it.
pub(crate) trait Weight: Copy {
    /// The permits taken.
    fn units(self) -> u32;

    /// Whether a window with `used` of `limit` permits used has room for this weight. The
    /// count was checked against the limit before any claim, so `units() <= limit`.
    fn fits(self, used: u32, limit: u32) -> bool;
}

/// One permit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct One;

impl Weight for One {
    #[expect(clippy::inline_always, reason = "folded into the hot path's claim")]
    #[inline(always)]
    fn units(self) -> u32 {
        1
    }

    #[expect(clippy::inline_always, reason = "folded into the hot path's claim")]
    #[inline(always)]
    fn fits(self, used: u32, limit: u32) -> bool {
        used < limit
    }
}

/// A count of permits, at most the limit (checked when the call began); zero takes none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Units(pub(crate) u32);

impl Weight for Units {
    #[expect(clippy::inline_always, reason = "folded into the hot path's claim")]
    #[inline(always)]
    fn units(self) -> u32 {
        self.0
    }

    #[expect(clippy::inline_always, reason = "folded into the hot path's claim")]
    #[inline(always)]
    fn fits(self, used: u32, limit: u32) -> bool {
        // `self.0 <= limit`, and `used <= limit` always: no underflow.
        used <= limit - self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weight_fits_exactly_up_to_the_limit() {
        assert!(One.fits(4, 5));
        assert!(!One.fits(5, 5));
        assert!(Units(3).fits(2, 5));
        assert!(!Units(3).fits(3, 5));
        assert!(Units(0).fits(5, 5));
        assert!(Units(u32::MAX).fits(0, u32::MAX));
        assert!(!Units(u32::MAX).fits(1, u32::MAX));
    }
}
