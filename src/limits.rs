//! Every number of the pipeline, from the one table `lib/limits.json` (each
//! value with its reason there; build.rs makes the constants below of it, and
//! the JS layer reads the same file). Tuned values are re-derived on the
//! machine at hand by `npm run bench -- --suite calibrate`; `facts` are V8's,
//! Node's or the OS's.
//!
//! Where a tuned value is used it is read through `tuned!`: the constant
//! itself, but in a bench build (`--features bench`), where the calibrate
//! suite sets it by name in `READFILE_UTF8_TUNE` ("NAME=value,…", read once),
//! the value given there. A `ByNode` value is this Node line's.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A tuned value by name (`tuned!(SPLIT_READ_MIN_BYTES)`): see the module's
/// documentation.
macro_rules! tuned {
  ($name:ident) => {
    $crate::limits::Tunable::tuned($crate::limits::$name, stringify!($name))
  };
}
pub(crate) use tuned;

include!(concat!(env!("OUT_DIR"), "/limits.rs"));

/// A value per Node line, `(major, value)` by line: the running Node takes
/// the nearest line listed, the newer of two as near (an odd line leads to
/// the next even one and has its changes already). lib/limits.js reads the
/// table by the same rule.
#[derive(Clone, Copy)]
pub(crate) struct ByNode(pub(crate) &'static [(u32, usize)]);

impl ByNode {
  /// The value for Node line `major`.
  pub(crate) fn on(self, major: u32) -> usize {
    let distance = |line: u32| line.abs_diff(major);
    self
      .0
      .iter()
      .min_by(|a, b| distance(a.0).cmp(&distance(b.0)).then(b.0.cmp(&a.0)))
      .map_or(0, |&(_, value)| value)
  }

  /// The value for the running Node (see `set_node_line`).
  pub(crate) fn here(self) -> usize {
    self.on(node_line())
  }
}

/// The running Node's major version; until it is known, the newest line.
static NODE_LINE: AtomicU32 = AtomicU32::new(u32::MAX);

/// The running Node's major version (the newest line until it is known).
pub(crate) fn node_line() -> u32 {
  NODE_LINE.load(Ordering::Relaxed)
}

/// Tells the table which Node line runs this process (once, as the addon loads).
pub(crate) fn set_node_line(major: u32) {
  NODE_LINE.store(major, Ordering::Relaxed);
}

/// A tuned value's type: the value, or in a bench build the calibrate suite's.
pub(crate) trait Tunable: Copy {
  /// What the value is used as.
  type Value;
  /// The value (this Node line's for a `ByNode`), or the one the calibrate
  /// suite set for `name`.
  fn tuned(self, name: &str) -> Self::Value;
}

impl Tunable for usize {
  type Value = usize;
  #[inline(always)]
  fn tuned(self, name: &str) -> usize {
    overridden(name).map_or(self, |set| set as usize)
  }
}

impl Tunable for ByNode {
  type Value = usize;
  #[inline(always)]
  fn tuned(self, name: &str) -> usize {
    self.here().tuned(name)
  }
}

impl Tunable for Duration {
  type Value = Duration;
  /// In milliseconds, for the calibrate suite.
  #[inline(always)]
  fn tuned(self, name: &str) -> Duration {
    overridden(name).map_or(self, Duration::from_millis)
  }
}

/// The calibrate suite's value for `name`, in a bench build.
#[inline(always)]
fn overridden(name: &str) -> Option<u64> {
  #[cfg(feature = "bench")]
  return overrides().get(name).copied();
  #[cfg(not(feature = "bench"))]
  {
    let _ = name;
    None
  }
}

/// The calibrate suite's values (`READFILE_UTF8_TUNE`), parsed once.
#[cfg(feature = "bench")]
fn overrides() -> &'static std::collections::HashMap<String, u64> {
  static PARSED: std::sync::OnceLock<std::collections::HashMap<String, u64>> = std::sync::OnceLock::new();
  PARSED.get_or_init(|| parse_overrides(&std::env::var("READFILE_UTF8_TUNE").unwrap_or_default()))
}

/// "NAME=value,NAME=value" as a map; pairs that do not parse are left out.
#[cfg(feature = "bench")]
fn parse_overrides(text: &str) -> std::collections::HashMap<String, u64> {
  text
    .split(',')
    .filter_map(|pair| {
      let (name, value) = pair.split_once('=')?;
      Some((name.trim().to_owned(), value.trim().parse().ok()?))
    })
    .collect()
}

/// Every tuned value by name as this process uses it (this Node line's, and
/// the calibrate suite's where it set one): what calibrate compares its
/// crossovers with (bench builds only).
#[cfg(feature = "bench")]
pub(crate) fn all() -> Vec<(&'static str, u64)> {
  TUNED
    .iter()
    .filter_map(|&(name, _)| Some((name, tuned_by_name(name)?)))
    .collect()
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn a_node_line_takes_the_nearest_line_listed_and_the_newer_of_two() {
    let by = ByNode(&[(20, 1), (22, 2), (24, 3), (26, 4)]);
    let cases = [
      (18, 1),
      (20, 1),
      (21, 2),
      (22, 2),
      (23, 3),
      (24, 3),
      (25, 4),
      (26, 4),
      (30, 4),
    ];
    for (major, value) in cases {
      assert_eq!(by.on(major), value, "Node {major}");
    }
    assert_eq!(ByNode(&[(20, 7), (26, 9)]).on(24), 9, "nearer 26 than 20");
    assert_eq!(ByNode(&[(20, 7), (26, 9)]).on(22), 7);
  }

  #[test]
  fn every_tuned_value_has_a_calibrate_row() {
    for (name, row) in TUNED {
      assert!(matches!(*row, "crossover" | "trade-off"), "{name}: {row}");
    }
  }

  #[cfg(feature = "bench")]
  #[test]
  fn the_calibrate_suite_sets_thresholds_by_name() {
    let set = parse_overrides("SPLIT_READ_MIN_BYTES=1024, EXTERNAL_FROM_BYTES = 0,BAD,NOPE=x");
    assert_eq!(set.len(), 2);
    assert_eq!(set["SPLIT_READ_MIN_BYTES"], 1024);
    assert_eq!(set["EXTERNAL_FROM_BYTES"], 0);
    assert_eq!(all().len(), TUNED.len(), "every tuned value can be read by name");
  }
}
