/// The render side of the capture path: after the limiter, every render
/// call hands the capture thread what was actually played (the echo
/// reference: the whole mix, mono) and the media-domain sum (what may be
/// published: source gains applied, not the local media volume), both
/// brought to the capture rate, through the lock-free `ring` (stereo frames
/// [reference, media]).
///
/// Owned by the render thread (and by a control thread holding the render
/// role, which rebuilds the resampler when the output format changes).
/// `init` allocates; `write` does not.
@usableFromInline
struct ReferenceTap: ~Copyable {
    /// Output rate → capture rate, two channels; nil when they are equal.
    @usableFromInline var resampler: Resampler?
    @usableFromInline let maxFrames: Int
    /// Pending input at the output rate, interleaved [reference, media]:
    /// what the resampler has not consumed yet (its look-ahead).
    @usableFromInline let staging: UnsafeMutablePointer<Float>
    @usableFromInline var stagingFrames = 0
    @usableFromInline let stagingCapacity: Int
    /// Resampler output, interleaved, at the capture rate.
    @usableFromInline let converted: UnsafeMutablePointer<Float>
    @usableFromInline let convertedCapacity: Int
    /// The media domain's sum for the current block, at the output format
    /// (maxFrames × 2), before the media domain gain.
    @usableFromInline let mediaBus: UnsafeMutablePointer<Float>

    /// nil when the resampler cannot be created.
    init?(maxFrames: Int, outputRate: Int, captureRate: Int) {
        self.maxFrames = maxFrames
        stagingCapacity = maxFrames + 256
        staging = .allocate(capacity: stagingCapacity * 2)
        staging.initialize(repeating: 0, count: stagingCapacity * 2)
        // Up to 192 kHz → 8 kHz or 8 kHz → 48 kHz: room for ratio 6 + slack.
        convertedCapacity = stagingCapacity * 6 + 64
        converted = .allocate(capacity: convertedCapacity * 2)
        converted.initialize(repeating: 0, count: convertedCapacity * 2)
        mediaBus = .allocate(capacity: maxFrames * 2)
        mediaBus.initialize(repeating: 0, count: maxFrames * 2)
        resampler = nil
        guard rebuild(outputRate: outputRate, captureRate: captureRate) else {
            staging.deallocate()
            converted.deallocate()
            mediaBus.deallocate()
            return nil
        }
    }

    deinit {
        staging.deallocate()
        converted.deallocate()
        mediaBus.deallocate()
    }

    /// Replaces the resampler for a new output rate (allocates; render role
    /// held). Returns false, changing nothing, when it cannot be created.
    mutating func rebuild(outputRate: Int, captureRate: Int) -> Bool {
        if outputRate == captureRate {
            resampler = nil
        } else {
            guard let r = Resampler(quality: .sincFastest, channels: 2, inputRate: outputRate,
                                    outputRate: captureRate, driftCompensation: false) else { return false }
            resampler = consume r
        }
        stagingFrames = 0
        return true
    }

    /// Downmixes the block's output (post-limiter) and media bus to mono,
    /// converts them to the capture rate and writes them to `ring`.
    /// Returns the capture-rate frames that did not fit (the capture side
    /// is not draining the ring).
    @_noLocks
    mutating func write(output: UnsafePointer<Float>, channels: Int, frames: Int,
                        ring: borrowing SPSCRing) -> Int {
        let n = min(frames, stagingCapacity - stagingFrames)
        let dst = staging + stagingFrames * 2
        let bus = mediaBus
        if channels == 2 {
            for i in 0..<n {
                dst[2 * i] = 0.5 * (output[2 * i] + output[2 * i + 1])
                dst[2 * i + 1] = 0.5 * (bus[2 * i] + bus[2 * i + 1])
            }
        } else {
            for i in 0..<n {
                dst[2 * i] = output[i]
                dst[2 * i + 1] = bus[i]
            }
        }
        stagingFrames += n
        var lost = 0
        switch resampler {
        case .none:
            lost = ReferenceTap.push(staging, frames: stagingFrames, to: ring)
            stagingFrames = 0
        case .some(let r):
            let result = r.process(input: staging, inputFrames: stagingFrames, output: converted,
                                   outputFrames: convertedCapacity, ratio: r.ratio)
            let left = stagingFrames - result.used
            if left > 0 && result.used > 0 {
                for i in 0..<(left * 2) { staging[i] = staging[result.used * 2 + i] }
            }
            stagingFrames = left
            lost = ReferenceTap.push(converted, frames: result.generated, to: ring)
        }
        return lost
    }

    /// Copies frames into the ring; returns those that did not fit.
    @_noLocks
    static func push(_ src: UnsafePointer<Float>, frames: Int, to ring: borrowing SPSCRing) -> Int {
        guard frames > 0 else { return 0 }
        let regions = ring.writableRegions(maxFrames: frames)
        let first = regions.first, second = regions.second
        for i in 0..<(regions.firstFrames * 2) { first[i] = src[i] }
        let rest = src + regions.firstFrames * 2
        for i in 0..<(regions.secondFrames * 2) { second[i] = rest[i] }
        ring.commitWrite(regions.frames)
        return frames - regions.frames
    }
}
