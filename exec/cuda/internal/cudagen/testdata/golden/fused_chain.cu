// launch loom_fused_980b1b9699e17b0f grid=[75 1 1] block=[256 1 1] shared=0 args=[in0 in1 in2 out]

extern "C" __global__ void loom_fused_980b1b9699e17b0f(const float* __restrict__ in0, const float* __restrict__ in1, const float* __restrict__ in2, float* __restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 19200LL; i += (long long)gridDim.x * blockDim.x) {
        long long dq = i;
        const long long d1 = dq % 300LL;
        dq /= 300LL;
        const float a1 = in1[d1];
        const float a2 = in2[dq];
        const float a0 = in0[i];
        const float t0 = a0 + a1;
        const float t1 = t0 * a2;
        const float t2 = tanhf(t1);
        out[i] = t2;
    }
}
