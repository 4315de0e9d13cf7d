import XCTest
@testable import RTMix

/// Issue 11, defect 6: allocation failure returns `.noMemory` (it trapped
/// before), leaks nothing and changes nothing; the per-engine memory cap;
/// configurations that can never work are rejected.
///
/// Failure injection (`Allocation.failNth`) makes the Nth allocation fail,
/// deterministically, so each test first counts a call's allocations and
/// then fails each of them in turn. `Allocation.live` (allocations not yet
/// freed) must come back to its value before the call. ASan
/// (scripts/asan-check) checks the same runs for leaks and double frees.
final class AllocationFailureTests: XCTestCase {
    override func tearDown() {
        Allocation.failNth(0)
        super.tearDown()
    }

    func expect(_ error: RTMixError, file: StaticString = #filePath, line: UInt = #line,
                _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) {
            XCTAssertEqual($0 as? RTMixError, error, file: file, line: line)
        }
    }

    static func captureConfig() -> EngineConfig {
        var c = EngineConfig()
        c.captureRate = 16_000
        c.maxFrames = 960
        return c
    }

    /// Counts the failable allocations `body` makes.
    func allocations(_ body: () throws -> Void) rethrows -> Int {
        Allocation.failNth(0)
        try body()
        return Allocation.failNth(0)
    }

    func testEveryFailurePointOfEngineCreate() throws {
        for config in [EngineConfig(), AllocationFailureTests.captureConfig()] {
            let n = try allocations { _ = try Engine(config) }
            // Engine: 5 batch buffers + histogram + slots + core; capture:
            // ring, tap, processor and their buffers.
            XCTAssertGreaterThanOrEqual(n, config.captureRate == 0 ? 8 : 30)
            for i in 1...n {
                let live = Allocation.live
                Allocation.failNth(i)
                expect(.noMemory) { _ = try Engine(config) }
                Allocation.failNth(0)
                XCTAssertEqual(Allocation.live, live, "allocation \(i) of \(n) leaked")
            }
            XCTAssertNoThrow(try Engine(config))
        }
    }

    func testEveryFailurePointOfSourceAdd() throws {
        let e = try Engine(AllocationFailureTests.captureConfig())
        var configs = [SourceConfig(domain: .call, sampleRate: 48_000, channels: 1),
                       SourceConfig(domain: .media, sampleRate: 44_100, channels: 2)]
        configs[1].targetBufferMs = 60
        for config in configs {
            let n = try allocations { _ = try e.addSource(config) }
            XCTAssertGreaterThanOrEqual(n, 5)  // ring, scratch, gain curve, render state, state
            let before = e.stats()
            for i in 1...n {
                let live = Allocation.live
                Allocation.failNth(i)
                expect(.noMemory) { _ = try e.addSource(config) }
                Allocation.failNth(0)
                XCTAssertEqual(Allocation.live, live, "allocation \(i) of \(n) leaked")
                let after = e.stats()
                XCTAssertEqual(after.activeSources, before.activeSources)
                XCTAssertEqual(after.sourcesAdded, before.sourcesAdded)
                XCTAssertEqual(after.memoryBytes, before.memoryBytes)
            }
        }
        XCTAssertEqual(e.stats().activeSources, 2)
    }

    func testFailedFormatChangeChangesNothing() throws {
        let e = try Engine(AllocationFailureTests.captureConfig())
        let id = try e.addSource(SourceConfig(domain: .media, sampleRate: 44_100, channels: 2))
        let n = try allocations { try e.setOutputFormat(sampleRate: 16_000, channels: 1) }
        XCTAssertGreaterThanOrEqual(n, 1)
        for i in 1...n {
            let live = Allocation.live
            Allocation.failNth(i)
            expect(.noMemory) { try e.setOutputFormat(sampleRate: 48_000, channels: 2) }
            Allocation.failNth(0)
            XCTAssertEqual(Allocation.live, live)
            XCTAssertEqual(e.config.sampleRate, 16_000)
            XCTAssertEqual(e.config.channels, 1)
        }
        try e.setOutputFormat(sampleRate: 48_000, channels: 2)
        var out = [Float](repeating: 0, count: 960)
        try out.withUnsafeMutableBufferPointer { try e.render(into: $0, frames: 480) }
        XCTAssertNoThrow(try e.stats(for: id))
    }

    func testMemoryCap() throws {
        var config = EngineConfig()
        config.maxMemoryBytes = 0  // no cap: measure
        let free = try Engine(config)
        let base = free.stats().memoryBytes
        XCTAssertGreaterThan(base, 0)
        var source = SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2)
        source.bufferFrames = 1 << 16  // 512 KiB of ring
        _ = try free.addSource(source)
        let perSource = free.stats().memoryBytes - base
        XCTAssertGreaterThanOrEqual(perSource, (1 << 16) * 2 * 4)

        config.maxMemoryBytes = base + perSource * 3 / 2
        let e = try Engine(config)
        XCTAssertEqual(e.stats().memoryBytes, base)
        _ = try e.addSource(source)
        XCTAssertEqual(e.stats().memoryBytes, base + perSource)
        expect(.limit) { _ = try e.addSource(source) }
        XCTAssertEqual(e.stats().activeSources, 1)
        source.bufferFrames = 1 << 12  // a small one still fits
        XCTAssertNoThrow(try e.addSource(source))

        // An engine whose own buffers exceed its cap is not created.
        config.maxMemoryBytes = base - 1
        expect(.limit) { _ = try Engine(config) }
        config.maxMemoryBytes = -1
        expect(.invalidArgument) { _ = try Engine(config) }
        XCTAssertEqual(EngineConfig().maxMemoryBytes, 64 << 20)
    }

    /// Before the cap, 256 sources of 2^22 stereo frames were accepted
    /// (8 GiB of rings); with the default 64 MiB cap the second is refused.
    func testDefaultCapRefusesGigabytesOfRings() throws {
        var config = EngineConfig()
        config.maxSources = 256
        let e = try Engine(config)
        var source = SourceConfig(domain: .media, sampleRate: 48_000, channels: 2)
        source.bufferFrames = SourceConfig.maxBufferFrames  // 32 MiB of ring
        _ = try e.addSource(source)
        expect(.limit) { _ = try e.addSource(source) }
        XCTAssertLessThanOrEqual(e.stats().memoryBytes, 64 << 20)
    }

    func testConfigurationsThatCanNeverWorkAreRejected() throws {
        var config = EngineConfig()
        config.maxFrames = 4096
        let e = try Engine(config)
        // A ring smaller than one block's input: every 4096-frame block
        // would underrun.
        var c = SourceConfig(domain: .call, sampleRate: 48_000, channels: 1)
        c.bufferFrames = 2048
        expect(.invalidArgument) { _ = try e.addSource(c) }
        c.bufferFrames = 4096
        XCTAssertNoThrow(try e.addSource(c))
        // 8 kHz into 48 kHz: a block needs 683 source frames (+ slack).
        c.sampleRate = 8_000
        c.bufferFrames = 512
        expect(.invalidArgument) { _ = try e.addSource(c) }
        c.bufferFrames = 1024
        XCTAssertNoThrow(try e.addSource(c))
        // An explicit ring smaller than the drift compensation's target.
        c.sampleRate = 48_000
        c.targetBufferMs = 200  // 9600 frames
        c.bufferFrames = 8192
        expect(.invalidArgument) { _ = try e.addSource(c) }
        XCTAssertEqual(c.validate(), .invalidArgument)
        c.bufferFrames = 9600  // rounded up to 16384
        XCTAssertNoThrow(try e.addSource(c))
        XCTAssertEqual(e.stats().activeSources, 3)
    }
}
