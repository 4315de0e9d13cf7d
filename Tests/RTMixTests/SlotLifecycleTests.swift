import XCTest
import Synchronization
@testable import RTMix

/// The slot lifecycle protocol (SlotLifecycle), driven step by step through
/// the interleavings that matter, on one thread: each call below is one
/// atomic step another thread could take at that moment.
final class SlotLifecycleTests: XCTestCase {
    /// A slot, its control bookkeeping, the render passes and a dummy source.
    final class Rig {
        let slot = UnsafeMutablePointer<SourceSlot>.allocate(capacity: 1)
        let control = UnsafeMutablePointer<SlotControl>.allocate(capacity: 1)
        let passes = UnsafeMutablePointer<RenderPasses>.allocate(capacity: 1)
        let source: UnsafeMutablePointer<SourceState>
        init() {
            slot.initialize(to: SourceSlot())
            control.initialize(to: SlotControl())
            passes.initialize(to: RenderPasses())
            source = .allocate(capacity: 1)
            source.initialize(to: SourceState(config: SourceConfig(domain: .call, sampleRate: 48_000, channels: 1),
                                              engine: EngineConfig(), outputRate: 48_000, rampFrames: 480)!)
        }
        deinit {
            slot.deinitialize(count: 1); slot.deallocate()
            control.deallocate()
            passes.deinitialize(count: 1); passes.deallocate()
            source.deinitialize(count: 1); source.deallocate()
        }
        /// Control: one reclamation step at `now`; true when the state was handed back for freeing.
        func reclaim(now: UInt64) -> Bool { SlotLifecycle.reclaim(slot, control, passes: passes.pointee, nowNs: now) != nil }
        var phase: SlotPhase { SlotLifecycle.phase(slot) }
    }

    let ms: UInt64 = 1_000_000

    func testRemoveDuringARenderPass() {
        let r = Rig()
        SlotLifecycle.publish(r.slot, r.control, source: r.source, id: 7)
        r.passes.pointee.enter()                                  // render: pass begins
        XCTAssertNotNil(SlotLifecycle.visit(r.slot))              // render: sees it active
        SlotLifecycle.beginRemove(r.slot)                         // control: remove
        XCTAssertFalse(r.reclaim(now: 1_000 * ms))                // control: a pass runs, nothing freed
        XCTAssertEqual(r.phase, .removing)
        XCTAssertTrue(SlotLifecycle.retire(r.slot))               // render: its fade-out ended in this pass
        XCTAssertFalse(r.reclaim(now: 1_000 * ms), "the pass that may still read it has not ended")
        r.passes.pointee.leave(nowNs: 1_000 * ms, blockNs: 10 * ms)  // render: pass ends
        XCTAssertTrue(r.reclaim(now: 1_000 * ms))
        XCTAssertEqual(r.phase, .empty)
    }

    func testPinDuringRetire() {
        let r = Rig()
        SlotLifecycle.publish(r.slot, r.control, source: r.source, id: 7)
        XCTAssertNotNil(SlotLifecycle.pin(r.slot, id: 7))          // producer: inside a push
        SlotLifecycle.beginRemove(r.slot)                           // control: remove
        XCTAssertNil(SlotLifecycle.pin(r.slot, id: 7), "a removed source cannot be pinned")
        XCTAssertFalse(r.reclaim(now: 0), "never rendered: retired at once, but still pinned")
        XCTAssertEqual(r.phase, .retired)
        SlotLifecycle.unpin(r.slot)                                 // producer: push returns
        XCTAssertTrue(r.reclaim(now: 0))
    }

    /// The renderer stopped mid-fade (the device was stopped): the slot is
    /// retired once no pass has run for four of the last block periods
    /// (at least 100 ms: audio servers deliver callbacks in bursts).
    func testRendererStoppedMidFadeIsJudgedByItsBlockPeriodAndAFloor() {
        let r = Rig()
        SlotLifecycle.publish(r.slot, r.control, source: r.source, id: 7)
        let block: UInt64 = 5_333_333
        r.passes.pointee.enter()
        r.passes.pointee.leave(nowNs: 100 * ms, blockNs: block)
        SlotLifecycle.beginRemove(r.slot)
        r.passes.pointee.enter()                                    // one more (short) pass of the fade
        _ = SlotLifecycle.visit(r.slot)
        r.passes.pointee.leave(nowNs: 105 * ms, blockNs: block)     // ... and the device stops
        XCTAssertFalse(r.reclaim(now: 105 * ms + 100 * ms))         // not yet max(4 periods, 100 ms)
        XCTAssertEqual(r.phase, .removing)
        XCTAssertTrue(r.reclaim(now: 105 * ms + 100 * ms + 1))
        // With long blocks (4096 frames, 85 ms) four periods rule.
        let r2 = Rig()
        SlotLifecycle.publish(r2.slot, r2.control, source: r2.source, id: 7)
        let long: UInt64 = 85_333_333
        r2.passes.pointee.enter()
        r2.passes.pointee.leave(nowNs: 100 * ms, blockNs: long)
        SlotLifecycle.beginRemove(r2.slot)
        XCTAssertFalse(r2.reclaim(now: 100 * ms + 4 * long))
        XCTAssertTrue(r2.reclaim(now: 100 * ms + 4 * long + 1))
        XCTAssertEqual(r.phase, .empty)
    }

    /// A control thread retires the slot while a new render pass starts:
    /// the pass that saw it "removing" may still mix it, so the state lives
    /// until that pass ends.
    func testRetireByControlRacingANewPass() {
        let r = Rig()
        SlotLifecycle.publish(r.slot, r.control, source: r.source, id: 7)
        r.passes.pointee.enter()
        r.passes.pointee.leave(nowNs: 0, blockNs: 10 * ms)
        SlotLifecycle.beginRemove(r.slot)
        r.passes.pointee.enter()                                    // render resumes...
        XCTAssertNotNil(SlotLifecycle.visit(r.slot))                // ...and sees it removing
        XCTAssertFalse(r.reclaim(now: 500 * ms), "a pass is running: the renderer is not stopped")
        r.passes.pointee.leave(nowNs: 500 * ms, blockNs: 10 * ms)
        XCTAssertTrue(SlotLifecycle.retire(r.slot))                 // an interruption retires it
        r.passes.pointee.enter()                                    // a pass begins after the retire
        XCTAssertNil(SlotLifecycle.visit(r.slot), "retired: never rendered again")
        // The control thread cannot tell whether this pass began before the
        // retire (and may hold the state): it waits for the pass to end.
        XCTAssertFalse(r.reclaim(now: 500 * ms))
        r.passes.pointee.leave(nowNs: 510 * ms, blockNs: 10 * ms)
        XCTAssertTrue(r.reclaim(now: 510 * ms))
    }

    /// Format change during a removal (through the engine): the removed
    /// source is neither rebuilt into trouble nor heard again, and its slot
    /// is reclaimed.
    func testFormatChangeDuringRemove() throws {
        let e = makeEngine { $0.maxSources = 1 }
        let a = try e.addSource(SourceConfig.classic(domain: .media, sampleRate: 44_100, channels: 2))
        e.pushAll(Signal.constant(0.5, frames: 20_000, channels: 2), to: a, channels: 2)
        _ = e.renderFrames(480)
        try e.removeSource(a)
        _ = e.renderFrames(128)                                     // part of the fade
        try e.setOutputFormat(sampleRate: 16_000, channels: 1)      // route change to HFP
        Thread.sleep(forTimeInterval: 0.15)
        let b = try e.addSource(SourceConfig.classic(domain: .call, sampleRate: 16_000, channels: 1))
        let out = e.renderFrames(160)
        XCTAssertTrue(out.allSatisfy { $0 == 0 })
        XCTAssertNotNil(try? e.stats(for: b))
    }
}
