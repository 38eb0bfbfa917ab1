//! What one node of a cluster tells of it: a parsed line of `CLUSTER NODES` per node, and the
//! fields of `INFO`.

use super::Node;

/// One line of `CLUSTER NODES`: `<id> <ip:port@bus-port> <flags> <master id or -> <ping sent>
/// <pong received> <config epoch> <link state> <slot or range>...`.
pub(super) struct Line {
    pub(super) node: Node,
    pub(super) myself: bool,
    master: bool,
    /// Marked failed (`fail`) or without an address (`noaddr`).
    pub(super) failed: bool,
    /// Slot ranges served, inclusive; migrating and importing marks (`[...]`) are left out.
    pub(super) slots: Vec<(u16, u16)>,
}

impl Line {
    pub(super) fn parse(text: &str) -> Result<Line, String> {
        let bad = || format!("unexpected CLUSTER NODES line: {text}");
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() < 8 {
            return Err(bad());
        }
        let port = fields[1]
            .split('@')
            .next()
            .and_then(|address| address.rsplit(':').next())
            .and_then(|port| port.parse().ok())
            .ok_or_else(bad)?;
        let flags: Vec<&str> = fields[2].split(',').collect();
        let mut slots = Vec::new();
        for range in fields[8..].iter().filter(|range| !range.starts_with('[')) {
            let (first, last) = range.split_once('-').unwrap_or((range, range));
            let first = first.parse().map_err(|_| bad())?;
            let last = last.parse().map_err(|_| bad())?;
            slots.push((first, last));
        }
        Ok(Line {
            node: Node {
                port,
                id: fields[0].to_owned(),
                master_id: (fields[3] != "-").then(|| fields[3].to_owned()),
            },
            myself: flags.contains(&"myself"),
            master: flags.contains(&"master"),
            failed: flags.contains(&"fail") || flags.contains(&"noaddr"),
            slots,
        })
    }

    pub(super) fn is_master(&self) -> bool {
        self.master
    }

    pub(super) fn serves(&self, slot: u16) -> bool {
        self.slots
            .iter()
            .any(|&(first, last)| (first..=last).contains(&slot))
    }
}

/// The value of `name` in an `INFO`-style text of `name:value` lines.
pub(super) fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cluster_nodes_lines() {
        let line = Line::parse(
            "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host \
             slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected",
        )
        .unwrap();
        assert_eq!(line.node.port, 30004);
        assert_eq!(
            line.node.master_id.as_deref(),
            Some("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca")
        );
        assert!(!line.is_master() && !line.myself && !line.failed);

        let line = Line::parse(
            "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 \
             connected 0-5460 7000 [9300->-292f8b365bb7edb5e285caf0b7e6ddc7265a2f4c]",
        )
        .unwrap();
        assert!(line.is_master() && line.myself);
        assert_eq!(line.slots, [(0, 5460), (7000, 7000)]);
        assert!(line.serves(5460) && line.serves(7000) && !line.serves(9300));

        assert!(Line::parse("").is_err());
        assert!(Line::parse("id 127.0.0.1:x@1 master - 0 0 1 connected").is_err());
        assert!(Line::parse("id 127.0.0.1:1@2 master - 0 0 1 connected a-b").is_err());
    }

    #[test]
    fn reads_fields_of_info() {
        let info = "# Replication\r\nrole:slave\r\nmaster_link_status:up\r\n";
        assert_eq!(field(info, "role"), Some("slave"));
        assert_eq!(field(info, "master_link_status"), Some("up"));
        assert_eq!(field(info, "master"), None);
    }
}
