import XCTest
@testable import RTMix
import RTMixSignals

/// Issue 17: drift control with DEFAULT configs (`SourceConfig(domain:...)`,
/// `EngineConfig()`: what `rtmix_source_config_init` / `rtmix_engine_config_init`
/// give) does nothing where nothing is needed, and corrects only what drifts.
final class DriftDefaultsTests: XCTestCase {
    /// Lockstep: the host pushes exactly one block of source audio before
    /// each render (a render-driven host, a file tool). Returns the output.
    func lockstep(_ e: Engine, _ id: SourceID, input: [Float], channels: Int, sourceBlock: Int,
                  outBlock: Int = 480) throws -> [Float] {
        var out = [Float]()
        var at = 0
        let blocks = input.count / channels / sourceBlock
        for _ in 0..<blocks {
            let chunk = Array(input[(at * channels)..<((at + sourceBlock) * channels)])
            e.pushAll(chunk, to: id, channels: channels)
            at += sourceBlock
            out += e.renderFrames(outBlock)
            XCTAssertEqual(try e.stats(for: id).driftPpm, 0, "a correction was applied")
        }
        return out
    }

    /// The delay d at which `out[i] == input[i - d]` for every sample of
    /// `window` (nil: no such delay: the audio was altered).
    func exactDelay(_ out: [Float], _ input: [Float], window: Range<Int>, maxDelay: Int) -> Int? {
        (0...maxDelay).first { d in window.allSatisfy { $0 - d >= 0 && out[$0] == input[$0 - d] } }
    }

    func testLockstepSameRateIsBitExactForEveryDomain() throws {
        for domain in [Domain.call, .media] {
            let e = makeEngine()
            let id = try e.addSource(SourceConfig(domain: domain, sampleRate: 48_000, channels: 2))
            let input = Signal.noise(frames: 48_000 * 20, channels: 2, amplitude: 0.5, seed: 7)
            let out = try lockstep(e, id, input: input, channels: 2, sourceBlock: 480)
            // The whole output after the start threshold, 20 s (past the
            // drift estimator's 10 s warm-up): every sample exact.
            let d = exactDelay(out, input, window: (48_000 * 2 * 1)..<out.count, maxDelay: 48_000)
            XCTAssertNotNil(d, "\(domain): not bit-exact")
            let s = try e.stats(for: id)
            XCTAssertEqual(s.driftPpm, 0)
            XCTAssertFalse(s.driftSaturated)
            XCTAssertEqual(s.underrunEvents, 0)
            XCTAssertLessThan(abs(s.driftEstimatePpm), 1, "\(domain): estimate \(s.driftEstimatePpm) ppm")
        }
    }

    func testLockstepInt16RoundTripIsExact() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig(domain: .media, sampleRate: 48_000, channels: 1))
        // Silence (the start fades in), a marker (1...100), every int16
        // value, then silence to let it all out.
        let marker = (1...100).map { Int16($0) }
        // Every value the limiter (threshold -1 dB = 29 205) leaves alone
        // first, then the rest (whose limiting would color what follows).
        let quiet = (-29_000...29_000).map { Int16($0) }
        let loud = (-32_768...32_767).filter { abs($0) > 29_000 }.map { Int16($0) }
        let values = quiet + loud
        let input = [Int16](repeating: 0, count: 4800) + marker + values + [Int16](repeating: 0, count: 480 * 40)
        var out = [Int16]()
        var block = [Int16](repeating: 0, count: 480)
        for b in 0..<(input.count / 480) {
            let chunk = Array(input[(b * 480)..<((b + 1) * 480)])
            let n = try chunk.withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) }
            XCTAssertEqual(n, 480)
            try block.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 480) }
            out += block
        }
        guard let m = (0..<(out.count - 100)).first(where: { i in (0..<100).allSatisfy { out[i + $0] == marker[$0] } })
        else { return XCTFail("the marker did not come out exactly") }
        let start = m + 100
        guard start + 65_536 <= out.count else { return XCTFail("the values did not all come out") }
        let played = Array(out[start..<(start + 65_536)])
        var changed = 0
        for i in quiet.indices where played[i] != quiet[i] { changed += 1 }
        XCTAssertEqual(changed, 0, "int16 values changed by a same-rate default source")
    }

    /// A 1 kHz tone from a 16 kHz call source and a 44.1 kHz media source
    /// (both the polyphase FIR at its fixed ratio), each fed in
    /// lockstep with default configs: the tone comes out at exactly 1 kHz.
    func testLockstepResampledPitchIsExact() throws {
        for (domain, rate, sourceBlock) in [(Domain.call, 16_000, 160), (.media, 44_100, 441)] {
            let e = makeEngine { $0.channels = 1 }
            let id = try e.addSource(SourceConfig(domain: domain, sampleRate: rate, channels: 1))
            let input = Signal.sine(frequency: 1000, rate: rate, frames: rate * 14, amplitude: 0.5)
            let out = try lockstep(e, id, input: input, channels: 1, sourceBlock: sourceBlock)
            // 0.5–1.5 s (where the issue saw 999.18 Hz) and 12–13 s (after
            // the estimator's warm-up).
            for window in [(24_000..<72_000), (576_000..<624_000)] {
                let fit = Signal.fitSine(out[window], frequency: 1000, rate: 48_000)
                XCTAssertGreaterThanOrEqual(fit.snrDb, 90, "\(rate) Hz, \(window): SNR of a 1 kHz fit")
                XCTAssertEqual(Signal.db(fit.amplitude / 0.5), 0, accuracy: 0.01)
                print(String(format: "DriftDefaultsTests: lockstep %d Hz -> 48 kHz, 1 kHz fit over %.1f-%.1f s: SNR %.1f dB",
                             rate, Double(window.lowerBound) / 48_000, Double(window.upperBound) / 48_000, fit.snrDb))
            }
        }
    }

    /// Producers on the render clock that set their own level: pacing on
    /// `writableFrames` (the ring kept full), pushing until refused, a
    /// decoder refilling 4096-frame blocks below a threshold of its own, a
    /// voice primed 80 ms deep. None is corrected, none saturates, 60 s.
    func testSelfPacedProducersAreNeverCorrected() throws {
        enum Style: CaseIterable { case writable, untilRefused, threshold, primed80 }
        for style in Style.allCases {
            let e = makeEngine()
            let domain: Domain = style == .primed80 ? .call : .media
            let id = try e.addSource(SourceConfig(domain: domain, sampleRate: 48_000, channels: 2))
            let noise = Signal.noise(frames: 8192, channels: 2, amplitude: 0.3, seed: 3)
            var sent = 0
            func push(_ frames: Int) throws -> Int {
                let n = try noise.withUnsafeBufferPointer {
                    try e.push(UnsafeBufferPointer(rebasing: $0[0..<(frames * 2)]), to: id, channels: 2)
                }
                sent += n
                return n
            }
            if style == .primed80 { _ = try push(3840) }
            var maxAbsPpm: Float = 0
            for _ in 0..<(60 * 100) {
                switch style {
                case .writable:
                    let w = try e.writableFrames(of: id)
                    if w > 0 { _ = try push(min(w, 8192)) }
                case .untilRefused:
                    while try push(4096) == 4096 {}
                case .threshold:
                    while try e.bufferedFrames(of: id) < 48 * 150 { _ = try push(4096) }
                case .primed80:
                    _ = try push(480)
                }
                _ = e.renderFrames(480)
                let st = try e.stats(for: id)
                maxAbsPpm = max(maxAbsPpm, abs(st.driftPpm))
            }
            let s = try e.stats(for: id)
            XCTAssertEqual(maxAbsPpm, 0, "\(style): corrected")
            XCTAssertFalse(s.driftSaturated, "\(style)")
            XCTAssertEqual(s.underrunEvents, 0, "\(style)")
            print(String(format: "DriftDefaultsTests: %@: largest correction %.0f ppm, estimate %+.2f ppm, low-water %.1f ms",
                         "\(style)", maxAbsPpm, s.driftEstimatePpm, s.lowWaterMs))
        }
    }

    /// The realistic host on one clock: an RTC thread pushing 20 ms
    /// voice packets with ±10 ms delivery jitter, a player pushing 4096-frame
    /// 44.1 kHz blocks whenever it holds less than 100–200 ms (varying), and
    /// the render thread — all on the render clock. Nothing is corrected in
    /// 60 s; no underrun after the start.
    func testOneClockHostIsNeverCorrected() throws {
        let e = makeEngine()
        let voice = try e.addSource(SourceConfig(domain: .call, sampleRate: 16_000, channels: 1))
        let media = try e.addSource(SourceConfig(domain: .media, sampleRate: 44_100, channels: 2))
        var rng = SplitMix64(seed: 11)
        let v = [Float](repeating: 0.1, count: 320)
        let m = [Float](repeating: 0.1, count: 8192)
        var arrivals: [Double] = []
        var nextSend = 0.0
        var last = 0.0
        var maxPpm: Float = 0
        var threshold = 0.15
        for block in 0..<(60 * 100) {
            let now = Double(block) / 100
            while nextSend <= now + 0.05 {
                let arrival = max(last, nextSend + 0.010 + (Double(rng.unit()) * 2 - 1) * 0.010)
                last = arrival
                arrivals.append(arrival)
                nextSend += 0.020
            }
            while let a = arrivals.first, a <= now {
                arrivals.removeFirst()
                e.pushAll(v, to: voice, channels: 1)
            }
            if block % 100 == 0 { threshold = 0.1 + 0.1 * Double(rng.unit()) }
            while Double(try e.bufferedFrames(of: media)) < threshold * 44_100 { e.pushAll(m, to: media, channels: 2) }
            _ = e.renderFrames(480)
            let ms = try e.stats(for: media)
            maxPpm = max(maxPpm, abs(try e.stats(for: voice).driftPpm), abs(ms.driftPpm))
        }
        XCTAssertEqual(maxPpm, 0, "a one-clock host was corrected")
        for id in [voice, media] {
            let s = try e.stats(for: id)
            XCTAssertEqual(s.underrunEvents, 0)
            // No drift shown: the reported estimate is 0 unless significant
            // (the refiller's threshold jumps between 100 and 200 ms every
            // second: its raw slope is noise of hundreds of ppm).
            XCTAssertLessThan(abs(s.driftEstimatePpm), Float(DriftController.engagePpm * 1e6))
            print(String(format: "DriftDefaultsTests: one-clock host %d Hz: estimate %+.2f ppm, low-water %.1f ms",
                         s.sampleRate, s.driftEstimatePpm, s.lowWaterMs))
        }
    }

    /// The controller on its own: a level the producer holds, whatever the
    /// controller does, releases control instead of winding it up.
    func testLevelThatDoesNotRespondReleasesControl() {
        var c = DriftController(targetFrames: 1920, sampleRate: 48_000)
        var consumed = 0.0
        var worst = 0.0
        // Level held at 480 frames (10 ms), then the producer deepens to
        // 9600 (200 ms) at 30 s and holds that: the level left its band, and
        // is the producer's.
        for block in 0..<(240 * 100) {
            let level = block < 3000 ? 480.0 : 9600.0
            worst = max(worst, abs(c.update(level: level, consumed: consumed, blockSeconds: 0.01)))
            consumed += 480
        }
        XCTAssertFalse(c.engaged)
        XCTAssertGreaterThanOrEqual(c.releases, 1)
        XCTAssertEqual(c.current, 0)
        XCTAssertFalse(c.saturated)
        XCTAssertLessThan(worst, DriftController.limit)
    }
}
