import Synchronization

/// Lifecycle of a slot. Transitions:
/// empty → active (control, add) → removing (control, remove) →
/// retired (render after the fade-out, or control when the renderer has been
/// idle) → empty (control, after freeing the state).
@usableFromInline
enum SlotState {
    @usableFromInline static var empty: UInt32 { @_noLocks get { 0 } }
    @usableFromInline static var active: UInt32 { @_noLocks get { 1 } }
    @usableFromInline static var removing: UInt32 { @_noLocks get { 2 } }
    @usableFromInline static var retired: UInt32 { @_noLocks get { 3 } }
}

/// A permanent slot header (allocated with the engine, never freed before
/// it). The state it points at comes and goes.
///
/// Memory reclamation: a state is freed only when the slot is `retired`,
/// no producer is inside a push on it (`pushers == 0`), and the renderer is
/// not inside a pass that may have seen it (`renderSeq` even, or changed
/// since the slot retired). Those loads and stores are sequentially
/// consistent so the three conditions are judged in one total order.
@usableFromInline
struct SourceSlot: ~Copyable {
    @usableFromInline let state = Atomic<UInt32>(SlotState.empty)
    @usableFromInline let id = Atomic<UInt32>(0)
    @usableFromInline let pushers = Atomic<Int>(0)
    @usableFromInline let source = Atomic<UnsafeMutablePointer<SourceState>?>(nil)
    init() {}
}

/// Control-thread bookkeeping of a slot (guarded by the control lock).
@usableFromInline
struct SlotControl {
    /// renderSeq observed right after the slot was marked removing.
    var seqAtRemove: UInt64 = 0
    var removedAtNs: UInt64 = 0
    /// renderSeq observed after the slot became retired (nil: not yet seen).
    var seqAtRetire: UInt64? = nil
}
