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
//
// --max-semi-space-size=8: V8 grows the young generation's two semi-spaces to 16 MiB each
// during a burst of small short-lived objects (documents, events, reconcile results) and keeps
// them, 32 MiB of RSS for as long as the process lives. 8 MiB each still lets a reconcile's
// garbage die young; measured at 10k nodes (load ~2.4): settled RSS 376-377 MB against 386-408
// with the default, populating 50,000 documents in the same 2.5 s, GET /nodes/details as fast.
export const QUARRY_V8_FLAGS = ['--heap-growing-percent=50', '--max-semi-space-size=8'];
