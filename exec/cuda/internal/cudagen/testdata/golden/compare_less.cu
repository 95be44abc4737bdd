// launch loom_ew_b76343baefc97dd9 grid=[1 1 1] block=[256 1 1] shared=0 args=[in0 in1 out]

extern "C" __global__ void loom_ew_b76343baefc97dd9(const int* __restrict__ in0, const int* __restrict__ in1, unsigned char* __restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 128LL; i += (long long)gridDim.x * blockDim.x) {
        long long dq = i;
        const long long d1 = dq % 16LL;
        const int a1 = in1[d1];
        const int a0 = in0[i];
        const unsigned char t0 = (unsigned char)(a0 < a1);
        out[i] = t0;
    }
}
