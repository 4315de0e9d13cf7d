import Foundation
import Synchronization
import XCTest
@testable import RTMix

/// The capture path under concurrency (also run under ThreadSanitizer by
/// scripts/test): a render thread and a capture thread run at once while a
/// control thread adds/removes sources and pushes into them, and another
/// changes source/domain/publish gains, moves the delay hint, switches the
/// output format and reads statistics and events. Bounded time.
final class CaptureConcurrencyTests: XCTestCase {
    static let seconds = 2.0

    typealias Flag = ConcurrencyTests.Flag

    final class Tally: Sendable {
        let ok = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let outOfRange = Atomic<Int>(0)
        let badState = Atomic<Int>(0)
        let frames = Atomic<Int>(0)
        func add(_ a: borrowing Atomic<Int>, _ n: Int = 1) { a.wrappingAdd(n, ordering: .relaxed) }
    }

    private func run(captureRate: Int, captureChannels: Int, duplex: Bool) throws {
        let e = makeEngine {
            $0.sampleRate = 48_000
            $0.channels = 2
            $0.maxFrames = 1024
            $0.maxSources = 8
            $0.captureRate = captureRate
            $0.captureChannels = captureChannels
            $0.aecTailMs = 200
            $0.agc = true
        }
        let stop = Flag()
        let rendered = Tally(), captured = Tally(), control = Tally()
        let captureBlock = captureRate / 100

        // One capture block of "mic": the tone the sources play, a little
        // noise, and now and then NaN/Inf (counted, never output).
        @Sendable func capture(_ round: Int, mic: inout [Float], micS16: inout [Int16],
                               out: inout [Float], outS16: inout [Int16]) {
            let n = captureBlock * captureChannels
            for i in 0..<n {
                let v = 0.3 * sinf(Float(round * captureBlock + i / captureChannels) * 0.07)
                    + 0.01 * Float((i * 7 + round) % 13 - 6)
                mic[i] = v
                micS16[i] = Int16(v * 32_000)
            }
            if round % 9 == 0 { mic[0] = .nan }
            if round % 11 == 0 { mic[n - 1] = -.infinity }
            do {
                if round % 4 == 3 {
                    try micS16.withUnsafeBufferPointer { m in
                        try outS16.withUnsafeMutableBufferPointer { o in
                            try e.processCapture(mic: m, out: o, frames: captureBlock)
                        }
                    }
                } else {
                    try mic.withUnsafeBufferPointer { m in
                        try out.withUnsafeMutableBufferPointer { o in
                            try e.processCapture(mic: m, out: o, frames: captureBlock)
                        }
                    }
                    if out[0..<n].contains(where: { !($0 >= -1 && $0 <= 1) }) { captured.add(captured.outOfRange) }
                }
                captured.add(captured.ok)
                captured.add(captured.frames, captureBlock)
            } catch {
                captured.add(captured.failures)
            }
        }

        @Sendable func renderOnce(_ block: inout [Float]) {
            let frames = e.config.sampleRate / 100
            let ok: Bool = block.withUnsafeMutableBufferPointer { b in
                do {
                    try e.render(into: b, frames: frames)
                    return true
                } catch {
                    if (error as? RTMixError) == .badState {
                        rendered.add(rendered.badState)  // an output-format change is in progress
                    } else {
                        rendered.add(rendered.failures)
                    }
                    return false
                }
            }
            if ok {
                rendered.add(rendered.ok)
                if block[0..<frames * e.config.channels].contains(where: { !($0 >= -1 && $0 <= 1) }) {
                    rendered.add(rendered.outOfRange)
                }
            }
        }

        var joins: [() -> Void] = []
        if duplex {
            // One thread: render, then capture (a duplex device callback).
            joins.append(ConcurrencyTests.spawn {
                var block = [Float](repeating: 0, count: 1024 * 2)
                var mic = [Float](repeating: 0, count: 1024 * 2), out = mic
                var micS16 = [Int16](repeating: 0, count: 1024 * 2), outS16 = micS16
                var round = 0
                while !stop.isSet {
                    renderOnce(&block)
                    capture(round, mic: &mic, micS16: &micS16, out: &out, outS16: &outS16)
                    round += 1
                    usleep(2_500)
                }
            })
        } else {
            joins.append(ConcurrencyTests.spawn {
                var block = [Float](repeating: 0, count: 1024 * 2)
                var round = 0
                while !stop.isSet {
                    renderOnce(&block)
                    round += 1
                    // Render stalls now and then: capture runs without reference.
                    usleep(round % 100 < 80 ? 2_500 : 12_000)
                }
            })
            joins.append(ConcurrencyTests.spawn {
                var mic = [Float](repeating: 0, count: 1024 * 2), out = mic
                var micS16 = [Int16](repeating: 0, count: 1024 * 2), outS16 = micS16
                var round = 0
                while !stop.isSet {
                    capture(round, mic: &mic, micS16: &micS16, out: &out, outS16: &outS16)
                    round += 1
                    usleep(2_500)
                }
            })
        }
        // Sources come and go; this thread is also their producer.
        joins.append(ConcurrencyTests.spawn {
            var ids: [SourceID?] = [nil, nil, nil]
            let formats = [(Domain.call, 16_000, 1), (Domain.media, 48_000, 2), (Domain.media, 44_100, 1)]
            var round = 0
            while !stop.isSet {
                let slot = round % ids.count
                if let id = ids[slot], round % 4 == 0 {
                    do { try e.removeSource(id) } catch { control.add(control.failures) }
                    ids[slot] = nil
                }
                if ids[slot] == nil {
                    let f = formats[slot]
                    ids[slot] = try? e.addSource(SourceConfig.classic(domain: f.0, sampleRate: f.1, channels: f.2))
                }
                for (i, id) in ids.enumerated() {
                    guard let id else { continue }
                    let f = formats[i]
                    let block = (0..<(f.1 / 100 * f.2)).map { 0.3 * sinf(Float($0 + round * 7) * 0.05) }
                    _ = block.withUnsafeBufferPointer { try? e.push($0, to: id, channels: f.2) }
                }
                control.add(control.ok)
                round += 1
                usleep(4_000)
            }
        })
        // Gains, publish gain, delay hint, output format, stats and events.
        joins.append(ConcurrencyTests.spawn {
            var round = 0
            while !stop.isSet {
                do {
                    try e.setDomainGain(Float(round % 5) * 0.4, for: .media)
                    try e.setDomainGain(Float(round % 3) * 0.5, for: .call)
                    try e.setPublishGain(Float(round % 4) * 0.3, for: .media)
                    try e.setStreamDelay(ms: round % 7 == 0 ? nil : 20 + (round * 13) % 120)
                } catch {
                    control.add(control.failures)
                }
                if round % 50 == 25 {
                    // HFP-like route change and back; fails with badState while rendering.
                    let rate = (round / 50) % 2 == 0 ? 16_000 : 48_000
                    do {
                        try e.setOutputFormat(sampleRate: rate, channels: rate == 16_000 ? 1 : 2)
                    } catch {
                        if (error as? RTMixError) != .badState { control.add(control.failures) }
                    }
                }
                let s = e.stats()
                if !(s.capture.erleDb.isFinite && s.capture.driftPpm.isFinite && s.capture.delayMs.isFinite) {
                    control.add(control.failures)
                }
                while e.nextEvent() != nil {}
                _ = e.publishGain(.media)
                round += 1
                usleep(3_000)
            }
        })

        Thread.sleep(forTimeInterval: CaptureConcurrencyTests.seconds)
        // On a loaded machine (sanitizers, other jobs) the threads may need
        // longer for the call counts below: wait for them, up to 20 s.
        let deadline = Date().addingTimeInterval(20)
        while (rendered.ok.load(ordering: .relaxed) <= 50 || captured.ok.load(ordering: .relaxed) <= 50)
            && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        stop.set()
        for j in joins { j() }

        let s = e.stats()
        let captureCalls = captured.ok.load(ordering: .relaxed)
        XCTAssertGreaterThan(rendered.ok.load(ordering: .relaxed), 50)
        XCTAssertGreaterThan(captureCalls, 50)
        XCTAssertEqual(rendered.failures.load(ordering: .relaxed), 0)
        XCTAssertEqual(captured.failures.load(ordering: .relaxed), 0)
        XCTAssertEqual(rendered.outOfRange.load(ordering: .relaxed), 0)
        XCTAssertEqual(captured.outOfRange.load(ordering: .relaxed), 0)
        XCTAssertEqual(control.failures.load(ordering: .relaxed), 0)
        XCTAssertEqual(s.capture.calls, UInt64(captureCalls))
        XCTAssertEqual(s.capture.frames, UInt64(captured.frames.load(ordering: .relaxed)))
        XCTAssertGreaterThan(s.capture.nonfiniteSamples, 0)
        XCTAssertEqual(s.captureRate, captureRate)
    }

    func testDuplexRenderAndCaptureWhileSourcesAndGainsChange() throws {
        try run(captureRate: 16_000, captureChannels: 1, duplex: true)
    }

    func testSeparateRenderAndCaptureThreadsWhileSourcesAndGainsChange() throws {
        try run(captureRate: 48_000, captureChannels: 2, duplex: false)
    }
}
