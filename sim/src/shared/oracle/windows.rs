//! The model of what the server holds: each key's count per window on the shared grid, the
//! ledger of permits granted and forgotten, epochs, and the faults that make the server forget.

use fixed_window_spec::{Count, Decision};

use super::{Checker, Counted, LedgerOp, Run};
use crate::oracle::Invariant;
use crate::shared::record::FaultRecord;
use crate::shared::server::SERVER_EPOCH_NS;

impl Checker<'_> {
    /// The script counted a permit that left `remaining`.
    pub(super) fn permitted_run(&mut self, run: &Run, remaining: u32, window_start: u64) {
        let Run {
            request,
            caller,
            key,
            server_us,
            grid,
            weight,
            limit,
        } = *run;
        self.checks.count(&[
            Invariant::CarryOver,
            Invariant::WindowLimit,
            Invariant::Alignment,
            Invariant::DoubleCount,
        ]);
        let count = self.counts[key as usize].unwrap_or_default();
        let now = u128::from(server_us);
        let (index, used) = count.at(&grid, now);
        let Some(n) = weight else {
            self.drained_run(run, remaining, window_start);
            return;
        };
        // A zero weight is permitted whatever the window holds, even past a lowered limit.
        let decision = if n == 0 {
            Decision::Permit {
                index,
                remaining: limit.saturating_sub(used),
            }
        } else {
            count.decide_n(&grid, limit, now, now, n)
        };
        match decision {
            Decision::Permit {
                remaining: model, ..
            } => {
                if remaining < model && used == 0 {
                    self.report(Invariant::CarryOver, Some(caller), || {
                        format!("the first permit of window {index} of key {key} left {remaining}, not {model}")
                    });
                } else if remaining > model {
                    self.report(Invariant::WindowLimit, Some(caller), || {
                        format!("a permit in window {index} of key {key} left {remaining}, but {used} of {limit} were used: the script forgot permits")
                    });
                } else if remaining != model {
                    self.report(Invariant::Events, Some(caller), || {
                        format!("a permit in window {index} of key {key} left {remaining}, expected {model}")
                    });
                }
            }
            _ => self.report(Invariant::WindowLimit, Some(caller), || {
                format!("permitted at server time {server_us} although window {index} of key {key} was full ({used} of {limit})")
            }),
        }
        self.check_window_start(caller, window_start, grid.start(index));
        if n == 0 {
            // Nothing counted, nothing written.
            return;
        }
        // The server counted it, whatever the model expected.
        self.count_on_server((caller, request), key, (count, index), n, limit);
        let call = &self.calls[caller as usize];
        if call.counted.len() > 1 + call.share_waits {
            let counted = call.counted.clone();
            self.report(Invariant::DoubleCount, Some(caller), || {
                format!(
                    "one call counted on the server {} times (requests {counted:?})",
                    counted.len()
                )
            });
        }
    }

    /// The server counted `n` permits for `caller`'s `request` in window `index` of `key`
    /// (whose count the model held as `count`), under `limit`: the model's count, the counter's
    /// settings, the window's ledger and the call's counted requests follow it.
    pub(super) fn count_on_server(
        &mut self,
        (caller, request): (u32, u32),
        key: u16,
        (count, index): (Count, u128),
        n: u32,
        limit: u32,
    ) {
        let before = self.counts[key as usize];
        let mut after = count;
        after.apply_n(
            Decision::Permit {
                index,
                remaining: 0,
            },
            n,
        );
        self.counts[key as usize] = Some(after);
        self.count_settings(request, key);
        self.counted[key as usize].push((request, index));
        let epoch = self.epoch;
        self.requests[request as usize].counted = Some(Counted {
            epoch,
            key,
            window: index,
            before,
        });
        self.ledgers
            .entry((epoch, key, index))
            .or_default()
            .push(LedgerOp::Grant(request, limit));
        self.calls[caller as usize].counted.push(request);
    }

    /// The script drained the key's window: it took what was left, leaving none, and counted
    /// no permit for anyone.
    pub(super) fn drained_run(&mut self, run: &Run, remaining: u32, window_start: u64) {
        let Run {
            request,
            caller,
            key,
            server_us,
            grid,
            limit,
            ..
        } = *run;
        let count = self.counts[key as usize].unwrap_or_default();
        let now = u128::from(server_us);
        let (index, used) = count.at(&grid, now);
        if remaining != 0 {
            self.report(Invariant::WindowLimit, Some(caller), || {
                format!("a drain of window {index} of key {key} left {remaining}")
            });
        }
        self.check_window_start(caller, window_start, grid.start(index));
        if used >= limit {
            // Full already: nothing taken, nothing written.
            return;
        }
        let before = self.counts[key as usize];
        let mut after = count;
        after.drain(&grid, limit, now);
        self.counts[key as usize] = Some(after);
        self.count_settings(request, key);
        self.requests[request as usize].counted = Some(Counted {
            epoch: self.epoch,
            key,
            window: index,
            before,
        });
    }

    /// On a cluster, `request` counted on `key`'s counter: the counter records the settings
    /// the request carries.
    pub(super) fn count_settings(&mut self, request: u32, key: u16) {
        if self.scenario.cluster.is_none() {
            return;
        }
        let info = &self.requests[request as usize];
        let settings = super::Stored {
            limit: info.carried.0,
            period: self.scenario.configured(info.process).1,
            version: info.carried.1,
        };
        self.write_settings(request, key, settings);
    }

    /// The permits `request` takes: its caller's weight (none for a drain, which takes them
    /// for no caller).
    pub(super) fn units(&self, request: u32) -> u32 {
        if let Some(units) = self.lease_units(request) {
            return units;
        }
        if let Some(units) = self.hand_back_units(request) {
            return units;
        }
        self.requests
            .get(request as usize)
            .and_then(|info| info.caller)
            .and_then(|caller| self.scenario.callers[caller as usize].weight.permits())
            .unwrap_or(0)
    }

    /// The script found the window full, `retry_after` µs from its reading `read`.
    pub(super) fn full_run(&mut self, run: &Run, retry_after: u64, read: u64, window_start: u64) {
        self.checks
            .count(&[Invariant::FalseRejection, Invariant::Alignment]);
        let Run {
            caller,
            key,
            server_us,
            grid,
            weight,
            limit,
            ..
        } = *run;
        let count = self.counts[key as usize].unwrap_or_default();
        let now = u128::from(server_us);
        let (index, _) = count.at(&grid, now);
        let Some(n) = weight.filter(|&n| n > 0) else {
            self.report(Invariant::FalseRejection, Some(caller), || {
                format!(
                    "a drain or a zero weight in window {index} of key {key} was refused as full"
                )
            });
            return;
        };
        self.refusal(key, now);
        let model = match count.decide_n(&grid, limit, now, now, n) {
            Decision::Permit { remaining, .. } => {
                self.report(Invariant::FalseRejection, Some(caller), || {
                    format!("the server rejected {n} at {server_us} with {} permits free in window {index} of key {key}", remaining + n)
                });
                return;
            }
            Decision::Reject { retry_after } => retry_after,
            Decision::Wait { until } => until - now,
            // No window holds more than the limit: refused whatever this one holds, with no
            // wait the model would name.
            Decision::TooMany { .. } => return,
        };
        if u128::from(retry_after) != model {
            let ends = u128::from(read) + u128::from(retry_after);
            if grid.on_boundary(ends) {
                self.report(Invariant::Events, Some(caller), || {
                    format!(
                        "retry_after {retry_after} µs at server time {server_us}, expected {model}"
                    )
                });
            } else {
                self.report(Invariant::Alignment, Some(caller), || {
                    format!("retry_after {retry_after} µs at {read} ends at {ends}, not a boundary of the shared grid (expected {model})")
                });
            }
        }
        self.check_window_start(caller, window_start, grid.start(index));
    }

    pub(super) fn check_time(&mut self, caller: u32, read: u64, server_us: u64) {
        if read != server_us {
            self.report(Invariant::Events, Some(caller), || {
                format!("the script read time {read}, not the server's clock {server_us}")
            });
        }
    }

    pub(super) fn check_window_start(&mut self, caller: u32, window_start: u64, expected: u128) {
        if u128::from(window_start) != expected {
            self.report(Invariant::Alignment, Some(caller), || {
                format!(
                    "the script's window starts at {window_start}, the shared grid's at {expected}"
                )
            });
        }
    }

    /// The server's clock at virtual time `t`, in microseconds.
    pub(super) fn server_us(&self, t: u64) -> u128 {
        let ns = i128::from(SERVER_EPOCH_NS) + i128::from(t) + self.offset_ns;
        u128::try_from(ns.max(0) / 1_000).unwrap_or(0)
    }

    pub(super) fn expired(&mut self, key: &str, expires_at_ms: u64) {
        self.checks.count(&[Invariant::Expiry]);
        let Some(&index) = self.counter_keys.get(key) else {
            return;
        };
        let (Some(count), Some(grid)) = (self.counts[index as usize], self.key_grid(index)) else {
            return;
        };
        let gone = (u128::from(expires_at_ms) + 1) * 1_000;
        if let Some(end) = grid.end(count.index())
            && gone < end
        {
            self.report(Invariant::Expiry, None, || {
                format!("key {key} expired at server time {gone}, before its window ended at {end}")
            });
        }
        // The server forgot it: only a clock that steps back into its window can tell.
        self.forget_key(index, count.index());
    }

    /// The server no longer holds `key`'s counter of `window`. What it forgets is that
    /// window's permits and those of every earlier window of the key: a counter that moved on
    /// to a later window still guarded the earlier ones (a reading stepped back before it
    /// counts against it), and without it a clock that steps back far enough finds them afresh.
    pub(super) fn forget_key(&mut self, key: u16, window: u128) {
        let epoch = self.epoch;
        let mut kept = Vec::new();
        for (request, w) in std::mem::take(&mut self.counted[key as usize]) {
            if w <= window {
                self.ledgers
                    .entry((epoch, key, w))
                    .or_default()
                    .push(LedgerOp::Forget(request));
            } else {
                kept.push((request, w));
            }
        }
        self.counted[key as usize] = kept;
        self.counts[key as usize] = None;
        self.settings[key as usize] = None;
    }

    /// Everything of the epoch is lost: a new origin comes with the next run.
    pub(super) fn new_epoch(&mut self) {
        for key in 0..self.counts.len() {
            if let Some(count) = self.counts[key] {
                self.forget_key(u16::try_from(key).unwrap_or(0), count.index());
            }
            self.counted[key].clear();
        }
        self.grid = None;
        self.stored = None;
        self.config_writes.clear();
        self.settings.fill(None);
        self.settings_writes.clear();
        self.epoch += 1;
    }

    pub(super) fn fault(&mut self, t: u64, fault: &FaultRecord) {
        self.share_fault(t, fault);
        match fault {
            FaultRecord::Restart { .. } => {
                self.new_epoch();
                self.last_excuse = Some(t);
            }
            FaultRecord::Failover { undone, .. } => {
                self.failover_seen(t, None);
                for (request, key) in undone {
                    if **key == *self.config_key {
                        self.undo_config(t, *request);
                        continue;
                    }
                    self.forget(*request);
                }
                self.last_excuse = Some(t);
            }
            FaultRecord::ClockStep { delta_ns } => {
                self.offset_ns += i128::from(*delta_ns);
                self.last_step = Some(t);
                if *delta_ns > 0 {
                    self.last_excuse = Some(t);
                }
            }
            FaultRecord::Crash { process, .. } => {
                self.remembered.retain(|&(p, _), _| p != *process);
                self.learnt[*process as usize] = 0;
                // It starts again as a new process, registering anew.
                self.registering[*process as usize].clear();
                self.unregistered[*process as usize] = None;
                self.refusal_forgotten(*process);
            }
            FaultRecord::Reset { .. }
            | FaultRecord::Pause { .. }
            | FaultRecord::Flush
            // A migration's keys move each with its count.
            | FaultRecord::Migrating { .. }
            | FaultRecord::KeysMigrated { .. }
            | FaultRecord::ShardStalled { .. } => {}
            &FaultRecord::AccessRefused { until, refusal } => {
                self.access_refused(t, until, refusal);
            }
            FaultRecord::Migrated { .. } | FaultRecord::ShardFailover { .. } => {
                self.cluster_fault(t, fault);
            }
        }
    }

    pub(super) fn mark_granted(&mut self, request: u32) {
        let index = request as usize;
        if self.granted.len() <= index {
            self.granted.resize(index + 1, false);
        }
        self.granted[index] = true;
    }

    pub(super) fn is_granted(&self, request: u32) -> bool {
        self.granted.get(request as usize).copied().unwrap_or(false)
    }
}

impl Checker<'_> {
    /// A failover undid the permit `request` counted in this epoch: the key's count goes back
    /// to what it was before it, and its window's ledger records the permit forgotten.
    pub(super) fn forget(&mut self, request: u32) {
        let info = self
            .requests
            .get(request as usize)
            .cloned()
            .unwrap_or_default();
        let Some(counted) = info.counted.filter(|c| c.epoch == self.epoch) else {
            return;
        };
        let k = counted.key as usize;
        self.counts[k] = counted.before;
        self.undo_key_window(request, counted.key);
        self.counted[k].retain(|&(r, _)| r != request);
        self.ledgers
            .entry((counted.epoch, counted.key, counted.window))
            .or_default()
            .push(LedgerOp::Forget(request));
    }
}
