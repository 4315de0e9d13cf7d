import Foundation
import Synchronization
import XCTest
@testable import RTMix
import RTMixSignals
import CRTMixHeader

/// Regression tests for issue 11 ("Hardening"). Each test failed before its fix.
final class HardeningTests: XCTestCase {
    // MARK: 1. int16 symmetry

    /// Every int16 value, pushed as int16 into a same-format (bypass) source
    /// and rendered as int16, comes back bit-exact (limiter at 0 dBFS, so
    /// that full scale is not limited).
    func testS16AllValuesBitExactThroughBypass() throws {
        let e = makeEngine { $0.channels = 1; $0.limiterThresholdDb = 0 }
        var sc = SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1)
        sc.bufferFrames = 65_536
        let id = try e.addSource(sc)
        let input: [Int16] = (0..<65_536).map { Int16(truncatingIfNeeded: $0 - 32_768) }
        let accepted = try input.withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) }
        XCTAssertEqual(accepted, 65_536)
        var out = [Int16](repeating: 0, count: 65_536)
        for block in 0..<16 {
            try out.withUnsafeMutableBufferPointer { buf in
                try e.render(into: UnsafeMutableBufferPointer(rebasing: buf[(block * 4096)..<((block + 1) * 4096)]),
                             frames: 4096)
            }
        }
        let differing = zip(input, out).filter { $0 != $1 }.count
        XCTAssertEqual(differing, 0, "\(differing) of 65536 int16 values changed")
        XCTAssertEqual(e.stats().limiterActiveFrames, 0)
    }

    /// float → int16 rounds to nearest (x·32768) and saturates.
    func testFloatToS16RoundsToNearestAndSaturates() {
        var input: [Float] = [0.49999997 / 32_768, -0.49999997 / 32_768, 0.5000001 / 32_768, 1, -1, 1.5, -1.5,
                              32_767.4 / 32_768, 32_767.6 / 32_768, -32_768.4 / 32_768, 0]
        var seed: UInt64 = 7
        for _ in 0..<10_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            input.append(Float(Int64(seed >> 40) - (1 << 23)) / Float(1 << 23) * 1.01)
        }
        var out = [Int16](repeating: 0, count: input.count)
        input.withUnsafeBufferPointer { i in
            out.withUnsafeMutableBufferPointer { o in Mixing.convertToS16(i.baseAddress!, o.baseAddress!, count: i.count) }
        }
        var wrong = 0
        for (x, y) in zip(input, out) {
            let expected = Int16(max(-32_768, min(32_767, (Double(x) * 32_768).rounded(.toNearestOrEven))))
            if y != expected { wrong += 1 }
        }
        XCTAssertEqual(out[0], 0)
        XCTAssertEqual(out[1], 0)
        XCTAssertEqual(out[3], 32_767)
        XCTAssertEqual(out[4], -32_768)
        XCTAssertEqual(wrong, 0, "\(wrong) of \(input.count) conversions not round-to-nearest")
    }

    // MARK: 2. limiter distortion on sustained overloads

    /// THD+N (dB) of `out` around a fitted sine of `frequency`.
    func thdN(_ out: ArraySlice<Float>, frequency: Double) -> Double {
        -Signal.fitSine(out, frequency: frequency, rate: 48_000).snrDb
    }

    func testLimiterSustainedOverloadLowDistortion() throws {
        var worst = -200.0
        var report: [String] = []
        for frequency in [50.0, 100.0, 997.0, 5_000.0] {
            for gain: Float in [1.12, 1.5, 2.0] {
                let e = makeEngine { $0.channels = 1 }
                var sc = SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1)
                sc.gain = gain
                sc.bufferFrames = 65_536
                let id = try e.addSource(sc)
                e.pushAll(Signal.sine(frequency: frequency, rate: 48_000, frames: 48_000, amplitude: 1), to: id,
                          channels: 1)
                let out = e.renderFrames(48_000)
                XCTAssertTrue(out.allSatisfy { $0.isFinite && abs($0) <= 1 })
                let d = thdN(out[24_000..<48_000], frequency: frequency)
                report.append(String(format: "%.0f Hz ×%.2f: %.1f dB", frequency, gain, d))
                worst = max(worst, d)
            }
        }
        print("limiter THD+N: " + report.joined(separator: ", "))
        XCTAssertLessThanOrEqual(worst, -60, report.joined(separator: ", "))
    }

    /// Below the threshold the limiter stays bit-exact, before and after an
    /// overload has been released.
    func testLimiterBitExactBelowThresholdAfterRelease() {
        var l = Limiter(thresholdDb: -1, sampleRate: 48_000)
        var loud = Signal.sine(frequency: 100, rate: 48_000, frames: 4_800, amplitude: 1.5)
        _ = loud.withUnsafeMutableBufferPointer { l.process($0.baseAddress!, frames: 4_800, channels: 1) }
        var quiet = Signal.noise(frames: 4_800, channels: 1, amplitude: 0.5, seed: 9)
        for _ in 0..<40 {  // 4 s: hold and release are over
            quiet = Signal.noise(frames: 4_800, channels: 1, amplitude: 0.5, seed: 9)
            _ = quiet.withUnsafeMutableBufferPointer { l.process($0.baseAddress!, frames: 4_800, channels: 1) }
        }
        var x = Signal.noise(frames: 4_800, channels: 1, amplitude: 0.89, seed: 11)
        let original = x
        let r = x.withUnsafeMutableBufferPointer { l.process($0.baseAddress!, frames: 4_800, channels: 1) }
        XCTAssertEqual(r.changedFrames, 0)
        XCTAssertTrue(x == original)
    }

    // MARK: 3. gain ramps

    func testLongRampNeverOvershootsAndEndsSmoothly() {
        for (start, end, frames) in [(Float(0), Float(16), 48_000), (Float(0.3), Float(1.0), 192_000),
                                     (Float(16), Float(0), 48_000), (Float(1), Float(0.1), 192_000)] {
            var r = GainRamp(initial: start, rampFrames: frames)
            r.setTarget(end)
            let step = (end - start) / Float(frames)
            var previous = start
            var worstStepError: Float = 0
            var outside = 0
            for _ in 0..<frames {
                let g = r.next()
                if g > max(start, end) || g < min(start, end) { outside += 1 }
                worstStepError = max(worstStepError, abs((g - previous) - step))
                previous = g
            }
            print("ramp \(start)→\(end) over \(frames): worst step error \(worstStepError / abs(step)) steps, \(outside) outside")
            XCTAssertEqual(previous, end)
            XCTAssertEqual(outside, 0, "\(start)→\(end): \(outside) gains outside the ramp's range")
            // Each step within 5 % of the ideal step (float rounding of the
            // absolute value), including the last one.
            XCTAssertLessThanOrEqual(worstStepError, abs(step) * 0.05 + end.ulp,
                                     "\(start)→\(end) over \(frames): worst step error \(worstStepError), step \(step)")
        }
    }

    /// skip() lands where next() would have.
    func testRampSkipMatchesNext() {
        var a = GainRamp(initial: 0.3, rampFrames: 192_000)
        var b = a
        a.setTarget(1); b.setTarget(1)
        for _ in 0..<100_000 { _ = a.next() }
        b.skip(100_000)
        XCTAssertEqual(a.current, b.current)
    }

    // MARK: 4. denormals

    func testSubnormalInputNeverReachesOutput() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        let tiny = Float.leastNormalMagnitude
        var x = [Float](repeating: 0, count: 4_800)
        for i in 0..<4_800 {
            switch i % 4 {
            case 0: x[i] = Float.leastNonzeroMagnitude * Float(i % 1000 + 1)  // subnormal
            case 1: x[i] = -tiny / 3                                          // subnormal
            case 2: x[i] = tiny * 1.5  // normal, but × gain 0.25 is subnormal
            default: x[i] = 0
            }
        }
        try e.setGain(0.25, for: id)
        e.pushAll(Signal.constant(0, frames: 4_800, channels: 1), to: id, channels: 1)
        _ = e.renderFrames(4_800)  // ramp settles
        e.pushAll(x, to: id, channels: 1)
        let out = e.renderFrames(4_800)
        let subnormal = out.filter { $0.isSubnormal }.count
        XCTAssertEqual(subnormal, 0, "\(subnormal) subnormal output samples")
    }

    /// Subnormals are flushed at push, before the resamplers see them.
    func testPushFlushesSubnormals() {
        let input: [Float] = [Float.leastNonzeroMagnitude, -Float.leastNormalMagnitude / 2, Float.leastNormalMagnitude,
                              0.5, .nan]
        var out = [Float](repeating: 1, count: input.count)
        let bad = input.withUnsafeBufferPointer { i in
            out.withUnsafeMutableBufferPointer { Mixing.copySanitized(i.baseAddress!, $0.baseAddress!, count: i.count) }
        }
        XCTAssertEqual(bad, 1)
        XCTAssertEqual(out, [0, 0, Float.leastNormalMagnitude, 0.5, 0])
    }

    /// The four-at-a-time sanitiser gives, bit for bit, what the one-sample
    /// rule gives (finite and normal → kept, subnormal or ±0 → +0, NaN or
    /// ±Inf → +0 and counted), at every length and alignment.
    func testCopySanitizedMatchesTheScalarRuleBitForBit() {
        let specials: [Float] = [.nan, -.nan, .signalingNaN, .infinity, -.infinity, 0, -0.0,
                                 .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
                                 -.leastNormalMagnitude, .leastNormalMagnitude.nextDown, -.leastNormalMagnitude.nextDown,
                                 .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1, -1, 0.5, -0.25, 3e-30, -7e-39]
        var rng = SplitMix64(seed: 9)
        var input = [Float](repeating: 0, count: 64)
        for round in 0..<200 {
            for i in input.indices {
                input[i] = rng.unit() < 0.6 ? specials[Int(rng.unit() * Float(specials.count)) % specials.count]
                                             : (rng.unit() * 2 - 1) * 4
            }
            let start = round % 5, count = (round * 7) % 40
            var out = [Float](repeating: 9, count: 64)
            let bad = input.withUnsafeBufferPointer { i in
                out.withUnsafeMutableBufferPointer {
                    Mixing.copySanitized(i.baseAddress! + start, $0.baseAddress! + start, count: count)
                }
            }
            var expectedBad = 0
            for k in 0..<64 {
                let x = input[k]
                let want: Float
                if k < start || k >= start + count {
                    want = 9
                } else if !x.isFinite {
                    want = 0
                    expectedBad += 1
                } else {
                    want = x.magnitude < Float.leastNormalMagnitude ? 0 : x
                }
                XCTAssertEqual(out[k].bitPattern, want.bitPattern, "round \(round), sample \(k): \(x) -> \(out[k])")
            }
            XCTAssertEqual(bad, expectedBad, "round \(round)")
        }
    }

    func testLimiterAndRampStateNeverSubnormal() {
        var l = Limiter(thresholdDb: -1, sampleRate: 48_000)
        var bad = 0
        var loud = Signal.sine(frequency: 100, rate: 48_000, frames: 4_800, amplitude: 1.5)
        _ = loud.withUnsafeMutableBufferPointer { l.process($0.baseAddress!, frames: 4_800, channels: 1) }
        for _ in 0..<200 {
            var quiet = [Float](repeating: 1e-30, count: 480)
            _ = quiet.withUnsafeMutableBufferPointer { l.process($0.baseAddress!, frames: 480, channels: 1) }
            if l.reduction.isSubnormal { bad += 1 }
        }
        var r = GainRamp(initial: 1, rampFrames: 480)
        r.setTarget(Float.leastNormalMagnitude / 4)  // a subnormal target
        for _ in 0..<1_000 { if r.next().isSubnormal { bad += 1 } }
        XCTAssertEqual(bad, 0)
    }

    // MARK: 7. index wrap

    func testRingIndicesWrapPastIntMax() {
        let ring = SPSCRing(capacityFrames: 8, channels: 1, startIndex: Int.max - 20)!
        var next: Float = 0
        var expected: Float = 0
        for round in 0..<50 {
            let w = ring.writableRegions(maxFrames: 3 + round % 5)
            for i in 0..<w.firstFrames { w.first[i] = next; next += 1 }
            for i in 0..<w.secondFrames { w.second[i] = next; next += 1 }
            ring.commitWrite(w.frames)
            XCTAssertLessThanOrEqual(ring.bufferedFrames(), 8)
            let r = ring.readableRegions(maxFrames: 2 + round % 4)
            for i in 0..<r.firstFrames { XCTAssertEqual(r.first[i], expected); expected += 1 }
            for i in 0..<r.secondFrames { XCTAssertEqual(r.second[i], expected); expected += 1 }
            ring.commitRead(r.frames)
        }
        XCTAssertGreaterThan(expected, 100)
    }

    func testEventQueueIndicesWrapPastIntMax() {
        let q = EventQueue(startIndex: Int.max - 300, rateLimited: false)
        var read = 0
        for i in 0..<1_000 {
            q.post(.renderSlow, source: 0, frameTime: UInt64(i), value: Int64(i))
            if i % 3 == 0, let ev = q.next() { XCTAssertEqual(ev.kind, 6); read += 1 }
        }
        while q.next() != nil { read += 1 }
        XCTAssertGreaterThan(read, 300)
    }

    // MARK: 8. torn format reads

    func testGetConfigNeverReturnsATornFormat() throws {
        let e = makeEngine { $0.channels = 1; $0.sampleRate = 48_000 }
        final class Flags: Sendable {
            let stop = Atomic<Bool>(false)
            let torn = Atomic<Int>(0)
            let reads = Atomic<Int>(0)
        }
        let flags = Flags()
        let reader = Thread {
            let handle = OpaquePointer(e.core)
            var cfg = rtmix_engine_config()
            while !flags.stop.load(ordering: .relaxed) {
                cfg.size = UInt32(MemoryLayout<rtmix_engine_config>.size)
                _ = rtmix_engine_get_config_impl(handle, &cfg)
                let ok = (cfg.sample_rate == 48_000 && cfg.channels == 1) || (cfg.sample_rate == 16_000 && cfg.channels == 2)
                if !ok { flags.torn.add(1, ordering: .relaxed) }
                let c = e.config
                if !((c.sampleRate == 48_000 && c.channels == 1) || (c.sampleRate == 16_000 && c.channels == 2)) {
                    flags.torn.add(1, ordering: .relaxed)
                }
                flags.reads.add(1, ordering: .relaxed)
            }
        }
        reader.start()
        let deadline = Date().addingTimeInterval(2)
        var flips = 0
        while Date() < deadline {
            try e.setOutputFormat(sampleRate: 16_000, channels: 2)
            try e.setOutputFormat(sampleRate: 48_000, channels: 1)
            flips += 2
        }
        flags.stop.store(true, ordering: .relaxed)
        while !reader.isFinished { usleep(1000) }
        let torn = flags.torn.load(ordering: .relaxed)
        print("format flips \(flips), reads \(flags.reads.load(ordering: .relaxed)), torn \(torn)")
        XCTAssertEqual(torn, 0)
    }

    // MARK: 10. output struct size write-back

    func testOutputStructsReportTheSizeFilled() throws {
        let e = makeEngine()
        let handle = OpaquePointer(e.core)
        let librarySize = MemoryLayout<rtmix_engine_config>.size
        // A newer caller's larger struct: the size written back is ours, the
        // tail it has and we do not know is untouched.
        let big = UnsafeMutableRawPointer.allocate(byteCount: librarySize + 16, alignment: 8)
        defer { big.deallocate() }
        big.initializeMemory(as: UInt8.self, repeating: 0xAB, count: librarySize + 16)
        big.storeBytes(of: UInt32(librarySize + 16), as: UInt32.self)
        XCTAssertEqual(rtmix_engine_get_config_impl(handle, big.assumingMemoryBound(to: rtmix_engine_config.self)), 0)
        XCTAssertEqual(big.load(as: UInt32.self), UInt32(librarySize))
        XCTAssertEqual(big.load(fromByteOffset: 4, as: UInt32.self), 48_000)
        XCTAssertEqual(big.load(fromByteOffset: librarySize, as: UInt8.self), 0xAB)

        var stats = [UInt8](repeating: 0, count: MemoryLayout<rtmix_engine_stats>.size + 8)
        let statsSize = UInt32(MemoryLayout<rtmix_engine_stats>.size)
        try stats.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: statsSize + 8, as: UInt32.self)
            XCTAssertEqual(rtmix_engine_get_stats_impl(handle, raw.baseAddress!.assumingMemoryBound(to: rtmix_engine_stats.self)), 0)
            XCTAssertEqual(raw.load(as: UInt32.self), statsSize)
            // An older caller's smaller struct (below version 0) is refused and untouched.
            let belowV0 = CConversion.minimumStatsSize - 8
            raw.storeBytes(of: belowV0, as: UInt32.self)
            XCTAssertEqual(rtmix_engine_get_stats_impl(handle, raw.baseAddress!.assumingMemoryBound(to: rtmix_engine_stats.self)),
                           RTMixError.invalidArgument.code)
            XCTAssertEqual(raw.load(as: UInt32.self), belowV0)
            // A v0 caller (112 bytes) gets exactly the v0 fields.
            raw.storeBytes(of: CConversion.minimumStatsSize, as: UInt32.self)
            XCTAssertEqual(rtmix_engine_get_stats_impl(handle, raw.baseAddress!.assumingMemoryBound(to: rtmix_engine_stats.self)), 0)
            XCTAssertEqual(raw.load(as: UInt32.self), CConversion.minimumStatsSize)
            _ = try XCTUnwrap(raw.baseAddress)
        }

        var ev = [UInt8](repeating: 0, count: MemoryLayout<rtmix_event>.size + 24)
        ev.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt32(MemoryLayout<rtmix_event>.size + 24), as: UInt32.self)
            XCTAssertEqual(rtmix_engine_next_event_impl(handle, raw.baseAddress!.assumingMemoryBound(to: rtmix_event.self)), 0)
            XCTAssertEqual(raw.load(as: UInt32.self), UInt32(MemoryLayout<rtmix_event>.size))
        }
    }
}
