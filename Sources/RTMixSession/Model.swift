// Model.swift — the vocabulary of the audio-session policy engine.
//
// Raw values follow the platform (AVAudioSession) wherever the platform has
// integers (category options, route-change reasons, interruption flags), so
// host glue can pass them straight through. Categories, modes and ports are
// strings on the platform; they get stable integers here (documented in
// include/rtmix_session.h and docs/session-policy.md).

/// Audio session category (AVAudioSessionCategory*). Stable integer values.
public enum SessionCategory: UInt32, Sendable {
    /// AVAudioSessionCategoryAmbient: plays, always mixes, obeys the silent switch.
    case ambient = 0
    /// AVAudioSessionCategorySoloAmbient: plays, never mixes (platform default).
    case soloAmbient = 1
    /// AVAudioSessionCategoryPlayback: plays; mixes only with mixWithOthers.
    case playback = 2
    /// AVAudioSessionCategoryRecord: records only (silences playback).
    case record = 3
    /// AVAudioSessionCategoryPlayAndRecord: plays and records.
    case playAndRecord = 4
    /// AVAudioSessionCategoryMultiRoute.
    case multiRoute = 5

    /// True if audio output is possible in this category.
    public var plays: Bool { self != .record }
    /// True if this category records.
    public var records: Bool { self == .record || self == .playAndRecord || self == .multiRoute }
}

/// Audio session mode (AVAudioSessionMode*). Stable integer values.
public enum SessionMode: UInt32, Sendable {
    case `default` = 0       // AVAudioSessionModeDefault
    case voiceChat = 1       // AVAudioSessionModeVoiceChat
    case videoChat = 2       // AVAudioSessionModeVideoChat
    case gameChat = 3        // AVAudioSessionModeGameChat
    case videoRecording = 4  // AVAudioSessionModeVideoRecording
    case moviePlayback = 5   // AVAudioSessionModeMoviePlayback
    case measurement = 6     // AVAudioSessionModeMeasurement
    case spokenAudio = 7     // AVAudioSessionModeSpokenAudio
}

/// AVAudioSessionCategoryOptions, with the platform's raw values.
public struct SessionOptions: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let mixWithOthers = SessionOptions(rawValue: 0x1)
    public static let duckOthers = SessionOptions(rawValue: 0x2)
    /// Bluetooth hands-free profile (HFP): Bluetooth input and output.
    public static let allowBluetooth = SessionOptions(rawValue: 0x4)
    public static let defaultToSpeaker = SessionOptions(rawValue: 0x8)
    /// 0x11 on the platform: includes the mixWithOthers bit.
    public static let interruptSpokenAudioAndMixWithOthers = SessionOptions(rawValue: 0x11)
    public static let allowBluetoothA2DP = SessionOptions(rawValue: 0x20)
    public static let allowAirPlay = SessionOptions(rawValue: 0x40)

    /// Every bit this engine knows.
    public static let known = SessionOptions(rawValue: 0x7F)

    /// True if the options make a playing category mix with other apps
    /// (duckOthers implies mixWithOthers on the platform).
    public var mixes: Bool { rawValue & 0x3 != 0 }
}

/// One audio session configuration: what setCategory:mode:options: sets.
public struct SessionConfiguration: Equatable, Sendable {
    public var category: SessionCategory
    public var mode: SessionMode
    public var options: SessionOptions

    public init(category: SessionCategory, mode: SessionMode = .default,
                options: SessionOptions = []) {
        self.category = category
        self.mode = mode
        self.options = options
    }

    /// The platform's initial configuration (soloAmbient, default, none).
    public static let platformDefault = SessionConfiguration(category: .soloAmbient)

    /// True if a playing category mixes with other apps' audio.
    public var mixesWithOthers: Bool {
        category == .ambient || (category != .soloAmbient && category != .record && options.mixes)
    }
}

/// Identifies a registered module. 0 means "unknown / not a module".
public struct ModuleID: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Attribution for changes whose origin the host does not know.
    public static let unknown = ModuleID(rawValue: 0)
}

/// What a module needs from the session. Values match RTMIX_SESSION_NEED_*.
public struct SessionNeeds: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The module plays audio.
    public static let playback = SessionNeeds(rawValue: 0x1)
    /// The module records from the microphone (gated by permission and
    /// app state).
    public static let recording = SessionNeeds(rawValue: 0x2)
    /// Other audio (other apps, WebView processes) must keep playing.
    public static let mixWithOthers = SessionNeeds(rawValue: 0x4)
    /// Output to the speaker rather than the receiver by default.
    public static let speakerByDefault = SessionNeeds(rawValue: 0x8)
    /// Bluetooth headsets allowed (HFP while recording, A2DP otherwise).
    public static let bluetooth = SessionNeeds(rawValue: 0x10)
    /// The module is an RTC call: implies playback, mixWithOthers,
    /// speakerByDefault, bluetooth and (in the foreground) playAndRecord.
    public static let call = SessionNeeds(rawValue: 0x20)
    /// Duck other audio while this module plays.
    public static let duckOthers = SessionNeeds(rawValue: 0x40)
    /// The module may keep recording in the background (e.g. a VoIP call
    /// with the audio background mode).
    public static let recordInBackground = SessionNeeds(rawValue: 0x80)
    /// Bluetooth A2DP (stereo, music quality) output even while recording;
    /// the built-in microphone records then (allowBluetoothA2DP on
    /// playAndRecord). An RTC call that records still gets HFP.
    public static let bluetoothA2DP = SessionNeeds(rawValue: 0x100)

    public static let known = SessionNeeds(rawValue: 0x1FF)

    /// Internal (never accepted from callers): the module plays while the app
    /// is in the background, so the category must keep playing there
    /// (playback, playAndRecord or multiRoute; not ambient or soloAmbient).
    static let playsInBackground = SessionNeeds(rawValue: 0x8000_0000)
}

/// A module's request: its needs and, optionally, a preferred mode.
public struct SessionRequest: Equatable, Sendable {
    public var needs: SessionNeeds
    /// nil = no preference.
    public var preferredMode: SessionMode?

    public init(needs: SessionNeeds, preferredMode: SessionMode? = nil) {
        self.needs = needs
        self.preferredMode = preferredMode
    }
}

/// Microphone record permission (AVAudioSessionRecordPermission).
public enum MicPermission: UInt32, Sendable {
    case undetermined = 0
    case denied = 1
    case granted = 2
}

/// Output/input port kinds (AVAudioSessionPort*). Stable integer values.
public enum RoutePort: UInt32, Sendable {
    case unknown = 0
    case builtInSpeaker = 1   // AVAudioSessionPortBuiltInSpeaker
    case builtInReceiver = 2  // AVAudioSessionPortBuiltInReceiver
    case headphones = 3       // AVAudioSessionPortHeadphones, LineOut, HeadsetMic
    case bluetoothA2DP = 4    // AVAudioSessionPortBluetoothA2DP
    case bluetoothHFP = 5     // AVAudioSessionPortBluetoothHFP
    case bluetoothLE = 6      // AVAudioSessionPortBluetoothLE
    case carAudio = 7         // AVAudioSessionPortCarAudio (CarPlay)
    case airPlay = 8          // AVAudioSessionPortAirPlay
    case usbAudio = 9         // AVAudioSessionPortUSBAudio
    case hdmi = 10            // AVAudioSessionPortHDMI
    case other = 11           // anything else

    /// A Bluetooth headset profile that carries a call (HFP, or Bluetooth LE
    /// audio): left there after another app's call, the speaker is proposed.
    public var isBluetoothVoice: Bool { self == .bluetoothHFP || self == .bluetoothLE }

    /// A personal device whose loss should pause media (unplug rule).
    public var isPrivate: Bool {
        switch self {
        case .unknown, .builtInSpeaker, .builtInReceiver, .other: return false
        default: return true
        }
    }
}

/// AVAudioSessionRouteChangeReason raw values.
public enum RouteChangeReason: UInt32, Sendable {
    case unknown = 0
    case newDeviceAvailable = 1
    case oldDeviceUnavailable = 2
    case categoryChange = 3
    case override = 4
    case wakeFromSleep = 6
    case noSuitableRouteForCategory = 7
    case routeConfigurationChange = 8
}

/// A route as the host sees it after a change.
public struct RouteInfo: Equatable, Sendable {
    public var output: RoutePort
    /// Hardware sample rate in Hz (AVAudioSession.sampleRate); 0 = unknown.
    public var sampleRate: UInt32
    /// The output is a car kit (CarPlay or a Bluetooth car kit).
    public var isCarKit: Bool
    /// The user picked this route (route picker); it is never overridden.
    public var userSelected: Bool

    public init(output: RoutePort, sampleRate: UInt32 = 0, isCarKit: Bool = false,
                userSelected: Bool = false) {
        self.output = output
        self.sampleRate = sampleRate
        self.isCarKit = isCarKit
        self.userSelected = userSelected
    }
}

/// Engine settings, fixed at creation.
public struct SessionSettings: Equatable, Sendable {
    /// The configuration the app has when no module needs anything; the
    /// engine returns to it when every module has released.
    public var base: SessionConfiguration = .platformDefault
    /// The mixer's normal output format (restored when HFP ends).
    public var engineSampleRate: UInt32 = 48000
    public var engineChannels: UInt32 = 2
    /// HFP rate used when the host reports an HFP route without a rate.
    public var defaultHFPSampleRate: UInt32 = 16000
    /// Delay between an interruption's end and the reactivation.
    public var reactivationDelayMs: UInt64 = 500
    /// Backoff after a failed activation: base << (attempt-1), capped.
    public var retryBaseMs: UInt64 = 250
    public var retryMaxMs: UInt64 = 4000
    /// Activation attempts before the activationFailed alarm (>= 1).
    public var maxActivationAttempts: UInt32 = 4
    /// Delay before recording restarts after returning to the foreground.
    public var recordingRestartDelayMs: UInt64 = 500
    /// Pause media when a private output (headphones, ...) disappears.
    public var pauseMediaOnDeviceLoss: Bool = true
    /// After an interruption, propose the speaker when the output is an HFP
    /// device the user did not pick.
    public var proposeSpeakerAfterInterruption: Bool = true
    /// Deactivate (notifying others) when the last module releases.
    public var deactivateWhenIdle: Bool = true
    /// Initial microphone permission.
    public var micPermission: MicPermission = .undetermined
    /// Registered modules at most (1...1024).
    public var maxModules: UInt32 = 64
    /// Queued actions and alarms at most each (16...65536).
    public var queueCapacity: UInt32 = 256

    public init() {}
}

/// Errors of the Swift API (mapped to RTMIX_ERR_* by the C layer).
public enum SessionError: Error, Equatable, Sendable {
    case invalidArgument
    case notFound
    case limit
    case badState
}
