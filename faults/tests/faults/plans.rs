//! The fault tests' plans, one per fault: the production limiter and the planted bugs run the
//! same ones.

use core::time::Duration;

use fixed_window_redis::FailPolicy;

use crate::proxy::Faults;
use crate::run::{PERIOD, Plan, ServerFault, TIMEOUT};

/// A request held past the clients' timeout.
const LATE: Duration = Duration::from_millis(400);

/// Nothing goes wrong.
pub fn none(name: &'static str) -> Plan {
    Plan::new(name, 1)
}

/// Chunks held back a little, and some requests past the timeout.
pub fn delay(name: &'static str) -> Plan {
    Plan {
        faults: Faults {
            delay: 0.3,
            delay_max: Duration::from_millis(3),
            long_delay: 0.02,
            long_delay_by: LATE,
            ..Faults::NONE
        },
        ..Plan::new(name, 2)
    }
}

/// Replies dropped after the script ran: the connection closed at once, or stalled past the
/// timeout.
pub fn lost_reply(name: &'static str) -> Plan {
    Plan {
        faults: Faults {
            lose_reply: 0.05,
            stall_reply: 0.01,
            stall: LATE,
            ..Faults::NONE
        },
        ..Plan::new(name, 3)
    }
}

/// Connections reset instead of forwarding a request.
pub fn reset(name: &'static str) -> Plan {
    Plan {
        faults: Faults {
            reset: 0.04,
            ..Faults::NONE
        },
        ..Plan::new(name, 4)
    }
}

/// Requests dropped on connections kept open: the server never runs them, and their callers
/// time out.
pub fn lost_request(name: &'static str, policy: FailPolicy) -> Plan {
    Plan {
        policy,
        faults: Faults {
            swallow_request: 0.05,
            stall: LATE,
            ..Faults::NONE
        },
        ..Plan::new(name, 10)
    }
}

/// The script cache flushed (`SCRIPT FLUSH`) three times during the load: every client meets
/// `NOSCRIPT` and loads the script again.
pub fn script_flush(name: &'static str) -> Plan {
    Plan {
        server: ServerFault::Flush { times: 3 },
        ..Plan::new(name, 11)
    }
}

/// Callers that die right after their request, never learning the outcome; many keys, so that
/// a key's last write is often one whose caller died.
pub fn crash(name: &'static str) -> Plan {
    Plan {
        crash: 0.25,
        keys: 12,
        ..Plan::new(name, 5)
    }
}

/// The server stopped in place twice, each time for twice the timeout.
pub fn pause(name: &'static str, policy: FailPolicy) -> Plan {
    Plan {
        policy,
        server: ServerFault::Pause {
            times: 2,
            length: TIMEOUT * 2,
        },
        ..Plan::new(name, 6)
    }
}

/// The server restarted without persistence a third of the way through.
pub fn restart(name: &'static str) -> Plan {
    Plan {
        server: ServerFault::Restart,
        ..Plan::new(name, 7)
    }
}

/// A failover, half-way through, to a replica that stopped replicating a quarter of the way.
pub fn failover(name: &'static str) -> Plan {
    Plan {
        server: ServerFault::Failover,
        ..Plan::new(name, 8)
    }
}

/// Every network fault at once, with the local memory of full windows on.
pub fn mixed(name: &'static str, policy: FailPolicy) -> Plan {
    Plan {
        policy,
        local_memory: true,
        faults: Faults {
            delay: 0.2,
            delay_max: Duration::from_millis(2),
            long_delay: 0.02,
            long_delay_by: LATE,
            lose_reply: 0.04,
            stall_reply: 0.01,
            stall: LATE,
            reset: 0.04,
            swallow_request: 0.01,
        },
        crash: 0.02,
        ..Plan::new(name, 9)
    }
}

/// The server's clock stepped forward by 2.4 periods a third of the way through, and back by
/// 1.8 periods two thirds of the way (within the counters' expiry margin, so the later window's
/// counter is still there to count against).
pub fn clock_steps(name: &'static str) -> Plan {
    Plan {
        server: ServerFault::ClockSteps {
            forward: PERIOD * 12 / 5,
            back: PERIOD * 9 / 5,
        },
        time_key: Some(Duration::from_micros(1)),
        ..Plan::new(name, 12)
    }
}

/// Local memory of full windows on, nothing going wrong: its rejections are judged by the
/// fullness of the server's window at the time.
pub fn remembered(name: &'static str) -> Plan {
    Plan {
        local_memory: true,
        ..Plan::new(name, 13)
    }
}

/// The server's clock read from the time key in fifths of a period: one reading in five falls
/// exactly on a window's first microsecond.
pub fn on_boundaries(name: &'static str) -> Plan {
    Plan {
        time_key: Some(PERIOD / 5),
        ..Plan::new(name, 14)
    }
}
