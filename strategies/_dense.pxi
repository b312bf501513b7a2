# One dense layer of the model in C (included by _learned.pyx): the sums of y = b + W x, vectorized.
# Two builds of the same code, one for AVX2 and one for any x86-64, chosen once by the CPU: the same
# products and sums in the same order in every lane, and no fused multiply-add (AVX2 does not
# include it), so the two give the same floats to the last bit (tests/strategies/test_dense.py) and
# records do not depend on the machine; AVX2 takes about half the instructions, which is what pays
# for a wider hidden layer at the same price (docs/strategies.md).

cdef extern from *:
    """
    /* y[i] = b[i] + sum over inputs j (in input order, zeros skipped) of w[j * n + i] * x[j]: the
       weights stored by input, so each input adds one column into all outputs at once. The inputs
       that are not 0 (most features are 0, and half a relu layer's outputs) are listed once; then
       the outputs go in blocks whose width is a constant (`width` is one after inlining), so a
       block's sums stay in vector registers across the listed inputs; outputs past the last whole
       block one at a time. Each output adds its terms in input order: the plain loop's result to
       the last bit, whatever the block or vector width. */
    #define PROTOLAB_DENSE_MAXIN 256
    typedef float protolab_v8 __attribute__((vector_size(32), aligned(4)));   /* 8 floats, any address */
    static inline __attribute__((always_inline)) void protolab_dense_block(
            float* __restrict y, const float* __restrict w, const float* __restrict b,
            const int* __restrict idx, const float* __restrict val, int m, int stride, const int width) {
        protolab_v8 acc[8];
        const int q = width / 8;
        for (int i = 0; i < q; i++) acc[i] = ((const protolab_v8*)b)[i];
        for (int k = 0; k < m; k++) {
            const protolab_v8* col = (const protolab_v8*)(w + idx[k] * stride);
            const float v = val[k];
            for (int i = 0; i < q; i++) acc[i] += col[i] * v;
        }
        for (int i = 0; i < q; i++) ((protolab_v8*)y)[i] = acc[i];
    }
    static inline __attribute__((always_inline)) void protolab_dense_body(
            float* __restrict y, const float* __restrict w, const float* __restrict b,
            const float* __restrict x, int nin, int n, const int wide) {
        int idx[PROTOLAB_DENSE_MAXIN];
        float val[PROTOLAB_DENSE_MAXIN];
        int m = 0, i0 = 0;
        for (int j = 0; j < nin; j++) {
            if (x[j] != 0) { idx[m] = j; val[m] = x[j]; m++; }
        }
        if (wide)
            for (; i0 + 64 <= n; i0 += 64) protolab_dense_block(y + i0, w + i0, b + i0, idx, val, m, n, 64);
        for (; i0 + 32 <= n; i0 += 32) protolab_dense_block(y + i0, w + i0, b + i0, idx, val, m, n, 32);
        for (; i0 + 2 <= n; i0 += 2) {      /* the rest two at a time (a value and a policy output) */
            float s0 = b[i0], s1 = b[i0 + 1];
            for (int k = 0; k < m; k++) {
                const float* col = w + idx[k] * n + i0;
                s0 += col[0] * val[k];
                s1 += col[1] * val[k];
            }
            y[i0] = s0;
            y[i0 + 1] = s1;
        }
        if (i0 < n) {
            float s0 = b[i0];
            for (int k = 0; k < m; k++) s0 += w[idx[k] * n + i0] * val[k];
            y[i0] = s0;
        }
    }
    typedef void (*protolab_dense_fn)(float*, const float*, const float*, const float*, int, int);
    static void protolab_dense_base(float* y, const float* w, const float* b, const float* x, int nin, int n) {
        protolab_dense_body(y, w, b, x, nin, n, 0);     /* 16 vector registers: blocks of 32 */
    }
    #if defined(__x86_64__) && defined(__GNUC__)
    #define PROTOLAB_DENSE_AVX2 1
    __attribute__((target("avx2")))
    static void protolab_dense_avx2(float* y, const float* w, const float* b, const float* x, int nin, int n) {
        protolab_dense_body(y, w, b, x, nin, n, 1);     /* 16 registers of 8 floats: blocks of 64 */
    }
    static int protolab_has_avx2(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx2"); }
    #else
    #define PROTOLAB_DENSE_AVX2 0
    static void protolab_dense_avx2(float* y, const float* w, const float* b, const float* x, int nin, int n) {
        protolab_dense_body(y, w, b, x, nin, n, 0);
    }
    static int protolab_has_avx2(void) { return 0; }
    #endif
    static protolab_dense_fn protolab_dense = protolab_dense_base;
    """
    ctypedef void (*dense_fn)(float* y, const float* w, const float* b, const float* x, int nin,
                              int n) noexcept nogil
    dense_fn dense_layer "protolab_dense"
    void dense_base "protolab_dense_base"(float* y, const float* w, const float* b, const float* x, int nin,
                                          int n) noexcept nogil
    void dense_avx2 "protolab_dense_avx2"(float* y, const float* w, const float* b, const float* x, int nin,
                                          int n) noexcept nogil
    int has_avx2 "protolab_has_avx2"() noexcept nogil
    int AVX2_BUILT "PROTOLAB_DENSE_AVX2"
    int DENSE_MAXIN "PROTOLAB_DENSE_MAXIN"

if MAXIN > DENSE_MAXIN:
    raise ImportError(f"strategies/_dense.pxi: a layer of up to {MAXIN} inputs, the C list holds {DENSE_MAXIN}")

# the build the model's layers run on (the CPU asked once) and the builds this machine can run
DENSE_BUILD = "avx2" if AVX2_BUILT and has_avx2() else "base"
DENSE_BUILDS = ("base", "avx2") if DENSE_BUILD == "avx2" else ("base",)
if DENSE_BUILD == "avx2":
    dense_layer = dense_avx2


def dense_builds() -> tuple[str, ...]:
    """The builds of the dense layer this machine can run ("base" always; "avx2" on a CPU with it)."""
    return DENSE_BUILDS


def dense(w, b, x, build: str = DENSE_BUILD):
    """y = b + W x by the named build (the tests compare them bit for bit): w [out][in], b [out],
    x [in], float32; at most MAXU outputs of MAXIN inputs, as a model layer."""
    cdef float[:, ::1] wt = np.ascontiguousarray(np.asarray(w, np.float32).T)
    cdef float[::1] bb = np.ascontiguousarray(b, np.float32)
    cdef float[::1] xx = np.ascontiguousarray(x, np.float32)
    cdef int n = wt.shape[1], nin = wt.shape[0]
    if build not in dense_builds():
        raise ValueError(f"dense layer build: expected one of {dense_builds()}, got {build!r}")
    if bb.shape[0] != n or xx.shape[0] != nin or not 1 <= n <= MAXU or not 1 <= nin <= MAXIN:
        raise ValueError(f"dense layer: weights {n}x{nin}, bias {bb.shape[0]}, input {xx.shape[0]}")
    out = np.zeros(n, np.float32)
    cdef float[::1] y = out
    (dense_avx2 if build == "avx2" else dense_base)(&y[0], &wt[0, 0], &bb[0], &xx[0], nin, n)
    return out
