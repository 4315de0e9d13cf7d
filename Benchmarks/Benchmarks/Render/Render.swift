// One 10 ms render callback (480 frames, 48 kHz stereo) per iteration: the
// RTMix engine vs. the bare libsamplerate + summation floor, and for 8
// sources also vs. a floor with the engine's own backends (bare speexdsp
// for the voices + bare libsamplerate for the media + summation); see
// RenderCases.
//
// The case (engine, sources, buffers, PCM) is built in `setup`, outside every
// measurement, and warmed up. Each iteration calls feed() (push of one
// callback's worth of input) BEFORE startMeasurement(), so only render() is
// measured.
//
// Render-path allocations fail the run: every iteration's malloc count is
// checked here (a single allocation in any iteration makes
// `swift package benchmark` exit non-zero), and mallocCountTotal also has
// zero-tolerance thresholds for `baseline check` and for
// `thresholds check` (static p90 thresholds of 0 in Thresholds/).
import Benchmark
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MallocInterposerSwift
import RenderCases

/// Holds the case built by `setup`, and the first render-path malloc seen.
final class CaseBox: @unchecked Sendable {
    var value: (any RenderCase)?
    var mallocFailure: String?
}

let benchmarks: @Sendable () -> Void = {
    let zero: BenchmarkThresholds = .init(
        relative: [.p0: 0, .p25: 0, .p50: 0, .p75: 0, .p90: 0, .p99: 0, .p100: 0],
        absolute: [.p0: 0, .p25: 0, .p50: 0, .p75: 0, .p90: 0, .p99: 0, .p100: 0]
    )

    // No retainCount/releaseCount: with only the MallocInterposer trait
    // (the RuntimeInterposer one does not resolve offline here) Swift 6.3 on
    // Linux reports 0 for them even for explicit retains, so they would
    // prove nothing. The render path is @_noLocks, which already rejects
    // reference counting at compile time.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 200,
        maxDuration: .seconds(3),
        maxIterations: 20_000,
        thresholds: [.mallocCountTotal: zero]
    )

    // engine8-drift: the drift stage stays engaged on every source for
    // about 400 callbacks after the case's own warm-up (see Cases.swift), so
    // no framework warm-up and at most 300 iterations there.
    var driftConfiguration = Benchmark.defaultConfiguration
    driftConfiguration.warmupIterations = 0
    driftConfiguration.maxIterations = 300

    for name in CaseName.allCases {
        let box = CaseBox()
        Benchmark(name.title, configuration: name == .engine8Drift ? driftConfiguration : Benchmark.defaultConfiguration,
                  closure: { benchmark in
            guard let c = box.value else {
                benchmark.error("case \(name.rawValue) was not set up")
                return
            }
            c.feed()  // not measured
            benchmark.startMeasurement()
            // Our own count, read inside the measured region (reading it
            // does not allocate; the framework's start/stop bookkeeping
            // sometimes does, so it must stay outside these two reads).
            let before = MallocInterposerSwift.getStatistics().mallocCount
            c.render()
            let mallocs = MallocInterposerSwift.getStatistics().mallocCount - before
            benchmark.stopMeasurement()
            if mallocs != 0, box.mallocFailure == nil {
                box.mallocFailure = "\(name.title): \(mallocs) malloc(s) in one render callback (must be 0)"
                benchmark.error(box.mallocFailure!)
            }
            blackHole(c.output[0])
        }, setup: {
            box.value = try makeCase(name)
        }, teardown: {
            // A render-path malloc, or a case that did not do the intended
            // work (engine underruns, floor short output), fails the run.
            // benchmark.error() and a throwing teardown only mark the
            // benchmark in the report; neither changes the exit status of a
            // plain `swift package benchmark` run, so end this benchmark
            // process with a failure instead (the tool then exits non-zero).
            let failure = box.mallocFailure ?? box.value?.problems().map { "\(name.title): \($0)" }
            box.value = nil
            if let failure {
                print("FAIL: \(failure)")
                exit(1)
            }
        })
    }
}
