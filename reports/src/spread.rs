//! The median of a few runs' figures and their spread.

/// The median of some runs' figures, with the smallest and largest of them.
///
/// On a shared machine one run decides nothing; the spread says how far the runs agree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The median: the middle figure, or the mean of the two middle ones.
    pub median: f64,
    /// The smallest figure.
    pub min: f64,
    /// The largest figure.
    pub max: f64,
    /// How many figures there were.
    pub runs: usize,
}

impl Spread {
    /// The spread of the finite figures in `values`; `None` if there is none.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::Spread;
    ///
    /// let spread = Spread::of(&[1.3, 0.9, 1.1, f64::NAN]).unwrap();
    /// assert_eq!((spread.median, spread.min, spread.max, spread.runs), (1.1, 0.9, 1.3, 3));
    /// assert_eq!(Spread::of(&[2.0, 1.0]).unwrap().median, 1.5);
    /// assert_eq!(Spread::of(&[]), None);
    /// ```
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let middle = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 {
            sorted[middle]
        } else {
            f64::midpoint(sorted[middle - 1], sorted[middle])
        };
        Some(Spread {
            median,
            min,
            max,
            runs: sorted.len(),
        })
    }
}
