'use strict'
// readFileUtf8 and readFileUtf8Async read only UTF-8: any other encoding
// throws ERR_INVALID_ARG_VALUE (README), before any open, and the value is
// shown as fs shows a bad encoding in its own error (util.inspect, cut at
// 128 characters).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')

const { readFileUtf8, readFileUtf8Async } = require('..')
const { scratch, thrown } = require('./helpers')

/** What an error message says it received. */
const receivedPart = (err) => err.message.slice(err.message.lastIndexOf('Received '))

// Values fs rejects as encodings; each is shown as fs shows it.
const NOT_ENCODINGS = [5, 1.5, true, Symbol('enc'), {}, { encoding: 'utf8' }, ['utf8'], () => {}, 'no\'pe', `latin${'1'.repeat(200)}`]

test("an encoding that is not UTF-8 throws ERR_INVALID_ARG_VALUE showing the value as fs's error does, before any open", async () => {
  const file = scratch('encoding-argument.txt')
  for (const encoding of NOT_ENCODINGS) {
    const label = typeof encoding === 'symbol' ? String(encoding) : JSON.stringify(encoding) ?? String(encoding)
    // fs's own error for the same encoding (flag a+ would create the file, were it opened).
    const theirs = thrown(() => fs.readFileSync(file, { encoding, flag: 'a+' }))
    assert.equal(theirs.code, 'ERR_INVALID_ARG_VALUE', `the scene: fs rejects ${label}`)
    const ours = thrown(() => readFileUtf8(file, { encoding, flag: 'a+' }))
    assert.ok(ours instanceof TypeError, label)
    assert.equal(ours.code, 'ERR_INVALID_ARG_VALUE', label)
    assert.match(ours.message, /^The argument 'encoding' must be 'utf8' or 'utf-8' for readFileUtf8\. Received /, label)
    assert.equal(receivedPart(ours), receivedPart(theirs), label)
    const rejected = await readFileUtf8Async(file, { encoding, flag: 'a+' }).then(
      () => assert.fail(`readFileUtf8Async accepted ${label}`),
      (err) => err,
    )
    assert.equal(rejected.code, 'ERR_INVALID_ARG_VALUE', label)
    assert.equal(receivedPart(rejected), receivedPart(theirs), label)
    assert.equal(fs.existsSync(file), false, `${label}: nothing was opened (a+ creates)`)
  }
  // A string options argument is the encoding itself.
  assert.equal(receivedPart(thrown(() => readFileUtf8(file, 'hex'))), "Received 'hex'")
})
