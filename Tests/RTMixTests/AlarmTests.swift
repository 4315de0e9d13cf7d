import XCTest
@testable import RTMix

/// A clock the tests move by hand (simulated time, faster than real time).
nonisolated(unsafe) var alarmClockNs: UInt64 = 1_000_000_000
func alarmClock(_ context: UnsafeMutableRawPointer?) -> UInt64 { alarmClockNs }

/// Alarms (issue 10, item 8): timestamps, domains, rate limiting, render
/// stalled/resumed, "no RTC sound" (call audio missing), limiter heavy.
final class AlarmTests: XCTestCase {
    func drain(_ e: Engine) -> [EngineEvent] {
        var out: [EngineEvent] = []
        while let ev = e.nextEvent() { out.append(ev) }
        return out
    }

    /// An engine on the simulated clock; `render` advances it by the
    /// block's duration per block.
    func simulatedEngine(_ configure: (inout EngineConfig) -> Void = { _ in }) throws -> Engine {
        let e = makeEngine { $0.channels = 1; configure(&$0) }
        alarmClockNs = 1_000_000_000
        try e.setClock(alarmClock)
        return e
    }

    /// Renders `ms` in 10 ms blocks, advancing the simulated clock.
    func render(_ e: Engine, ms: Int, push: ((Int) -> Void)? = nil) {
        for b in 0..<(ms / 10) {
            push?(b)
            _ = e.renderFrames(480)
            alarmClockNs += 10_000_000
        }
    }

    // MARK: timestamps and domains

    func testEventsCarryTheEngineClockAndTheSourceDomain() throws {
        let e = try simulatedEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.1, frames: 480, channels: 1), to: id, channels: 1)
        alarmClockNs = 7_000_000_000
        _ = e.renderFrames(960)  // starves in the second block
        let ev = drain(e).first { $0.kind == .underrunBegan }
        XCTAssertEqual(ev?.timeNs, 7_000_000_000)
        XCTAssertEqual(ev?.domain, .media)
        XCTAssertEqual(ev?.source, id)
    }

    func testTimestampsAreMonotonicWithoutAHostClock() throws {
        let e = makeEngine { $0.channels = 1 }
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        var times: [UInt64] = []
        for _ in 0..<3 {
            e.pushAll(Signal.constant(0.1, frames: 240, channels: 1), to: id, channels: 1)
            _ = e.renderFrames(480)
            times += drain(e).map(\.timeNs)
        }
        XCTAssertGreaterThanOrEqual(times.count, 3)  // began; ended, began
        XCTAssertEqual(times, times.sorted())
        XCTAssertGreaterThan(times.first ?? 0, 0)
    }

    // MARK: rate limiting

    func testRateLimiterBurstRefillAndSuppressedCount() {
        let l = EventRateLimiter()
        defer { l.deallocate() }
        let t0: UInt64 = 5_000_000_000
        for i in 0..<16 { XCTAssertEqual(l.admit(type: 1, source: 3, now: t0), 0, "burst \(i)") }
        for _ in 0..<10 { XCTAssertNil(l.admit(type: 1, source: 3, now: t0)) }
        // Other types and sources have buckets of their own.
        XCTAssertEqual(l.admit(type: 2, source: 3, now: t0), 0)
        XCTAssertEqual(l.admit(type: 1, source: 4, now: t0), 0)
        // 8 per second: one more after 125 ms, carrying the 10 held back.
        XCTAssertNil(l.admit(type: 1, source: 3, now: t0 + 124_000_000))
        XCTAssertEqual(l.admit(type: 1, source: 3, now: t0 + 125_000_000), 11)
        XCTAssertNil(l.admit(type: 1, source: 3, now: t0 + 126_000_000))
        // After a quiet while, the full burst again (not more).
        let t1 = t0 + 60_000_000_000
        for _ in 0..<16 { XCTAssertNotNil(l.admit(type: 1, source: 3, now: t1)) }
        XCTAssertNil(l.admit(type: 1, source: 3, now: t1))
        // eventsDropped is never limited.
        for _ in 0..<100 { XCTAssertEqual(l.admit(type: 7, source: 0, now: t0), 0) }
    }

    /// One source flapping every block (100 underrun episodes a second)
    /// cannot flood the queue; what is held back is counted.
    func testAnUnderrunStormIsRateLimited() throws {
        let e = try simulatedEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        render(e, ms: 3000) { _ in
            e.pushAll(Signal.constant(0.1, frames: 240, channels: 1), to: id, channels: 1)
        }
        let events = drain(e)
        let began = events.filter { $0.kind == .underrunBegan }
        // 299 episodes in 3 s: 16 at once, then 8/s → 16 + 24 (± 1).
        XCTAssertEqual(Double(began.count), 40, accuracy: 1)
        XCTAssertFalse(events.contains { $0.kind == .eventsDropped })
        let suppressed = began.map { UInt64($0.suppressed) }.reduce(0, +)
        XCTAssertGreaterThan(suppressed, 200)
        XCTAssertEqual(try e.stats(for: id).underrunEvents, 299)  // the first block starts it
        XCTAssertGreaterThanOrEqual(e.stats().eventsSuppressed, suppressed)
    }

    // MARK: render stalled / resumed

    func testStallDetectorJudgesGapsAgainstTheBlockPeriod() {
        let d = StallDetector()
        var t: UInt64 = 1_000_000_000
        for _ in 0..<20 {
            XCTAssertNil(d.renderBegan(now: t, blockNs: 10_000_000))
            t += 10_000_000
        }
        // 4 periods of 10 ms, but at least 100 ms (audio servers deliver
        // callbacks in bursts: PulseAudio's 10 ms callbacks come up to 75 ms
        // apart): 95 ms is not a stall, 105 ms is.
        XCTAssertNil(d.checkStalled(now: t - 10_000_000 + 95_000_000, active: true))
        XCTAssertEqual(d.checkStalled(now: t - 10_000_000 + 105_000_000, active: true), 105_000_000)
        XCTAssertNil(d.checkStalled(now: t + 100_000_000, active: true))  // once per absence
        XCTAssertEqual(d.renderBegan(now: t + 200_000_000, blockNs: 10_000_000), 210_000_000)
        // Larger blocks: a longer threshold (4 × 50 ms).
        let d2 = StallDetector()
        t = 1_000_000_000
        for _ in 0..<5 { _ = d2.renderBegan(now: t, blockNs: 50_000_000); t += 50_000_000 }
        XCTAssertNil(d2.checkStalled(now: t - 50_000_000 + 195_000_000, active: true))
        XCTAssertNotNil(d2.checkStalled(now: t - 50_000_000 + 205_000_000, active: true))
        // Not before the first render, not without sources, not while
        // interrupted.
        let d3 = StallDetector()
        XCTAssertNil(d3.checkStalled(now: 9_000_000_000, active: true))
        _ = d3.renderBegan(now: 1_000_000_000, blockNs: 10_000_000)
        XCTAssertNil(d3.checkStalled(now: 2_000_000_000, active: false))
        d3.setInterrupted(true)
        XCTAssertNil(d3.checkStalled(now: 2_000_000_000, active: true))
        d3.setInterrupted(false)
        XCTAssertEqual(d3.checkStalled(now: 2_000_000_000, active: true), 1_000_000_000)
    }

    func testRenderStalledAndResumedThroughTheEngine() throws {
        let e = try simulatedEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        e.pushAll(Signal.constant(0.1, frames: 9600, channels: 1), to: id, channels: 1)
        render(e, ms: 200)
        XCTAssertEqual(drain(e).filter { $0.kind == .renderStalled || $0.kind == .renderResumed }, [])
        // The device stops calling: 90 ms is a burst gap, 110 ms a stall.
        let lastRender = alarmClockNs - 10_000_000
        alarmClockNs = lastRender + 90_000_000
        XCTAssertNil(e.nextEvent())
        alarmClockNs = lastRender + 110_000_000
        let stalled = e.nextEvent()
        XCTAssertEqual(stalled?.kind, .renderStalled)
        XCTAssertEqual(stalled?.value, 110_000_000)
        XCTAssertEqual(stalled?.timeNs, alarmClockNs)
        alarmClockNs += 390_000_000
        XCTAssertNil(e.nextEvent())  // reported once
        _ = e.renderFrames(480)
        let resumed = drain(e).first { $0.kind == .renderResumed }
        XCTAssertEqual(resumed?.value, 500_000_000)
        XCTAssertEqual(resumed?.timeNs, alarmClockNs)
    }

    func testAnInterruptionIsNotAStallButResumeIsReported() throws {
        let e = try simulatedEngine()
        _ = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        render(e, ms: 100)
        _ = drain(e)
        e.core.pointee.stall.setInterrupted(true)  // the hook the host's interruption calls
        alarmClockNs += 2_000_000_000
        XCTAssertNil(e.nextEvent())
        e.core.pointee.stall.setInterrupted(false)
        _ = e.renderFrames(480)
        XCTAssertEqual(drain(e).filter { $0.kind == .renderResumed }.count, 1)
    }

    // MARK: call audio missing ("no RTC sound")

    func feed(_ m: inout CallAudioMonitor, blocks: Int, fed: Bool = true, produced: Int = 480,
              peak: Float = 0.3, gain: Float = 1) -> [Int64] {
        (0..<blocks).map { _ in m.update(frames: 480, fed: fed, producedFrames: produced, inputPeak: peak, gain: gain) }
            .filter { $0 != 0 }
    }

    func testCallAudioMonitorCausesAndRearm() {
        var m = CallAudioMonitor(alarmFrames: 48_000)  // 1 s at 48 kHz
        XCTAssertEqual(feed(&m, blocks: 500), [])  // audible
        XCTAssertEqual(feed(&m, blocks: 99, fed: false, produced: 0), [])
        XCTAssertEqual(feed(&m, blocks: 1, fed: false, produced: 0), [CallAudioMissingCause.notFed.rawValue])
        XCTAssertEqual(feed(&m, blocks: 300, fed: false, produced: 0), [])  // once per episode
        XCTAssertEqual(feed(&m, blocks: 1), [])  // audible again: re-armed
        XCTAssertEqual(feed(&m, blocks: 100, peak: 0.0005), [CallAudioMissingCause.silentInput.rawValue])
        XCTAssertEqual(feed(&m, blocks: 1), [])
        XCTAssertEqual(feed(&m, blocks: 100, gain: 0), [CallAudioMissingCause.muted.rawValue])
        XCTAssertEqual(feed(&m, blocks: 1), [])
        XCTAssertEqual(feed(&m, blocks: 100, peak: 0.01, gain: 0.05), [CallAudioMissingCause.muted.rawValue])
        XCTAssertEqual(feed(&m, blocks: 1), [])
        XCTAssertEqual(feed(&m, blocks: 100, produced: 0), [CallAudioMissingCause.starved.rawValue])
        XCTAssertEqual(feed(&m, blocks: 1), [])
        // Fed every other block (bursty host) while starving: still starved.
        var out: [Int64] = []
        for b in 0..<100 {
            out += feed(&m, blocks: 1, fed: b % 2 == 0, produced: 0)
        }
        XCTAssertEqual(out, [CallAudioMissingCause.starved.rawValue])
        // Unmeasured peak (< 0): producing at a gain counts as audible.
        XCTAssertEqual(feed(&m, blocks: 300, peak: -1), [])
        // Off.
        var off = CallAudioMonitor(alarmFrames: 0)
        XCTAssertEqual(feed(&off, blocks: 1000, fed: false, produced: 0), [])
    }

    func missingEvents(_ e: Engine) -> [EngineEvent] { drain(e).filter { $0.kind == .callAudioMissing } }

    func testNoRtcSoundWhenTheHostStopsFeeding() throws {
        let e = try simulatedEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let block = Signal.sine(frequency: 440, rate: 48_000, frames: 480, channels: 1, amplitude: 0.3, phase: 0)
        render(e, ms: 3000) { _ in e.pushAll(block, to: id, channels: 1) }
        XCTAssertEqual(missingEvents(e), [])
        render(e, ms: 1990)
        XCTAssertEqual(missingEvents(e), [])
        render(e, ms: 20)
        let ev = missingEvents(e)
        XCTAssertEqual(ev.map(\.value), [CallAudioMissingCause.notFed.rawValue])
        XCTAssertEqual(ev.first?.source, id)
        XCTAssertEqual(ev.first?.domain, .call)
        render(e, ms: 5000)
        XCTAssertEqual(missingEvents(e), [])  // once
        render(e, ms: 500) { _ in e.pushAll(block, to: id, channels: 1) }
        render(e, ms: 2100)
        XCTAssertEqual(missingEvents(e).map(\.value), [CallAudioMissingCause.notFed.rawValue])  // re-armed
    }

    /// Issue 18 item 13: a call source the host ended (and that played
    /// out), like the marker source of `rtmix-cli live` between markers,
    /// or one silent during an interruption, is expected to be silent: no
    /// alarm (before: `notFed` after 2 s). Reopened by a flush and not fed,
    /// it alarms again.
    func testNoRtcSoundAlarmForAnEndedOrInterruptedCallSource() throws {
        let e = try simulatedEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let block = Signal.sine(frequency: 440, rate: 48_000, frames: 480, channels: 1, amplitude: 0.3, phase: 0)
        e.pushAll(block, to: id, channels: 1)
        try e.endSource(id)
        render(e, ms: 5000)
        XCTAssertEqual(try e.stats(for: id).phase, .drained)
        XCTAssertEqual(missingEvents(e), [], "ended source")
        try e.flush(id)
        render(e, ms: 2100)
        XCTAssertEqual(missingEvents(e).map(\.value), [CallAudioMissingCause.notFed.rawValue], "reopened, not fed")
        render(e, ms: 500) { _ in e.pushAll(block, to: id, channels: 1) }
        e.setInterrupted(true)
        // Fed all along (what does not fit is refused: nothing is consumed).
        render(e, ms: 5000) { _ in _ = block.withUnsafeBufferPointer { try? e.push($0, to: id, channels: 1) } }
        XCTAssertEqual(missingEvents(e), [], "interrupted")
    }

    func testNoRtcSoundWhenTheCallSourceIsMuted() throws {
        let e = try simulatedEngine { $0.callAudioMissingMs = 500 }
        let id = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        let block = Signal.sine(frequency: 440, rate: 48_000, frames: 480, channels: 1, amplitude: 0.3, phase: 0)
        try e.setMuted(true, for: id)
        render(e, ms: 490) { _ in e.pushAll(block, to: id, channels: 1) }
        XCTAssertEqual(missingEvents(e), [])
        render(e, ms: 20) { _ in e.pushAll(block, to: id, channels: 1) }
        XCTAssertEqual(missingEvents(e).map(\.value), [CallAudioMissingCause.muted.rawValue])
    }

    func testNoAlarmForMediaSourcesOrWhenOff() throws {
        let e = try simulatedEngine { $0.callAudioMissingMs = 0 }
        _ = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 48_000, channels: 1))
        render(e, ms: 5000)
        XCTAssertEqual(missingEvents(e), [])
        let e2 = try simulatedEngine()
        _ = try e2.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        render(e2, ms: 5000)
        XCTAssertEqual(missingEvents(e2), [])
    }

    // MARK: limiter heavy

    func testLimiterHeavyOncePerEpisode() throws {
        let e = try simulatedEngine()
        let id = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 48_000, channels: 1))
        func play(_ level: Float, ms: Int) {
            render(e, ms: ms) { _ in e.pushAll(Signal.constant(level, frames: 480, channels: 1), to: id, channels: 1) }
        }
        play(1.2, ms: 500)  // 2.6 dB over the -1 dBFS threshold: engaged, not heavy
        XCTAssertEqual(drain(e).filter { $0.kind == .limiterHeavy }, [])
        play(3, ms: 500)  // 10.5 dB over
        let heavy = drain(e).filter { $0.kind == .limiterHeavy }
        XCTAssertEqual(heavy.count, 1)
        XCTAssertLessThan(heavy.first?.value ?? 0, -600)
        play(3, ms: 500)
        XCTAssertEqual(drain(e).filter { $0.kind == .limiterHeavy }, [])
        play(0.1, ms: 1000)  // recovers
        play(3, ms: 100)
        XCTAssertEqual(drain(e).filter { $0.kind == .limiterHeavy }.count, 1)
    }
}
