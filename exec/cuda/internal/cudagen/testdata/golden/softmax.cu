// launch loom_softmax_4d1e7416746bfb0f grid=[16 1 1] block=[128 2 1] shared=2048 args=[in0 out]

extern "C" __global__ void loom_softmax_4d1e7416746bfb0f(const float* __restrict__ in0, float* __restrict__ out)
{
    float* sm = (float*)loom_smem;
    double* ss = (double*)loom_smem;
    const long long lane = (long long)threadIdx.x;
    const long long slot = (long long)threadIdx.y;
    const long long me = slot * 128LL + lane;
    for (long long w = blockIdx.x; w < 16LL; w += gridDim.x) {
        const long long line = w * 2LL + slot;
        const bool live = line < 32LL;
        const long long base = line * 1000LL;
        float m = -loom_inf_f32();
        if (live) {
            for (long long a = lane; a < 1000LL; a += 128LL) {
                const float v = in0[base + a];
                if (loom_gt_f32(v, m)) m = v;
            }
        }
        sm[me] = m;
        __syncthreads();
        for (long long s = 64LL; s > 0; s >>= 1) {
            if (lane < s) {
                const float v = sm[me + s];
                if (loom_gt_f32(v, sm[me])) sm[me] = v;
            }
            __syncthreads();
        }
        m = sm[slot * 128LL];
        __syncthreads();
        double sum = 0.0;
        if (live) {
            for (long long a = lane; a < 1000LL; a += 128LL) {
                sum += (double)expf(in0[base + a] - m);
            }
        }
        ss[me] = sum;
        __syncthreads();
        for (long long s = 64LL; s > 0; s >>= 1) {
            if (lane < s) ss[me] += ss[me + s];
            __syncthreads();
        }
        sum = ss[slot * 128LL];
        __syncthreads();
        if (live) {
            const float inv = (float)(1.0 / sum);
            for (long long a = lane; a < 1000LL; a += 128LL) {
                out[base + a] = expf(in0[base + a] - m) * inv;
            }
        }
    }
}
