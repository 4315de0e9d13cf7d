import XCTest
@testable import RTMix

/// The mix bus stage (`MixBus`): where each source is summed, when media
/// waits on the media bus, how the media joins the output, what the
/// capture path publishes, and that the bus starts every block empty.
final class MixBusTests: XCTestCase {
    /// The stage alone, at 8 frames, with `body` given the bus.
    func withBus(publishesMedia: Bool, ducking: Bool, _ body: (inout MixBus) throws -> Void) throws {
        guard var bus = MixBus(maxFrames: 8, publishesMedia: publishesMedia, ducking: ducking) else {
            return XCTFail("allocation")
        }
        try body(&bus)
    }

    /// Media goes to its bus (at gain 1) only when the block needs the
    /// media sum on its own: capture path on, or the ducker waiting for
    /// the call sum. Otherwise, and always for call sources, it goes
    /// straight into the output at its domain gain.
    func testMediaWaitsOnTheBusOnlyWhenNeeded() throws {
        var out = [Float](repeating: 0, count: 16)
        try out.withUnsafeMutableBufferPointer { o in
            let out = o.baseAddress!
            // Neither capture nor ducking: no media bus at all.
            try withBus(publishesMedia: false, ducking: false) { bus in
                XCTAssertNil(bus.media)
                bus.begin(output: out, frames: 8, channels: 2, duckerWaits: true)
                XCTAssertFalse(bus.mediaOnBus)
                let r = bus.route(isCall: false, domainGain: 0.5)
                XCTAssertEqual(r.into, out)
                XCTAssertEqual(r.gain, 0.5)
                XCTAssertNil(bus.publishedMedia)
            }
            // Ducking on: media waits only while the ducker needs the call sum.
            try withBus(publishesMedia: false, ducking: true) { bus in
                let media = try XCTUnwrap(bus.media)
                bus.begin(output: out, frames: 8, channels: 2, duckerWaits: false)
                XCTAssertFalse(bus.mediaOnBus)
                XCTAssertEqual(bus.route(isCall: false, domainGain: nil).into, out)
                XCTAssertNil(bus.route(isCall: false, domainGain: nil).gain)
                bus.begin(output: out, frames: 8, channels: 2, duckerWaits: true)
                XCTAssertTrue(bus.mediaOnBus)
                let r = bus.route(isCall: false, domainGain: 0.5)
                XCTAssertEqual(r.into, media)
                XCTAssertEqual(r.gain, 1)
                let c = bus.route(isCall: true, domainGain: 0.25)
                XCTAssertEqual(c.into, out)
                XCTAssertEqual(c.gain, 0.25)
                XCTAssertNil(bus.publishedMedia)  // ducking alone publishes nothing
            }
            // Capture path on: media waits in every block, and is published.
            try withBus(publishesMedia: true, ducking: false) { bus in
                let media = try XCTUnwrap(bus.media)
                bus.begin(output: out, frames: 8, channels: 2, duckerWaits: false)
                XCTAssertTrue(bus.mediaOnBus)
                XCTAssertEqual(bus.route(isCall: false, domainGain: 0.5).into, media)
                XCTAssertEqual(bus.route(isCall: true, domainGain: 0.5).into, out)
                XCTAssertEqual(bus.publishedMedia, UnsafePointer(media))
            }
        }
    }

    /// output = call + gain · media, constant or per frame (mono and
    /// stereo); the call sum is what the output holds before `combine`,
    /// and only while media waits and a call source was mixed.
    func testOutputIsCallPlusGainTimesMedia() throws {
        for channels in [1, 2] {
            for perFrame in [false, true] {
                var out = [Float](repeating: 0, count: 16)
                let curve: [Float] = (0..<8).map { 1 - Float($0) * 0.1 }
                try out.withUnsafeMutableBufferPointer { o in
                    try withBus(publishesMedia: false, ducking: true) { bus in
                        bus.begin(output: o.baseAddress!, frames: 8, channels: channels, duckerWaits: true)
                        XCTAssertNil(bus.callSum)  // no call source yet
                        let m = bus.route(isCall: false, domainGain: 0.5).into
                        for i in 0..<(8 * channels) { m[i] += Float(i + 1) }
                        XCTAssertNil(bus.callSum)
                        let c = bus.route(isCall: true, domainGain: 1).into
                        for i in 0..<(8 * channels) { c[i] += 0.01 * Float(i) }
                        let sum = try XCTUnwrap(bus.callSum)
                        for i in 0..<(8 * channels) { XCTAssertEqual(sum[i], 0.01 * Float(i)) }  // call only
                        curve.withUnsafeBufferPointer { bus.combine(gain: perFrame ? nil : 0.5, curve: $0.baseAddress!) }
                    }
                }
                for i in 0..<(8 * channels) {
                    let g = perFrame ? curve[i / channels] : 0.5
                    XCTAssertEqual(out[i], 0.01 * Float(i) + Float(i + 1) * g, "channels \(channels) frame \(i / channels)")
                }
                for i in (8 * channels)..<16 { XCTAssertEqual(out[i], 0) }  // past the block: untouched
            }
        }
    }

    /// Without media waiting (no call to duck for), `combine` adds nothing
    /// and there is no call sum: the mix is the sources' plain sum.
    func testCombineWithoutWaitingMediaLeavesTheMix() throws {
        var out = [Float](repeating: 0, count: 8)
        let curve = [Float](repeating: 0.5, count: 8)
        try out.withUnsafeMutableBufferPointer { o in
            try withBus(publishesMedia: false, ducking: true) { bus in
                let media = try XCTUnwrap(bus.media)
                media.update(repeating: 7, count: 16)
                bus.begin(output: o.baseAddress!, frames: 8, channels: 1, duckerWaits: false)
                _ = bus.route(isCall: true, domainGain: 1)
                o[3] = 0.25
                XCTAssertNil(bus.callSum)
                curve.withUnsafeBufferPointer { bus.combine(gain: 1, curve: $0.baseAddress!) }
            }
        }
        XCTAssertEqual(out, [0, 0, 0, 0.25, 0, 0, 0, 0])
    }

    /// Engine: the published media is the media sources' sum at their
    /// source gains, without the local media volume; the output is the
    /// call plus that sum at the media volume.
    func testPublishedMediaIsTheSourceGainSumWithoutTheMediaVolume() throws {
        let e = makeEngine { $0.channels = 1; $0.captureRate = 16_000 }
        try e.setDomainGain(0.25, for: .media)
        let call = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let a = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        let b = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        try e.setGain(0.5, for: a)
        try e.setGain(0.75, for: b)
        e.pushAll(Signal.constant(0.125, frames: 1920, channels: 1), to: call, channels: 1)
        e.pushAll(Signal.constant(0.5, frames: 1920, channels: 1), to: a, channels: 1)
        e.pushAll(Signal.constant(0.25, frames: 1920, channels: 1), to: b, channels: 1)
        _ = e.renderFrames(960)  // the media volume's 10 ms ramp from 1
        let out = e.renderFrames(480)
        let published = try XCTUnwrap(e.core.pointee.mixBus.pointee.publishedMedia)
        let media: Float = 0.5 * 0.5 + 0.25 * 0.75
        for i in 0..<480 {
            XCTAssertEqual(published[i], media, "frame \(i)")
            XCTAssertEqual(out[i], 0.125 + media * 0.25, accuracy: 1e-7, "frame \(i)")
        }
    }

    /// Engine, ducking: the duck scales the media only; the call sum the
    /// ducker examined is the call alone, and the call passes unscaled.
    func testDuckCurveAppliesToMediaOnly() throws {
        let e = makeEngine { $0.channels = 2; $0.duckDepthDb = -12 }
        let call = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let media = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        e.pushAll(Signal.constant(0.1, frames: 9600, channels: 1), to: call, channels: 1)
        e.pushAll(Signal.constant(0.5, frames: 9600, channels: 2), to: media, channels: 2)
        let out = e.renderFrames(9600)
        let depth: Float = 0.251_188_6
        // Steady state (attack over): media at the depth, call untouched.
        for i in (4800 * 2)..<(9600 * 2) { XCTAssertEqual(out[i], 0.1 + 0.5 * depth, accuracy: 1e-6) }
        // The call sum left in the bus's output before combine was the call alone.
        let bus = e.core.pointee.mixBus
        XCTAssertTrue(bus.pointee.mediaOnBus)
        XCTAssertTrue(bus.pointee.callMixed)
        XCTAssertEqual(e.core.pointee.ducker.pointee.gain, depth, accuracy: 1e-6)
    }

    /// The media bus starts every block empty: a removed media source
    /// leaves nothing behind, neither in the published media nor in the
    /// output.
    func testRemovedMediaSourceLeavesNothingOnTheBus() throws {
        for duck in [false, true] {
            let e = makeEngine { $0.channels = 2; $0.captureRate = 16_000; $0.duckDepthDb = duck ? -12 : 0 }
            let media = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
            e.pushAll(Signal.constant(0.5, frames: 4800, channels: 2), to: media, channels: 2)
            _ = e.renderFrames(960)
            let published = try XCTUnwrap(e.core.pointee.mixBus.pointee.publishedMedia)
            XCTAssertEqual(published[0], 0.5)
            try e.removeSource(media)
            _ = e.renderFrames(960)  // its fade-out
            let out = e.renderFrames(480)
            XCTAssertEqual(out.filter { $0 != 0 }.count, 0, "duck \(duck)")
            XCTAssertEqual((0..<960).filter { published[$0] != 0 }.count, 0, "duck \(duck)")
        }
    }

    /// One media bus per engine, counted once: with capture and ducking
    /// both on, ducking adds only its gain curve.
    func testTheMediaBusIsAllocatedOnceAndOnlyWhenNeeded() throws {
        func memory(capture: Bool, duck: Bool) -> Int {
            makeEngine { $0.captureRate = capture ? 16_000 : 0; $0.duckDepthDb = duck ? -12 : 0 }.stats().memoryBytes
        }
        let maxFrames = EngineConfig().maxFrames
        let bus = maxFrames * 2 * MemoryLayout<Float>.stride
        let curve = maxFrames * MemoryLayout<Float>.stride
        XCTAssertEqual(memory(capture: false, duck: true) - memory(capture: false, duck: false), bus + curve)
        XCTAssertEqual(memory(capture: true, duck: true) - memory(capture: true, duck: false), curve)
    }
}
