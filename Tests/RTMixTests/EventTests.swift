import XCTest
@testable import RTMix

final class EventTests: XCTestCase {
    func drain(_ e: Engine) -> [EngineEvent] {
        var out: [EngineEvent] = []
        while let ev = e.nextEvent() { out.append(ev) }
        return out
    }

    func testUnderrunEpisodeIsReportedOnceWithItsLength() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig(domain: .call, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.2, frames: 600, channels: 1), to: id, channels: 1)
        _ = e.renderFrames(480)
        XCTAssertEqual(drain(e), [])
        _ = e.renderFrames(480 * 3)  // 120 frames, then 360 + 960 missing
        e.pushAll(Signal.constant(0.2, frames: 480, channels: 1), to: id, channels: 1)
        _ = e.renderFrames(480)
        XCTAssertEqual(drain(e), [
            EngineEvent(kind: .underrunBegan, source: id, frameTime: 480, value: 360),
            EngineEvent(kind: .underrunEnded, source: id, frameTime: 1920, value: 1320),
        ])
    }

    func testProducerProblemsAreReportedByTheRenderer() throws {
        let e = makeEngine { $0.maxFrames = 512 }  // a ring must hold one block
        var c = SourceConfig(domain: .media, sampleRate: 48_000, channels: 2)
        c.bufferFrames = 512
        let id = try e.addSource(c)
        var x = Signal.constant(0.1, frames: 600, channels: 2)
        x[3] = .nan
        _ = try x.withUnsafeBufferPointer { try e.push($0, to: id, channels: 2) }  // 88 refused
        _ = e.renderFrames(256)
        XCTAssertEqual(drain(e), [
            EngineEvent(kind: .bufferOverflow, source: id, frameTime: 0, value: 88),
            EngineEvent(kind: .nonfiniteInput, source: id, frameTime: 0, value: 1),
        ])
        _ = e.renderFrames(256)
        XCTAssertEqual(drain(e), [])  // reported once
    }

    func testLimiterEngagedIsReportedWhenItStarts() throws {
        let e = makeEngine()
        for _ in 0..<4 {
            let id = try e.addSource(SourceConfig(domain: .media, sampleRate: 48_000, channels: 2))
            e.pushAll(Signal.constant(0.6, frames: 960, channels: 2), to: id, channels: 2)
        }
        _ = e.renderFrames(960)
        let events = drain(e)
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(events.first?.kind, .limiterEngaged)
        XCTAssertEqual(events.first?.source, nil)
        XCTAssertLessThan(events.first?.value ?? 0, -100)  // more than 1 dB of reduction
    }

    func testFullQueueReportsDroppedEvents() throws {
        let e = makeEngine { $0.channels = 1; $0.maxSources = 1 }
        let id = try e.addSource(SourceConfig(domain: .call, sampleRate: 48_000, channels: 1))
        // Block 1 starts the source; each later block is half full: 299
        // episodes begin and 298 end.
        for _ in 0..<300 {
            e.pushAll(Signal.constant(0.1, frames: 240, channels: 1), to: id, channels: 1)
            _ = e.renderFrames(480)
        }
        let first = drain(e)
        XCTAssertEqual(first.count, EventQueue.capacity)
        _ = try [Float](repeating: 0.1, count: 240).withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) }
        _ = e.renderFrames(480)
        let next = drain(e)
        XCTAssertEqual(next.first?.kind, .eventsDropped)
        XCTAssertEqual(next.first?.value, Int64(299 + 298 - EventQueue.capacity))
        XCTAssertEqual(next.dropFirst().map(\.kind), [.underrunEnded, .underrunBegan])
        XCTAssertEqual(try e.stats(for: id).underrunEvents, 300)
    }
}
