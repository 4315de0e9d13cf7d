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

    /// The queue itself (rate limit off, as if 300 distinct sources
    /// posted): a full queue counts its losses and reports them first once
    /// there is room. The engine's rate limit (AlarmTests) keeps one source
    /// from getting here.
    func testFullQueueReportsDroppedEvents() {
        let q = EventQueue(rateLimited: false)
        for i in 0..<300 {
            q.post(i % 2 == 0 ? .underrunBegan : .underrunEnded, source: 1, frameTime: UInt64(i), value: Int64(i))
        }
        var first: [RawEvent] = []
        while let ev = q.next() { first.append(ev) }
        XCTAssertEqual(first.count, EventQueue.capacity)
        XCTAssertEqual(first.last?.value, Int64(EventQueue.capacity - 1))
        q.post(.underrunBegan, source: 1, frameTime: 300, value: 300)
        var next: [RawEvent] = []
        while let ev = q.next() { next.append(ev) }
        XCTAssertEqual(next.map(\.kind), [7, 1])
        XCTAssertEqual(next.first?.value, Int64(300 - EventQueue.capacity))
        XCTAssertEqual(next.last?.value, 300)
    }
}
