// swift-tools-version: 6.1
import PackageDescription

// RTMix benchmarks (nested package, so the root package's clean build does
// not pay for package-benchmark and its dependencies).
//
// - Render       package-benchmark suite: one 10 ms render callback per
//                iteration, engine vs. a bare libsamplerate + summation floor,
//                and for 8 sources also vs. a floor with the engine's own
//                backends (bare speexdsp for voices + libsamplerate for media)
//                (target directory Benchmarks/Render: package-benchmark runs
//                executables whose directory sits in a folder named Benchmarks).
// - Capture      package-benchmark suite: one 10 ms capture call
//                (processCapture) per iteration, engine vs. the bare speexdsp
//                echo canceller + preprocessor calls for the same frames.
// - CaptureCount the capture cases as a plain executable for callgrind
//                (scripts/bench-callgrind-capture).
// - CaptureCases the capture cases and their signals, shared by both.
// - RenderCount  the same cases as a plain executable for callgrind
//                (scripts/bench-callgrind counts instructions per callback).
// - RenderCases  the cases themselves, shared by both.
// - Contention   package-benchmark suite (issue 11): the engine's SPSCRing
//                against its pre-issue-11 layout with two spinning threads,
//                and render calls while 1 or 3 producers push.
// - RingUnderTest the ring transfer and multi-producer cases; SPSCRing.swift
//                and Allocation.swift there are symlinks to the engine's
//                own files, so the ring measured is the engine's.
//
// SwiftPM names a path dependency after its directory (the clone's name), so
// derive it rather than hard-coding the checkout's folder name.
let rootPackage = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "main").lowercased()

let package = Package(
    name: "RTMixBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // Already in the graph through package-benchmark; named here so the
        // benchmark can count render-path mallocs itself and fail the run.
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CSampleRateFloor", path: "Sources/CSampleRateFloor", pkgConfig: "samplerate",
                       providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CSpeexDSPFloor", path: "Sources/CSpeexDSPFloor", pkgConfig: "speexdsp",
                       providers: [.apt(["libspeexdsp-dev"])]),
        .target(
            name: "RenderCases",
            dependencies: [
                .product(name: "RTMixKit", package: rootPackage),
                "CSampleRateFloor",
                "CSpeexDSPFloor",
            ],
            path: "Sources/RenderCases"
        ),
        .executableTarget(
            name: "RenderCount",
            dependencies: ["RenderCases"],
            path: "Sources/RenderCount"
        ),
        .target(
            name: "CaptureCases",
            dependencies: [
                .product(name: "RTMixKit", package: rootPackage),
                "CSampleRateFloor",
                "CSpeexDSPFloor",
            ],
            path: "Sources/CaptureCases"
        ),
        .executableTarget(
            name: "CaptureCount",
            dependencies: ["CaptureCases"],
            path: "Sources/CaptureCount"
        ),
        .executableTarget(
            name: "Capture",
            dependencies: [
                "CaptureCases",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            path: "Benchmarks/Capture",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .target(
            name: "RingUnderTest",
            dependencies: [.product(name: "RTMixKit", package: rootPackage)],
            path: "Sources/RingUnderTest"
        ),
        .executableTarget(
            name: "Contention",
            dependencies: [
                "RingUnderTest",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Contention",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Render",
            dependencies: [
                "RenderCases",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            path: "Benchmarks/Render",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
