// Interruptions.swift — interruptions (phone call, another VoIP app),
// activation results with retry/backoff, the missing-"ended" recovery and
// other apps' secondary-audio hints.

extension SessionEngine {
    /// AVAudioSessionInterruptionTypeBegan: pause/fade the output, stop
    /// every running recorder other than the call (it restarts after the
    /// reactivation), mark the call held. A repeated "began" is ignored.
    public func interruptionBegan(now: UInt64) {
        advance(to: now)
        if interruption == .began { return }
        let inputs = arbiterInputs
        interruption = .began
        sessionActive = false
        activation = .idle
        timers.cancelActivation()
        resumeMediaAfterInterruption = false
        outputWhenInterrupted = route.output
        emit(.pauseOutput)
        // "Handling audio interruptions": the system has stopped the app's
        // audio; playback and recording are paused until reactivation.
        for i in modules.indices {
            guard let r = modules[i].request, r.needs.contains(.recording),
                  !r.needs.contains(.call), !modules[i].heldForInterruption else { continue }
            let running = !modules[i].heldForBackground && !modules[i].awaitingPermission
                && inputs.contains { $0.id == modules[i].id && $0.needs.contains(.recording) }
            if running {
                emit(.stopRecording(modules[i].id))
                modules[i].heldForInterruption = true
            } else if modules[i].heldForBackground && foreground {
                // Its foreground restart was still pending: it restarts
                // after the reactivation instead.
                modules[i].heldForInterruption = true
            }
        }
        timers.cancelRecordingStarts()
        if callActive && !callHeld {
            callHeld = true
            emit(.setCallHeld(true))
        }
    }

    /// AVAudioSessionInterruptionTypeEnded. With shouldResume, or while an
    /// RTC call is active, the session is reactivated after
    /// `reactivationDelayMs`; otherwise the engine waits for the user to
    /// press play or the app to come to the foreground. Ignored when no
    /// interruption is in progress.
    public func interruptionEnded(shouldResume: Bool, now: UInt64) {
        advance(to: now)
        guard interruption == .began else { return }
        resumeMediaAfterInterruption = shouldResume
        if shouldResume || callActive {
            interruption = .recovering
            activationGaveUp = false
            activation = .scheduled
            timers.cancelActivation()
            timers.schedule(.activate(attempt: 1), at: later(settings.reactivationDelayMs))
        } else {
            interruption = .endedAwaitingUser
        }
    }

    /// The host's result for the last `activate` action. On failure the
    /// activation is retried after retryBaseMs << (attempt-1) (capped at
    /// retryMaxMs) until maxActivationAttempts, then `activationFailed` is
    /// raised. Throws `.badState` if no activation result is awaited.
    public func activationResult(success: Bool, now: UInt64) throws(SessionError) {
        guard case .awaiting(let attempt) = activation else { throw .badState }
        advance(to: now)
        if success {
            activation = .idle
            sessionActive = true
            activationGaveUp = false
            if interruption == .recovering { finishRecovery() }
            return
        }
        if attempt < settings.maxActivationAttempts {
            let delay = retryDelay(afterAttempt: attempt)
            activation = .scheduled
            timers.schedule(.activate(attempt: attempt + 1), at: later(delay))
        } else {
            activation = .idle
            activationGaveUp = true
            raise(.activationFailed, detail: attempt)
        }
    }

    /// retryBaseMs << (attempt - 1), capped at retryMaxMs.
    func retryDelay(afterAttempt attempt: UInt32) -> UInt64 {
        var delay = settings.retryBaseMs
        var n: UInt32 = 1
        while n < attempt && delay < settings.retryMaxMs {
            delay = delay > settings.retryMaxMs / 2 ? settings.retryMaxMs : delay * 2
            n += 1
        }
        return delay < settings.retryMaxMs ? delay : settings.retryMaxMs
    }

    /// The user pressed play: reactivates after an interruption whose
    /// "ended" never came (or came without shouldResume) and resumes media
    /// afterwards; retries activation after `activationFailed`.
    public func userRequestedPlayback(now: UInt64) {
        advance(to: now)
        resumeMediaAfterInterruption = true
        recoverIfNeeded(delayed: false)
    }

    /// The platform's `isOtherAudioPlaying` (or
    /// `secondaryAudioShouldBeSilencedHint`): another app holds the audio.
    /// While true, a delayed reactivation of a configuration that does not
    /// mix with others is put off by `reactivationDelayMs` at a time.
    public func setOtherAudioPlaying(_ playing: Bool, now: UInt64) {
        advance(to: now)
        otherAudioPlaying = playing
    }

    /// Another app's secondary-audio hint
    /// (AVAudioSessionSilenceSecondaryAudioHintType begin = silence).
    public func secondaryAudioHint(silence: Bool, now: UInt64) {
        advance(to: now)
        emit(.secondaryAudioHint(silence: silence))
    }

    /// Starts the recovery that a missing or non-resuming "ended" left
    /// undone (foreground: after `reactivationDelayMs`; play: at once), or a
    /// new activation after giving up.
    func recoverIfNeeded(delayed: Bool) {
        switch interruption {
        case .began:
            raise(.interruptionEndMissing)
            startRecovery(delayed: delayed)
        case .endedAwaitingUser:
            startRecovery(delayed: delayed)
        case .recovering:
            if activationGaveUp {
                activationGaveUp = false
                if activation == .idle && hasActiveModules { issueActivate(attempt: 1) }
            }
        case .none:
            if activationGaveUp {
                activationGaveUp = false
                updateActivation()
            }
        }
    }

    private func startRecovery(delayed: Bool) {
        interruption = .recovering
        activationGaveUp = false
        timers.cancelActivation()
        if hasActiveModules {
            if delayed {
                activation = .scheduled
                timers.schedule(.activate(attempt: 1), at: later(settings.reactivationDelayMs))
            } else {
                issueActivate(attempt: 1)
            }
        } else {
            activation = .idle
            finishRecovery()
        }
    }

    /// Reactivation after an interruption succeeded: resume the output, the
    /// call and (if allowed) media; restart the recorders it stopped after
    /// `recordingRestartDelayMs` (as after the foreground); propose the
    /// speaker if the output is now a Bluetooth HFP or LE device the user did
    /// not pick.
    func finishRecovery() {
        interruption = .none
        emit(.resumeOutput)
        if callHeld {
            callHeld = false
            emit(.setCallHeld(false))
        }
        if mediaActive {
            emit(resumeMediaAfterInterruption ? .resumeMedia : .pauseMedia)
        }
        if settings.proposeSpeakerAfterInterruption && route.output.isBluetoothVoice
            && !route.userSelected && !outputWhenInterrupted.isBluetoothVoice {
            emit(.routeToSpeaker)
        }
        resumeMediaAfterInterruption = false
        let due = later(settings.recordingRestartDelayMs)
        for m in modules where m.heldForInterruption || (m.heldForBackground && foreground) {
            if let r = m.request, r.needs.contains(.recording), recordingAllowed(r.needs) {
                timers.schedule(.startRecording(m.id), at: due)
            }
        }
    }
}
