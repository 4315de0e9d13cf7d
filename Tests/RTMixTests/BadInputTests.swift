import XCTest
@testable import RTMix

final class BadInputTests: XCTestCase {
    func expect(_ error: RTMixError, file: StaticString = #filePath, line: UInt = #line,
                _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) {
            XCTAssertEqual($0 as? RTMixError, error, file: file, line: line)
        }
    }

    func testInvalidEngineConfigs() {
        let cases: [(RTMixError, (inout EngineConfig) -> Void)] = [
            (.unsupportedFormat, { $0.sampleRate = 7_999 }), (.unsupportedFormat, { $0.sampleRate = 192_001 }),
            (.unsupportedFormat, { $0.channels = 0 }), (.unsupportedFormat, { $0.channels = 3 }),
            (.invalidArgument, { $0.maxFrames = 0 }), (.invalidArgument, { $0.maxFrames = 16_385 }),
            (.invalidArgument, { $0.maxSources = 0 }), (.invalidArgument, { $0.maxSources = 257 }),
            (.invalidArgument, { $0.callGainFloor = .nan }), (.invalidArgument, { $0.callGainFloor = 1.5 }),
            (.invalidArgument, { $0.gainRampMs = 0 }), (.invalidArgument, { $0.gainRampMs = .infinity }),
            (.invalidArgument, { $0.limiterThresholdDb = 1 }), (.invalidArgument, { $0.limiterThresholdDb = .nan }),
        ]
        for (error, change) in cases {
            var c = EngineConfig()
            change(&c)
            expect(error) { _ = try Engine(c) }
        }
        XCTAssertNoThrow(try Engine(EngineConfig()))
    }

    func testInvalidSources() throws {
        let e = makeEngine()
        expect(.unsupportedFormat) { _ = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 4_000, channels: 1)) }
        expect(.unsupportedFormat) { _ = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 6)) }
        var c = SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2)
        c.gain = .nan
        expect(.invalidArgument) { _ = try e.addSource(c) }
        c.gain = 1
        c.bufferFrames = SourceConfig.maxBufferFrames + 1
        expect(.invalidArgument) { _ = try e.addSource(c) }
        XCTAssertEqual(e.stats().activeSources, 0)
        XCTAssertEqual(e.stats().sourcesAdded, 0)
    }

    func testUnknownAndRemovedIds() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        XCTAssertNotEqual(id.rawValue, 0)
        try e.removeSource(id)
        let x: [Float] = [0.1, 0.1]
        expect(.notFound) { _ = try x.withUnsafeBufferPointer { try e.push($0, to: id, channels: 2) } }
        expect(.notFound) { try e.removeSource(id) }
        expect(.notFound) { try e.setGain(1, for: id) }
        expect(.notFound) { try e.setMuted(true, for: id) }
        expect(.notFound) { _ = try e.stats(for: id) }
        expect(.notFound) { _ = try x.withUnsafeBufferPointer { try e.push($0, to: SourceID(rawValue: 0), channels: 2) } }
        expect(.notFound) { _ = try x.withUnsafeBufferPointer { try e.push($0, to: SourceID(rawValue: 12345), channels: 2) } }
    }

    /// A failed render zero-fills min(buffer, frames × 2) samples (silence,
    /// never stale memory) and writes nothing past that.
    func testRenderBadFrameCountsZeroFillOutput() throws {
        let e = makeEngine { $0.maxFrames = 256 }
        var out = [Float](repeating: 42, count: 1024)
        expect(.tooManyFrames) { try out.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 257) } }
        expect(.invalidArgument) { try out.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 0) } }
        var short = [Float](repeating: 42, count: 100)  // 50 stereo frames
        expect(.invalidArgument) { try short.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 200) } }
        XCTAssertTrue(short.allSatisfy { $0 == 0 })
        XCTAssertTrue(out.prefix(514).allSatisfy { $0 == 0 })
        XCTAssertTrue(out.dropFirst(514).allSatisfy { $0 == 42 })
        XCTAssertEqual(e.stats().renderCalls, 0)
        XCTAssertNoThrow(try out.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 256) })
        XCTAssertEqual(e.stats().renderCalls, 1)
    }

    func testPushZeroFramesIsInvalid() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        let empty: [Float] = []
        expect(.invalidArgument) { _ = try empty.withUnsafeBufferPointer { try e.push($0, to: id, channels: 2) } }
        let odd: [Float] = [0.1, 0.2, 0.3]
        expect(.invalidArgument) { _ = try odd.withUnsafeBufferPointer { try e.push($0, to: id, channels: 2) } }
        XCTAssertEqual(try e.stats(for: id).framesPushed, 0)
    }

    func testStatusMessages() {
        for code: Int32 in 0 ... 8 { XCTAssertNotEqual("\(RTMixError.message(for: -code))", "unknown status") }
        XCTAssertEqual("\(RTMixError.message(for: -9))", "unknown status")
        XCTAssertEqual("\(RTMixError.message(for: 1))", "unknown status")
    }
}

final class PushChannelMismatchTests: XCTestCase {
    /// The Swift API never reads past the caller's buffer: a channel count
    /// that does not match the source is refused.
    func testChannelMismatchIsRefused() throws {
        let e = makeEngine()
        let stereo = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        let mono = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 16_000, channels: 1))
        let x = [Float](repeating: 0.1, count: 64)
        XCTAssertThrowsError(try x.withUnsafeBufferPointer { try e.push($0, to: stereo, channels: 1) }) {
            XCTAssertEqual($0 as? RTMixError, .invalidArgument)
        }
        XCTAssertThrowsError(try x.withUnsafeBufferPointer { try e.push($0, to: mono, channels: 2) }) {
            XCTAssertEqual($0 as? RTMixError, .invalidArgument)
        }
        XCTAssertEqual(try e.stats(for: stereo).framesPushed, 0)
        XCTAssertEqual(try x.withUnsafeBufferPointer { try e.push($0, to: stereo, channels: 2) }, 32)
    }
}
