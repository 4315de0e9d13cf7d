import XCTest
@testable import RTMix

final class GainTests: XCTestCase {
    /// Renders a constant 0.5 source and returns the settled output level
    /// relative to 0.5, in dB.
    func settledLevelDb(_ e: Engine, _ id: SourceID, channels: Int = 2) -> Double {
        e.pushAll(Signal.constant(0.5, frames: 4800, channels: channels), to: id, channels: channels)
        let out = e.renderFrames(4800)
        let tail = Signal.channel(out, 0, of: e.config.channels).suffix(960)
        return Signal.db(Double(tail.last!) / 0.5)
    }

    func testSourceAndDomainGainsMultiply() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        try e.setGain(0.5, for: id)
        try e.setDomainGain(0.25, for: .media)
        XCTAssertEqual(settledLevelDb(e, id), Signal.db(0.125), accuracy: 0.05)
    }

    func testDomainsAreIndependent() throws {
        let e = makeEngine { $0.channels = 1; $0.duckDepthDb = 0 }  // ducking: DuckingTests
        let call = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let media = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        try e.setDomainGain(0, for: .media)
        try e.setDomainGain(0.5, for: .call)
        e.pushAll(Signal.constant(0.4, frames: 4800, channels: 1), to: call, channels: 1)
        e.pushAll(Signal.constant(0.3, frames: 4800, channels: 1), to: media, channels: 1)
        let out = e.renderFrames(4800)
        XCTAssertEqual(Double(out.last!), 0.2, accuracy: 0.2 * 0.006)  // 0.05 dB
        try e.setDomainGain(1, for: .media)
        e.pushAll(Signal.constant(0.4, frames: 4800, channels: 1), to: call, channels: 1)
        e.pushAll(Signal.constant(0.3, frames: 4800, channels: 1), to: media, channels: 1)
        let out2 = e.renderFrames(4800)
        XCTAssertEqual(Double(out2.last!), 0.5, accuracy: 0.5 * 0.006)
    }

    func testCallDomainNeverGoesBelowFloor() throws {
        let e = makeEngine { $0.callGainFloor = 0.1 }
        XCTAssertNoThrow(try e.setDomainGain(0, for: .call))
        XCTAssertEqual(e.domainGain(.call), 0.1)
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2))
        XCTAssertEqual(settledLevelDb(e, id), -20, accuracy: 0.05)
        // Media may go to 0.
        try e.setDomainGain(0, for: .media)
        XCTAssertEqual(e.domainGain(.media), 0)
    }

    func testCustomFloor() throws {
        let e = makeEngine { $0.callGainFloor = 0.25 }
        try e.setDomainGain(0.01, for: .call)
        XCTAssertEqual(e.domainGain(.call), 0.25)
        try e.setDomainGain(0.7, for: .call)
        XCTAssertEqual(e.domainGain(.call), 0.7)
    }

    func testMuteSilencesCallVoiceAndUnmuteRestores() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 2))
        try e.setMuted(true, for: id)
        e.pushAll(Signal.constant(0.5, frames: 4800, channels: 2), to: id, channels: 2)
        let out = e.renderFrames(4800)
        XCTAssertTrue(out.suffix(960).allSatisfy { $0 == 0 })
        XCTAssertTrue(try e.stats(for: id).muted)
        try e.setMuted(false, for: id)
        XCTAssertEqual(settledLevelDb(e, id), 0, accuracy: 0.05)
    }

    /// No sample-to-sample gain step exceeds what the ramp allows, for
    /// source gain, domain gain and mute, at several ramp lengths.
    func testRampsAreSmooth() throws {
        for rampMs: Float in [1, 10, 50] {
            let e = makeEngine { $0.channels = 1; $0.gainRampMs = rampMs }
            let rampFrames = Float(48_000) * rampMs / 1000
            let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
            e.pushAll(Signal.constant(0.5, frames: 30_000, channels: 1), to: id, channels: 1)
            var out: [Float] = e.renderFrames(480)
            try e.setGain(0, for: id)
            out += e.renderFrames(4800, block: 128)
            try e.setGain(1, for: id)
            out += e.renderFrames(4800, block: 97)
            try e.setDomainGain(0, for: .media)
            out += e.renderFrames(4800, block: 480)
            try e.setDomainGain(1, for: .media)
            try e.setMuted(true, for: id)
            out += e.renderFrames(4800, block: 480)
            try e.setMuted(false, for: id)
            out += e.renderFrames(4800, block: 256)
            // Input is a constant 0.5, so output = 0.5 × gain.
            var maxStep: Float = 0
            for i in 1..<out.count { maxStep = max(maxStep, abs(out[i] - out[i - 1])) }
            XCTAssertLessThanOrEqual(maxStep, 0.5 / rampFrames * 1.001 + 1e-7, "ramp \(rampMs) ms")
            XCTAssertGreaterThan(maxStep, 0, "gain never changed")
            // Each change completes within the ramp time.
            XCTAssertEqual(out[480 + Int(rampFrames) + 1], 0)
        }
    }

    func testInvalidGainsChangeNothing() throws {
        let e = makeEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        try e.setGain(0.5, for: id)
        try e.setDomainGain(0.5, for: .media)
        for bad: Float in [-0.1, .nan, .infinity, -.infinity, maxGain * 2] {
            XCTAssertThrowsError(try e.setGain(bad, for: id)) { XCTAssertEqual($0 as? RTMixError, .invalidArgument) }
            XCTAssertThrowsError(try e.setDomainGain(bad, for: .media)) { XCTAssertEqual($0 as? RTMixError, .invalidArgument) }
            XCTAssertThrowsError(try e.setDomainGain(bad, for: .call)) { XCTAssertEqual($0 as? RTMixError, .invalidArgument) }
        }
        XCTAssertEqual(try e.stats(for: id).gain, 0.5)
        XCTAssertEqual(e.domainGain(.media), 0.5)
        XCTAssertEqual(e.domainGain(.call), 1)
        XCTAssertThrowsError(try e.setGain(1, for: SourceID(rawValue: 999))) { XCTAssertEqual($0 as? RTMixError, .notFound) }
    }

    func testGainRampUnit() {
        var r = GainRamp(initial: 0, rampFrames: 4)
        r.setTarget(1)
        XCTAssertEqual((0..<6).map { _ in r.next() }, [0.25, 0.5, 0.75, 1, 1, 1])
        r.setTarget(0)
        r.skip(2)
        XCTAssertEqual(r.current, 0.5, accuracy: 1e-6)
        r.skip(10)
        XCTAssertEqual(r.current, 0)
        XCTAssertTrue(r.isSteady)
    }
}
