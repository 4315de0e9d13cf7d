import Glibc

/// A small radix-2 complex FFT (Double, in place, split real/imaginary
/// arrays) and an FFT overlap-add convolution built on it. Written for test
/// signals: unsafe pointers in the inner loops keep debug builds usable.
public struct FFT {
    public let size: Int
    private let log2Size: Int
    private var cosTable: [Double]
    private var sinTable: [Double]
    private var bitReverse: [Int]

    /// `size` must be a power of two (at least 2).
    public init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        var bits = 0
        while 1 << bits < size { bits += 1 }
        log2Size = bits
        cosTable = (0..<size / 2).map { cos(-2 * Double.pi * Double($0) / Double(size)) }
        sinTable = (0..<size / 2).map { sin(-2 * Double.pi * Double($0) / Double(size)) }
        bitReverse = (0..<size).map { i in
            var r = 0, v = i
            for _ in 0..<bits { r = (r << 1) | (v & 1); v >>= 1 }
            return r
        }
    }

    /// Forward (e^{-i...}) transform, or the inverse scaled by 1/size.
    public func transform(real: inout [Double], imag: inout [Double], inverse: Bool = false) {
        precondition(real.count == size && imag.count == size)
        let n = size
        real.withUnsafeMutableBufferPointer { re in
            imag.withUnsafeMutableBufferPointer { im in
                cosTable.withUnsafeBufferPointer { ct in
                    sinTable.withUnsafeBufferPointer { st in
                        bitReverse.withUnsafeBufferPointer { br in
                            let re = re.baseAddress!, im = im.baseAddress!
                            let ct = ct.baseAddress!, st = st.baseAddress!
                            for i in 0..<n {
                                let j = br[i]
                                if j > i {
                                    let tr = re[i]; re[i] = re[j]; re[j] = tr
                                    let ti = im[i]; im[i] = im[j]; im[j] = ti
                                }
                            }
                            let sign: Double = inverse ? -1 : 1
                            var half = 1
                            while half < n {
                                let step = n / (2 * half)
                                var start = 0
                                while start < n {
                                    var k = 0
                                    for m in 0..<half {
                                        let wr = ct[k], wi = sign * st[k]
                                        let a = start + m, b = a + half
                                        let xr = re[b] * wr - im[b] * wi
                                        let xi = re[b] * wi + im[b] * wr
                                        re[b] = re[a] - xr; im[b] = im[a] - xi
                                        re[a] += xr; im[a] += xi
                                        k += step
                                    }
                                    start += 2 * half
                                }
                                half *= 2
                            }
                            if inverse {
                                let scale = 1 / Double(n)
                                for i in 0..<n { re[i] *= scale; im[i] *= scale }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The smallest power of two that is at least `n`.
    public static func size(atLeast n: Int) -> Int {
        var s = 2
        while s < n { s <<= 1 }
        return s
    }
}

/// Linear convolution of `x` with `h` by FFT overlap-add; returns the first
/// `x.count + h.count - 1` samples (or `outputCount` when given).
public func fftConvolve(_ x: [Float], _ h: [Float], outputCount: Int? = nil) -> [Float] {
    let full = x.count + h.count - 1
    let count = outputCount ?? full
    guard !x.isEmpty, !h.isEmpty, count > 0 else { return [Float](repeating: 0, count: max(0, count)) }
    let block = max(h.count, 4096)
    let fft = FFT(size: FFT.size(atLeast: block + h.count - 1))
    let n = fft.size
    var hr = [Double](repeating: 0, count: n), hi = [Double](repeating: 0, count: n)
    for i in 0..<h.count { hr[i] = Double(h[i]) }
    fft.transform(real: &hr, imag: &hi)
    var out = [Double](repeating: 0, count: count)
    var xr = [Double](repeating: 0, count: n), xi = [Double](repeating: 0, count: n)
    var start = 0
    while start < x.count && start < count {
        let len = min(block, x.count - start)
        for i in 0..<n { xr[i] = i < len ? Double(x[start + i]) : 0; xi[i] = 0 }
        fft.transform(real: &xr, imag: &xi)
        for k in 0..<n {
            let r = xr[k] * hr[k] - xi[k] * hi[k]
            let i = xr[k] * hi[k] + xi[k] * hr[k]
            xr[k] = r; xi[k] = i
        }
        fft.transform(real: &xr, imag: &xi, inverse: true)
        let end = min(count, start + len + h.count - 1)
        out.withUnsafeMutableBufferPointer { o in
            xr.withUnsafeBufferPointer { y in
                for i in start..<end { o[i] += y[i - start] }
            }
        }
        start += block
    }
    return out.map { Float($0) }
}
