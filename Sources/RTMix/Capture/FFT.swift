import CRTMixSupport

/// Complex FFT of a fixed power-of-two size, on split real/imaginary
/// arrays. Twiddles (one contiguous run per stage) and the bit-reversal
/// table are computed once in `init` (allocates); the transforms never
/// allocate. The first two stages run as one 4-point pass without
/// multiplications that reads its input in bit-reversed order (so there is
/// no separate reordering pass; the transform is out of place:
/// `transform(from:…to:…)`, or in place through a copy to the FFT's own
/// work arrays); the others run two at a time (radix 4: one pass over the
/// data instead of two, three complex multiplications per four points
/// instead of four), four butterflies at a time (SIMD4), and a last radix-2
/// pass when the stage count is odd. Used by the delay estimator (a few
/// transforms per second) and the residual-echo suppressor (through
/// `RealFFT`, and one complex transform of two real signals per frame).
struct FFT: ~Copyable {
    let size: Int
    /// Twiddles of the stage with `half` butterflies per group start at
    /// index `half` (1 + 2 + … + half/2 = half − 1 before it): w_k =
    /// e^(−iπk/half) for k in 0..<half. Entry 0 is unused.
    let twiddleRe: UnsafeMutablePointer<Float>
    let twiddleIm: UnsafeMutablePointer<Float>
    /// reversal[s], s < size/4: s with its log2(size) bits reversed (a
    /// multiple of 4: the first output of the 4-point group whose inputs
    /// are s, s + size/2, s + size/4, s + 3·size/4).
    let reversal: UnsafeMutablePointer<Int32>
    /// `size` floats each: the input of the in-place transforms (a copy),
    /// or filled directly by `RealFFT.inverse`.
    let workRe: UnsafeMutablePointer<Float>
    let workIm: UnsafeMutablePointer<Float>

    /// Bytes this FFT allocated (engine memory accounting).
    let allocatedBytes: Int

    /// `size` must be a power of two ≥ 2. nil when an allocation fails.
    init?(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0)
        var batch = AllocationBatch()
        guard let c = batch.allocate(repeating: Float(0), count: size),
              let s = batch.allocate(repeating: Float(0), count: size),
              let r = batch.allocate(repeating: Int32(0), count: max(size / 4, 1)),
              let wr = batch.allocate(repeating: Float(0), count: size),
              let wi = batch.allocate(repeating: Float(0), count: size) else { return nil }
        self.size = size
        twiddleRe = c
        twiddleIm = s
        reversal = r
        workRe = wr
        workIm = wi
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
        // The reversed index walked incrementally (O(size)).
        var j = 0
        for i in 0..<size / 4 {
            r[i] = Int32(j)
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
        Allocation.free(reversal)
        Allocation.free(workRe)
        Allocation.free(workIm)
    }

    /// X[k] = Σ x[n]·e^(−2πikn/N), in place.
    @_noLocks
    func forward(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        transformForward(re, im)
    }

    /// x[n] = (1/N)·Σ X[k]·e^(+2πikn/N), in place.
    @_noLocks
    func inverse(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        transformInverse(re, im)
        scale(re, im, by: 1 / Float(size))
    }

    /// Multiplies `size` values of both arrays by `factor`.
    @_noLocks
    func scale(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, by factor: Float) {
        let n = size
        var i = 0
        while i &+ 4 <= n {
            (re + i).storeFloat4((re + i).loadFloat4() * factor)
            (im + i).storeFloat4((im + i).loadFloat4() * factor)
            i &+= 4
        }
        while i < n {
            re[i] *= factor
            im[i] *= factor
            i &+= 1
        }
    }

    /// The forward transform (e^(−2πikn/N)), unscaled, in place (through
    /// the work arrays).
    @_noLocks
    func transformForward(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        copyToWork(re, im)
        transform(from: workRe, workIm, to: re, im, forward: true)
    }

    /// The inverse transform (e^(+2πikn/N)), unscaled (N × the inverse
    /// DFT), in place (through the work arrays).
    @_noLocks
    func transformInverse(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        copyToWork(re, im)
        transform(from: workRe, workIm, to: re, im, forward: false)
    }

    /// The forward transform of `inRe`/`inIm` into `re`/`im` (unscaled;
    /// the input is left as it was; the arrays must not overlap).
    @_noLocks
    func transformForward(from inRe: UnsafePointer<Float>, _ inIm: UnsafePointer<Float>,
                          to re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        transform(from: inRe, inIm, to: re, im, forward: true)
    }

    /// The inverse transform (unscaled) of `inRe`/`inIm` into `re`/`im`
    /// (the arrays must not overlap).
    @_noLocks
    func transformInverse(from inRe: UnsafePointer<Float>, _ inIm: UnsafePointer<Float>,
                          to re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        transform(from: inRe, inIm, to: re, im, forward: false)
    }

    @_noLocks @inline(__always)
    func copyToWork(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        let n = size
        var i = 0
        while i &+ 4 <= n {
            (workRe + i).storeFloat4((re + i).loadFloat4())
            (workIm + i).storeFloat4((im + i).loadFloat4())
            i &+= 4
        }
        while i < n {
            workRe[i] = re[i]
            workIm[i] = im[i]
            i &+= 1
        }
    }

    @_noLocks @inline(__always)
    func transform(from inRe: UnsafePointer<Float>, _ inIm: UnsafePointer<Float>,
                   to re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, forward: Bool) {
        let n = size
        if n == 2 {
            let ar = inRe[0], ai = inIm[0], br = inRe[1], bi = inIm[1]
            re[0] = ar + br; im[0] = ai + bi
            re[1] = ar - br; im[1] = ai - bi
            return
        }
        firstPass(from: inRe, inIm, to: re, im, forward: forward)
        var half = 4
        // Two stages per pass (half, 2·half) while two are left.
        while half &* 4 <= n {
            radix4(re, im, half: half, forward: forward)
            half &*= 4
        }
        if half < n { radix2(re, im, half: half, forward: forward) }
    }

    /// Stages half = 1 and 2 as one 4-point transform per group (the
    /// twiddles are 1 and ∓i), reading the input in bit-reversed order:
    /// the group whose outputs start at reversal[s] takes x0…x3 from s,
    /// s + n/2, s + n/4, s + 3n/4. From n = 16 on, four groups at a time
    /// (s…s + 3: contiguous loads, one group per lane, transposed to
    /// store each group's four outputs together).
    @_noLocks @inline(__always)
    func firstPass(from inRe: UnsafePointer<Float>, _ inIm: UnsafePointer<Float>,
                   to re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, forward: Bool) {
        let n = size, q = n / 4, h = n / 2, q3 = 3 &* q
        if q >= 4 {
            var s = 0
            while s < q {
                let x0r = (inRe + s).loadFloat4(), x0i = (inIm + s).loadFloat4()
                let x1r = (inRe + (s &+ h)).loadFloat4(), x1i = (inIm + (s &+ h)).loadFloat4()
                let x2r = (inRe + (s &+ q)).loadFloat4(), x2i = (inIm + (s &+ q)).loadFloat4()
                let x3r = (inRe + (s &+ q3)).loadFloat4(), x3i = (inIm + (s &+ q3)).loadFloat4()
                let t0r = x0r + x1r, t0i = x0i + x1i, t1r = x0r - x1r, t1i = x0i - x1i
                let t2r = x2r + x3r, t2i = x2i + x3i, t3r = x2r - x3r, t3i = x2i - x3i
                let y0r = t0r + t2r, y0i = t0i + t2i, y2r = t0r - t2r, y2i = t0i - t2i
                let y1r: SIMD4<Float>, y1i: SIMD4<Float>, y3r: SIMD4<Float>, y3i: SIMD4<Float>
                if forward {  // t3·(−i) = (t3i, −t3r)
                    y1r = t1r + t3i; y1i = t1i - t3r
                    y3r = t1r - t3i; y3i = t1i + t3r
                } else {      // t3·(+i) = (−t3i, t3r)
                    y1r = t1r - t3i; y1i = t1i + t3r
                    y3r = t1r + t3i; y3i = t1i - t3r
                }
                // Lanes s + 1, s + 2, s + 3 reverse to reversal[s] + n/2,
                // + n/4, + 3n/4.
                let b0 = Int(reversal[s]), b1 = b0 &+ h, b2 = b0 &+ q, b3 = b0 &+ q3
                FFT.storeTransposed(re, b0, b1, b2, b3, y0r, y1r, y2r, y3r)
                FFT.storeTransposed(im, b0, b1, b2, b3, y0i, y1i, y2i, y3i)
                s &+= 4
            }
            return
        }
        for s in 0..<q {
            let x0r = inRe[s], x0i = inIm[s], x1r = inRe[s &+ h], x1i = inIm[s &+ h]
            let x2r = inRe[s &+ q], x2i = inIm[s &+ q], x3r = inRe[s &+ q3], x3i = inIm[s &+ q3]
            let t0r = x0r + x1r, t0i = x0i + x1i, t1r = x0r - x1r, t1i = x0i - x1i
            let t2r = x2r + x3r, t2i = x2i + x3i, t3r = x2r - x3r, t3i = x2i - x3i
            let a = Int(reversal[s])
            re[a] = t0r + t2r; im[a] = t0i + t2i
            re[a &+ 2] = t0r - t2r; im[a &+ 2] = t0i - t2i
            if forward {
                re[a &+ 1] = t1r + t3i; im[a &+ 1] = t1i - t3r
                re[a &+ 3] = t1r - t3i; im[a &+ 3] = t1i + t3r
            } else {
                re[a &+ 1] = t1r - t3i; im[a &+ 1] = t1i + t3r
                re[a &+ 3] = t1r + t3i; im[a &+ 3] = t1i - t3r
            }
        }
    }

    /// Lane l of y0…y3 to p[b_l], p[b_l + 1], p[b_l + 2], p[b_l + 3].
    @_noLocks @inline(__always)
    static func storeTransposed(_ p: UnsafeMutablePointer<Float>, _ b0: Int, _ b1: Int, _ b2: Int, _ b3: Int,
                                _ y0: SIMD4<Float>, _ y1: SIMD4<Float>, _ y2: SIMD4<Float>, _ y3: SIMD4<Float>) {
        var r0 = SIMD4<Float>(), r1 = SIMD4<Float>(), r2 = SIMD4<Float>(), r3 = SIMD4<Float>()
        _unsafePerformance { rtmix_support_transpose4(y0, y1, y2, y3, &r0, &r1, &r2, &r3) }
        (p + b0).storeFloat4(r0)
        (p + b1).storeFloat4(r1)
        (p + b2).storeFloat4(r2)
        (p + b3).storeFloat4(r3)
    }

    /// Stages `half` and `2·half` in one pass, four butterflies at a time.
    @_noLocks @inline(__always)
    func radix4(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, half h: Int, forward: Bool) {
        let n = size
        let w1re = twiddleRe + h, w1im = twiddleIm + h
        let w2re = twiddleRe + 2 &* h, w2im = twiddleIm + 2 &* h
        var start = 0
        while start < n {
            let ra = re + start, ia = im + start
            let rb = ra + h, ib = ia + h, rc = rb + h, ic = ib + h, rd = rc + h, id = ic + h
            var k = 0
            while k < h {
                let w1r = (w1re + k).loadFloat4(), w1i = (w1im + k).loadFloat4()
                let w2r = (w2re + k).loadFloat4(), w2i = (w2im + k).loadFloat4()
                let ar = (ra + k).loadFloat4(), ai = (ia + k).loadFloat4()
                let br = (rb + k).loadFloat4(), bi = (ib + k).loadFloat4()
                let cr = (rc + k).loadFloat4(), ci = (ic + k).loadFloat4()
                let dr = (rd + k).loadFloat4(), di = (id + k).loadFloat4()
                // Stage h: (a, b) and (c, d), twiddle w1 (conjugated inverse).
                let xbr: SIMD4<Float>, xbi: SIMD4<Float>, xdr: SIMD4<Float>, xdi: SIMD4<Float>
                if forward {
                    xbr = br * w1r - bi * w1i; xbi = br * w1i + bi * w1r
                    xdr = dr * w1r - di * w1i; xdi = dr * w1i + di * w1r
                } else {
                    xbr = br * w1r + bi * w1i; xbi = bi * w1r - br * w1i
                    xdr = dr * w1r + di * w1i; xdi = di * w1r - dr * w1i
                }
                let a1r = ar + xbr, a1i = ai + xbi, b1r = ar - xbr, b1i = ai - xbi
                let c1r = cr + xdr, c1i = ci + xdi, d1r = cr - xdr, d1i = ci - xdi
                // Stage 2h: (a, c) with w2, (b, d) with w2·(∓i).
                let xcr: SIMD4<Float>, xci: SIMD4<Float>, er: SIMD4<Float>, ei: SIMD4<Float>
                if forward {
                    xcr = c1r * w2r - c1i * w2i; xci = c1r * w2i + c1i * w2r
                    er = d1r * w2r - d1i * w2i; ei = d1r * w2i + d1i * w2r
                } else {
                    xcr = c1r * w2r + c1i * w2i; xci = c1i * w2r - c1r * w2i
                    er = d1r * w2r + d1i * w2i; ei = d1i * w2r - d1r * w2i
                }
                (ra + k).storeFloat4(a1r + xcr); (ia + k).storeFloat4(a1i + xci)
                (rc + k).storeFloat4(a1r - xcr); (ic + k).storeFloat4(a1i - xci)
                if forward {  // e·(−i) = (ei, −er)
                    (rb + k).storeFloat4(b1r + ei); (ib + k).storeFloat4(b1i - er)
                    (rd + k).storeFloat4(b1r - ei); (id + k).storeFloat4(b1i + er)
                } else {      // e·(+i) = (−ei, er)
                    (rb + k).storeFloat4(b1r - ei); (ib + k).storeFloat4(b1i + er)
                    (rd + k).storeFloat4(b1r + ei); (id + k).storeFloat4(b1i - er)
                }
                k &+= 4
            }
            start &+= 4 &* h
        }
    }

    /// One radix-2 stage, four butterflies at a time.
    @_noLocks @inline(__always)
    func radix2(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, half h: Int, forward: Bool) {
        let n = size
        let wre = twiddleRe + h, wim = twiddleIm + h
        var start = 0
        while start < n {
            let ra = re + start, ia = im + start, rb = ra + h, ib = ia + h
            var k = 0
            while k < h {
                let wr = (wre + k).loadFloat4(), wi = (wim + k).loadFloat4()
                let br = (rb + k).loadFloat4(), bi = (ib + k).loadFloat4()
                let ar = (ra + k).loadFloat4(), ai = (ia + k).loadFloat4()
                let xr: SIMD4<Float>, xi: SIMD4<Float>
                if forward {
                    xr = br * wr - bi * wi; xi = br * wi + bi * wr
                } else {
                    xr = br * wr + bi * wi; xi = bi * wr - br * wi
                }
                (rb + k).storeFloat4(ar - xr); (ib + k).storeFloat4(ai - xi)
                (ra + k).storeFloat4(ar + xr); (ia + k).storeFloat4(ai + xi)
                k &+= 4
            }
            start &+= 2 &* h
        }
    }
}

/// FFT of a real signal of `size` (a power of two ≥ 8) samples through a
/// complex FFT of half the size: the even samples go in the real part, the
/// odd ones in the imaginary part, and one pass over the bins separates
/// the two spectra and combines them (the usual real-FFT packing). Half
/// the work of a full-size complex transform of a real signal. `init`
/// allocates; the transforms do not.
///
/// Layout ("packed"): a signal x of `size` samples lives in two arrays of
/// at least `size/2 + 1` floats as re[m] = x[2m], im[m] = x[2m + 1]; its
/// spectrum X[0...size/2] (the rest is conjugate-symmetric) in the same
/// arrays as re[k] + i·im[k].
struct RealFFT: ~Copyable {
    /// Real samples per transform.
    let size: Int
    let fft: FFT
    /// e^(−2πik/size) for k in 0...size/4.
    let wRe: UnsafeMutablePointer<Float>
    let wIm: UnsafeMutablePointer<Float>
    let allocatedBytes: Int

    init?(size: Int) {
        precondition(size >= 8 && size & (size - 1) == 0)
        let quarter = size / 4
        var batch = AllocationBatch()
        guard let f = FFT(size: size / 2),
              let c = batch.allocate(repeating: Float(0), count: quarter + 1),
              let s = batch.allocate(repeating: Float(0), count: quarter + 1) else { return nil }
        for k in 0...quarter {
            let angle = -2 * Double.pi * Double(k) / Double(size)
            c[k] = Float(rtmix_support_cos(angle))
            s[k] = Float(rtmix_support_sin(angle))
        }
        self.size = size
        wRe = c
        wIm = s
        allocatedBytes = batch.commit() + f.allocatedBytes
        fft = consume f
    }

    deinit {
        Allocation.free(wRe)
        Allocation.free(wIm)
    }

    /// Packed signal in, its spectrum X[0...size/2] out (in place).
    @_noLocks
    func forward(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        fft.copyToWork(re, im)
        forward(from: fft.workRe, fft.workIm, to: re, im)
    }

    /// Packed signal in `inRe`/`inIm` (`size/2` floats each, left as they
    /// were), its spectrum X[0...size/2] out in `re`/`im` (arrays of at
    /// least `size/2 + 1` floats, not overlapping the input).
    @_noLocks
    func forward(from inRe: UnsafePointer<Float>, _ inIm: UnsafePointer<Float>,
                 to re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        let m = size / 2
        fft.transformForward(from: inRe, inIm, to: re, im)
        // Z = FFT(even + i·odd): EVEN[k] = (Z[k] + conj Z[m−k])/2,
        // ODD[k] = (Z[k] − conj Z[m−k])/2i; X[k] = EVEN[k] + w^k·ODD[k],
        // X[m−k] = conj(EVEN[k] − w^k·ODD[k]).
        let z0r = re[0], z0i = im[0]
        re[0] = z0r + z0i; im[0] = 0
        re[m] = z0r - z0i; im[m] = 0
        // Bins k…k+3 with m−k…m−k−3 (the upper four read and written in
        // reverse), while both groups stay below / above m/2.
        var k = 1
        while k &+ 4 < m / 2 {
            let c = m &- k &- 3
            let zkr = (re + k).loadFloat4(), zki = (im + k).loadFloat4()
            let zcr = RealFFT.reversed((re + c).loadFloat4()), zci = RealFFT.reversed((im + c).loadFloat4())
            let evr = 0.5 * (zkr + zcr), evi = 0.5 * (zki - zci)
            let odr = 0.5 * (zki + zci), odi = -0.5 * (zkr - zcr)
            let wr = (wRe + k).loadFloat4(), wi = (wIm + k).loadFloat4()
            let tr = wr * odr - wi * odi, ti = wr * odi + wi * odr
            (re + c).storeFloat4(RealFFT.reversed(evr - tr)); (im + c).storeFloat4(RealFFT.reversed(ti - evi))
            (re + k).storeFloat4(evr + tr); (im + k).storeFloat4(evi + ti)
            k &+= 4
        }
        while k <= m / 2 {
            let c = m &- k
            let zkr = re[k], zki = im[k], zcr = re[c], zci = im[c]
            let evr = 0.5 * (zkr + zcr), evi = 0.5 * (zki - zci)
            let odr = 0.5 * (zki + zci), odi = -0.5 * (zkr - zcr)
            let wr = wRe[k], wi = wIm[k]
            let tr = wr * odr - wi * odi, ti = wr * odi + wi * odr
            re[c] = evr - tr; im[c] = ti - evi
            re[k] = evr + tr; im[k] = evi + ti
            k &+= 1
        }
    }

    @_noLocks @inline(__always)
    static func reversed(_ v: SIMD4<Float>) -> SIMD4<Float> { SIMD4(v[3], v[2], v[1], v[0]) }

    /// Spectrum X[0...size/2] in (imaginary parts of bins 0 and size/2
    /// ignored), the packed signal x[n] = (1/size)·Σ X[k]·e^(2πikn/size)
    /// out (in place).
    @_noLocks
    func inverse(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        let m = size / 2
        // EVEN[k] = (X[k] + conj X[m−k])/2, ODD[k] = (X[k] − conj X[m−k])/2
        // · conj w^k; Z[k] = EVEN[k] + i·ODD[k] (Z[m−k] from the
        // conjugates), scaled by 1/m for the half-size inverse.
        let s = 0.5 / Float(m)
        // Z goes to the FFT's work arrays, the input of its out-of-place
        // transform back into re/im.
        let zr = fft.workRe, zi = fft.workIm
        let x0 = re[0], xm = re[m]
        zr[0] = s * (x0 + xm); zi[0] = s * (x0 - xm)
        var k = 1
        while k &+ 4 < m / 2 {
            let c = m &- k &- 3
            let xkr = (re + k).loadFloat4(), xki = (im + k).loadFloat4()
            let xcr = RealFFT.reversed((re + c).loadFloat4()), xci = RealFFT.reversed((im + c).loadFloat4())
            let evr = s * (xkr + xcr), evi = s * (xki - xci)
            let dr = s * (xkr - xcr), di = s * (xki + xci)
            let wr = (wRe + k).loadFloat4(), wi = (wIm + k).loadFloat4()
            let odr = dr * wr + di * wi, odi = di * wr - dr * wi
            (zr + c).storeFloat4(RealFFT.reversed(evr + odi)); (zi + c).storeFloat4(RealFFT.reversed(odr - evi))
            (zr + k).storeFloat4(evr - odi); (zi + k).storeFloat4(evi + odr)
            k &+= 4
        }
        while k <= m / 2 {
            let c = m &- k
            let xkr = re[k], xki = im[k], xcr = re[c], xci = im[c]
            let evr = s * (xkr + xcr), evi = s * (xki - xci)
            let dr = s * (xkr - xcr), di = s * (xki + xci)
            let wr = wRe[k], wi = wIm[k]
            let odr = dr * wr + di * wi, odi = di * wr - dr * wi
            zr[c] = evr + odi; zi[c] = odr - evi
            zr[k] = evr - odi; zi[k] = evi + odr
            k &+= 1
        }
        fft.transformInverse(from: zr, zi, to: re, im)
    }
}

extension UnsafeMutablePointer where Pointee == Float {
    @_noLocks @inline(__always)
    func loadFloat4() -> SIMD4<Float> { UnsafeRawPointer(self).loadUnaligned(as: SIMD4<Float>.self) }

    @_noLocks @inline(__always)
    func storeFloat4(_ v: SIMD4<Float>) { UnsafeMutableRawPointer(self).storeBytes(of: v, as: SIMD4<Float>.self) }
}

extension UnsafePointer where Pointee == Float {
    @_noLocks @inline(__always)
    func loadFloat4() -> SIMD4<Float> { UnsafeRawPointer(self).loadUnaligned(as: SIMD4<Float>.self) }
}
