//! The server's own time per decision, as the `redis_server_time` example measures it on a
//! fresh `redis-server`: the shared limiter's script against envoy's `INCRBY` + `EXPIRE`.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One command's line of `INFO commandstats` over one kind's decisions.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CommandStats {
    /// Calls counted.
    pub calls: f64,
    /// Microseconds the server spent running them.
    pub usec: f64,
    /// `usec` over `calls`, as the server rounds it.
    pub usec_per_call: f64,
}

/// One kind of decision (`shared/begun`, `envoy/fresh`, …): what the server spent on it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Decisions {
    /// The commands whose time is the decisions', by name (`evalsha`; `incrby`, `expire`).
    pub commands: BTreeMap<String, CommandStats>,
    /// The commands' microseconds over the decisions.
    pub server_us_per_decision: f64,
    /// The server's CPU time (user and system) over the decisions, times a million: seconds
    /// of CPU per million decisions, reading requests and writing replies included.
    pub cpu_s_per_million_decisions: f64,
    /// Wall time of the decisions, in seconds.
    pub wall_s: f64,
}

/// The `redis_server_time` example's `redis-server-time.json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ServerTime {
    /// Decisions of each kind.
    pub decisions: u64,
    /// Clients deciding at once.
    pub clients: u64,
    /// The server's version, as `INFO server` gives it.
    #[serde(default)]
    pub redis_version: String,
    /// Each kind's figures, by kind (`<pattern>/<window>`: `shared` or `envoy`, `begun` or
    /// `fresh`).
    pub kinds: BTreeMap<String, Decisions>,
}

impl ServerTime {
    /// Parses the JSON the `redis_server_time` example writes.
    ///
    /// # Errors
    ///
    /// If the text is not that JSON.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::ServerTime;
    ///
    /// let stats = r#"{"calls": 10, "usec": 59, "usec_per_call": 5.9}"#;
    /// let text = format!(
    ///     r#"{{"decisions": 10, "clients": 2, "kinds": {{
    ///         "shared/begun": {{"commands": {{"evalsha": {stats}}},
    ///             "server_us_per_decision": 5.9, "cpu_s_per_million_decisions": 14.0, "wall_s": 0.1}},
    ///         "envoy/begun": {{"commands": {{}},
    ///             "server_us_per_decision": 0.5, "cpu_s_per_million_decisions": 4.0, "wall_s": 0.1}}}}}}"#
    /// );
    /// let time = ServerTime::parse(&text)?;
    /// assert_eq!(time.kinds["shared/begun"].commands["evalsha"].usec_per_call, 5.9);
    /// assert_eq!(time.ours_over_envoy("begun"), Some((5.9, 0.5)));
    /// assert_eq!(time.ours_over_envoy("fresh"), None);
    /// # Ok::<(), String>(())
    /// ```
    pub fn parse(text: &str) -> Result<ServerTime, String> {
        serde_json::from_str(text).map_err(|err| format!("not the server-time JSON: {err}"))
    }

    /// Server microseconds per decision, ours and envoy's, on a `window` (`begun` or
    /// `fresh`), if both were measured.
    pub fn ours_over_envoy(&self, window: &str) -> Option<(f64, f64)> {
        let per_decision = |pattern: &str| {
            self.kinds
                .get(&format!("{pattern}/{window}"))
                .map(|kind| kind.server_us_per_decision)
        };
        Some((per_decision("shared")?, per_decision("envoy")?))
    }
}
