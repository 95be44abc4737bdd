// launch loom_sum_ee8fff7d90ddec5c grid=[32 1 1] block=[128 2 1] shared=2048 args=[in0 out]

extern "C" __global__ void loom_sum_ee8fff7d90ddec5c(const float* __restrict__ in0, float* __restrict__ out)
{
    double* sv = (double*)loom_smem;
    const long long lane = (long long)threadIdx.x;
    const long long slot = (long long)threadIdx.y;
    for (long long w = blockIdx.x; w < 32LL; w += gridDim.x) {
        const long long o = w * 2LL + slot;
        double acc = 0.0;
        if (o < 64LL) {
            const long long b0 = o * 1000LL;
            for (long long r = lane; r < 1000LL; r += 128LL) {
                const float a0 = in0[b0 + r];
                acc += (double)a0;
            }
        }
        const long long me = slot * 128LL + lane;
        sv[me] = acc;
        __syncthreads();
        for (long long s = 64LL; s > 0; s >>= 1) {
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
