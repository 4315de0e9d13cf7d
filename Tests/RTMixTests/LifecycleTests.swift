import XCTest
@testable import RTMix

final class LifecycleTests: XCTestCase {
    func testIdsAreUniqueNonZeroAndNeverReused() throws {
        let e = makeEngine { $0.maxSources = 3 }
        var seen = Set<UInt32>()
        for _ in 0..<50 {
            let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 16_000, channels: 1))
            XCTAssertNotEqual(id.rawValue, 0)
            XCTAssertTrue(seen.insert(id.rawValue).inserted, "id reused")
            try e.removeSource(id)
            _ = e.renderFrames(960)  // lets the renderer finish the fade-out
        }
        XCTAssertEqual(e.stats().sourcesAdded, 50)
        XCTAssertEqual(e.stats().sourcesRemoved, 50)
    }

    func testLimitAndReclaimAfterRendererFade() throws {
        let e = makeEngine { $0.maxSources = 2 }
        let a = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2))
        _ = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2))
        XCTAssertThrowsError(try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2))) {
            XCTAssertEqual($0 as? RTMixError, .limit)
        }
        _ = e.renderFrames(480)  // the renderer is running
        try e.removeSource(a)
        // Fade not rendered yet: the slot is still in use.
        XCTAssertThrowsError(try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2)))
        _ = e.renderFrames(960)  // 20 ms > 10 ms ramp
        XCTAssertNoThrow(try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2)))
        XCTAssertEqual(e.stats().activeSources, 2)
    }

    /// With no render calls at all (device never started), a removed source
    /// is reclaimed at once: nothing can be rendering it.
    func testReclaimWhileRendererNeverRan() throws {
        let e = makeEngine { $0.maxSources = 1 }
        let a = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 44_100, channels: 2))
        try e.removeSource(a)
        XCTAssertNoThrow(try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2)))
    }

    /// The issue-10 case: remove, render one block shorter than the gain ramp
    /// (256 < 480 frames), stop rendering. The device is judged stopped after
    /// four of its block periods and at least 100 ms (a burst of an audio
    /// server's callbacks must not look like a stop), the
    /// slot is reclaimed, and when rendering restarts the removed source's
    /// audio never plays again.
    func testRemovedSourceIsReclaimedWhenRenderStopsMidFade() throws {
        let e = makeEngine { $0.maxSources = 1; $0.channels = 1 }
        let a = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.5, frames: 4800, channels: 1), to: a, channels: 1)
        _ = e.renderFrames(480)
        try e.removeSource(a)
        _ = e.renderFrames(256)  // part of the 10 ms fade-out, then the device stops
        XCTAssertThrowsError(try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1)),
                             "right after the last block the renderer may still be running")
        Thread.sleep(forTimeInterval: 0.15)  // > max(4 × 5.3 ms, 100 ms)
        let b = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let out = e.renderFrames(480)
        XCTAssertTrue(out.allSatisfy { $0 == 0 }, "the removed source's stale audio must not play")
        XCTAssertEqual(try e.stats(for: b).framesRendered, 0)
    }

    /// Without any control call in between, a restart after a stall does not
    /// play a removed source either: the renderer retires it itself.
    func testRestartAfterStallDoesNotReplayRemovedSource() throws {
        let e = makeEngine { $0.channels = 1 }
        let a = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.5, frames: 4800, channels: 1), to: a, channels: 1)
        _ = e.renderFrames(480)
        try e.removeSource(a)
        _ = e.renderFrames(256)
        Thread.sleep(forTimeInterval: 0.15)
        let out = e.renderFrames(480)
        XCTAssertTrue(out.allSatisfy { $0 == 0 })
    }

    /// Removal fades the source out over the gain ramp instead of cutting it.
    func testRemovalFadesOut() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.5, frames: 4800, channels: 1), to: id, channels: 1)
        _ = e.renderFrames(480)
        try e.removeSource(id)
        let out = e.renderFrames(960)
        XCTAssertGreaterThan(out[0], 0.45)
        for i in 1..<out.count { XCTAssertLessThanOrEqual(abs(out[i] - out[i - 1]), 0.5 / 480 + 1e-6) }
        XCTAssertTrue(out[480...].allSatisfy { $0 == 0 })
    }

    func testSourceAddedWhileRenderingStartsClean() throws {
        let e = makeEngine()
        _ = e.renderFrames(480)
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2))
        e.pushAll(Signal.constant(0.3, frames: 480, channels: 2), to: id, channels: 2)
        let out = e.renderFrames(480)
        XCTAssertTrue(out.allSatisfy { $0 == 0.3 })
    }

    func testStatsCountRendersAndFrames() throws {
        let e = makeEngine()
        _ = e.renderFrames(4800, block: 480)
        _ = e.renderFrames(64, block: 64)
        let s = e.stats()
        XCTAssertEqual(s.renderCalls, 11)
        XCTAssertEqual(s.framesRendered, 4864)
        XCTAssertGreaterThan(s.renderNsMax, 0)
        XCTAssertLessThanOrEqual(s.renderNsP50, s.renderNsP99)
        XCTAssertLessThanOrEqual(s.renderNsLast, s.renderNsMax)
    }

    func testHistogramPercentiles() {
        let h = LatencyHistogram()!
        for v in 1...1000 { h.record(UInt64(v) * 1000) }  // 1 µs ... 1 ms
        let p50 = h.percentile(0.5), p99 = h.percentile(0.99)
        XCTAssertGreaterThanOrEqual(p50, 500_000)
        XCTAssertLessThanOrEqual(p50, 562_500)  // bucket bound <= 12.5 % above
        XCTAssertGreaterThanOrEqual(p99, 990_000)
        XCTAssertLessThanOrEqual(p99, 1_113_750)
        for v: UInt64 in [0, 1, 7, 8, 9, 15, 16, 1023, 1024, 123_456_789, UInt64.max / 2] {
            let b = LatencyHistogram.bucket(for: v)
            XCTAssertGreaterThanOrEqual(LatencyHistogram.upperBound(of: b), v)
            if b > 0 { XCTAssertLessThan(LatencyHistogram.upperBound(of: b - 1), v) }
        }
    }
}
