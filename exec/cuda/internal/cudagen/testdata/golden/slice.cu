// launch loom_gather_2575bea277332617 grid=[1 1 1] block=[256 1 1] shared=0 args=[in0 out]

extern "C" __global__ void loom_gather_2575bea277332617(const unsigned int* __restrict__ in0, unsigned int* __restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 6LL; i += (long long)gridDim.x * blockDim.x) {
        long long dq = i;
        const long long d1 = dq % 2LL;
        dq /= 2LL;
        out[i] = in0[8LL + dq * 18LL + d1 * 2LL];
    }
}
