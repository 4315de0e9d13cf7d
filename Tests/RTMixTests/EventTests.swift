import XCTest
@testable import RTMix

final class EventTests: XCTestCase {
    /// The events without their timestamps (checked in AlarmTests), and
    /// without `sourceStarted` (SourceTimingTests) unless `all`.
    func drain(_ e: Engine, all: Bool = false) -> [EngineEvent] {
        var out: [EngineEvent] = []
        while var ev = e.nextEvent() {
            XCTAssertGreaterThan(ev.timeNs, 0)
            ev.timeNs = 0
            if all || ev.kind != .sourceStarted { out.append(ev) }
        }
        return out
    }

    func testUnderrunEpisodeIsReportedOnceWithItsLength() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.2, frames: 600, channels: 1), to: id, channels: 1)
        _ = e.renderFrames(480)
        XCTAssertEqual(drain(e), [])
        _ = e.renderFrames(480 * 3)  // 120 frames, then 360 + 960 missing
        e.pushAll(Signal.constant(0.2, frames: 480, channels: 1), to: id, channels: 1)
        _ = e.renderFrames(480)
        XCTAssertEqual(drain(e), [
            EngineEvent(kind: .underrunBegan, source: id, frameTime: 480, value: 360, domain: .call),
            EngineEvent(kind: .underrunEnded, source: id, frameTime: 1920, value: 1320, domain: .call),
        ])
    }

    func testProducerProblemsAreReportedByTheRenderer() throws {
        let e = makeEngine { $0.maxFrames = 512 }  // a ring must hold one block
        var c = SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2)
        c.bufferFrames = 512
        let id = try e.addSource(c)
        var x = Signal.constant(0.1, frames: 600, channels: 2)
        x[3] = .nan
        _ = try x.withUnsafeBufferPointer { try e.push($0, to: id, channels: 2) }  // 88 refused
        _ = e.renderFrames(256)
        XCTAssertEqual(drain(e), [
            EngineEvent(kind: .bufferOverflow, source: id, frameTime: 0, value: 88, domain: .media),
            EngineEvent(kind: .nonfiniteInput, source: id, frameTime: 0, value: 1, domain: .media),
        ])
        _ = e.renderFrames(256)
        XCTAssertEqual(drain(e), [])  // reported once
    }

    func testLimiterEngagedIsReportedWhenItStarts() throws {
        let e = makeEngine()
        for _ in 0..<4 {
            let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
            e.pushAll(Signal.constant(0.6, frames: 960, channels: 2), to: id, channels: 2)
        }
        _ = e.renderFrames(960)
        let events = drain(e)
        // 4 × 0.6 = 2.4 against a 0.89 threshold: more than 6 dB, so the
        // heavy-limiting alarm follows (see AlarmTests).
        XCTAssertEqual(events.map(\.kind), [.limiterEngaged, .limiterHeavy])
        XCTAssertEqual(events.first?.source, nil)
        XCTAssertEqual(events.first?.domain, nil)
        XCTAssertLessThan(events.first?.value ?? 0, -100)  // more than 1 dB of reduction
    }

    /// Issue 18 item 13: `limiterEngaged`'s value is the overload's depth,
    /// threshold / the block's loudest peak in millibels (rtmix.h), also
    /// when the overload starts in the block's last frames (as the markers
    /// of `rtmix-cli live` did). Before, it was the lowest gain applied in
    /// the block: -0.0x dB there, truncated to 0.
    func testLimiterEngagedValueIsTheOverloadDepth() throws {
        for (overAt, peak) in [(478, Float(0.95)), (0, 0.95), (470, 2.0), (479, 0.8915)] {
            let e = makeEngine { $0.channels = 1 }  // limiter at -1 dBFS
            let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
            var block = Signal.constant(0.5, frames: 480, channels: 1)
            for i in overAt..<480 { block[i] = peak }
            e.pushAll(block, to: id, channels: 1)
            _ = e.renderFrames(480)
            let engaged = drain(e).filter { $0.kind == .limiterEngaged }
            XCTAssertEqual(engaged.count, 1, "over from \(overAt)")
            let threshold = powf(10, -1.0 / 20)
            let expected = min(-1, Int64((20 * log10f(threshold / peak) * 100).rounded(.down)))
            let value = engaged.first?.value ?? 0
            XCTAssertLessThan(value, 0, "over from \(overAt), peak \(peak): value \(value)")
            XCTAssertEqual(Double(value), Double(expected), accuracy: 1, "over from \(overAt), peak \(peak)")
            print("limiterEngaged: peak \(peak) from frame \(overAt): value \(value) mB (expected \(expected))")
        }
    }

    /// The queue itself (rate limit off, as if 300 distinct sources
    /// posted): a full queue counts its losses, and the drain that reads
    /// the queued events ends with the notice, with no later event needed
    /// (issue 18: before, the notice waited for the next event to pass).
    /// The engine's rate limit (AlarmTests) keeps one source from getting
    /// here.
    func testFullQueueReportsDroppedEventsAtTheNextDrain() {
        let q = EventQueue(rateLimited: false)
        for i in 0..<300 {
            q.post(i % 2 == 0 ? .underrunBegan : .underrunEnded, source: 1, frameTime: UInt64(i), value: Int64(i))
        }
        XCTAssertEqual(q.droppedTotal.read(), UInt64(300 - EventQueue.capacity))
        var first: [RawEvent] = []
        while let ev = q.next() { first.append(ev) }
        XCTAssertEqual(first.count, EventQueue.capacity + 1)
        XCTAssertEqual(first[EventQueue.capacity - 1].value, Int64(EventQueue.capacity - 1))
        XCTAssertEqual(first.last?.kind, 7)
        XCTAssertEqual(first.last?.value, Int64(300 - EventQueue.capacity))
        XCTAssertEqual(first.last?.frameTime, 299)  // the latest loss
        XCTAssertGreaterThan(first.last?.timeNs ?? 0, 0)
        // Reported once; later events arrive without another notice.
        q.post(.underrunBegan, source: 1, frameTime: 300, value: 300)
        var next: [RawEvent] = []
        while let ev = q.next() { next.append(ev) }
        XCTAssertEqual(next.map(\.kind), [1])
        XCTAssertEqual(q.droppedTotal.read(), UInt64(300 - EventQueue.capacity))
    }

    /// Through the engine: losses count in the stats and the host's drain
    /// ends with one notice carrying the count.
    func testEngineStatsCountDroppedEvents() throws {
        let e = makeEngine { $0.channels = 1 }
        XCTAssertEqual(e.stats().eventsDropped, 0)
        for i in 0..<(EventQueue.capacity + 10) {
            // Spread over the rate limiter's lanes: 4 types, 16 sources.
            let kinds: [EngineEventKind] = [.underrunBegan, .underrunEnded, .bufferOverflow, .renderSlow]
            e.core.pointee.events.post(kinds[i % 4], source: UInt32(i / 4 % 16 + 1), frameTime: 0, value: 1)
        }
        let before = e.stats()
        let events = drain(e, all: true)
        XCTAssertEqual(events.last?.kind, .eventsDropped)
        XCTAssertEqual(UInt64(events.last?.value ?? 0), before.eventsDropped)
        XCTAssertEqual(events.filter { $0.kind == .eventsDropped }.count, 1)
        XCTAssertEqual(UInt64(events.count - 1) + before.eventsDropped + before.eventsSuppressed,
                       UInt64(EventQueue.capacity + 10))
        XCTAssertGreaterThan(before.eventsDropped, 0)
        XCTAssertEqual(e.stats().eventsDropped, before.eventsDropped)  // a total, not reset by reading
    }
}
