//! Shrinking a failing shared-limiter scenario: fewer faults (a cluster's among them), limit
//! changes, processes and callers, as long as the same rule still breaks. Greedy: each part is cut in halves, then one by one, and the
//! passes repeat while any cut holds, within a bound on runs.
//!
//! The callers kept travel in the [`ScenarioId`] (as for the in-process limiter); the faults,
//! a cluster's faults, limit changes and processes kept, and whether packet loss stays, in a
//! [`SharedCut`], written `p:0,2/f:1/c:0/s:0/l:0`, which `--cut` takes back.

use core::fmt;
use core::str::FromStr;
use std::cell::Cell;

use crate::oracle::Invariant;
use crate::scenario::ScenarioId;
use crate::shared::checked::run_checked;
use crate::shared::faults::Fault;
use crate::shared::planted::SharedPlantedBug;
use crate::shared::scenario::SharedScenario;

/// At most this many runs are spent shrinking one scenario.
const MOST_RUNS: usize = 300;

/// What a shrink kept of a scenario beyond its callers: the planned faults, a cluster's faults
/// (migrations and failovers of primaries), the changes of the limit and the processes (by their indices in the whole scenario), and whether requests and
/// replies are still lost.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::shared::SharedCut;
///
/// let cut: SharedCut = "p:0,2/f:1/c:/s:0/l:0".parse()?;
/// assert_eq!(cut.processes.as_deref(), Some(&[0, 2][..]));
/// assert_eq!(cut.cluster_faults.as_deref(), Some(&[][..]));
/// assert_eq!(cut.limit_changes.as_deref(), Some(&[0][..]));
/// assert_eq!(cut.to_string(), "p:0,2/f:1/c:/s:0/l:0");
/// assert!("p:x".parse::<SharedCut>().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SharedCut {
    /// The processes kept; `None` keeps them all.
    pub processes: Option<Vec<u16>>,
    /// The planned faults kept; `None` keeps them all.
    pub faults: Option<Vec<u32>>,
    /// A cluster's faults kept (by their indices in its plan); `None` keeps them all.
    pub cluster_faults: Option<Vec<u32>>,
    /// The changes of the limit kept; `None` keeps them all.
    pub limit_changes: Option<Vec<u32>>,
    /// Whether requests and replies are no longer lost.
    pub no_loss: bool,
}

impl SharedCut {
    /// Whether it cuts nothing.
    pub fn is_empty(&self) -> bool {
        self.processes.is_none()
            && self.faults.is_none()
            && self.cluster_faults.is_none()
            && self.limit_changes.is_none()
            && !self.no_loss
    }

    /// The scenario `id` names, cut.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::ScenarioId;
    /// use fixed_window_sim::shared::{SharedCut, SharedScenario};
    ///
    /// let id = ScenarioId::seed(5);
    /// let cut = SharedCut {
    ///     processes: Some(vec![0]),
    ///     faults: Some(vec![]),
    ///     cluster_faults: Some(vec![]),
    ///     limit_changes: Some(vec![]),
    ///     no_loss: true,
    /// };
    /// let scenario = cut.scenario(&id);
    /// assert_eq!(scenario.processes.len(), 1);
    /// assert!(scenario.faults.healthy());
    /// assert!(scenario.callers.iter().all(|c| c.process == 0));
    /// assert!(scenario.limit_changes.is_empty());
    /// ```
    pub fn scenario(&self, id: &ScenarioId) -> SharedScenario {
        let mut scenario = SharedScenario::generate(id);
        if let Some(kept) = &self.faults {
            keep(&mut scenario.faults.planned, kept);
        }
        if let (Some(kept), Some(cluster)) = (&self.cluster_faults, &mut scenario.cluster) {
            keep(&mut cluster.faults, kept);
        }
        if let Some(kept) = &self.limit_changes {
            keep(&mut scenario.limit_changes, kept);
        }
        if self.no_loss {
            scenario.faults.request_loss_ppm = 0;
            scenario.faults.reply_loss_ppm = 0;
        }
        if let Some(kept) = &self.processes {
            // Each kept process's new index: its rank among those kept.
            let new_index = |p: u16| -> Option<u16> {
                kept.contains(&p)
                    .then(|| kept.iter().filter(|&&k| k < p).count())
                    .and_then(|i| u16::try_from(i).ok())
            };
            let processes = std::mem::take(&mut scenario.processes);
            scenario.processes = (0_u16..)
                .zip(processes)
                .filter(|(i, _)| kept.contains(i))
                .map(|(_, p)| p)
                .collect();
            scenario.callers.retain_mut(|caller| {
                new_index(caller.process).is_some_and(|p| {
                    caller.process = p;
                    true
                })
            });
            scenario
                .faults
                .planned
                .retain_mut(|(_, fault)| match fault {
                    Fault::Reset { process } | Fault::Crash { process, .. } => new_index(*process)
                        .is_some_and(|p| {
                            *process = p;
                            true
                        }),
                    _ => true,
                });
            scenario.key_limits.apart = scenario
                .key_limits
                .apart
                .and_then(|(process, key, limit)| Some((new_index(process)?, key, limit)));
            scenario.limit_changes.retain_mut(|change| {
                new_index(change.process).is_some_and(|p| {
                    change.process = p;
                    true
                })
            });
            // A live change of a process cut goes with it.
            scenario.key_live.retain_mut(|change| {
                new_index(change.process).is_some_and(|p| {
                    change.process = p;
                    true
                })
            });
            scenario.hand_backs.retain_mut(|hand_back| {
                new_index(hand_back.process).is_some_and(|p| {
                    hand_back.process = p;
                    true
                })
            });
        }
        scenario
    }
}

/// Keeps the items of `items` whose indices are in `kept`.
fn keep<T>(items: &mut Vec<T>, kept: &[u32]) {
    let all = std::mem::take(items);
    *items = (0_u32..)
        .zip(all)
        .filter(|(i, _)| kept.contains(i))
        .map(|(_, item)| item)
        .collect();
}

fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, list: &[T]) -> fmt::Result {
    for (i, item) in list.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl fmt::Display for SharedCut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = 0;
        let mut part = |f: &mut fmt::Formatter<'_>, tag: &str| {
            let separator = if parts > 0 { "/" } else { "" };
            parts += 1;
            write!(f, "{separator}{tag}:")
        };
        if let Some(processes) = &self.processes {
            part(f, "p")?;
            write_list(f, processes)?;
        }
        if let Some(faults) = &self.faults {
            part(f, "f")?;
            write_list(f, faults)?;
        }
        if let Some(faults) = &self.cluster_faults {
            part(f, "c")?;
            write_list(f, faults)?;
        }
        if let Some(changes) = &self.limit_changes {
            part(f, "s")?;
            write_list(f, changes)?;
        }
        if self.no_loss {
            part(f, "l")?;
            f.write_str("0")?;
        }
        Ok(())
    }
}

fn parse_list<T: FromStr>(text: &str) -> Option<Vec<T>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    text.split(',').map(|item| item.parse().ok()).collect()
}

impl FromStr for SharedCut {
    type Err = String;

    fn from_str(s: &str) -> Result<SharedCut, String> {
        let invalid = || format!("invalid cut `{s}`: expected e.g. p:0,2/f:1/c:0/s:0/l:0");
        let mut cut = SharedCut::default();
        for part in s.split('/').filter(|part| !part.is_empty()) {
            let (tag, value) = part.split_once(':').ok_or_else(invalid)?;
            match tag {
                "p" => cut.processes = Some(parse_list(value).ok_or_else(invalid)?),
                "f" => cut.faults = Some(parse_list(value).ok_or_else(invalid)?),
                "c" => cut.cluster_faults = Some(parse_list(value).ok_or_else(invalid)?),
                "s" => cut.limit_changes = Some(parse_list(value).ok_or_else(invalid)?),
                "l" if value == "0" => cut.no_loss = true,
                _ => return Err(invalid()),
            }
        }
        Ok(cut)
    }
}

/// Cuts the failing scenario `id` down to a smaller one on which `planted` (or the real limiter)
/// still breaks `invariant`: the id of the callers kept and the cut of the rest. Returns `id`
/// and an empty cut if nothing smaller fails.
///
/// # Examples
///
/// A lost reply retried, caught on fewer processes, callers and faults.
///
/// ```
/// use fixed_window_sim::{Invariant, ScenarioId};
/// use fixed_window_sim::shared::{SharedPlantedBug, SharedScenario, check_shared, run_shared, shrink_shared};
///
/// let planted = Some(SharedPlantedBug::RetryLostReply);
/// let id = (0..)
///     .map(ScenarioId::seed)
///     .find(|id| {
///         let scenario = SharedScenario::generate(id);
///         check_shared(&scenario, &run_shared(&scenario, planted))
///             .iter()
///             .any(|v| v.invariant == Invariant::DoubleCount)
///     })
///     .unwrap();
/// let (small, cut) = shrink_shared(&id, planted, Invariant::DoubleCount);
/// let (whole, shrunk) = (SharedScenario::generate(&id), cut.scenario(&small));
/// assert!(shrunk.callers.len() <= whole.callers.len());
/// assert!(shrunk.processes.len() <= whole.processes.len());
/// ```
pub fn shrink_shared(
    id: &ScenarioId,
    planted: Option<SharedPlantedBug>,
    invariant: Invariant,
) -> (ScenarioId, SharedCut) {
    let whole = SharedScenario::generate(&ScenarioId::seed(id.seed));
    let runs = Cell::new(0);
    let fails = |callers: &[u32], cut: &SharedCut| {
        if runs.get() >= MOST_RUNS {
            return false;
        }
        runs.set(runs.get() + 1);
        let candidate = ScenarioId::kept(id.seed, callers.to_vec());
        let scenario = cut.scenario(&candidate);
        !scenario.callers.is_empty()
            && run_checked(&scenario, planted).is_ok_and(|(_, verdict)| {
                verdict.violations.iter().any(|v| v.invariant == invariant)
            })
    };
    let mut callers: Vec<u32> = match &id.kept {
        Some(kept) => kept.clone(),
        None => (0..u32::try_from(whole.callers.len()).unwrap_or(u32::MAX)).collect(),
    };
    let mut cut = SharedCut {
        processes: Some((0..u16::try_from(whole.processes.len()).unwrap_or(0)).collect()),
        faults: Some((0..u32::try_from(whole.faults.planned.len()).unwrap_or(0)).collect()),
        cluster_faults: whole
            .cluster
            .as_ref()
            .map(|cluster| (0..u32::try_from(cluster.faults.len()).unwrap_or(0)).collect()),
        limit_changes: Some((0..u32::try_from(whole.limit_changes.len()).unwrap_or(0)).collect()),
        no_loss: false,
    };
    if !fails(&callers, &cut) {
        return (id.clone(), SharedCut::default());
    }
    loop {
        let before = (callers.len(), cut.clone());
        if !cut.no_loss {
            let fewer = SharedCut {
                no_loss: true,
                ..cut.clone()
            };
            if fails(&callers, &fewer) {
                cut = fewer;
            }
        }
        let faults = cut.faults.clone().unwrap_or_default();
        cut.faults = Some(reduce(faults, |kept| {
            let fewer = SharedCut {
                faults: Some(kept.to_vec()),
                ..cut.clone()
            };
            fails(&callers, &fewer)
        }));
        if let Some(faults) = cut.cluster_faults.clone() {
            cut.cluster_faults = Some(reduce(faults, |kept| {
                let fewer = SharedCut {
                    cluster_faults: Some(kept.to_vec()),
                    ..cut.clone()
                };
                fails(&callers, &fewer)
            }));
        }
        let changes = cut.limit_changes.clone().unwrap_or_default();
        cut.limit_changes = Some(reduce(changes, |kept| {
            let fewer = SharedCut {
                limit_changes: Some(kept.to_vec()),
                ..cut.clone()
            };
            fails(&callers, &fewer)
        }));
        let processes = cut.processes.clone().unwrap_or_default();
        cut.processes = Some(reduce(processes, |kept| {
            let fewer = SharedCut {
                processes: Some(kept.to_vec()),
                ..cut.clone()
            };
            !kept.is_empty() && fails(&callers, &fewer)
        }));
        callers = reduce(callers, |kept| fails(kept, &cut));
        if (callers.len(), cut.clone()) == before || runs.get() >= MOST_RUNS {
            break;
        }
    }
    let shrunk = ScenarioId::kept(id.seed, callers);
    (shrunk, cut)
}

/// Removes chunks of `items` (halves, then quarters, down to single items) while `still_fails`
/// holds without them.
fn reduce<T: Clone>(mut items: Vec<T>, mut still_fails: impl FnMut(&[T]) -> bool) -> Vec<T> {
    let mut chunk = items.len().div_ceil(2).max(1);
    loop {
        let mut start = 0;
        while start < items.len() {
            let end = (start + chunk).min(items.len());
            let mut fewer = items[..start].to_vec();
            fewer.extend_from_slice(&items[end..]);
            if still_fails(&fewer) {
                items = fewer;
            } else {
                start = end;
            }
        }
        if chunk == 1 {
            return items;
        }
        chunk = chunk.div_ceil(2);
    }
}
