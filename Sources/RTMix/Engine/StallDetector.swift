import Synchronization

/// Detects that the render callback stopped arriving, and that it came
/// back.
///
/// - Render side (`renderBegan`, render thread): on each call, the gap
///   since the previous call is compared with the block period of the
///   previous calls; a gap over `threshold` means rendering was absent
///   and has now resumed (→ `renderResumed`, value = the gap).
/// - Control side (`checkStalled`, under the control lock): the render
///   thread cannot report its own absence, so a control call (reading
///   events) compares the time since the last render with the same
///   threshold and reports `renderStalled` once per absence. Not while the
///   host said the output is interrupted (`setInterrupted`): an expected
///   absence is not an alarm; `renderResumed` still follows it.
///
/// Threshold: `factor` (4) periods, at least `minimumNs` (100 ms, as the
/// slot lifecycle's "renderer stopped" judgement: audio servers deliver
/// callbacks in bursts — PulseAudio's 10 ms callbacks arrive up to 75 ms
/// apart, measured by scripts/live-check — and small blocks have more
/// scheduling jitter than their own length). The period
/// is the larger of the last block's duration and the smoothed interval
/// between calls, so a host that calls every 10 ms with 5 ms blocks is
/// judged on 10 ms.
struct StallDetector: ~Copyable {
    static var factor: UInt64 { @_noLocks get { 4 } }
    static var minimumNs: UInt64 { @_noLocks get { RenderPasses.minIdleNs } }

    /// Time of the latest render call (0: none yet) and its threshold,
    /// published by the render thread.
    let lastRenderNs = Atomic<UInt64>(0)
    let thresholdNs = Atomic<UInt64>(0)
    /// Set by the host (`setInterrupted`): absence is expected.
    let interrupted = Atomic<Bool>(false)
    /// Render thread only: smoothed interval between calls (ns).
    let smoothedIntervalNs = Atomic<UInt64>(0)
    /// Control side (control lock): the render time already reported as
    /// stalled, so one absence is reported once.
    let reportedStallAt = Atomic<UInt64>(0)

    init() {}

    /// Render thread, at the start of each render call. `blockNs`: the
    /// duration of this call's block. Returns the gap (ns) when rendering
    /// resumes after an absence, else nil.
    @_noLocks
    func renderBegan(now: UInt64, blockNs: UInt64) -> UInt64? {
        let last = lastRenderNs.load(ordering: .relaxed)
        var resumedAfter: UInt64? = nil
        var interval = smoothedIntervalNs.load(ordering: .relaxed)
        if last != 0 && now > last {
            let gap = now - last
            let threshold = thresholdNs.load(ordering: .relaxed)
            if gap > threshold {
                resumedAfter = gap  // not folded into the smoothed interval
            } else {
                interval = interval == 0 ? gap : interval - interval / 8 + gap / 8
                smoothedIntervalNs.store(interval, ordering: .relaxed)
            }
        }
        let period = max(blockNs, interval)
        let (scaled, overflow) = period.multipliedReportingOverflow(by: StallDetector.factor)
        thresholdNs.store(max(overflow ? UInt64.max : scaled, StallDetector.minimumNs), ordering: .relaxed)
        lastRenderNs.store(max(now, 1), ordering: .releasing)
        return resumedAfter
    }

    /// Control side (control lock held): the time since the last render
    /// call when it exceeds the threshold and was not reported yet (and
    /// the host did not mark the output interrupted), else nil. `active`:
    /// whether an absence matters now (sources exist).
    func checkStalled(now: UInt64, active: Bool) -> UInt64? {
        let last = lastRenderNs.load(ordering: .acquiring)
        guard active, last != 0, now > last, !interrupted.load(ordering: .relaxed),
              reportedStallAt.load(ordering: .relaxed) != last else { return nil }
        let gap = now - last
        guard gap > thresholdNs.load(ordering: .relaxed) else { return nil }
        reportedStallAt.store(last, ordering: .relaxed)
        return gap
    }

    /// The host says the output is interrupted (`on`: true) or running
    /// again. Any thread; real-time safe.
    @_noLocks
    func setInterrupted(_ on: Bool) {
        interrupted.store(on, ordering: .relaxed)
    }
}
