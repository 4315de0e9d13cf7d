/// Capture stage 1, re-blocking: the microphone arrives in calls of any
/// size (1...maxFrames, mono or stereo interleaved); the canceller works on
/// mono frames of `frameSize` samples (10 ms). The framer downmixes each
/// call into the microphone queue and hands out whole frames from its head;
/// each processed frame goes into the output queue, from which every call
/// takes as many frames as it brought (same channel layout; delayed by
/// whole frames while the queue is short).
///
/// Counts: `captured` microphone samples taken in (the capture clock, `n`
/// in CaptureProcessor's notes) and `framed` samples handed on as frames.
/// `init` allocates; nothing else does.
struct CaptureFramer: ~Copyable {
    let channels: Int
    let frameSize: Int
    /// Up to 4 frames may wait for their reference, plus one call.
    private let micQueue: UnsafeMutablePointer<Float>
    /// Samples waiting, from `micHead` on (frames are taken from the head
    /// without moving the rest; `append` moves what is left to the front
    /// once per call).
    private(set) var micQueued = 0
    private var micHead = 0
    private let outQueue: UnsafeMutablePointer<Float>
    private(set) var outQueued = 0
    /// Frames the output is delayed by to keep the calls whole (only grows).
    private(set) var latency = 0
    private(set) var captured: Int64 = 0
    private(set) var framed: Int64 = 0
    /// Call-sized float buffers for the int16 entry point (maxFrames × 2).
    let scratchIn: UnsafeMutablePointer<Float>
    let scratchOut: UnsafeMutablePointer<Float>
    /// Bytes this framer allocated (engine memory accounting).
    let allocatedBytes: Int

    /// nil when an allocation fails.
    init?(channels: Int, frameSize: Int, maxFrames: Int) {
        var batch = AllocationBatch()
        guard let micQueue = batch.allocate(repeating: Float(0), count: maxFrames + 4 * frameSize),
              let outQueue = batch.allocate(repeating: Float(0), count: maxFrames + 8 * frameSize),
              let scratchIn = batch.allocate(repeating: Float(0), count: maxFrames * 2),
              let scratchOut = batch.allocate(repeating: Float(0), count: maxFrames * 2)
        else { return nil }
        allocatedBytes = batch.commit()
        self.channels = channels
        self.frameSize = frameSize
        self.micQueue = micQueue
        self.outQueue = outQueue
        self.scratchIn = scratchIn
        self.scratchOut = scratchOut
    }

    deinit {
        Allocation.free(micQueue)
        Allocation.free(outQueue)
        Allocation.free(scratchIn)
        Allocation.free(scratchOut)
    }

    /// Downmixes `frames` microphone frames onto the queue (non-finite
    /// samples become 0). Returns the mono samples appended and how many
    /// samples were not finite.
    @_noLocks
    mutating func append(_ mic: UnsafePointer<Float>, frames: Int) -> (samples: UnsafePointer<Float>, nonfinite: Int) {
        if micHead > 0 {
            for i in 0..<micQueued { micQueue[i] = micQueue[micHead + i] }  // forward copy, dest first
            micHead = 0
        }
        let dst = micQueue + micQueued
        var bad = 0
        if channels == 1 {
            // Four at a time while all are finite (v − v is 0 only for
            // finite v); a group with a non-finite sample sample by sample.
            var i = 0
            while i &+ 4 <= frames {
                let v = (mic + i).loadFloat4()
                if (v - v).sum() == 0 {
                    (dst + i).storeFloat4(v)
                } else {
                    for j in i..<i &+ 4 {
                        let x = mic[j]
                        if x.isFinite { dst[j] = x } else { dst[j] = 0; bad += 1 }
                    }
                }
                i &+= 4
            }
            while i < frames {
                let v = mic[i]
                if v.isFinite { dst[i] = v } else { dst[i] = 0; bad += 1 }
                i &+= 1
            }
        } else {
            for i in 0..<frames {
                var l = mic[2 * i], r = mic[2 * i + 1]
                if !l.isFinite { l = 0; bad += 1 }
                if !r.isFinite { r = 0; bad += 1 }
                dst[i] = 0.5 * (l + r)
            }
        }
        micQueued += frames
        captured += Int64(frames)
        return (UnsafePointer(dst), bad)
    }

    /// A whole frame waits at the head of the queue.
    var hasFrame: Bool { @_noLocks get { micQueued >= frameSize } }

    /// The frame at the head of the queue (valid while `hasFrame`).
    var frame: UnsafePointer<Float> { @_noLocks get { UnsafePointer(micQueue + micHead) } }

    /// Where the processed frame goes (`frameSize` samples; valid until
    /// `advance`).
    var output: UnsafeMutablePointer<Float> { @_noLocks get { outQueue + outQueued } }

    /// The head frame is done and its output written: moves on to the next.
    @_noLocks
    mutating func advance() {
        let size = frameSize
        outQueued += size
        micHead += size
        micQueued -= size
        framed += Int64(size)
    }

    /// Hands `frames` processed frames to the caller (each channel the
    /// same). When the queue is short (a call size that is not a multiple
    /// of the frame, or frames waiting for their reference), the output is
    /// delayed by whole frames (the latency only ever grows, by at most 4
    /// frames in all).
    @_noLocks
    mutating func emit(into out: UnsafeMutablePointer<Float>, frames: Int) {
        if outQueued < frames {
            let pad = (frames - outQueued + frameSize - 1) / frameSize * frameSize
            var i = outQueued - 1
            while i >= 0 {
                outQueue[i + pad] = outQueue[i]
                i -= 1
            }
            for j in 0..<pad { outQueue[j] = 0 }
            outQueued += pad
            latency += pad
        }
        if channels == 1 {
            for i in 0..<frames { out[i] = outQueue[i] }
        } else {
            for i in 0..<frames {
                out[2 * i] = outQueue[i]
                out[2 * i + 1] = outQueue[i]
            }
        }
        let rest = outQueued - frames
        for i in 0..<rest { outQueue[i] = outQueue[i + frames] }
        outQueued = rest
    }
}
