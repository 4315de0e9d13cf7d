// Two threads move frames through a ring: the engine's SPSCRing (compiled
// from the engine's own source file: SPSCRing.swift and Allocation.swift in
// this folder are symlinks to Sources/RTMix/Support) against benchmark-only
// baselines with the layout and access pattern SPSCRing had before issue 11
// (both indices in adjacent words of one cache line, and every call loading
// the other side's index), and with the indices padded apart but no cached
// copies, which separates the two changes.
import Foundation
import Synchronization

public enum RingVariant: String, CaseIterable, Sendable {
    /// SPSCRing as the engine uses it: each side's index and its cached
    /// copy of the other's on its own 64-byte line.
    case engine
    /// Indices 64 bytes apart, no cached copies.
    case paddedNoCache = "padded-nocache"
    /// Before issue 11: indices 8 bytes apart (one line), no cached copies.
    case adjacentNoCache = "adjacent-nocache"
}

/// What the transfer needs of a ring (the SPSCRing API).
protocol TransferRing: ~Copyable {
    func writableRegions(maxFrames: Int) -> RingRegions
    func commitWrite(_ frames: Int)
    func readableRegions(maxFrames: Int) -> RingRegions
    func commitRead(_ frames: Int)
}

extension SPSCRing: TransferRing {}

/// The pre-issue-11 SPSCRing, verbatim but for where the read index lives.
struct BaselineRing: ~Copyable, TransferRing {
    let storage: UnsafeMutablePointer<Float>
    let capacityFrames: Int
    let channels: Int
    let mask: Int
    let lines: UnsafeMutableRawPointer
    let writeIndex: UnsafeMutablePointer<Atomic<Int>>
    let readIndex: UnsafeMutablePointer<Atomic<Int>>

    init(capacityFrames: Int, channels: Int, padded: Bool) {
        self.capacityFrames = capacityFrames
        self.channels = channels
        mask = capacityFrames - 1
        storage = .allocate(capacity: capacityFrames * channels)
        storage.initialize(repeating: 0, count: capacityFrames * channels)
        lines = .allocate(byteCount: 128, alignment: 64)
        writeIndex = lines.bindMemory(to: Atomic<Int>.self, capacity: 1)
        readIndex = (lines + (padded ? 64 : MemoryLayout<Atomic<Int>>.stride)).bindMemory(to: Atomic<Int>.self,
                                                                                          capacity: 1)
        writeIndex.initialize(to: Atomic(0))
        readIndex.initialize(to: Atomic(0))
    }

    deinit {
        storage.deallocate()
        writeIndex.deinitialize(count: 1)
        readIndex.deinitialize(count: 1)
        lines.deallocate()
    }

    func regions(start: Int, frames: Int) -> RingRegions {
        let slot = start & mask
        let first = min(frames, capacityFrames - slot)
        return RingRegions(first: storage + slot * channels, firstFrames: first,
                           second: storage, secondFrames: frames - first)
    }

    func writableRegions(maxFrames: Int) -> RingRegions {
        let w = writeIndex.pointee.load(ordering: .relaxed)
        let r = readIndex.pointee.load(ordering: .acquiring)
        return regions(start: w, frames: min(capacityFrames - (w &- r), maxFrames))
    }

    func commitWrite(_ frames: Int) {
        let w = writeIndex.pointee.load(ordering: .relaxed)
        writeIndex.pointee.store(w &+ frames, ordering: .releasing)
    }

    func readableRegions(maxFrames: Int) -> RingRegions {
        let r = readIndex.pointee.load(ordering: .relaxed)
        let w = writeIndex.pointee.load(ordering: .acquiring)
        return regions(start: r, frames: min(w &- r, maxFrames))
    }

    func commitRead(_ frames: Int) {
        let r = readIndex.pointee.load(ordering: .relaxed)
        readIndex.pointee.store(r &+ frames, ordering: .releasing)
    }
}

/// One ring and the transfer through it; `run` spawns the producer thread,
/// consumes on the calling thread, and checks every value arrived in order.
public final class RingTransfer: @unchecked Sendable {
    let variant: RingVariant
    let chunk: Int
    let channels: Int
    let engineRing: UnsafeMutablePointer<SPSCRing>?
    let baselineRing: UnsafeMutablePointer<BaselineRing>?

    public init(variant: RingVariant, capacityFrames: Int = 4096, channels: Int = 2, chunk: Int = 64) {
        self.variant = variant
        self.chunk = chunk
        self.channels = channels
        switch variant {
        case .engine:
            let p = UnsafeMutablePointer<SPSCRing>.allocate(capacity: 1)
            p.initialize(to: SPSCRing(capacityFrames: capacityFrames, channels: channels)!)
            engineRing = p
            baselineRing = nil
        case .paddedNoCache, .adjacentNoCache:
            let p = UnsafeMutablePointer<BaselineRing>.allocate(capacity: 1)
            p.initialize(to: BaselineRing(capacityFrames: capacityFrames, channels: channels,
                                          padded: variant == .paddedNoCache))
            engineRing = nil
            baselineRing = p
        }
    }

    deinit {
        if let p = engineRing { p.deinitialize(count: 1); p.deallocate() }
        if let p = baselineRing { p.deinitialize(count: 1); p.deallocate() }
    }

    /// Moves `frames` frames from a new producer thread to this thread.
    /// `started` is called when the first frames arrive (both threads are
    /// running: thread creation and its first scheduling are not part of
    /// what follows), `finished` after the last. Returns false if any value
    /// arrived wrong.
    public func run(frames: Int, started: () -> Void, finished: () -> Void) -> Bool {
        if let p = engineRing {
            return RingTransfer.transfer(p, frames: frames, chunk: chunk, channels: channels,
                                         started: started, finished: finished)
        }
        return RingTransfer.transfer(baselineRing!, frames: frames, chunk: chunk, channels: channels,
                                     started: started, finished: finished)
    }

    static func transfer<R: TransferRing & ~Copyable>(_ ring: UnsafeMutablePointer<R>, frames: Int, chunk: Int,
                                                       channels: Int, started: () -> Void,
                                                       finished: () -> Void) -> Bool {
        nonisolated(unsafe) let shared = ring
        pinToCPU(0)  // consumer; the producer on CPU 1: two cores really share the lines
        let producer = Thread {
            pinToCPU(1)
            var next = 0
            while next < frames {
                let w = shared.pointee.writableRegions(maxFrames: min(chunk, frames - next))
                for i in 0..<w.firstFrames * channels { w.first[i] = Float(next + i / channels) }
                let base = next + w.firstFrames
                for i in 0..<w.secondFrames * channels { w.second[i] = Float(base + i / channels) }
                shared.pointee.commitWrite(w.frames)
                next += w.frames
            }
        }
        producer.start()
        var expected = 0
        var bad = 0
        while ring.pointee.readableRegions(maxFrames: 1).frames == 0 {}
        started()
        while expected < frames {
            let r = ring.pointee.readableRegions(maxFrames: chunk)
            for i in 0..<r.firstFrames * channels where r.first[i] != Float(expected + i / channels) { bad += 1 }
            let base = expected + r.firstFrames
            for i in 0..<r.secondFrames * channels where r.second[i] != Float(base + i / channels) { bad += 1 }
            ring.pointee.commitRead(r.frames)
            expected += r.frames
        }
        finished()
        return bad == 0
    }
}

/// Pins the calling thread to one CPU (Linux; ignored where unsupported).
public func pinToCPU(_ cpu: Int) {
    #if os(Linux)
    var set = cpu_set_t()
    withUnsafeMutableBytes(of: &set) { $0[cpu / 8] |= UInt8(1 << (cpu % 8)) }
    _ = withUnsafeBytes(of: &set) { c_sched_setaffinity(0, MemoryLayout<cpu_set_t>.size, $0.baseAddress!) }
    #endif
}

#if os(Linux)
// glibc declares sched_setaffinity only with _GNU_SOURCE, which Swift's Glibc
// module is not built with; ints and a pointer pass the same way in C and
// Swift on x86_64 and arm64 (benchmark only).
@_silgen_name("sched_setaffinity")
func c_sched_setaffinity(_ pid: Int32, _ size: Int, _ mask: UnsafeRawPointer) -> Int32
#endif
