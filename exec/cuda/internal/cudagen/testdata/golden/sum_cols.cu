// launch loom_sum_part_4c622f2233dbafc9 grid=[16 1 1] block=[32 8 1] shared=2048 args=[in0 scratch]
// launch loom_sum_final_e3fa178cb304c52c grid=[1 1 1] block=[64 1 1] shared=0 args=[scratch out]
// scratch 4096 bytes

extern "C" __global__ void loom_sum_part_4c622f2233dbafc9(const float* __restrict__ in0, unsigned char* __restrict__ scratch)
{
    double* sv = (double*)loom_smem;
    const long long lane = (long long)threadIdx.y;
    const long long slot = (long long)threadIdx.x;
    for (long long w = blockIdx.x; w < 16LL; w += gridDim.x) {
        const long long part = w % 8LL;
        const long long o = (w / 8LL) * 32LL + slot;
        double acc = 0.0;
        if (o < 64LL) {
            const long long b0 = o;
            const long long rbeg = part * 125LL;
            const long long rend = rbeg + 125LL < 1000LL ? rbeg + 125LL : 1000LL;
            for (long long r = rbeg + lane; r < rend; r += 8LL) {
                const float a0 = in0[b0 + r * 64LL];
                acc += (double)a0;
            }
        }
        const long long me = lane * 32LL + slot;
        sv[me] = acc;
        __syncthreads();
        for (long long s = 4LL; s > 0; s >>= 1) {
            if (lane < s) {
                const double v = sv[me + s * 32LL];
                acc = sv[me];
                acc += (double)v;
                sv[me] = acc;
            }
            __syncthreads();
        }
        if (lane == 0 && o < 64LL) {
            acc = sv[me];
            ((double*)scratch)[o * 8LL + part] = acc;
        }
        __syncthreads();
    }
}

extern "C" __global__ void loom_sum_final_e3fa178cb304c52c(const unsigned char* __restrict__ scratch, float* __restrict__ out)
{
    const long long lane = 0;
    const long long slot = (long long)threadIdx.x;
    for (long long w = blockIdx.x; w < 1LL; w += gridDim.x) {
        const long long o = w * 64LL + slot;
        double acc = 0.0;
        if (o < 64LL) {
            const long long b0 = o * 8LL;
            for (long long r = lane; r < 8LL; r += 1LL) {
                const double v = ((const double*)scratch)[b0 + r];
                acc += (double)v;
            }
        }
        if (o < 64LL) {
            out[o] = (float)acc;
        }
    }
}
