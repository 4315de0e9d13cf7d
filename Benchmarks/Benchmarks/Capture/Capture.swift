// One 10 ms capture call (`Engine.processCapture`, mono microphone) per
// iteration: the RTMix engine vs. the bare speexdsp echo canceller +
// preprocessor calls for the same frames (see CaptureCases), at 16 kHz
// (engine rendering at 16 kHz mono, and at 48 kHz stereo with the
// reference converted to 16 kHz) and at 48 kHz.
//
// The case (engine, source, signals, buffers) is built in `setup`, outside
// every measurement, and warmed up for 3 s of audio (canceller converged,
// delay in use). Each iteration calls prepare() BEFORE startMeasurement():
// for the engine, the duplex callback's render half (push + render of the
// far end, which hands the echo reference to the capture side); only the
// capture call is measured.
//
// Capture-path allocations fail the run, as in Render.swift: every
// iteration's malloc count is checked here, and mallocCountTotal has
// zero-tolerance thresholds (and static p90 thresholds of 0 in Thresholds/).
import Benchmark
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CaptureCases
import MallocInterposerSwift

/// Holds the case built by `setup`, and the first capture-path malloc seen.
final class CaseBox: @unchecked Sendable {
    var value: (any CaptureCase)?
    var mallocFailure: String?
}

let benchmarks: @Sendable () -> Void = {
    let zero: BenchmarkThresholds = .init(
        relative: [.p0: 0, .p25: 0, .p50: 0, .p75: 0, .p90: 0, .p99: 0, .p100: 0],
        absolute: [.p0: 0, .p25: 0, .p50: 0, .p75: 0, .p90: 0, .p99: 0, .p100: 0]
    )

    // No retain/release counts: see Render.swift (they read 0 with only
    // the MallocInterposer trait); the capture path is @_noLocks.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 200,
        maxDuration: .seconds(3),
        maxIterations: 20_000,
        thresholds: [.mallocCountTotal: zero]
    )

    for name in CaptureCaseName.allCases {
        let box = CaseBox()
        Benchmark(name.title, closure: { benchmark in
            guard let c = box.value else {
                benchmark.error("case \(name.rawValue) was not set up")
                return
            }
            c.prepare()  // not measured (engine: push + render of the far end)
            benchmark.startMeasurement()
            let before = MallocInterposerSwift.getStatistics().mallocCount
            c.capture()
            let mallocs = MallocInterposerSwift.getStatistics().mallocCount - before
            benchmark.stopMeasurement()
            if mallocs != 0, box.mallocFailure == nil {
                box.mallocFailure = "\(name.title): \(mallocs) malloc(s) in one capture call (must be 0)"
                benchmark.error(box.mallocFailure!)
            }
        }, setup: {
            box.value = try makeCaptureCase(name)
        }, teardown: {
            // A capture-path malloc, or a case that did not do the intended
            // work (missing reference, render underrun, canceller removing
            // < 20 dB, delay lost), ends this benchmark process with a
            // failure, so `swift package benchmark` exits non-zero.
            box.value?.prepare()
            let failure = box.mallocFailure ?? box.value?.problems().map { "\(name.title): \($0)" }
            if let c = box.value { print("\(name.title): \(c.summary())") }
            box.value = nil
            if let failure {
                print("FAIL: \(failure)")
                exit(1)
            }
        })
    }
}
