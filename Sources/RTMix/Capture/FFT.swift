import CRTMixSupport

/// In-place radix-2 complex FFT of a fixed power-of-two size, on split
/// real/imaginary arrays. Twiddles and the bit-reversal permutation are
/// computed once in `init` (allocates); `forward`/`inverse` never allocate.
/// Used by the delay estimator (a few transforms per second).
@usableFromInline
struct FFT: ~Copyable {
    @usableFromInline let size: Int
    @usableFromInline let cosTable: UnsafeMutablePointer<Float>
    @usableFromInline let sinTable: UnsafeMutablePointer<Float>
    @usableFromInline let bitReverse: UnsafeMutablePointer<Int32>

    /// Bytes this FFT allocated (engine memory accounting).
    let allocatedBytes: Int

    /// `size` must be a power of two ≥ 2. nil when an allocation fails.
    init?(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0)
        var batch = AllocationBatch()
        guard let c = batch.allocate(repeating: Float(0), count: size / 2),
              let s = batch.allocate(repeating: Float(0), count: size / 2),
              let b = batch.allocate(repeating: Int32(0), count: size) else { return nil }
        self.size = size
        cosTable = c
        sinTable = s
        bitReverse = b
        allocatedBytes = batch.commit()
        for i in 0..<size / 2 {
            let angle = -2 * Double.pi * Double(i) / Double(size)
            cosTable[i] = Float(rtmix_support_cos(angle))
            sinTable[i] = Float(rtmix_support_sin(angle))
        }
        var bits = 0
        while 1 << bits < size { bits += 1 }
        for i in 0..<size {
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            bitReverse[i] = Int32(r)
        }
    }

    deinit {
        Allocation.free(cosTable)
        Allocation.free(sinTable)
        Allocation.free(bitReverse)
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
        for i in 0..<n {
            let j = Int(bitReverse[i])
            if j > i {
                let tr = re[i], ti = im[i]
                re[i] = re[j]; im[i] = im[j]
                re[j] = tr; im[j] = ti
            }
        }
        var half = 1
        while half < n {
            let stride = n / (half * 2)
            var start = 0
            while start < n {
                for k in 0..<half {
                    let wr = cosTable[k * stride]
                    let wi = sign * sinTable[k * stride]
                    let a = start + k
                    let b = a + half
                    let xr = re[b] * wr - im[b] * wi
                    let xi = re[b] * wi + im[b] * wr
                    re[b] = re[a] - xr
                    im[b] = im[a] - xi
                    re[a] += xr
                    im[a] += xi
                }
                start += half * 2
            }
            half *= 2
        }
    }
}
