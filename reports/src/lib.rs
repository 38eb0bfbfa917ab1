//! Charts and the HTML report from benchmark and simulator results.
