import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import RTMix

/// speexdsp's mdf.c resets itself and prints "The echo canceller started
/// acting funny..." with fprintf (a write(2) on the real-time thread) after
/// 50 frames in which its foreground error exceeds the microphone.
/// `EchoCanceller.watch` mirrors that test and resets first (issue 16
/// item 4). These tests run the capture path on inputs that made the
/// library print and check that nothing reaches file descriptor 2.
final class EchoCancellerQuietTests: XCTestCase {
    /// Runs `body` with file descriptor 2 sent to a temporary file; returns
    /// what was written to it.
    func capturingStandardError(_ body: () throws -> Void) rethrows -> String {
        fflush(nil)
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("rtmix-stderr-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        let fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o600)
        precondition(fd >= 0)
        let saved = dup(2)
        dup2(fd, 2)
        defer {
            fflush(nil)
            dup2(saved, 2)
            close(saved)
            close(fd)
            unlink(path)
        }
        try body()
        fflush(nil)
        // Read back with POSIX calls: Foundation's file reading leaked its
        // 4 KiB buffer on an empty file under LeakSanitizer (asan-check).
        var bytes: [UInt8] = []
        let rfd = open(path, O_RDONLY)
        if rfd >= 0 {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(rfd, $0.baseAddress, 4096) }
                if n <= 0 { break }
                bytes += chunk[0..<n]
            }
            close(rfd)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The engine's playout is noise; the microphone hears its echo for
    /// 4 s (so the filter learns a path), then a full-scale square that
    /// no echo explains. mdf.c's error stays at ~1.6 × the microphone
    /// and, before the watch mirrored mdf.c's float test, it printed at
    /// 4.5 s (the earlier watch used "2 × the microphone", read off the
    /// fixed-point code).
    func runEchoThenSquare(rate: Int, squareHz: Int) throws -> (stderr: String, stats: CaptureStats,
                                                                    resets: [EngineEvent]) {
        var config = EngineConfig()
        config.sampleRate = rate
        config.channels = 1
        config.captureRate = rate
        let engine = try Engine(config)
        var source = SourceConfig.classic(domain: .call, sampleRate: rate, channels: 1)
        source.bufferFrames = 1 << 16
        let id = try engine.addSource(source)
        try engine.setStreamDelay(ms: 0)
        let block = rate / 100
        let d1 = rate / 40, d2 = 9 * rate / 160  // 25 ms and 56 ms
        var noise = EchoSim.Noise(seed: 7)
        var played = [Float](), play = [Float](repeating: 0, count: block)
        var rendered = [Float](repeating: 0, count: block)
        var mic = [Float](repeating: 0, count: block), out = [Float](repeating: 0, count: block)
        var events: [EngineEvent] = []
        let text = try capturingStandardError {
            for b in 0..<800 {  // 8 s
                for i in 0..<block { play[i] = 0.9 * noise.next() }
                _ = try play.withUnsafeBufferPointer { try engine.push($0, to: id, channels: 1) }
                try rendered.withUnsafeMutableBufferPointer { try engine.render(into: $0, frames: block) }
                played += rendered
                for i in 0..<block {
                    let n = b * block + i
                    if b < 400 {
                        let e1: Float = n >= d1 ? played[n - d1] : 0
                        let e2: Float = n >= d2 ? played[n - d2] : 0
                        mic[i] = 0.6 * e1 + 0.3 * e2
                    } else {
                        mic[i] = (n * squareHz * 2 / rate) % 2 == 0 ? -1 : 1
                    }
                }
                try mic.withUnsafeBufferPointer { m in
                    try out.withUnsafeMutableBufferPointer { o in
                        try engine.processCapture(mic: m, out: o, frames: block)
                    }
                }
                while let e = engine.nextEvent() { events.append(e) }
            }
        }
        return (text, engine.stats().capture, events.filter { $0.kind == .cancellerReset })
    }

    func testEchoThenFullScaleSquareResetsQuietly16k() throws {
        let r = try runEchoThenSquare(rate: 16_000, squareHz: 1000)
        print("echo then square, 16 kHz: resets \(r.stats.resets), reset events \(r.resets.map { $0.value }), "
              + "stderr \(r.stderr.count) bytes")
        XCTAssertEqual(r.stderr, "", "speexdsp printed from the capture call")
        // The watch acted (value 2: reset before speexdsp would), and
        // counted it.
        XCTAssertGreaterThanOrEqual(r.stats.resets, 1)
        XCTAssertTrue(r.resets.contains { $0.value == 2 })
    }

    func testEchoThenFullScaleSquareResetsQuietly48k() throws {
        let r = try runEchoThenSquare(rate: 48_000, squareHz: 500)
        print("echo then square, 48 kHz: resets \(r.stats.resets), reset events \(r.resets.map { $0.value }), "
              + "stderr \(r.stderr.count) bytes")
        XCTAssertEqual(r.stderr, "", "speexdsp printed from the capture call")
        XCTAssertGreaterThanOrEqual(r.stats.resets, 1)
    }

    /// A loud talker with no playout at all: the canceller does nothing
    /// (its error equals the microphone), which mdf.c never counts; the
    /// watch must not reset either.
    func testLoudMicrophoneWithSilentPlayoutIsNeverReset() throws {
        var config = EngineConfig()
        config.sampleRate = 16_000
        config.channels = 1
        config.captureRate = 16_000
        let engine = try Engine(config)
        let talker = EchoSim.speech(rate: 16_000, seconds: 6, seed: 3)
        var rendered = [Float](repeating: 0, count: 160), out = [Float](repeating: 0, count: 160)
        let text = try capturingStandardError {
            for b in 0..<(talker.count / 160) {
                try rendered.withUnsafeMutableBufferPointer { try engine.render(into: $0, frames: 160) }
                let mic = talker[(b * 160)..<(b * 160 + 160)].map { min(max(4 * $0, -1), 1) }
                try mic.withUnsafeBufferPointer { m in
                    try out.withUnsafeMutableBufferPointer { o in
                        try engine.processCapture(mic: m, out: o, frames: 160)
                    }
                }
            }
        }
        XCTAssertEqual(text, "")
        XCTAssertEqual(engine.stats().capture.resets, 0)
    }
}
