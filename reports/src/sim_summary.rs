//! The simulator's `summary.json`, read leniently.

use serde_json::Value;

use crate::sweep_provenance::SweepProvenance;

/// The simulator's summary: every top-level field as it was written, with the invariant
/// violations and the sweep's provenance picked out.
///
/// Unknown fields are kept and shown; missing ones are simply absent, so a newer or older
/// simulator still renders.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSummary {
    /// (field, value) in the order of the field names, `violations` and `sweep` excluded.
    pub fields: Vec<(String, Value)>,
    /// (invariant, violations counted).
    pub violations: Vec<(String, u64)>,
    /// Which sweep wrote the summary, as far as it says.
    pub sweep: Option<SweepProvenance>,
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
    /// assert_eq!(summary.fields, vec![("seed".to_owned(), serde_json::json!(7))]);
    /// assert_eq!(summary.sweep.as_ref().and_then(|sweep| sweep.seed), Some(7));
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
            sweep: SweepProvenance::of_summary(&map),
        };
        for (key, value) in map {
            match (key.as_str(), value) {
                ("violations", Value::Object(violations)) => {
                    summary.violations = violations
                        .into_iter()
                        .map(|(name, count)| (name, count.as_u64().unwrap_or(0)))
                        .collect();
                }
                ("violations" | "sweep", _) => {}
                (_, value) => summary.fields.push((key, value)),
            }
        }
        Ok(summary)
    }

    /// The counts of an object field (such as a shared sweep's `faults`), in the order
    /// written; empty if the field is absent or not an object of counts.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::SimSummary;
    ///
    /// let summary = SimSummary::parse(r#"{"faults": {"reply_lost": 3}}"#)?;
    /// assert_eq!(summary.counts("faults"), vec![("reply_lost".to_owned(), 3)]);
    /// assert!(summary.counts("nothing").is_empty());
    /// # Ok::<(), String>(())
    /// ```
    pub fn counts(&self, field: &str) -> Vec<(String, u64)> {
        self.fields
            .iter()
            .find(|(name, _)| name == field)
            .and_then(|(_, value)| value.as_object())
            .map(|object| {
                object
                    .iter()
                    .map(|(name, count)| (name.clone(), count.as_u64().unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The violations of every invariant, added up.
    pub fn total_violations(&self) -> u64 {
        self.violations.iter().map(|(_, n)| n).sum()
    }
}
