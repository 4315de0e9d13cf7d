// CaptureCount CASE ITERATIONS
//
// Builds one capture benchmark case (see CaptureCases; setup and 300 warm-up
// blocks), then runs ITERATIONS 10 ms blocks: prepare() (unmeasured: for the
// engine, push + render of the far end) then measuredCapture().
// scripts/bench-callgrind-capture runs this under
// `valgrind --tool=callgrind --toggle-collect=capturecount_measured_capture`
// so only the capture calls are counted.
import CaptureCases

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The only function callgrind collects in. Never inlined, and with a plain
/// (unmangled) symbol name so `--toggle-collect` can name it exactly.
@inline(never) @_silgen_name("capturecount_measured_capture")
func measuredCapture(_ c: any CaptureCase) {
    c.capture()
}

let args = CommandLine.arguments
guard args.count == 3, let name = CaptureCaseName(rawValue: args[1]), let iterations = Int(args[2]), iterations >= 0
else {
    let names = CaptureCaseName.allCases.map(\.rawValue).joined(separator: "|")
    print("usage: CaptureCount <\(names)> <iterations>")
    exit(64)
}

let c: any CaptureCase
do {
    c = try makeCaptureCase(name)
} catch {
    print("CaptureCount: cannot build case \(name.rawValue): \(error)")
    exit(1)
}

for _ in 0..<iterations {
    c.prepare()
    measuredCapture(c)
}
c.prepare()  // accounts the last block's powers

if let p = c.problems() {
    print("CaptureCount \(name.rawValue): PROBLEM: \(p)")
    print("CaptureCount \(name.rawValue): \(c.summary())")
    exit(2)
}
print("CaptureCount \(name.rawValue): \(iterations) capture calls, last |sum| \(c.outputChecksum()); \(c.summary())")
