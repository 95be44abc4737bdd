// launch loom_ew_b026f09ca4edd949 grid=[1 1 1] block=[256 1 1] shared=0 args=[in0 in1 out]

extern "C" __global__ void loom_ew_b026f09ca4edd949(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 60LL; i += (long long)gridDim.x * blockDim.x) {
        long long dq = i;
        dq /= 5LL;
        const long long d1 = dq % 3LL;
        const float a1 = in1[d1];
        const float a0 = in0[i];
        const float t0 = a0 + a1;
        out[i] = t0;
    }
}
