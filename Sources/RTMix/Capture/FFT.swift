import CRTMixSupport

/// In-place radix-2 complex FFT of a fixed power-of-two size, on split
/// real/imaginary arrays. Twiddles (one contiguous run per stage) and the
/// bit-reversal swaps are computed once in `init` (allocates);
/// `forward`/`inverse` never allocate. The first two stages need no
/// multiplication; the others run four butterflies at a time (SIMD4).
/// Used by the delay estimator (a few transforms per second) and the
/// residual-echo suppressor (three per capture frame).
struct FFT: ~Copyable {
    let size: Int
    /// Twiddles of the stage with `half` butterflies per group start at
    /// index `half` (1 + 2 + … + half/2 = half − 1 before it): w_k =
    /// e^(−iπk/half) for k in 0..<half. Entry 0 is unused.
    let twiddleRe: UnsafeMutablePointer<Float>
    let twiddleIm: UnsafeMutablePointer<Float>
    /// Pairs (i, j), i < j, that the bit reversal swaps.
    let swaps: UnsafeMutablePointer<Int32>
    let swapCount: Int

    /// Bytes this FFT allocated (engine memory accounting).
    let allocatedBytes: Int

    /// `size` must be a power of two ≥ 2. nil when an allocation fails.
    init?(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0)
        // Bit-reversal pairs, counted by walking the reversed index
        // incrementally (O(size)).
        var pairs = 0
        var j = 0
        for i in 0..<size {
            if j > i { pairs += 1 }
            j = FFT.nextReversed(j, size: size)
        }
        var batch = AllocationBatch()
        guard let c = batch.allocate(repeating: Float(0), count: size),
              let s = batch.allocate(repeating: Float(0), count: size),
              let w = batch.allocate(repeating: Int32(0), count: max(2 * pairs, 1)) else { return nil }
        self.size = size
        twiddleRe = c
        twiddleIm = s
        swaps = w
        swapCount = pairs
        allocatedBytes = batch.commit()
        var half = 1
        while half < size {
            for k in 0..<half {
                let angle = -Double.pi * Double(k) / Double(half)
                c[half + k] = Float(rtmix_support_cos(angle))
                s[half + k] = Float(rtmix_support_sin(angle))
            }
            half *= 2
        }
        var p = 0
        j = 0
        for i in 0..<size {
            if j > i {
                w[2 * p] = Int32(i)
                w[2 * p + 1] = Int32(j)
                p += 1
            }
            j = FFT.nextReversed(j, size: size)
        }
    }

    /// The bit reversal of i + 1, given `r`, that of i (a reversed
    /// increment: carry from the top bit down).
    static func nextReversed(_ r: Int, size: Int) -> Int {
        var bit = size >> 1
        var r = r
        while bit > 0 && r & bit != 0 {
            r ^= bit
            bit >>= 1
        }
        return r | bit
    }

    deinit {
        Allocation.free(twiddleRe)
        Allocation.free(twiddleIm)
        Allocation.free(swaps)
    }

    /// X[k] = Σ x[n]·e^(−2πikn/N), in place.
    @_noLocks
    func forward(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        transform(re, im, sign: 1)
    }

    /// x[n] = (1/N)·Σ X[k]·e^(+2πikn/N), in place.
    @_noLocks
    func inverse(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        transform(re, im, sign: -1)
        let scale = 1 / Float(size)
        for i in 0..<size {
            re[i] *= scale
            im[i] *= scale
        }
    }

    @_noLocks
    func transform(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, sign: Float) {
        let n = size
        for p in 0..<swapCount {
            let i = Int(swaps[2 * p]), j = Int(swaps[2 * p + 1])
            let tr = re[i], ti = im[i]
            re[i] = re[j]; im[i] = im[j]
            re[j] = tr; im[j] = ti
        }
        // half = 1: w = 1.
        var a = 0
        while a < n {
            let xr = re[a + 1], xi = im[a + 1]
            re[a + 1] = re[a] - xr; im[a + 1] = im[a] - xi
            re[a] += xr; im[a] += xi
            a += 2
        }
        guard n >= 4 else { return }
        // half = 2: w = 1, then −i (forward) or +i (inverse).
        a = 0
        while a < n {
            var xr = re[a + 2], xi = im[a + 2]
            re[a + 2] = re[a] - xr; im[a + 2] = im[a] - xi
            re[a] += xr; im[a] += xi
            let b = a + 3
            xr = sign * im[b]
            xi = -sign * re[b]
            re[b] = re[a + 1] - xr; im[b] = im[a + 1] - xi
            re[a + 1] += xr; im[a + 1] += xi
            a += 4
        }
        var half = 4
        while half < n {
            let wre = twiddleRe + half, wim = twiddleIm + half
            var start = 0
            while start < n {
                var k = 0
                while k < half {
                    let wr = UnsafeRawPointer(wre + k).loadUnaligned(as: SIMD4<Float>.self)
                    let wi = sign * UnsafeRawPointer(wim + k).loadUnaligned(as: SIMD4<Float>.self)
                    let ia = start + k, ib = ia + half
                    let br = UnsafeRawPointer(re + ib).loadUnaligned(as: SIMD4<Float>.self)
                    let bi = UnsafeRawPointer(im + ib).loadUnaligned(as: SIMD4<Float>.self)
                    let ar = UnsafeRawPointer(re + ia).loadUnaligned(as: SIMD4<Float>.self)
                    let ai = UnsafeRawPointer(im + ia).loadUnaligned(as: SIMD4<Float>.self)
                    let xr = br * wr - bi * wi
                    let xi = br * wi + bi * wr
                    UnsafeMutableRawPointer(re + ib).storeBytes(of: ar - xr, as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(im + ib).storeBytes(of: ai - xi, as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(re + ia).storeBytes(of: ar + xr, as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(im + ia).storeBytes(of: ai + xi, as: SIMD4<Float>.self)
                    k += 4
                }
                start += half * 2
            }
            half *= 2
        }
    }
}
