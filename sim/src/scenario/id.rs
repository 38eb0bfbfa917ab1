//! A scenario's id: its seed, the callers a shrink kept and what else it cut, written as the
//! one string that replays it.

use core::fmt;
use core::str::FromStr;

use super::Cuts;

/// Which scenario to run: a seed, and optionally the callers a shrink kept and what else it
/// cut ([`Cuts`]).
///
/// Written `SEED`, `SEED:KEPT` or `SEED:KEPT/CUTS`, where `KEPT` lists caller indices and
/// ranges (`12345:0-3,7`) and `CUTS` the simplifications (`12345:0-3,7/limit=2,steady`); that
/// one string replays the scenario exactly.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::ScenarioId;
///
/// let id: ScenarioId = "42:0-2,5".parse()?;
/// assert_eq!((id.seed, id.kept.as_deref()), (42, Some(&[0, 1, 2, 5][..])));
/// assert_eq!(id.to_string(), "42:0-2,5");
/// assert!("42:x".parse::<ScenarioId>().is_err());
/// # Ok::<(), fixed_window_sim::ParseIdError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScenarioId {
    /// The seed every random choice of the scenario derives from.
    pub seed: u64,
    /// The indices of the callers kept, in increasing order; `None` keeps them all.
    pub kept: Option<Vec<u32>>,
    /// What else is cut from the scenario the seed draws.
    pub cuts: Cuts,
}

impl ScenarioId {
    /// The whole scenario of `seed`.
    pub fn seed(seed: u64) -> ScenarioId {
        ScenarioId {
            seed,
            kept: None,
            cuts: Cuts::default(),
        }
    }

    /// The scenario of `seed` with only the callers `kept`.
    pub fn kept(seed: u64, kept: Vec<u32>) -> ScenarioId {
        ScenarioId {
            kept: Some(kept),
            ..ScenarioId::seed(seed)
        }
    }
}

impl fmt::Display for ScenarioId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.seed)?;
        let Some(kept) = &self.kept else {
            return if self.cuts.is_empty() {
                Ok(())
            } else {
                write!(f, ":/{}", self.cuts)
            };
        };
        f.write_str(":")?;
        let mut i = 0;
        let mut first = true;
        while i < kept.len() {
            let mut j = i;
            while j + 1 < kept.len() && kept[j + 1] == kept[j] + 1 {
                j += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if i == j {
                write!(f, "{}", kept[i])?;
            } else {
                write!(f, "{}-{}", kept[i], kept[j])?;
            }
            i = j + 1;
        }
        if !self.cuts.is_empty() {
            write!(f, "/{}", self.cuts)?;
        }
        Ok(())
    }
}

/// A scenario id that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseIdError(String);

impl fmt::Display for ParseIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid scenario id `{}`: expected SEED, SEED:KEPT or SEED:KEPT/CUTS, e.g. 42, 42:0-3,7 or 42:0-3,7/limit=2,steady,creation,single",
            self.0
        )
    }
}

impl std::error::Error for ParseIdError {}

impl FromStr for ScenarioId {
    type Err = ParseIdError;

    fn from_str(s: &str) -> Result<ScenarioId, ParseIdError> {
        let error = || ParseIdError(s.to_owned());
        let (seed, kept) = match s.split_once(':') {
            Some((seed, kept)) => (seed, Some(kept)),
            None => (s, None),
        };
        let seed = seed.trim().parse::<u64>().map_err(|_| error())?;
        let Some(kept) = kept else {
            return Ok(ScenarioId::seed(seed));
        };
        let (kept, cuts) = match kept.split_once('/') {
            Some((kept, cuts)) => (kept, Cuts::parse(cuts).ok_or_else(error)?),
            None => (kept, Cuts::default()),
        };
        if kept.is_empty() && !cuts.is_empty() {
            return Ok(ScenarioId {
                cuts,
                ..ScenarioId::seed(seed)
            });
        }
        let mut indices = Vec::new();
        for part in kept.split(',').filter(|part| !part.is_empty()) {
            let (low, high) = part.split_once('-').unwrap_or((part, part));
            let low = low.parse::<u32>().map_err(|_| error())?;
            let high = high.parse::<u32>().map_err(|_| error())?;
            if low > high || indices.last().is_some_and(|&last| last >= low) {
                return Err(error());
            }
            indices.extend(low..=high);
        }
        Ok(ScenarioId {
            seed,
            kept: Some(indices),
            cuts,
        })
    }
}
