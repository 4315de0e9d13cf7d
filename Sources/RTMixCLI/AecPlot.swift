import Foundation

/// `rtmix-cli aec --plot FILE.svg`: the picture `scripts/aec-eval` draws next
/// to its tables, for a user's own recording. Two panels, time across:
/// 1. ERLE per second: measured (microphone power over output power in that
///    second, as printed) and the engine's own statistic.
/// 2. Levels per 20 ms frame: the microphone and the output, with the frames
///    where the engine saw near-end talk shaded. With `--talker CLEAN.wav`
///    (the near-end talker alone, as a lab rig records it) the panel shows
///    the talker instead of the microphone and marks its *muted* frames:
///    active (within 25 dB of its mean active level) and the output more
///    than 10 dB below it, the evaluation's definition (without its
///    far-end condition: the plot does not know the echo alone).
/// Plain SVG, no dependencies.
struct AecPlot {
    static let frameSeconds = 0.02

    /// Per second: end time (s), measured and engine ERLE (dB).
    var seconds: [(t: Double, erle: Double, engine: Double)] = []
    /// Per 20 ms frame: mean power of the microphone, the output, and the
    /// clean talker (when given); the engine's double-talk flag.
    var mic: [Double] = []
    var out: [Double] = []
    var talker: [Double]?
    var doubleTalk: [Bool] = []

    /// The talker's muted frames (see the type's comment): indices, the
    /// active frames counted, and the longest run of muted frames among the
    /// active ones (frames not active neither extend nor break a run, as in
    /// `scripts/aec-eval`). Empty without a talker.
    func mutedFrames() -> (muted: [Int], active: Int, longest: Int) {
        guard let talker else { return ([], 0, 0) }
        let n = min(talker.count, out.count)
        let loud = talker.prefix(n).max() ?? 0
        let activeLevels = talker.prefix(n).filter { $0 > loud * 1e-4 }
        guard !activeLevels.isEmpty else { return ([], 0, 0) }
        let level = activeLevels.reduce(0, +) / Double(activeLevels.count)
        var muted: [Int] = []
        var active = 0, run = 0, longest = 0
        for k in 0..<n where talker[k] > level * pow(10, -25.0 / 10) {
            active += 1
            if out[k] < 0.1 * talker[k] {
                muted.append(k)
                run += 1
                longest = max(longest, run)
            } else {
                run = 0
            }
        }
        return (muted, active, longest)
    }

    func svg(title: String) -> String {
        let width = 1000.0, panel = 260.0, left = 60.0, right = 20.0, top = 40.0, gap = 50.0
        let duration = max(seconds.last?.t ?? 0, Double(out.count) * AecPlot.frameSeconds, 1)
        func x(_ t: Double) -> Double { left + (width - left - right) * t / duration }
        func y(_ v: Double, _ lo: Double, _ hi: Double, _ y0: Double) -> Double {
            y0 + panel * (1 - (min(max(v, lo), hi) - lo) / (hi - lo))
        }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        func dbfs(_ p: Double) -> Double { p > 0 ? 10 * log10(p) : -200 }
        var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(top + 2 * panel + gap + 40))" \
        font-family="sans-serif" font-size="11">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(f(left))" y="20" font-size="13">\(AecPlot.escape(title))</text>

        """
        let (muted, active, _) = mutedFrames()
        // Axes and grid for both panels.
        let panels: [(y0: Double, lo: Double, hi: Double, step: Double, label: String)] = [
            (top, 0, 100, 20, "ERLE per second (dB)"),
            (top + panel + gap, -90, 0, 15,
             talker == nil ? "level per 20 ms (dBFS): mic, out; shaded: engine double talk"
                 : "level per 20 ms (dBFS): talker, out; shaded: engine double talk; red: talker muted "
                   + "(\(muted.count) of \(active) active frames, \(f(100 * Double(muted.count) / Double(max(active, 1)))) %)"),
        ]
        for (i, p) in panels.enumerated() {
            s += "<g class=\"panel\" id=\"panel\(i + 1)\">\n"
            s += "<text x=\"\(f(left))\" y=\"\(f(p.y0 - 6))\">\(AecPlot.escape(p.label))</text>\n"
            var v = p.lo
            while v <= p.hi + 1e-9 {
                let yy = y(v, p.lo, p.hi, p.y0)
                s += "<line x1=\"\(f(left))\" x2=\"\(f(width - right))\" y1=\"\(f(yy))\" y2=\"\(f(yy))\" stroke=\"#ddd\"/>"
                s += "<text x=\"\(f(left - 6))\" y=\"\(f(yy + 4))\" text-anchor=\"end\">\(Int(v))</text>\n"
                v += p.step
            }
            var t = 0.0
            let tick = duration > 60 ? 10.0 : duration > 20 ? 5.0 : 1.0
            while t <= duration + 1e-9 {
                s += "<text x=\"\(f(x(t)))\" y=\"\(f(p.y0 + panel + 14))\" text-anchor=\"middle\">\(Int(t)) s</text>\n"
                t += tick
            }
            s += "</g>\n"
        }
        // Panel 2: double-talk shading first, under the curves.
        let y2 = panels[1].y0
        var k = 0
        while k < doubleTalk.count {
            if doubleTalk[k] {
                var e = k
                while e < doubleTalk.count && doubleTalk[e] { e += 1 }
                let x0 = x(Double(k) * AecPlot.frameSeconds), x1 = x(Double(e) * AecPlot.frameSeconds)
                s += "<rect class=\"doubletalk\" x=\"\(f(x0))\" y=\"\(f(y2))\" width=\"\(f(max(x1 - x0, 0.5)))\" height=\"\(f(panel))\" fill=\"#fde8c8\"/>\n"
                k = e
            } else {
                k += 1
            }
        }
        func polyline(_ id: String, _ points: [(Double, Double)], _ color: String) -> String {
            let pts = points.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
            return "<polyline id=\"\(id)\" data-points=\"\(points.count)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1\" points=\"\(pts)\"/>\n"
        }
        s += polyline("erle", seconds.map { (x($0.t - 0.5), y($0.erle, 0, 100, top)) }, "#1f77b4")
        s += polyline("engine-erle", seconds.map { (x($0.t - 0.5), y($0.engine, 0, 100, top)) }, "#aaa")
        let first = talker ?? mic
        s += polyline(talker == nil ? "mic" : "talker",
                      first.indices.map { (x((Double($0) + 0.5) * AecPlot.frameSeconds), y(dbfs(first[$0]), -90, 0, y2)) },
                      "#2ca02c")
        s += polyline("out", out.indices.map { (x((Double($0) + 0.5) * AecPlot.frameSeconds), y(dbfs(out[$0]), -90, 0, y2)) },
                      "#1f77b4")
        if let talker {
            for m in muted {
                s += "<circle class=\"muted\" cx=\"\(f(x((Double(m) + 0.5) * AecPlot.frameSeconds)))\" "
                    + "cy=\"\(f(y(dbfs(talker[m]), -90, 0, y2)))\" r=\"2\" fill=\"red\"/>\n"
            }
        }
        // Legend.
        let ly = top + 2 * panel + gap + 32
        let legend: [(String, String)] = [("#1f77b4", "ERLE / output"), ("#aaa", "engine ERLE statistic"),
                                          ("#2ca02c", talker == nil ? "microphone" : "talker (clean)")]
        var lx = left
        for (color, name) in legend {
            s += "<line x1=\"\(f(lx))\" x2=\"\(f(lx + 20))\" y1=\"\(f(ly - 4))\" y2=\"\(f(ly - 4))\" stroke=\"\(color)\" stroke-width=\"2\"/>"
            s += "<text x=\"\(f(lx + 25))\" y=\"\(f(ly))\">\(name)</text>\n"
            lx += 180
        }
        s += "</svg>\n"
        return s
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
