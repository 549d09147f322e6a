//! What each step of the pipeline hands the next: a read's failure or facts
//! (`read`), the code units of the text (`transcode`), and the result of a
//! read made off the JS thread (`Outcome`), with the failure codes JS turns
//! into errors (lib/errors.js). Every step imports them from here, so that no
//! step reaches back into another for its types.

use crate::buffers;

/// The syscall that failed, so the JS layer can build fs's error (`syscall` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Syscall {
  /// open(2).
  Open = 0,
  /// Also used for a failed fstat: Node's utf8 path does not fstat, so the same
  /// fault reaches fs users as a failed read (e.g. EBADF for a bad fd).
  Read = 1,
}

/// Why a read failed.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
  /// An OS error: errno and the syscall that returned it.
  Os {
    /// The OS error number.
    errno: i32,
    /// The call that returned it.
    syscall: Syscall,
  },
  /// fs answers this call itself, with its own result or error: a failed read
  /// of a path, a path with a NUL byte, or what the portable reader cannot
  /// reproduce exactly.
  FsAnswers,
  /// A regular file of kMaxLength bytes or more, read by path: not read.
  TooLarge,
  /// A file of unknown size (a device, a FIFO, procfs) or one that grew while
  /// it was read reached `read::max_bytes()`: no string can hold it, so the
  /// read stopped there (and freed its buffer).
  TooLong,
  /// Not opened: not a regular file, and the read was of regular files only
  /// (`read::How::regular_only`, a batch's read ahead of its turn).
  NotRegular,
  /// The caller's cancel flag was set (an aborted async read, a stopped
  /// batch): the read stopped between two chunks.
  Cancelled,
}

/// What a read found out about the bytes besides their count, for the steps
/// after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadFacts {
  /// How many leading bytes are known to be ASCII: large files are read in
  /// chunks that are checked while still hot in cache, which spares
  /// `classify` a pass over cold memory.
  pub ascii_prefix: usize,
  /// Read as two halves by two threads: each half is in its own core's cache,
  /// so converting them is worth splitting the same way.
  pub in_halves: bool,
  /// Read beside other reads (a batch's threads, which fill the cores): the
  /// conversion stays on this thread too.
  pub alone: bool,
}

/// The code units of the finished string, owned, ready to hand to V8.
#[derive(Debug, PartialEq, Eq)]
pub enum Text {
  /// One-byte (Latin-1) string data.
  Latin1(Vec<u8>),
  /// Two-byte (UTF-16) string data.
  Utf16(Vec<u16>),
}

impl Text {
  /// Gives its buffer back for reuse (see `buffers::give`).
  pub(crate) fn give_back(self) {
    match self {
      Text::Latin1(v) => buffers::give(v),
      Text::Utf16(v) => buffers::give(v),
    }
  }

  /// The string's length in characters (code units), as V8 counts it.
  pub fn char_count(&self) -> usize {
    match self {
      Text::Latin1(v) => v.len(),
      Text::Utf16(v) => v.len(),
    }
  }

  /// Whether `buffers::give` would keep its buffer with the thread that gives
  /// it back (a small one).
  pub(crate) fn is_kept_locally(&self) -> bool {
    match self {
      Text::Latin1(v) => buffers::is_kept_locally(v),
      Text::Utf16(v) => buffers::is_kept_locally(v),
    }
  }

  /// The bytes its code units take (what V8 is told an external string holds).
  pub(crate) fn data_bytes(&self) -> usize {
    match self {
      Text::Latin1(v) => v.len(),
      Text::Utf16(v) => 2 * v.len(),
    }
  }
}

/// What bytes decode to: nothing new for ASCII (the bytes themselves are the
/// Latin-1 data, so the caller decides whether to give them away or copy
/// them), otherwise newly made code units.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
  /// Every byte < 0x80: the input is its own one-byte string data.
  Ascii,
  /// Valid UTF-8, newly converted.
  Text(Text),
  /// Not valid UTF-8: UTF-16 with each maximal invalid subpart replaced by
  /// U+FFFD.
  Replaced(Vec<u16>),
}

impl Decoded {
  /// The code units, given the `bytes` that were decoded: for ASCII the bytes
  /// themselves become the string data (no copy); otherwise they go back to
  /// the buffers for the next read.
  pub fn owning(self, bytes: Vec<u8>) -> Text {
    match self {
      Decoded::Ascii => Text::Latin1(bytes),
      Decoded::Text(text) => {
        buffers::give(bytes);
        text
      }
      Decoded::Replaced(units) => {
        buffers::give(bytes);
        Text::Utf16(units)
      }
    }
  }
}

/// What a read made off the JS thread returns to it: the string's code units,
/// or a failure code (below). It is `Send`: pool threads make it.
pub enum Outcome {
  /// The finished string's code units.
  Text {
    /// The code units.
    text: Text,
    /// Invalid sequences were replaced (a fact for the plan).
    replaced: bool,
  },
  /// A failure code.
  Failure(i32),
}

/// Failure codes, returned to JS instead of a string (lib/errors.js reads them):
/// `errno * 8 + syscall` for an OS error fs cannot answer (a caller's fd that
/// failed after some of its bytes were read, see `read`), or one of these.
/// fs answers this call itself, with its own result or error (see
/// `ReadError::FsAnswers`).
pub(crate) const FS_ANSWERS: i32 = -1;
/// V8 refuses the string (longer than kMaxLength), or a read of unknown
/// length reached kMaxLength bytes (`ReadError::TooLong`).
pub(crate) const STRING_TOO_LONG: i32 = -2;
/// An async read stopped because its signal aborted (`ReadError::Cancelled`):
/// JS has already rejected with the AbortError.
pub(crate) const CANCELLED: i32 = -3;
/// A sync read by path found a regular file of kMaxLength bytes or more
/// (`ReadError::TooLarge`), not read: Node's UTF-8 path throws
/// ERR_STRING_TOO_LONG for it after reading it, its Buffer path may refuse it
/// by size, so JS says which.
pub(crate) const TOO_LARGE: i32 = -4;

/// The failure code JS decodes into fs's error (lib/errors.js). `too_large`:
/// what a regular file of kMaxLength bytes or more is to this caller.
pub(crate) fn failure_code(e: ReadError, too_large: i32) -> i32 {
  match e {
    ReadError::Os { errno, syscall } => errno * 8 + syscall as i32,
    ReadError::FsAnswers | ReadError::NotRegular => FS_ANSWERS,
    ReadError::TooLarge => too_large,
    ReadError::TooLong => STRING_TOO_LONG,
    ReadError::Cancelled => CANCELLED,
  }
}
