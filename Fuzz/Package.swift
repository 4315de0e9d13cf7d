// swift-tools-version: 6.1
import PackageDescription

// RTMix fuzzers (nested package; libFuzzer + AddressSanitizer). Build and run
// with scripts/fuzz-check, or by hand:
//
//   swift build -c release --package-path Fuzz --product FuzzEngineC --sanitize=fuzzer --sanitize=address \
//       -Xswiftc -sanitize=fuzzer,address -Xswiftc -DRTMIX_FUZZ_LAZY_ZERO
//   (the combined -sanitize flag: else the last --sanitize wins and there is no
//   coverage; RTMIX_FUZZ_LAZY_ZERO: zeroed buffers from calloc, see scripts/fuzz-check)
//   SWIFT_BACKTRACE=enable=no Fuzz/.build/release/FuzzEngineC Fuzz/Corpus/FuzzEngineC -max_total_time=30
//
// Long campaigns (fork mode, corpus minimised back into Fuzz/Corpus, counts
// recorded in Fuzz/campaigns.md): scripts/fuzz-campaign.
//
// - FuzzEngineC   programs of rtmix_* engine calls through the C ABI (bad
//                 configs, NaN/Inf/huge PCM, stale ids, NULL pointers), plus a
//                 mode driving the Swift API (`Engine`); asserts the
//                 documented invariants after every call.
// - FuzzSessionC  the same for rtmix_session_* (and `SessionEngine`).
// - CRTMixABI     declares the C ABI for Swift: its header includes the
//                 repository's include/rtmix.h and include/rtmix_session.h. The functions themselves are
//                 the @_cdecl exports of the RTMixKit product's objects.
//
// SwiftPM names a path dependency after its directory (the clone's name), so
// derive it rather than hard-coding the checkout's folder name.
let rootPackage = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "main").lowercased()

let package = Package(
    name: "RTMixFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: "../"),
    ],
    targets: [
        .target(name: "CRTMixABI", path: "Sources/CRTMixABI"),
        .target(name: "FuzzSupport", path: "Sources/FuzzSupport"),
        .executableTarget(
            name: "FuzzEngineC",
            dependencies: ["CRTMixABI", "FuzzSupport", .product(name: "RTMixKit", package: rootPackage)],
            path: "Sources/FuzzEngineC"
        ),
        .executableTarget(
            name: "FuzzSessionC",
            dependencies: ["CRTMixABI", "FuzzSupport", .product(name: "RTMixKit", package: rootPackage)],
            path: "Sources/FuzzSessionC"
        ),
    ]
)
