# A network's layers (included by _learned.pyx and _qlearned.pyx): the activations' codes, a layer's
# activation in C, and the copy of a model's (weights [out][in], bias, activation) layers into a
# network struct, the weights stored by input (w[l][j * nout + i]: what dense_layer reads).

cdef enum:
    ACT_RELU = 0
    ACT_TANH = 1
    ACT_LINEAR = 2

ACTIVATION_CODES = {"relu": ACT_RELU, "tanh": ACT_TANH, "linear": ACT_LINEAR}


cdef inline void activate(int act, const float* y, float* x, int n) noexcept nogil:
    """x = act(y), n outputs."""
    cdef int i
    if act == ACT_RELU:
        for i in range(n):
            x[i] = y[i] if y[i] > 0 else 0
    elif act == ACT_TANH:
        for i in range(n):
            x[i] = tanh(y[i])
    else:
        for i in range(n):
            x[i] = y[i]


cdef int copy_layers(int32_t* nl, int32_t* nin, int32_t* nout, int32_t* act, float* w, int wrow, float* b,
                     layers, int maxin) except -1:
    """Copy layers into a network's arrays: layer l's weights at w + l * wrow, its bias at b + l * MAXU;
    at most MAXL layers of MAXU units of maxin inputs."""
    cdef int l, i, j
    if not 1 <= len(layers) <= MAXL:
        raise ValueError(f"a model of 1..{MAXL} layers, got {len(layers)}")
    nl[0] = len(layers)
    for l, (lw, lb, a) in enumerate(layers):
        lw = np.ascontiguousarray(lw, np.float32)
        if lw.shape[0] > MAXU or lw.shape[1] > maxin:
            raise ValueError(f"layer {l}: at most {MAXU} units of {maxin} inputs, got {lw.shape}")
        nout[l] = lw.shape[0]
        nin[l] = lw.shape[1]
        act[l] = ACTIVATION_CODES[a]
        for i in range(lw.shape[0]):
            b[l * MAXU + i] = lb[i]
            for j in range(lw.shape[1]):
                w[l * wrow + j * lw.shape[0] + i] = lw[i, j]
    return 0
