import XCTest
@testable import RTMix

final class UnderrunAndOverflowTests: XCTestCase {
    /// A source with less than asked: every frame it had plays unchanged,
    /// a 2 ms faded mirror tail continues it into the gap (no click), then
    /// the gap is silence (never stale audio); the underrun is counted once,
    /// and the resumed audio fades in.
    func testUnderrunIsSilentFadedAndCounted() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        // Nothing pushed yet: silent, no underrun counted before the first push.
        _ = e.renderFrames(480)
        XCTAssertEqual(e.stats().underrunFrames, 0)

        e.pushAll(Signal.constant(0.5, frames: 580, channels: 1), to: id, channels: 1)
        let first = e.renderFrames(480)
        XCTAssertTrue(first.allSatisfy { $0 == 0.5 })
        let second = e.renderFrames(480)  // 100 frames of data, then 380 missing
        XCTAssertTrue(second[..<100].allSatisfy { $0 == 0.5 }, "the audio before the gap is intact")
        let fade = 96  // 2 ms
        XCTAssertTrue(second[(100 + fade)...].allSatisfy { $0 == 0 }, "gap must be silence")
        XCTAssertLessThan(0.5 - second[100], 0.5 / Float(fade), "the tail starts where the audio stopped")
        for i in 101..<(100 + fade) { XCTAssertLessThan(second[i], second[i - 1], "the tail fades out") }
        _ = e.renderFrames(960)  // still starved: one event, more frames
        var s = try e.stats(for: id)
        XCTAssertEqual(s.underrunFrames, 380 + 960)
        XCTAssertEqual(s.underrunEvents, 1)
        XCTAssertEqual(e.stats().underrunFrames, 380 + 960)

        e.pushAll(Signal.constant(0.5, frames: 480, channels: 1), to: id, channels: 1)
        let resumed = e.renderFrames(480)
        XCTAssertLessThan(resumed[0], 0.05, "resume fades in")
        for i in 1..<480 { XCTAssertGreaterThanOrEqual(resumed[i], resumed[i - 1]) }
        XCTAssertEqual(resumed[479], 0.5)
        s = try e.stats(for: id)
        XCTAssertEqual(s.underrunEvents, 1)
        XCTAssertEqual(s.framesRendered, 480 + 100 + 480)
    }

    /// A producer that pushes exactly one block per block from the start
    /// never underruns: a short first block (a resampler filling its filter,
    /// or a partial first push) is aligned to the end of the block.
    func testPerfectlyTimedSourcesNeverUnderrun() throws {
        for (rate, channels) in [(16_000, 1), (44_100, 2), (48_000, 2), (8_000, 1)] {
            let e = makeEngine()
            let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: rate, channels: channels))
            let tone = Signal.sine(frequency: 440, rate: rate, frames: rate, channels: channels, amplitude: 0.3)
            var pushed = 0.0, sent = 0
            var out: [Float] = []
            for _ in 0..<100 {
                pushed += Double(rate) / 100
                let n = Int(pushed) - sent
                e.pushAll(Array(tone[(sent * channels)..<((sent + n) * channels)]), to: id, channels: channels)
                sent += n
                out += e.renderFrames(480)
            }
            let s = try e.stats(for: id)
            XCTAssertEqual(s.underrunFrames, 0, "rate \(rate)")
            XCTAssertEqual(s.underrunEvents, 0, "rate \(rate)")
            // Only the start is silent; once audio begins it is continuous.
            let left = Signal.channel(out, 0, of: 2)
            let firstSound = left.firstIndex { $0 != 0 }!
            XCTAssertLessThan(firstSound, 480, "rate \(rate)")
            XCTAssertGreaterThan(Signal.rms(left[(firstSound + 480)...]), 0.2, "rate \(rate)")
        }
    }

    func testPartialFirstPushIsAlignedToBlockEnd() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.5, frames: 100, channels: 1), to: id, channels: 1)
        let out = e.renderFrames(480)
        XCTAssertTrue(out[..<380].allSatisfy { $0 == 0 })
        XCTAssertTrue(out[380...].allSatisfy { $0 == 0.5 })
        XCTAssertEqual(try e.stats(for: id).underrunFrames, 0)
        // From then on a shortfall is an underrun.
        e.pushAll(Signal.constant(0.5, frames: 100, channels: 1), to: id, channels: 1)
        _ = e.renderFrames(480)
        XCTAssertEqual(try e.stats(for: id).underrunFrames, 380)
    }

    func testUnderrunThroughResamplerIsSilent() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 16_000, channels: 1))
        e.pushAll(Signal.sine(frequency: 300, rate: 16_000, frames: 640, amplitude: 0.3), to: id, channels: 1)
        let out = e.renderFrames(4800)
        XCTAssertTrue(out.suffix(4000).allSatisfy { $0 == 0 })
        XCTAssertGreaterThan(Signal.rms(out.prefix(1800)[...]), 0.1)
        XCTAssertGreaterThan(try e.stats(for: id).underrunFrames, 2800)
    }

    func testPushOverflowAcceptsWhatFits() throws {
        let e = makeEngine { $0.maxFrames = 512 }  // a ring must hold one block
        var sc = SourceConfig.classic(domain: .media, sampleRate: 44_100, channels: 2)
        sc.bufferFrames = 1000  // rounds up to 1024
        let id = try e.addSource(sc)
        XCTAssertEqual(try e.stats(for: id).capacityFrames, 1024)
        let block = Signal.constant(0.1, frames: 800, channels: 2)
        let a = try block.withUnsafeBufferPointer { try e.push($0, to: id, channels: 2) }
        let b = try block.withUnsafeBufferPointer { try e.push($0, to: id, channels: 2) }
        let c = try block.withUnsafeBufferPointer { try e.push($0, to: id, channels: 2) }
        XCTAssertEqual([a, b, c], [800, 224, 0])
        let s = try e.stats(for: id)
        XCTAssertEqual(s.framesPushed, 1024)
        XCTAssertEqual(s.framesRejected, 576 + 800)
        XCTAssertEqual(s.bufferedFrames, 1024)
        XCTAssertEqual(s.bufferedMs, 1024 * 1000 / 44_100, accuracy: 0.01)
        XCTAssertEqual(e.stats().rejectedFrames, 1376)
        XCTAssertEqual(try e.bufferedFrames(of: id), 1024)
        XCTAssertThrowsError(try e.bufferedFrames(of: SourceID(rawValue: 77)))
        // After rendering, space frees up again.
        _ = e.renderFrames(480)
        let d = try block.withUnsafeBufferPointer { try e.push($0, to: id, channels: 2) }
        XCTAssertGreaterThan(d, 400)
    }

    func testDefaultRingHoldsAtLeast400ms() throws {
        let e = makeEngine()
        for rate in [8_000, 16_000, 44_100, 48_000, 192_000] {
            let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: rate, channels: 2))
            let cap = try e.stats(for: id).capacityFrames
            XCTAssertGreaterThanOrEqual(cap, rate * 4 / 10)
            XCTAssertEqual(cap & (cap - 1), 0)
        }
    }
}
