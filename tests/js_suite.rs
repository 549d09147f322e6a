//! The JS suite against the addon of this very build: the test cargo-mutants
//! runs for each mutant (`scripts/cargo-mutants.js`), since most of the
//! crate's behaviour is only checked from JS, against fs. Built only with
//! `--features js-suite`.
//!
//! It installs the cdylib cargo built beside this test as the package root's
//! local build (`readfile-utf8.<platform>.node`, where lib/native.js looks
//! first), so that the suite runs as it does in a checkout, and then runs
//! `node scripts/test-js.js` on what `READFILE_UTF8_JS_SUITE` names, one per
//! line: __test__ files, and node --test options (`--test-name-pattern=…`,
//! to leave out tests that cannot meet Rust code); it fails when they fail. Since it replaces the root's build, it refuses to
//! run in a checkout (a tree with `.git`): only in cargo-mutants' scratch
//! copy. `READFILE_UTF8_JS_SUITE_NODE` is the Node to run (default `node`);
//! `READFILE_UTF8_JS_SUITE_NODE_MODULES` the checkout's node_modules, linked
//! into the copy, which cargo-mutants makes without the ignored files.

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const FILES: &str = "READFILE_UTF8_JS_SUITE";
const NODE: &str = "READFILE_UTF8_JS_SUITE_NODE";
const NODE_MODULES: &str = "READFILE_UTF8_JS_SUITE_NODE_MODULES";

/// The cdylib cargo built for this test: in `deps/`, beside the test binary,
/// or uplifted into the profile's folder above it.
fn built_cdylib() -> PathBuf {
  let name = format!("{}readfile_utf8{}", env::consts::DLL_PREFIX, env::consts::DLL_SUFFIX);
  let exe = env::current_exe().expect("the test binary's path");
  let deps = exe.parent().expect("the test binary's folder");
  [deps.join(&name), deps.join("..").join(&name)]
    .into_iter()
    .find(|p| p.is_file())
    .unwrap_or_else(|| panic!("no {name} beside {}", exe.display()))
}

fn node() -> OsString {
  env::var_os(NODE).unwrap_or_else(|| "node".into())
}

/// This platform's local build, as lib/binary-name.js names it.
fn local_build_name(root: &Path) -> String {
  let out = Command::new(node())
    .current_dir(root)
    .args([
      "-p",
      "`readfile-utf8.${require('./lib/binary-name').platforms()[0]}.node`",
    ])
    .output()
    .expect("node runs");
  assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
  String::from_utf8(out.stdout).expect("UTF-8").trim().to_owned()
}

/// The checkout's node_modules, linked into the copy unless it has its own.
fn link_node_modules(root: &Path) {
  let here = root.join("node_modules");
  if here.exists() {
    return;
  }
  let checkout = env::var_os(NODE_MODULES).unwrap_or_else(|| {
    panic!(
      "{} has no node_modules: set {NODE_MODULES} to the checkout's",
      root.display()
    )
  });
  #[cfg(unix)]
  std::os::unix::fs::symlink(&checkout, &here).expect("node_modules linked");
  #[cfg(windows)]
  std::os::windows::fs::symlink_dir(&checkout, &here).expect("node_modules linked");
}

#[test]
fn the_js_suite_passes_against_this_build() {
  let files = env::var(FILES)
    .unwrap_or_else(|_| panic!("{FILES} names no JS test files: run this through scripts/cargo-mutants.js"));
  let files: Vec<&str> = files.lines().map(str::trim).filter(|f| !f.is_empty()).collect();
  assert!(
    files.iter().any(|f| !f.starts_with('-')),
    "{FILES} names no JS test files"
  );
  let root = Path::new(env!("CARGO_MANIFEST_DIR"));
  assert!(
    !root.join(".git").exists(),
    "{} is a checkout: this test replaces its local build, so it runs only in cargo-mutants' copy",
    root.display()
  );
  link_node_modules(root);

  // Written beside, then renamed over: never a half-written addon.
  let local = root.join(local_build_name(root));
  let partial = local.with_extension("node.partial");
  fs::copy(built_cdylib(), &partial).expect("cdylib copied");
  fs::rename(&partial, &local).expect("local build installed");

  // The addon must load, or every test would run against fs alone.
  let loads = Command::new(node())
    .current_dir(root)
    .env("READFILE_UTF8_REQUIRE_NATIVE", "1")
    .env_remove("READFILE_UTF8_NATIVE_LIBRARY_PATH")
    .args(["-e", "require('.').readFileUtf8('package.json')"])
    .status()
    .expect("node runs");
  assert!(loads.success(), "the addon of this build does not load");

  // The tests choose engines and loaders themselves: an inherited choice
  // would change what they check.
  let status = Command::new(node())
    .current_dir(root)
    .env_remove("READFILE_UTF8_NATIVE_LIBRARY_PATH")
    .env_remove("READFILE_UTF8_NO_SIMD")
    .env_remove("SIMDUTF_FORCE_IMPLEMENTATION")
    .env_remove("NODE_OPTIONS")
    .arg("scripts/test-js.js")
    .args(files.iter().map(|f| {
      if f.starts_with('-') {
        PathBuf::from(f)
      } else {
        Path::new("__test__").join(f)
      }
    }))
    .status()
    .expect("node runs");
  assert!(
    status.success(),
    "the JS suite failed against this build: {}",
    files.join(" ")
  );
}
