// SessionEngine.swift — the policy engine's state, module registry and the
// central reconcile step. Event handlers live in Enforcement.swift,
// Interruptions.swift, Routes.swift and Lifecycle.swift.
//
// The engine is a deterministic state machine: no clocks, no timers, no
// threads. Every entry point takes the host's monotonic time in ms; delayed
// work fires when a later call (or `tick`) reaches its due time. Not
// thread-safe: serialise calls per engine.

struct ModuleRecord {
    let id: ModuleID
    let name: [UInt8]
    var request: SessionRequest?
    var sequence: UInt64 = 0
    /// Recording requested while the permission was undetermined.
    var awaitingPermission = false
    /// Recording stopped (or held back) because the app is in the background.
    var heldForBackground = false
    /// Recording stopped by an interruption; restarts after reactivation.
    var heldForInterruption = false
}

enum ActivationState: Equatable {
    case idle
    /// An activate action was issued; waiting for the host's result.
    case awaiting(attempt: UInt32)
    /// A (re)activation timer is pending.
    case scheduled
}

enum InterruptionPhase: Equatable {
    case none
    /// Began, no "ended" yet.
    case began
    /// Ended without shouldResume and no call: wait for play / foreground.
    case endedAwaitingUser
    /// Reactivation in progress; resume actions follow its success.
    case recovering
}

/// Read-only snapshot of the engine state (for hosts, logs and tests).
public struct SessionState: Equatable, Sendable {
    public var configuration: SessionConfiguration
    public var sessionActive: Bool
    public var interrupted: Bool
    public var callHeld: Bool
    public var foreground: Bool
    public var micPermission: MicPermission
    public var engineSampleRate: UInt32
    public var engineChannels: UInt32
    public var activeModules: UInt32
    public var output: RoutePort
    /// Voice processing is on (VoiceChat/VideoChat on playAndRecord, or the
    /// host's explicit switch): the mixer output is mono.
    public var voiceProcessing: Bool = false
}

public final class SessionEngine {
    public let settings: SessionSettings

    var modules: [ModuleRecord] = []
    var nextModuleID: UInt32 = 1
    var requestSequence: UInt64 = 0

    /// The configuration the engine believes the session has.
    public internal(set) var configuration: SessionConfiguration
    var now: UInt64 = 0
    /// The time `advance(to:)` is moving to (see the activation poll).
    var advanceTarget: UInt64 = 0

    var actions: BoundedFIFO<IssuedAction>
    var alarms: BoundedFIFO<SessionAlarm>
    var droppedItems: UInt32 = 0
    var overflowReported = false
    var timers = TimerList()

    // Activation and interruptions.
    var sessionActive = false
    var activation: ActivationState = .idle
    var activationGaveUp = false
    var interruption: InterruptionPhase = .none
    var resumeMediaAfterInterruption = false
    var callHeld = false
    var outputWhenInterrupted: RoutePort = .unknown
    /// The host's isOtherAudioPlaying report (setOtherAudioPlaying).
    var otherAudioPlaying = false

    // Routes and the mixer format.
    var route = RouteInfo(output: .unknown)
    var engineSampleRate: UInt32
    var engineChannels: UInt32
    var carKitAdvisoryRaised = false
    /// The host's explicit voice-processing switch (setVoiceProcessing).
    var voiceProcessingSwitch = false
    /// Voice processing as last announced (voiceProcessing action).
    var voiceProcessingOn = false

    // Permission and app state.
    var micPermission: MicPermission
    var permissionRequested = false
    var foreground = true
    /// The configuration enteredBackground switched to (nil if it changed
    /// nothing); enteredForeground restores the foreground target from it.
    var backgroundConfiguration: SessionConfiguration?

    /// Creates an engine. Throws `.invalidArgument` if the base configuration
    /// is invalid (see `ValidityTable`) or a setting is out of range.
    /// Whether `init(settings:)` accepts these settings. The C entry checks
    /// first: the Embedded build leaked the object of a class init that
    /// throws before its stored properties are set (268 bytes per call).
    static func accepts(_ settings: SessionSettings) -> Bool {
        ValidityTable.check(settings.base).isValid
            && settings.engineSampleRate >= 8000 && settings.engineSampleRate <= 192000
            && settings.engineChannels >= 1 && settings.engineChannels <= 2
            && settings.defaultHFPSampleRate >= 8000 && settings.defaultHFPSampleRate <= 48000
            && settings.maxActivationAttempts >= 1 && settings.maxActivationAttempts <= 100
            && settings.retryBaseMs <= settings.retryMaxMs
            && settings.maxModules >= 1 && settings.maxModules <= 1024
            && settings.queueCapacity >= 16 && settings.queueCapacity <= 65536
    }

    public init(settings: SessionSettings = SessionSettings()) throws(SessionError) {
        guard SessionEngine.accepts(settings) else { throw .invalidArgument }
        self.settings = settings
        self.configuration = settings.base
        self.actions = BoundedFIFO(capacity: Int(settings.queueCapacity))
        self.alarms = BoundedFIFO(capacity: Int(settings.queueCapacity))
        self.engineSampleRate = settings.engineSampleRate
        self.engineChannels = settings.engineChannels
        self.micPermission = settings.micPermission
    }

    // MARK: Modules

    /// Registers a module by name (UTF-8, 1...255 bytes) and returns its id.
    /// Ids start at 1 and are never reused.
    public func register(name: String) throws(SessionError) -> ModuleID {
        var bytes: [UInt8] = []
        for b in name.utf8 { bytes.append(b) }
        return try register(nameBytes: bytes)
    }

    func register(nameBytes: [UInt8]) throws(SessionError) -> ModuleID {
        guard !nameBytes.isEmpty, nameBytes.count <= 255 else { throw .invalidArgument }
        guard modules.count < Int(settings.maxModules), nextModuleID < UInt32.max else {
            throw .limit
        }
        let id = ModuleID(rawValue: nextModuleID)
        nextModuleID += 1
        modules.append(ModuleRecord(id: id, name: nameBytes))
        return id
    }

    /// Releases the module's request (if any) and forgets the module.
    public func unregister(_ id: ModuleID, now: UInt64) throws(SessionError) {
        let index = try indexOf(id)
        advance(to: now)
        let hadRequest = modules[index].request != nil
        modules.remove(at: index)
        if hadRequest { reconcile(.restore) }
    }

    /// The name a module registered with, as UTF-8 bytes.
    public func nameBytes(of id: ModuleID) -> [UInt8]? {
        for m in modules where m.id == id { return m.name }
        return nil
    }

    /// The module's current request, or nil if it has none.
    public func request(of id: ModuleID) -> SessionRequest? {
        for m in modules where m.id == id { return m.request }
        return nil
    }

    func indexOf(_ id: ModuleID) throws(SessionError) -> Int {
        for (i, m) in modules.enumerated() where m.id == id { return i }
        throw .notFound
    }

    // MARK: Requests

    /// Sets (or replaces) what a module needs. If the current configuration
    /// already satisfies every active module nothing changes; if the request
    /// needs less than before, the configuration the active modules need is
    /// restored.
    public func request(_ id: ModuleID, _ request: SessionRequest, now: UInt64) throws(SessionError) {
        guard request.needs.isSubset(of: .known) else { throw .invalidArgument }
        let index = try indexOf(id)
        advance(to: now)
        let old = modules[index].request
        requestSequence += 1
        modules[index].request = request
        modules[index].sequence = requestSequence
        let increase = old == nil || request.needs.isSuperset(of: old!.needs)
        if old == nil { activationGaveUp = false }

        if request.needs.contains(.recording) {
            gateRecording(index)
        } else {
            modules[index].awaitingPermission = false
            modules[index].heldForBackground = false
            modules[index].heldForInterruption = false
        }
        reconcile(increase ? .increase : .restore)
        if let mode = request.preferredMode, configuration.mode != mode {
            raise(.modeNotApplied, module: id, detail: mode.rawValue)
        }
    }

    /// Releases what a module needs (no-op if it has no request). The
    /// configuration the remaining modules need is restored.
    public func release(_ id: ModuleID, now: UInt64) throws(SessionError) {
        let index = try indexOf(id)
        advance(to: now)
        guard modules[index].request != nil else { return }
        modules[index].request = nil
        modules[index].awaitingPermission = false
        modules[index].heldForBackground = false
        modules[index].heldForInterruption = false
        reconcile(.restore)
    }

    // MARK: Time

    /// Fires every timer due at or before `now`. Time never goes back: an
    /// earlier `now` than already seen is treated as the latest time seen.
    public func tick(now: UInt64) {
        advance(to: now)
    }

    /// The earliest time at which `tick` has work to do, or nil.
    public var nextDueMs: UInt64? { timers.nextDue }

    func advance(to t: UInt64) {
        let target = t > now ? t : now
        advanceTarget = target
        while let timer = timers.popDue(target) {
            if timer.due > now { now = timer.due }
            fire(timer.kind)
        }
        now = target
    }

    /// The current time plus `delay`, saturating.
    func later(_ delay: UInt64) -> UInt64 {
        let (sum, overflow) = now.addingReportingOverflow(delay)
        return overflow ? UInt64.max : sum
    }

    private func fire(_ kind: TimerKind) {
        switch kind {
        case .activate(let attempt):
            if activation == .scheduled { activation = .idle }
            if !hasActiveModules {
                if interruption == .recovering { finishRecovery() }
                return
            }
            // Another app still holds the audio: a reactivation that would
            // interrupt it (no mixing) is retried later.
            if interruption == .recovering && otherAudioPlaying && !configuration.mixesWithOthers {
                activation = .scheduled
                // Polled from the time being advanced to, not from this
                // timer's due time: a host clock that jumps far ahead gets
                // one more check, not one per delay in between (a fuzzed
                // jump of 2^63 ms used to loop for ever), and at least 1 ms
                // later (with a reactivation delay of 0 it did too).
                let from = advanceTarget > now ? advanceTarget : now
                let (due, overflow) = from.addingReportingOverflow(max(1, settings.reactivationDelayMs))
                if overflow {
                    // At the end of the clock's range there is no later:
                    // stop polling (user play or the foreground restarts it).
                    activation = .idle
                    return
                }
                timers.schedule(.activate(attempt: attempt), at: due)
                return
            }
            issueActivate(attempt: attempt)
        case .startRecording(let id):
            for i in modules.indices where modules[i].id == id
                && (modules[i].heldForBackground || modules[i].heldForInterruption) {
                if interruption != .none { continue }
                if let r = modules[i].request, r.needs.contains(.recording), recordingAllowed(r.needs) {
                    modules[i].heldForBackground = false
                    modules[i].heldForInterruption = false
                    emit(.startRecording(id))
                }
            }
        }
    }

    // MARK: Output

    /// Removes and returns the oldest pending action.
    public func nextAction() -> IssuedAction? {
        let a = actions.pop()
        if actions.isEmpty && alarms.isEmpty { overflowReported = false }
        return a
    }

    /// Removes and returns the oldest pending alarm.
    public func nextAlarm() -> SessionAlarm? {
        let a = alarms.pop()
        if actions.isEmpty && alarms.isEmpty { overflowReported = false }
        return a
    }

    /// Removes and returns every pending action, oldest first.
    public func drainActions() -> [IssuedAction] {
        var out: [IssuedAction] = []
        while let a = nextAction() { out.append(a) }
        return out
    }

    /// Removes and returns every pending alarm, oldest first.
    public func drainAlarms() -> [SessionAlarm] {
        var out: [SessionAlarm] = []
        while let a = nextAlarm() { out.append(a) }
        return out
    }

    public var pendingActionCount: Int { actions.count }
    public var pendingAlarmCount: Int { alarms.count }

    public var state: SessionState {
        SessionState(configuration: configuration, sessionActive: sessionActive,
                     interrupted: interruption != .none, callHeld: callHeld,
                     foreground: foreground, micPermission: micPermission,
                     engineSampleRate: engineSampleRate, engineChannels: engineChannels,
                     activeModules: UInt32(activeModuleCount), output: route.output,
                     voiceProcessing: voiceProcessingOn)
    }

    func emit(_ action: SessionAction) {
        if !actions.push(IssuedAction(action, timeMs: now)) { noteDropped() }
    }

    func raise(_ code: SessionAlarmCode, module: ModuleID = .unknown,
               related: ModuleID = .unknown, detail: UInt32 = 0) {
        if !alarms.push(SessionAlarm(code, module: module, relatedModule: related,
                                     detail: detail, timeMs: now)) {
            noteDropped()
        }
    }

    private func noteDropped() {
        droppedItems &+= 1
        if !overflowReported {
            overflowReported = true
            // Replace nothing: report through the alarm queue if it has room.
            _ = alarms.push(SessionAlarm(.queueOverflow, detail: droppedItems, timeMs: now))
        }
    }

    // MARK: Reconcile

    enum ReconcileKind {
        /// Needs grew: change only if the current configuration fails.
        case increase
        /// Needs shrank: go to the configuration the active modules need.
        case restore
    }

    var gating: GatingContext { GatingContext(foreground: foreground, micPermission: micPermission) }

    var arbiterInputs: [ArbiterInput] {
        var out: [ArbiterInput] = []
        let ctx = gating
        for m in modules {
            if let r = m.request {
                out.append(ArbiterInput(id: m.id, needs: Arbiter.effectiveNeeds(r.needs, ctx),
                                        preferredMode: r.preferredMode, sequence: m.sequence))
            }
        }
        return out
    }

    var hasActiveModules: Bool { modules.contains { $0.request != nil } }
    var activeModuleCount: Int {
        var n = 0
        for m in modules where m.request != nil { n += 1 }
        return n
    }

    /// An active RTC call (whatever the app state).
    var callActive: Bool {
        modules.contains { $0.request?.needs.contains(.call) ?? false }
    }

    /// An active module plays media (plays and is not a call).
    var mediaActive: Bool {
        modules.contains {
            guard let n = $0.request?.needs else { return false }
            return n.contains(.playback) && !n.contains(.call)
        }
    }

    func recordingAllowed(_ needs: SessionNeeds) -> Bool {
        micPermission == .granted && (foreground || needs.contains(.recordInBackground))
    }

    /// Target configuration for the current modules.
    var targetConfiguration: SessionConfiguration {
        Arbiter.target(arbiterInputs, base: settings.base)
    }

    func reconcile(_ kind: ReconcileKind) {
        let inputs = arbiterInputs
        let target = Arbiter.target(inputs, base: settings.base)
        switch kind {
        case .increase:
            if Arbiter.firstUnsatisfied(configuration, inputs) != nil { apply(target) }
        case .restore:
            if configuration != target { apply(target) }
        }
        updateVoiceProcessing()
        updateActivation()
        checkCarKitAdvisory()
    }

    func apply(_ config: SessionConfiguration) {
        if config == configuration { return }
        configuration = config
        emit(.setConfiguration(config))
    }

    func updateActivation() {
        if hasActiveModules {
            if !sessionActive && interruption == .none && activation == .idle && !activationGaveUp {
                issueActivate(attempt: 1)
            }
        } else {
            timers.cancelActivation()
            if activation == .scheduled { activation = .idle }
            if settings.deactivateWhenIdle && (sessionActive || activation != .idle) {
                emit(.deactivate(notifyOthers: true))
                sessionActive = false
                activation = .idle
            }
            activationGaveUp = false
        }
    }

    func issueActivate(attempt: UInt32) {
        activation = .awaiting(attempt: attempt)
        emit(.activate(attempt: attempt))
    }
}
