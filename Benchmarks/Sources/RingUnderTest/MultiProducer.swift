// Several producer threads push into their own sources while one thread
// renders: the engine through its public Swift API.
import Foundation
import RTMix
import Synchronization

/// `sources` bypass sources (48 kHz stereo) fed by `threads` producer
/// threads (thread k feeds sources k, k + threads, ...), each pushing 10 ms
/// blocks (480 frames) as fast as the rings take them (sched_yield when all
/// its rings are full). `waitForData()` (not measured) waits until every
/// source holds a block, so each measured `render()` mixes real data while
/// the producers keep writing. Push-call times are recorded per thread
/// (preallocated; nothing allocates while running).
public final class MultiProducerCase: @unchecked Sendable {
    public let sources: Int
    public let threads: Int
    let engine: Engine
    var ids: [SourceID] = []
    let stop = Atomic<Bool>(false)
    let running = Atomic<Int>(0)
    public let output: UnsafeMutableBufferPointer<Float>
    /// Per thread: push-call durations (ns) and how many were recorded.
    var pushTimes: [UnsafeMutableBufferPointer<UInt64>] = []
    var pushCounts: [UnsafeMutablePointer<Int>] = []
    let framesPushed = Atomic<Int>(0)
    var startNs: UInt64 = 0
    var waits = 0
    static let maxSamples = 400_000

    public init(sources: Int, threads: Int) throws {
        self.sources = sources
        self.threads = threads
        var config = EngineConfig()
        config.maxFrames = 480
        config.maxSources = 8
        engine = try Engine(config)
        for _ in 0..<sources {
            var sc = SourceConfig(domain: .media, sampleRate: 48_000, channels: 2)
            sc.bufferFrames = 4096
            ids.append(try engine.addSource(sc))
        }
        for _ in 0..<threads {
            pushTimes.append(.allocate(capacity: MultiProducerCase.maxSamples))
            let c = UnsafeMutablePointer<Int>.allocate(capacity: 1)
            c.initialize(to: 0)
            pushCounts.append(c)
        }
        output = .allocate(capacity: 480 * 2)
        output.initialize(repeating: 0)
    }

    deinit {
        for p in pushTimes { p.deallocate() }
        for c in pushCounts { c.deallocate() }
        output.deallocate()
    }

    static func nowNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Starts the producer threads.
    public func start() {
        startNs = MultiProducerCase.nowNs()
        for k in 0..<threads {
            let mine = stride(from: k, to: sources, by: threads).map { ids[$0] }
            nonisolated(unsafe) let times = pushTimes[k], count = pushCounts[k]
            running.wrappingAdd(1, ordering: .relaxed)
            let thread = Thread { [self] in
                var block = [Float](repeating: 0, count: 480 * 2)
                for i in 0..<480 { let v = 0.01 * Float(k + 1) * Float(i % 48) / 48; block[2 * i] = v; block[2 * i + 1] = v }
                var offsets = [Int](repeating: 0, count: mine.count)
                block.withUnsafeBufferPointer { b in
                    while !stop.load(ordering: .relaxed) {
                        var any = 0
                        for (j, id) in mine.enumerated() {
                            let slice = UnsafeBufferPointer(rebasing: b[(offsets[j] * 2)...])
                            let t0 = MultiProducerCase.nowNs()
                            let n = (try? engine.push(slice, to: id, channels: 2)) ?? 0
                            let t1 = MultiProducerCase.nowNs()
                            if count.pointee < MultiProducerCase.maxSamples {
                                times[count.pointee] = t1 - t0
                                count.pointee += 1
                            }
                            offsets[j] = (offsets[j] + n) % 480
                            any += n
                        }
                        framesPushed.wrappingAdd(any, ordering: .relaxed)
                        if any == 0 { sched_yield() }
                    }
                }
                running.wrappingSubtract(1, ordering: .relaxed)
            }
            thread.start()
        }
    }

    /// Waits (not measured) until every source holds one 10 ms block.
    public func waitForData() {
        for id in ids {
            while (try? engine.bufferedFrames(of: id)) ?? 0 < 480 { waits += 1; sched_yield() }
        }
    }

    /// One 10 ms render callback.
    @inline(never)
    public func render() {
        try? engine.render(into: output, frames: 480)
    }

    /// Stops the producers; returns a summary: push-call latency p50/p99
    /// (ns) over all threads, frames pushed per second, render underruns.
    public func finish() -> String {
        stop.store(true, ordering: .relaxed)
        while running.load(ordering: .relaxed) > 0 { sched_yield() }
        let seconds = Double(MultiProducerCase.nowNs() - startNs) / 1e9
        var all: [UInt64] = []
        for k in 0..<threads { all += pushTimes[k].prefix(pushCounts[k].pointee) }
        all.sort()
        func pct(_ p: Double) -> UInt64 { all.isEmpty ? 0 : all[min(all.count - 1, Int(Double(all.count) * p))] }
        let stats = engine.stats()
        return "\(sources) sources, \(threads) producer thread(s): push call p50 \(pct(0.5)) ns, p99 \(pct(0.99)) ns "
            + "over \(all.count) calls; \(Int(Double(framesPushed.load(ordering: .relaxed)) / seconds)) frames/s pushed; "
            + "render calls \(stats.renderCalls), underrun frames \(stats.underrunFrames)"
    }
}
