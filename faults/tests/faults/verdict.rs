//! The checks every run goes through: linearizability against the keyed window on the server's
//! clock (lost replies indeterminate), the ledger's bound (at most `limit` plus the forgotten
//! permits per key and window), and no counter left without an expiry.

use fixed_window_models::Violation;
use fixed_window_models::shared::{
    self, Checked,
    ledger::{self, Bounded},
};

use crate::run::Ran;

/// The three verdicts on one run.
#[derive(Debug)]
pub struct Verdict {
    pub linearizable: Result<Checked, Violation>,
    pub ledger: Result<Bounded, Violation>,
    pub immortal: Vec<String>,
}

impl Verdict {
    pub fn of(ran: &Ran) -> Verdict {
        Verdict {
            linearizable: shared::check(&ran.history),
            ledger: ledger::check(&ran.history),
            immortal: ran.immortal.clone(),
        }
    }

    /// Whether any check failed.
    pub fn caught(&self) -> bool {
        self.linearizable.is_err() || self.ledger.is_err() || !self.immortal.is_empty()
    }

    /// Every check passed, with the figures; else what failed, with the run's seed.
    pub fn holds(&self, ran: &Ran) -> Result<(Checked, Bounded), String> {
        match (&self.linearizable, &self.ledger, self.immortal.is_empty()) {
            (Ok(checked), Ok(bounded), true) => {
                eprintln!("{}", figures(ran, checked, bounded));
                Ok((*checked, *bounded))
            }
            _ => Err(format!(
                "{:?} (seed {}) failed: linearizable {:?}; ledger {:?}; immortal counters {:?}; tally {:?}; injected {:?}",
                ran.plan.name,
                ran.plan.seed,
                self.linearizable,
                self.ledger,
                self.immortal,
                ran.tally,
                ran.injected
            )),
        }
    }
}

/// One line of figures for a run that held.
fn figures(ran: &Ran, checked: &Checked, bounded: &Bounded) -> String {
    format!(
        "figures {}: {} attempts on {} keys ({} indeterminate, {} of them counted), {} permits judged by the ledger ({} forgotten), tally {:?}, server faults {}, proxy {:?}",
        ran.plan.name,
        checked.attempts,
        checked.keys,
        checked.indeterminate,
        checked.took_effect,
        bounded.permits,
        bounded.forgotten,
        ran.tally,
        ran.server_faults,
        ran.injected
    )
}
