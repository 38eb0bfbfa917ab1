//! How many permits a claim takes: one (every single-permit call, a type of its own so that
//! its claim compiles to exactly the single-permit code), a count checked against the limit, or
//! the rest of the window (a drain).

use core::convert::Infallible;

/// A weight above the limit a decision read: `requested` permits, where no window holds more
/// than `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Excess {
    pub(crate) requested: u32,
    pub(crate) limit: u32,
}

impl From<Infallible> for Excess {
    fn from(never: Infallible) -> Excess {
        match never {}
    }
}

/// The permits a claim takes, as the count it leaves.
pub(crate) trait Weight: Copy {
    /// What a decision finding this weight above its limit ends the call with: [`Excess`]
    /// for a count, nothing a single permit or a drain can meet ([`Infallible`]), so that their
    /// paths carry no check.
    type Excess: Into<Excess>;

    /// Whether a window under `limit` could ever hold this weight; if not, the call ends
    /// refused (`docs/rules.md`: a call whose weight a lowering passes is refused at its next
    /// decision, never left waiting for a window that cannot hold it).
    ///
    /// # Errors
    ///
    /// The excess, if the weight is above `limit`.
    fn fits(self, limit: u32) -> Result<(), Self::Excess>;

    /// The window's count after this claim, in a window with `used` of `limit` permits used;
    /// `None` if the claim does not fit. A count that was checked against the limit before
    /// any claim is at most `limit`, so nothing here overflows.
    fn claimed(self, used: u32, limit: u32) -> Option<u32>;

    /// Whether this claim takes no permit at all, so that it needs no count to claim from.
    #[inline]
    fn takes_nothing(self) -> bool {
        false
    }
}

/// One permit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct One;

impl Weight for One {
    type Excess = Infallible;

    #[inline]
    fn fits(self, _limit: u32) -> Result<(), Infallible> {
        // Every limit is at least one.
        Ok(())
    }

    #[expect(clippy::inline_always, reason = "folded into the hot path's claim")]
    #[inline(always)]
    fn claimed(self, used: u32, limit: u32) -> Option<u32> {
        (used < limit).then(|| used + 1)
    }
}

/// A count of permits, at most the limit (checked when the call began); zero takes none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Units(pub(crate) u32);

impl Weight for Units {
    type Excess = Excess;

    #[inline]
    fn fits(self, limit: u32) -> Result<(), Excess> {
        if self.0 <= limit {
            Ok(())
        } else {
            Err(Excess {
                requested: self.0,
                limit,
            })
        }
    }

    #[expect(clippy::inline_always, reason = "folded into the claim")]
    #[inline(always)]
    fn claimed(self, used: u32, limit: u32) -> Option<u32> {
        // The limit can change between the check against it and the claim, and a lowered one
        // can leave `used` above it, so nothing here may assume `self.0 <= limit` or
        // `used <= limit`.
        used.checked_add(self.0).filter(|&after| after <= limit)
    }

    #[inline]
    fn takes_nothing(self) -> bool {
        self.0 == 0
    }
}

/// Whatever the window has left: it is full afterwards.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rest;

impl Weight for Rest {
    type Excess = Infallible;

    #[inline]
    fn fits(self, _limit: u32) -> Result<(), Infallible> {
        // The rest of a window is whatever it has left, never more.
        Ok(())
    }

    #[expect(clippy::inline_always, reason = "folded into the claim")]
    #[inline(always)]
    fn claimed(self, used: u32, limit: u32) -> Option<u32> {
        // A lowered limit can leave more used than it allows: a drain never gives them back.
        Some(used.max(limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weight_fits_exactly_up_to_the_limit() {
        assert_eq!(One.claimed(4, 5), Some(5));
        assert_eq!(One.claimed(5, 5), None);
        assert_eq!(Units(3).claimed(2, 5), Some(5));
        assert_eq!(Units(3).claimed(3, 5), None);
        assert_eq!(Units(0).claimed(5, 5), Some(5));
        assert_eq!(Units(u32::MAX).claimed(0, u32::MAX), Some(u32::MAX));
        assert_eq!(Units(u32::MAX).claimed(1, u32::MAX), None);
        assert_eq!(Rest.claimed(2, 5), Some(5));
        assert_eq!(Rest.claimed(5, 5), Some(5));
    }

    #[test]
    fn only_a_count_above_the_limit_does_not_fit() {
        assert_eq!(Units(3).fits(3), Ok(()));
        assert_eq!(
            Units(4).fits(3),
            Err(Excess {
                requested: 4,
                limit: 3
            })
        );
        assert_eq!(Units(0).fits(1), Ok(()));
        assert!(One.fits(1).is_ok());
        assert!(Rest.fits(1).is_ok());
    }

    #[test]
    fn a_lowered_limit_below_the_used_count_is_full_and_drains_to_itself() {
        assert_eq!(One.claimed(7, 5), None);
        assert_eq!(Units(1).claimed(7, 5), None);
        assert_eq!(Units(7).claimed(0, 5), None);
        assert_eq!(Units(1).claimed(u32::MAX, u32::MAX), None);
        assert_eq!(Rest.claimed(7, 5), Some(7));
    }
}
