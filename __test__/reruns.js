'use strict'
// Comparisons whose figures turn on when V8 happens to collect (a loop's peak
// RSS, its count of full GCs), for Node's own loops as for ours: one run of
// each side can miss a threshold with nothing wrong. Such a comparison runs
// again while it misses, up to MOST_RUNS runs, and is judged on each side's
// best figure over its runs: a real regression misses in every run.

const MOST_RUNS = 3

/**
 * The runs of a comparison: `runOnce()` runs every side once and returns their
 * figures; it runs again while `misses(runs)` and fewer than MOST_RUNS were made.
 */
function runsWhileMissing(runOnce, misses) {
  const runs = [runOnce()]
  while (misses(runs) && runs.length < MOST_RUNS) runs.push(runOnce())
  return runs
}

/** The lowest of `figure(run)` over `runs`. */
function lowestOver(runs, figure) {
  return Math.min(...runs.map(figure))
}

module.exports = { runsWhileMissing, lowestOver }
