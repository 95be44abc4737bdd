// launch loom_conv_direct_dd07a7ff2e7aaca6 grid=[64 1 1] block=[256 1 1] shared=0 args=[in0 in1 out]

extern "C" __global__ void loom_conv_direct_dd07a7ff2e7aaca6(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out)
{
    const long long lane = 0;
    const long long slot = (long long)threadIdx.x;
    for (long long w = blockIdx.x; w < 64LL; w += gridDim.x) {
        const long long o = w * 256LL + slot;
        double acc = 0.0;
        if (o < 16384LL) {
            long long kq = o;
            const long long k3 = kq % 16LL;
            kq /= 16LL;
            const long long k2 = kq % 16LL;
            kq /= 16LL;
            const long long k1 = kq % 16LL;
            kq /= 16LL;
            const long long b0 = kq * 4096LL + k1 * 256LL;
            const long long b1 = k1 * 9LL;
            const long long b2 = k2;
            const long long b3 = k3;
            for (long long r = lane; r < 9LL; r += 1LL) {
                long long jq = r;
                const long long j1 = jq % 3LL;
                jq /= 3LL;
                const long long q2 = (b2 + jq) - 1LL;
                const long long q3 = (b3 + j1) - 1LL;
                float p = 0.0f;
                if ((unsigned long long)q2 < 16ull && (unsigned long long)q3 < 16ull) p = in0[(b0) + q2 * 16LL + q3 * 1LL] * in1[(b1 + jq * 3LL + j1)];
                acc += (double)p;
            }
        }
        if (o < 16384LL) {
            out[o] = (float)acc;
        }
    }
}
