import Foundation
import Synchronization
import XCTest
@testable import RTMix

/// Cross-thread hand-offs that no other concurrency test runs on two threads
/// at once (docs/arm.md, memory-ordering review): the source position's
/// sequence lock read while the renderer publishes it, flush and end of
/// stream from the producer while the renderer consumes, and interruption
/// toggled by a control thread while rendering. Run under ThreadSanitizer
/// by scripts/test (the `tsan` step's filter matches `ConcurrencyTests`).
/// TSan checks the language's happens-before model: a hand-off without a
/// release/acquire pair is reported (and fails the step) even on x86.
final class HandoffConcurrencyTests: XCTestCase {
    static let seconds = 2.0

    func testPositionFlushEndAndInterruptionWhileRendering() throws {
        let e = makeEngine { $0.channels = 2 }
        let id = try e.addSource(SourceConfig(domain: .media, sampleRate: 44_100, channels: 2))
        let stop = ConcurrencyTests.Flag()
        var joins: [() -> Void] = []

        // Renderer, ~4× real time.
        let rendered = Mutex<Int>(0)
        joins.append(ConcurrencyTests.renderLoop(e, stop: stop) { block in
            if block.contains(where: { !$0.isFinite || abs($0) > 1 }) { rendered.withLock { $0 = -1_000_000 } }
            rendered.withLock { $0 += 1 }
        })

        // Producer: pushes, and every so often flushes (a seek) or ends the
        // stream and flushes to start again; all from the producer thread,
        // as the contract says.
        let flushes = Mutex<Int>(0)
        joins.append(ConcurrencyTests.spawn {
            let chunk = Signal.sine(frequency: 440, rate: 44_100, frames: 441, channels: 2, amplitude: 0.5)
            var k = 0
            while !stop.isSet {
                k += 1
                _ = chunk.withUnsafeBufferPointer { try? e.push($0, to: id, channels: 2) }
                if k % 40 == 0 {
                    try? e.flush(id)
                    flushes.withLock { $0 += 1 }
                } else if k % 97 == 0 {
                    try? e.endSource(id)
                    usleep(3_000)
                    try? e.flush(id)
                }
                usleep(1_000)
            }
        })

        // Position reader (a video clock): framesPlayed never goes back.
        let positionReads = Mutex<Int>(0)
        let wentBack = Mutex<Int>(0)
        joins.append(ConcurrencyTests.spawn {
            var last: UInt64 = 0
            while !stop.isSet {
                if let p = try? e.position(of: id) {
                    if p.framesPlayed < last { wentBack.withLock { $0 += 1 } }
                    last = p.framesPlayed
                    positionReads.withLock { $0 += 1 }
                }
                e.setOutputLatency(ns: UInt64(positionReads.withLock { $0 } % 5) * 1_000_000)
            }
        })

        // Control: interruption on and off.
        joins.append(ConcurrencyTests.spawn {
            var on = false
            while !stop.isSet {
                on.toggle()
                e.setInterrupted(on)
                usleep(7_000)
            }
            e.setInterrupted(false)
        })

        Thread.sleep(forTimeInterval: Self.seconds)
        stop.set()
        joins.forEach { $0() }

        XCTAssertGreaterThan(rendered.withLock { $0 }, 200, "renderer ran (and never produced a bad sample)")
        XCTAssertGreaterThan(flushes.withLock { $0 }, 5)
        XCTAssertGreaterThan(positionReads.withLock { $0 }, 100)
        XCTAssertEqual(wentBack.withLock { $0 }, 0, "the position's frames played never decrease")
        let s = try e.stats(for: id)
        XCTAssertEqual(s.framesPushed, s.framesConsumed + UInt64(s.bufferedFrames) + s.framesFlushed,
                       "every accepted frame was consumed, flushed or is still buffered")
    }
}
