/// The mix bus stage of the render path (after the sources' gains, before
/// ducking and the limiter): where every source's block is summed, and the
/// one owner of the media bus.
///
/// Call sources are always summed into the block's output (`out`: the
/// caller's float buffer, or `own`). A media source goes there too, at its
/// domain gain, unless the block needs the media sum on its own
/// (`mediaOnBus`):
/// - capture path on (`publishesMedia`): the media sum, at source gains and
///   mutes but not the local media volume, is what may be published; the
///   `ReferenceTap` reads it after the limiter (`publishedMedia`);
/// - ducking on, while the `Ducker` has something to duck for
///   (`Ducker.wantsCallSum`): the call sum must be known (`callSum`) before
///   the media is scaled.
/// Then media sources are summed on `media` at gain 1 and `combine` adds
/// that sum to the output at the local media gain (the media domain gain,
/// times the duck gain when ducking: constant, or per frame). Otherwise
/// every source goes straight into the output in slot order, exactly as
/// with neither feature.
///
/// `init` allocates (the engine, once, at creation); the rest is the render
/// thread's (or a control thread's holding the render role), real-time
/// safe.
struct MixBus: ~Copyable {
    /// maxFrames × 2: the mix when the caller's buffer is not float (an
    /// int16 render mixes here, then converts).
    let own: UnsafeMutablePointer<Float>
    /// maxFrames × 2: a block's media sum at source gains, kept until the
    /// next block (the reference tap reads it after the limiter); nil when
    /// neither capture nor ducking is on (media then never waits).
    let media: UnsafeMutablePointer<Float>?
    /// The capture path is on: media waits on `media` in every block.
    let publishesMedia: Bool
    /// Bytes of the buffers above.
    let allocatedBytes: Int

    /// The current block's output (set by `begin`).
    private(set) var out: UnsafeMutablePointer<Float>
    /// The current block's frames and channels (1 or 2).
    private(set) var frames = 0
    private(set) var channels = 0
    /// Media sources of the current block are summed on `media`.
    private(set) var mediaOnBus = false
    /// A call source was mixed in the current block.
    private(set) var callMixed = false

    /// nil when an allocation fails. `publishesMedia`: the capture path is
    /// on; `ducking`: ducking is configured (either needs `media`).
    init?(maxFrames: Int, publishesMedia: Bool, ducking: Bool) {
        var batch = AllocationBatch()
        guard let own = batch.allocate(repeating: Float(0), count: maxFrames * 2) else { return nil }
        var media: UnsafeMutablePointer<Float>? = nil
        if publishesMedia || ducking {
            guard let m = batch.allocate(repeating: Float(0), count: maxFrames * 2) else { return nil }
            media = m
        }
        allocatedBytes = batch.commit()
        self.own = own
        self.media = media
        self.publishesMedia = publishesMedia
        out = own
    }

    deinit {
        Allocation.free(own)
        Allocation.free(media)
    }

    /// Starts a block of `frames` frames of `channels` channels mixed into
    /// `output`: zeroes it, and decides whether media waits on its bus
    /// (then zeroed too). `duckerWaits`: the ducker needs this block's call
    /// sum (`Ducker.wantsCallSum`).
    @_noLocks
    mutating func begin(output: UnsafeMutablePointer<Float>, frames: Int, channels: Int, duckerWaits: Bool) {
        out = output
        self.frames = frames
        self.channels = channels
        callMixed = false
        output.update(repeating: 0, count: frames * channels)
        if let m = media, publishesMedia || duckerWaits {
            mediaOnBus = true
            m.update(repeating: 0, count: frames * channels)
        } else {
            mediaOnBus = false
        }
    }

    /// Where one source's block goes, and at which domain gain: a media
    /// source waiting on the bus at gain 1 (its domain gain comes in
    /// `combine`); any other into the output at `domainGain`, its domain's
    /// gain (nil: per frame, from the domain's curve).
    @_noLocks
    mutating func route(isCall: Bool, domainGain: Float?) -> (into: UnsafeMutablePointer<Float>, gain: Float?) {
        if isCall {
            callMixed = true
            return (out, domainGain)
        }
        if mediaOnBus, let m = media { return (m, 1) }
        return (out, domainGain)
    }

    /// The block's call sum (call sources at source × call domain gains),
    /// between the sources and `combine` while media waits on its bus; nil
    /// otherwise, or when no call source was mixed.
    var callSum: UnsafePointer<Float>? {
        @_noLocks get { mediaOnBus && callMixed ? UnsafePointer(out) : nil }
    }

    /// Ends the block's mixing: adds the media waiting on its bus into the
    /// output at the local media gain, constant (`gain`) or per frame from
    /// `curve` (`gain` nil). Nothing when media did not wait.
    @_noLocks
    func combine(gain: Float?, curve: UnsafePointer<Float>) {
        guard mediaOnBus, let bus = media else { return }
        let out = self.out
        if let g = gain {
            if g == 0 { return }
            for i in 0..<(frames * channels) { out[i] += bus[i] * g }
        } else if channels == 2 {
            for f in 0..<frames {
                out[2 * f] += bus[2 * f] * curve[f]
                out[2 * f + 1] += bus[2 * f + 1] * curve[f]
            }
        } else {
            for f in 0..<frames { out[f] += bus[f] * curve[f] }
        }
    }

    /// The block's media sum for publishing (the capture path), valid until
    /// the next `begin`; nil when the capture path is off.
    var publishedMedia: UnsafePointer<Float>? {
        @_noLocks get {
            guard publishesMedia, let m = media else { return nil }
            return UnsafePointer(m)
        }
    }
}
