// Routes.swift — route changes (device loss, Bluetooth HFP format, category
// change enforcement), microphone permission gating and the car-kit
// recording advisory.

/// One route-change notification as the host saw it.
public struct RouteChange: Equatable, Sendable {
    /// AVAudioSessionRouteChangeReasonKey (raw; unknown values are kept).
    public var reasonRaw: UInt32
    /// The new current route.
    public var route: RouteInfo
    /// Output of AVAudioSessionRouteChangePreviousRouteKey; `.unknown` =
    /// use the route the engine last saw.
    public var previousOutput: RoutePort

    public init(reason: RouteChangeReason, route: RouteInfo, previousOutput: RoutePort = .unknown) {
        self.reasonRaw = reason.rawValue
        self.route = route
        self.previousOutput = previousOutput
    }

    public init(reasonRaw: UInt32, route: RouteInfo, previousOutput: RoutePort = .unknown) {
        self.reasonRaw = reasonRaw
        self.route = route
        self.previousOutput = previousOutput
    }

    public var reason: RouteChangeReason { RouteChangeReason(rawValue: reasonRaw) ?? .unknown }
}

/// A configuration as raw platform values (may be invalid).
struct RawConfiguration {
    var category: UInt32
    var mode: UInt32
    var options: UInt32
}

extension SessionEngine {
    /// Handles a route change, in this order:
    /// 1. oldDeviceUnavailable from a private output (headphones, Bluetooth,
    ///    USB, car, AirPlay, HDMI) pauses media (`pauseMediaOnDeviceLoss`).
    /// 2. An HFP output reconfigures the mixer to the HFP rate, mono; leaving
    ///    HFP restores the normal format.
    /// 3. categoryChange with `observed` runs the enforcement check
    ///    (attributed to `.unknown`).
    /// 4. Car-kit advisory.
    public func routeChanged(_ change: RouteChange, observed: SessionConfiguration? = nil,
                             now: UInt64) {
        var raw: RawConfiguration? = nil
        if let c = observed {
            raw = RawConfiguration(category: c.category.rawValue, mode: c.mode.rawValue,
                                   options: c.options.rawValue)
        }
        routeChanged(change, observedRaw: raw, now: now)
    }

    func routeChanged(_ change: RouteChange, observedRaw: RawConfiguration?, now: UInt64) {
        advance(to: now)
        handleRoute(change)
        if let c = observedRaw, change.reason == .categoryChange {
            enforce(category: c.category, mode: c.mode, options: c.options, from: .unknown)
        }
        checkCarKitAdvisory()
    }

    func handleRoute(_ change: RouteChange) {
        let previous = change.previousOutput != .unknown ? change.previousOutput : route.output
        route = change.route
        if change.reason == .oldDeviceUnavailable && settings.pauseMediaOnDeviceLoss
            && previous.isPrivate && mediaActive {
            emit(.pauseMedia)
        }
        updateEngineFormat()
    }

    /// The mixer format the route and voice processing call for: HFP is the
    /// HFP rate, mono; voice processing is mono at the normal rate;
    /// otherwise the engine's normal format.
    func updateEngineFormat() {
        var rate = settings.engineSampleRate
        var channels = settings.engineChannels
        if route.output == .bluetoothHFP {
            // A reported rate outside what HFP/LE audio uses (8–48 kHz) is a
            // glitch of the report, not a format the mixer could take.
            let reported = route.sampleRate
            rate = (8_000...48_000).contains(reported) ? reported : settings.defaultHFPSampleRate
            channels = 1
        }
        if voiceProcessingOn { channels = 1 }
        reconfigureEngine(sampleRate: rate, channels: channels)
    }

    // MARK: Voice processing

    /// The host's explicit voice-processing switch (e.g.
    /// AVAudioInputNode.setVoiceProcessingEnabled). Voice processing is on
    /// while this is set or the configuration is playAndRecord with the
    /// voiceChat or videoChat mode.
    public func setVoiceProcessing(_ enabled: Bool, now: UInt64) {
        advance(to: now)
        voiceProcessingSwitch = enabled
        updateVoiceProcessing()
    }

    /// Announces a voice-processing change (voiceProcessing action) and
    /// reconfigures the mixer (mono while on).
    func updateVoiceProcessing() {
        let c = configuration
        let byMode = c.category == .playAndRecord && (c.mode == .voiceChat || c.mode == .videoChat)
        let on = voiceProcessingSwitch || byMode
        if on == voiceProcessingOn { return }
        voiceProcessingOn = on
        emit(.voiceProcessing(enabled: on))
        updateEngineFormat()
    }

    private func reconfigureEngine(sampleRate: UInt32, channels: UInt32) {
        if sampleRate == engineSampleRate && channels == engineChannels { return }
        engineSampleRate = sampleRate
        engineChannels = channels
        emit(.reconfigureEngine(sampleRate: sampleRate, channels: channels))
    }

    // MARK: Microphone permission

    /// Reports the microphone permission. Granted: recording requests that
    /// waited are applied and get `startRecording`. Denied: they raise
    /// `micPermissionDenied`.
    public func setMicPermission(_ permission: MicPermission, now: UInt64) {
        advance(to: now)
        if permission == micPermission { return }
        micPermission = permission
        switch permission {
        case .granted:
            reconcile(.increase)
            for i in modules.indices where modules[i].awaitingPermission {
                modules[i].awaitingPermission = false
                if let r = modules[i].request, recordingAllowed(r.needs) {
                    emit(.startRecording(modules[i].id))
                } else if modules[i].request != nil {
                    modules[i].heldForBackground = true
                }
            }
        case .denied:
            for i in modules.indices where modules[i].awaitingPermission {
                modules[i].awaitingPermission = false
                raise(.micPermissionDenied, module: modules[i].id)
            }
            reconcile(.restore)
        case .undetermined:
            permissionRequested = false
            reconcile(.restore)
        }
    }

    /// Applies the permission and app-state gates to a recording request.
    func gateRecording(_ index: Int) {
        let id = modules[index].id
        switch micPermission {
        case .granted:
            modules[index].awaitingPermission = false
        case .undetermined:
            modules[index].awaitingPermission = true
            if !permissionRequested {
                permissionRequested = true
                emit(.requestMicPermission)
            }
        case .denied:
            modules[index].awaitingPermission = false
            raise(.micPermissionDenied, module: id)
        }
        if let r = modules[index].request, !foreground && !r.needs.contains(.recordInBackground)
            && micPermission == .granted {
            modules[index].heldForBackground = true
        }
    }

    // MARK: Car kit

    /// Raises `carKitRecording` once each time "a module records while a car
    /// kit is connected" becomes true.
    func checkCarKitAdvisory() {
        let carKit = route.isCarKit || route.output == .carAudio
        var recorder: ModuleID? = nil
        if carKit {
            let ctx = gating
            for m in modules {
                if let r = m.request, Arbiter.effectiveNeeds(r.needs, ctx).contains(.recording) {
                    recorder = m.id
                    break
                }
            }
        }
        if let id = recorder {
            if !carKitAdvisoryRaised {
                carKitAdvisoryRaised = true
                raise(.carKitRecording, module: id)
            }
        } else {
            carKitAdvisoryRaised = false
        }
    }
}
