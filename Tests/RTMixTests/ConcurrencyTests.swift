import Foundation
import Synchronization
import XCTest
@testable import RTMix

/// Several producers, a renderer and a control thread running at once for a
/// few seconds (also run under ThreadSanitizer by scripts/test).
final class ConcurrencyTests: XCTestCase {
    static let seconds = 2.5

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func set() { value.store(true, ordering: .releasing) }
    }

    /// Runs `body` on a new thread; returns a join function.
    static func spawn(_ body: @escaping @Sendable () -> Void) -> () -> Void {
        let done = DispatchSemaphore(value: 0)
        let t = Thread { body(); done.signal() }
        t.start()
        return { done.wait() }
    }

    /// Renders in 256-frame blocks about 4× faster than real time until `stop`.
    static func renderLoop(_ e: Engine, stop: Flag, sink: @escaping @Sendable ([Float]) -> Void) -> () -> Void {
        spawn {
            var block = [Float](repeating: 0, count: 256 * e.config.channels)
            while !stop.isSet {
                block.withUnsafeMutableBufferPointer { try! e.render(into: $0, frames: 256) }
                sink(block)
                usleep(1_300)
            }
        }
    }

    /// Pushes `makeBlock(i)` blocks as fast as the ring accepts them.
    static func produce(_ e: Engine, _ id: SourceID, channels: Int, stop: Flag,
                        makeBlock: @escaping @Sendable (Int) -> [Float]) -> () -> Void {
        spawn {
            var i = 0
            var pending = makeBlock(0)
            var offset = 0
            while !stop.isSet {
                let n = pending[offset...].withUnsafeBufferPointer { (try? e.push($0, to: id, channels: channels)) ?? 0 }
                offset += n * channels
                if offset == pending.count {
                    i += 1
                    pending = makeBlock(i)
                    offset = 0
                } else {
                    usleep(500)
                }
            }
        }
    }

    func testProducersRendererAndControlConserveFrames() throws {
        let e = makeEngine { $0.maxSources = 8 }
        let stop = Flag()
        struct Stable { let id: SourceID; let rate: Int; let channels: Int }
        let stable = [
            Stable(id: try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 44_100, channels: 2)), rate: 44_100, channels: 2),
            Stable(id: try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 16_000, channels: 1)), rate: 16_000, channels: 1),
            Stable(id: try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2)), rate: 48_000, channels: 2),
        ]
        var joins: [() -> Void] = []
        for s in stable {
            let rate = s.rate, ch = s.channels
            joins.append(Self.produce(e, s.id, channels: ch, stop: stop) { i in
                Signal.sine(frequency: 440 + Double(i % 7) * 10, rate: rate, frames: 256 + (i * 37) % 700,
                            channels: ch, amplitude: 0.8)
            })
        }
        let peak = Mutex<Float>(0)
        let nonFinite = Mutex<Int>(0)
        joins.append(Self.renderLoop(e, stop: stop) { block in
            let m = block.map { abs($0) }.max()!
            peak.withLock { $0 = max($0, m) }
            if block.contains(where: { !$0.isFinite }) { nonFinite.withLock { $0 += 1 } }
        })
        // Control thread: churn temporary sources and gains.
        let churned = Mutex<Int>(0)
        joins.append(Self.spawn {
            var k = 0
            while !stop.isSet {
                k += 1
                let rate = [8_000, 16_000, 22_050, 48_000, 96_000][k % 5]
                if let id = try? e.addSource(SourceConfig.classic(domain: k % 2 == 0 ? .call : .media, sampleRate: rate, channels: 1 + k % 2)) {
                    let x = Signal.sine(frequency: 300, rate: rate, frames: rate / 50, channels: 1 + k % 2, amplitude: 0.5)
                    _ = x.withUnsafeBufferPointer { try? e.push($0, to: id, channels: 1 + k % 2) }
                    usleep(2_000)
                    try? e.removeSource(id)
                    churned.withLock { $0 += 1 }
                }
                try? e.setGain(Float(k % 5) / 4, for: stable[k % 3].id)
                try? e.setMuted(k % 7 == 0, for: stable[1].id)
                try? e.setDomainGain(Float(k % 3) / 2, for: k % 2 == 0 ? .media : .call)
                _ = e.stats()
                _ = try? e.stats(for: stable[0].id)
            }
        })
        Thread.sleep(forTimeInterval: Self.seconds)
        stop.set()
        joins.forEach { $0() }

        XCTAssertGreaterThan(churned.withLock { $0 }, 50)
        XCTAssertEqual(nonFinite.withLock { $0 }, 0)
        XCTAssertLessThan(peak.withLock { $0 }, 1)
        let st = e.stats()
        XCTAssertEqual(st.framesRendered, st.renderCalls * 256)
        XCTAssertGreaterThan(st.renderCalls, 500)
        for s in stable {
            let ss = try e.stats(for: s.id)
            // Every accepted frame is either consumed by the renderer or still buffered.
            XCTAssertEqual(ss.framesPushed, ss.framesConsumed + UInt64(ss.bufferedFrames), "rate \(s.rate)")
            XCTAssertGreaterThan(ss.framesConsumed, UInt64(Double(s.rate) * Self.seconds * 0.5))
            if s.rate == 48_000 { XCTAssertEqual(ss.framesRendered, ss.framesConsumed) }
            // A source contributes to at most every rendered frame; the rest are underruns.
            XCTAssertLessThanOrEqual(ss.framesRendered + ss.underrunFrames, st.framesRendered)
        }
    }

    /// One counter-coded stream (left = counter × right) through the
    /// renderer while the control thread changes its gain and adds/removes
    /// silent sources: every consumed frame comes out exactly once, in
    /// order, and every silent output frame is a reported underrun.
    func testCounterStreamHasNoDuplicationOrLoss() throws {
        let e = makeEngine { $0.maxSources = 6 }
        let period = 997
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 2))
        let stop = Flag()
        let rendered = Mutex<[Float]>([])
        var joins: [() -> Void] = []
        joins.append(Self.produce(e, id, channels: 2, stop: stop) { i in
            // Blocks of 300 frames continuing the counter.
            var b = [Float](repeating: 0.25, count: 600)
            for f in 0..<300 { b[2 * f] = 0.25 * Float((i * 300 + f) % period + 1) / Float(period) }
            return b
        })
        joins.append(Self.renderLoop(e, stop: stop) { block in rendered.withLock { $0 += block } })
        joins.append(Self.spawn {
            var k = 0
            while !stop.isSet {
                k += 1
                try? e.setGain(0.5 + Float(k % 5) / 4, for: id)
                if let other = try? e.addSource(SourceConfig.classic(domain: .call, sampleRate: 16_000, channels: 1)) {
                    let zeros = [Float](repeating: 0, count: 320)
                    _ = zeros.withUnsafeBufferPointer { try? e.push($0, to: other, channels: 1) }
                    usleep(1_000)
                    try? e.removeSource(other)
                }
                usleep(1_000)
            }
        })
        Thread.sleep(forTimeInterval: Self.seconds)
        stop.set()
        joins.forEach { $0() }

        let out = rendered.withLock { $0 }
        var previous: Int? = nil
        var decoded = 0, silent = 0, leading = 0, breaks = 0
        for f in 0..<(out.count / 2) {
            let l = out[2 * f], r = out[2 * f + 1]
            if r == 0 && l == 0 {
                // Before the first pushed frame plays nothing is an underrun
                // (on a loaded machine the renderer may run several blocks
                // before the producer's first push).
                if previous == nil { leading += 1 } else { silent += 1 }
                continue
            }
            let k = Int((l / r * Float(period)).rounded()) - 1
            if let p = previous, k != (p + 1) % period { breaks += 1 }
            previous = k
            decoded += 1
        }
        let s = try e.stats(for: id)
        XCTAssertEqual(breaks, 0, "frames duplicated, lost or reordered")
        XCTAssertEqual(UInt64(decoded), s.framesConsumed)
        XCTAssertEqual(UInt64(decoded), s.framesRendered)
        XCTAssertEqual(UInt64(silent + leading), UInt64(out.count / 2) - s.framesRendered)
        XCTAssertLessThanOrEqual(UInt64(silent), s.underrunFrames + 256)
        XCTAssertGreaterThan(decoded, 48_000)
    }
}
