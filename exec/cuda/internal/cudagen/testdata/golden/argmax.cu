// launch loom_argmax_999dce7464019b8f grid=[8 1 1] block=[64 4 1] shared=3072 args=[in0 out]

extern "C" __global__ void loom_argmax_999dce7464019b8f(const float* __restrict__ in0, long long* __restrict__ out)
{
    float* sv = (float*)loom_smem;
    long long* si = (long long*)(loom_smem + 1024);
    const long long lane = (long long)threadIdx.x;
    const long long slot = (long long)threadIdx.y;
    for (long long w = blockIdx.x; w < 8LL; w += gridDim.x) {
        const long long o = w * 4LL + slot;
        float acc = -loom_inf_f32();
        long long aidx = 9223372036854775807LL;
        if (o < 32LL) {
            const long long b0 = o * 500LL;
            for (long long r = lane; r < 500LL; r += 64LL) {
                const float a0 = in0[b0 + r];
                if (loom_gt_f32(a0, acc) || (!(loom_gt_f32(acc, a0)) && r < aidx)) {
                    acc = a0;
                    aidx = r;
                }
            }
        }
        const long long me = slot * 64LL + lane;
        sv[me] = acc;
        si[me] = aidx;
        __syncthreads();
        for (long long s = 32LL; s > 0; s >>= 1) {
            if (lane < s) {
                const float v = sv[me + s];
                const long long vi = si[me + s];
                acc = sv[me];
                aidx = si[me];
                if (loom_gt_f32(v, acc) || (!(loom_gt_f32(acc, v)) && vi < aidx)) {
                    acc = v;
                    aidx = vi;
                }
                sv[me] = acc;
                si[me] = aidx;
            }
            __syncthreads();
        }
        if (lane == 0 && o < 32LL) {
            acc = sv[me];
            aidx = si[me];
            out[o] = aidx;
        }
        __syncthreads();
    }
}
