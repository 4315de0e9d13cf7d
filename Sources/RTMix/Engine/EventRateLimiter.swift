/// Rate limit of the event queues: a token bucket per (event type, source
/// lane), so one flapping source cannot flood the queue or hide the others.
///
/// Rule (documented in rtmix.h and docs/events.md): each (type, source)
/// pair may post `burst` (16) events at once and `perSecond` (8) per second
/// on average, timed on the engine's clock. An event over the limit is
/// dropped and counted; the next event of that pair that passes carries the
/// count (`suppressed`), and the engine stats keep the total. Sources share
/// 16 lanes (source id hashed), so with more than 16 sources two may share
/// a bucket. `eventsDropped` (the queue's own loss report) is never limited.
///
/// Producer thread only; real-time safe (fixed table, integer arithmetic).
struct EventRateLimiter {
    static var burst: UInt64 { @_noLocks get { 16 } }
    static var perSecond: UInt64 { @_noLocks get { 8 } }
    static var types: Int { @_noLocks get { 32 } }
    static var lanes: Int { @_noLocks get { 16 } }

    struct Bucket {
        /// Credit in ns: each event costs 1 s / perSecond; full = burst events.
        var credit: UInt64
        var last: UInt64
        var held: UInt32
        var used: Bool
    }

    let buckets: UnsafeMutablePointer<Bucket>

    init() {
        let n = EventRateLimiter.types * EventRateLimiter.lanes
        buckets = .allocate(capacity: n)
        buckets.initialize(repeating: Bucket(credit: 0, last: 0, held: 0, used: false), count: n)
    }

    func deallocate() { buckets.deallocate() }

    /// nil: over the limit (counted). Otherwise the event passes, and the
    /// result is how many events of its pair were held back before it.
    @_noLocks
    func admit(type: Int32, source: UInt32, now: UInt64) -> UInt32? {
        if type == 7 { return 0 }  // eventsDropped
        let cost = 1_000_000_000 / EventRateLimiter.perSecond
        let full = cost * EventRateLimiter.burst
        let t = Int(truncatingIfNeeded: type) & (EventRateLimiter.types - 1)
        let lane = Int(truncatingIfNeeded: (source ^ (source >> 8) ^ (source >> 16))) & (EventRateLimiter.lanes - 1)
        let b = buckets + (t * EventRateLimiter.lanes + lane)
        if !b.pointee.used {
            b.pointee = Bucket(credit: full, last: now, held: 0, used: true)
        } else if now > b.pointee.last {
            let gained = now - b.pointee.last
            b.pointee.credit = gained >= full ? full : min(full, b.pointee.credit + gained)
            b.pointee.last = now
        }
        guard b.pointee.credit >= cost else {
            if b.pointee.held < UInt32.max { b.pointee.held += 1 }
            return nil
        }
        b.pointee.credit -= cost
        let held = b.pointee.held
        b.pointee.held = 0
        return held
    }
}
