import Glibc
import Synchronization

// Threads, clocks and scheduling helpers for the demo. Nothing here is
// called from inside the render loop except `monotonicNs` and `sleepUntil`,
// which are plain system calls (no allocation, no locks).

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
func monotonicNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Sleeps until an absolute CLOCK_MONOTONIC deadline (retries on EINTR).
@inline(__always)
func sleepUntil(_ deadlineNs: UInt64) {
    var ts = timespec(tv_sec: Int(deadlineNs / 1_000_000_000), tv_nsec: Int(deadlineNs % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
}

/// Short polite wait used by the non-real-time waits (fast mode, writer).
@inline(__always)
func backoff(_ spins: inout Int) {
    spins += 1
    if spins < 64 { sched_yield() } else { usleep(100) }
}

/// Tries to switch the calling thread to SCHED_FIFO; returns false (and
/// changes nothing) when not permitted.
func trySchedFifo(priority: Int32) -> Bool {
    var param = sched_param()
    param.sched_priority = priority
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
}

/// Set by SIGINT/SIGTERM (see `installStopSignals`); polled by loops.
let stopRequested = Atomic<Bool>(false)

/// Ctrl-C ends a run early but cleanly (the WAV file is still finalized).
func installStopSignals() {
    _ = stopRequested.load(ordering: .relaxed)    // initialize the global before any signal
    let handler: @convention(c) (Int32) -> Void = { _ in stopRequested.store(true, ordering: .relaxed) }
    signal(SIGINT, handler)
    signal(SIGTERM, handler)
}

private final class ThreadBody {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// A joinable POSIX thread running `body`.
struct JoinableThread {
    private var handle: pthread_t

    init(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { arg in
            let body = Unmanaged<ThreadBody>.fromOpaque(arg!).takeRetainedValue()
            body.run()
            return nil
        }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        handle = tid
    }

    func join() { pthread_join(handle, nil) }
}
