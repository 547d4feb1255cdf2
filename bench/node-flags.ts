// The V8 flags Quarry runs with in production (package.json "start"), so the benchmarks
// measure the same process. test/bench-flags.test.ts keeps the two in step.
//
// --heap-growing-percent=50: after a major GC, V8 lets the old generation grow to
// live × factor before the next one. The factor is adaptive and, for a process allowed a
// multi-GB heap, reaches 4 during a burst (10,000 nodes going stale at once, a restart's
// relist of 50,000 documents). Quarry's live heap at 10k nodes is ~95 MB, so the committed heap
// stayed at 330-380 MB for as long as no memory-reducing GC came (RSS 512-588 MiB settled).
// A fixed 1.5 bounds it near 150-200 MB for more frequent (incremental, concurrent) major GCs
// during bursts; nothing is capped, so a larger fleet only grows it proportionally.
export const QUARRY_V8_FLAGS = ['--heap-growing-percent=50'];
