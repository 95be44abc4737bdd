// launch loom_sum_part_78f82dc4789043f3 grid=[64 1 1] block=[256 1 1] shared=2048 args=[in0 scratch]
// launch loom_sum_final_6f3ad13c5b69f008 grid=[1 1 1] block=[64 1 1] shared=512 args=[scratch out]
// scratch 512 bytes

extern "C" __global__ void loom_sum_part_78f82dc4789043f3(const float* __restrict__ in0, unsigned char* __restrict__ scratch)
{
    double* sv = (double*)loom_smem;
    const long long lane = (long long)threadIdx.x;
    const long long slot = (long long)threadIdx.y;
    for (long long w = blockIdx.x; w < 64LL; w += gridDim.x) {
        const long long part = w % 64LL;
        const long long o = (w / 64LL) * 1LL + slot;
        double acc = 0.0;
        if (o < 1LL) {
            const long long rbeg = part * 4096LL;
            const long long rend = rbeg + 4096LL < 262144LL ? rbeg + 4096LL : 262144LL;
            for (long long r = rbeg + lane; r < rend; r += 256LL) {
                const float a0 = in0[r];
                acc += (double)a0;
            }
        }
        const long long me = slot * 256LL + lane;
        sv[me] = acc;
        __syncthreads();
        for (long long s = 128LL; s > 0; s >>= 1) {
            if (lane < s) {
                const double v = sv[me + s];
                acc = sv[me];
                acc += (double)v;
                sv[me] = acc;
            }
            __syncthreads();
        }
        if (lane == 0 && o < 1LL) {
            acc = sv[me];
            ((double*)scratch)[o * 64LL + part] = acc;
        }
        __syncthreads();
    }
}

extern "C" __global__ void loom_sum_final_6f3ad13c5b69f008(const unsigned char* __restrict__ scratch, float* __restrict__ out)
{
    double* sv = (double*)loom_smem;
    const long long lane = (long long)threadIdx.x;
    const long long slot = (long long)threadIdx.y;
    for (long long w = blockIdx.x; w < 1LL; w += gridDim.x) {
        const long long o = w;
        double acc = 0.0;
        if (o < 1LL) {
            for (long long r = lane; r < 64LL; r += 64LL) {
                const double v = ((const double*)scratch)[r];
                acc += (double)v;
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
        if (lane == 0 && o < 1LL) {
            acc = sv[me];
            out[o] = (float)acc;
        }
        __syncthreads();
    }
}
