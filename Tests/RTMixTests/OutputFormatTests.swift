import Foundation
import Synchronization
import XCTest
@testable import RTMix

/// Changing the output format of a running engine (a route change to
/// Bluetooth HFP at 16 kHz mono and back).
final class OutputFormatTests: XCTestCase {
    func testSwitchToHFPAndBackKeepsSourcesAndAccuracy() throws {
        let e = makeEngine()
        let media = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        let voice = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 16_000, channels: 1))
        try e.setGain(0.5, for: voice)
        try e.setMuted(true, for: voice)
        let tone = Signal.sine(frequency: 1000, rate: 48_000, frames: 24_800, channels: 2, amplitude: 0.4)
        e.pushAll(Array(tone[..<(4_800 * 2)]), to: media, channels: 2)
        _ = e.renderFrames(960)

        // HFP: 16 kHz mono. The 48 kHz media source is now resampled, the
        // 16 kHz voice now bypasses.
        try e.setOutputFormat(sampleRate: 16_000, channels: 1)
        XCTAssertEqual(e.config.sampleRate, 16_000)
        XCTAssertEqual(e.config.channels, 1)
        XCTAssertEqual(e.resamplerBackend(of: media), .polyphase)
        XCTAssertNil(e.resamplerBackend(of: voice))
        e.pushAll(Array(tone[(4_800 * 2)...]), to: media, channels: 2)  // the same tone, continued
        let hfp = e.renderFrames(7_000, block: 160)  // 10 ms blocks at 16 kHz
        XCTAssertEqual(hfp.count, 7_000)
        let fit = Signal.fitSine(hfp[800..<6_800], frequency: 1000, rate: 16_000)
        XCTAssertEqual(Signal.db(fit.amplitude / 0.4), 0, accuracy: 0.05)
        XCTAssertGreaterThan(fit.snrDb, 60)
        // Gains and mute survived the switch.
        XCTAssertEqual(try e.stats(for: voice).gain, 0.5)
        XCTAssertTrue(try e.stats(for: voice).muted)

        // Back to 48 kHz stereo: the frames still in the ring play through
        // the bypass again, bit for bit.
        try e.setOutputFormat(sampleRate: 48_000, channels: 2)
        XCTAssertNil(e.resamplerBackend(of: media))
        try e.setMuted(false, for: voice)
        let s = try e.stats(for: media)
        XCTAssertGreaterThan(s.bufferedFrames, 1_000)
        let rest = Array(tone[(Int(s.framesConsumed) * 2)...])
        XCTAssertEqual(rest.count, s.bufferedFrames * 2)
        XCTAssertTrue(e.renderFrames(s.bufferedFrames) == rest)
    }

    func testInvalidFormatsChangeNothing() throws {
        let e = makeEngine()
        for (rate, ch) in [(7_999, 2), (192_001, 1), (48_000, 0), (48_000, 3)] {
            XCTAssertThrowsError(try e.setOutputFormat(sampleRate: rate, channels: ch)) {
                XCTAssertEqual($0 as? RTMixError, .unsupportedFormat)
            }
        }
        XCTAssertEqual(e.config.sampleRate, 48_000)
        XCTAssertEqual(e.config.channels, 2)
        XCTAssertNoThrow(try e.setOutputFormat(sampleRate: 48_000, channels: 2))  // same: no-op
    }

    /// A Swift caller's buffer sized for the old format is refused, never
    /// overrun, and zero-filled.
    func testRenderChecksCapacityAgainstCurrentFormat() throws {
        let e = makeEngine { $0.channels = 1 }
        var small = [Float](repeating: 7, count: 480)
        try small.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 480) }
        try e.setOutputFormat(sampleRate: 48_000, channels: 2)
        small = [Float](repeating: 7, count: 480)
        XCTAssertThrowsError(try small.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 480) }) {
            XCTAssertEqual($0 as? RTMixError, .invalidArgument)
        }
        XCTAssertTrue(small.allSatisfy { $0 == 0 })
    }

    /// Format changes while a renderer and a producer run: every change
    /// either succeeds or reports badState; nothing crashes, the output
    /// stays finite and bounded, and frames are conserved.
    func testFormatChangesWhileRendering() throws {
        let e = makeEngine { $0.maxFrames = 1024 }
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 44_100, channels: 2))
        let stop = Atomic<Bool>(false)
        let renders = Atomic<Int>(0), refused = Atomic<Int>(0), bad = Atomic<Int>(0)
        let engine = e
        let renderer = Thread {
            var out = [Float](repeating: 0, count: 2048)
            while !stop.load(ordering: .acquiring) {
                do {
                    try out.withUnsafeMutableBufferPointer { try engine.render(into: $0, frames: 160) }
                    renders.wrappingAdd(1, ordering: .relaxed)
                    if out.contains(where: { !$0.isFinite || abs($0) >= 1 }) { bad.wrappingAdd(1, ordering: .relaxed) }
                } catch {
                    if (error as? RTMixError) != .badState { bad.wrappingAdd(1, ordering: .relaxed) }
                    refused.wrappingAdd(1, ordering: .relaxed)
                }
                usleep(200)
            }
        }
        let producer = Thread {
            let x = Signal.sine(frequency: 440, rate: 44_100, frames: 441, channels: 2, amplitude: 0.5)
            while !stop.load(ordering: .acquiring) {
                _ = x.withUnsafeBufferPointer { try? engine.push($0, to: id, channels: 2) }
                usleep(1_000)
            }
        }
        renderer.start()
        producer.start()
        var changed = 0, busy = 0
        let formats = [(16_000, 1), (48_000, 2), (8_000, 1), (44_100, 2), (24_000, 2)]
        for k in 0..<200 {
            let (rate, ch) = formats[k % formats.count]
            do {
                try e.setOutputFormat(sampleRate: rate, channels: ch)
                changed += 1
            } catch {
                XCTAssertEqual(error, .badState)
                busy += 1
            }
            usleep(2_000)
        }
        stop.store(true, ordering: .releasing)
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertGreaterThan(changed, 50)
        XCTAssertGreaterThan(renders.load(ordering: .relaxed), 100)
        XCTAssertEqual(bad.load(ordering: .relaxed), 0)
        let s = try e.stats(for: id)
        XCTAssertEqual(s.framesPushed, s.framesConsumed + UInt64(s.bufferedFrames))
    }
}
