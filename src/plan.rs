//! The one decision of how a JS string is made: V8 decodes the bytes itself,
//! or our code units are copied into V8's heap (with the read buffer freed
//! first, or not), or they become an external string over our buffer. Every
//! string of the addon is made by the plan this module returns, and nothing
//! else decides it; `pipeline` carries the plan out, `js_string` makes the
//! string.
//!
//! Why each rule, once:
//! - An external string saves V8's copy but lives in V8's old generation,
//!   which only a full GC frees, while a copy dies in the next scavenge. So a
//!   sync call's strings are external only from `EXTERNAL_FROM_BYTES` on
//!   (before Node 26, where a larger copy needs a large-object page of its
//!   own, fresh memory each time). Strings of reads made on other threads (a
//!   batch's, async reads) are external at any size: made together, they
//!   outlive the scavenges they bring on, so their copies would be copied
//!   again into the old generation, on the one JS thread. Either way only
//!   while the JS heap is small (`EXTERNAL_HEAP_BELOW`): V8 starts a full GC
//!   for every `EXTERNAL_MEMORY_STEP` of external memory, and a full GC marks
//!   everything the heap holds.
//! - A sync call's string of half that step or more (`SYNC_FS_RULE_FROM`)
//!   follows fs's own rule (`FS_EXTERNAL_FROM_UNITS`) in every mode: two such
//!   strings start V8's marking, and a loop of them outruns it; a copy of
//!   converted text frees its read buffer first.
//! - The lean mode (`setMemoryMode('lean')`) asks for fs's peaks: a sync
//!   call's strings are external only where fs's are, replaced text is always
//!   copied (as V8's decoder makes fs's), text sure to be copied that is not
//!   ASCII goes to V8's decoder from `V8_DECODES_INVALID_FROM` on, and a copy
//!   of converted text read from a file of `LEAN_READ_FREED_FROM` or more
//!   frees its read buffer first: text, read buffer and copy at once would
//!   peak above fs's Buffer and string. Async reads and batches ignore the
//!   mode: their external strings already peak below fs.promises' copies.
//! - Large text invalid from its start goes to V8's decoder in sync calls:
//!   our UTF-16 beside V8's copy would be most of the call's peak.
//! - A sync batch's strings are copied while V8 collects none of the external
//!   strings made before it (`Look::stalled`, see `external_memory`).
//! - Under Bun and Deno every string is copied: neither frees an external
//!   string's buffer when it collects the string (Deno runs Node-API
//!   finalizers only once its event loop turns; Bun's collector does not
//!   count the buffers), so a loop's buffers would pile up.

use crate::limits::{facts, tuned};

/// Who makes the string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Caller {
  /// A sync call that read or decoded on the JS thread (readFileUtf8 and the
  /// readFileSync drop-in, decodeUtf8).
  Sync,
  /// The JS-thread end of an async read made on another thread: making a
  /// large string there stays O(1) while the heap is small.
  Async,
  /// A batch's entry, read by its readers or, in list order, by the JS thread.
  Batch,
}

/// The runtime the addon runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Runtime {
  /// Node, of this major line.
  Node(u32),
  /// Bun or Deno (through their Node-API), which free external strings late.
  Other,
}

/// What is known of a string before any fact must be looked up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ask {
  pub(crate) runtime: Runtime,
  /// The lean memory mode.
  pub(crate) lean: bool,
  pub(crate) caller: Caller,
  /// Bytes of UTF-8 the string is made of.
  pub(crate) bytes: usize,
  /// The read buffer the caller is done with once the text is converted
  /// (its length), if it is not the string's own data; `None` for ASCII read
  /// (the buffer is the text) and for the caller's bytes (decodeUtf8).
  pub(crate) read_buffer: Option<usize>,
}

/// The string's code units, once converted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Units {
  pub(crate) count: usize,
  /// Bytes of data: `count` times the unit's width.
  pub(crate) data_bytes: usize,
  /// Invalid sequences were replaced.
  pub(crate) replaced: bool,
}

/// The facts a rule may need, looked up only when it does (each costs a pass
/// over the bytes or a call into JS).
pub(crate) trait Look {
  /// The first `READ_CHUNK_BYTES` hold an error (not just a character cut at
  /// their end).
  fn starts_invalid(&mut self) -> bool;
  /// Every byte is ASCII.
  fn ascii(&mut self) -> bool;
  /// What the JS heap holds in small objects outside its young generation.
  fn heap_bytes(&mut self) -> usize;
  /// A sync batch runs while V8 collects none of the external strings made
  /// before it: its strings are copied (and counted as such).
  fn stalled(&mut self) -> bool;
}

/// How the string is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
  /// V8's own decoder makes it from the bytes (no transcoding of ours).
  V8Decodes,
  /// Our code units are copied into V8's heap.
  Copy,
  /// The read buffer is freed, then our code units are copied.
  FreeReadThenCopy,
  /// Our buffer becomes an external string's data.
  External,
}

/// A sync call's string of this many bytes or more follows fs's own rule:
/// two of them start V8's marking. Half V8's step: derived, not fitted.
pub(crate) const SYNC_FS_RULE_FROM: usize = facts::EXTERNAL_MEMORY_STEP / 2;

/// The limits a plan uses, for one Node line (`here`: the running one).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
  pub(crate) external_from_bytes: usize,
  pub(crate) external_heap_below: usize,
  pub(crate) lean_read_freed_from: usize,
  pub(crate) v8_decodes_invalid_from: usize,
  /// fs's own rule (a fact of Node's): external from this many units.
  pub(crate) fs_external_from_units: usize,
}

impl Limits {
  /// The running Node's (the calibrate suite's, in a bench build).
  pub(crate) fn here() -> Limits {
    Limits {
      external_from_bytes: tuned!(EXTERNAL_FROM_BYTES),
      external_heap_below: tuned!(EXTERNAL_HEAP_BELOW),
      lean_read_freed_from: tuned!(LEAN_READ_FREED_FROM),
      v8_decodes_invalid_from: tuned!(V8_DECODES_INVALID_FROM),
      fs_external_from_units: facts::FS_EXTERNAL_FROM_UNITS.here(),
    }
  }

  /// Node line `major`'s, as shipped.
  #[cfg(test)]
  pub(crate) fn on(major: u32) -> Limits {
    use crate::limits::*;
    Limits {
      external_from_bytes: EXTERNAL_FROM_BYTES.on(major),
      external_heap_below: EXTERNAL_HEAP_BELOW.on(major),
      lean_read_freed_from: LEAN_READ_FREED_FROM.on(major),
      v8_decodes_invalid_from: V8_DECODES_INVALID_FROM,
      fs_external_from_units: facts::FS_EXTERNAL_FROM_UNITS.on(major),
    }
  }
}

/// The plan before any transcoding: `Some(Plan::V8Decodes)` where V8's
/// decoder makes the string from the bytes, `None` where we transcode them
/// (then `after_transcoding` decides).
pub(crate) fn before_transcoding(ask: &Ask, limits: &Limits, look: &mut impl Look) -> Option<Plan> {
  let large = (limits.v8_decodes_invalid_from..facts::MAX_STRING_LENGTH).contains(&ask.bytes);
  let sure_to_be_copied = ask.lean && ask.bytes < limits.fs_external_from_units;
  (ask.caller == Caller::Sync && large && (look.starts_invalid() || sure_to_be_copied && !look.ascii()))
    .then_some(Plan::V8Decodes)
}

/// The plan for code units made of the bytes (the bytes themselves for ASCII).
pub(crate) fn after_transcoding(ask: &Ask, units: Units, limits: &Limits, look: &mut impl Look) -> Plan {
  let sync = ask.caller == Caller::Sync;
  let lean = sync && ask.lean;
  let may_be_external = ask.runtime != Runtime::Other && !(lean && units.replaced);
  let external_by_size = if !sync {
    true
  } else if ask.lean || units.data_bytes >= SYNC_FS_RULE_FROM {
    units.count >= limits.fs_external_from_units
  } else {
    units.data_bytes >= limits.external_from_bytes
  };
  if may_be_external && external_by_size && look.heap_bytes() < limits.external_heap_below && !look.stalled() {
    return Plan::External;
  }
  let free_read = ask
    .read_buffer
    .is_some_and(|read| read >= SYNC_FS_RULE_FROM || lean && read >= limits.lean_read_freed_from);
  if free_read {
    Plan::FreeReadThenCopy
  } else {
    Plan::Copy
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  const KIB: usize = 1 << 10;
  const MIB: usize = 1 << 20;

  /// Facts given as values, counting the ones asked for.
  #[derive(Default)]
  struct Given {
    starts_invalid: bool,
    ascii: bool,
    heap: usize,
    stalled: bool,
    asked_heap: bool,
  }

  impl Look for Given {
    fn starts_invalid(&mut self) -> bool {
      self.starts_invalid
    }
    fn ascii(&mut self) -> bool {
      self.ascii
    }
    fn heap_bytes(&mut self) -> usize {
      self.asked_heap = true;
      self.heap
    }
    fn stalled(&mut self) -> bool {
      self.stalled
    }
  }

  fn ask(line: u32, lean: bool, caller: Caller, bytes: usize, read_buffer: Option<usize>) -> Ask {
    Ask {
      runtime: Runtime::Node(line),
      lean,
      caller,
      bytes,
      read_buffer,
    }
  }

  fn latin1(count: usize) -> Units {
    Units {
      count,
      data_bytes: count,
      replaced: false,
    }
  }

  fn utf16(count: usize, replaced: bool) -> Units {
    Units {
      count,
      data_bytes: 2 * count,
      replaced,
    }
  }

  use Caller::*;
  use Plan::*;

  #[test]
  fn strings_are_external_from_the_size_of_their_node_line_on_and_copied_below() {
    // (line, caller, bytes of Latin-1 data, plan)
    let table = [
      (20, Sync, 128 * KIB - 1, Copy),
      (20, Sync, 128 * KIB, External),
      (24, Sync, 128 * KIB, External),
      (26, Sync, 128 * KIB, Copy),
      (26, Sync, 512 * KIB - 1, Copy),
      (26, Sync, 512 * KIB, External),
    ];
    for (line, caller, n, plan) in table {
      let got = after_transcoding(
        &ask(line, false, caller, n, None),
        latin1(n),
        &Limits::on(line),
        &mut Given::default(),
      );
      assert_eq!(got, plan, "Node {line}, {caller:?}, {n} bytes");
    }
  }

  #[test]
  fn strings_of_reads_made_on_other_threads_are_external_at_any_size() {
    for line in [20, 24, 26] {
      for caller in [Async, Batch] {
        for n in [1, 4 * KIB, 128 * KIB - 1, 512 * KIB - 1, 4 * MIB] {
          let got = after_transcoding(
            &ask(line, false, caller, n, None),
            latin1(n),
            &Limits::on(line),
            &mut Given::default(),
          );
          assert_eq!(got, External, "Node {line}, {caller:?}, {n} bytes");
        }
      }
    }
  }

  #[test]
  fn a_large_heap_or_a_stalled_gc_or_another_runtime_copies_what_would_be_external() {
    let n = 4 * MIB;
    for line in [20, 26] {
      let limits = Limits::on(line);
      let plan = |runtime, heap, stalled| {
        let mut given = Given {
          heap,
          stalled,
          ..Given::default()
        };
        let ask = Ask {
          runtime,
          ..ask(line, false, Batch, n, None)
        };
        after_transcoding(&ask, latin1(n), &limits, &mut given)
      };
      assert_eq!(plan(Runtime::Node(line), 0, false), External);
      assert_eq!(
        plan(Runtime::Node(line), limits.external_heap_below - 1, false),
        External
      );
      assert_eq!(plan(Runtime::Node(line), limits.external_heap_below, false), Copy);
      assert_eq!(plan(Runtime::Node(line), 0, true), Copy);
      assert_eq!(plan(Runtime::Other, 0, false), Copy);
    }
  }

  #[test]
  fn the_heap_is_looked_at_only_for_a_string_large_enough_to_be_external() {
    let mut given = Given::default();
    after_transcoding(
      &ask(20, false, Sync, 1000, None),
      latin1(1000),
      &Limits::on(20),
      &mut given,
    );
    assert!(!given.asked_heap);
    after_transcoding(
      &ask(20, false, Sync, MIB, None),
      latin1(MIB),
      &Limits::on(20),
      &mut given,
    );
    assert!(given.asked_heap);
  }

  #[test]
  fn huge_sync_strings_follow_fs_rule_and_free_their_read_buffer_before_a_copy() {
    let huge = SYNC_FS_RULE_FROM;
    // Before Node 26 fs's strings are never external; on 26 from EXTERN_APEX units.
    for (line, units, plan) in [
      (20, utf16(huge / 2, false), FreeReadThenCopy),
      (24, latin1(huge), FreeReadThenCopy),
      (26, utf16(huge / 2, false), External),
      (26, latin1(huge), External),
    ] {
      let got = after_transcoding(
        &ask(line, false, Sync, huge, Some(huge + 1)),
        units,
        &Limits::on(line),
        &mut Given::default(),
      );
      assert_eq!(got, plan, "Node {line}, {units:?}");
    }
    // Async reads and batches keep their size rule.
    let got = after_transcoding(
      &ask(20, false, Async, huge, None),
      latin1(huge),
      &Limits::on(20),
      &mut Given::default(),
    );
    assert_eq!(got, External);
    // A batch's read on the JS thread frees a huge read buffer before a copy too.
    let mut stalled = Given {
      stalled: true,
      ..Given::default()
    };
    let got = after_transcoding(
      &ask(20, false, Batch, huge, Some(huge + 1)),
      latin1(huge),
      &Limits::on(20),
      &mut stalled,
    );
    assert_eq!(got, FreeReadThenCopy);
  }

  #[test]
  fn the_lean_mode_makes_sync_strings_as_fs_does_and_leaves_async_reads_and_batches_alone() {
    for line in [20, 26] {
      let limits = Limits::on(line);
      let apex = limits.fs_external_from_units;
      let lean = |caller, units: Units, read| {
        after_transcoding(
          &ask(line, true, caller, units.data_bytes, read),
          units,
          &limits,
          &mut Given::default(),
        )
      };
      // Sync: external only where fs's are.
      assert_eq!(lean(Sync, latin1(MIB / 2), None), Copy, "Node {line}");
      if apex != usize::MAX {
        assert_eq!(lean(Sync, latin1(apex), None), External, "Node {line}");
        assert_eq!(lean(Sync, utf16(apex, false), None), External, "Node {line}");
        // Replaced text is copied, as V8's decoder makes fs's.
        assert_eq!(lean(Sync, utf16(apex, true), None), Copy, "Node {line}");
      }
      // A large read buffer goes before a copy of converted text.
      let read = limits.lean_read_freed_from;
      assert_eq!(
        lean(Sync, utf16(1000, false), Some(read)),
        FreeReadThenCopy,
        "Node {line}"
      );
      assert_eq!(lean(Sync, utf16(1000, false), Some(read - 1)), Copy, "Node {line}");
      // Async reads and batches ignore the mode.
      assert_eq!(lean(Async, latin1(MIB), None), External, "Node {line}");
      assert_eq!(lean(Batch, utf16(MIB, true), Some(read)), External, "Node {line}");
    }
  }

  #[test]
  fn v8_decodes_large_sync_text_invalid_from_its_start_and_in_the_lean_mode_text_sure_to_be_copied() {
    let limits = Limits::on(20);
    let from = limits.v8_decodes_invalid_from;
    let decide = |lean, caller, bytes, starts_invalid, ascii| {
      let mut given = Given {
        starts_invalid,
        ascii,
        ..Given::default()
      };
      before_transcoding(&ask(20, lean, caller, bytes, Some(bytes + 1)), &limits, &mut given)
    };
    assert_eq!(decide(false, Sync, from, true, false), Some(V8Decodes));
    assert_eq!(decide(false, Sync, from - 1, true, false), None);
    assert_eq!(decide(false, Sync, from, false, false), None);
    assert_eq!(
      decide(false, Sync, facts::MAX_STRING_LENGTH, true, false),
      None,
      "V8 would refuse it"
    );
    assert_eq!(decide(false, Async, from, true, false), None);
    assert_eq!(decide(false, Batch, from, true, false), None);
    assert_eq!(decide(true, Sync, from, false, false), Some(V8Decodes));
    assert_eq!(decide(true, Sync, from, false, true), None, "ASCII is copied as it is");
    // On Node 26 fs's strings of that many units are external: not sure to be copied.
    let limits = Limits::on(26);
    let mut given = Given::default();
    let big = limits.fs_external_from_units.max(from);
    assert_eq!(
      before_transcoding(&ask(26, true, Sync, big, None), &limits, &mut given),
      None
    );
  }
}
