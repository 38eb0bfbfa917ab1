//! The simulator's `summary.json`, read leniently.

use serde_json::Value;

/// The simulator's summary: every top-level field as it was written, in file order, with the
/// invariant violations picked out.
///
/// Unknown fields are kept and shown; missing ones are simply absent, so a newer or older
/// simulator still renders.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSummary {
    /// (field, value as text), in file order, `violations` excluded.
    pub fields: Vec<(String, String)>,
    /// (invariant, violations counted).
    pub violations: Vec<(String, u64)>,
}

impl SimSummary {
    /// Parses the summary's JSON text.
    ///
    /// # Errors
    ///
    /// If the text is not a JSON object.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::SimSummary;
    ///
    /// let summary = SimSummary::parse(r#"{"seed": 7, "violations": {"limit": 0}}"#)?;
    /// assert_eq!(summary.fields, vec![("seed".to_owned(), "7".to_owned())]);
    /// assert_eq!(summary.total_violations(), 0);
    /// # Ok::<(), String>(())
    /// ```
    pub fn parse(text: &str) -> Result<SimSummary, String> {
        let value: Value = serde_json::from_str(text).map_err(|err| format!("not JSON: {err}"))?;
        let Value::Object(map) = value else {
            return Err("not a JSON object".to_owned());
        };
        let mut summary = SimSummary {
            fields: Vec::new(),
            violations: Vec::new(),
        };
        for (key, value) in map {
            if key == "violations" {
                if let Value::Object(violations) = value {
                    summary.violations = violations
                        .into_iter()
                        .map(|(name, count)| (name, count.as_u64().unwrap_or(0)))
                        .collect();
                }
                continue;
            }
            let text = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            summary.fields.push((key, text));
        }
        Ok(summary)
    }

    /// The violations of every invariant, added up.
    pub fn total_violations(&self) -> u64 {
        self.violations.iter().map(|(_, n)| n).sum()
    }
}
