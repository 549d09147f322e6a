//! Sets up the link flags a Node-API addon needs, and makes the Rust constants
//! of the one table of limits, `lib/limits.json` (which the JS layer reads as
//! it is), into `$OUT_DIR/limits.rs` for `src/limits.rs` to include.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value};

const TABLE: &str = "lib/limits.json";

fn main() {
  napi_build::setup();
  println!("cargo:rerun-if-changed={TABLE}");
  let text = std::fs::read_to_string(TABLE).unwrap_or_else(|e| panic!("{TABLE}: {e}"));
  let table: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{TABLE}: {e}"));
  let section = |name: &str| {
    table[name]
      .as_object()
      .unwrap_or_else(|| panic!("{TABLE}: no \"{name}\" object"))
  };
  let (tuned, facts) = (section("tuned"), section("facts"));
  let mut out = String::from("// Made by build.rs from lib/limits.json: edit that file, not this one.\n\n");
  out.push_str("/// Fixed by V8, Node or the OS: not ours to tune.\npub(crate) mod facts {\n");
  for (name, entry) in facts {
    constant(&mut out, "  ", name, entry, facts);
  }
  out.push_str("}\n\n");
  for (name, entry) in tuned {
    constant(&mut out, "", name, entry, facts);
  }
  out.push_str("\n/// Every tuned value by name, with its calibrate row's kind.\n");
  out.push_str("#[allow(dead_code)]\npub(crate) const TUNED: &[(&str, &str)] = &[\n");
  for (name, entry) in tuned {
    let row = entry["calibrate"]
      .as_str()
      .unwrap_or_else(|| panic!("{TABLE}: {name} has no calibrate row"));
    writeln!(out, "  ({name:?}, {row:?}),").unwrap();
  }
  out.push_str("];\n");
  out.push_str("\n/// A tuned value by name, as `tuned!` reads it (a time in milliseconds).\n");
  out.push_str(
    "#[cfg(feature = \"bench\")]\npub(crate) fn tuned_by_name(name: &str) -> Option<u64> {\n  match name {\n",
  );
  for (name, entry) in tuned {
    let ms = entry["value"].as_str().is_some_and(|v| v.ends_with(" ms"));
    let read = if ms { ".as_millis() as u64" } else { " as u64" };
    writeln!(out, "    {name:?} => Some(crate::limits::tuned!({name}){read}),").unwrap();
  }
  out.push_str("    _ => None,\n  }\n}\n");
  let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("limits.rs");
  std::fs::write(dest, out).unwrap();
}

/// Writes `name`'s constant: a `usize` (sizes and counts), a `Duration`
/// (times), or a `ByNode` (a value per Node line).
fn constant(out: &mut String, indent: &str, name: &str, entry: &Value, facts: &Map<String, Value>) {
  let why = entry["why"]
    .as_str()
    .unwrap_or_else(|| panic!("{TABLE}: {name} says not why"));
  writeln!(out, "{indent}#[doc = {why:?}]").unwrap();
  // Some values are the JS layer's alone (lib/limits.js reads the same table).
  writeln!(out, "{indent}#[allow(dead_code)]").unwrap();
  if let Some(lines) = entry["byNode"].as_object() {
    let pairs: Vec<String> = lines
      .iter()
      .map(|(line, value)| {
        let line: u32 = line
          .parse()
          .unwrap_or_else(|_| panic!("{TABLE}: {name}: {line} is no Node line"));
        format!("({line}, {})", number(name, value, facts))
      })
      .collect();
    writeln!(
      out,
      "{indent}pub(crate) const {name}: crate::limits::ByNode = crate::limits::ByNode(&[{}]);",
      pairs.join(", ")
    )
    .unwrap();
  } else if let Some(ms) = entry["value"].as_str().and_then(|v| v.strip_suffix(" ms")) {
    let ms: u64 = ms.parse().unwrap_or_else(|_| panic!("{TABLE}: {name}: {ms} ms"));
    writeln!(
      out,
      "{indent}pub(crate) const {name}: std::time::Duration = std::time::Duration::from_millis({ms});"
    )
    .unwrap();
  } else {
    writeln!(
      out,
      "{indent}pub(crate) const {name}: usize = {};",
      number(name, &entry["value"], facts)
    )
    .unwrap();
  }
}

/// A size or count: a number, "N B|KiB|MiB|GiB", "never" (no input reaches
/// it), or the name of a fact (its value).
fn number(name: &str, value: &Value, facts: &Map<String, Value>) -> String {
  if let Some(n) = value.as_u64() {
    return n.to_string();
  }
  let text = value
    .as_str()
    .unwrap_or_else(|| panic!("{TABLE}: {name}: {value} is no size"));
  if text == "never" {
    return "usize::MAX".into();
  }
  if let Some(fact) = facts.get(text) {
    return number(text, &fact["value"], facts);
  }
  let (n, unit) = text
    .split_once(' ')
    .unwrap_or_else(|| panic!("{TABLE}: {name}: {text}"));
  let n: u64 = n.parse().unwrap_or_else(|_| panic!("{TABLE}: {name}: {text}"));
  let scale = match unit {
    "B" => 1,
    "KiB" => 1 << 10,
    "MiB" => 1 << 20,
    "GiB" => 1 << 30,
    _ => panic!("{TABLE}: {name}: unit {unit}"),
  };
  (n * scale).to_string()
}
