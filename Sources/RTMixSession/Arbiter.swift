// Arbiter.swift — pure functions: which configuration satisfies a set of
// active modules, and does a given configuration satisfy them.
//
// Rules (see docs/session-policy.md for the full table and the platform
// documents each rule comes from):
// - Recording (and an RTC call in the foreground) uses playAndRecord, never
//   record-only (record-only silences playback).
// - Play-only keeps the category when it is ambient, playback, playAndRecord
//   or multiRoute; from soloAmbient (the platform default) or record it
//   moves to playback. In the background it needs a category that plays
//   there (playback, playAndRecord, multiRoute): ambient and soloAmbient are
//   silenced by screen lock.
// - An RTC call adds mixWithOthers, defaultToSpeaker and Bluetooth.
// - Bluetooth is HFP (allowBluetooth) when some module records, A2DP
//   (allowBluetoothA2DP) otherwise, or while recording when a module asks
//   for A2DP (NEED_BLUETOOTH_A2DP) and no recording call needs HFP.
// - With no active module the result is the base configuration.

/// One active module as the arbiter sees it: its effective needs (after
/// permission / app-state gating) and mode preference.
struct ArbiterInput: Equatable {
    var id: ModuleID
    var needs: SessionNeeds
    var preferredMode: SessionMode?
    /// Higher = newer request; breaks mode-preference ties.
    var sequence: UInt64
}

/// Context the arbiter needs to turn requested needs into effective ones.
struct GatingContext {
    var foreground: Bool
    var micPermission: MicPermission
}

enum Arbiter {
    /// Needs a module effectively has in this context.
    /// - Playback implies speakerByDefault.
    /// - An RTC call in the foreground (or allowed to record in the
    ///   background) implies playback, mixWithOthers, speakerByDefault and
    ///   bluetooth; in the background it becomes play-only with mixing.
    /// - Recording is dropped without permission, or in the background
    ///   unless the module may record there.
    static func effectiveNeeds(_ needs: SessionNeeds, _ ctx: GatingContext) -> SessionNeeds {
        var n = needs
        // Decision: media in playAndRecord without defaultToSpeaker comes out
        // of the quiet receiver ("media too quiet"), so playback implies the
        // speaker by default (a no-op in the other playing categories).
        if n.contains(.playback) { n.insert(.speakerByDefault) }
        let backgroundOK = ctx.foreground || n.contains(.recordInBackground)
        if n.contains(.call) {
            n.formUnion([.playback, .mixWithOthers, .speakerByDefault, .bluetooth])
            if !backgroundOK { n.remove(.call) }
        }
        if n.contains(.recording) && (ctx.micPermission != .granted || !backgroundOK) {
            n.remove(.recording)
        }
        if !ctx.foreground && n.contains(.playback) { n.insert(.playsInBackground) }
        return n
    }

    /// What the set of active modules implies for Bluetooth and recording.
    struct Context {
        /// Some active module records (effective needs).
        var anyRecording: Bool
        /// A2DP output while recording: some module asks for it and no
        /// recording RTC call needs HFP.
        var a2dpWhileRecording: Bool

        init(_ inputs: [ArbiterInput]) {
            var rec = false, a2dp = false, callRecords = false
            for i in inputs {
                if i.needs.contains(.recording) { rec = true }
                if i.needs.contains(.bluetoothA2DP) { a2dp = true }
                if i.needs.contains(.call) && i.needs.contains(.recording) { callRecords = true }
            }
            anyRecording = rec
            a2dpWhileRecording = rec && a2dp && !callRecords
        }
    }

    /// Categories a play-only module keeps (foreground).
    static func keepsForPlayback(_ c: SessionCategory) -> Bool {
        c == .ambient || c == .playback || c == .playAndRecord || c == .multiRoute
    }

    /// Categories that keep playing in the background (not silenced by
    /// screen lock or the silent switch).
    static func playsInBackground(_ c: SessionCategory) -> Bool {
        c == .playback || c == .playAndRecord || c == .multiRoute
    }

    static func union(_ inputs: [ArbiterInput]) -> SessionNeeds {
        var u: SessionNeeds = []
        for i in inputs { u.formUnion(i.needs) }
        return u
    }

    private static func priority(_ n: SessionNeeds) -> Int {
        if n.contains(.call) { return 2 }
        if n.contains(.recording) { return 1 }
        return 0
    }

    /// The module whose preferred mode applies with `category`: calls first,
    /// then recorders, then others; newest request first within a rank.
    /// Preferences that are not valid with the category are skipped.
    static func modeWinner(_ inputs: [ArbiterInput], category: SessionCategory) -> ArbiterInput? {
        var best: ArbiterInput? = nil
        for i in inputs {
            guard let mode = i.preferredMode, ValidityTable.allows(mode: mode, with: category) else {
                continue
            }
            if let b = best {
                let pi = priority(i.needs), pb = priority(b.needs)
                if pi > pb || (pi == pb && i.sequence > b.sequence) { best = i }
            } else {
                best = i
            }
        }
        return best
    }

    /// True if `config` gives one module (with effective needs `n`) what it
    /// needs, given what all active modules imply (`ctx`).
    static func satisfies(_ config: SessionConfiguration, _ n: SessionNeeds,
                          _ ctx: Context) -> Bool {
        let c = config.category, o = config.options
        if n.contains(.playback) && !keepsForPlayback(c) { return false }
        if n.contains(.playsInBackground) && !playsInBackground(c) { return false }
        if (n.contains(.recording) || n.contains(.call)) && c != .playAndRecord { return false }
        if n.contains(.recording) && o.contains(.allowBluetoothA2DP) && !ctx.a2dpWhileRecording {
            return false
        }
        if n.contains(.mixWithOthers) && !config.mixesWithOthers { return false }
        if n.contains(.duckOthers) && !o.contains(.duckOthers) { return false }
        if n.contains(.speakerByDefault) && c == .playAndRecord && !o.contains(.defaultToSpeaker) {
            return false
        }
        if n.contains(.bluetooth) || n.contains(.bluetoothA2DP) {
            if c == .playAndRecord {
                if ctx.a2dpWhileRecording {
                    if !o.contains(.allowBluetoothA2DP) || o.contains(.allowBluetooth) { return false }
                } else if ctx.anyRecording {
                    if !o.contains(.allowBluetooth) || o.contains(.allowBluetoothA2DP) { return false }
                } else if !o.contains(.allowBluetooth) && !o.contains(.allowBluetoothA2DP) {
                    return false
                }
            } else if c == .record && n.contains(.bluetooth) && !o.contains(.allowBluetooth) {
                return false
            }
        }
        return true
    }

    /// The first module `config` does not satisfy (calls are checked first,
    /// then registration order), or nil if it satisfies all of them. An
    /// invalid configuration fails the first module. `excluding` is left
    /// out (a module is never the victim of its own change).
    static func firstUnsatisfied(_ config: SessionConfiguration,
                                 _ inputs: [ArbiterInput],
                                 excluding: ModuleID? = nil) -> ModuleID? {
        if inputs.isEmpty { return nil }
        let ctx = Context(inputs)
        let winner = modeWinner(inputs, category: config.category)
        let valid = ValidityTable.check(config).isValid
        for pass in 0..<2 {
            for i in inputs where (pass == 0) == i.needs.contains(.call) && i.id != excluding {
                if !valid || !satisfies(config, i.needs, ctx) { return i.id }
            }
        }
        if let w = winner, w.id != excluding, let mode = w.preferredMode, config.mode != mode {
            return w.id
        }
        return nil
    }

    /// The configuration the active modules need, derived from `base`.
    /// Deterministic: depends only on the inputs and the base.
    static func target(_ inputs: [ArbiterInput], base: SessionConfiguration) -> SessionConfiguration {
        if inputs.isEmpty { return base }
        let u = union(inputs)
        let ctx = Context(inputs)
        let anyRecording = ctx.anyRecording
        var cat = base.category
        var promotedFromAmbient = false
        if anyRecording || u.contains(.call) {
            cat = .playAndRecord
        } else {
            let canMix = cat == .ambient || cat == .playback || cat == .playAndRecord || cat == .multiRoute
            // duckOthers: ambient, playback, playAndRecord, multiRoute
            // (AVAudioSessionTypes.h).
            let canDuck = canMix
            if (u.contains(.playback) && !keepsForPlayback(cat))
                || (u.contains(.playsInBackground) && !playsInBackground(cat))
                || (u.contains(.mixWithOthers) && !canMix)
                || (u.contains(.duckOthers) && !canDuck)
                || ((u.contains(.speakerByDefault) || u.contains(.bluetooth)
                     || u.contains(.bluetoothA2DP)) && cat == .record) {
                promotedFromAmbient = cat == .ambient
                cat = .playback
            }
        }
        var opts = base.options.intersection(ValidityTable.allowedOptions(for: cat))
        if u.contains(.mixWithOthers) && cat != .ambient { opts.insert(.mixWithOthers) }
        // Ambient mixes; keep that when it has to become playback.
        if promotedFromAmbient { opts.insert(.mixWithOthers) }
        if u.contains(.duckOthers) { opts.insert(.duckOthers) }
        if cat == .playAndRecord {
            if u.contains(.speakerByDefault) { opts.insert(.defaultToSpeaker) }
            let hfp = anyRecording && !ctx.a2dpWhileRecording
            if hfp { opts.remove(.allowBluetoothA2DP) }
            if u.contains(.bluetooth) || u.contains(.bluetoothA2DP) {
                if hfp {
                    opts.insert(.allowBluetooth)
                } else {
                    // HFP would win over A2DP on a device with both profiles.
                    opts.insert(.allowBluetoothA2DP)
                    opts.remove(.allowBluetooth)
                }
            }
        }
        var mode: SessionMode = .default
        if let w = modeWinner(inputs, category: cat), let m = w.preferredMode {
            mode = m
        } else if cat == base.category {
            mode = base.mode
        }
        return SessionConfiguration(category: cat, mode: mode, options: opts)
    }
}
