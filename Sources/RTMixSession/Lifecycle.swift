// Lifecycle.swift — app background/foreground transitions.
//
// Background: recording is not allowed there (unless a module asked for
// recordInBackground): its modules get stopRecording and the session goes
// to the play-only configuration the remaining needs give; a player needs a
// category that plays in the background (playback, not soloAmbient/ambient,
// which screen lock silences).
// Foreground: the recording configuration is restored at once; recording
// restarts only after `recordingRestartDelayMs` (an immediate restart fails
// with an I/O error on the platform). A missing interruption "ended" is
// recovered here too.

extension SessionEngine {
    /// The app moved to the background (UIApplicationDidEnterBackground).
    /// A repeated call is ignored.
    public func enteredBackground(now: UInt64) {
        advance(to: now)
        guard foreground else { return }
        let before = arbiterInputs
        foreground = false
        timers.cancelRecordingStarts()
        for i in modules.indices {
            guard let r = modules[i].request, r.needs.contains(.recording),
                  !r.needs.contains(.recordInBackground) else { continue }
            // A module whose restart is still pending has not restarted yet.
            let wasRecording = !modules[i].heldForBackground && !modules[i].heldForInterruption
                && before.contains { $0.id == modules[i].id && $0.needs.contains(.recording) }
            if wasRecording { emit(.stopRecording(modules[i].id)) }
            if micPermission == .granted { modules[i].heldForBackground = true }
        }
        let configurationBefore = configuration
        reconcile(.restore)
        backgroundConfiguration = configuration != configurationBefore ? configuration : nil
    }

    /// The app returned to the foreground (UIApplicationWillEnterForeground
    /// or DidBecomeActive). A repeated call is ignored.
    public func enteredForeground(now: UInt64) {
        advance(to: now)
        guard !foreground else { return }
        foreground = true
        // The configuration chosen for the background (e.g. playback for an
        // ambient player) is undone; otherwise only what fails is changed.
        let restore = backgroundConfiguration != nil && backgroundConfiguration == configuration
        backgroundConfiguration = nil
        reconcile(restore ? .restore : .increase)
        recoverIfNeeded(delayed: true)
        let due = later(settings.recordingRestartDelayMs)
        // heldForBackground stays set until the restart fires (or the module
        // releases), so a quick return to the background stops nothing.
        // During an interruption the restart follows the reactivation.
        for m in modules where m.heldForBackground && interruption == .none {
            if let r = m.request, r.needs.contains(.recording), recordingAllowed(r.needs) {
                timers.schedule(.startRecording(m.id), at: due)
            }
        }
    }
}
