// swift-tools-version:6.1
import PackageDescription

// RTMix: an embeddable real-time audio mixer with a Swift core and a C ABI.
//
// Targets
// - RTMix          real-time core + Swift API + the engine's C ABI (@_cdecl).
//                  Standard library, Synchronization and C modules only, so it
//                  also compiles in Embedded Swift mode (see scripts/embedded-build).
// - RTMixSession   audio-session policy engine + its C ABI (no platform deps).
// - rtmix          the shared library (librtmix.so) C programs link; it
//                  exports the rtmix_* functions only (RTMixExports).
// - RTMixSignals   test and demo signals: synthetic speech and music, and an
//                  echo-path simulation (room, delay, drift, noise). Not linked
//                  into librtmix.
// - rtmix-cli      demo, file mixer, echo-canceller tools and the live device
//                  host on PortAudio (may use anything).
let package = Package(
    name: "RTMix",
    products: [
        .library(name: "rtmix", type: .dynamic, targets: ["RTMix", "RTMixSession", "RTMixExports"]),
        .library(name: "RTMixKit", targets: ["RTMix", "RTMixSession"]),
        .executable(name: "rtmix-cli", targets: ["RTMixCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate",
                       providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp",
                       providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile",
                       providers: [.apt(["libsndfile1-dev"])]),
        // PortAudio (ALSA, PulseAudio via ALSA's pulse plugin, JACK) for
        // `rtmix-cli live` only: librtmix never links it. No pkgConfig: its
        // module map links portaudio and asound, and portaudio-2.0.pc's
        // `-pthread` is a flag SwiftPM prohibits (a warning on every build).
        .systemLibrary(name: "CPortAudio",
                       providers: [.apt(["portaudio19-dev"])]),
        .systemLibrary(name: "CRTMixSupport"),
        .systemLibrary(name: "CRTMixHeader"),
        // librtmix.so exports rtmix_* only (the version script hides the
        // Swift symbols); in the `rtmix` product alone.
        .target(
            name: "RTMixExports",
            exclude: ["rtmix-swiftpm.map"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/RTMixExports/rtmix-swiftpm.map"])]
        ),
        // The real-time core is optimised in debug builds too: the tests
        // run hours of audio through it (drift, jitter and echo
        // simulations), and unoptimised SIMD kernels (the drift stage's
        // 48-tap sinc) are ~50x slower. Still compiled file by file, so the
        // @_noLocks checks see what they saw before; -enable-testing
        // (@testable) is unaffected.
        .target(
            name: "RTMix",
            dependencies: ["CSampleRate", "CSpeexDSP", "CRTMixSupport", "CRTMixHeader"],
            swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]
        ),
        .target(
            name: "RTMixSession",
            dependencies: ["CRTMixHeader"]
        ),
        .target(
            name: "RTMixSignals",
            dependencies: ["CSampleRate"]
        ),
        .executableTarget(
            name: "RTMixCLI",
            dependencies: [
                "RTMix", "RTMixSignals", "CSndFile", "CPortAudio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "RTMixTests", dependencies: ["RTMix", "RTMixSignals"]),
        .testTarget(name: "RTMixSessionTests", dependencies: ["RTMixSession"]),
    ]
)
