import XCTest
@testable import RTMix

/// A simulated engine clock (ns) for tests that run faster than real time.
final class SimClock: @unchecked Sendable {
    var ns: UInt64 = 1_000_000_000
    func install(on e: Engine) throws {
        let read: @convention(c) (UnsafeMutableRawPointer?) -> UInt64 = { ctx in
            Unmanaged<SimClock>.fromOpaque(ctx!).takeUnretainedValue().ns
        }
        try e.setClock(read, context: Unmanaged.passUnretained(self).toOpaque())
    }
    func advance(frames: Int, rate: Int) { ns += UInt64(frames) * 1_000_000_000 / UInt64(rate) }
}

/// Issue 10: the per-source state machine, click-free stops, drain, flush,
/// pause, overrun policies, pull sources, interruptions and positions.
final class SourceTimingTests: XCTestCase {
    // MARK: the state machine on its own

    func testPlaybackStateMachine() {
        var p = SourcePlayback()
        // Priming: nothing until the threshold is held; no underrun counted.
        var plan = p.plan(buffered: 100, threshold: 200, paused: false, frames: 480)
        XCTAssertFalse(plan.pull)
        XCTAssertEqual(plan.underrunFrames, 0)
        XCTAssertEqual(p.phase, .priming)
        plan = p.plan(buffered: 200, threshold: 200, paused: false, frames: 480)
        XCTAssertTrue(plan.pull && plan.fadeIn && plan.started)
        XCTAssertEqual(p.phase, .playing)
        // A short block: an underrun begins, the source is starved.
        var fin = p.finish(produced: 100, frames: 480, exhausted: true, startOffset: 0)
        XCTAssertEqual(fin.underrunFrames, 380)
        XCTAssertTrue(fin.underrunBegan)
        XCTAssertEqual(p.phase, .starved)
        // Starved blocks count as underrun until the threshold is held again.
        plan = p.plan(buffered: 50, threshold: 200, paused: false, frames: 480)
        XCTAssertFalse(plan.pull)
        XCTAssertEqual(plan.underrunFrames, 480)
        plan = p.plan(buffered: 300, threshold: 200, paused: false, frames: 480)
        XCTAssertTrue(plan.pull && plan.fadeIn)
        XCTAssertFalse(plan.started)
        XCTAssertEqual(plan.underrunEnded, 380 + 480)
        fin = p.finish(produced: 480, frames: 480, exhausted: false, startOffset: 0)
        XCTAssertEqual(fin.underrunFrames, 0)
        // Pause: the audio stops (tail), nothing pulled, no underrun.
        plan = p.plan(buffered: 300, threshold: 200, paused: true, frames: 480)
        XCTAssertTrue(plan.stopBefore)
        XCTAssertFalse(plan.pull)
        XCTAssertEqual(p.phase, .paused)
        plan = p.plan(buffered: 0, threshold: 200, paused: true, frames: 480)
        XCTAssertEqual(plan.underrunFrames, 0)
        // Resume with enough audio: straight back to playing, fading in.
        plan = p.plan(buffered: 300, threshold: 200, paused: false, frames: 480)
        XCTAssertTrue(plan.pull && plan.fadeIn)
        // End: what is left plays even below the threshold, then it drains
        // without an underrun.
        p.ending = true
        fin = p.finish(produced: 100, frames: 480, exhausted: true, startOffset: 0)
        XCTAssertTrue(fin.drained)
        XCTAssertEqual(fin.underrunFrames, 0)
        XCTAssertEqual(p.phase, .drained)
        plan = p.plan(buffered: 0, threshold: 200, paused: false, frames: 480)
        XCTAssertFalse(plan.pull)
        // Flush: back to priming, the end is cleared.
        p.flush()
        XCTAssertEqual(p.phase, .priming)
        XCTAssertFalse(p.ending)
    }

    // MARK: drift control on its own

    /// The level model de/dt = drift − c with a sawtooth producer: the PI
    /// loop holds the low-water mark at the target with no standing offset
    /// and its integral is the drift.
    func testDriftControllerHasNoStandingOffsetAndEstimatesDrift() {
        for ppm in [-1000.0, -300, 300, 1000] {
            var d = DriftController(targetFrames: 4800, sampleRate: 48_000)
            var level = 4800.0 + 2400  // start 50 ms off target
            var consumed = 0.0
            var applied = 0.0
            for block in 0..<(180 * 100) {  // 180 s of 10 ms blocks
                if block % 5 == 0 {  // 50 ms bursts
                    level += 2400 * (1 + ppm / 1e6)
                }
                applied = d.update(level: level, consumed: consumed, blockSeconds: 0.01)
                level -= 480 * (1 + applied)
                consumed += 480 * (1 + applied)
            }
            XCTAssertEqual(d.estimatePpm, ppm, accuracy: 5, "ppm \(ppm)")
            XCTAssertEqual(d.lastLowWater, 4800, accuracy: 48, "low-water at target ±1 ms, ppm \(ppm)")
            XCTAssertFalse(d.saturated)
        }
    }

    func testDriftControllerSaturates() {
        var d = DriftController(targetFrames: 4800, sampleRate: 48_000)
        var level = 4800.0
        var consumed = 0.0
        for _ in 0..<(30 * 100) {
            level += 480 * (1 + 5000 / 1e6)
            let c = d.update(level: level, consumed: consumed, blockSeconds: 0.01)
            XCTAssertLessThanOrEqual(abs(c), DriftController.limit + 1e-12)
            level -= 480 * (1 + c)
            consumed += 480 * (1 + c)
        }
        XCTAssertTrue(d.saturated)
        XCTAssertEqual(d.estimatePpm, 5000, accuracy: 20, "the estimate is not clamped: it tells how far off")
    }

    // MARK: click-free underruns

    /// Issue 10's case: a 1 kHz tone pushed in 480-frame blocks, rendering
    /// 480 after each; then a block with nothing pushed. Before: the output
    /// stepped from the last sample to 0 in one sample. Now the largest step
    /// is no bigger than the tone's own plus the fade's.
    func testUnderrunOnBlockBoundaryIsClickFree() throws {
        for gapAt in [0, 1, 100, 479] {  // where in a block the audio runs out
            let e = makeEngine { $0.channels = 1 }
            let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
            let amplitude: Float = 0.8
            let tone = Signal.sine(frequency: 1000, rate: 48_000, frames: 48_000, amplitude: amplitude)
            var out: [Float] = []
            var pos = 0
            for _ in 0..<10 {
                e.pushAll(Array(tone[pos..<(pos + 480)]), to: id, channels: 1)
                pos += 480
                out += e.renderFrames(480)
            }
            if gapAt > 0 { e.pushAll(Array(tone[pos..<(pos + gapAt)]), to: id, channels: 1) }
            out += e.renderFrames(480)
            out += e.renderFrames(480)
            var toneStep: Float = 0
            for i in 1..<4800 { toneStep = max(toneStep, abs(tone[i] - tone[i - 1])) }
            let fadeStep = amplitude / 96  // 2 ms at 48 kHz
            var worst: Float = 0
            for i in 1..<out.count { worst = max(worst, abs(out[i] - out[i - 1])) }
            XCTAssertLessThanOrEqual(worst, toneStep + fadeStep, "gap at \(gapAt): largest step \(worst)")
            print("underrun at frame \(gapAt) of a block: largest step \(worst) (tone's own \(toneStep), + fade \(fadeStep))")
            XCTAssertEqual(try e.stats(for: id).underrunEvents, 1)
        }
    }

    // MARK: drain, flush, pause

    /// End of stream through a resampler: every pushed frame plays
    /// (including the filter's look-ahead), then `sourceDrained`, with no
    /// underrun counted.
    func testEndDrainsEverythingIncludingResamplerTail() throws {
        let e = makeEngine { $0.channels = 1 }
        var c = SourceConfig.classic(domain: .media, sampleRate: 44_100, channels: 1)
        c.startThresholdMs = 0
        let id = try e.addSource(c)
        let frames = 4410  // 100 ms of a constant
        e.pushAll(Signal.constant(0.5, frames: frames, channels: 1), to: id, channels: 1)
        try e.endSource(id)
        var out: [Float] = []
        for _ in 0..<30 { out += e.renderFrames(480) }
        let s = try e.stats(for: id)
        XCTAssertEqual(s.phase, .drained)
        XCTAssertEqual(s.underrunFrames, 0)
        XCTAssertEqual(s.underrunEvents, 0)
        XCTAssertEqual(s.framesConsumed, UInt64(frames))
        // The played length at 48 kHz: 100 ms = 4800 frames, plus the first
        // half of the 96-frame fade tail (above half amplitude), not 100 ms
        // minus the filter's look-ahead.
        let loud = out.filter { abs($0) > 0.25 }.count
        XCTAssertEqual(Double(loud), 4800 + 48, accuracy: 8)
        var kinds: [EngineEventKind] = []
        while let ev = e.nextEvent() { kinds.append(ev.kind) }
        XCTAssertTrue(kinds.contains(.sourceDrained))
        XCTAssertFalse(kinds.contains(.underrunBegan))
        // Pushing after the end is refused until a flush.
        XCTAssertThrowsError(try [Float(0.1)].withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) })
        try e.flush(id)
        XCTAssertNoThrow(try [Float](repeating: 0.1, count: 10).withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) })
    }

    /// Flush (a seek): the buffered audio is dropped with a fade-out, the id
    /// and its position stay, and audio pushed after the flush plays.
    func testFlushDropsOldAudioKeepsSourceAndPlaysNewAudio() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig(domain: .media, sampleRate: 48_000, channels: 1))  // defaults
        e.pushAll(Signal.constant(0.5, frames: 24_000, channels: 1), to: id, channels: 1)
        _ = e.renderFrames(4800)
        let before = try e.position(of: id).framesPlayed
        try e.flush(id)
        // The ring's space is released by the next render (the reader
        // drops the old audio; the producer may not move the read index).
        XCTAssertEqual(try e.writableFrames(of: id), 32_768 - 24_000 + 4800, accuracy: 128)  // + look-ahead
        _ = e.renderFrames(480)
        XCTAssertEqual(try e.writableFrames(of: id), 32_768)
        e.pushAll(Signal.constant(-0.25, frames: 9600, channels: 1), to: id, channels: 1)
        let out = e.renderFrames(4800)
        XCTAssertLessThanOrEqual(out.filter { $0 > 0.3 }.count, 96, "no old audio after the flush (its 2 ms tail at most)")
        XCTAssertTrue(out.contains { abs($0 + 0.25) < 0.01 }, "the new audio plays")
        let s = try e.stats(for: id)
        XCTAssertEqual(Double(s.framesFlushed), 24_000 - 4800, accuracy: 128)
        XCTAssertEqual(s.underrunEvents, 0)
        XCTAssertGreaterThan(try e.position(of: id).framesPlayed, before)
    }

    /// Pause: silence after a fade, the ring untouched, no underrun; resume
    /// fades back in with the audio where it stopped.
    func testPauseKeepsTheRingAndResumes() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig(domain: .media, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.5, frames: 24_000, channels: 1), to: id, channels: 1)
        _ = e.renderFrames(9600)
        let buffered = try e.bufferedFrames(of: id)
        try e.setPaused(true, for: id)
        let paused = e.renderFrames(4800)
        XCTAssertLessThan(abs(paused[0]), 0.5, "fading out")
        XCTAssertTrue(paused[96...].allSatisfy { $0 == 0 })
        XCTAssertEqual(try e.bufferedFrames(of: id), buffered)
        XCTAssertEqual(try e.stats(for: id).phase, .paused)
        try e.setPaused(false, for: id)
        let resumed = e.renderFrames(480)
        XCTAssertLessThan(resumed[0], 0.1)
        XCTAssertEqual(resumed[479], 0.5, accuracy: 1e-3)
        XCTAssertEqual(try e.stats(for: id).underrunFrames, 0)
    }

    // MARK: overrun policy

    func testOverrunPolicies() throws {
        let e = makeEngine { $0.channels = 1 }
        var call = SourceConfig(domain: .call, sampleRate: 16_000, channels: 1)
        call.bufferFrames = 4096
        let v = try e.addSource(call)
        var media = SourceConfig(domain: .media, sampleRate: 48_000, channels: 1)
        media.bufferFrames = 8192
        let m = try e.addSource(media)
        XCTAssertEqual(try e.writableFrames(of: m), 8192)
        // Media refuses what does not fit (completeness).
        let big = Signal.constant(0.1, frames: 10_000, channels: 1)
        let taken = try big.withUnsafeBufferPointer { try e.push($0, to: m, channels: 1) }
        XCTAssertEqual(taken, 8192)
        XCTAssertEqual(try e.writableFrames(of: m), 0)
        XCTAssertEqual(try e.stats(for: m).framesRejected, 10_000 - 8192)
        // Call takes everything and the renderer drops the oldest: latency
        // stays bounded however much is pushed without rendering.
        for _ in 0..<10 {
            let n = try Signal.constant(0.1, frames: 3200, channels: 1).withUnsafeBufferPointer {
                try e.push($0, to: v, channels: 1)
            }
            XCTAssertEqual(n, 3200)
        }
        _ = e.renderFrames(480)
        let s = try e.stats(for: v)
        // Dropped down to the 40 ms target plus one push (at most 20 ms),
        // minus the block just rendered.
        XCTAssertLessThanOrEqual(s.bufferedMs, 40 + 20 + 1, "dropped down to the target")
        XCTAssertGreaterThanOrEqual(s.bufferedMs, 40)
        XCTAssertGreaterThan(s.framesDropped, 20_000)
        XCTAssertEqual(s.framesRejected, 0)
        var dropped: Int64 = 0
        while let ev = e.nextEvent() {
            if ev.kind == .audioDropped && ev.source == v { dropped += ev.value }
        }
        XCTAssertEqual(UInt64(dropped), s.framesDropped)
    }

    /// Two threads pushing into one source (a contract violation): the
    /// second gets badState while the first is inside its push, and no
    /// memory outside the ring is touched (ASan/TSan runs check the latter).
    func testSecondConcurrentPusherGetsBadState() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        // Deterministic: hold the producer role as a first push would.
        let slot = EngineCore.slot(e.core, id: id.rawValue)
        let s = slot.pointee.source.load(ordering: .acquiring)!
        XCTAssertFalse(s.pointee.producerBusy.exchange(true, ordering: .acquiring))
        XCTAssertThrowsError(try [Float](repeating: 0, count: 8).withUnsafeBufferPointer {
            try e.push($0, to: id, channels: 1)
        }) { XCTAssertEqual($0 as? RTMixError, .badState) }
        s.pointee.producerBusy.store(false, ordering: .releasing)
        XCTAssertNoThrow(try [Float](repeating: 0, count: 8).withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) })
        // And for real: two threads hammering one source never overfill it.
        let ring = s.pointee.ring.capacityFrames
        let group = DispatchGroup()
        for _ in 0..<2 {
            DispatchQueue.global().async(group: group) {
                let chunk = [Float](repeating: 0.1, count: 700)
                for _ in 0..<2000 { _ = try? chunk.withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) } }
            }
        }
        for _ in 0..<200 { _ = e.renderFrames(480) }
        group.wait()
        XCTAssertLessThanOrEqual(try e.bufferedFrames(of: id), ring)
        XCTAssertLessThanOrEqual(s.pointee.ring.rawFill(), ring)
    }

    // MARK: pull sources

    func testPullSourceIsAskedForExactlyTheFramesNeeded() throws {
        final class Box { var calls: [Int32] = []; var value: Float = 0.25; var endAfter = 3 }
        let box = Box()
        let e = makeEngine { $0.channels = 1 }
        let cb: PullCallback = { ctx, out, frames, channels in
            let b = Unmanaged<Box>.fromOpaque(ctx!).takeUnretainedValue()
            b.calls.append(frames)
            if b.calls.count > b.endAfter { return -1 }
            for i in 0..<Int(frames * channels) { out![i] = b.value }
            return frames
        }
        let id = try e.addPullSource(SourceConfig(domain: .call, sampleRate: 48_000, channels: 1), callback: cb,
                                     context: Unmanaged.passUnretained(box).toOpaque())
        let out = e.renderFrames(480 * 3)
        XCTAssertEqual(box.calls, [480, 480, 480])
        XCTAssertTrue(out.allSatisfy { $0 == 0.25 })
        XCTAssertThrowsError(try [Float](repeating: 0, count: 8).withUnsafeBufferPointer { try e.push($0, to: id, channels: 1) })
        XCTAssertThrowsError(try e.flush(id))
        _ = e.renderFrames(960)  // the callback ends the stream
        XCTAssertEqual(try e.stats(for: id).phase, .drained)
        XCTAssertEqual(try e.stats(for: id).underrunFrames, 0)
    }

    // MARK: interruptions and stalls

    /// 5 s without render while the producers keep pushing. After the
    /// resume, the call source's latency is at its target (+20 ms at most)
    /// on the first callback, and media continues where it stopped.
    func testStallAndInterruptionDropStaleCallAudioAndResumeMedia() throws {
        for explicit in [false, true] {
            let clock = SimClock()
            let e = makeEngine { $0.channels = 1 }
            try clock.install(on: e)
            let voice = try e.addSource(SourceConfig(domain: .call, sampleRate: 16_000, channels: 1))
            var mc = SourceConfig(domain: .media, sampleRate: 48_000, channels: 1)
            mc.bufferFrames = 48_000
            let media = try e.addSource(mc)
            var mediaPushed = 0
            func run(seconds: Double, render: Bool) {
                for _ in 0..<Int(seconds * 100) {
                    e.pushAll(Signal.constant(0.1, frames: 160, channels: 1), to: voice, channels: 1)
                    if (try? e.bufferedFrames(of: media)) ?? 0 < 9600 {
                        let ramp = (0..<4800).map { Float(mediaPushed + $0) / 1e7 }
                        e.pushAll(ramp, to: media, channels: 1)
                        mediaPushed += 4800
                    }
                    clock.advance(frames: 480, rate: 48_000)
                    if render { _ = e.renderFrames(480) }
                }
            }
            run(seconds: 2, render: true)
            let consumedBefore = try e.stats(for: media).framesConsumed
            if explicit { e.setInterrupted(true) }
            run(seconds: 5, render: false)
            if explicit { e.setInterrupted(false) }
            _ = e.renderFrames(480)
            let v = try e.stats(for: voice)
            let p = try e.position(of: voice)
            let latencyMs = Double(p.latencyNs) / 1e6
            XCTAssertLessThanOrEqual(latencyMs, 40 + 20 + 10, "explicit \(explicit): call latency \(latencyMs) ms")
            print("stall/interruption (explicit \(explicit)): call latency on the first callback \(latencyMs) ms, dropped \(v.framesDropped) frames")
            XCTAssertGreaterThan(v.framesDropped, 0)
            // Media: nothing lost, it resumed where it stopped.
            let m = try e.stats(for: media)
            XCTAssertEqual(m.framesRejected, 0)
            XCTAssertEqual(Double(m.framesConsumed), Double(consumedBefore + 480), accuracy: 8, "explicit \(explicit)")
            var kinds: [EngineEventKind] = []
            while let ev = e.nextEvent() { kinds.append(ev.kind) }
            XCTAssertTrue(kinds.contains(.audioDropped))
        }
    }

    /// Issue 18 item 6: rtmix.h promises silence while interrupted, from
    /// the first render after `setInterrupted(true)`: no 2 ms fade-out
    /// tail of what was playing (before, the first block carried one:
    /// 96 non-zero frames at 48 kHz). Also with a tail already pending
    /// (an underrun at the last frame of the block before). The resume
    /// fades in over 2 ms (96 frames) from silence, also for an untimed
    /// source when no render came during the interruption (before, that
    /// one resumed at full level: a step of 0.5).
    func testInterruptionIsSilentFromTheFirstRenderAndTheResumeFadesIn() throws {
        for (domain, rate, gapAt, renderDuring) in [(Domain.media, 48_000, -1, true), (.call, 16_000, -1, true),
                                                    (.media, 48_000, 479, true), (.media, 48_000, -1, false)] {
            let label = "\(domain) \(rate) Hz, underrun at \(gapAt), render during \(renderDuring)"
            let e = makeEngine { $0.channels = 1 }
            var sc = SourceConfig.classic(domain: domain, sampleRate: rate, channels: 1)
            sc.bufferFrames = rate
            let id = try e.addSource(sc)
            let level: Float = 0.5
            let perBlock = rate / 100
            if gapAt >= 0 {
                e.pushAll(Signal.constant(level, frames: 10 * perBlock + gapAt, channels: 1), to: id, channels: 1)
                _ = e.renderFrames(10 * 480 + 480)  // ends on the underrun: its tail is pending
            } else {
                e.pushAll(Signal.constant(level, frames: rate / 2, channels: 1), to: id, channels: 1)
                let before = e.renderFrames(4800)
                XCTAssertEqual(before.last ?? 0, level, accuracy: 0.01, label)
            }
            e.setInterrupted(true)
            if renderDuring {
                let first = e.renderFrames(480)
                let loud = first.filter { $0 != 0 }.count
                XCTAssertEqual(loud, 0, "\(label): non-zero frames in the first render after setInterrupted(true)")
                print("interruption (\(label)): \(loud) non-zero frames in the first render")
                XCTAssertTrue(e.renderFrames(2400).allSatisfy { $0 == 0 }, label)
            }
            if gapAt >= 0 {
                e.pushAll(Signal.constant(level, frames: rate / 2, channels: 1), to: id, channels: 1)
            }
            e.setInterrupted(false)
            let resumed = e.renderFrames(480)
            let fade = 96  // 2 ms at 48 kHz
            XCTAssertLessThan(abs(resumed[0]), 2 * level / Float(fade), "\(label): resume does not fade in")
            XCTAssertEqual(resumed[479], level, accuracy: 0.01, label)
            var worst: Float = 0
            for i in 1..<resumed.count { worst = max(worst, abs(resumed[i] - resumed[i - 1])) }
            XCTAssertLessThanOrEqual(worst, 1.5 * level / Float(fade), "\(label): largest step \(worst)")
        }
    }

    // MARK: A/V sync position

    /// A marker pushed right after a render: its predicted play-out time
    /// (render time + latency) matches when it comes out within 1 ms, for a
    /// resampled, drift-compensated source whose producer runs 300 ppm fast.
    func testPositionPredictsMarkerPlayoutWithin1ms() throws {
        let clock = SimClock()
        let e = makeEngine { $0.channels = 1 }
        try clock.install(on: e)
        let id = try e.addSource(SourceConfig(domain: .media, sampleRate: 44_100, channels: 1))
        var owed = 0.0
        var out: [Float] = []
        var predictions: [(outputFrame: Double, index: Int)] = []
        let start = clock.ns
        var markerDue = 30 * 100  // blocks: 30 s in, after drift control settled
        for block in 0..<(40 * 100) {
            owed += 441 * (1 + 300e-6)
            let n = Int(owed)
            owed -= Double(n)
            var chunk = [Float](repeating: 0.05, count: n)
            if block == markerDue {
                let p = try e.position(of: id)
                let at = Double(p.renderTimeNs + p.latencyNs - start) * 48_000 / 1e9
                predictions.append((at, predictions.count))
                chunk[0] = 1
                markerDue += 200
            }
            e.pushAll(chunk, to: id, channels: 1)
            out += e.renderFrames(480)  // rendered at clock time start + block × 10 ms
            clock.advance(frames: 480, rate: 48_000)
        }
        XCTAssertGreaterThanOrEqual(predictions.count, 4)
        // Find each marker: the first output peak after its predicted time - 5 ms.
        for (predicted, _) in predictions {
            let from = Int(predicted) - 240
            let window = out[from..<(from + 2400)]
            let peak = window.indices.max { abs(out[$0]) < abs(out[$1]) }!
            let errorMs = (Double(peak) - predicted) / 48
            XCTAssertEqual(errorMs, 0, accuracy: 1, "marker at \(predicted): error \(errorMs) ms")
            print("position: marker predicted at output frame \(Int(predicted)), came out at \(peak): error \(errorMs) ms")
        }
    }
}
