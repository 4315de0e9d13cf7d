import Glibc

/// Music-like synthetic soundtrack (stereo): an arpeggio of decaying
/// harmonic notes over a C–G–Am–F progression, a bass note, and a soft beat
/// (kick, snare-ish noise, hi-hat). Deterministic for a given seed; a fixed
/// pool of notes, no allocation after init.
public struct MusicSynth {
    private struct Note {
        var active = false
        var frequency: Float = 0
        var amplitude: Float = 0
        var decayPerSample: Float = 1     // multiplier per sample for the fundamental
        var level: Float = 0
        var phase: Float = 0              // cycles of the fundamental
        var harmonics = 5
        var panLeft: Float = 0.7, panRight: Float = 0.7
    }

    /// MIDI notes of the chord tones (C, G, Am, F), arpeggio pattern indices.
    private static let chords: [[Int]] = [[60, 64, 67, 72], [59, 62, 67, 71], [57, 60, 64, 69], [57, 60, 65, 69]]
    private static let bass: [Int] = [36, 43, 45, 41]
    private static let pattern = [0, 1, 2, 3, 2, 1, 2, 1]

    /// Overall level: peaks around -3.5 dBFS, RMS around -19 dBFS.
    public static let outputGain: Float = 0.8

    public let sampleRate: Float
    private var rng: SplitMix64
    private var notes = [Note](repeating: Note(), count: 12)
    private var sample = 0
    private let eighth: Int
    private var nextEighth = 0
    private var eighthIndex = 0

    // Drums.
    private var kickLevel: Float = 0, kickPhase: Float = 0, kickFrequency: Float = 50
    private var snareLevel: Float = 0, hatLevel: Float = 0
    private var hatPrevious: Float = 0
    private var snareBody = Resonator()

    public init(sampleRate: Int, seed: UInt64, bpm: Float = 100) {
        self.sampleRate = Float(sampleRate)
        rng = SplitMix64(seed: seed ^ 0x4D_5553_4943)
        eighth = Int(self.sampleRate * 30 / bpm)
        snareBody.tune(frequency: 1_800, bandwidth: 1_500, sampleRate: self.sampleRate)
    }

    private static func hz(_ midi: Int) -> Float { 440 * powf(2, Float(midi - 69) / 12) }

    private mutating func start(midi: Int, amplitude: Float, decaySeconds: Float, pan: Float, harmonics: Int) {
        var slot = 0
        var quietest = Float.infinity
        for i in notes.indices {
            if !notes[i].active { slot = i; quietest = -1; break }
            if notes[i].level < quietest { quietest = notes[i].level; slot = i }
        }
        let f = MusicSynth.hz(midi) * (1 + rng.uniform(-0.001, 0.001))
        notes[slot] = Note(active: true, frequency: f, amplitude: amplitude,
                           decayPerSample: expf(-1 / (decaySeconds * sampleRate)), level: 1, phase: 0,
                           harmonics: max(1, min(harmonics, Int(0.45 * sampleRate / f))),
                           panLeft: sqrtf(0.5 * (1 - pan)), panRight: sqrtf(0.5 * (1 + pan)))
    }

    private mutating func onEighth() {
        let bar = eighthIndex / 8, step = eighthIndex % 8
        let chord = MusicSynth.chords[bar % 4]
        let pitchOffset = step >= 4 ? 12 : 0
        let accent: Float = step % 2 == 0 ? 1 : 0.75
        start(midi: chord[MusicSynth.pattern[step]] + pitchOffset, amplitude: 0.16 * accent * rng.uniform(0.85, 1),
              decaySeconds: 0.45, pan: step % 2 == 0 ? -0.4 : 0.4, harmonics: 6)
        if step == 0 || step == 4 {
            start(midi: MusicSynth.bass[bar % 4], amplitude: 0.22, decaySeconds: 0.9, pan: 0, harmonics: 4)
            kickLevel = 0.5; kickFrequency = 130
        }
        if step == 2 || step == 6 { snareLevel = 0.12 }
        if step % 2 == 1 { hatLevel = 0.05 }
        eighthIndex += 1
    }

    /// Renders `frames` stereo frames (interleaved) into `out`.
    public mutating func render(into out: UnsafeMutablePointer<Float>, frames: Int) {
        let twoPi = 2 * Float.pi
        let kickDecay = expf(-1 / (0.16 * sampleRate))
        let snareDecay = expf(-1 / (0.09 * sampleRate))
        let hatDecay = expf(-1 / (0.025 * sampleRate))
        for i in 0..<frames {
            if sample >= nextEighth {
                onEighth()
                nextEighth += eighth
            }
            sample += 1
            var left: Float = 0, right: Float = 0
            for n in notes.indices where notes[n].active {
                var note = notes[n]
                let fundamental = note.phase * twoPi
                var v: Float = 0
                var harmonicLevel: Float = 1
                for h in 1...note.harmonics {
                    v += sinf(fundamental * Float(h)) * harmonicLevel
                    // Higher harmonics are weaker and fade faster.
                    harmonicLevel *= 0.55 * (0.4 + 0.6 * note.level)
                }
                v *= note.amplitude * note.level
                left += v * note.panLeft
                right += v * note.panRight
                note.phase += note.frequency / sampleRate
                if note.phase >= 1 { note.phase -= 1 }
                note.level *= note.decayPerSample
                if note.level < 0.001 { note.active = false }
                notes[n] = note
            }
            // Kick: decaying sine with a falling pitch.
            if kickLevel > 0.0005 {
                kickFrequency += (48 - kickFrequency) * 0.0015
                kickPhase += kickFrequency / sampleRate
                if kickPhase >= 1 { kickPhase -= 1 }
                let k = sinf(kickPhase * twoPi) * kickLevel
                left += k; right += k
                kickLevel *= kickDecay
            }
            if snareLevel > 0.0005 || hatLevel > 0.0005 {
                let noise = rng.uniform(-1, 1)
                let s = snareBody.process(noise) * 3 * snareLevel
                let hat = (noise - hatPrevious) * 0.5 * hatLevel
                hatPrevious = noise
                left += s + hat * 0.8
                right += s * 0.9 + hat
                snareLevel *= snareDecay
                hatLevel *= hatDecay
            }
            out[2 * i] = left * MusicSynth.outputGain
            out[2 * i + 1] = right * MusicSynth.outputGain
        }
    }
}
