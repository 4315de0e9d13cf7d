import Synchronization

/// Where a source slot is in its life. Stored in `SourceSlot.phase` as the
/// raw value.
///
///     empty ─add→ active ─remove→ removing ─(fade-out done | renderer
///     stopped | interrupted)→ retired ─(no render pass, no pin)→ empty
enum SlotPhase: UInt32 {
    case empty = 0
    case active = 1
    case removing = 2
    case retired = 3
}

/// A permanent slot header (allocated with the engine, never freed before
/// it). The `SourceState` it points at comes and goes. All protocol steps
/// are the static functions of `SlotLifecycle`; nothing else changes
/// `phase`, `pins` or `source`.
struct SourceSlot: ~Copyable {
    let phase = Atomic<UInt32>(SlotPhase.empty.rawValue)
    let id = Atomic<UInt32>(0)
    /// Producer-side accesses in progress (push, get_buffered, ...).
    let pins = Atomic<Int>(0)
    let source = Atomic<UnsafeMutablePointer<SourceState>?>(nil)
    init() {}
}

/// Control-thread bookkeeping of a slot (guarded by the control lock).
struct SlotControl {
    /// The render pass counter seen (odd: inside a pass) after the slot was
    /// retired; nil until a pass was seen running. The state is freed once
    /// that pass has ended.
    var seqAtRetire: UInt64? = nil
}

/// The render pass counter and the renderer's pace, shared by the render
/// thread (writer) and control threads (readers).
///
/// `seq` is odd while a render pass runs. `lastEndNs` is the engine clock
/// when the last pass ended and `lastBlockNs` that block's duration: a
/// renderer whose last pass ended more than `idleBlocks` block periods ago,
/// and at least `minIdleNs`, is judged stopped (hosts stop devices without
/// telling anyone).
struct RenderPasses: ~Copyable {
    let seq = Atomic<UInt64>(0)
    let lastEndNs = Atomic<UInt64>(0)
    let lastBlockNs = Atomic<UInt64>(0)
    /// Block periods without a pass after which the renderer is stopped.
    static var idleBlocks: UInt64 { @_noLocks get { 4 } }
    /// Floor of that judgement: audio servers deliver callbacks in bursts
    /// (PulseAudio through ALSA: 10 ms callbacks up to 75 ms apart,
    /// measured by scripts/live-check), which must not look like a stop.
    static var minIdleNs: UInt64 { @_noLocks get { 100_000_000 } }
    init() {}

    /// Render thread, before touching any slot.
    @_noLocks
    func enter() { seq.wrappingAdd(1, ordering: .sequentiallyConsistent) }

    /// Render thread, after the last slot access of the pass.
    @_noLocks
    func leave(nowNs: UInt64, blockNs: UInt64) {
        lastEndNs.store(nowNs, ordering: .relaxed)
        lastBlockNs.store(blockNs, ordering: .relaxed)
        seq.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    /// The idle threshold for a block period.
    @_noLocks
    static func idleNs(blockNs: UInt64) -> UInt64 { max(minIdleNs, blockNs &* idleBlocks) }

    /// True when no pass runs and none ran for `idleBlocks` block periods
    /// (or none ever ran). Control threads.
    @_noLocks
    func rendererStopped(nowNs: UInt64) -> Bool {
        let s = seq.load(ordering: .sequentiallyConsistent)
        if s & 1 == 1 { return false }
        if s == 0 { return true }
        let end = lastEndNs.load(ordering: .relaxed)
        let block = lastBlockNs.load(ordering: .relaxed)
        return nowNs >= end && nowNs &- end > RenderPasses.idleNs(blockNs: block)
    }
}

/// The source-slot lifecycle protocol: publish (control), pin/unpin
/// (producers and lock-free readers), visit and retire (render), remove,
/// retire and reclaim (control). One place, so the interleavings can be
/// tested step by step (`SlotLifecycleTests`).
///
/// Memory reclamation: a state is freed only when the slot is `retired`,
/// no producer holds a pin (`pins == 0`) and the renderer is not inside a
/// pass that may have seen it (`seq` even, or changed since the slot was
/// seen retired during a pass). A pin is announced before the phase is
/// checked and a retire is stored before the pins are checked: that
/// store→load pattern (Dekker's) needs sequentially consistent accesses on
/// both sides; acquire/release alone would let both sides miss each other.
enum SlotLifecycle {
    /// Control (lock held): makes `source` live under `id`.
    static func publish(_ slot: UnsafeMutablePointer<SourceSlot>, _ control: UnsafeMutablePointer<SlotControl>,
                        source: UnsafeMutablePointer<SourceState>, id: UInt32) {
        slot.pointee.source.store(source, ordering: .relaxed)
        slot.pointee.id.store(id, ordering: .relaxed)
        control.pointee = SlotControl()
        // Render and producers acquire `phase` before reading the rest.
        slot.pointee.phase.store(SlotPhase.active.rawValue, ordering: .sequentiallyConsistent)
    }

    /// Control (lock held): starts the removal (the renderer fades it out).
    static func beginRemove(_ slot: UnsafeMutablePointer<SourceSlot>) {
        slot.pointee.phase.store(SlotPhase.removing.rawValue, ordering: .sequentiallyConsistent)
    }

    /// Control or render: a removing slot will not be rendered again.
    /// Returns whether this call retired it.
    @_noLocks @discardableResult
    static func retire(_ slot: UnsafeMutablePointer<SourceSlot>) -> Bool {
        slot.pointee.phase.compareExchange(expected: SlotPhase.removing.rawValue,
                                           desired: SlotPhase.retired.rawValue,
                                           ordering: .sequentiallyConsistent).exchanged
    }

    /// Render (inside a pass): the source to mix and whether it is being
    /// removed, or nil for a slot that is not live.
    @_noLocks
    static func visit(_ slot: UnsafeMutablePointer<SourceSlot>)
        -> (source: UnsafeMutablePointer<SourceState>, removing: Bool)? {
        let p = slot.pointee.phase.load(ordering: .sequentiallyConsistent)
        guard p == SlotPhase.active.rawValue || p == SlotPhase.removing.rawValue,
              let s = slot.pointee.source.load(ordering: .acquiring)
        else { return nil }
        return (s, p == SlotPhase.removing.rawValue)
    }

    /// Producer or any lock-free reader: pins the live source `id` against
    /// reclamation and returns it, or nil (nothing pinned). Pair every
    /// successful pin with `unpin`.
    @_noLocks
    static func pin(_ slot: UnsafeMutablePointer<SourceSlot>, id: UInt32) -> UnsafeMutablePointer<SourceState>? {
        slot.pointee.pins.wrappingAdd(1, ordering: .sequentiallyConsistent)
        guard slot.pointee.phase.load(ordering: .sequentiallyConsistent) == SlotPhase.active.rawValue,
              slot.pointee.id.load(ordering: .acquiring) == id,
              let s = slot.pointee.source.load(ordering: .acquiring)
        else {
            unpin(slot)
            return nil
        }
        return s
    }

    @_noLocks
    static func unpin(_ slot: UnsafeMutablePointer<SourceSlot>) {
        slot.pointee.pins.wrappingSubtract(1, ordering: .releasing)
    }

    /// Control (lock held): the live source `id` (phase active), or nil.
    static func lookup(_ slot: UnsafeMutablePointer<SourceSlot>, id: UInt32) -> UnsafeMutablePointer<SourceState>? {
        guard slot.pointee.phase.load(ordering: .acquiring) == SlotPhase.active.rawValue,
              slot.pointee.id.load(ordering: .relaxed) == id
        else { return nil }
        return slot.pointee.source.load(ordering: .acquiring)
    }

    /// Control (lock held): one reclamation step. Retires a removing slot
    /// when the renderer has stopped, then takes a retired slot's state
    /// once nothing can touch it and returns it for freeing (the slot is
    /// then empty). nil: nothing to free now.
    static func reclaim(_ slot: UnsafeMutablePointer<SourceSlot>, _ control: UnsafeMutablePointer<SlotControl>,
                        passes: borrowing RenderPasses, nowNs: UInt64) -> UnsafeMutablePointer<SourceState>? {
        var phase = slot.pointee.phase.load(ordering: .sequentiallyConsistent)
        if phase == SlotPhase.removing.rawValue && passes.rendererStopped(nowNs: nowNs) && retire(slot) {
            phase = SlotPhase.retired.rawValue
        }
        guard phase == SlotPhase.retired.rawValue else { return nil }
        let seq = passes.seq.load(ordering: .sequentiallyConsistent)
        let renderClear: Bool
        if let seen = control.pointee.seqAtRetire {
            renderClear = seq & 1 == 0 || seq != seen
        } else {
            renderClear = seq & 1 == 0
            if !renderClear { control.pointee.seqAtRetire = seq }
        }
        guard renderClear, slot.pointee.pins.load(ordering: .sequentiallyConsistent) == 0 else { return nil }
        let source = slot.pointee.source.exchange(nil, ordering: .acquiring)
        control.pointee = SlotControl()
        slot.pointee.phase.store(SlotPhase.empty.rawValue, ordering: .releasing)
        return source
    }

    /// The phase, for statistics and tests.
    @_noLocks
    static func phase(_ slot: UnsafeMutablePointer<SourceSlot>) -> SlotPhase {
        SlotPhase(rawValue: slot.pointee.phase.load(ordering: .acquiring)) ?? .empty
    }
}
