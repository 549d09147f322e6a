'use strict'
// npm run mutants [-- --node PATH] [--only id,id] [--all-tests | --fast-tier] [--list] [--keep] [--target-dir DIR]
//
// The mutation check: each mutant below is a small, meaningful bug, written as
// find/replace patches of the sources. For each one, a scratch copy of the
// checkout (tracked and untracked files, not ignored ones; never the checkout
// itself) is patched, built (npm run build) and run through the test files
// named for it; a mutant is killed when those tests fail. Every patch's text
// must occur exactly once in its file, so a mutant whose code has changed stops
// the run instead of silently testing nothing. The unpatched copy is built and
// its tests run first: they must pass, or no result would mean anything.
// Prints a table; the exit status is non-zero unless every mutant is killed.
//
// Needs the checkout's node_modules (npm ci) and Rust. --node picks the Node
// binary the tests run on (default: this one); builds share a cargo target dir
// (default under READFILE_UTF8_CACHE or ~/.cache/readfile-utf8) so that each
// build after the first recompiles only this crate.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { parseArgs } = require('node:util')

const ROOT = path.join(__dirname, '..')

/**
 * The mutants: one or more per area. `tests` are the __test__ files that must
 * kill it (the part of the suite that covers the area, to keep a run short):
 * `cargo:NAME` is the Rust test target NAME, `bun:FILE` / `deno:FILE` the
 * __test__ file FILE under that runtime (scripts/test-runtime.js).
 * `beforeNode: N`: the mutant changes what only Node lines before N use, so
 * it is not run on N or later.
 */
const MUTANTS = [
  {
    id: 'utf8-replacement',
    area: 'UTF-8 replacement',
    bug: 'a sequence cut short by the end of the input is replaced byte by byte (one U+FFFD each) instead of with one U+FFFD',
    patches: [
      {
        file: 'src/transcode/lossy.rs',
        find: 'Err(e) if e.valid_up_to() == 0 => Some(e.error_len().unwrap_or(window.len())),',
        replace: 'Err(e) if e.valid_up_to() == 0 => Some(e.error_len().unwrap_or(1)),',
      },
    ],
    tests: ['differential.test.js', 'differential-4mib.test.js'],
  },
  {
    id: 'dense-errors',
    area: 'UTF-8 replacement, dense errors',
    bug: 'where errors are dense, an overlong 3-byte sequence (E0 80..9F) decodes as a character instead of U+FFFDs',
    patches: [
      {
        file: 'src/transcode/dense.rs',
        find: '      0xE0 => lead(3, 0xA0, 0xBF),',
        replace: '      0xE0 => lead(3, 0x80, 0xBF),',
      },
    ],
    tests: ['differential.test.js', 'differential-4mib.test.js'],
  },
  {
    id: 'latin1-path',
    area: 'Latin-1 path',
    bug: "Latin-1 text is converted from the end of the read's known-ASCII prefix on, which is lost",
    patches: [
      {
        file: 'src/transcode/mod.rs',
        find: '  if let Some(latin1) = halves::convert(bytes, &halves::LATIN1, split) {',
        replace: '  if let Some(latin1) = halves::convert(&bytes[facts.ascii_prefix.min(bytes.len())..], &halves::LATIN1, split) {',
      },
    ],
    tests: ['differential.test.js', 'differential-4mib.test.js'],
  },
  {
    id: 'utf16-path',
    area: 'UTF-16 path',
    bug: "when the left half of a two-thread decode holds an error, the right half's units are not moved after the left half's",
    patches: [
      {
        file: 'src/transcode/halves.rs',
        find: '    room.copy_within(split..split + right_units, left_units);\n',
        replace: '',
      },
    ],
    tests: ['differential.test.js', 'differential-4mib.test.js'],
  },
  {
    id: 'fallback-eof',
    area: 'fallback engine',
    bug: 'the pure-Rust Latin-1 conversion drops a ÿ (C3 BF) at the very end of the text, taking 0xFF for padding',
    patches: [
      {
        file: 'src/transcode/mod.rs',
        find: '  out.truncate(written);\n  out\n}\n\n/// The fallback engine\'s UTF-16',
        replace: '  out.truncate(written);\n  if out.last() == Some(&0xff) {\n    out.pop();\n  }\n  out\n}\n\n/// The fallback engine\'s UTF-16',
      },
    ],
    tests: ['engines.slow.js'],
  },
  {
    id: 'fallback-latin1-range',
    area: 'fallback engine',
    bug: 'the pure-Rust engine takes lead byte C4 (U+0100..U+013F) for Latin-1 range and converts such text to Latin-1 lossily',
    patches: [
      { file: 'src/classify.rs', find: '  } else if max_byte_at_most(rest, 0xC3) {', replace: '  } else if max_byte_at_most(rest, 0xC4) {' },
    ],
    tests: ['engines.slow.js'],
  },
  {
    id: 'engine-self-test',
    area: 'fallback engine',
    bug: 'simdutf is used without its self-test, also when SIMDUTF_FORCE_IMPLEMENTATION has broken it',
    patches: [
      {
        file: 'src/transcode/simd.rs',
        find: 'forced_kernel_runs_here(forced.as_deref(), cpu_has) && self_test()',
        replace: 'forced_kernel_runs_here(forced.as_deref(), cpu_has) && (self_test() || true)',
      },
    ],
    tests: ['engines.slow.js'],
  },
  {
    id: 'direct-answers-at-load',
    area: 'fs answers',
    bug: 'a failed native read is answered by the fs function of when the package loaded, not fs as it stands (a layer installed later is bypassed)',
    patches: [{ file: 'lib/answers.js', find: "  return [ours[name].has(fn) ? insteadOfOurs(name) : fn, self]", replace: '  return [atLoad[name], self]' }],
    tests: ['layers.test.js'],
  },
  {
    id: 'hook-asks-fs-as-it-stands',
    area: 'fs answers',
    bug: 'the register hook answers with fs as it stands, which a layer installed after it calls back: endless recursion',
    patches: [{ file: 'lib/answers.js', find: '  return [insteadOfOurs(name), current(name)[1]]', replace: '  return asItStands(name)' }],
    tests: ['layers.test.js'],
  },
  {
    id: 'flags-sa+',
    area: 'flags',
    bug: "'sa+' is opened without O_CREAT: a missing file is not created",
    patches: [
      {
        file: 'lib/options.js',
        find: "['sa+', O_APPEND | O_CREAT | O_RDWR | O_SYNC],",
        replace: "['sa+', O_APPEND | O_RDWR | O_SYNC],",
      },
    ],
    tests: ['flags.test.js'],
  },
  {
    id: 'async-main-thread',
    area: 'async off-thread',
    bug: 'readFileUtf8Async and the async drop-ins read and decode on the main thread (with the sync reader)',
    patches: [
      {
        file: 'lib/pool.js',
        find: '  if (asked.length === 0) queueMicrotask(submit)\n  if (asked.push(read) === BATCH_RUN) submit()\n',
        replace:
          "  const { arg, flags } = read\n  const value = typeof arg === 'string' ? native.readPath(arg, flags) : typeof arg === 'number' ? native.readFd(arg) : native.readPathBytes(arg, flags)\n  queueMicrotask(() => read.settled(value))\n",
      },
    ],
    tests: ['async.test.js'],
  },
  {
    id: 'async-decode-main-thread',
    area: 'async off-thread',
    bug: 'async reads read on the pool\'s threads but decode on the main thread (when their results are taken)',
    patches: [
      {
        file: 'src/pipeline.rs',
        find: '      let decoded = transcode::decode(&buf, facts);\n      let replaced = matches!(decoded, Decoded::Replaced(_));\n      Outcome::Text {\n        text: decoded.owning(buf),\n        replaced,\n      }',
        replace: '      let _ = facts;\n      Outcome::Text {\n        text: Text::Latin1(buf),\n        replaced: false,\n      }',
      },
      {
        file: 'src/exports/pool/mod.rs',
        find: '    let value = unsafe { pipeline::outcome_value(env, outcome, caller, None::<&mut Vec<Text>>) }?;',
        replace:
          '    let outcome = match outcome {\n      crate::outcome::Outcome::Text { text: Text::Latin1(bytes), .. } => {\n        let replaced = matches!(crate::transcode::decode(&bytes, Default::default()), crate::outcome::Decoded::Replaced(_));\n        crate::outcome::Outcome::Text { text: crate::transcode::decode(&bytes, Default::default()).owning(bytes), replaced }\n      }\n      other => other,\n    };\n    let value = unsafe { pipeline::outcome_value(env, outcome, caller, None::<&mut Vec<Text>>) }?;',
      },
    ],
    tests: ['async.test.js'],
  },
  {
    id: 'external-memory',
    area: 'external-memory accounting',
    bug: "V8 is never told of the external strings' memory (napi_adjust_external_memory not called)",
    patches: [
      {
        file: 'src/external_memory.rs',
        find: 'fn adjust(env: sys::napi_env, change: i64) {\n',
        replace: 'fn adjust(env: sys::napi_env, change: i64) {\n  if change != i64::MIN {\n    return;\n  }\n',
      },
    ],
    tests: ['memory.slow.js'],
  },
  {
    id: 'batch-external-memory',
    area: 'external-memory accounting',
    bug: "a sync batch's strings are never reported to V8: the sum it owes is dropped instead",
    patches: [
      {
        file: 'src/external_memory.rs',
        find: '  if sum != 0 {\n    adjust(env, sum);\n  }\n',
        replace: '  let _ = sum;\n',
      },
    ],
    tests: ['memory.slow.js'],
  },
  {
    id: 'external-below-large-object',
    area: 'copy or external',
    bug: "before Node 26, strings that fit V8's regular pages are made external (the old 64 KiB), where a copy is cheaper",
    beforeNode: 26,
    patches: [
      {
        file: 'lib/limits.json',
        find: '"MAX_REGULAR_OBJECT_BYTES": { "value": "128 KiB",',
        replace: '"MAX_REGULAR_OBJECT_BYTES": { "value": "64 KiB",',
      },
    ],
    tests: ['memory-mode.test.js'],
  },
  {
    id: 'stall-counts-own-batch',
    area: 'external-memory accounting',
    bug: "a sync batch's own strings count as a stalled GC: a batch larger than V8's step copies its last strings",
    patches: [
      {
        file: 'src/external_memory.rs',
        find: '  let before = since.saturating_sub(own);\n',
        replace: '  let before = since.max(own);\n',
      },
    ],
    tests: ['memory.slow.js'],
  },
  {
    id: 'stall-never',
    area: 'external-memory accounting',
    bug: 'a sync batch never copies, however many strings V8 left uncollected before it',
    patches: [
      {
        file: 'src/external_memory.rs',
        find: '  if before < STEP {\n',
        replace: '  if before < u64::MAX {\n',
      },
    ],
    tests: ['memory.slow.js'],
  },
  {
    id: 'spares-kept-full',
    area: 'buffer reuse',
    bug: "a small buffer given back keeps its contents: a batch's reader, handed it as a spare, converts its next file after them",
    patches: [
      {
        file: 'src/buffers/mod.rs',
        find: '  } else if is_kept_locally(&buf) {\n    buf.clear();\n',
        replace: '  } else if is_kept_locally(&buf) {\n',
      },
    ],
    tests: ['batch.test.js'],
  },
  {
    id: 'fd-reads',
    area: 'fd reads',
    bug: "a caller's fd is read in halves with pread(2) from offset 0, ignoring its position",
    patches: [
      {
        file: 'src/read/syscalls.rs',
        find: 'read_open_fd(fd, false, usize::MAX, cancel, buf)',
        replace: 'read_open_fd(fd, true, usize::MAX, cancel, buf)',
      },
    ],
    tests: ['special-files.test.js'],
  },
  {
    id: 'open-mode',
    area: 'open(2) wrapper',
    bug: 'files a read creates get mode 0o644 (umask 022 hides it), not 0o666 as fs gives',
    patches: [{ file: 'src/read/syscall.rs', find: '      0o666 as c_long,', replace: '      0o644 as c_long,' }],
    tests: ['side-effects.test.js'],
  },
  {
    id: 'open-cloexec',
    area: 'open(2) wrapper',
    bug: 'our fds are opened without O_CLOEXEC: a child spawned during a read inherits them',
    patches: [{ file: 'src/read/syscall.rs', find: '      (flags | libc::O_CLOEXEC) as c_long,', replace: '      flags as c_long,' }],
    tests: ['side-effects.test.js'],
  },
  {
    id: 'open-eintr',
    area: 'open(2) wrapper',
    bug: 'an open(2) interrupted by a signal (a FIFO waiting for its writer) fails with EINTR instead of being retried',
    patches: [{ file: 'src/read/syscalls.rs', find: '      Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,\n', replace: '' }],
    tests: ['cargo:eintr'],
  },
  {
    id: 'batch-past-failure',
    area: 'batch side effects',
    bug: 'with a flag that can create or truncate, readers open entries past the first failure (a loop never reaches them)',
    patches: [{ file: 'lib/batch.js', find: '  if ((flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) !== 0) return 0', replace: '  if ((flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) !== 0) return 2' }],
    tests: ['side-effects.test.js'],
  },
  {
    id: 'batch-fifo-ahead',
    area: 'batch side effects',
    bug: 'readers ahead of the first failure open every entry, a FIFO too, and the call waits for them',
    patches: [{ file: 'lib/batch.js', find: '  return returnErrors ? 2 : 1\n', replace: '  return 2\n' }],
    tests: ['side-effects.test.js'],
  },
  {
    id: 'batch-fd-mid-list',
    area: 'batch control flow',
    bug: 'a sync batch ends its array at an fd it read in the middle of the list',
    patches: [{ file: 'lib/batch.js', find: '      out[i] = value\n    }\n  } finally {', replace: '      out[i] = value\n      if (args[i] === null) break\n    }\n  } finally {' }],
    tests: ['side-effects.test.js'],
  },
  {
    id: 'batch-extra-reader',
    area: 'batch control flow',
    bug: 'a sync batch starts one reader thread more than its concurrency allows (one with concurrency 1)',
    patches: [{ file: 'src/exports/batch/mod.rs', find: '    _ => (concurrency.clamp(1, max_threads()) as usize - 1)', replace: '    _ => (concurrency.clamp(1, max_threads()) as usize)' }],
    tests: ['side-effects.test.js'],
  },
  {
    id: 'batch-abort-js-side',
    area: 'batch control flow',
    bug: 'an abort while the entries left to fs are read is not seen: the async batch resolves',
    patches: [
      { file: 'lib/batch.js', find: '    if (o.signal?.aborted) throw abortError(o.signal)\n    if (typeof value', replace: '    if (typeof value' },
      { file: 'lib/batch.js', find: '  // As fs.promises: an abort during the reads wins over their results.\n  if (o.signal?.aborted) throw abortError(o.signal)\n', replace: '' },
    ],
    tests: ['side-effects.test.js'],
  },
  {
    id: 'batch-cancel-noop',
    area: 'batch control flow',
    bug: "a sync batch that throws never stops its readers: they read ahead and wait until a GC collects the batch's handle",
    patches: [{ file: 'src/exports/batch/mod.rs', find: '  handle.0.end(false);\n}', replace: '  let _ = handle;\n}' }],
    tests: ['lifetimes.test.js'],
  },
  {
    id: 'batch-proxy',
    area: 'batch arguments',
    bug: 'a Proxy over an array goes to the native side as it is, which cannot read its length',
    patches: [{ file: 'lib/batch.js', find: '  let args = isProxy(paths) ? Array.prototype.slice.call(paths) : null', replace: '  let args = null' }],
    tests: ['batch.test.js'],
  },
  {
    id: 'esm-unregister',
    area: 'lifecycles',
    bug: "unregister() leaves node:fs's named ESM exports pointing at the hooks",
    patches: [{ file: 'lib/register.js', find: '  replaced = null\n  syncBuiltinESMExports()', replace: '  replaced = null' }],
    tests: ['register.test.js'],
  },
  {
    id: 'esm-exports',
    area: 'lifecycles',
    bug: 'the ESM entry leaves out an export of the CommonJS one (setMemoryMode)',
    patches: [{ file: 'index.mjs', find: ', engine, setMemoryMode } = cjs', replace: ', engine } = cjs' }],
    tests: ['api.test.js'],
  },
  {
    id: 'memory-mode-worker',
    area: 'lifecycles',
    bug: 'a Worker loading the package applies READFILE_UTF8_MEMORY_MODE again, undoing the mode the main thread set',
    patches: [{ file: 'index.js', find: "if (modeFromEnv && require('node:worker_threads').isMainThread) {", replace: 'if (modeFromEnv) {' }],
    tests: ['memory-mode.test.js'],
  },
  {
    id: 'routes-nearest',
    area: 'per-Node routes',
    bug: "an unmeasured Node line (21, 23) gets the newest measured line's routes, not the nearest",
    patches: [{ file: 'lib/limits.js', find: '    .sort((a, b) => Math.abs(a - major) - Math.abs(b - major) || b - a)[0]', replace: '    .sort((a, b) => (a === major ? -1 : b === major ? 1 : b - a))[0]' }],
    tests: ['decode-routes.test.js'],
  },
  {
    id: 'shared-input',
    area: 'decodeUtf8',
    bug: 'shared memory goes to the native decoder as it is, where another thread may change it between two passes',
    patches: [{ file: 'lib/decode.js', find: '  if (isSharedArrayBuffer(bytes.buffer)) return', replace: '  if (isSharedArrayBuffer(bytes.buffer) && false) return' }],
    tests: ['decode.test.js'],
  },
  {
    id: 'kmaxlength',
    area: 'kMaxLength',
    bug: 'reads stop one byte past kMaxLength: an input of exactly kMaxLength bytes is read into a string, where fs throws ERR_STRING_TOO_LONG',
    patches: [{ file: 'src/read/mod.rs', find: '.map_or(MAX_STRING_LENGTH, |lower|', replace: '.map_or(MAX_STRING_LENGTH + 1, |lower|' }],
    tests: ['errors.test.js'],
  },
  {
    id: 'endless-input',
    area: 'kMaxLength',
    bug: 'a read of unknown length (/dev/zero, an endless FIFO) never stops at kMaxLength bytes',
    patches: [{ file: 'src/read/syscalls.rs', find: '    if buf.len() >= max {\n', replace: '    if buf.len() >= max && max == 0 {\n' }],
    tests: ['limits.test.js'],
  },
  {
    id: 'abort-cancel',
    area: 'abort',
    bug: 'an aborted read rejects but the native read goes on to its end',
    patches: [{ file: 'src/read/mod.rs', find: '  cancel.load(Ordering::Relaxed)\n', replace: '  cancel.load(Ordering::Relaxed) && false\n' }],
    tests: ['limits.test.js'],
  },
  {
    id: 'abort-waits',
    area: 'abort',
    bug: 'an aborted read rejects only when the native read ends, not at the abort',
    patches: [{ file: 'lib/async.js', find: '    this.aborted = true\n    this.stop()\n    this.fail(abortError(this.signal))\n', replace: '    this.stop()\n' }],
    tests: ['limits.test.js'],
  },
  {
    id: 'abort-settles-too',
    area: 'abort',
    bug: "an aborted fs.readFile drop-in's read also settles when the native read ends: its callback runs twice",
    patches: [{ file: 'lib/async.js', find: '    if (!this.aborted) this.done(result)\n', replace: '    this.done(result)\n' }],
    tests: ['async.test.js', 'limits.test.js', 'concurrent-reads.test.js'],
  },
  // ---- Round of issue 60 (behaviour): bugs in code written since 2026-12-05
  // that a user would notice, one or more per kind the suite did not see:
  // runtime routing, the loader, lifecycles of the public API, async batch
  // control flow, lifetimes of threads and memory. `bun:FILE` / `deno:FILE`
  // tests run under that runtime (scripts/test-runtime.js).
  {
    id: 'bun-single-reads-native',
    area: 'runtime routing',
    bug: "under Bun, single reads and decodeUtf8 go through Node-API instead of Bun's own fs and Buffer (slower than Bun's, README)",
    patches: [{ file: 'lib/native.js', find: '  module.exports = process.versions.bun === undefined ? result.addon : { ...result.addon, ...runtimeReads() }', replace: '  module.exports = result.addon' }],
    tests: ['bun:runtime-routing.test.js'],
  },
  {
    id: 'bun-batches-fs',
    area: 'runtime routing',
    bug: "under Bun, batches are handed to Bun's fs one file at a time, as without an addon (a fallback for no reason)",
    patches: [
      {
        file: 'lib/native.js',
        find: "'readFd', 'poolReadEach', 'decodeUtf8']",
        replace: "'readFd', 'poolReadEach', 'decodeUtf8', 'readFilesOpen', 'poolReadAll']",
      },
    ],
    tests: ['bun:runtime-routing.test.js'],
  },
  {
    id: 'deno-strings-external',
    area: 'runtime routing',
    bug: "under Deno, large strings stay external: a loop of large sync reads piles up their buffers (Deno frees them only when its event loop turns)",
    patches: [
      {
        file: 'lib/native.js',
        find: '  if (process.versions.deno !== undefined || process.versions.bun !== undefined) result.addon.setOtherRuntime()',
        replace: '  if (process.versions.bun !== undefined) result.addon.setOtherRuntime()',
      },
    ],
    tests: ['deno:runtimes/loop-peaks.test.js'],
  },
  {
    id: 'bun-strings-external',
    area: 'runtime routing',
    bug: "under Bun, batches' large strings stay external: a loop of batches piles up buffers Bun frees long after it collects the strings",
    patches: [
      {
        file: 'lib/native.js',
        find: '  if (process.versions.deno !== undefined || process.versions.bun !== undefined) result.addon.setOtherRuntime()',
        replace: '  if (process.versions.deno !== undefined) result.addon.setOtherRuntime()',
      },
    ],
    tests: ['bun:runtimes/loop-peaks.test.js'],
  },
  {
    id: 'loader-libc-match',
    area: 'loader',
    bug: "ldd is taken for musl's when it names a libc, as glibc's does: a glibc Linux asks for the -musl package and falls back to fs",
    patches: [{ file: 'lib/binary-name.js', find: "fs.readFileSync('/usr/bin/ldd', 'latin1').includes('musl')", replace: "fs.readFileSync('/usr/bin/ldd', 'latin1').includes('libc')" }],
    tests: ['loader-choice.test.js'],
  },
  {
    id: 'loader-no-ldd-musl',
    area: 'loader',
    bug: 'a Linux without /usr/bin/ldd (a distroless glibc image) is taken for musl: it asks for the -musl package and falls back to fs',
    patches: [
      {
        file: 'lib/binary-name.js',
        find: '    const header = process.report?.getReport?.()?.header\n    return header !== undefined && !header.glibcVersionRuntime',
        replace: '    return true',
      },
    ],
    tests: ['loader-choice.test.js'],
  },
  {
    id: 'loader-bundle-root',
    area: 'loader',
    bug: "a bundle looks for the platform's .node in the folder above it, not beside it: the README's 'put the .node beside the bundle' falls back to fs",
    patches: [{ file: 'lib/binary-name.js', find: "const ROOT = BUNDLED ? __dirname : path.join(__dirname, '..')", replace: "const ROOT = path.join(__dirname, '..')" }],
    tests: ['loader-choice.test.js'],
  },
  {
    id: 'loader-version-major',
    area: 'loader',
    bug: "a platform package of another version with the same major (0.0.1 beside 0.1.0) is loaded: a binary built for other JS",
    patches: [{ file: 'lib/native.js', find: '    if (installed.version !== version) {', replace: "    if (installed.version.split('.')[0] !== version.split('.')[0]) {" }],
    tests: ['loader-choice.test.js'],
  },
  {
    id: 'hook-over-hand-assigned',
    area: 'lifecycles',
    bug: 'register() over drop-ins a user assigned onto fs takes them for what it replaced: every call fs must answer recurses until the stack overflows',
    patches: [
      {
        file: 'lib/answers.js',
        find: '  replaced = Object.fromEntries(NAMES.map((name) => [name, ours[name].has(functions[name]) ? atLoad[name] : functions[name]]))',
        replace: '  replaced = { ...functions }',
      },
    ],
    tests: ['lifecycles.test.js'],
  },
  {
    id: 'hand-assigned-recursion',
    area: 'lifecycles',
    bug: 'with the drop-ins assigned onto fs by hand (no hook), fs as it stands is ours: every call fs must answer calls ours again, endlessly',
    patches: [{ file: 'lib/answers.js', find: '  return [ours[name].has(fn) ? insteadOfOurs(name) : fn, self]', replace: '  return [fn, self]' }],
    tests: ['lifecycles.test.js'],
  },
  {
    id: 'register-again-replaces-hooks',
    area: 'lifecycles',
    bug: 'register() called while registered records the hooks as what it replaced: unregister() then leaves them installed',
    patches: [{ file: 'lib/register.js', find: '  if (replaced === null) {\n    replaced = {', replace: '  {\n    replaced = {' }],
    tests: ['lifecycles.test.js'],
  },
  {
    id: 'unregister-keeps-replaced',
    area: 'lifecycles',
    bug: "unregister() keeps what register() replaced: a layer installed after it is bypassed by the next register(), and unregister() then removes the layer",
    patches: [{ file: 'lib/register.js', find: '  fs.promises.readFile = replaced.promisesReadFile\n  replaced = null\n', replace: '  fs.promises.readFile = replaced.promisesReadFile\n' }],
    tests: ['lifecycles.test.js'],
  },
  {
    id: 'batch-js-side-unsignalled',
    area: 'batch control flow',
    bug: "the entries an async batch reads on the JS side (fds, forms fs judges) are read without its signal: an abort waits for them (forever, on a silent pipe)",
    patches: [{ file: 'lib/batch.js', find: "  const perFile = { encoding: 'utf8', flag: o.flag, signal: o.signal }", replace: "  const perFile = { encoding: 'utf8', flag: o.flag }" }],
    tests: ['batch-flow.test.js'],
  },
  {
    id: 'batch-listener-kept',
    area: 'batch control flow',
    bug: "a settled async batch leaves its abort listener on the signal: a long-lived signal keeps every batch's strings alive",
    patches: [{ file: 'lib/batch.js', find: '      if (listening !== null) offAbort(o.signal, listening)\n', replace: '' }],
    tests: ['batch-flow.test.js'],
  },
  {
    id: 'batch-keeps-loop',
    area: 'batch control flow',
    bug: "a settled async batch keeps its wake-up function referenced: the process never exits",
    patches: [
      {
        file: 'src/exports/pool/mod.rs',
        find: '    st.in_flight -= done.len();\n    if st.in_flight == 0 {\n',
        replace: '    st.in_flight -= done.len();\n    if st.in_flight == usize::MAX {\n',
      },
    ],
    tests: ['batch-flow.test.js'],
  },
  {
    id: 'pool-holds-loop',
    area: 'async control flow',
    bug: 'the pool hands the JS thread every result ready at once: while readers stay ahead, one turn of the loop makes them all, timers and I/O waiting',
    patches: [
      {
        file: 'src/exports/pool/mod.rs',
        find: '    let run = st.done.len().min(tuned!(BATCH_RUN));\n',
        replace: '    let run = st.done.len();\n',
      },
    ],
    tests: ['concurrent-reads.test.js'],
  },
  {
    id: 'path-read-as-fd',
    area: 'runtime routing',
    bug: "a single async read's path is taken for an fd where the runtime's napi_get_value_int32 gives 0 for a string (Deno): it reads stdin",
    patches: [
      {
        file: 'src/exports/args.rs',
        find: 'kind != sys::ValueType::napi_number {',
        replace: 'kind == sys::ValueType::napi_symbol {',
      },
    ],
    tests: ['deno:flags.test.js', 'deno:lifetimes.test.js'],
  },
  {
    id: 'ahead-opens-fifo',
    area: 'batch control flow',
    bug: "a sync batch's readers open an entry ahead of the JS thread before they know it is no regular file: a FIFO past a failure is opened, and a reader waits in it",
    patches: [
      {
        file: 'src/read/syscalls.rs',
        find: '  let (regular, size) = kind_and_size(&syscall::stat(path).map_err(|e| os_error(e, Syscall::Open))?);\n  if !regular {\n    return Err(ReadError::NotRegular);\n  }\n  let fd = open(path, flags).map_err(|e| os_error(e, Syscall::Open))?;\n',
        replace:
          '  let fd = open(path, flags).map_err(|e| os_error(e, Syscall::Open))?;\n  let (regular, size) = kind_and_size(&syscall::fstat(fd.raw()).map_err(|e| os_error(e, Syscall::Open))?);\n  if !regular {\n    return Err(ReadError::NotRegular);\n  }\n',
      },
    ],
    tests: ['side-effects.test.js'],
  },
  {
    id: 'helper-idle-units',
    area: 'thread lifetimes',
    bug: "the helper thread waits a thousand times its idle time for a task: it stays after the work is done",
    patches: [{ file: 'src/two_threads/helper.rs', find: '        .wait_timeout(state, tuned!(KEEP_IDLE_FOR))', replace: '        .wait_timeout(state, tuned!(KEEP_IDLE_FOR) * 1000)' }],
    tests: ['lifetimes.test.js'],
  },
  {
    id: 'reaper-flag-kept',
    area: 'thread lifetimes',
    bug: "the reaper's running flag stays set when it ends: no reaper starts again, and idle buffers after the first burst are never given back",
    patches: [{ file: 'src/buffers/mod.rs', find: '    REAPER.store(false, Ordering::SeqCst);\n    // A buffer given back', replace: '    // A buffer given back' }],
    tests: ['lifetimes.test.js'],
  },
  {
    id: 'external-pages-kept',
    area: 'memory lifetimes',
    bug: "an external string over a reused, larger buffer keeps all of it: the pages past its text are not given back",
    patches: [{ file: 'src/js_string.rs', find: '  buffers::release_unused(&data);\n  let len = data.len();', replace: '  let len = data.len();' }],
    tests: ['external-pages.test.js'],
  },
  {
    id: 'allocator-never-trimmed',
    area: 'memory lifetimes',
    bug: "the small buffers of a batch's external strings, freed when V8 collects them, stay with the C allocator: idle RSS keeps most of the batch",
    patches: [{ file: 'src/buffers/mod.rs', find: '      SMALL_FREED.fetch_sub(freed, Ordering::Relaxed);\n      trim_allocator();', replace: '      SMALL_FREED.fetch_sub(freed, Ordering::Relaxed);' }],
    tests: ['idle-memory.test.js'],
  },
  {
    id: 'batch-small-strings-copied',
    area: 'batch and async control flow',
    bug: "a batch's and an async read's small strings are copied as a sync call's are: each copy is copied again when the batch outlives a scavenge",
    patches: [{ file: 'src/plan.rs', find: '  let external_by_size = if !sync {\n    true\n  }', replace: '  let external_by_size = if !sync {\n    units.data_bytes >= limits.external_from_bytes\n  }' }],
    tests: ['copies.test.js'],
  },
  // From the StrykerJS campaigns (npm run mutate:js, mutation/MUTANTS.md):
  // survivors a user would notice, each killed by the test written for it.
  {
    id: 'stryker-unregister-first',
    area: 'register lifecycle',
    bug: 'unregister() before any register() throws a TypeError instead of doing nothing',
    patches: [{ file: 'lib/register.js', find: '  if (replaced === null) return\n  fs.readFileSync = replaced.readFileSync', replace: '  fs.readFileSync = replaced.readFileSync' }],
    tests: ['hook-orders.test.js'],
  },
  {
    id: 'stryker-hook-forgets-replaced',
    area: 'register lifecycle',
    bug: 'the hook answers with fs as it was when the package loaded, not with what register() replaced: a layer installed in between is bypassed',
    patches: [{ file: 'lib/answers.js', find: "  replaced = Object.fromEntries(NAMES.map((name) => [name, ours[name].has(functions[name]) ? atLoad[name] : functions[name]]))", replace: '  replaced = null' }],
    tests: ['hook-orders.test.js'],
  },
  {
    id: 'stryker-assigned-drop-ins',
    area: 'register lifecycle',
    bug: 'with our drop-ins assigned onto fs by the caller (no hook), every call fs must answer throws a TypeError',
    patches: [{ file: 'lib/answers.js', find: '  return replaced?.[name] ?? atLoad[name]', replace: '  return replaced[name]' }],
    tests: ['hook-orders.test.js'],
  },
  {
    id: 'stryker-bun-single-reads',
    area: 'runtime routing',
    bug: "under Bun the single reads and decodeUtf8 go through Node-API instead of Bun's own fs and Buffer",
    patches: [{ file: 'lib/native.js', find: '  module.exports = process.versions.bun === undefined ? result.addon : { ...result.addon, ...runtimeReads() }', replace: '  module.exports = result.addon' }],
    tests: ['routing-by-runtime.test.js'],
  },
  {
    id: 'stryker-heap-young',
    area: 'heap meter',
    bug: "the heap meter counts the young generation too, which a scavenge frees: large strings are copied for a heap that is not large",
    patches: [{ file: 'lib/heap.js', find: "    if (!name.startsWith('new_') && !name.includes('large_object')) bytes += space.space_used_size", replace: "    if (!name.includes('large_object')) bytes += space.space_used_size" }],
    tests: ['heap-meter.test.js'],
  },
  {
    id: 'stryker-local-build-skipped',
    area: 'loader',
    bug: 'a local build in the package root is not looked for: fs answers everything, with a warning that the platform package is missing',
    patches: [{ file: 'lib/native.js', find: '  if (local !== null) {', replace: '  if (false) {' }],
    tests: ['loader.test.js'],
  },
  {
    id: 'stryker-named-file-cause',
    area: 'loader',
    bug: 'a READFILE_UTF8_NATIVE_LIBRARY_PATH file that fails to load is reported as missing, not with its loader error',
    patches: [{ file: 'lib/native.js', find: "error?.code === 'MODULE_NOT_FOUND' ?", replace: 'true ?' }],
    tests: ['loader.test.js'],
  },
  {
    id: 'stryker-no-warning-without-flag',
    area: 'loader',
    bug: 'where threads cannot share the one-warning flag, no thread warns that fs answers everything',
    patches: [{ file: 'lib/native.js', find: '  } catch {\n    return true\n  }\n}\n\n/** An Error', replace: '  } catch {\n    return false\n  }\n}\n\n/** An Error' }],
    tests: ['loader.test.js'],
  },
  {
    id: 'stryker-batch-own-listener',
    area: 'async batch signal',
    bug: "each async batch adds an 'abort' listener of its own: eleven on one signal print MaxListenersExceededWarning, a dispatched 'abort' event rejects it, an object signal throws",
    patches: [
      {
        file: 'lib/batch.js',
        find: '      listening = { abort: () => finish(abortError(o.signal)) }\n      onAbort(o.signal, listening)\n',
        replace: "      const listener = () => finish(abortError(o.signal))\n      o.signal?.addEventListener('abort', listener, { once: true })\n      listening = { listener }\n",
      },
      {
        file: 'lib/batch.js',
        find: '      if (listening !== null) offAbort(o.signal, listening)\n',
        replace: "      if (listening !== null) o.signal.removeEventListener('abort', listening.listener)\n",
      },
    ],
    tests: ['signal-listeners.test.js'],
  },
  {
    id: 'stryker-dispatched-abort',
    area: 'async signal',
    bug: "an 'abort' event dispatched without abort() rejects every read on the signal (fs ignores it)",
    patches: [{ file: 'lib/async.js', find: '  if (!this.aborted) return\n', replace: '' }],
    tests: ['signal-listeners.test.js'],
  },
  {
    id: 'stryker-sync-batch-signal',
    area: 'batch options',
    bug: 'a sync batch validates options.signal, which it takes no part of, and throws for one fs.promises would refuse',
    patches: [{ file: 'lib/batch.js', find: '  const o = batchOptions(options, false)\n', replace: '  const o = batchOptions(options, true)\n' }],
    tests: ['batch-options.test.js'],
  },
  {
    id: 'stryker-sibling-unstoppable',
    area: 'async signal',
    bug: 'when one read on a shared signal ends, the signal\'s listener goes: the reads still running are not stopped by its abort (a blocked one hangs)',
    patches: [{ file: 'lib/async.js', find: '  reads.delete(read)\n  if (reads.size === 0) {\n', replace: '  reads.delete(read)\n  {\n' }],
    tests: ['signal-listeners.test.js'],
  },
  // From the cargo-mutants campaigns over src/ (mutation/cargo-mutants/,
  // mutation/MUTANTS.md): survivors a user would notice, each with the test
  // written to kill it.
  {
    id: 'copy-all-strings',
    area: 'runtime routing',
    bug: "setOtherRuntime (called under Bun and Deno) does nothing: large strings stay external, whose buffers those runtimes free late, and a loop's pile up",
    patches: [{ file: 'src/pipeline.rs', find: '  OTHER_RUNTIME.store(true, Ordering::Relaxed);\n', replace: '' }],
    tests: ['copies.test.js'],
  },
  {
    id: 'pool-forget-others',
    area: 'pool: aborted batches',
    bug: "aborting one async batch forgets every other batch instead: a second batch blocked in a FIFO, aborted, keeps the process alive for ever",
    patches: [{ file: 'src/exports/pool/mod.rs', find: '  st.groups.retain(|g| g.first != first);\n', replace: '  st.groups.retain(|g| g.first == first);\n' }],
    tests: ['pool-readers.test.js'],
  },
  {
    id: 'pool-forgotten-result',
    area: 'pool: aborted batches',
    bug: "an aborted batch's read that ends after the abort hands its result to JS: the count of reads in flight wraps, and later reads no longer keep the process alive",
    patches: [{ file: 'src/exports/pool/readers.rs', find: '      if st.closed || forgotten {\n', replace: '      if st.closed && forgotten {\n' }],
    tests: ['pool-readers.test.js'],
  },
  {
    id: 'pool-js-entries',
    area: 'pool: async batches',
    bug: "an async batch's entries that JS reads itself (fds) are read by the pool too, each giving a result no one waits for: the count of reads in flight goes wrong",
    patches: [
      {
        file: 'src/exports/pool/readers.rs',
        find: '        // Entries JS reads itself are not queued.\n        while *next < paths.len() && paths.get(*next).is_none() {\n',
        replace: '        // Entries JS reads itself are not queued.\n        while *next == paths.len() && paths.get(*next).is_none() {\n',
      },
    ],
    tests: ['pool-readers.test.js'],
  },
  {
    id: 'pool-unbounded-results',
    area: 'pool: memory',
    bug: 'readers go on reading while the results waiting for the JS thread hold BATCH_PENDING_MAX_BYTES: a batch of large files held all in memory at once',
    patches: [{ file: 'src/exports/pool/readers.rs', find: '      if st.done_bytes >= tuned!(BATCH_PENDING_MAX_BYTES) && !st.queue.is_empty() {\n', replace: '      if st.done_bytes >= tuned!(BATCH_PENDING_MAX_BYTES) && st.queue.is_empty() {\n' }],
    tests: ['pool-readers.test.js'],
  },
  {
    id: 'pool-threads-to-cap',
    area: 'pool: threads',
    bug: 'each submit starts readers up to the cap, however few reads it brings: a lone read starts four threads',
    patches: [{ file: 'src/exports/pool/readers.rs', find: '      st.readers += 1;\n      unserved -= 1;\n', replace: '      st.readers += 1;\n      unserved += 1;\n' }],
    tests: ['pool-readers.test.js'],
  },
]

const { values: args } = parseArgs({
  options: {
    node: { type: 'string', default: process.execPath },
    only: { type: 'string' },
    'all-tests': { type: 'boolean', default: false },
    'fast-tier': { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'target-dir': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
})

const CACHE = process.env.READFILE_UTF8_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'readfile-utf8')
/** Files outside src/ whose change needs a rebuild (like scripts/ensure-built.js's list). */
const NEEDS_BUILD = /^(src\/|Cargo\.toml$|Cargo\.lock$|build\.rs$|lib\/limits\.json$)/
/** The tests' own limits (child timeouts) end a hung mutant long before this. */
const TEST_RUN_TIMEOUT_MS = 30 * 60_000
/** node --test's limit per test: a test that hangs fails under its own name. */
const TEST_TIMEOUT_MS = 5 * 60_000

function fail(message) {
  console.error(`mutants: ${message}`)
  process.exit(2)
}

function usage() {
  console.log(`usage: node scripts/mutants.js [--node PATH] [--only id,id] [--all-tests | --fast-tier] [--list] [--keep] [--target-dir DIR]
  --node PATH       the Node binary that runs the tests (default: ${process.execPath})
  --only ids        run only these mutants (comma-separated; --list shows them)
  --all-tests       run the whole JS suite (both tiers) for every mutant, not only its test files
  --fast-tier       run the fast tier (npm run test:js, what a contributor runs) for every mutant, beside
                    its Rust and Bun/Deno tests: which mutants the everyday suite misses
  --keep            keep the scratch copy and its logs
  --target-dir DIR  cargo target dir shared by the builds (default: ${path.join(CACHE, 'mutants-target')})`)
}

function selectedMutants() {
  if (args.only === undefined) return MUTANTS
  const ids = args.only.split(',').map((s) => s.trim())
  for (const id of ids) if (!MUTANTS.some((m) => m.id === id)) fail(`no mutant '${id}' (--list shows them)`)
  return MUTANTS.filter((m) => ids.includes(m.id))
}

/** Copies the checkout's tracked and untracked, not ignored, files to `dest`; links its node_modules. */
function copyCheckout(dest) {
  const r = spawnSync('git', ['-C', ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' })
  if (r.status !== 0) fail(`needs a git checkout to copy (git ls-files: ${r.error?.message ?? r.stderr.trim()})`)
  let copied = 0
  for (const rel of new Set(r.stdout.split('\0').filter(Boolean))) {
    const from = path.join(ROOT, rel)
    let st
    try {
      st = fs.lstatSync(from)
    } catch {
      continue // tracked but deleted in the checkout
    }
    const to = path.join(dest, rel)
    fs.mkdirSync(path.dirname(to), { recursive: true })
    if (st.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), to)
    else fs.copyFileSync(from, to)
    copied++
  }
  const modules = path.join(ROOT, 'node_modules')
  if (!fs.existsSync(path.join(modules, '.bin'))) fail(`no ${modules}: run npm ci first`)
  fs.symlinkSync(modules, path.join(dest, 'node_modules'))
  return copied
}

/** Applies `patches` to the copy in `dir`; returns the original texts to restore. Fails on a pattern not found exactly once. */
function applyPatches(dir, mutant) {
  const originals = new Map()
  for (const { file, find, replace } of mutant.patches) {
    const full = path.join(dir, file)
    if (!fs.existsSync(full)) fail(`mutant ${mutant.id}: ${file} does not exist; update its patch`)
    const text = fs.readFileSync(full, 'utf8')
    const count = text.split(find).length - 1
    if (count !== 1) fail(`mutant ${mutant.id}: the text to replace occurs ${count} times in ${file} (must be once); update its patch:\n${find}`)
    if (!originals.has(file)) originals.set(file, text)
    fs.writeFileSync(full, text.replace(find, () => replace))
  }
  return originals
}

function restore(dir, originals) {
  for (const [file, text] of originals) fs.writeFileSync(path.join(dir, file), text)
}

const needsBuild = (mutant) => mutant.patches.some((p) => NEEDS_BUILD.test(p.file))

/** npm run build in `dir`; returns { ok, seconds, log }. */
function build(dir, targetDir) {
  const started = Date.now()
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const r = spawnSync(npm, ['run', 'build'], {
    cwd: dir,
    env: { ...process.env, CARGO_TARGET_DIR: targetDir },
    encoding: 'utf8',
    shell: process.platform === 'win32',
    maxBuffer: 64 << 20,
  })
  return { ok: r.status === 0, seconds: (Date.now() - started) / 1000, log: `${r.stdout}\n${r.stderr}` }
}

/** Whether a test entry runs elsewhere than node --test: `cargo:NAME`, `bun:FILE`, `deno:FILE`. */
const RUNNER = /^(cargo|bun|deno):/

/** The test files a mutant runs (relative to the copy); `cargo:`, `bun:` and `deno:` entries as they are. */
function testFiles(dir, mutant) {
  const other = mutant.tests.filter((t) => RUNNER.test(t))
  if (!args['all-tests'] && !args['fast-tier']) return mutant.tests.map((t) => (RUNNER.test(t) ? t : path.join('__test__', t)))
  const tiers = args['all-tests'] ? ['.test.js', '.slow.js'] : ['.test.js']
  return [
    ...other,
    ...fs
      .readdirSync(path.join(dir, '__test__'))
      .filter((f) => tiers.some((tier) => f.endsWith(tier)))
      .map((f) => path.join('__test__', f)),
  ]
}

/** Runs `cargo test --release --test NAME` for each `cargo:NAME` in `files`, the Bun and Deno files, then the rest with node --test. */
function runTests(dir, files, targetDir) {
  const rust = files.filter((f) => f.startsWith('cargo:'))
  const js = files.filter((f) => !RUNNER.test(f))
  const results = rust.map((f) => runCargoTest(dir, f.slice('cargo:'.length), targetDir))
  for (const runtime of ['bun', 'deno']) {
    const theirs = files.filter((f) => f.startsWith(`${runtime}:`)).map((f) => path.join('__test__', f.slice(runtime.length + 1)))
    if (theirs.length > 0) results.push(runRuntimeTests(dir, runtime, theirs))
  }
  if (js.length > 0) results.push(runNodeTests(dir, js))
  return {
    passed: results.every((r) => r.passed),
    failed: results.flatMap((r) => r.failed),
    timedOut: results.some((r) => r.timedOut),
    seconds: results.reduce((sum, r) => sum + r.seconds, 0),
    log: results.map((r) => r.log).join('\n'),
  }
}

/** `cargo test --release --test NAME` in `dir`. */
function runCargoTest(dir, name, targetDir) {
  const started = Date.now()
  const r = spawnSync('cargo', ['test', '--release', '--test', name], {
    cwd: dir,
    env: { ...process.env, CARGO_TARGET_DIR: targetDir },
    encoding: 'utf8',
    timeout: TEST_RUN_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 64 << 20,
  })
  const log = `${r.stdout}\n${r.stderr}`
  const failed = [...log.matchAll(/^test (\S+) \.\.\. FAILED$/gm)].map((m) => `${name}: ${m[1]}`)
  const timedOut = r.signal !== null
  return { passed: r.status === 0 && !timedOut, failed, timedOut, seconds: (Date.now() - started) / 1000, log }
}

/** Runs `files` under Bun or Deno (scripts/test-runtime.js) in `dir`: { passed, failed: [names], timedOut, seconds, log }. */
function runRuntimeTests(dir, runtime, files) {
  const started = Date.now()
  const env = { ...process.env }
  delete env.READFILE_UTF8_NO_SIMD
  delete env.SIMDUTF_FORCE_IMPLEMENTATION
  delete env.NODE_OPTIONS
  const r = spawnSync(args.node, [path.join('scripts', 'test-runtime.js'), runtime, ...files], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: TEST_RUN_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 256 << 20,
  })
  const log = `${r.stdout}\n${r.stderr}`
  const failed = [...log.matchAll(/^not ok \d+ (.*?):/gm)].map((m) => `${runtime}: ${m[1]}`)
  const timedOut = r.signal !== null
  return { passed: r.status === 0 && !timedOut, failed, timedOut, seconds: (Date.now() - started) / 1000, log }
}

/** Runs `files` with node --test in `dir`; returns { passed, failed: [names], timedOut, seconds, log }. */
function runNodeTests(dir, files) {
  const started = Date.now()
  const env = { ...process.env, PATH: `${path.dirname(args.node)}${path.delimiter}${process.env.PATH}` }
  // The tests choose engines themselves; an inherited choice would change what they check.
  delete env.READFILE_UTF8_NO_SIMD
  delete env.SIMDUTF_FORCE_IMPLEMENTATION
  delete env.NODE_OPTIONS
  const r = spawnSync(args.node, ['--test', '--test-reporter=tap', `--test-timeout=${TEST_TIMEOUT_MS}`, ...files], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: TEST_RUN_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 256 << 20,
  })
  const log = `${r.stdout}\n${r.stderr}`
  const failed = [...log.matchAll(/^not ok \d+ - (.*)$/gm)].map((m) => m[1])
  const timedOut = r.signal !== null
  return { passed: r.status === 0 && !timedOut, failed, timedOut, seconds: (Date.now() - started) / 1000, log }
}

/** Builds (if needed) and tests the copy in `dir`, patched with `m`: { m, status, detail, seconds }. */
function runMutant(dir, m, targetDir, logs) {
  let buildSeconds = 0
  if (needsBuild(m)) {
    const b = build(dir, targetDir)
    fs.writeFileSync(path.join(logs, `${m.id}-build.log`), b.log)
    buildSeconds = b.seconds
    if (!b.ok) return { m, status: 'BUILD FAILED', detail: `see ${path.join(logs, `${m.id}-build.log`)}`, seconds: buildSeconds }
  }
  const t = runTests(dir, testFiles(dir, m), targetDir)
  fs.writeFileSync(path.join(logs, `${m.id}-tests.log`), t.log)
  const status = t.passed ? 'SURVIVED' : 'killed'
  const detail = t.timedOut ? 'the test run timed out' : t.passed ? 'every test passed' : short(t.failed) || 'the test run failed (see its log)'
  return { m, status, detail, seconds: buildSeconds + t.seconds }
}

/** Takes the target dir for this run; fails if another live run holds it. */
function lockTargetDir(targetDir) {
  fs.mkdirSync(targetDir, { recursive: true })
  const lock = path.join(targetDir, 'mutants.lock')
  let holder = NaN
  try {
    holder = Number(fs.readFileSync(lock, 'utf8'))
  } catch (err) {
    if (err.code !== 'ENOENT') throw err
  }
  if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
    fail(`another mutants run (pid ${holder}) uses ${targetDir}; wait for it or pass --target-dir`)
  }
  fs.writeFileSync(lock, String(process.pid))
  process.on('exit', () => fs.rmSync(lock, { force: true }))
}

function isAlive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

function short(names, max = 2) {
  if (names.length === 0) return ''
  const shown = names.slice(0, max).map((n) => (n.length > 70 ? `${n.slice(0, 67)}…` : n))
  return shown.join('; ') + (names.length > max ? ` (+${names.length - max} more)` : '')
}

function main() {
  if (args.help) return usage()
  if (args.list) {
    for (const m of MUTANTS) console.log(`${m.id.padEnd(26)} ${m.area.padEnd(27)} ${m.tests.join(', ').padEnd(22)} ${m.bug}`)
    return
  }
  const nodeVersion = spawnSync(args.node, ['--version'], { encoding: 'utf8' }).stdout?.trim()
  if (!nodeVersion) fail(`cannot run --node ${args.node}`)
  // A mutant of a value only older Node lines use is no bug on this one (`beforeNode`).
  const major = Number(nodeVersion.slice(1).split('.')[0])
  const mutants = selectedMutants().filter((m) => {
    if (m.beforeNode === undefined || major < m.beforeNode) return true
    console.log(`not run      ${m.id}: changes what only Node < ${m.beforeNode} uses (equivalent on ${nodeVersion})`)
    return false
  })
  const targetDir = path.resolve(args['target-dir'] ?? path.join(CACHE, 'mutants-target'))
  lockTargetDir(targetDir)

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readfile-utf8-mutants-'))
  const logs = path.join(dir, 'mutant-logs')
  fs.mkdirSync(logs)
  if (!args.keep) process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
  const started = Date.now()
  console.log(`mutants: ${copyCheckout(dir)} files copied to ${dir}; tests on Node ${nodeVersion} (${args.node}); cargo target dir ${targetDir}`)

  // Every patch must still apply before anything is built.
  for (const m of mutants) restore(dir, applyPatches(dir, m))

  // The unpatched copy: built, and its tests pass.
  const base = build(dir, targetDir)
  fs.writeFileSync(path.join(logs, 'baseline-build.log'), base.log)
  if (!base.ok) fail(`the unpatched copy does not build (log: ${path.join(logs, 'baseline-build.log')}${args.keep ? '' : ', removed at exit: pass --keep'})\n${base.log.slice(-3000)}`)
  const allFiles = [...new Set(mutants.flatMap((m) => testFiles(dir, m)))]
  console.log(`baseline: built in ${base.seconds.toFixed(0)} s; running ${allFiles.map((f) => path.basename(f)).join(', ')}…`)
  const baseline = runTests(dir, allFiles, targetDir)
  fs.writeFileSync(path.join(logs, 'baseline-tests.log'), baseline.log)
  if (!baseline.passed) {
    fail(`the tests fail without any mutant (${baseline.timedOut ? 'timed out' : short(baseline.failed, 5)}); fix that first\n${baseline.log.slice(-3000)}`)
  }
  console.log(`baseline: tests pass (${baseline.seconds.toFixed(0)} s)`)

  // Mutants of JS files first: they use the unpatched build. Each mutant of Rust
  // sources is built; the build after it starts from the restored sources.
  const ordered = [...mutants.filter((m) => !needsBuild(m)), ...mutants.filter(needsBuild)]
  const results = []
  for (const m of ordered) {
    const originals = applyPatches(dir, m)
    let result
    try {
      result = runMutant(dir, m, targetDir, logs)
    } finally {
      restore(dir, originals)
    }
    results.push(result)
    console.log(`${result.status.padEnd(12)} ${m.id} (${result.seconds.toFixed(0)} s): ${result.detail}`)
  }

  const rows = MUTANTS.map((m) => results.find((r) => r.m === m)).filter(Boolean)
  console.log(`\n## Mutants on Node ${nodeVersion} (${((Date.now() - started) / 60000).toFixed(1)} min)\n`)
  console.log('| mutant | area | bug | result | failing tests |')
  console.log('| --- | --- | --- | --- | --- |')
  for (const r of rows) console.log(`| ${r.m.id} | ${r.m.area} | ${r.m.bug} | ${r.status} | ${r.detail.replace(/\|/g, '\\|')} |`)
  const survivors = rows.filter((r) => r.status !== 'killed')
  console.log(`\n${rows.length - survivors.length} of ${rows.length} killed${survivors.length ? `; not killed: ${survivors.map((r) => r.m.id).join(', ')}` : ''}`)
  if (args.keep) console.log(`scratch copy and logs kept in ${dir}`)
  process.exitCode = survivors.length ? 1 : 0
}

main()
