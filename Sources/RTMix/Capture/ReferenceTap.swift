/// The render side of the capture path: after the limiter, every render
/// call hands the capture thread what was actually played (the echo
/// reference: the whole mix, mono or both loudspeaker channels) and the
/// media-domain sum (what may be published: source gains applied, not the
/// local media volume; read from the `MixBus`, which owns it), all brought
/// to the capture rate, through the lock-free `ring`: frames of
/// `referenceChannels` reference channels then one media channel.
///
/// Owned by the render thread (and by a control thread holding the render
/// role, which rebuilds the resampler when the output format changes).
/// `init` allocates; `write` does not.
struct ReferenceTap: ~Copyable {
    /// Output rate → capture rate; nil when they are equal.
    var resampler: Resampler?
    /// 1: the mono downmix; 2: left and right (a two-loudspeaker canceller).
    let referenceChannels: Int
    /// Channels per ring frame: the reference channels + media.
    let channels: Int
    /// Pending input at the output rate, interleaved: what the resampler
    /// has not consumed yet (its look-ahead).
    let staging: UnsafeMutablePointer<Float>
    var stagingFrames = 0
    let stagingCapacity: Int
    /// Resampler output, interleaved, at the capture rate.
    let converted: UnsafeMutablePointer<Float>
    let convertedCapacity: Int
    /// Frames written to the ring so far (for the timing stamp).
    var framesWritten: UInt64 = 0

    /// Bytes of the buffers above (the resampler's own state not counted).
    let allocatedBytes: Int

    /// nil when the resampler cannot be created or an allocation fails.
    init?(maxFrames: Int, outputRate: Int, captureRate: Int, referenceChannels: Int) {
        let channels = referenceChannels + 1
        let stagingCapacity = maxFrames + 256
        // Up to 192 kHz → 8 kHz or 8 kHz → 48 kHz: room for ratio 6 + slack.
        let convertedCapacity = stagingCapacity * 6 + 64
        var resampler: Resampler? = nil
        if outputRate != captureRate {
            guard let r = Resampler(quality: .sincFastest, channels: channels, inputRate: outputRate,
                                    outputRate: captureRate, driftCompensation: false) else { return nil }
            resampler = consume r
        }
        var batch = AllocationBatch()
        guard let staging = batch.allocate(repeating: Float(0), count: stagingCapacity * channels),
              let converted = batch.allocate(repeating: Float(0), count: convertedCapacity * channels)
        else { return nil }
        allocatedBytes = batch.commit()
        self.referenceChannels = referenceChannels
        self.channels = channels
        self.stagingCapacity = stagingCapacity
        self.staging = staging
        self.convertedCapacity = convertedCapacity
        self.converted = converted
        self.resampler = consume resampler
    }

    deinit {
        Allocation.free(staging)
        Allocation.free(converted)
    }

    /// Replaces the resampler for a new output rate (allocates; render role
    /// held). Returns false, changing nothing, when it cannot be created.
    mutating func rebuild(outputRate: Int, captureRate: Int) -> Bool {
        if outputRate == captureRate {
            resampler = nil
        } else {
            guard let r = Resampler(quality: .sincFastest, channels: channels, inputRate: outputRate,
                                    outputRate: captureRate, driftCompensation: false) else { return false }
            resampler = consume r
        }
        stagingFrames = 0
        return true
    }

    /// Takes the block's output (post-limiter, `outChannels`) and media
    /// sum (`media`: `MixBus.publishedMedia`, the same layout, before the
    /// media domain gain) into the reference layout, converts it to the
    /// capture rate and writes it to `ring`. Returns the capture-rate
    /// frames written and those that did not fit (the capture side is not
    /// draining the ring).
    @_noLocks
    mutating func write(output: UnsafePointer<Float>, media bus: UnsafePointer<Float>, channels outChannels: Int,
                        frames: Int, ring: borrowing SPSCRing) -> (written: Int, lost: Int) {
        let n = min(frames, stagingCapacity - stagingFrames)
        let c = channels
        let dst = staging + stagingFrames * c
        for i in 0..<n {
            let f = dst + i * c
            let l: Float, r: Float, media: Float
            if outChannels == 2 {
                l = output[2 * i]
                r = output[2 * i + 1]
                media = 0.5 * (bus[2 * i] + bus[2 * i + 1])
            } else {
                l = output[i]
                r = l
                media = bus[i]
            }
            if referenceChannels == 2 {
                f[0] = l
                f[1] = r
                f[2] = media
            } else {
                f[0] = 0.5 * (l + r)
                f[1] = media
            }
        }
        stagingFrames += n
        var lost = 0
        var offered = 0
        switch resampler {
        case .none:
            offered = stagingFrames
            lost = ReferenceTap.push(staging, frames: stagingFrames, channels: c, to: ring)
            stagingFrames = 0
        case .some(let resampler):
            let result = resampler.process(input: staging, inputFrames: stagingFrames, output: converted,
                                           outputFrames: convertedCapacity, ratio: resampler.ratio)
            let left = stagingFrames - result.used
            if left > 0 && result.used > 0 {
                for i in 0..<(left * c) { staging[i] = staging[result.used * c + i] }
            }
            stagingFrames = left
            offered = result.generated
            lost = ReferenceTap.push(converted, frames: result.generated, channels: c, to: ring)
        }
        return (offered - lost, lost)
    }

    /// Copies frames into the ring; returns those that did not fit.
    @_noLocks
    static func push(_ src: UnsafePointer<Float>, frames: Int, channels: Int, to ring: borrowing SPSCRing) -> Int {
        guard frames > 0 else { return 0 }
        let regions = ring.writableRegions(maxFrames: frames)
        let first = regions.first, second = regions.second
        for i in 0..<(regions.firstFrames * channels) { first[i] = src[i] }
        let rest = src + regions.firstFrames * channels
        for i in 0..<(regions.secondFrames * channels) { second[i] = rest[i] }
        ring.commitWrite(regions.frames)
        return frames - regions.frames
    }
}
