//! The limits of their own some keys have (`Config::key_limit`), in some scenarios: a few of
//! the keys callers use most, each given a limit of its own by every process alike, and in a
//! few of those scenarios one process that disagrees on one key (another limit for it, or a
//! limit for a key the others decide by the limiter's). Each window of such a key is counted
//! by the limit its first count was made under; an attempt by another is a conflict.
//!
//! Drawn from a generator of their own, so every other draw of the seed stays what it was;
//! on one node and on a cluster alike, and where processes change the limiter's limit
//! (`set_limit`), which a key with a limit of its own keeps, and a key without follows.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The share of the scenarios whose keys have limits of their own.
const OWN_SHARE: f64 = 0.25;

/// The share of those with a process that disagrees on one key's limit.
const DISAGREEING_SHARE: f64 = 0.3;

/// The limits of their own a scenario's keys have.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct KeyLimits {
    /// Keys (indices into the scenario's keys) and the limit every process gives each.
    pub agreed: Vec<(u16, u32)>,
    /// A process, a key and the limit that process alone gives it, unlike the others.
    pub apart: Option<(u16, u16, u32)>,
}

impl KeyLimits {
    /// The limit of its own process `process` gives key `key`, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::shared::KeyLimits;
    ///
    /// let limits = KeyLimits { agreed: vec![(0, 5)], apart: Some((1, 0, 6)) };
    /// assert_eq!(limits.own(0, 0), Some(5));
    /// assert_eq!(limits.own(1, 0), Some(6));
    /// assert_eq!(limits.own(0, 1), None);
    /// ```
    pub fn own(&self, process: u16, key: u16) -> Option<u32> {
        match self.apart {
            Some((p, k, limit)) if p == process && k == key => Some(limit),
            _ => self
                .agreed
                .iter()
                .find(|&&(k, _)| k == key)
                .map(|&(_, own)| own),
        }
    }

    /// The limit every process but the one apart gives key `key`: its own, else `limit`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::shared::KeyLimits;
    ///
    /// let limits = KeyLimits { agreed: vec![(0, 5)], apart: Some((1, 1, 6)) };
    /// assert_eq!((limits.agreed(0, 9), limits.agreed(1, 9)), (5, 9));
    /// ```
    pub fn agreed(&self, key: u16, limit: u32) -> u32 {
        self.agreed
            .iter()
            .find(|&&(k, _)| k == key)
            .map_or(limit, |&(_, own)| own)
    }

    /// Whether no key has a limit of its own.
    pub fn is_empty(&self) -> bool {
        self.agreed.is_empty() && self.apart.is_none()
    }
}

/// The key limits of the scenario of `seed`, whose `processes` processes share `limit` over
/// `keys` keys.
pub(crate) fn pick_key_limits(
    seed: u64,
    limit: u32,
    (processes, keys): (usize, usize),
) -> KeyLimits {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0_0E11_C1A1_7000);
    if keys == 0 || processes == 0 || !rng.random_bool(OWN_SHARE) {
        return KeyLimits::default();
    }
    let own = |rng: &mut ChaCha8Rng| match rng.random_range(0..3) {
        // Below the limiter's, where there is room below.
        0 if limit > 1 => rng.random_range(1..limit),
        // Above it.
        0 | 1 => rng.random_range(limit.saturating_add(1)..=limit.saturating_mul(3).max(2)),
        _ => rng.random_range(1..=limit.saturating_mul(2)),
    };
    // Among the first keys: the hot ones, where traffic meets.
    let first = keys.min(3);
    let mut agreed: Vec<(u16, u32)> = Vec::new();
    for key in 0..first {
        if key == 0 || rng.random_bool(0.5) {
            agreed.push((u16::try_from(key).unwrap_or(0), own(&mut rng)));
        }
    }
    let apart = rng.random_bool(DISAGREEING_SHARE).then(|| {
        let process = u16::try_from(rng.random_range(0..processes)).unwrap_or(0);
        let key = u16::try_from(rng.random_range(0..first)).unwrap_or(0);
        let others = agreed
            .iter()
            .find(|&&(k, _)| k == key)
            .map_or(limit, |&(_, l)| l);
        // Another limit than the others decide the key by.
        let mine = own(&mut rng);
        let mine = if mine == others {
            others.checked_add(1).unwrap_or(others - 1)
        } else {
            mine
        };
        (process, key, mine)
    });
    KeyLimits { agreed, apart }
}

#[cfg(test)]
mod tests {
    use crate::scenario::ScenarioId;
    use crate::shared::scenario::SharedScenario;

    #[test]
    fn some_scenarios_give_keys_limits_of_their_own_and_a_few_disagree() {
        let scenarios: Vec<SharedScenario> = (0..1_000)
            .map(|seed| SharedScenario::generate(&ScenarioId::seed(seed)))
            .collect();
        let owning: Vec<&SharedScenario> = scenarios
            .iter()
            .filter(|s| !s.key_limits.is_empty())
            .collect();
        let apart = owning
            .iter()
            .filter(|s| s.key_limits.apart.is_some())
            .count();
        assert!(owning.len() > 150, "{}", owning.len());
        assert!(apart > 30 && apart < owning.len(), "{apart}");
        // On clusters, and with changes of the limiter's limit, too.
        let clustered = owning.iter().filter(|s| s.cluster.is_some()).count();
        let changing = owning
            .iter()
            .filter(|s| !s.limit_changes.is_empty())
            .count();
        assert!(clustered > 30 && changing > 30, "{clustered} {changing}");
        for scenario in owning {
            for &(key, limit) in &scenario.key_limits.agreed {
                assert!((key as usize) < scenario.keys.len() && limit > 0);
            }
            if let Some((process, key, limit)) = scenario.key_limits.apart {
                assert!((process as usize) < scenario.processes.len());
                let others = scenario.key_limits.own(u16::MAX, key);
                assert_ne!(others.unwrap_or(scenario.limit), limit);
            }
        }
    }
}
