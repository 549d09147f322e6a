'use strict'
// What a batch's external strings leave behind once V8 collects them: their
// buffers are freed by the thousand in one full GC, and the memory must leave
// the process, not stay with the C allocator (README: "Idle, our buffers go
// back to the system within a second"). Run in a child process, whose RSS
// is the test's alone.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch, unsupportedOnWindows } = require('./helpers')
const { BASES, bigBuffer } = require('./cases')

const ROOT = path.join(__dirname, '..')
const MiB = 1 << 20

function runChild(script, args = []) {
  const r = spawnSync(process.execPath, [...args, '-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.signal, null, `killed by ${r.signal}\n${r.stderr}`)
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

test("a batch's strings, once V8 collects them, leave no memory behind: idle RSS comes back near where it was", unsupportedOnWindows('RSS is read from /proc/self/statm (Linux)'), (t) => {
  // Files of a tree's sizes: the small buffers of their strings are freed by
  // the thousand when V8 collects them, and must leave the process too.
  const dir = scratch('lifetimes-tree')
  fs.mkdirSync(dir, { recursive: true })
  const files = Array.from({ length: 3000 }, (_, i) => {
    const p = path.join(dir, `${i}.js`)
    fs.writeFileSync(p, bigBuffer(BASES.ascii, 1024 + ((i * 7919) % 47) * 1024))
    return p
  })
  const bytes = files.reduce((sum, p) => sum + fs.statSync(p).size, 0)
  const list = scratch('lifetimes-tree.json')
  fs.writeFileSync(list, JSON.stringify(files))
  const out = runChild(
    `
    const fs = require('node:fs')
    const api = require(${JSON.stringify(ROOT)})
    const files = JSON.parse(fs.readFileSync(${JSON.stringify(list)}, 'utf8'))
    const rss = () => Number(fs.readFileSync('/proc/self/statm', 'utf8').split(' ')[1]) * 4096
    const settle = async () => {
      for (let i = 0; i < 3; i++) {
        gc()
        await new Promise((resolve) => setTimeout(resolve, 700))
      }
    }
    ;(async () => {
      api.readFilesUtf8(files.slice(0, 50))
      await settle()
      const before = rss()
      const result = {}
      for (const [way, read] of [['sync', () => api.readFilesUtf8(files)], ['async', () => api.readFilesUtf8Async(files)]]) {
        let strings = await read()
        const same = strings.length === files.length && strings[7] === fs.readFileSync(files[7], 'utf8')
        strings = null
        await settle()
        result[way] = { same, grown: rss() - before }
      }
      console.log(JSON.stringify(result))
    })()`,
    ['--expose-gc'],
  )
  t.diagnostic(`idle RSS growth after ${(bytes / MiB).toFixed(1)} MiB: sync ${(out.sync.grown / MiB).toFixed(1)} MiB, async ${(out.async.grown / MiB).toFixed(1)} MiB`)
  for (const way of ['sync', 'async']) {
    assert.equal(out[way].same, true, `${way}: the strings are fs's`)
    assert.ok(out[way].grown < bytes / 4, `${way}: idle RSS grew by ${(out[way].grown / MiB).toFixed(1)} MiB after a batch of ${(bytes / MiB).toFixed(1)} MiB was collected`)
  }
  fs.rmSync(dir, { recursive: true, force: true })
  fs.rmSync(list, { force: true })
})
