// Issue 11: the ring's two sides on separate cache lines, and several
// producers pushing while one thread renders.
//
// - "ring transfer <variant>": one iteration moves 96 000 stereo frames
//   (2 s at 48 kHz) in 64-frame chunks from a new producer thread to the
//   measuring thread through a 4096-frame ring, both spinning: the engine's
//   SPSCRing (its own source file) against benchmark-only copies of the old
//   layout (indices in one cache line, the other side's index loaded on
//   every call) and of the padded layout without cached indices. Same run,
//   same machine state. Every value is checked. Measured from the first
//   frames' arrival (both threads running) to the last; the two threads are
//   pinned to CPUs 0 and 1.
// - "render 3 sources, N producer thread(s)": one 10 ms render callback
//   (480 frames, 48 kHz stereo, 3 bypass sources) per iteration while N
//   producer threads push 10 ms blocks into the sources as fast as the rings
//   take them (N = 3: one thread per source; N = 1, the baseline: one thread
//   feeds all three). Before each measured render the benchmark waits (not
//   measured) until every source holds a block, so renders mix real data.
//   Push-call latency (p50/p99) and push throughput are printed at the end.
//   Threads are not pinned (2 cores for 4 threads: the OS shares them).
//
// Results: Benchmarks/RESULTS.md ("Contention").
import Benchmark
import RingUnderTest
#if canImport(Glibc)
import Glibc
#endif

final class Box<T>: @unchecked Sendable { var value: T?; init() {} }

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput],
        timeUnits: .microseconds,
        warmupIterations: 3,
        maxDuration: .seconds(10),
        maxIterations: 200
    )
    for variant in RingVariant.allCases {
        let box = Box<RingTransfer>()
        Benchmark("ring transfer \(variant.rawValue)", closure: { benchmark in
            guard let t = box.value else { return }
            let ok = t.run(frames: 96_000, started: { benchmark.startMeasurement() },
                           finished: { benchmark.stopMeasurement() })
            if !ok { benchmark.error("ring transfer \(variant.rawValue): wrong data") }
        }, setup: {
            box.value = RingTransfer(variant: variant)
        }, teardown: {
            box.value = nil
        })
    }

    for threads in [1, 3] {
        let box = Box<MultiProducerCase>()
        Benchmark("render 3 sources, \(threads) producer thread(s)",
                  configuration: .init(metrics: [.wallClock, .throughput], timeUnits: .nanoseconds,
                                       warmupIterations: 100, maxDuration: .seconds(5), maxIterations: 20_000),
                  closure: { benchmark in
            guard let c = box.value else { return }
            c.waitForData()  // not measured
            benchmark.startMeasurement()
            c.render()
            benchmark.stopMeasurement()
            blackHole(c.output[0])
        }, setup: {
            let c = try MultiProducerCase(sources: 3, threads: threads)
            c.start()
            box.value = c
        }, teardown: {
            if let c = box.value { print("contention: " + c.finish()) }
            box.value = nil
        })
    }
}
