// ActionQueue.swift — the typed actions and alarms the engine hands to the
// host, and the bounded FIFOs that hold them.

/// Something the host must do. Raw kinds match RTMIX_SESSION_ACTION_*.
public enum SessionAction: Equatable, Sendable {
    /// setCategory:mode:options: with these values.
    case setConfiguration(SessionConfiguration)
    /// setActive:YES. The host must report the result with
    /// `SessionEngine.activationResult(success:now:)`.
    case activate(attempt: UInt32)
    /// setActive:NO, with AVAudioSessionSetActiveOptionNotifyOthersOnDeactivation
    /// when `notifyOthers`.
    case deactivate(notifyOthers: Bool)
    /// Fade out / pause the mixer's whole output.
    case pauseOutput
    /// Fade the mixer's output back in.
    case resumeOutput
    /// Pause the media domain (players).
    case pauseMedia
    /// Resume the media domain (players).
    case resumeMedia
    /// Mark the RTC call held (true) or no longer held (false).
    case setCallHeld(Bool)
    /// Reconfigure the mixer's output format.
    case reconfigureEngine(sampleRate: UInt32, channels: UInt32)
    /// requestRecordPermission: and report the answer.
    case requestMicPermission
    /// The module may (re)start recording now.
    case startRecording(ModuleID)
    /// The module must stop recording now.
    case stopRecording(ModuleID)
    /// overrideOutputAudioPort:Speaker (proposal: the host may ask the user).
    case routeToSpeaker
    /// Another app's secondary-audio hint: silence (true) or resume (false)
    /// secondary audio such as sound effects or background music.
    case secondaryAudioHint(silence: Bool)
    /// Voice processing (echo cancellation, AGC) turned on (true) or off:
    /// while on, the platform's I/O unit outputs mono, so a
    /// `reconfigureEngine` to one channel follows (and back after).
    case voiceProcessing(enabled: Bool)

    /// Stable integer kind (RTMIX_SESSION_ACTION_*).
    public var kindCode: UInt32 {
        switch self {
        case .setConfiguration: return 1
        case .activate: return 2
        case .deactivate: return 3
        case .pauseOutput: return 4
        case .resumeOutput: return 5
        case .pauseMedia: return 6
        case .resumeMedia: return 7
        case .setCallHeld: return 8
        case .reconfigureEngine: return 9
        case .requestMicPermission: return 10
        case .startRecording: return 11
        case .stopRecording: return 12
        case .routeToSpeaker: return 13
        case .secondaryAudioHint: return 14
        case .voiceProcessing: return 15
        }
    }
}

/// An action with the (host) time at which the engine issued it.
public struct IssuedAction: Equatable, Sendable {
    public var action: SessionAction
    public var timeMs: UInt64
    public init(_ action: SessionAction, timeMs: UInt64) {
        self.action = action
        self.timeMs = timeMs
    }
}

/// Alarm codes. Values match RTMIX_SESSION_ALARM_*.
public enum SessionAlarmCode: UInt32, Sendable {
    /// A module changed the session against an active module's needs; the
    /// engine issued a corrective setConfiguration. module = culprit,
    /// relatedModule = the module whose needs were violated, detail = option
    /// bits the correction adds.
    case configurationOverridden = 1
    /// A reported configuration is not valid (ignored). detail =
    /// ConfigurationProblems bits.
    case invalidConfiguration = 2
    /// A module's preferred mode could not be applied. detail = the mode.
    case modeNotApplied = 3
    /// Activation failed `detail` times in a row; the engine stopped retrying
    /// until the next foreground / play / request.
    case activationFailed = 4
    /// An interruption began but no "ended" arrived before the app returned
    /// to the foreground or the user pressed play.
    case interruptionEndMissing = 5
    /// A module asked to record but the microphone permission is denied.
    case micPermissionDenied = 6
    /// Advisory: recording while a car kit is connected (the car shows "in
    /// call" and loses its media controls); the app may ask the user.
    case carKitRecording = 7
    /// The action or alarm queue was full; detail = items dropped so far.
    case queueOverflow = 8

    public var severity: AlarmSeverity {
        switch self {
        case .carKitRecording, .modeNotApplied: return .advisory
        case .configurationOverridden, .invalidConfiguration, .interruptionEndMissing,
             .micPermissionDenied: return .warning
        case .activationFailed, .queueOverflow: return .error
        }
    }
}

public enum AlarmSeverity: UInt32, Sendable {
    case advisory = 0
    case warning = 1
    case error = 2
}

public struct SessionAlarm: Equatable, Sendable {
    public var code: SessionAlarmCode
    /// The module the alarm is about (culprit / requester); .unknown if none.
    public var module: ModuleID
    /// A second module involved (e.g. the module whose needs were violated).
    public var relatedModule: ModuleID
    public var detail: UInt32
    public var timeMs: UInt64

    public init(_ code: SessionAlarmCode, module: ModuleID = .unknown,
                relatedModule: ModuleID = .unknown, detail: UInt32 = 0, timeMs: UInt64) {
        self.code = code
        self.module = module
        self.relatedModule = relatedModule
        self.detail = detail
        self.timeMs = timeMs
    }

    public var severity: AlarmSeverity { code.severity }
}

/// A FIFO with a fixed maximum count (no reallocation after it has grown).
struct BoundedFIFO<Element> {
    private var items: [Element] = []
    private var head = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }

    /// Appends unless full; returns false when full.
    mutating func push(_ e: Element) -> Bool {
        if count >= capacity { return false }
        if head > 0 && head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        items.append(e)
        return true
    }

    mutating func pop() -> Element? {
        if head == items.count { return nil }
        let e = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return e
    }

    func peek() -> Element? { head == items.count ? nil : items[head] }
}

/// Timed work the engine does when the host's time reaches `due`.
enum TimerKind: Equatable {
    case activate(attempt: UInt32)
    case startRecording(ModuleID)
}

struct PendingTimer: Equatable {
    var due: UInt64
    var sequence: UInt64
    var kind: TimerKind
}

/// Pending timers, fired in (due, insertion) order.
struct TimerList {
    private(set) var timers: [PendingTimer] = []
    private var nextSequence: UInt64 = 0

    mutating func schedule(_ kind: TimerKind, at due: UInt64) {
        nextSequence += 1
        timers.append(PendingTimer(due: due, sequence: nextSequence, kind: kind))
    }

    mutating func cancelActivation() {
        timers.removeAll { if case .activate = $0.kind { return true } else { return false } }
    }

    mutating func cancelRecordingStarts() {
        timers.removeAll { if case .startRecording = $0.kind { return true } else { return false } }
    }

    var nextDue: UInt64? {
        var best: UInt64? = nil
        for t in timers where best == nil || t.due < best! { best = t.due }
        return best
    }

    /// Removes and returns the earliest timer due at or before `now`.
    mutating func popDue(_ now: UInt64) -> PendingTimer? {
        var bestIndex = -1
        for (i, t) in timers.enumerated() where t.due <= now {
            if bestIndex < 0 || t.due < timers[bestIndex].due
                || (t.due == timers[bestIndex].due && t.sequence < timers[bestIndex].sequence) {
                bestIndex = i
            }
        }
        if bestIndex < 0 { return nil }
        return timers.remove(at: bestIndex)
    }

    var hasActivation: Bool {
        timers.contains { if case .activate = $0.kind { return true } else { return false } }
    }
}
