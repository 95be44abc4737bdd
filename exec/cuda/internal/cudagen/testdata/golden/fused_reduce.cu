// launch loom_fused_sum_1e20432be3ff4b0c grid=[16 1 1] block=[64 4 1] shared=2048 args=[in0 in1 out]

extern "C" __global__ void loom_fused_sum_1e20432be3ff4b0c(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out)
{
    double* sv = (double*)loom_smem;
    const long long lane = (long long)threadIdx.x;
    const long long slot = (long long)threadIdx.y;
    for (long long w = blockIdx.x; w < 16LL; w += gridDim.x) {
        const long long o = w * 4LL + slot;
        double acc = 0.0;
        if (o < 64LL) {
            const long long b0 = o * 300LL;
            const long long b1 = o;
            for (long long r = lane; r < 300LL; r += 64LL) {
                const float a0 = in0[b0 + r];
                const float a1 = in1[b1];
                const float t0 = a0 * a1;
                const float t1 = expf(t0);
                acc += (double)t1;
            }
        }
        const long long me = slot * 64LL + lane;
        sv[me] = acc;
        __syncthreads();
        for (long long s = 32LL; s > 0; s >>= 1) {
            if (lane < s) {
                const double v = sv[me + s];
                acc = sv[me];
                acc += (double)v;
                sv[me] = acc;
            }
            __syncthreads();
        }
        if (lane == 0 && o < 64LL) {
            acc = sv[me];
            out[o] = (float)acc;
        }
        __syncthreads();
    }
}
