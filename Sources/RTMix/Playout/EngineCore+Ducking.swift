import Synchronization

/// The ducking stage of the render path (after the mix bus, before the
/// limiter): with ducking on (`duck_depth_db` < 0; off by default), the
/// media bus is scaled by the `Ducker`'s gain while call voice is active.
extension EngineCore {
    /// With ducking on, after the sources are mixed: `callSum` holds the
    /// call sources only (media waits on its bus); nil when no call source
    /// was mixed. Detects voice in it and
    /// returns the media gain to apply to the bus for local playout:
    /// `mediaGain` × duck gain, constant (non-nil) or per frame in
    /// `mediaCurve` (nil). Ducking off: `mediaGain` unchanged.
    @_noLocks
    static func duckMedia(_ e: UnsafeMutablePointer<EngineCore>, callSum: UnsafePointer<Float>?, frames: Int,
                          channels: Int, mediaGain: Float?, mediaCurve: UnsafeMutablePointer<Float>) -> Float? {
        let d = e.pointee.ducker
        guard d.pointee.enabled, let duckCurve = d.pointee.curve else { return mediaGain }
        // nil: no call source in the block (nothing to detect).
        let voice = callSum.map { Ducker.voiceActive($0, samples: frames * channels) } ?? false
        let duck = d.pointee.advance(voice: voice, frames: frames,
                                     sampleRate: e.pointee.renderState.pointee.sampleRate, curve: duckCurve)
        e.pointee.duckGain.store(d.pointee.gain)
        if d.pointee.gain < 1 || duck == nil { e.pointee.duckedFrames.add(frames) }
        switch (mediaGain, duck) {
        case let (m?, k?):
            return m * k
        case let (m?, nil):
            for i in 0..<frames { mediaCurve[i] = m * duckCurve[i] }
            return nil
        case let (nil, k?):
            if k != 1 { for i in 0..<frames { mediaCurve[i] *= k } }
            return nil
        case (nil, nil):
            for i in 0..<frames { mediaCurve[i] *= duckCurve[i] }
            return nil
        }
    }
}
