// RenderCount CASE ITERATIONS
//
// Builds one benchmark case (see RenderCases), then runs ITERATIONS 10 ms
// callbacks: feed() (unmeasured) then measuredRender(). scripts/bench-callgrind
// runs this under `valgrind --tool=callgrind --toggle-collect=rendercount_measured_render`
// so only the render callbacks are counted: setup, warm-up and feeding are not.
import RenderCases

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The only function callgrind collects in. Never inlined, and with a plain
/// (unmangled) symbol name so `--toggle-collect` can name it exactly.
@inline(never) @_silgen_name("rendercount_measured_render")
func measuredRender(_ c: any RenderCase) {
    c.render()
}

let args = CommandLine.arguments
guard args.count == 3, let name = CaseName(rawValue: args[1]), let iterations = Int(args[2]), iterations >= 0 else {
    let names = CaseName.allCases.map(\.rawValue).joined(separator: "|")
    print("usage: RenderCount <\(names)> <iterations>")
    exit(64)
}

let c: any RenderCase
do {
    c = try makeCase(name)
} catch {
    print("RenderCount: cannot build case \(name.rawValue): \(error)")
    exit(1)
}

for _ in 0..<iterations {
    c.feed()
    measuredRender(c)
}

// Keep the output observable and check the case stayed healthy.
var sum: Float = 0
for x in c.output { sum += x.magnitude }
if let p = c.problems() {
    print("RenderCount \(name.rawValue): PROBLEM: \(p)")
    exit(2)
}
print("RenderCount \(name.rawValue): \(iterations) callbacks, last |sum| \(sum)")
