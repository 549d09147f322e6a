//! What V8 fixes, on 64-bit Node 20 to 26: not thresholds of ours, but the
//! bounds our choices answer to.

/// `String::kMaxLength`: 2^29 − 24 characters. Node's readFileSync(p, 'utf8')
/// refuses a file of this many *bytes* or more, whatever it decodes to, so no
/// byte past it is worth reading.
pub(crate) const MAX_STRING_LENGTH: usize = 0x1fff_ffe8;

/// The growth of external memory past its level at the last full GC from
/// which V8 starts marking (`Heap::external_memory_soft_limit`). Only a full
/// GC frees an external string: a sync batch's strings are copied once this
/// much of them was made with none collected (`external_memory::copies_instead`),
/// which bounds the dead ones a loop of batches holds beyond fs's.
pub(crate) const EXTERNAL_MEMORY_STEP: u64 = 64 << 20;

/// `kMaxRegularHeapObjectSize`: a string of more bytes than this is not copied
/// into V8's regular pages, which its scavenges reuse, but into a large-object
/// page of its own, freshly mapped (and faulted in) for each copy.
pub(crate) const MAX_REGULAR_OBJECT_BYTES: usize = 128 << 10;
