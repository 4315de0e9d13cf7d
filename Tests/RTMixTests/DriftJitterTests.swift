import XCTest
@testable import RTMix
import RTMixSignals

/// Issue 17, item 3: zero gaps at ±1000 ppm with DEFAULT source configs,
/// under several delivery-jitter models, 600 s each way (RTMIX_DRIFT_GAP_SECONDS
/// scales it). One engine, eight producers on their own clocks:
/// - voices, 16 kHz, 10 ms packets sent on the producer's clock:
///   * uniform: each arrives 10 ms ± 10 ms after it was sent (in order);
///   * bursts: every 2 s the network holds packets for 60 ms, then
///     delivers them together;
///   * late: every 50th packet is 40 ms late (those behind it wait);
///   each at +1000 and −1000 ppm;
/// - media, 44.1 kHz stereo, 4096-frame decoder bursts one burst ahead,
///   at +1000 and −1000 ppm.
/// The effective target (DriftController, rule 5) follows each producer's
/// delivery jitter. After priming (2 s) no gap, for every model, except
/// that the first network hold while playing (bursts, 2.00-2.07 s) may
/// underrun once: nothing on the render side can foresee it. From 60 s on
/// every low-water mark stays near its effective target; media hold their
/// 100 ms and estimate within ±20 ppm.
final class DriftJitterTests: XCTestCase {
    enum Jitter: String { case uniform, bursts, late, media, step }

    struct Producer {
        var id: SourceID
        var rate: Int
        var channels: Int
        var ppm: Double
        var chunk: Int
        var jitter: Jitter
        var next = 0.0          // producer-clock send time of the next packet (device seconds)
        var sent = 0
        var lastArrival = 0.0
        var pending: [Double] = []
        var period: Double { Double(chunk) / (Double(rate) * (1 + ppm / 1e6)) }
    }

    /// What one run measured, per producer.
    struct Run {
        var engine: Engine
        var clock: SimClock  // the engine reads it unretained: kept alive with it
        var producers: [Producer]
        var primedUnderruns: [UInt64]
        var firstHoldUnderruns: [UInt64]
        var worstLevelErrorMs: [Double]
        var maxEffectiveMs: [Float]
        var maxBufferedMs: [Float]
        /// Largest |correction| and |published estimate| seen at any
        /// second of the run (ppm).
        var maxCorrectionPpm: [Float]
        var maxEstimatePpm: [Float]
        /// Seconds in which the correction read non-zero, and the last one.
        var secondsCorrected: [Int]
        var lastCorrectedSecond: [Int]
    }

    /// One engine, the three voice models and a media source at each drift
    /// of `ppms`, for `seconds` of audio (10 ms render blocks).
    func simulate(ppms: [Double], seconds: Int, seed: UInt64,
                  voices: [Jitter] = [.uniform, .bursts, .late]) throws -> Run {
        let clock = SimClock()
        let e = try Engine({ var c = EngineConfig(); c.maxSources = 8; return c }())
        try clock.install(on: e)
        var producers: [Producer] = []
        for ppm in ppms {
            for jitter in voices {
                let id = try e.addSource(SourceConfig(domain: .call, sampleRate: 16_000, channels: 1))
                producers.append(Producer(id: id, rate: 16_000, channels: 1, ppm: ppm, chunk: 160, jitter: jitter))
            }
            let id = try e.addSource(SourceConfig(domain: .media, sampleRate: 44_100, channels: 2))
            var media = Producer(id: id, rate: 44_100, channels: 2, ppm: ppm, chunk: 4096, jitter: .media)
            media.next = -media.period  // one burst ahead
            producers.append(media)
        }
        var rng = SplitMix64(seed: seed)
        let samples = [Float](repeating: 0.1, count: 8192)
        var out = [Float](repeating: 0, count: 960)
        let n = producers.count
        var run = Run(engine: e, clock: clock, producers: producers,
                      primedUnderruns: Array(repeating: 0, count: n), firstHoldUnderruns: Array(repeating: 0, count: n),
                      worstLevelErrorMs: Array(repeating: 0, count: n), maxEffectiveMs: Array(repeating: 0, count: n),
                      maxBufferedMs: Array(repeating: 0, count: n), maxCorrectionPpm: Array(repeating: 0, count: n),
                      maxEstimatePpm: Array(repeating: 0, count: n),
                      secondsCorrected: Array(repeating: 0, count: n), lastCorrectedSecond: Array(repeating: -1, count: n))
        for block in 0..<(seconds * 100) {
            let now = Double(block) / 100
            for i in producers.indices {
                var p = producers[i]
                switch p.jitter {
                case .media:
                    while p.next <= now { try push(e, &p, samples); p.next += p.period }
                default:
                    while p.next <= now + 0.1 {
                        var arrival = p.next + 0.010
                        switch p.jitter {
                        case .uniform: arrival += (Double(rng.unit()) * 2 - 1) * 0.010
                        case .step:
                            // Uniform jitter, and the delivery delay steps
                            // by +10 ms at 30 s and back at 150 s.
                            arrival += (Double(rng.unit()) * 2 - 1) * 0.010
                            if p.next >= 30 && p.next < 150 { arrival += 0.010 }
                        case .bursts:
                            let phase = p.next.truncatingRemainder(dividingBy: 2)
                            if phase < 0.060 { arrival = p.next - phase + 0.060 + 0.010 }
                        case .late: if p.sent % 50 == 49 { arrival += 0.040 }
                        case .media: break
                        }
                        arrival = max(arrival, p.lastArrival)
                        p.lastArrival = arrival
                        p.pending.append(arrival)
                        p.next += p.period
                        p.sent += 1
                    }
                    while let first = p.pending.first, first <= now {
                        p.pending.removeFirst()
                        try push(e, &p, samples)
                    }
                }
                producers[i] = p
            }
            try out.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 480) }
            clock.advance(frames: 480, rate: 48_000)
            if block == 199 {  // 2 s: every source has primed
                for (i, p) in producers.enumerated() { run.primedUnderruns[i] = try e.stats(for: p.id).underrunFrames }
            }
            if block == 299 {  // 3 s: the first network hold while playing (2.00-2.07 s) is over
                for (i, p) in producers.enumerated() { run.firstHoldUnderruns[i] = try e.stats(for: p.id).underrunFrames }
            }
            if block % 100 == 99 {
                for (i, p) in producers.enumerated() {
                    let s = try e.stats(for: p.id)
                    run.maxCorrectionPpm[i] = max(run.maxCorrectionPpm[i], abs(s.driftPpm))
                    run.maxEstimatePpm[i] = max(run.maxEstimatePpm[i], abs(s.driftEstimatePpm))
                    if s.driftPpm != 0 {
                        run.secondsCorrected[i] += 1
                        run.lastCorrectedSecond[i] = block / 100
                    }
                    guard block >= 60 * 100 else { continue }
                    run.worstLevelErrorMs[i] = max(run.worstLevelErrorMs[i], abs(Double(s.lowWaterMs - s.effectiveTargetMs)))
                    run.maxEffectiveMs[i] = max(run.maxEffectiveMs[i], s.effectiveTargetMs)
                    run.maxBufferedMs[i] = max(run.maxBufferedMs[i], s.bufferedMs)
                }
            }
        }
        run.producers = producers
        return run
    }

    func testZeroGapsAtPlusMinus1000PpmUnderJitter() throws {
        let seconds = Int(ProcessInfo.processInfo.environment["RTMIX_DRIFT_GAP_SECONDS"] ?? "") ?? 600
        let run = try simulate(ppms: [1000, -1000], seconds: seconds, seed: 17)
        let e = run.engine, producers = run.producers
        let primedUnderruns = run.primedUnderruns, firstHoldUnderruns = run.firstHoldUnderruns
        let worstLevelErrorMs = run.worstLevelErrorMs, maxEffectiveMs = run.maxEffectiveMs
        let maxBufferedMs = run.maxBufferedMs
        var report = "DriftJitterTests: \(seconds) s, default configs:"
        for (i, p) in producers.enumerated() {
            let s = try e.stats(for: p.id)
            report += String(format: "\n  %@ %d Hz %+.0f ppm: underrun frames %d (after priming %d, after 3 s %d), events %d, dropped %d, estimate %+.1f ppm, correction %+.0f ppm, low-water %.1f ms (target %.0f, effective %.1f; from 60 s: worst |low-water - effective| %.2f ms, largest effective %.1f ms, max buffered %.1f ms)",
                             p.jitter.rawValue, p.rate, p.ppm, s.underrunFrames, s.underrunFrames - primedUnderruns[i],
                             s.underrunFrames - firstHoldUnderruns[i], s.underrunEvents, s.framesDropped,
                             s.driftEstimatePpm, s.driftPpm, s.lowWaterMs, s.targetMs, s.effectiveTargetMs,
                             worstLevelErrorMs[i], maxEffectiveMs[i], maxBufferedMs[i])
            XCTAssertFalse(s.driftSaturated)
            // Measured (600 s, seed 17, 2026-11-26; before the adaptive
            // target, bursts underran in 69 / 62 episodes and late in 1 / 2).
            switch p.jitter {
            case .uniform, .media, .step:
                // No gap at all, the target is never raised.
                XCTAssertEqual(s.underrunEvents, 0, "\(p.jitter) \(p.ppm) ppm: an underrun")
                XCTAssertEqual(s.effectiveTargetMs, s.targetMs, "\(p.jitter) \(p.ppm) ppm: target raised")
            case .late:
                // The first late packet (0.49 s) empties the 40 ms the source
                // primed to: one underrun while starting (552 frames at
                // +1000 ppm, 1992 at -1000), before 2 s; it re-primes to
                // cover the gap and none follows.
                XCTAssertEqual(s.underrunFrames - primedUnderruns[i], 0, "\(p.jitter) \(p.ppm) ppm: a gap")
                XCTAssertLessThanOrEqual(s.underrunEvents, 1, "\(p.jitter) \(p.ppm) ppm: underruns")
            case .bursts:
                // The first hold while playing (2.00-2.07 s) cannot be
                // foreseen from the render side (the 40 ms the source
                // primed to is all it has): it may underrun once (measured:
                // -1000 ppm, 1512 output frames; +1000 ppm, none). The
                // target then covers the holds and no gap follows.
                XCTAssertEqual(s.underrunFrames - firstHoldUnderruns[i], 0, "\(p.jitter) \(p.ppm) ppm: a gap")
                XCTAssertLessThanOrEqual(s.underrunEvents, 1, "\(p.jitter) \(p.ppm) ppm: underruns")
                XCTAssertLessThanOrEqual(s.underrunFrames, 2400, "\(p.jitter) \(p.ppm) ppm: first hold")
            }
            if seconds >= 300 {
                // Latency follows the jitter: the low-water mark within
                // LEVEL_BOUND ms of the effective target from 60 s on, the
                // effective target at most EFF_BOUND ms.
                // Uniform +1000 ppm measured 10.66 ms with the polyphase
                // fixed stage (2026-11-26), 8.51 ms with the speexdsp one
                // it replaced: the controller's transient excursions move by
                // a few ms with how the fixed stage consumes its input
                // (look-ahead 16 instead of 24 input frames); no gap either
                // way. 12 ms, as DriftSimulationTests' voice bound.
                XCTAssertLessThanOrEqual(worstLevelErrorMs[i], p.jitter == .bursts ? 20 : 12,
                                         "\(p.jitter) \(p.ppm) ppm: low-water vs effective target")
                XCTAssertLessThanOrEqual(maxEffectiveMs[i], p.jitter == .bursts ? 100 : s.targetMs + 10,
                                         "\(p.jitter) \(p.ppm) ppm: effective target")
            }
            if seconds >= 300 && p.jitter == .media {
                XCTAssertEqual(Double(s.lowWaterMs), Double(s.targetMs), accuracy: 5, "\(p.jitter) \(p.ppm) ppm: latency")
                XCTAssertEqual(Double(s.driftEstimatePpm), p.ppm, accuracy: 20, "\(p.jitter) \(p.ppm) ppm: estimate")
            }
        }
        print(report)
    }

    /// Rule 1 under delivery jitter: producers on the render clock (0 ppm)
    /// are never corrected and never show drift, whatever their delivery:
    /// - uniform: ±10 ms jitter;
    /// - step: ±10 ms jitter, the delay 10 ms longer from 30 s to 150 s;
    /// - bursts, late: no jitter besides the holds or the late packet; after
    ///   ~17 s their packets land one block later for good (the
    ///   simulation's exact arrival times flip to the next block): a
    ///   delivery-delay step too;
    /// - media: 4096-frame decoder bursts.
    /// A one-time delay step tilts the 30 s regressions for a minute or
    /// more; rule 2's step-versus-ramp test keeps it from counting as
    /// drift. Measured 2026-11-26 (600 s, seeds 17, 18, 19): largest
    /// correction and published estimate 0 ppm for all of them. Before the
    /// test: step, bursts and late were corrected by up to 968-972 / 1372
    /// / 1374 ppm for 136-138 / 241 / 241 s (published estimates up to
    /// 380 / 594 / 818 ppm), then released by rule 4.
    func testJitteryProducersOnTheRenderClockAreNeverCorrected() throws {
        let seconds = Int(ProcessInfo.processInfo.environment["RTMIX_DRIFT_GAP_SECONDS"] ?? "") ?? 600
        for seed: UInt64 in [17, 18, 19] {
            let run = try simulate(ppms: [0], seconds: seconds, seed: seed, voices: [.uniform, .step, .bursts, .late])
            for (i, p) in run.producers.enumerated() {
                let s = try run.engine.stats(for: p.id)
                print(String(format: "DriftJitterTests: render clock, seed %d, %@: largest correction %.1f ppm, largest estimate %.1f ppm, corrected for %d s (last at %d s), correction at the end %.1f ppm, underrun events %d, low-water %.1f ms",
                             seed, p.jitter.rawValue, run.maxCorrectionPpm[i], run.maxEstimatePpm[i], run.secondsCorrected[i],
                             run.lastCorrectedSecond[i], s.driftPpm, s.underrunEvents, s.lowWaterMs))
                XCTAssertEqual(run.maxCorrectionPpm[i], 0, "seed \(seed) \(p.jitter): corrected on the render clock")
                XCTAssertEqual(run.maxEstimatePpm[i], 0, "seed \(seed) \(p.jitter): drift shown on the render clock")
                if p.jitter == .uniform || p.jitter == .media || p.jitter == .step {
                    XCTAssertEqual(s.underrunEvents, 0, "seed \(seed) \(p.jitter): an underrun")
                }
            }
        }
    }

    func push(_ e: Engine, _ p: inout Producer, _ samples: [Float]) throws {
        let n = p.chunk * p.channels
        let taken = try samples.withUnsafeBufferPointer {
            try e.push(UnsafeBufferPointer(rebasing: $0[0..<n]), to: p.id, channels: p.channels)
        }
        XCTAssertEqual(taken, p.chunk, "a push was refused or cut")
    }
}

