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
//
// --no-allocation-site-pretenuring: V8 watches how many of each allocation site's objects survive
// the young generation and, past a threshold, allocates that site's objects in the old generation
// from then on. Quarry's bursts (storing 50,000 documents, 10,000 agents' first reports, a relist)
// make that decision for sites whose objects are short-lived in the steady state after it — a
// status write's documents, the etcd client's request builders, an HTTP request's stream state —
// and it is kept: their garbage then fills the old generation, which only a major GC frees.
// Measured under 10,000 agents on etcd (bench/heartbeats.ts, a sampling heap profile of what young
// collections did not free): 2.9 MB/s promoted with it, 1.6 MB/s without; one major GC in the
// 40 s window instead of two, the reports' p99 10–23 ms instead of 20–83, the controller's CPU
// about the same (33–37 % of a core against 34–37 %). osds (1,000 nodes) converged in 9.8 and
// 11.4 s without it against 8.5 and 10.5 s with it on the embedded store, 31.9 and 40.3 s against
// 38.1 and 38.5 s on etcd; inventory's settled RSS at 10k nodes 389–399 MiB against 374–406.
export const QUARRY_V8_FLAGS = ['--heap-growing-percent=50', '--max-semi-space-size=8', '--no-allocation-site-pretenuring'];
